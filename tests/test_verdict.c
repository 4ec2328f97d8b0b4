/* tests/test_verdict.c: the verdict engine (report/verdict.c) and the statistics under it —
 * Student's t and Benjamini-Hochberg against scipy's figures, the interval-against-threshold
 * rule, the runs method. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "report.h"

static void assert_close(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static const struct verdict_rule default_rule = VERDICT_RULE_DEFAULT;

/* scipy.stats.t.sf / t.ppf (scipy 1.17.1) */
static void test_verdict__student_t_agrees_with_scipy(void **state)
{
	(void)state;
	assert_close(student_t_sf(2.0, 3), 0.06966298427942152, 1e-13);
	assert_close(student_t_sf(0.5, 1), 0.35241638234956674, 1e-13);
	assert_close(student_t_sf(4.2, 18), 0.0002691093295015163, 1e-15);
	assert_close(student_t_sf(-1.3, 7.5), 0.8839366105921956, 1e-13);
	assert_close(student_t_sf(10, 2), 0.004926228511662845, 1e-15);
	assert_close(student_t_sf(3.6, 144), 0.00021850819083138562, 1e-15);
	assert_close(student_t_quantile(0.975, 2), 4.302652729749462, 1e-9);
	assert_close(student_t_quantile(0.975, 6), 2.4469118511449786, 1e-9);
	assert_close(student_t_quantile(0.9995, 144), 3.3593725705710145, 1e-9);
	assert_close(student_t_quantile(0.99, 1), 31.820515953773935, 1e-8);
	assert_close(student_t_quantile(0.025, 6), -2.4469118511449786, 1e-9);
	assert_true(isnan(student_t_sf(1, 0)));
}

/* scipy.stats.false_discovery_control([0.01, 0.04, 0.03, 0.2, 0.001]) */
static void test_verdict__bh_adjust_agrees_with_scipy_and_skips_nan(void **state)
{
	(void)state;
	const double p[] = {0.01, 0.04, 0.03, 0.2, 0.001}, want[] = {0.025, 0.05, 0.05, 0.2, 0.005};
	double q[5];
	bh_adjust(p, 5, q);
	for (int i = 0; i < 5; i++)
		assert_close(q[i], want[i], 1e-15);
	const double with_nan[] = {0.01, NAN, 0.04, 0.03, 0.2, 0.001};
	double q6[6];
	bh_adjust(with_nan, 6, q6);
	assert_true(isnan(q6[1]));
	assert_close(q6[0], 0.025, 1e-15);
	assert_close(q6[5], 0.005, 1e-15);
}

/* x[i] = base * (1 + spread * ((i * 7) % n - n / 2) / n): a deterministic series. */
static void series(double *x, size_t n, double base, double spread)
{
	for (size_t i = 0; i < n; i++)
		x[i] = base * (1 + spread * ((double)((i * 7) % n) - (double)n / 2) / (double)n);
}

/* A 3% slowdown is significant, but within the 5% threshold: never "slower", whatever its p. */
static void test_verdict__significant_change_within_the_threshold_is_not_slower(void **state)
{
	(void)state;
	double b[40], c[40];
	series(b, 40, 1e6, 0.01);
	series(c, 40, 1.03e6, 0.01);
	struct pair_result r;
	assert_int_equal(compare_pair(b, 40, c, 40, &default_rule, &r), 0);
	assert_true(r.p < 1e-6);
	assert_true(r.verdict != VERDICT_SLOWER);
	/* and the threshold at 1%: slower */
	struct verdict_rule one_pct = default_rule;
	one_pct.threshold = 0.01;
	assert_int_equal(compare_pair(b, 40, c, 40, &one_pct, &r), 0);
	assert_int_equal(r.verdict, VERDICT_SLOWER);
}

/* A clear slowdown whose candidate waited for a CPU more of its time than the baseline by the
 * gap (2 points) or more, or 5% of its time or more, is `contended`; by less, or with the
 * baseline the one that waited, it stays slower (regress: a slowdown against an inflated baseline
 * is at least as real); a faster candidate whose baseline waited more is contended too. */
static void test_verdict__slower_side_that_waited_for_a_cpu_is_contended(void **state)
{
	(void)state;
	double b[30], c[30];
	series(b, 30, 1e6, 0.02);
	series(c, 30, 1.5e6, 0.02);
	const struct {
		double wait_base, wait_cand;
		int flip;   /* 1: candidate and baseline swapped (a faster candidate) */
		enum verdict want;
	} cases[] = {
		{0.01, 0.34, 0, VERDICT_CONTENDED}, {0.01, 0.035, 0, VERDICT_CONTENDED},
		{0.01, 0.025, 0, VERDICT_SLOWER},   {-1, 0.5, 0, VERDICT_CONTENDED},
		{-1, 0.04, 0, VERDICT_SLOWER},      {0.01, -1, 0, VERDICT_SLOWER},
		{0.30, 0.01, 0, VERDICT_SLOWER},    {0.30, 0.01, 1, VERDICT_CONTENDED},
		{0.01, 0.30, 1, VERDICT_FASTER},
	};
	struct verdict_rule regress = default_rule;   /* regress: the slower side's wait only */
	regress.either_contended = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pair_result r, *one = &r;
		if (cases[i].flip)
			assert_int_equal(compare_pair(c, 30, b, 30, &regress, &r), 0);
		else
			assert_int_equal(compare_pair(b, 30, c, 30, &regress, &r), 0);
		assert_true(r.wait_base == -1 && r.wait_cand == -1);   /* unknown until filled */
		r.wait_base = cases[i].wait_base;
		r.wait_cand = cases[i].wait_cand;
		verdicts_decide(&one, 1, &regress);
		assert_int_equal(r.verdict, cases[i].want);
	}
	/* a gap and a level of 1 (100%) turn it off */
	struct verdict_rule off = default_rule;
	off.cpu_wait_gap = 1;
	off.cpu_wait_level = 1;
	struct pair_result r, *one = &r;
	assert_int_equal(compare_pair(b, 30, c, 30, &off, &r), 0);
	r.wait_base = 0;
	r.wait_cand = 0.9;
	verdicts_decide(&one, 1, &off);
	assert_int_equal(r.verdict, VERDICT_SLOWER);
	/* compare (the default, either_contended): the baseline at the level makes a slower
	 * candidate contended too */
	struct verdict_rule either = default_rule;
	r.wait_base = 0.30;
	r.wait_cand = 0.01;
	verdicts_decide(&one, 1, &either);
	assert_int_equal(r.verdict, VERDICT_CONTENDED);
}

/* Point estimate 6% slower but the data overlap so much that the interval reaches below 5%:
 * the old rule (significant and point beyond) said slower; the interval rule does not. */
static void test_verdict__point_beyond_threshold_with_interval_inside_is_not_slower(void **state)
{
	(void)state;
	double b[20], c[20];
	series(b, 20, 1e6, 0.20);
	series(c, 20, 1.06e6, 0.20);
	struct pair_result r;
	assert_int_equal(compare_pair(b, 20, c, 20, &default_rule, &r), 0);
	assert_true(1 / r.speedup.ratio - 1 > 0.05);
	assert_true(r.verdict == VERDICT_UNSURE);
}

/* 24 cases each with the same modest p: BH adjusts them all alike, and a family of one rejects
 * where a family of many with one such case does not. */
static void test_verdict__bh_over_the_family_controls_one_case_among_many(void **state)
{
	(void)state;
	double b[12], c[12], same[12];
	series(b, 12, 1e6, 0.10);
	series(same, 12, 1e6, 0.10);
	/* candidate: 30% slower, overlapping slightly */
	series(c, 12, 1.3e6, 0.10);
	c[0] = 0.95e6;
	c[1] = 0.97e6;
	struct pair_result results[24], *family[24];
	assert_int_equal(compare_pair(b, 12, c, 12, &default_rule, &results[0]), 0);
	double p_one = results[0].p_slower;
	assert_true(p_one < 0.01);
	assert_int_equal(results[0].verdict, VERDICT_SLOWER);
	for (int i = 1; i < 24; i++)
		assert_int_equal(compare_pair(b, 12, same, 12, &default_rule, &results[i]), 0);
	for (int i = 0; i < 24; i++)
		family[i] = &results[i];
	verdicts_decide(family, 24, &default_rule);
	assert_close(results[0].q_slower, fmin(1, 24 * p_one), 1e-12);
	if (24 * p_one > 0.01)
		assert_int_equal(results[0].verdict, VERDICT_UNSURE);
}

/* Runs method: the t test of d with the model's variance and df; slower needs significance and
 * the change itself beyond the threshold; the detectable change is the threshold or the critical
 * value, whichever is larger, plus the 90% quantile times the standard error. */
static void test_verdict__runs_method_is_a_t_test_on_the_modelled_change(void **state)
{
	(void)state;
	double d = 0.12, var = 0.0009, df = 7.5, se = 0.03;
	struct pair_result r;
	memset(&r, 0, sizeof(r));
	r.wait_base = r.wait_cand = -1;
	compare_modeled(d, var, df, 0, &default_rule, &r);
	assert_int_equal(r.method, METHOD_RUNS);
	assert_close(r.p_slower, student_t_sf(d / se, df), 1e-14);
	assert_close(r.p, 2 * student_t_sf(d / se, df), 1e-14);
	double t975 = student_t_quantile(0.975, df);
	assert_close(r.speedup.ratio, exp(-d), 1e-15);
	assert_close(r.speedup.lo, exp(-d - t975 * se), 1e-12);
	assert_close(r.speedup.hi, exp(-d + t975 * se), 1e-12);
	double want = expm1(fmax(log1p(0.05), student_t_quantile(0.99, df) * se) +
			    student_t_quantile(0.9, df) * se);
	assert_close(r.detectable, want, 1e-12);
	assert_int_equal(r.verdict, VERDICT_SLOWER);
	/* significant, but 4%: within the 5% threshold, and the CI reaches beyond it: unsure */
	compare_modeled(0.04, 0.0001, df, 0, &default_rule, &r);
	assert_true(r.p_slower < 0.01);
	assert_int_equal(r.verdict, VERDICT_UNSURE);
	/* 1% with a tight interval: same */
	compare_modeled(0.01, 0.00001, df, 0, &default_rule, &r);
	assert_int_equal(r.verdict, VERDICT_SAME);
	/* 6% but not significant: unsure, never slower */
	compare_modeled(0.06, 0.0016, df, 0, &default_rule, &r);
	assert_int_equal(r.verdict, VERDICT_UNSURE);
	/* a run of too few iterations: insufficient */
	compare_modeled(d, var, df, 1, &default_rule, &r);
	assert_int_equal(r.verdict, VERDICT_INSUFFICIENT);
	/* an infinite df is the normal test */
	compare_modeled(d, var, INFINITY, 0, &default_rule, &r);
	assert_close(r.p_slower, 0.5 * erfc(4 / sqrt(2.0)), 1e-15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict__student_t_agrees_with_scipy),
		cmocka_unit_test(test_verdict__bh_adjust_agrees_with_scipy_and_skips_nan),
		cmocka_unit_test(test_verdict__significant_change_within_the_threshold_is_not_slower),
		cmocka_unit_test(test_verdict__point_beyond_threshold_with_interval_inside_is_not_slower),
		cmocka_unit_test(test_verdict__slower_side_that_waited_for_a_cpu_is_contended),
		cmocka_unit_test(test_verdict__bh_over_the_family_controls_one_case_among_many),
		cmocka_unit_test(test_verdict__runs_method_is_a_t_test_on_the_modelled_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
