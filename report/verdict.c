/* report/verdict.c: the verdict on a change from a baseline — for one case (the statistics of one
 * pair of series, or of runs on each side with the noise between runs modelled) and across every case of a report (the false
 * discovery rate of the claims "slower" and "faster", Benjamini-Hochberg). The method and why it
 * is what it is: docs/performance.md, "Measurement validity". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "xalloc.h"

const char *const verdict_names[VERDICT_COUNT] = {"faster", "slower", "same", "unsure",
						  "insufficient", "contended"};

int verdict_insufficient(size_t nb, size_t nc, const struct verdict_rule *rule)
{
	/* the verdicts are one-sided rank tests: their smallest p must be able to go below alpha */
	return nb < REPORT_MIN_ITERS || nc < REPORT_MIN_ITERS ||
	       mann_whitney_min_p(nb, nc) >= rule->alpha;
}

/* Copy of x[0..n-1] times factor (malloc'd). */
static double *scaled_copy(const double *x, size_t n, double factor)
{
	double *y = xcalloc(n, sizeof(*y));
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] * factor;
	return y;
}

int compare_pair(const double *xb, size_t nb, const double *xc, size_t nc,
		 const struct verdict_rule *rule, struct pair_result *out)
{
	memset(out, 0, sizeof(*out));
	out->wait_base = out->wait_cand = out->rse_base = out->rse_cand = -1;
	int rc = bootstrap_ratio_of_medians(xb, nb, xc, nc, REPORT_CI_LEVEL,
					    REPORT_BOOTSTRAP_RESAMPLES, REPORT_BOOTSTRAP_SEED,
					    &out->speedup);
	if (rc || (rc = mann_whitney_u(xb, nb, xc, nc, &out->mw)))
		return rc;
	summarize(xb, nb, &out->base);
	summarize(xc, nc, &out->cand);
	out->method = METHOD_ITERATIONS;
	out->runs_base = out->runs_cand = 1;
	out->p = out->mw.p;
	/* Slower beyond the threshold: the candidate's times divided by 1 + threshold still rank
	 * above the baseline's (H0: cand <= (1 + threshold) base); faster: the candidate's times
	 * times 1 + threshold still rank below. The inversion of these tests is the distribution-free
	 * interval of the ratio of times; the verdict asks whether it lies beyond the threshold. */
	double up = 1 + rule->threshold;
	double *shifted_down = scaled_copy(xc, nc, 1 / up), *shifted_up = scaled_copy(xc, nc, up);
	rc = mann_whitney_greater(shifted_down, nc, xb, nb, &out->p_slower);
	if (!rc)
		rc = mann_whitney_greater(xb, nb, shifted_up, nc, &out->p_faster);
	free(shifted_down);
	free(shifted_up);
	if (rc)
		return rc;
	out->insufficient = verdict_insufficient(nb, nc, rule);
	/* the change detected 90% of the time: the interval (its half-width in standard errors of
	 * the bootstrap) must clear the threshold */
	double se = (log(out->speedup.hi) - log(out->speedup.lo)) / (2 * 1.959964);
	out->detectable = se >= 0 ? expm1(log1p(rule->threshold) +
					  (verdict_quantile(1 - rule->alpha, INFINITY) +
					   verdict_quantile(0.9, INFINITY)) * se)
				  : INFINITY;
	struct pair_result *one = out;
	verdicts_decide(&one, 1, rule);
	return 0;
}

/* ---- runs: the noise between runs modelled ------------------------------------------------- */

double verdict_quantile(double p, double df)
{
	if (!isfinite(df) || df > 1e7) {
		/* the normal quantile, by bisection on erfc */
		double lo = -40, hi = 40;
		for (int i = 0; i < 200; i++) {
			double mid = 0.5 * (lo + hi);
			if (0.5 * erfc(-mid / sqrt(2.0)) < p)
				lo = mid;
			else
				hi = mid;
		}
		return 0.5 * (lo + hi);
	}
	return student_t_quantile(p, df);
}

static double upper_tail(double t, double df)
{
	return !isfinite(df) || df > 1e7 ? 0.5 * erfc(t / sqrt(2.0)) : student_t_sf(t, df);
}

int detectable_range(const double *x, size_t n, double *median, double *lo, double *hi)
{
	double same;
	int rc = quantiles(x, n, 0, 1, lo, hi);
	return rc ? rc : quantiles(x, n, 0.5, 0.5, median, &same);
}

/* Power 0.9: the change detected as slower 90% of the time is the threshold or the test's
 * critical value, whichever is larger, plus this many standard errors. */
#define DETECT_POWER 0.9

void compare_modeled(double d, double var, double df, int insufficient,
		     const struct verdict_rule *rule, struct pair_result *out)
{
	double se = sqrt(var > 0 ? var : 0);
	if (!(se > 1e-12))
		se = 1e-12;
	out->method = METHOD_RUNS;
	out->log_change = d;
	out->se = se;
	out->df = df;
	out->insufficient = insufficient;
	out->p = fmin(1, 2 * upper_tail(fabs(d) / se, df));
	out->p_slower = upper_tail(d / se, df);
	out->p_faster = upper_tail(-d / se, df);
	double t = verdict_quantile(1 - (1 - REPORT_CI_LEVEL) / 2, df);
	out->speedup.ratio = exp(-d);
	out->speedup.lo = exp(-d - t * se);
	out->speedup.hi = exp(-d + t * se);
	double critical = verdict_quantile(1 - rule->alpha, df) * se;
	out->detectable = expm1(fmax(log1p(rule->threshold), critical) +
				verdict_quantile(DETECT_POWER, df) * se);
	struct pair_result *one = out;
	verdicts_decide(&one, 1, rule);
}

/* ---- across the cases of a report -------------------------------------------------------------- */

int verdict_contended(double wait_slow, double wait_fast, const struct verdict_rule *rule)
{
	if (wait_slow >= 0 && wait_fast >= 0 && wait_slow - wait_fast >= rule->cpu_wait_gap)
		return 1;
	if (wait_slow >= rule->cpu_wait_level && rule->cpu_wait_level < 1)
		return 1;
	return rule->either_contended && wait_fast >= rule->cpu_wait_level &&
	       rule->cpu_wait_level < 1;
}

void verdicts_decide(struct pair_result *const *results, size_t n, const struct verdict_rule *rule)
{
	if (n == 0)
		return;
	double *p = xcalloc(4 * n, sizeof(*p));
	double *p_faster = p + n, *q = p + 2 * n, *q_faster = p + 3 * n;
	for (size_t i = 0; i < n; i++) {
		p[i] = results[i]->insufficient ? NAN : results[i]->p_slower;
		p_faster[i] = results[i]->insufficient ? NAN : results[i]->p_faster;
	}
	bh_adjust(p, n, q);
	bh_adjust(p_faster, n, q_faster);
	double up = 1 + rule->threshold, down = 1 / up, margin = log1p(rule->threshold);
	for (size_t i = 0; i < n; i++) {
		struct pair_result *r = results[i];
		r->q_slower = q[i];
		r->q_faster = q_faster[i];
		/* runs: significant and the change itself beyond the threshold; iterations: the
		 * test was of the change beyond the threshold already */
		int runs = r->method == METHOD_RUNS;
		int slower = q[i] <= rule->alpha && (!runs || r->log_change > margin);
		int faster = q_faster[i] <= rule->alpha && (!runs || -r->log_change > margin);
		if (r->insufficient)
			r->verdict = VERDICT_INSUFFICIENT;
		else if (slower)
			r->verdict = verdict_contended(r->wait_cand, r->wait_base, rule) ? VERDICT_CONTENDED
										: VERDICT_SLOWER;
		else if (faster)
			r->verdict = verdict_contended(r->wait_base, r->wait_cand, rule) ? VERDICT_CONTENDED
										: VERDICT_FASTER;
		else if (r->speedup.lo >= down && r->speedup.hi <= up)
			r->verdict = VERDICT_SAME;
		else
			r->verdict = VERDICT_UNSURE;
	}
	free(p);
}
