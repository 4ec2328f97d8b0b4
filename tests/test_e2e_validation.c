/* tests/test_e2e_validation.c: the e2e workload's validation (kernels/workloads/e2e.c) sees the
 * attention beyond its first tiles. The CPU flash forward is wrapped (-Wl,--wrap, see
 * tests/CMakeLists.txt) so that a test can plant an error in query rows from 128 on — past the
 * CPU flash's 64-key steps and 96-query blocks and CUDA flash's 128-row blocks — as a kernel
 * wrong only beyond its first tiles would be; the validation must then fail the case before it is
 * timed, as the attention suite's validation fails the same kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "attention_flash.h"
#include "workload.h"

/* rows of each head from this one on are off by 10% while planted */
#define PLANT_FROM_ROW 128

static int planted;

void __real_attention_flash_forward(const struct attention_dims *d, struct flash_workspace *w,
				    const float *q, const float *k, const float *v, float *o,
				    float *lse);

void __wrap_attention_flash_forward(const struct attention_dims *d, struct flash_workspace *w,
				    const float *q, const float *k, const float *v, float *o,
				    float *lse)
{
	__real_attention_flash_forward(d, w, q, k, v, o, lse);
	if (!planted)
		return;
	for (int64_t bh = 0; bh < d->batch * d->heads; bh++)
		for (int64_t s = PLANT_FROM_ROW; s < d->seq_len; s++)
			for (int64_t j = 0; j < d->head_dim; j++)
				o[(bh * d->seq_len + s) * d->head_dim + j] *= 1.1f;
}

/* The status of validating a small float32 flash train_step case. */
static int validate_case(struct wl_status *st)
{
	const struct workload *w = workload_find("e2e", "benchdb", DEVICE_CPU);
	assert_non_null(w);
	struct case_params p = {.suite = SUITE_E2E, .impl = "benchdb", .device = DEVICE_CPU,
				.dtype = DTYPE_FLOAT32, .pass = PASS_TRAIN_STEP, .batch_size = 2,
				.context_length = 8, .warmup = 1, .iters = 2, .seed = 3, .sync = 1,
				.attention = "flash",
				.model = {"mini", 32, 72, 1, 2, 101}};
	struct mem_arena mem;
	mem_init(&mem, 0);
	void *s = NULL;
	memset(st, 0, sizeof(*st));
	assert_int_equal(w->check(&p, st), STATUS_OK);
	assert_int_equal(w->setup(&p, &mem, &s, st), STATUS_OK);
	int code = w->validate(s, st);
	w->teardown(s);
	assert_int_equal(mem.live, 0);
	return code;
}

static void test_e2e_validation__passes_the_right_attention(void **state)
{
	(void)state;
	struct wl_status st;
	planted = 0;
	if (validate_case(&st) != STATUS_OK)
		fail_msg("the right model failed its validation: %s", st.reason);
}

static void test_e2e_validation__fails_an_attention_wrong_beyond_its_first_tiles(void **state)
{
	(void)state;
	struct wl_status st;
	planted = 1;
	int code = validate_case(&st);
	planted = 0;
	print_message("planted beyond row %d: %s\n", PLANT_FROM_ROW, st.reason);
	assert_int_equal(code, STATUS_ERROR);
	assert_non_null(strstr(st.reason, "float64 reference"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_e2e_validation__passes_the_right_attention),
		cmocka_unit_test(test_e2e_validation__fails_an_attention_wrong_beyond_its_first_tiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
