/* tests/test_changepoint.c: the change-point detector (report/changepoint.c) on planted histories
 * of known truth: where a step is, that A/A histories rarely get one, that spikes never do, that
 * a change undone later is found at both ends, the merge of small changes, and bad input. The
 * rates against the reference implementations: tests/changepoint/reference.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "changepoint.h"
#include "error.h"
#include "splitmix64.h"

#define RUNS 60

static uint64_t gen_state;

static double uniform01(void)
{
	return ((double)(splitmix64(&gen_state) >> 11) + 0.5) * 0x1p-53;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

/* y[0..n-1] = N(0, sd^2) (the log of run medians around 1) */
static void history(double *y, size_t n, double sd)
{
	for (size_t i = 0; i < n; i++)
		y[i] = sd * normal();
}

static struct cp_result find(const double *y, size_t n, const struct cp_options *o)
{
	struct cp_series s = {.y = y, .n = n};
	struct cp_result r;
	assert_int_equal(changepoints_find(&s, o, &r), 0);
	return r;
}

/* 1 when some change point lies within margin runs of at */
static int found_near(const struct cp_result *r, size_t at, size_t margin)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->points[i].index + margin >= at && r->points[i].index <= at + margin)
			return 1;
	return 0;
}

static void test_changepoint__step_is_found_at_its_run_with_its_size(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	gen_state = 1;
	history(y, RUNS, 0.01);
	for (size_t i = 30; i < RUNS; i++)
		y[i] += log(1.10);
	struct cp_result r = find(y, RUNS, &o);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.points[0].index, 30);
	assert_true(r.points[0].change > 0.09 && r.points[0].change < 0.11);
	assert_true(r.points[0].lo < 0.10 && r.points[0].hi > 0.10);
	assert_true(r.points[0].p <= o.alpha);
	assert_true(r.noise > 0.005 && r.noise < 0.02);   /* the series' own, within segments */
	assert_int_equal(r.noise_estimated, 1);
	cp_result_free(&r);
}

/* The permutation test holds an A/A history's chance of a (false) change point to alpha: 400
 * histories of 60 runs at 4% run-to-run noise, at most 1.5% with one (0.01 the default alpha). */
static void test_changepoint__aa_histories_rarely_get_a_change_point(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	int falses = 0;
	gen_state = 2;
	for (int h = 0; h < 400; h++) {
		history(y, RUNS, 0.04);
		struct cp_result r = find(y, RUNS, &o);
		falses += r.n > 0;
		assert_true(r.n > 0 || r.p_stop > o.alpha);
		cp_result_free(&r);
	}
	print_message("A/A: %d of 400 histories with a change point\n", falses);
	assert_true(falses <= 6);
}

/* A 5% step at 3% noise, anywhere in runs 20..40, is found within 5 runs in at least 90% of 100. */
static void test_changepoint__five_percent_step_at_three_percent_noise_is_found(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	int found = 0;
	gen_state = 3;
	for (int h = 0; h < 100; h++) {
		size_t at = 20 + (size_t)(uniform01() * 21);
		history(y, RUNS, 0.03);
		for (size_t i = at; i < RUNS; i++)
			y[i] += log(1.05);
		struct cp_result r = find(y, RUNS, &o);
		found += found_near(&r, at, 5);
		cp_result_free(&r);
	}
	print_message("5%% step: found in %d of 100\n", found);
	assert_true(found >= 90);
}

/* One run 30% (or 3x) slower is never a change point, wherever it is, the newest run included. */
static void test_changepoint__spikes_are_not_change_points(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	gen_state = 4;
	for (int h = 0; h < 100; h++) {
		size_t at = (size_t)(uniform01() * RUNS);
		history(y, RUNS, 0.03);
		y[at] += log(h % 2 ? 1.3 : 3.0);
		struct cp_result r = find(y, RUNS, &o);
		if (found_near(&r, at, 1) || found_near(&r, at + 1, 1))
			fail_msg("history %d: the spike at run %zu made a change point", h, at);
		cp_result_free(&r);
	}
	history(y, RUNS, 0.03);
	y[RUNS - 1] += log(3.0);
	struct cp_result r = find(y, RUNS, &o);
	assert_int_equal(r.n, 0);
	cp_result_free(&r);
}

/* Ten runs 10% slower, then back: both edges, the first slower, the second faster. */
static void test_changepoint__change_undone_later_is_found_at_both_ends(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	gen_state = 5;
	history(y, RUNS, 0.02);
	for (size_t i = 25; i < 35; i++)
		y[i] += log(1.10);
	struct cp_result r = find(y, RUNS, &o);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.points[0].index, 25);
	assert_int_equal(r.points[1].index, 35);
	assert_true(r.points[0].change > 0.05);
	assert_true(r.points[1].change < -0.05);
	cp_result_free(&r);
}

/* The newest runs starting a slower segment: found once there are enough of them. */
static void test_changepoint__step_at_the_newest_runs_is_found(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	gen_state = 6;
	history(y, RUNS, 0.02);
	for (size_t i = RUNS - 6; i < RUNS; i++)
		y[i] += log(1.15);
	struct cp_result r = find(y, RUNS, &o);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.points[0].index, RUNS - 6);
	assert_true(r.points[0].change > 0.10);
	cp_result_free(&r);
}

/* A 1.5% step at 0.2% noise is significant: kept with min_change 0, merged away at 2%. */
static void test_changepoint__changes_below_min_change_are_merged(void **state)
{
	(void)state;
	struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	gen_state = 7;
	history(y, RUNS, 0.002);
	for (size_t i = 30; i < RUNS; i++)
		y[i] += log(1.015);
	o.min_change = 0;
	struct cp_result r = find(y, RUNS, &o);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.points[0].index, 30);
	cp_result_free(&r);
	o.min_change = 0.02;
	r = find(y, RUNS, &o);
	assert_int_equal(r.n, 0);
	cp_result_free(&r);
}

/* The same history gives the same change points and p-values (a fixed seed). */
static void test_changepoint__same_history_same_answer(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	gen_state = 8;
	history(y, RUNS, 0.03);
	for (size_t i = 40; i < RUNS; i++)
		y[i] += log(1.06);
	struct cp_result a = find(y, RUNS, &o), b = find(y, RUNS, &o);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		assert_int_equal(a.points[i].index, b.points[i].index);
		assert_true(a.points[i].p == b.points[i].p);
	}
	cp_result_free(&a);
	cp_result_free(&b);
}

/* A run-to-run noise from the noise model wider than the series' own widens the intervals. */
static void test_changepoint__run_noise_of_the_model_widens_intervals(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[RUNS];
	gen_state = 9;
	history(y, RUNS, 0.01);
	for (size_t i = 30; i < RUNS; i++)
		y[i] += log(1.10);
	struct cp_series s = {.y = y, .n = RUNS, .run_noise = 0.05};
	struct cp_result own = find(y, RUNS, &o), model;
	assert_int_equal(changepoints_find(&s, &o, &model), 0);
	assert_int_equal(model.noise_estimated, 0);
	assert_true(model.noise >= 0.05);
	assert_int_equal(model.n, 1);
	assert_true(model.points[0].hi - model.points[0].lo > 3 * (own.points[0].hi - own.points[0].lo));
	cp_result_free(&own);
	cp_result_free(&model);
}

static void test_changepoint__short_series_and_bad_input(void **state)
{
	(void)state;
	struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[5] = {0, 0, 1, 1, 1};
	struct cp_series s = {.y = y, .n = 5};
	struct cp_result r;
	assert_int_equal(changepoints_find(&s, &o, &r), 0);   /* < 2 min_segment runs: none */
	assert_int_equal(r.n, 0);
	assert_true(r.p_stop == 1);
	cp_result_free(&r);
	s.n = 0;
	assert_int_equal(changepoints_find(&s, &o, &r), 0);
	assert_int_equal(r.n, 0);
	cp_result_free(&r);
	s.n = 5;
	y[2] = NAN;
	assert_int_equal(changepoints_find(&s, &o, &r), BD_EINVAL);
	y[2] = 1;
	o.min_segment = 1;
	assert_int_equal(changepoints_find(&s, &o, &r), BD_EINVAL);
	o.min_segment = 3;
	o.alpha = 0;
	assert_int_equal(changepoints_find(&s, &o, &r), BD_EINVAL);
	cp_result_free(NULL);
}

/* The series' own noise from successive differences: a 20% step barely moves it. */
static void test_changepoint__noise_of_series_ignores_a_step(void **state)
{
	(void)state;
	double y[RUNS];
	gen_state = 10;
	history(y, RUNS, 0.03);
	double flat = cp_noise_of_series(y, RUNS);
	for (size_t i = 30; i < RUNS; i++)
		y[i] += log(1.2);
	double stepped = cp_noise_of_series(y, RUNS);
	assert_true(flat > 0.02 && flat < 0.04);
	assert_true(fabs(stepped - flat) < 0.2 * flat);
	assert_true(cp_noise_of_series(y, 2) == 0);
}

#define NIGHTS 20
#define PER_NIGHT 3

/* y of NIGHTS sessions of PER_NIGHT runs: each session shifted by N(0, session_sd^2), each run by
 * N(0, run_sd^2) more; session[] numbers them. */
static void session_history(double *y, size_t *session, double session_sd, double run_sd)
{
	for (size_t k = 0; k < NIGHTS; k++) {
		double shift = session_sd * normal();
		for (size_t j = 0; j < PER_NIGHT; j++) {
			y[k * PER_NIGHT + j] = shift + run_sd * normal();
			session[k * PER_NIGHT + j] = k;
		}
	}
}

/* Runs of one session share its shift (runner run --repeat 3 a night). Taken as independent
 * runs, an A/A history got a change point far more often than alpha; counted once each, the
 * sessions hold it to alpha: 400 histories of 20 nights x 3 runs, 3% run-to-run noise of which
 * three quarters is the session's, at most 1.5% with a change point. */
static void test_changepoint__sessions_are_the_unit_of_the_test(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	double y[NIGHTS * PER_NIGHT];
	size_t session[NIGHTS * PER_NIGHT];
	int falses = 0, falses_as_runs = 0;
	gen_state = 11;
	for (int h = 0; h < 400; h++) {
		session_history(y, session, 0.03 * sqrt(0.75), 0.03 * sqrt(0.25));
		struct cp_series s = {.y = y, .n = NIGHTS * PER_NIGHT, .session = session};
		struct cp_result r;
		assert_int_equal(changepoints_find(&s, &o, &r), 0);
		assert_int_equal(r.sessions, NIGHTS);
		falses += r.n > 0;
		cp_result_free(&r);
		if (h < 100) {   /* what the sessions are there for (a found split costs 999 shuffles) */
			r = find(y, NIGHTS * PER_NIGHT, &o);
			falses_as_runs += r.n > 0;
			cp_result_free(&r);
		}
	}
	print_message("A/A in sessions: %d of 400 with a change point; the runs taken as independent: "
		      "%d of the first 100\n", falses, falses_as_runs);
	assert_true(falses <= 6);
	assert_true(falses_as_runs >= 20);
}

/* A change point is a session's first run, its before and after the means of the sessions'
 * means (a session of 1 run counts as much as one of 4), min_segment counts sessions. */
static void test_changepoint__sessions_place_and_size_a_change(void **state)
{
	(void)state;
	const struct cp_options o = CP_OPTIONS_DEFAULT;
	/* 12 sessions of 1, 2, 3, 4, 1, 2, 3, 4, ... runs, the last six 20% slower; within a session
	 * the runs -1%, +1%, -1%, ...: a mean over runs would weigh the odd sessions' -1% more */
	double y[30];
	size_t session[30], n = 0;
	for (size_t k = 0; k < 12; k++)
		for (size_t j = 0; j <= k % 4; j++) {
			y[n] = (k >= 6 ? log(1.2) : 0) + (j % 2 ? 0.01 : -0.01);
			session[n++] = k;
		}
	assert_int_equal(n, 30);
	struct cp_series s = {.y = y, .n = n, .session = session};
	struct cp_result r;
	assert_int_equal(changepoints_find(&s, &o, &r), 0);
	assert_int_equal(r.sessions, 12);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.points[0].index, 13);   /* session 6's first run: 1 + 2 + 3 + 4 + 1 + 2 */
	double before = 0, after = 0;   /* the sessions' means, each counted once */
	for (size_t k = 0; k < 12; k++) {
		double sum = 0, runs = 0;
		for (size_t i = 0; i < n; i++)
			if (session[i] == k) {
				sum += y[i];
				runs++;
			}
		*(k < 6 ? &before : &after) += sum / runs / 6;
	}
	assert_true(fabs(r.points[0].before - before) < 1e-12);
	assert_true(fabs(r.points[0].after - after) < 1e-12);
	assert_true(fabs(r.points[0].change - expm1(after - before)) < 1e-12);
	cp_result_free(&r);
	/* 5 sessions of 3 runs, a 50% step after 3: 15 runs, but fewer than 2 min_segment sessions */
	for (size_t i = 0; i < 15; i++) {
		y[i] = (i >= 9 ? log(1.5) : 0) + 0.001 * (double)(i % 3);
		session[i] = i / 3;
	}
	s.n = 15;
	assert_int_equal(changepoints_find(&s, &o, &r), 0);
	assert_int_equal(r.sessions, 5);
	assert_int_equal(r.n, 0);
	cp_result_free(&r);
	/* equal labels apart from each other are two sessions; the same runs alone are 15 */
	for (size_t i = 0; i < 15; i++)
		session[i] = (i / 3) % 2;
	assert_int_equal(changepoints_find(&s, &o, &r), 0);
	assert_int_equal(r.sessions, 5);
	cp_result_free(&r);
	s.session = NULL;
	assert_int_equal(changepoints_find(&s, &o, &r), 0);
	assert_int_equal(r.sessions, 15);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.points[0].index, 9);
	cp_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_changepoint__step_is_found_at_its_run_with_its_size),
		cmocka_unit_test(test_changepoint__aa_histories_rarely_get_a_change_point),
		cmocka_unit_test(test_changepoint__five_percent_step_at_three_percent_noise_is_found),
		cmocka_unit_test(test_changepoint__spikes_are_not_change_points),
		cmocka_unit_test(test_changepoint__change_undone_later_is_found_at_both_ends),
		cmocka_unit_test(test_changepoint__step_at_the_newest_runs_is_found),
		cmocka_unit_test(test_changepoint__changes_below_min_change_are_merged),
		cmocka_unit_test(test_changepoint__same_history_same_answer),
		cmocka_unit_test(test_changepoint__run_noise_of_the_model_widens_intervals),
		cmocka_unit_test(test_changepoint__short_series_and_bad_input),
		cmocka_unit_test(test_changepoint__noise_of_series_ignores_a_step),
		cmocka_unit_test(test_changepoint__sessions_are_the_unit_of_the_test),
		cmocka_unit_test(test_changepoint__sessions_place_and_size_a_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
