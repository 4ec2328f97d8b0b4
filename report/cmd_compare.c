/* report/cmd_compare.c: `report compare --baseline IMPL|RUN|KEY=VALUE` and `report --compare IMPL` —
 * speedups against a baseline implementation (cases that differ only in impl) or a baseline run
 * (the same case key), with a bootstrap CI, a Mann-Whitney U p-value and a suite summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "opt.h"
#include "report.h"
#include "shape.h"
#include "xalloc.h"

static int is_ok(const struct case_row *c) { return c->status == STATUS_OK; }

/* Whether some --where of o is about key. */
static int where_names(const struct report_options *o, const char *key)
{
	size_t len = strlen(key);
	for (int i = 0; i < o->where.n; i++)
		if (!strncmp(o->where.items[i], key, len) && o->where.items[i][len] == '=')
			return 1;
	return 0;
}

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


/* Against a run: say what the table leaves out, in its notes and on stderr — a run that is not
 * complete, and the ok cases of the baseline run that are not compared (missing from the
 * candidate run or not ok there), so that a truncated candidate is not read as the whole — and
 * (notes) when the two runs are of different systems. */
static void compare_runs_note_left_out(const struct run_group *base, const struct run_group *cand,
				       const struct case_pair *pairs, size_t npairs, struct table *t)
{
	const struct run_group *side[2] = {base, cand};
	for (int s = 0; s < 2; s++) {
		const char *st = side[s]->rows[0].status;
		if (st && !strcmp(st, "complete"))
			continue;
		fprintf(stderr, "report compare: %s run %lld is %s, not complete (%zu of its cases "
				"stored)\n", s ? "candidate" : "baseline", (long long)side[s]->ids[0],
			st ? st : "of unknown status", side[s]->sets[0].n);
		table_note(t, "%s run %lld is %s, not complete (%zu of its cases stored)",
			   s ? "candidate" : "baseline", (long long)side[s]->ids[0],
			   st ? st : "of unknown status", side[s]->sets[0].n);
	}
	if (base->rows[0].system_id != cand->rows[0].system_id) {
		const char *hb = base->rows[0].hostname, *hc = cand->rows[0].hostname;
		table_note(t, "runs %lld and %lld are of different systems (%s, %s): a change includes "
			      "the difference between the machines, and the noise between runs is each "
			      "system's", (long long)base->ids[0], (long long)cand->ids[0], hb ? hb : "?",
			   hc ? hc : "?");
	}
	const struct case_set *bs = &base->sets[0];
	unsigned char *paired = xcalloc(bs->n + 1, 1);
	unsigned char *first = case_rows_first_of_key(bs->rows, bs->n);
	for (size_t i = 0; i < npairs; i++)
		paired[pairs[i].base] = 1;
	size_t left = 0, ok = 0;
	for (size_t i = 0; i < bs->n; i++) {
		if (!first[i] || !is_ok(&bs->rows[i]))
			continue;
		ok++;
		left += !paired[i];
	}
	if (left) {
		fprintf(stderr, "report compare: %zu of the %zu ok cases of baseline run %lld not compared "
				"(missing from run %lld or not ok there)\n", left, ok,
			(long long)base->ids[0], (long long)cand->ids[0]);
		table_note(t, "%zu of the %zu ok cases of baseline run %lld not compared (missing from run "
			      "%lld or not ok there)", left, ok, (long long)base->ids[0],
			   (long long)cand->ids[0]);
	}
	free(first);
	free(paired);
}

int cmd_compare(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *baseline = NULL, *prices_path = NULL;
	const char *price = NULL;   /* --price: parsed by prices_load_options */
	const struct opt_spec specs[] = {
		{"baseline", 'b', OPT_STRING, "BASE",
		 "an impl (same run), a run (same case keys) or KEY=VALUE (same run)", &baseline},
		REPORT_OPT_DB(&o),
		REPORT_OPT_RUN(&o, "candidate run (default latest)"),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		{"phase", 0, OPT_STRING, "PHASE", "fwd, bwd, opt or total (default: per-iteration total)",
		 &o.phase},
		REPORT_OPT_ALPHA(&o),
		REPORT_OPT_THRESHOLD(&o, "change that counts as faster/slower"),
		REPORT_OPT_TIE_BAND(&o),
		{"run-noise", 0, OPT_PERCENT, "PCT",
		 "a baseline run: run-to-run spread assumed where nothing measures it (default "
		 REPORT_STR(NOISE_RUN_NOISE_PCT) ")", &o.rule.assumed.run_noise},
		REPORT_OPT_PRICE(&price),
		REPORT_OPT_PRICES(&prices_path),
		REPORT_OPT_FORMAT(&o, 0),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "compare", "--baseline IMPL|RUN|KEY=VALUE [options]",
		"Speedup of every case against a baseline: baseline median / candidate median (> 1 means\n"
		"the candidate is faster), a 95% bootstrap confidence interval, the Mann-Whitney U\n"
		"p-value and a verdict; then geometric-mean, median and mean speedup with wins, losses\n"
		"and ties. With an impl as baseline, cases of one run that differ only in impl are\n"
		"paired (a peer's case with the baseline's that lacks the peer's own parameters); with a\n"
		"run, cases with the same case key in both runs; with KEY=VALUE (any parameter, a peer's\n"
		"too), cases of one run that differ only in KEY, those with VALUE the baseline.\n"
		"`report --compare IMPL` is short for `report compare --baseline IMPL`.\n"
		"Within one run (an impl, KEY=VALUE): the iterations are the samples; faster/slower when\n"
		"the one-sided rank test says the change lies beyond the threshold, its p adjusted over\n"
		"all the cases (Benjamini-Hochberg; column 'p adj') below alpha. Against a run: the run\n"
		"is the unit, as in `report regress`: each run's median one sample, the noise between\n"
		"runs from the two runs and their system's other runs (assumed, and said, where nothing\n"
		"measures it: --run-noise); faster/slower when significant and beyond the threshold.\n"
		"Both: same when the 95% CI lies within the threshold; unsure otherwise; insufficient\n"
		"with fewer than " REPORT_STR(REPORT_MIN_ITERS)
		" measured iterations on a side (or, within a run, too few for\n"
		"the exact test to reach alpha); contended when either side waited for a CPU\n"
		"(cases.cpu_wait, column 'cpu wait') " REPORT_STR(REPORT_CPU_WAIT_LEVEL_PCT)
		"% of its measured time or more, or the slower side " REPORT_STR(REPORT_CPU_WAIT_GAP_PCT)
		"\n"
		"points more than the other: never a plain faster or slower. Column 'detect': the\n"
		"smallest change detected as slower 90% of the time. n: iterations, baseline/candidate.\n"
		"--where chooses the candidates; an impl baseline's cases come from the whole run.\n"
		"csv and json add each case's parameters and both sides' peak memory.\n"
		"Within one run, column 'mark' (where some pair has one) says a side is unstable: its\n"
		"median's relative standard error within its run (cases.rse) is above "
		REPORT_STR(REPORT_UNSTABLE_RSE_PCT) "%."};
	struct db *db = NULL;
	struct case_set cand = {0}, base_set = {0};
	struct run_group base_group = {0}, cand_group = {0};
	struct strbuf noise_note = STRBUF_INIT;
	struct case_pair *pairs = NULL;
	const struct case_set *base = &cand;
	struct bd_error err;
	struct table t[3] = {0};   /* the pairs, the summary, the cost (with a price) */
	struct prices *prices = NULL;
	size_t npairs = 0;
	int64_t run_id = 0, base_run = 0;
	int npos, fmt, pick, by_run = 0;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if (!baseline) {
		fprintf(stderr, "report compare: --baseline IMPL|RUN|KEY=VALUE is required\n");
		return EXIT_USAGE;
	}
	if ((status = verdict_rule_check(&o.rule, "compare")) >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if ((status = prices_load_options(price, prices_path, "compare", &prices)) >= 0)
		return status;
	struct case_filter filter = report_filter(&o);
	if ((status = report_open_set(o.db_path, o.run_sel, &filter, &db, &run_id, &cand)) >= 0)
		goto done;
	status = EXIT_OK;
	/* KEY=VALUE is a parameter baseline; an impl that some case of the run has is an impl
	 * baseline; otherwise a run selector. The filters choose the candidates, never the baseline:
	 * an impl baseline's cases are those of the whole run (--suite aside), so that `--where
	 * impl=flash` narrows what is compared with it; a parameter baseline's value is one more
	 * alternative of its key's --where. */
	const char *eq = strchr(baseline, '=');
	int impl_known = 0, by_param = eq && eq != baseline && eq[1];
	char param[64] = "";
	if (by_param)
		snprintf(param, sizeof(param), "%.*s", (int)(eq - baseline), baseline);
	if (o.where.n && !by_param) {
		struct case_filter whole = {.suite = o.suite};
		if (case_set_load(db, run_id, &whole, &base_set, &err)) {
			status = report_error(&err, EXIT_FAIL);
			goto done;
		}
		base = &base_set;
	} else if (o.where.n && by_param && where_names(&o, param)) {
		const char **where = xcalloc((size_t)o.where.n + 1, sizeof(*where));
		memcpy(where, o.where.items, (size_t)o.where.n * sizeof(*where));
		where[o.where.n] = baseline;
		struct case_filter with_base = filter;
		with_base.where = where;
		with_base.nwhere = o.where.n + 1;
		case_set_free(&cand);
		int rc = case_set_load(db, run_id, &with_base, &cand, &err);
		free(where);
		if (rc) {
			status = report_error(&err, EXIT_FAIL);
			goto done;
		}
	}
	for (size_t i = 0; i < base->n && !impl_known; i++)
		impl_known = !strcmp(base->rows[i].impl, baseline);
	if (!impl_known && !by_param) {
		case_set_free(&base_set);
		base = &cand;
		struct bd_error rerr;
		if (db_run_resolve(db, baseline, &base_run, &rerr)) {
			fprintf(stderr,
				"report: baseline '%s' is neither an impl of run %lld's cases nor a run (%s)\n",
				baseline, (long long)run_id, rerr.msg);
			status = EXIT_USAGE;
			goto done;
		}
		if (base_run == run_id) {   /* compared with itself, a run tells nothing */
			fprintf(stderr, "report: baseline '%s' is run %lld, the candidate run itself: "
					"a run is no baseline for itself (--run selects the candidate)\n",
				baseline, (long long)run_id);
			status = EXIT_USAGE;
			goto done;
		}
		char base_sel[32], cand_sel[32];
		snprintf(base_sel, sizeof(base_sel), "%lld", (long long)base_run);
		snprintf(cand_sel, sizeof(cand_sel), "%lld", (long long)run_id);
		const char *bs[] = {base_sel}, *cs[] = {cand_sel};
		const struct run_group_spec bspec = {"baseline", bs, 1, NULL, 0},
					    cspec = {"candidate", cs, 1, NULL, 0};
		if (run_group_select(db, &bspec, NULL, &base_group, &err) ||
		    run_group_select(db, &cspec, NULL, &cand_group, &err) ||
		    run_group_load(db, &base_group, &filter, &err) ||
		    run_group_load(db, &cand_group, &filter, &err) ||
		    compare_runs(db, &base_group, &cand_group, pick, &o.rule, &pairs, &npairs,
				 &noise_note, &err)) {
			status = report_error(&err, EXIT_FAIL);
			goto done;
		}
		base = &base_group.sets[0];
		by_run = 1;
	}

	if (by_param)
		compare_match_param(&cand, param, eq + 1, (enum series_pick)pick, &o.rule, &pairs,
				    &npairs);
	else if (!by_run)
		compare_match(base, &cand, baseline, (enum series_pick)pick, &o.rule, &pairs, &npairs);
	char title[256];
	if (by_run)
		snprintf(title, sizeof(title), "run %lld vs baseline run %lld (%s)", (long long)run_id,
			 (long long)base_run, series_pick_names[pick]);
	else
		snprintf(title, sizeof(title), "run %lld: speedup vs %s (%s)", (long long)run_id, baseline,
			 series_pick_names[pick]);
	if (compare_tables(by_run ? &cand_group.sets[0] : &cand, pairs, npairs, title, by_run,
			   &o.rule, &t[0], &t[1]) == 0) {
		if (by_param)
			fprintf(stderr, "report: nothing to compare: no ok case of run %lld with %s pairs "
				"with an ok case that differs from it only in %s\n", (long long)run_id,
				baseline, param);
		else
			explain_nothing(base, by_run ? NULL : baseline, run_id);
		status = EXIT_FAIL;
		goto done;
	}
	if (by_run) {
		table_note(&t[0], "%s", sb_str(&noise_note));
		compare_runs_note_left_out(&base_group, &cand_group, pairs, npairs, &t[0]);
	}
	if (format_is((enum report_format)fmt, FORMAT_DATA))
		compare_table_add_cases(&t[0], base, by_run ? &cand_group.sets[0] : &cand, pairs,
					npairs);
	if (prices && cost_table(db, &cand, prices, pick, "cost", &t[2], &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	report_print((enum report_format)fmt, t, prices ? 3 : 2);
done:
	free(pairs);
	prices_free(prices);
	for (size_t i = 0; i < 3; i++)
		table_free(&t[i]);
	case_set_free(&cand);
	case_set_free(&base_set);
	run_group_free(&base_group);
	run_group_free(&cand_group);
	sb_free(&noise_note);
	db_close(db);
	return status;
}
