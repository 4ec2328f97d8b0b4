/* report/cmd_compare.c: `report compare --baseline IMPL|RUN` and `report --compare IMPL` —
 * speedups against a baseline implementation (cases that differ only in impl) or a baseline run
 * (the same case key), with a bootstrap CI, a Mann-Whitney U p-value and a suite summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

static int is_ok(const struct case_row *c) { return c->status == STATUS_OK; }

/* Say why nothing could be compared: what the baseline's cases were, with their statuses. */
static void explain_nothing(const struct case_set *base, const char *impl, int64_t run_id)
{
	size_t total = 0, ok = 0;
	const char *reason = NULL;
	for (size_t i = 0; i < base->n; i++) {
		if (impl && strcmp(base->rows[i].impl, impl))
			continue;
		total++;
		if (is_ok(&base->rows[i]))
			ok++;
		else if (!reason)
			reason = base->rows[i].reason;
	}
	if (impl)
		fprintf(stderr,
			"report: nothing to compare: run %lld has %zu '%s' case%s (%zu ok) and no ok case of "
			"another impl that differs from one only in impl%s%s\n",
			(long long)run_id, total, impl, total == 1 ? "" : "s", ok, reason ? "; " : "",
			reason ? reason : "");
	else
		fprintf(stderr, "report: nothing to compare: the two runs share no ok case key\n");
}

int compare_match(const struct case_set *base, const struct case_set *cand, const char *impl,
		  enum series_pick pick, double alpha, double threshold, struct case_pair **pairs,
		  size_t *n)
{
	struct case_index index = {0};
	*pairs = NULL;
	*n = 0;
	if (case_index_build(base, impl != NULL, &index))
		return BD_ENOMEM;
	struct case_pair *out = calloc(cand->n ? cand->n : 1, sizeof(*out));
	if (!out) {
		case_index_free(&index);
		return BD_ENOMEM;
	}
	size_t m = 0;
	for (size_t i = 0; i < cand->n; i++) {
		const struct case_row *c = &cand->rows[i];
		if (impl && !strcmp(c->impl, impl))
			continue;
		char *stripped = impl ? case_key_without_impl(c->case_key) : NULL;
		long j = case_index_find(&index, impl ? stripped : c->case_key, impl);
		free(stripped);
		if (j >= 0 && is_ok(c) && is_ok(&base->rows[j]))
			out[m++] = (struct case_pair){.base = (size_t)j, .cand = i};
	}
	case_index_free(&index);
	compare_pairs(base, cand, out, m, pick, alpha, threshold);
	*pairs = out;
	*n = m;
	return 0;
}

size_t compare_tables(const struct case_set *cand, const struct case_pair *pairs, size_t n,
		      const char *title, int by_run, double alpha, double threshold_pct,
		      double tie_band_pct, struct table *t, struct table *sum)
{
	table_init(t, title);
	table_init(sum, "summary");
	size_t c_case = table_column(t, "case", "", 0), c_impl = table_column(t, "impl", "", 0),
	       c_base = table_column(t, "baseline", "ms", 3),
	       c_cand = table_column(t, "candidate", "ms", 3),
	       c_sp = table_column(t, "speedup", "x", 3), c_lo = table_column(t, "ci lo", "x", 3),
	       c_hi = table_column(t, "ci hi", "x", 3), c_p = table_column(t, "p", "", 4),
	       c_v = table_column(t, "verdict", "", 0);
	double *speedups = calloc(n ? n : 1, sizeof(*speedups));
	const char **groups = calloc(n ? n : 1, sizeof(*groups));
	if (!speedups || !groups)
		abort();
	size_t npairs = 0;
	for (size_t k = 0; k < n; k++) {
		if (!pairs[k].ok)
			continue;
		const struct case_row *c = &cand->rows[pairs[k].cand];
		const struct pair_result *pr = &pairs[k].result;
		size_t r = table_row(t);
		table_text(t, r, c_case, c->name);
		table_text(t, r, c_impl, c->impl);
		table_number(t, r, c_base, pr->base.median / 1e6);
		table_number(t, r, c_cand, pr->cand.median / 1e6);
		table_number(t, r, c_sp, pr->speedup.ratio);
		table_number(t, r, c_lo, pr->speedup.lo);
		table_number(t, r, c_hi, pr->speedup.hi);
		table_number(t, r, c_p, pr->mw.p);
		table_text(t, r, c_v, verdict_names[pr->verdict]);
		speedups[npairs] = pr->speedup.ratio;
		groups[npairs++] = c->impl;
	}
	if (npairs == 0)
		goto done;
	table_note(t, "speedup = baseline median / candidate median (> 1: candidate faster); CI: "
		      "95%% bootstrap; p: Mann-Whitney U; verdict at %.3g%% threshold, alpha %.3g",
		   threshold_pct, alpha);

	/* Summary per candidate impl (one row per impl; by run: one row). */
	size_t s_impl = table_column(sum, "impl", "", 0), s_n = table_column(sum, "pairs", "", 0),
	       s_geo = table_column(sum, "geomean", "x", 3), s_med = table_column(sum, "median", "x", 3),
	       s_mean = table_column(sum, "mean", "x", 3), s_min = table_column(sum, "min", "x", 3),
	       s_max = table_column(sum, "max", "x", 3), s_w = table_column(sum, "wins", "", 0),
	       s_l = table_column(sum, "losses", "", 0), s_t = table_column(sum, "ties", "", 0);
	double *group = calloc(npairs, sizeof(*group));
	if (!group)
		abort();
	for (size_t i = 0; i < npairs; i++) {
		int first = 1;
		for (size_t j = 0; j < i && first; j++)
			first = by_run || strcmp(groups[j], groups[i]);
		if (!first || (by_run && i > 0))
			continue;
		size_t m = 0;
		for (size_t j = i; j < npairs; j++)
			if (by_run || !strcmp(groups[j], groups[i]))
				group[m++] = speedups[j];
		struct speedup_summary ss;
		speedup_summarize(group, m, tie_band_pct / 100, &ss);
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
	}
	free(group);
	table_note(sum, "wins/losses: speedup beyond 1 ± %.3g%%; ties within it", tie_band_pct);
done:
	free(speedups);
	free(groups);
	return npairs;
}

int cmd_compare(int argc, char **argv)
{
	const char *db_path = BENCHDB_DEFAULT_DB, *run_sel = "latest", *baseline = NULL;
	const char *format = "md", *suite = NULL, *phase = "total";
	double alpha = 0.01, threshold = 5.0, tie_band = 2.0;
	struct opt_list where = {0};
	const struct opt_spec specs[] = {
		{"baseline", 'b', OPT_STRING, "IMPL|RUN",
		 "baseline implementation (same run) or baseline run (same case keys)", &baseline},
		{"db", 0, OPT_STRING, "PATH", "database to read (default bench.db)", &db_path},
		{"run", 'r', OPT_STRING, "SEL", "candidate run (default latest)", &run_sel},
		{"suite", 0, OPT_STRING, "NAME", "only cases of this suite", &suite},
		{"where", 'w', OPT_LIST, "KEY=VALUE", "only cases with this parameter value (repeatable)",
		 &where},
		{"phase", 0, OPT_STRING, "PHASE", "fwd, bwd, opt or total (default: per-iteration total)",
		 &phase},
		{"alpha", 0, OPT_DOUBLE, "P", "significance level of the rank test (default 0.01)", &alpha},
		{"threshold", 0, OPT_DOUBLE, "PCT", "change that counts as faster/slower (default 5)",
		 &threshold},
		{"tie-band", 0, OPT_DOUBLE, "PCT", "speedups within this of 1 are ties (default 2)",
		 &tie_band},
		{"format", 'f', OPT_STRING, "FMT", "md (default), csv, json or tex", &format},
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "compare", "--baseline IMPL|RUN [options]",
		"Speedup of every case against a baseline: baseline median / candidate median (> 1 means\n"
		"the candidate is faster), a 95% bootstrap confidence interval, the Mann-Whitney U\n"
		"p-value and a verdict; then geometric-mean, median and mean speedup with wins, losses\n"
		"and ties. With an impl as baseline, cases of one run that differ only in impl are\n"
		"paired; with a run, cases with the same case key in both runs. `report --compare IMPL`\n"
		"is short for `report compare --baseline IMPL`."};
	struct db *db = NULL;
	struct case_set cand = {0}, base_set = {0};
	struct case_pair *pairs = NULL;
	const struct case_set *base = &cand;
	struct strbuf out = STRBUF_INIT;
	struct bd_error err;
	struct table t = {0}, sum = {0};
	size_t npairs = 0;
	int64_t run_id = 0, base_run = 0;
	int npos, fmt, pick, by_run = 0;
	int status = opt_parse_command(specs, &usage, argc, argv, 0, 0, &npos);
	if (status >= 0)
		return status;
	if (!baseline) {
		fprintf(stderr, "report compare: --baseline IMPL|RUN is required\n");
		return EXIT_USAGE;
	}
	if ((fmt = report_format_arg(format)) < 0 || (pick = series_pick_arg(phase)) < 0)
		return EXIT_USAGE;
	if ((status = report_open(db_path, run_sel, &db, &run_id)) >= 0)
		goto done;
	status = EXIT_OK;
	struct case_filter filter = {.suite = suite, .where = where.items, .nwhere = where.n};
	if (case_set_load(db, run_id, &filter, &cand, &err)) {
		bd_error_print(REPORT_PROG, &err);
		status = err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto done;
	}
	/* An impl that some case of the run has is an impl baseline; otherwise a run selector. */
	int impl_known = 0;
	for (size_t i = 0; i < cand.n && !impl_known; i++)
		impl_known = !strcmp(cand.rows[i].impl, baseline);
	if (!impl_known) {
		struct bd_error rerr;
		if (db_run_resolve(db, baseline, &base_run, &rerr)) {
			fprintf(stderr,
				"report: baseline '%s' is neither an impl of run %lld's cases nor a run (%s)\n",
				baseline, (long long)run_id, rerr.msg);
			status = EXIT_USAGE;
			goto done;
		}
		if (case_set_load(db, base_run, &filter, &base_set, &err)) {
			bd_error_print(REPORT_PROG, &err);
			status = EXIT_FAIL;
			goto done;
		}
		base = &base_set;
		by_run = 1;
	}

	if (compare_match(base, &cand, by_run ? NULL : baseline, (enum series_pick)pick, alpha,
			  threshold / 100, &pairs, &npairs)) {
		fprintf(stderr, "report: out of memory\n");
		status = EXIT_FAIL;
		goto done;
	}
	char title[256];
	if (by_run)
		snprintf(title, sizeof(title), "run %lld vs baseline run %lld (%s)", (long long)run_id,
			 (long long)base_run, series_pick_names[pick]);
	else
		snprintf(title, sizeof(title), "run %lld: speedup vs %s (%s)", (long long)run_id, baseline,
			 series_pick_names[pick]);
	if (compare_tables(&cand, pairs, npairs, title, by_run, alpha, threshold, tie_band, &t,
			   &sum) == 0) {
		explain_nothing(base, by_run ? NULL : baseline, run_id);
		status = EXIT_FAIL;
		goto done;
	}
	render_begin((enum report_format)fmt, &out);
	render_table(&t, (enum report_format)fmt, &out);
	render_table(&sum, (enum report_format)fmt, &out);
	render_end((enum report_format)fmt, &out);
	fputs(sb_str(&out), stdout);
done:
	free(pairs);
	table_free(&t);
	table_free(&sum);
	sb_free(&out);
	case_set_free(&cand);
	case_set_free(&base_set);
	db_close(db);
	return status;
}
