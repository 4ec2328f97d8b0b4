/* tests/test_gpu_probe_nvml.c: the NVML probe (runner/gpu_probe.c) reads the GPU that
 * CUDA_VISIBLE_DEVICES names — by index or by UUID — on a stand-in NVML (tests/fake_nvml.c,
 * found through LD_LIBRARY_PATH), whose device 0 reads 40 °C and device 1 41 °C. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "gpu_probe.h"

/* The hottest temperature the probe read with CUDA_VISIBLE_DEVICES set to visible (NULL: unset);
 * 0 when it found no device. */
static double probed(const char *visible)
{
	if (visible)
		setenv("CUDA_VISIBLE_DEVICES", visible, 1);
	else
		unsetenv("CUDA_VISIBLE_DEVICES");
	struct case_gpu g;
	gpu_probe_stop(gpu_probe_start(), &g);
	return g.known ? g.temp_c : 0;
}

static void test_gpu_probe_nvml__the_visible_device(void **state)
{
	(void)state;
	assert_true(probed(NULL) == 40);
	assert_true(probed("1") == 41);
	assert_true(probed("1,0") == 41);
	/* a UUID names device 1, not NVML's device 0 */
	assert_true(probed("GPU-11111111-2222-3333-4444-555555555555") == 41);
	assert_true(probed("GPU-11111111-2222-3333-4444-555555555555,0") == 41);
	/* a MIG instance: its GPU's figures */
	assert_true(probed("MIG-66666666-2222-3333-4444-555555555555") == 41);
	/* a UUID NVML does not know: nothing read, rather than another GPU's figures */
	assert_true(probed("GPU-99999999-2222-3333-4444-555555555555") == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_probe_nvml__the_visible_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
