/* report/verdict.c: the verdict on a change from a baseline — for one case (the statistics of one
 * pair of series, or of several runs on each side) and across every case of a report (the false
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

/* One run a side cannot show how much a run's median moves from run to run. With run_noise > 0
 * the verdict assumes it: the log ratio of medians has the variance of the bootstrap (within the
 * runs) plus 2 run_noise^2 (one run each side), and the one-sided normal tests against the
 * threshold with that variance must agree with the rank tests (the larger p of the two is kept:
 * both must reject). The interval shown is the normal one with that variance. */
static void assume_run_noise(struct pair_result *r, const struct verdict_rule *rule)
{
	double z95 = 1.959964, d = -log(r->speedup.ratio), margin = log1p(rule->threshold);
	double se_within = (log(r->speedup.hi) - log(r->speedup.lo)) / (2 * z95);
	double se = sqrt(se_within * se_within + 2 * rule->run_noise * rule->run_noise);
	r->p_slower = fmax(r->p_slower, 0.5 * erfc((d - margin) / se / sqrt(2.0)));
	r->p_faster = fmax(r->p_faster, 0.5 * erfc((-d - margin) / se / sqrt(2.0)));
	r->p = fmax(r->p, erfc(fabs(d) / se / sqrt(2.0)));
	r->speedup.lo = exp(-d - z95 * se);
	r->speedup.hi = exp(-d + z95 * se);
	r->run_noise_assumed = 1;
}

int compare_pair(const double *xb, size_t nb, const double *xc, size_t nc,
		 const struct verdict_rule *rule, struct pair_result *out)
{
	memset(out, 0, sizeof(*out));
	out->wait_base = out->wait_cand = -1;
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
	if (rule->run_noise > 0)
		assume_run_noise(out, rule);
	out->insufficient = verdict_insufficient(nb, nc, rule);
	struct pair_result *one = out;
	verdicts_decide(&one, 1, rule);
	return 0;
}

/* ---- several runs on a side -------------------------------------------------------------------- */

/* The runs method's p-values and interval from a variance estimate of one run's log median (var,
 * with df degrees of freedom). */
static void runs_finish(struct pair_result *r, double var, double df,
			const struct verdict_rule *rule)
{
	double se = sqrt(var * (1.0 / (double)r->runs_base + 1.0 / (double)r->runs_cand));
	if (!(se > 1e-12))
		se = 1e-12;
	double d = r->log_change, margin = log1p(rule->threshold);
	r->used_var = var;
	r->used_df = df;
	r->p = fmin(1, 2 * student_t_sf(fabs(d) / se, df));
	r->p_slower = student_t_sf((d - margin) / se, df);
	r->p_faster = student_t_sf((-d - margin) / se, df);
	double t = student_t_quantile(1 - (1 - REPORT_CI_LEVEL) / 2, df);
	r->speedup.ratio = exp(-d);
	r->speedup.lo = exp(-d - t * se);
	r->speedup.hi = exp(-d + t * se);
}

int compare_runs(const struct run_samples *base, size_t nbase, const struct run_samples *cand,
		 size_t ncand, const struct verdict_rule *rule, struct pair_result *out)
{
	memset(out, 0, sizeof(*out));
	out->wait_base = out->wait_cand = -1;
	if (nbase == 0 || ncand == 0)
		return BD_EINVAL;
	if (nbase == 1 && ncand == 1)
		return compare_pair(base[0].x, base[0].n, cand[0].x, cand[0].n, rule, out);
	size_t total_b = 0, total_c = 0;
	for (size_t i = 0; i < nbase; i++)
		total_b += base[i].n;
	for (size_t i = 0; i < ncand; i++)
		total_c += cand[i].n;
	double *pool = xmalloc((total_b + total_c + 1) * sizeof(*pool));
	/* per run: the log of its median; per side: their mean and sum of squares about it */
	double sum[2] = {0, 0}, ss[2] = {0, 0}, logs_b[64], logs_c[64];
	const struct run_samples *side[2] = {base, cand};
	size_t nside[2] = {nbase, ncand}, min_n = SIZE_MAX;
	double *logs[2] = {logs_b, logs_c};
	int rc = 0;
	for (int s = 0; s < 2 && !rc; s++) {
		if (nside[s] > 64) {
			rc = BD_EINVAL;
			break;
		}
		for (size_t i = 0; i < nside[s]; i++) {
			const struct run_samples *run = &side[s][i];
			if (run->n == 0) {
				rc = BD_EINVAL;
				break;
			}
			min_n = run->n < min_n ? run->n : min_n;
			memcpy(pool, run->x, run->n * sizeof(*pool));
			double m = median_inplace(pool, run->n);
			if (!(m > 0) || !isfinite(m)) {
				rc = BD_EINVAL;
				break;
			}
			logs[s][i] = log(m);
			sum[s] += logs[s][i];
		}
	}
	if (rc) {
		free(pool);
		return rc;
	}
	double mean[2] = {sum[0] / (double)nbase, sum[1] / (double)ncand};
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < nside[s]; i++)
			ss[s] += (logs[s][i] - mean[s]) * (logs[s][i] - mean[s]);
	/* the iterations, pooled per side, for the summaries (n, mean, std) */
	size_t at = 0;
	for (size_t i = 0; i < nbase; i++, at += base[i - 1].n)
		memcpy(pool + at, base[i].x, base[i].n * sizeof(*pool));
	summarize(pool, total_b, &out->base);
	at = 0;
	for (size_t i = 0; i < ncand; i++, at += cand[i - 1].n)
		memcpy(pool + at, cand[i].x, cand[i].n * sizeof(*pool));
	summarize(pool, total_c, &out->cand);
	free(pool);
	out->method = METHOD_RUNS;
	out->runs_base = nbase;
	out->runs_cand = ncand;
	/* the medians shown: geometric means of the runs' medians */
	out->base.median = exp(mean[0]);
	out->cand.median = exp(mean[1]);
	out->log_change = mean[1] - mean[0];
	out->run_df = (double)(nbase + ncand - 2);
	out->run_var = (ss[0] + ss[1]) / out->run_df;
	out->insufficient = min_n < REPORT_MIN_ITERS;
	runs_finish(out, out->run_var, out->run_df, rule);
	struct pair_result *one = out;
	verdicts_decide(&one, 1, rule);
	return 0;
}

/* ---- across the cases of a report -------------------------------------------------------------- */

/* Whether the side that looks slower waited for a CPU enough more of its measured time than the
 * other (both known) that the machine, not the code, may be what changed. */
static int contended(double wait_slow, double wait_fast, const struct verdict_rule *rule)
{
	return wait_slow >= 0 && wait_fast >= 0 && wait_slow - wait_fast >= rule->cpu_wait_gap;
}

void verdicts_decide(struct pair_result *const *results, size_t n, const struct verdict_rule *rule)
{
	if (n == 0)
		return;
	/* The runs method's variance, pooled over the cases that have it (on the log scale the
	 * run-to-run spread is a relative one, alike across cases); a case whose own estimate is
	 * larger keeps its own, with its own degrees of freedom. */
	double pooled_ss = 0, pooled_df = 0;
	for (size_t i = 0; i < n; i++)
		if (results[i]->method == METHOD_RUNS && !results[i]->insufficient) {
			pooled_ss += results[i]->run_var * results[i]->run_df;
			pooled_df += results[i]->run_df;
		}
	double pooled_var = pooled_df > 0 ? pooled_ss / pooled_df : 0;
	double *p = xcalloc(4 * n, sizeof(*p));
	double *p_faster = p + n, *q = p + 2 * n, *q_faster = p + 3 * n;
	for (size_t i = 0; i < n; i++) {
		struct pair_result *r = results[i];
		if (r->method == METHOD_RUNS) {
			if (r->run_var >= pooled_var)
				runs_finish(r, r->run_var, r->run_df, rule);
			else
				runs_finish(r, pooled_var, pooled_df, rule);
		}
		p[i] = r->insufficient ? NAN : r->p_slower;
		p_faster[i] = r->insufficient ? NAN : r->p_faster;
	}
	bh_adjust(p, n, q);
	bh_adjust(p_faster, n, q_faster);
	double up = 1 + rule->threshold, down = 1 / up;
	for (size_t i = 0; i < n; i++) {
		struct pair_result *r = results[i];
		r->q_slower = q[i];
		r->q_faster = q_faster[i];
		if (r->insufficient)
			r->verdict = VERDICT_INSUFFICIENT;
		else if (q[i] <= rule->alpha)
			r->verdict = contended(r->wait_cand, r->wait_base, rule) ? VERDICT_CONTENDED
										: VERDICT_SLOWER;
		else if (q_faster[i] <= rule->alpha)
			r->verdict = contended(r->wait_base, r->wait_cand, rule) ? VERDICT_CONTENDED
										: VERDICT_FASTER;
		else if (r->speedup.lo >= down && r->speedup.hi <= up)
			r->verdict = VERDICT_SAME;
		else
			r->verdict = VERDICT_UNSURE;
	}
	free(p);
}
