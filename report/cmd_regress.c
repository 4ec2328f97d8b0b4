/* report/cmd_regress.c: `report regress --baseline SEL --candidate SEL` — per case verdicts
 * (faster / slower / same / unsure) between two runs, for CI to gate on: exit 1 when any case is
 * significantly slower beyond the threshold, 0 otherwise, 2 on usage errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

/* Exit status when a case regressed. */
#define EXIT_REGRESSION 1

int cmd_regress(int argc, char **argv)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *base_sel = NULL, *cand_sel = "latest";
	int any_system = 0;
	const struct opt_spec specs[] = {
		{"baseline", 'b', OPT_STRING, "SEL", "baseline run: id, uuid prefix, label, commit, latest",
		 &base_sel},
		{"candidate", 'c', OPT_STRING, "SEL", "candidate run (default latest)", &cand_sel},
		REPORT_OPT_DB(&o),
		REPORT_OPT_THRESHOLD(&o, "slowdown that counts as a regression"),
		REPORT_OPT_ALPHA(&o),
		{"any-system", 0, OPT_FLAG, NULL, "compare runs made on different systems", &any_system},
		REPORT_OPT_PHASE(&o),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		REPORT_OPT_FORMAT(&o),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "regress", "--baseline SEL [--candidate SEL] [options]",
		"Compare every case key the two runs share: slower or faster when the Mann-Whitney U\n"
		"test is significant (p < alpha) and the change of medians is beyond the threshold;\n"
		"same when within it; unsure when the data cannot tell. Exit status: 1 when any case is\n"
		"slower, 0 otherwise, 2 on usage errors (including runs from different systems without\n"
		"--any-system)."};
	struct db *db = NULL;
	struct case_set base = {0}, cand = {0};
	struct case_index index = {0};
	struct case_pair *pairs = NULL;
	struct run_row rb = {0}, rc_row = {0};
	struct table t = {0};
	struct bd_error err;
	int64_t base_id = 0, cand_id = 0;
	size_t counts[4] = {0}, unpaired = 0;
	int npos, fmt, pick;
	int status = opt_parse_command(specs, &usage, argc, argv, 0, 0, &npos);
	if (status >= 0)
		return status;
	if (!base_sel) {
		fprintf(stderr, "report regress: --baseline SEL is required\n");
		return EXIT_USAGE;
	}
	if ((status = verdict_rule_check(&o.rule, "regress")) >= 0)
		return status;
	if ((fmt = report_format_arg(o.format)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	/* A missing database or a selector that matches nothing is a usage error here (2): CI must
	 * not read it as a regression (1). */
	if (report_open(o.db_path, NULL, &db, NULL) >= 0) {
		status = EXIT_USAGE;
		goto done;
	}
	if (db_run_resolve(db, base_sel, &base_id, &err) ||
	    db_run_resolve(db, cand_sel, &cand_id, &err)) {
		status = report_error(&err, EXIT_USAGE);
		goto done;
	}
	status = EXIT_OK;
	if (db_run_get(db, base_id, &rb, &err) || db_run_get(db, cand_id, &rc_row, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	if (rb.system_id != rc_row.system_id && !any_system) {
		fprintf(stderr,
			"report regress: runs %lld (%s) and %lld (%s) ran on different systems; "
			"pass --any-system to compare them anyway\n",
			(long long)base_id, rb.hostname, (long long)cand_id, rc_row.hostname);
		status = EXIT_USAGE;
		goto done;
	}
	struct case_filter filter = report_filter(&o);
	if (case_set_load(db, base_id, &filter, &base, &err) ||
	    case_set_load(db, cand_id, &filter, &cand, &err)) {
		status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL);
		goto done;
	}
	if (case_index_build(&base, 0, &index)) {
		fprintf(stderr, "report: out of memory\n");
		status = EXIT_FAIL;
		goto done;
	}
	char title[160];
	snprintf(title, sizeof(title), "regressions: run %lld vs baseline run %lld (%s)",
		 (long long)cand_id, (long long)base_id, series_pick_names[pick]);
	table_init(&t, title);
	size_t c_case = table_column(&t, "case", "", 0),
	       c_base = table_column(&t, "baseline", "ms", 3),
	       c_cand = table_column(&t, "candidate", "ms", 3),
	       c_chg = table_column(&t, "change", "%", 1), c_lo = table_column(&t, "ci lo", "%", 1),
	       c_hi = table_column(&t, "ci hi", "%", 1), c_p = table_column(&t, "p", "", 4),
	       c_v = table_column(&t, "verdict", "", 0);
	pairs = calloc(cand.n ? cand.n : 1, sizeof(*pairs));
	if (!pairs)
		abort();
	size_t nmatched = 0;
	for (size_t i = 0; i < cand.n; i++) {
		const struct case_row *c = &cand.rows[i];
		long j = case_index_find(&index, c->case_key, NULL);
		if (j < 0 || c->status != STATUS_OK || base.rows[j].status != STATUS_OK)
			unpaired++;
		else
			pairs[nmatched++] = (struct case_pair){.base = (size_t)j, .cand = i};
	}
	compare_pairs(&base, &cand, pairs, nmatched, (enum series_pick)pick, &o.rule);
	for (size_t k = 0; k < nmatched; k++) {
		const struct pair_result *pr = &pairs[k].result;
		if (!pairs[k].ok) {
			unpaired++;
			continue;
		}
		counts[pr->verdict]++;
		size_t r = table_row(&t);
		table_text(&t, r, c_case, cand.rows[pairs[k].cand].name);
		table_number(&t, r, c_base, pr->base.median / 1e6);
		table_number(&t, r, c_cand, pr->cand.median / 1e6);
		/* change in time: candidate / baseline - 1 = 1 / speedup - 1 */
		table_number(&t, r, c_chg, 100 * (1 / pr->speedup.ratio - 1));
		table_number(&t, r, c_lo, 100 * (1 / pr->speedup.hi - 1));
		table_number(&t, r, c_hi, 100 * (1 / pr->speedup.lo - 1));
		table_number(&t, r, c_p, pr->mw.p);
		table_text(&t, r, c_v, verdict_names[pr->verdict]);
	}
	table_note(&t, "%zu cases compared: %zu slower, %zu faster, %zu same, %zu unsure; %zu not "
		       "compared (missing from one run or not ok)",
		   t.nrows, counts[VERDICT_SLOWER], counts[VERDICT_FASTER], counts[VERDICT_SAME],
		   counts[VERDICT_UNSURE], unpaired);
	table_note(&t, "change: candidate median / baseline median - 1 (95%% bootstrap CI); "
		       "threshold %.3g%%, alpha %.3g; verdict: %s",
		   100 * o.rule.threshold, o.rule.alpha,
		   counts[VERDICT_SLOWER] ? "REGRESSION" : "no regression");
	report_print((enum report_format)fmt, &t, 1);
	if (counts[VERDICT_SLOWER])
		status = EXIT_REGRESSION;
done:
	table_free(&t);
	db_run_row_clear(&rb);
	db_run_row_clear(&rc_row);
	free(pairs);
	case_index_free(&index);
	case_set_free(&base);
	case_set_free(&cand);
	db_close(db);
	return status;
}
