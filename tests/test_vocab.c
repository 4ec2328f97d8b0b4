/* tests/test_vocab.c: common/vocab.h — every device, dtype, pass, phase and status has one name,
 * parse() gives the value back, and anything else (a near miss, another case, "", NULL) is -1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vocab.h"

/* name(v) is a name, parse(name(v)) == v for every v < n, and the names are distinct. */
#define ROUND_TRIP(n, name, parse)                                                   \
	do {                                                                         \
		for (int v = 0; v < (n); v++) {                                      \
			const char *s = name(v);                                     \
			assert_non_null(s);                                          \
			assert_string_not_equal(s, "?");                             \
			assert_int_equal(parse(s), v);                               \
			for (int w = 0; w < v; w++)                                  \
				assert_string_not_equal(name(w), s);                 \
		}                                                                    \
		assert_string_equal(name(n), "?");                                   \
		assert_int_equal(parse(NULL), -1);                                   \
		assert_int_equal(parse(""), -1);                                     \
	} while (0)

static void test_vocab__names_parse_back(void **state)
{
	(void)state;
	ROUND_TRIP(DEVICE_COUNT, device_name, device_parse);
	ROUND_TRIP(DTYPE_COUNT, dtype_name, dtype_parse);
	ROUND_TRIP(PASS_COUNT, pass_name, pass_parse);
	ROUND_TRIP(PHASE_COUNT, phase_name, phase_parse);
	ROUND_TRIP(STATUS_COUNT, status_name, status_parse);
}

/* The spellings are stored in databases and read by peers: they never change. */
static void test_vocab__spellings_are_the_stored_ones(void **state)
{
	(void)state;
	assert_string_equal(device_name(DEVICE_CPU), "cpu");
	assert_string_equal(device_name(DEVICE_CUDA), "cuda");
	assert_string_equal(dtype_name(DTYPE_FLOAT32), "float32");
	assert_string_equal(dtype_name(DTYPE_FLOAT16), "float16");
	assert_string_equal(dtype_name(DTYPE_BFLOAT16), "bfloat16");
	assert_string_equal(pass_name(PASS_FORWARD), "forward");
	assert_string_equal(pass_name(PASS_BACKWARD), "backward");
	assert_string_equal(pass_name(PASS_FORWARD_BACKWARD), "forward_backward");
	assert_string_equal(pass_name(PASS_TRAIN_STEP), "train_step");
	assert_string_equal(phase_name(PHASE_FWD), "fwd");
	assert_string_equal(phase_name(PHASE_BWD), "bwd");
	assert_string_equal(phase_name(PHASE_OPT), "opt");
	assert_string_equal(status_name(STATUS_OK), "ok");
	assert_string_equal(status_name(STATUS_OOM), "oom");
	assert_string_equal(status_name(STATUS_ERROR), "error");
	assert_string_equal(status_name(STATUS_UNSUPPORTED), "unsupported");
	assert_string_equal(status_name(STATUS_SKIPPED), "skipped");
}

static void test_vocab__near_misses_do_not_parse(void **state)
{
	(void)state;
	assert_int_equal(device_parse("gpu"), -1);
	assert_int_equal(device_parse("CPU"), -1);
	assert_int_equal(dtype_parse("bf16"), -1);
	assert_int_equal(dtype_parse("float32 "), -1);
	assert_int_equal(pass_parse("fwd"), -1);
	assert_int_equal(phase_parse("forward"), -1);
	assert_int_equal(status_parse("OK"), -1);
	assert_int_equal(status_parse("failed"), -1);
}

static void test_vocab__phases_of_each_pass(void **state)
{
	(void)state;
	assert_int_equal(pass_phases(PASS_FORWARD), 1u << PHASE_FWD);
	assert_int_equal(pass_phases(PASS_BACKWARD), 1u << PHASE_BWD);
	assert_int_equal(pass_phases(PASS_FORWARD_BACKWARD), 1u << PHASE_FWD | 1u << PHASE_BWD);
	assert_int_equal(pass_phases(PASS_TRAIN_STEP),
			 1u << PHASE_FWD | 1u << PHASE_BWD | 1u << PHASE_OPT);
	assert_int_equal(dtype_size(DTYPE_FLOAT32), 4);
	assert_int_equal(dtype_size(DTYPE_BFLOAT16), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vocab__names_parse_back),
		cmocka_unit_test(test_vocab__spellings_are_the_stored_ones),
		cmocka_unit_test(test_vocab__near_misses_do_not_parse),
		cmocka_unit_test(test_vocab__phases_of_each_pass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
