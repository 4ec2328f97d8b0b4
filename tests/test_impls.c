/* tests/test_impls.c: the backends' implementation tables (kernels/impls.c) and the registry
 * made from them — every row has a workload, every workload runs some row, each device's copy of
 * a suite's one workload is timed as its backend runs, and the sweep's
 * names and the backends' lists say what the tables hold. Properties, not the rows themselves:
 * a new implementation changes no line here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "impls.h"
#include "ops.h"
#include "workload.h"

static void test_impls__every_row_has_the_workload_of_its_suite_and_device(void **state)
{
	(void)state;
	for (int d = 0; d < DEVICE_COUNT; d++)
		for (const struct impl *m = impl_table((enum bd_device)d); m->suite; m++) {
			const struct workload *w =
				workload_find(m->suite, m->name, (enum bd_device)d);
			if (!w)
				fail_msg("%s %s on %s has no workload", m->suite, m->name,
					 device_name((enum bd_device)d));
			assert_string_equal(w->suite, m->suite);
			assert_int_equal(w->device, d);
			assert_true(m->summary && m->summary[0]);
			assert_true(impl_runs_on(m->suite, m->name, (enum bd_device)d));
		}
}

static void test_impls__every_workload_runs_some_row(void **state)
{
	(void)state;
	for (const struct workload *const *w = workloads; *w; w++) {
		int rows = 0;
		for (const struct impl *m = impl_table((*w)->device); m->suite; m++)
			rows += !strcmp(m->suite, (*w)->suite);
		if (!rows)
			fail_msg("the %s workload on %s runs no impl", (*w)->suite,
				 device_name((*w)->device));
	}
}

/* One workload per suite, copied for each device: the copies differ only in the device and in
 * the timing hooks, which a synchronous backend's copy lacks (the runner then times with the
 * host clock) and an asynchronous one's has. */
static void test_impls__each_device_s_copy_is_timed_as_its_backend_runs(void **state)
{
	(void)state;
	for (const struct workload *const *w = workloads; *w; w++) {
		const struct dev_backend *b = dev_backend((*w)->device);
		assert_non_null(b);
		assert_int_equal(b->device, (*w)->device);
		assert_int_equal((*w)->mark != NULL, b->async);
		assert_int_equal((*w)->elapsed != NULL, b->async);
		assert_int_equal((*w)->drain != NULL, b->async);
		assert_int_equal(workload_host_memory((*w)->device), b->host_memory);
		for (const struct workload *const *o = workloads; *o; o++) {
			if (strcmp((*o)->suite, (*w)->suite))
				continue;
			assert_ptr_equal((*o)->check, (*w)->check);
			assert_ptr_equal((*o)->setup, (*w)->setup);
			assert_ptr_equal((*o)->validate, (*w)->validate);
			assert_ptr_equal((*o)->run, (*w)->run);
			assert_ptr_equal((*o)->teardown, (*w)->teardown);
		}
	}
	assert_int_equal(workload_host_memory(DEVICE_CPU), 1);
	assert_int_equal(workload_host_memory(DEVICE_CUDA), 0);
	assert_null(dev_backend(DEVICE_COUNT));
}

static void test_impls__rows_of_one_table_are_unique(void **state)
{
	(void)state;
	for (int d = 0; d < DEVICE_COUNT; d++)
		for (const struct impl *m = impl_table((enum bd_device)d); m->suite; m++)
			for (const struct impl *o = m + 1; o->suite; o++)
				assert_false(!strcmp(m->suite, o->suite) &&
					     !strcmp(m->name, o->name));
}

static int in(const char *const *names, const char *s)
{
	for (; *names; names++)
		if (!strcmp(*names, s))
			return 1;
	return 0;
}

static void test_impls__sweep_names_are_every_device_s_impls_once(void **state)
{
	(void)state;
	for (const char *const *suite = workload_suites; *suite; suite++) {
		const char *const *names = workload_impl_names(*suite);
		assert_non_null(names);
		size_t count = 0;
		for (; names[count]; count++)
			for (size_t j = 0; j < count; j++)
				assert_string_not_equal(names[j], names[count]);
		size_t rows = 0;
		for (int d = 0; d < DEVICE_COUNT; d++)
			for (const struct impl *m = impl_table((enum bd_device)d); m->suite; m++)
				if (!strcmp(m->suite, *suite)) {
					assert_true(in(names, m->name));
					rows++;
				}
		assert_true(count > 0 && count <= rows);
	}
	assert_null(workload_impl_names("nope"));
	assert_null(workload_find("attention", "nope", DEVICE_CPU));
}

static void test_impls__list_names_the_device_s_rows_in_order(void **state)
{
	(void)state;
	for (int d = 0; d < DEVICE_COUNT; d++) {
		char want[256] = "", got[256];
		for (const struct impl *m = impl_table((enum bd_device)d); m->suite; m++)
			if (!strcmp(m->suite, "attention"))
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
					 want[0] ? ", " : "", m->name);
		impl_list("attention", (enum bd_device)d, got, sizeof(got));
		assert_string_equal(got, want);
	}
	char small[8];
	impl_list("attention", DEVICE_CUDA, small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
	assert_null(impl_table(DEVICE_COUNT)->suite);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_impls__every_row_has_the_workload_of_its_suite_and_device),
		cmocka_unit_test(test_impls__every_workload_runs_some_row),
		cmocka_unit_test(test_impls__each_device_s_copy_is_timed_as_its_backend_runs),
		cmocka_unit_test(test_impls__rows_of_one_table_are_unique),
		cmocka_unit_test(test_impls__sweep_names_are_every_device_s_impls_once),
		cmocka_unit_test(test_impls__list_names_the_device_s_rows_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
