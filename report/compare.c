/* report/compare.c: comparisons of a baseline and a candidate — the verdict on one pair of
 * series, pairing the cases of two case sets, and `report compare`'s tables (shared with `report
 * writeup`, `report regress`, `report history` and the speedup chart). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "xalloc.h"

static int is_ok(const struct case_row *c) { return c->status == STATUS_OK; }

/* "unstable (baseline +-4.1%)", "unstable (candidate +-3%)", both sides, or "" */
static void unstable_sides_text(double rse_base, double rse_cand, double level, char *out,
				size_t n)
{
	char b[32] = "", c[32] = "";
	if (rse_base > level)
		snprintf(b, sizeof(b), "baseline +-%.1f%%", 100 * rse_base);
	if (rse_cand > level)
		snprintf(c, sizeof(c), "candidate +-%.1f%%", 100 * rse_cand);
	out[0] = '\0';
	if (b[0] || c[0])
		snprintf(out, n, "unstable (%s%s%s)", b, b[0] && c[0] ? ", " : "", c);
}

void compare_pairs(const struct case_set *base, const struct case_set *cand,
		   struct case_pair *pairs, size_t n, enum series_pick pick,
		   const struct verdict_rule *rule)
{
#pragma omp parallel for schedule(dynamic, 8)
	for (size_t i = 0; i < n; i++) {
		size_t nb, nc;
		const double *xb = case_series_pick(&base->series[pairs[i].base], pick, &nb);
		const double *xc = case_series_pick(&cand->series[pairs[i].cand], pick, &nc);
		pairs[i].ok = !compare_pair(xb, nb, xc, nc, rule, &pairs[i].result);
		/* either side's wait for a CPU: a contended side is never a plain faster/slower */
		pairs[i].result.wait_base = base->rows[pairs[i].base].cpu_wait;
		pairs[i].result.wait_cand = cand->rows[pairs[i].cand].cpu_wait;
		/* and how precise each side's median is within its run: an unstable side is marked */
		struct case_mark mb, mc;
		const struct case_series *sb = &base->series[pairs[i].base],
					 *sc = &cand->series[pairs[i].cand];
		case_mark_of(&base->rows[pairs[i].base], sb->total, sb->ntotal, &mb);
		case_mark_of(&cand->rows[pairs[i].cand], sc->total, sc->ntotal, &mc);
		pairs[i].result.rse_base = mb.rse;
		pairs[i].result.rse_cand = mc.rse;
	}
	compare_pairs_decide(pairs, n, rule);
}

void compare_pairs_decide(struct case_pair *pairs, size_t n, const struct verdict_rule *rule)
{
	struct pair_result **family = xcalloc(n, sizeof(*family));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (pairs[i].ok)
			family[m++] = &pairs[i].result;
	verdicts_decide(family, m, rule);
	free(family);
}

void compare_match(const struct case_set *base, const struct case_set *cand, const char *impl,
		   enum series_pick pick, const struct verdict_rule *rule, struct case_pair **pairs,
		   size_t *n)
{
	struct case_index index = {0};
	case_index_build(base, impl != NULL, &index);
	struct case_pair *out = xcalloc(cand->n, sizeof(*out));
	/* a case key measured twice in the run is one case: its first copy counts */
	unsigned char *first = case_rows_first_of_key(cand->rows, cand->n);
	size_t m = 0;
	for (size_t i = 0; i < cand->n; i++) {
		const struct case_row *c = &cand->rows[i];
		if ((impl && !strcmp(c->impl, impl)) || !first[i])
			continue;
		char *stripped = impl ? case_key_without_impl(c->case_key) : NULL;
		long j = case_index_find(&index, impl ? stripped : c->case_key, impl);
		if (j < 0 && impl) {   /* a peer's case: the baseline's that lacks its own parameters */
			char *plain = case_key_without_peer_params(stripped);
			j = case_index_find(&index, plain, impl);
			free(plain);
		}
		free(stripped);
		if (j >= 0 && is_ok(c) && is_ok(&base->rows[j]))
			out[m++] = (struct case_pair){.base = (size_t)j, .cand = i};
	}
	case_index_free(&index);
	free(first);
	compare_pairs(base, cand, out, m, pick, rule);
	*pairs = out;
	*n = m;
}

void compare_match_param(const struct case_set *set, const char *key, const char *value,
			 enum series_pick pick, const struct verdict_rule *rule,
			 struct case_pair **pairs, size_t *n)
{
	char (*have)[128] = xcalloc(set->n, sizeof(*have));
	char **rest = xcalloc(set->n, sizeof(*rest));   /* the key without key= */
	struct case_pair *out = xcalloc(set->n, sizeof(*out));
	/* a case key measured twice in the run is one case: its first copy counts (the first
	 * baseline's too) */
	unsigned char *first = case_rows_first_of_key(set->rows, set->n);
	size_t m = 0;
	for (size_t i = 0; i < set->n; i++) {
		json_field(set->rows[i].params_json, key, have[i], sizeof(have[i]));
		rest[i] = case_key_without(set->rows[i].case_key, key);
	}
	for (size_t i = 0; i < set->n; i++) {   /* O(n^2) string compares: a run's few thousand */
		if (!first[i] || !is_ok(&set->rows[i]) || !have[i][0] || !strcmp(have[i], value))
			continue;
		for (size_t j = 0; j < set->n; j++)
			if (first[j] && is_ok(&set->rows[j]) && !strcmp(have[j], value) &&
			    !strcmp(rest[j], rest[i])) {
				out[m++] = (struct case_pair){.base = j, .cand = i};
				break;
			}
	}
	for (size_t i = 0; i < set->n; i++)
		free(rest[i]);
	free(rest);
	free(have);
	free(first);
	compare_pairs(set, set, out, m, pick, rule);
	*pairs = out;
	*n = m;
}

size_t compare_tables(const struct case_set *cand, const struct case_pair *pairs, size_t n,
		      const char *title, int by_run, const struct verdict_rule *rule,
		      struct table *t, struct table *sum)
{
	table_init(t, title);
	table_init(sum, "summary");
	size_t c_case = table_column(t, "case", "", 0), c_impl = table_column(t, "impl", "", 0),
	       c_n = table_column(t, "n", "", 0),
	       c_base = table_column(t, "baseline", "ms", 3),
	       c_cand = table_column(t, "candidate", "ms", 3),
	       c_sp = table_column(t, "speedup", "x", 3), c_lo = table_column(t, "ci lo", "x", 3),
	       c_hi = table_column(t, "ci hi", "x", 3), c_p = table_column(t, "p", "", 4),
	       c_q = table_column(t, "p adj", "", 4), c_det = table_column(t, "detect", "%", 1),
	       c_wait = table_column(t, "cpu wait", "%", 0);
	/* a mark column (before the verdict, which stays last) where a side is unstable */
	const double unstable = REPORT_UNSTABLE_RSE_PCT / 100.0;
	size_t nunstable = 0;
	for (size_t k = 0; k < n; k++)
		nunstable += pairs[k].ok && (pairs[k].result.rse_base > unstable ||
					     pairs[k].result.rse_cand > unstable);
	size_t c_mark = nunstable ? table_column(t, "mark", "", 0) : 0,
	       c_v = table_column(t, "verdict", "", 0);
	double *detectable = xcalloc(n + 1, sizeof(*detectable));
	size_t ndetect = 0, ncontended = 0;
	double *speedups = xcalloc(n, sizeof(*speedups));
	char (*groups)[160] = xcalloc(n, sizeof(*groups));   /* impl and peer parameters */
	enum verdict *verdicts = xcalloc(n, sizeof(*verdicts));
	size_t npairs = 0;
	for (size_t k = 0; k < n; k++) {
		if (!pairs[k].ok)
			continue;
		const struct case_row *c = &cand->rows[pairs[k].cand];
		const struct pair_result *pr = &pairs[k].result;
		size_t r = table_row(t);
		char params[128];
		case_key_peer_params(c->case_key, params, sizeof(params));
		snprintf(groups[npairs], sizeof(groups[npairs]), "%s%s%s", c->impl, params[0] ? " " : "",
			 params);
		table_text(t, r, c_case, c->name);
		table_text(t, r, c_impl, groups[npairs]);
		char n_text[48];
		if (pr->method == METHOD_RUNS && (pr->runs_base > 1 || pr->runs_cand > 1))
			snprintf(n_text, sizeof(n_text), "%zux%zu/%zux%zu", pr->base.n / pr->runs_base,
				 pr->runs_base, pr->cand.n / pr->runs_cand, pr->runs_cand);
		else
			snprintf(n_text, sizeof(n_text), "%zu/%zu", pr->base.n, pr->cand.n);
		table_text(t, r, c_n, n_text);
		table_number(t, r, c_base, pr->base.median / 1e6);
		table_number(t, r, c_cand, pr->cand.median / 1e6);
		table_number(t, r, c_sp, pr->speedup.ratio);
		if (pr->method == METHOD_RUNS || (pr->base.n > 1 && pr->cand.n > 1)) {
			/* no interval from one sample */
			table_number(t, r, c_lo, pr->speedup.lo);
			table_number(t, r, c_hi, pr->speedup.hi);
		}
		table_number(t, r, c_p, pr->p);
		/* the adjusted p of the verdict's test, or of the nearer one; none when insufficient */
		double q = pr->verdict == VERDICT_FASTER   ? pr->q_faster
			   : pr->verdict == VERDICT_SLOWER ? pr->q_slower
							   : fmin(pr->q_faster, pr->q_slower);
		if (!pr->insufficient)
			table_number(t, r, c_q, q);
		if (!pr->insufficient && isfinite(pr->detectable)) {
			table_number(t, r, c_det, 100 * pr->detectable);
			detectable[ndetect++] = pr->detectable;
		}
		char wait[32] = "";
		if (pr->wait_base >= 0 || pr->wait_cand >= 0) {
			char wb[16] = "?", wc[16] = "?";
			if (pr->wait_base >= 0)
				snprintf(wb, sizeof(wb), "%.0f", 100 * pr->wait_base);
			if (pr->wait_cand >= 0)
				snprintf(wc, sizeof(wc), "%.0f", 100 * pr->wait_cand);
			snprintf(wait, sizeof(wait), "%s/%s", wb, wc);
		}
		table_text(t, r, c_wait, wait);
		if (nunstable) {
			char mark[96] = "";
			unstable_sides_text(pr->rse_base, pr->rse_cand, unstable, mark, sizeof(mark));
			table_text(t, r, c_mark, mark);
		}
		ncontended += pr->verdict == VERDICT_CONTENDED;
		table_text(t, r, c_v, verdict_names[pr->verdict]);
		speedups[npairs] = pr->speedup.ratio;
		verdicts[npairs++] = pr->verdict;
	}
	if (npairs == 0)
		goto done;
	if (by_run)
		table_note(t, "n: measured iterations (x runs), baseline/candidate; speedup = baseline "
			      "median / candidate median (> 1: candidate faster), each side's median the "
			      "geometric mean of its runs'; the run is the unit: CI and p (t test) from "
			      "the noise between runs; p adj: one-sided, Benjamini-Hochberg adjusted over "
			      "the cases; faster/slower: significant at alpha %.3g and beyond the %.3g%% "
			      "threshold; same: the CI within it",
			   rule->alpha, 100 * rule->threshold);
	else
		table_note(t, "n: measured iterations, baseline/candidate (one run: the iterations are "
			      "the samples; a drift of the machine during the run is not in these "
			      "intervals); speedup = baseline median / candidate median (> 1: candidate "
			      "faster); CI: 95%% bootstrap; p: Mann-Whitney U; p adj: one-sided, beyond "
			      "the threshold, Benjamini-Hochberg adjusted over the cases; verdict at "
			      "%.3g%% threshold, alpha %.3g",
			   100 * rule->threshold, rule->alpha);
	double med, lo, hi;
	if (ndetect && !detectable_range(detectable, ndetect, &med, &lo, &hi))
		table_note(t, "detect: the smallest change detected as slower 90%% of the time: %.3g%% "
			      "for the median case, %.3g%% to %.3g%% over the cases",
			   100 * med, 100 * lo, 100 * hi);
	if (ncontended)
		table_note(t, "contended (%zu): a side waited for a CPU %.3g%% of its measured time or "
			      "more (cpu wait: baseline/candidate), or the slower side %.3g points more "
			      "than the other: the machine, not the code, may be what differs; no faster "
			      "or slower is claimed",
			   ncontended, 100 * rule->cpu_wait_level, 100 * rule->cpu_wait_gap);

	if (nunstable)
		table_note(t, "unstable (%zu): a side's median is uncertain by more than +-%.3g%% (95%%) "
			      "within its run (cases.rse: drift or bursts the iterations' bootstrap does "
			      "not see), so its speedup and verdict may not hold on a rerun; more "
			      "iterations (iters: auto) or a quieter machine",
			   nunstable, 2 * REPORT_UNSTABLE_RSE_PCT);

	/* Summary per candidate impl (one row per impl; by run: one row). */
	size_t s_impl = table_column(sum, "impl", "", 0), s_n = table_column(sum, "pairs", "", 0),
	       s_geo = table_column(sum, "geomean", "x", 3), s_med = table_column(sum, "median", "x", 3),
	       s_mean = table_column(sum, "mean", "x", 3), s_min = table_column(sum, "min", "x", 3),
	       s_max = table_column(sum, "max", "x", 3), s_w = table_column(sum, "wins", "", 0),
	       s_l = table_column(sum, "losses", "", 0), s_t = table_column(sum, "ties", "", 0),
	       s_f = table_column(sum, "faster", "", 0), s_s = table_column(sum, "slower", "", 0),
	       s_c = table_column(sum, "contended", "", 0);
	double *group = xcalloc(npairs, sizeof(*group));
	for (size_t i = 0; i < npairs; i++) {
		int first = 1;
		for (size_t j = 0; j < i && first; j++)
			first = by_run || strcmp(groups[j], groups[i]);
		if (!first || (by_run && i > 0))
			continue;
		size_t m = 0, faster = 0, slower = 0, contended = 0;
		for (size_t j = i; j < npairs; j++)
			if (by_run || !strcmp(groups[j], groups[i])) {
				group[m++] = speedups[j];
				faster += verdicts[j] == VERDICT_FASTER;
				slower += verdicts[j] == VERDICT_SLOWER;
				contended += verdicts[j] == VERDICT_CONTENDED;
			}
		struct speedup_summary ss;
		speedup_summarize(group, m, rule->tie_band, &ss);
		size_t r = table_row(sum);
		table_text(sum, r, s_impl, by_run ? "all" : groups[i]);
		table_number(sum, r, s_n, (double)ss.n);
		table_number(sum, r, s_geo, ss.geomean);
		table_number(sum, r, s_med, ss.median);
		table_number(sum, r, s_mean, ss.mean);
		table_number(sum, r, s_min, ss.min);
		table_number(sum, r, s_max, ss.max);
		table_number(sum, r, s_w, (double)ss.wins);
		table_number(sum, r, s_l, (double)ss.losses);
		table_number(sum, r, s_t, (double)ss.ties);
		table_number(sum, r, s_f, (double)faster);
		table_number(sum, r, s_s, (double)slower);
		table_number(sum, r, s_c, (double)contended);
	}
	free(group);
	table_note(sum, "wins/losses: point estimates beyond 1 ± %.3g%%, ties within it; faster/slower/"
		      "contended: the verdicts (Benjamini-Hochberg over the cases; contended: a side "
		      "waited for a CPU, so neither is claimed)",
		   100 * rule->tie_band);
done:
	free(detectable);
	free(speedups);
	free(groups);
	free(verdicts);
	return npairs;
}
