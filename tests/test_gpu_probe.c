/* tests/test_gpu_probe.c: the NVML probe (runner/gpu_probe.c) names throttle reasons as stored
 * (gpu_idle left out), and without NVML or a GPU it reads nothing and says so (known 0); where a
 * GPU is visible the figures it reads are plausible. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "gpu_probe.h"

static void test_gpu_probe__throttle_reasons_by_name(void **state)
{
	(void)state;
	char names[160];
	gpu_throttle_names(0x1 | 0x4 | 0x40, names, sizeof(names));
	assert_string_equal(names, "sw_power_cap,hw_thermal");
	gpu_throttle_names(0x1, names, sizeof(names));
	assert_string_equal(names, "");
	gpu_throttle_names(0x8 | 0x20 | 0x80, names, 12);   /* truncated, still a string */
	assert_true(names[11] == '\0' || names[0]);
}

static void test_gpu_probe__reads_a_gpu_or_says_nothing(void **state)
{
	(void)state;
	struct case_gpu g;
	gpu_probe_stop(NULL, &g);
	assert_int_equal(g.known, 0);
	struct gpu_probe *p = gpu_probe_start();
	struct timespec pause = {0, 250000000L};
	nanosleep(&pause, NULL);
	gpu_probe_stop(p, &g);
	if (!p) {
		assert_int_equal(g.known, 0);
		return;
	}
	assert_int_equal(g.known, 1);
	assert_true(g.temp_c > 0 && g.temp_c < 130);
	assert_true(g.sm_clock_mhz > 0 && g.sm_clock_mhz < 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_probe__throttle_reasons_by_name),
		cmocka_unit_test(test_gpu_probe__reads_a_gpu_or_says_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
