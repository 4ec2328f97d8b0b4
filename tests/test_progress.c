/* tests/test_progress.c: the sweep ETA (runner/progress.c) weighs the cases left by their work —
 * FLOPs, else bytes, else one each — from planted figures and a planted elapsed time (before three
 * cases, the geometric mean of that and of the count), and from three finished cases on sums a
 * fitted fixed + scale x work^power cost over them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "progress.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SECOND 1000000000LL
#define MS 1000000LL

/* Sizes that grow like attention's seq_len: each case 4x the FLOPs of the one before. */
static const struct progress_work growing[] = {
	{1e9, 1e6, 0}, {4e9, 2e6, 0}, {16e9, 4e6, 0}, {64e9, 8e6, 0},
};

static void test_progress__eta_weighs_the_cases_left_by_flops(void **state)
{
	(void)state;
	struct progress pg;
	progress_init(&pg, ARRAY_LEN(growing), growing);
	assert_int_equal(pg.basis, PROGRESS_BY_FLOPS);
	/* Before any case is observed: 5e9 FLOPs done in 10 s, 80e9 left, 160 s by work; two cases
	 * done, two left, 10 s by count; the truth of growing cases lies between: 40 s */
	assert_in_range(progress_eta_ns(&pg, 2, 0.0, 10 * SECOND), 40 * SECOND - MS, 40 * SECOND + MS);
	/* half of the third case: 13e9 done in 26 s, 72e9 left: 144 s; 2.5 cases, 1.5 left: 15.6 s */
	assert_in_range(progress_eta_ns(&pg, 2, 0.5, 26 * SECOND), 47396 * MS - MS, 47396 * MS + MS);
	assert_int_equal(progress_eta_ns(&pg, 3, 1.0, 85 * SECOND), 0);
	assert_int_equal(progress_eta_ns(&pg, 0, 0.0, 0), -1);   /* nothing done yet */
	progress_finish(&pg);
	progress_finish(&pg);   /* twice is fine */
	assert_null(pg.work_before);
}

static void test_progress__a_case_that_will_not_run_weighs_nothing(void **state)
{
	(void)state;
	const struct progress_work work[] = {{2e9, 1, 0}, {0, 0, 0}, {2e9, 1, 0}, {0, 0, 0}};
	struct progress pg;
	progress_init(&pg, ARRAY_LEN(work), work);
	assert_int_equal(pg.basis, PROGRESS_BY_FLOPS);
	assert_int_equal(progress_eta_ns(&pg, 2, 0.0, 7 * SECOND), 7 * SECOND);
	assert_int_equal(progress_eta_ns(&pg, 3, 0.0, 14 * SECOND), 0);
	progress_finish(&pg);
}

static void test_progress__without_flops_bytes_then_count(void **state)
{
	(void)state;
	struct progress pg;
	const struct progress_work no_flops[] = {{1e9, 1e6, 0}, {-1, 3e6, 0}};
	progress_init(&pg, ARRAY_LEN(no_flops), no_flops);
	assert_int_equal(pg.basis, PROGRESS_BY_BYTES);
	/* 15 s by bytes, 5 s by count */
	assert_in_range(progress_eta_ns(&pg, 1, 0.0, 5 * SECOND), 8660 * MS - MS, 8660 * MS + MS);
	progress_finish(&pg);

	const struct progress_work nothing[] = {{1e9, -1, 0}, {-1, 3e6, 0}, {0, 0, 0}};
	progress_init(&pg, ARRAY_LEN(nothing), nothing);
	assert_int_equal(pg.basis, PROGRESS_BY_COUNT);
	assert_int_equal(progress_eta_ns(&pg, 1, 0.0, 5 * SECOND), 10 * SECOND);
	progress_finish(&pg);

	progress_init(&pg, 4, NULL);
	assert_int_equal(pg.basis, PROGRESS_BY_COUNT);
	assert_int_equal(progress_eta_ns(&pg, 1, 0.5, 3 * SECOND), 5 * SECOND);
	progress_finish(&pg);
}

/* Cases that cost 2 s each plus 1 s per 1e9 FLOPs: after three of them the model is exact, so
 * the ETA is the planted remaining time; a case that will not run (work 0) costs nothing and is
 * no point of the fit. */
static void test_progress__the_fitted_cost_model_predicts_planted_times(void **state)
{
	(void)state;
	const struct progress_work work[] = {{1e9, 1, 0}, {0, 0, 0}, {4e9, 1, 0}, {16e9, 1, 0}, {0, 0, 0}, {64e9, 1, 0}};
	struct progress pg;
	progress_init(&pg, ARRAY_LEN(work), work);
	progress_observe(&pg, 0, 3 * SECOND);
	/* one point: between work (3 s per 1e9: 84e9 left, 252 s) and count (3 s, 3 left: 9 s) */
	assert_in_range(progress_eta_ns(&pg, 1, 0.0, 3 * SECOND), 47624 * MS - MS, 47624 * MS + MS);
	progress_observe(&pg, 1, SECOND / 2);   /* work 0: no point of the fit */
	progress_observe(&pg, 2, 6 * SECOND);
	progress_observe(&pg, 3, 18 * SECOND);
	/* three points: left the 66 s case, and the case that will not run what the one that did
	 * not run took (0.5 s: refusing a case, or finding it over its memory limit, takes time) */
	assert_in_range(progress_eta_ns(&pg, 4, 0.0, 27 * SECOND), 66500 * MS - MS, 66500 * MS + MS);
	/* half of the 66 s case done */
	assert_in_range(progress_eta_ns(&pg, 5, 0.5, 60 * SECOND), 33 * SECOND - MS, 33 * SECOND + MS);
	assert_int_equal(progress_eta_ns(&pg, 6, 0.0, 99 * SECOND), 0);
	progress_finish(&pg);

	/* cost growing slower than the work, 1 s + 2 s x (FLOPs / 1e9)^0.75 (a larger kernel nearer
	 * the peak): fitted from three cases, the 1 + 2 x 256^0.75 = 129 s case left exactly */
	const struct progress_work sub[] = {{1e9, 1, 0}, {16e9, 1, 0}, {81e9, 1, 0}, {256e9, 1, 0}};
	progress_init(&pg, ARRAY_LEN(sub), sub);
	progress_observe(&pg, 0, 3 * SECOND);
	progress_observe(&pg, 1, 17 * SECOND);
	progress_observe(&pg, 2, 55 * SECOND);
	assert_in_range(progress_eta_ns(&pg, 3, 0.0, 75 * SECOND), 129 * SECOND - MS, 129 * SECOND + MS);
	progress_finish(&pg);

	/* small cases that all take their fixed cost (2 s, whatever their work): the fit says the
	 * cost does not grow, but a case 1000 times larger is not 2 s. The fit holds out to
	 * 4e9 x sqrt(4) = 8e9; beyond, the cost grows at least as work^0.8: 2 x 500^0.8 = 288.6 s */
	const struct progress_work flat[] = {{1e9, 1, 0}, {2e9, 1, 0}, {4e9, 1, 0}, {4e12, 1, 0}, {6e9, 1, 0}};
	progress_init(&pg, ARRAY_LEN(flat), flat);
	for (size_t i = 0; i < 3; i++)
		progress_observe(&pg, i, 2 * SECOND);
	assert_in_range(progress_eta_ns(&pg, 4, 0.0, 6 * SECOND), 2 * SECOND - MS, 2 * SECOND + MS);
	int64_t big = progress_eta_ns(&pg, 3, 0.0, 6 * SECOND) - 2 * SECOND;   /* less the 6e9 case */
	assert_in_range(big, 288600 * MS - 100 * MS, 288600 * MS + 100 * MS);
	progress_finish(&pg);

	/* two kinds (float32 and bfloat16, say), the second 3x the rate: 1 s per 1e9 FLOPs and 1 s
	 * per 3e9. The fit of both together is between them; each kind's cases left are scaled by
	 * that kind's measured ratio to it, so each is predicted at its own rate: 8 s + 8/3 s */
	const struct progress_work two[] = {{1e9, 1, 32}, {1e9, 1, 16}, {2e9, 1, 32}, {2e9, 1, 16},
					    {4e9, 1, 32}, {4e9, 1, 16}, {8e9, 1, 32}, {8e9, 1, 16}};
	progress_init(&pg, ARRAY_LEN(two), two);
	for (size_t i = 0; i < 6; i++)
		progress_observe(&pg, i, (int64_t)(two[i].flops / (two[i].kind == 16 ? 3 : 1)));
	assert_in_range(progress_eta_ns(&pg, 6, 0.0, 10 * SECOND), 10667 * MS - 5 * MS,
			10667 * MS + 5 * MS);
	progress_finish(&pg);

	/* every case the same work: its mean time each, whatever the work per case says */
	const struct progress_work same[] = {{1e9, 1, 0}, {1e9, 1, 0}, {1e9, 1, 0}, {1e9, 1, 0}, {1e9, 1, 0}};
	progress_init(&pg, ARRAY_LEN(same), same);
	for (size_t i = 0; i < 3; i++)
		progress_observe(&pg, i, 4 * SECOND);
	assert_in_range(progress_eta_ns(&pg, 3, 0.0, 12 * SECOND), 8 * SECOND - MS, 8 * SECOND + MS);
	progress_finish(&pg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress__eta_weighs_the_cases_left_by_flops),
		cmocka_unit_test(test_progress__a_case_that_will_not_run_weighs_nothing),
		cmocka_unit_test(test_progress__without_flops_bytes_then_count),
		cmocka_unit_test(test_progress__the_fitted_cost_model_predicts_planted_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
