/* tests/test_noise.c: the noise model whose unit is the run (report/noise.c) — the sessions'
 * statistics, the fit of its two parts, what it leaves out as real changes, what it assumes where
 * nothing measures, the variance of a comparison, and that a t test built on it holds its level on
 * runs drawn from a known model; F against scipy. */
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

static const struct noise_assumed assumed = NOISE_ASSUMED_DEFAULT;

/* scipy.stats.f.sf / f.ppf and chi2.ppf(0.95, 5) / 5 (scipy 1.16.3) */
static void test_noise__f_distribution_agrees_with_scipy(void **state)
{
	(void)state;
	assert_close(f_sf(2.5, 3, 10), 0.11903956265827816, 1e-12);
	assert_close(f_sf(1.7, 2.5, 13.4), 0.21761995400784026, 1e-12);
	assert_close(f_quantile(0.95, 3, 72), 2.73180701030923, 1e-9);
	assert_close(f_quantile(0.95, 5, INFINITY), 2.2140995387032705, 1e-9);
	assert_true(isnan(f_sf(1, 0, 3)));
}

/* Runs added one by one give the mean and sum of squares of their y; two halves merged as stored
 * summaries give the same. */
static void test_noise__sessions_hold_the_mean_and_sum_of_squares_of_their_runs(void **state)
{
	(void)state;
	const double y[] = {0.10, 0.13, 0.07, 0.12, 0.11};
	struct noise_data one = {0}, halves = {0};
	double mean = 0, ss = 0;
	for (int i = 0; i < 5; i++) {
		noise_data_add_run(&one, "k", 1, "g", "", "2026-01-01T00:00:00.000Z", y[i]);
		mean += y[i] / 5;
	}
	for (int i = 0; i < 5; i++)
		ss += (y[i] - mean) * (y[i] - mean);
	assert_int_equal(one.n, 1);
	assert_int_equal(one.cases[0].n, 1);
	assert_int_equal(one.cases[0].sessions[0].runs, 5);
	assert_close(one.cases[0].sessions[0].mean, mean, 1e-15);
	assert_close(one.cases[0].sessions[0].ss, ss, 1e-15);
	struct noise_data part = {0};
	for (int i = 0; i < 2; i++)
		noise_data_add_run(&part, "k", 1, "g", "", "2026-01-01T00:00:02.000Z", y[i]);
	for (int i = 2; i < 5; i++)
		noise_data_add_run(&halves, "k", 1, "g", "", "2026-01-01T00:00:01.000Z", y[i]);
	noise_data_add_session(&halves, "k", &part.cases[0].sessions[0]);
	assert_int_equal(halves.cases[0].sessions[0].runs, 5);
	assert_close(halves.cases[0].sessions[0].mean, mean, 1e-15);
	assert_close(halves.cases[0].sessions[0].ss, ss, 1e-15);
	assert_string_equal(halves.cases[0].sessions[0].at, "2026-01-01T00:00:01.000Z");
	noise_data_free(&one);
	noise_data_free(&halves);
	noise_data_free(&part);
}

/* Two cases, sessions of 2 runs at known values. within = pooled sum of squares over pooled df.
 * History (source 0): between = (mean D^2 - within c) / 2 over consecutive sessions. A side
 * (source 1): the same over its Helmert contrasts (each session against the mean of the ones
 * before, scaled so that E[D^2] = 2 s_b^2 + s_w^2 c), one degree of freedom each. */
static void test_noise__within_and_between_parts_from_known_sessions(void **state)
{
	(void)state;
	for (int source = 0; source < 2; source++) {
		struct noise_data d = {0};
		/* case a: sessions at means 0, 0.04, 0.01, each of runs mean +- 0.01; b mirrored */
		const double means[] = {0, 0.04, 0.01};
		const char *at[] = {"2026-01-01", "2026-01-02", "2026-01-03"};
		for (int c = 0; c < 2; c++)
			for (int s = 0; s < 3; s++) {
				char key[8];
				snprintf(key, sizeof(key), "s%d", s);
				double m = means[s] * (c ? -1 : 1);
				noise_data_add_run(&d, c ? "b" : "a", source, key, "", at[s], m - 0.01);
				noise_data_add_run(&d, c ? "b" : "a", source, key, "", at[s], m + 0.01);
			}
		struct noise_model m;
		assert_int_equal(noise_model_fit(&d, &assumed, &m), 0);
		assert_int_equal(m.basis, NOISE_MEASURED);
		/* each session: ss = 2 * 0.01^2, df 1; 6 sessions */
		assert_close(m.within_var, 0.0002, 1e-15);
		assert_int_equal(m.diffs, 4);
		assert_int_equal(m.changes, 0);
		/* 6 within df over 2 cases that move together in part */
		assert_close(m.within_df, 6 / (1 + 0.25), 1e-12);
		if (source == 0) {
			/* differences 0.04 and -0.03 per case, c = 1/2 + 1/2 = 1 */
			double mean_d2 = (0.04 * 0.04 + 0.03 * 0.03) / 2;
			assert_close(m.between_var, (mean_d2 - 0.0002) / 2, 1e-15);
			assert_close(m.between_df, 4 * (2.0 / 3) / (1 + 0.25), 1e-12);
		} else {
			/* contrasts 0.04 (scale 1) and 0.01 - 0.02 (scale 4/3); c = 1 for both */
			double mean_d2 = (0.04 * 0.04 + 4.0 / 3 * 0.01 * 0.01) / 2;
			assert_close(m.between_var, (mean_d2 - 0.0002) / 2, 1e-15);
			assert_close(m.between_df, 4 / (1 + 0.25), 1e-12);
		}
		noise_model_free(&m);
		noise_data_free(&d);
	}
}

/* 24 cases, 12 sessions of single runs each, differences alternating +-0.02 around a steady
 * level; then one session 30% slower for every case (a real change between commits in history):
 * the two differences around it are left out and the between part does not move. */
static void test_noise__a_real_change_between_sessions_is_not_noise(void **state)
{
	(void)state;
	struct noise_data steady = {0}, stepped = {0};
	for (int c = 0; c < 24; c++) {
		char key[16];
		snprintf(key, sizeof(key), "case%d", c);
		for (int s = 0; s < 12; s++) {
			char session[16], at[32];
			snprintf(session, sizeof(session), "run%d", s);
			snprintf(at, sizeof(at), "2026-01-%02dT00:00:00.000Z", s + 1);
			double y = 0.01 * ((s + c) % 2 ? 1 : -1);
			noise_data_add_run(&steady, key, 0, session, "", at, y);
			noise_data_add_run(&stepped, key, 0, session, "", at, y + (s == 6 ? 0.3 : 0));
		}
	}
	struct noise_model a, b;
	assert_int_equal(noise_model_fit(&steady, &assumed, &a), 0);
	assert_int_equal(noise_model_fit(&stepped, &assumed, &b), 0);
	assert_close(a.between_var, 0.0004 / 2, 1e-15);
	assert_int_equal(b.changes, 48);   /* into and out of the slow session, for 24 cases */
	assert_close(b.between_var, a.between_var, 1e-15);
	assert_int_equal(b.noisier, 0);
	noise_model_free(&a);
	noise_model_free(&b);
	noise_data_free(&steady);
	noise_data_free(&stepped);
}

/* In history, sessions are differenced only with sessions of the same code: a step between two
 * commits is not noise, however few sessions there are; two sessions of one commit are. */
static void test_noise__history_differences_only_sessions_of_the_same_code(void **state)
{
	(void)state;
	struct noise_data d = {0};
	for (int c = 0; c < 4; c++) {
		char key[8];
		snprintf(key, sizeof(key), "k%d", c);
		noise_data_add_run(&d, key, 0, "r1", "old/s", "01", 0.00);
		noise_data_add_run(&d, key, 0, "r2", "new/s", "02", 0.69);   /* 2x: a new commit */
		noise_data_add_run(&d, key, 0, "r3", "new/s", "03", 0.71);
	}
	struct noise_model m;
	assert_int_equal(noise_model_fit(&d, &assumed, &m), 0);
	assert_int_equal(m.basis, NOISE_MEASURED);
	assert_int_equal(m.diffs, 4);   /* r2 - r3 of each case, never r1 - r2 */
	assert_close(m.between_var, 0.02 * 0.02 / 2, 1e-12);
	noise_model_free(&m);
	noise_data_free(&d);
}

/* What cannot be measured is assumed: one session a side (runs of one --repeat group) measures
 * within only, between = ratio x within; single runs a side measure nothing: run_noise. */
static void test_noise__what_is_not_measured_is_assumed(void **state)
{
	(void)state;
	struct noise_data groups = {0}, singles = {0};
	for (int c = 0; c < 3; c++) {
		char key[8];
		snprintf(key, sizeof(key), "k%d", c);
		for (int r = 0; r < 4; r++)
			noise_data_add_run(&groups, key, 1, "g1", "", "2026-01-01", 0.01 * (r % 2 ? 1 : -1));
		noise_data_add_run(&groups, key, 2, "g2", "", "2026-01-02", 0.1);
		noise_data_add_run(&singles, key, 1, "r1", "", "2026-01-01", 0);
		noise_data_add_run(&singles, key, 2, "r2", "", "2026-01-02", 0.1);
	}
	struct noise_model m;
	assert_int_equal(noise_model_fit(&groups, &assumed, &m), 0);
	assert_int_equal(m.basis, NOISE_BETWEEN_ASSUMED);
	double within = 4 * 0.0001 / 3;
	assert_close(m.within_var, within, 1e-15);
	assert_close(m.between_var, NOISE_SESSION_RATIO * within, 1e-15);
	noise_model_free(&m);
	assert_int_equal(noise_model_fit(&singles, &assumed, &m), 0);
	assert_int_equal(m.basis, NOISE_ASSUMED);
	assert_close(m.within_var + m.between_var, 0.06 * 0.06, 1e-15);
	/* one run a side: the assumed spread twice, plus each run's own (iterations) */
	const char *b1[] = {"r1"}, *c1[] = {"r2"};
	struct noise_side b = {b1, 1}, c = {c1, 1};
	double var, df;
	noise_diff_var(&m, 0, &b, &c, 1e-6, 2e-6, &var, &df);
	assert_close(var, 2 * 0.06 * 0.06 + 3e-6, 1e-15);
	assert_true(isinf(df));
	noise_model_free(&m);
	noise_data_free(&groups);
	noise_data_free(&singles);
}

/* The variance of a difference of means: sessions a side shares cancel their between part; a
 * side of one session pays the whole between part; runs apart pay it once per run. */
static void test_noise__comparison_variance_follows_the_sessions(void **state)
{
	(void)state;
	struct noise_model m = {.basis = NOISE_MEASURED, .within_var = 0.0004, .within_df = 30,
				.between_var = 0.0001, .between_df = 20};
	double var, df;
	const char *group4[] = {"g", "g", "g", "g"}, *apart4[] = {"a", "b", "c", "d"},
		   *one[] = {"z"}, *same[] = {"g"};
	struct noise_side g4 = {group4, 4}, a4 = {apart4, 4}, z = {one, 1}, g1 = {same, 1};
	noise_diff_var(&m, -1, &g4, &z, 0, 0, &var, &df);
	assert_close(var, 0.0001 * (1 + 1) + 0.0004 * (0.25 + 1), 1e-15);
	noise_diff_var(&m, -1, &a4, &z, 0, 0, &var, &df);
	assert_close(var, 0.0001 * (4 * 0.0625 + 1) + 0.0004 * 1.25, 1e-15);
	/* Welch-Satterthwaite over the two parts */
	double vb = 0.0001 * 1.25, vw = 0.0004 * 1.25;
	assert_close(df, (vb + vw) * (vb + vw) / (vb * vb / 20 + vw * vw / 30), 1e-9);
	/* a run of the baseline's own session: only the within part */
	noise_diff_var(&m, -1, &g4, &g1, 0, 0, &var, &df);
	assert_close(var, 0.0004 * 1.25, 1e-15);
	/* how many runs a side, each at another time, reach a variance: 2 (s_w^2 + s_b^2) / N */
	assert_int_equal(noise_runs_for(&m, -1, 0.0001), 10);
}

/* One case of 24 with 4x the spread of the others (2x the sd) is found noisier and keeps its
 * own variance with its own degrees of freedom; the others stay pooled. */
static void test_noise__a_noisier_case_keeps_its_own_spread(void **state)
{
	(void)state;
	struct noise_data d = {0};
	for (int c = 0; c < 24; c++) {
		char key[16];
		snprintf(key, sizeof(key), "case%d", c);
		for (int s = 0; s < 10; s++) {
			char session[16], at[32];
			snprintf(session, sizeof(session), "g%d", s);
			snprintf(at, sizeof(at), "2026-01-%02d", s + 1);
			double scale = c == 5 ? 4 : 1;
			/* two runs per session at +-0.01 scale, sessions alternating +-0.01 scale */
			double m = 0.01 * scale * ((s + c) % 2 ? 1 : -1);
			noise_data_add_run(&d, key, 0, session, "", at, m - 0.01 * scale);
			noise_data_add_run(&d, key, 0, session, "", at, m + 0.01 * scale);
		}
	}
	struct noise_model m;
	assert_int_equal(noise_model_fit(&d, &assumed, &m), 0);
	assert_int_equal(m.noisier, 1);
	assert_true(m.scale[5] > 4);
	assert_close(m.scale_df[5], 10 + 9, 1e-12);
	for (int c = 0; c < 24; c++)
		if (c != 5)
			assert_close(m.scale[c], 1, 0);
	noise_model_free(&m);
	noise_data_free(&d);
}

/* splitmix64 and Box-Muller, for the level test below */
static uint64_t seed_state = 12345;
static double unit(void)
{
	uint64_t z = (seed_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return ((double)((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(unit())) * cos(6.283185307179586 * unit()); }

/* A system of one case whose history steps up and back down three times (3 of its 9 differences
 * are 0.2, the others 0.002 or 0): more than a quarter beyond, so they are not changes but its
 * noise, and the case is noisier than the pool it forms alone. No pool is left without it: the
 * model stays measured, with the case's own spread (about 0.08 here). It said "assumed", with the
 * assumed 6% run noise times the case's scale against the first pool: a run spread of 292%. */
static void test_noise__a_lone_noisier_case_keeps_the_measured_pool(void **state)
{
	(void)state;
	struct noise_data d = {0};
	const double means[10] = {0, 0.002, 0, 0.2, 0, 0.002, 0, 0.2, 0.2, 0.2};
	for (int s = 0; s < 10; s++) {
		char session[16], at[32];
		snprintf(session, sizeof(session), "g%d", s);
		snprintf(at, sizeof(at), "2026-01-%02d", s + 1);
		noise_data_add_run(&d, "only", 0, session, "", at, means[s] - 0.001);
		noise_data_add_run(&d, "only", 0, session, "", at, means[s] + 0.001);
	}
	struct noise_model m;
	assert_int_equal(noise_model_fit(&d, &assumed, &m), 0);
	assert_int_equal(m.basis, NOISE_MEASURED);
	assert_int_equal(m.noisier, 1);
	double sd = noise_run_sd(&m, 0);
	if (!(sd > 0.05 && sd < 0.12))
		fail_msg("run spread %g, the case's own is about 0.08", sd);
	noise_model_free(&m);
	noise_data_free(&d);
}

/* The level on runs drawn from the model itself: 8 cases, 3 history sessions of 2 runs, a
 * baseline session of 4 runs and a candidate run of another session; s_w = 3%, s_b = 2%, nothing
 * changed. The one-sided t test of the model at 5% rejects in 3% to 7% of 2000 trials (per case,
 * over all cases). */
static void test_noise__the_t_test_on_the_model_holds_its_level(void **state)
{
	(void)state;
	const double sw = 0.03, sb = 0.02;
	int rejected = 0, tests = 0;
	for (int trial = 0; trial < 2000; trial++) {
		struct noise_data d = {0};
		double yb[8], yc[8];
		for (int c = 0; c < 8; c++) {
			char key[8];
			snprintf(key, sizeof(key), "k%d", c);
			for (int s = 0; s < 3; s++) {
				char session[8], at[8];
				snprintf(session, sizeof(session), "h%d", s);
				snprintf(at, sizeof(at), "0%d", s);
				double g = sb * normal();
				for (int r = 0; r < 2; r++)
					noise_data_add_run(&d, key, 0, session, "", at, g + sw * normal());
			}
			double gb = sb * normal(), gc = sb * normal();
			yb[c] = 0;
			for (int r = 0; r < 4; r++) {
				double y = gb + sw * normal();
				yb[c] += y / 4;
				noise_data_add_run(&d, key, 1, "base", "", "10", y);
			}
			yc[c] = gc + sw * normal();
			noise_data_add_run(&d, key, 2, "cand", "", "11", yc[c]);
		}
		struct noise_model m;
		assert_int_equal(noise_model_fit(&d, &assumed, &m), 0);
		const char *bs[] = {"base", "base", "base", "base"}, *cs[] = {"cand"};
		struct noise_side b = {bs, 4}, c = {cs, 1};
		for (int k = 0; k < 8; k++) {
			double var, df;
			noise_diff_var(&m, k, &b, &c, 0, 0, &var, &df);
			double t = (yc[k] - yb[k]) / sqrt(var);
			rejected += student_t_sf(t, df) < 0.05;
			tests++;
		}
		noise_model_free(&m);
		noise_data_free(&d);
	}
	double rate = (double)rejected / tests;
	if (!(rate >= 0.03 && rate <= 0.07))
		fail_msg("rejected %d of %d (%.3f) at level 0.05", rejected, tests, rate);
}

/* The regress and compare case the run-to-run promise rests on: one case, no history, three
 * one-run sessions a side (A/A: both sides from one model, 4% run to run). A one-sided t test on
 * the model holds its level at 1%. With chi-square(1)'s cutoff for changes, ordinary differences
 * beyond it at the median's noisy scale were left out of the between part: 1.6% of these
 * comparisons were flagged at a nominal 1%. */
static void test_noise__three_runs_a_side_hold_the_level(void **state)
{
	(void)state;
	const int trials = 20000;
	int rejected = 0;
	for (int trial = 0; trial < trials; trial++) {
		struct noise_data d = {0};
		char names[6][4];
		const char *bs[3], *cs[3];
		double mb = 0, mc = 0;
		for (int s = 0; s < 3; s++) {
			char at_b[4], at_c[4];
			snprintf(names[s], sizeof(names[s]), "b%d", s);
			snprintf(names[3 + s], sizeof(names[3 + s]), "c%d", s);
			snprintf(at_b, sizeof(at_b), "0%d", s);
			snprintf(at_c, sizeof(at_c), "1%d", s);
			double yb = 0.04 * normal(), yc = 0.04 * normal();
			noise_data_add_run(&d, "k", 1, names[s], "", at_b, yb);
			noise_data_add_run(&d, "k", 2, names[3 + s], "", at_c, yc);
			bs[s] = names[s];
			cs[s] = names[3 + s];
			mb += yb / 3;
			mc += yc / 3;
		}
		struct noise_model m;
		assert_int_equal(noise_model_fit(&d, &assumed, &m), 0);
		struct noise_side b = {bs, 3}, c = {cs, 3};
		double var, df;
		noise_diff_var(&m, 0, &b, &c, 0, 0, &var, &df);
		rejected += student_t_sf((mc - mb) / sqrt(var), df) < 0.01;
		noise_model_free(&m);
		noise_data_free(&d);
	}
	double rate = (double)rejected / trials;   /* its standard error at 1%: 0.0007 */
	if (!(rate >= 0.007 && rate <= 0.013))
		fail_msg("rejected %d of %d A/A comparisons (%.4f) at level 0.01", rejected, trials, rate);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noise__f_distribution_agrees_with_scipy),
		cmocka_unit_test(test_noise__sessions_hold_the_mean_and_sum_of_squares_of_their_runs),
		cmocka_unit_test(test_noise__within_and_between_parts_from_known_sessions),
		cmocka_unit_test(test_noise__a_real_change_between_sessions_is_not_noise),
		cmocka_unit_test(test_noise__history_differences_only_sessions_of_the_same_code),
		cmocka_unit_test(test_noise__what_is_not_measured_is_assumed),
		cmocka_unit_test(test_noise__comparison_variance_follows_the_sessions),
		cmocka_unit_test(test_noise__a_noisier_case_keeps_its_own_spread),
		cmocka_unit_test(test_noise__a_lone_noisier_case_keeps_the_measured_pool),
		cmocka_unit_test(test_noise__the_t_test_on_the_model_holds_its_level),
		cmocka_unit_test(test_noise__three_runs_a_side_hold_the_level),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
