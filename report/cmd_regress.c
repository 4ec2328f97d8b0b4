/* report/cmd_regress.c: `report regress --baseline SEL --candidate SEL` — per case verdicts
 * (faster / slower / same / unsure) between two runs, for CI to gate on. It never passes what it
 * did not compare: exit 0 only when every ok baseline case was compared and none is slower; 1 on a
 * significant slowdown, a case that was ok and now failed or did not run, a baseline case missing
 * from the candidate, or a candidate run that is not complete; 2 when it cannot tell (nothing
 * comparable, too little data) and on usage errors. Every reason is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

/* Exit status when a case regressed, and when the data cannot tell. */
#define EXIT_REGRESSION 1
#define EXIT_CANNOT_TELL 2

/* The reasons behind a non-zero exit: each one line, printed in the notes and on stderr. */
struct findings {
	struct strbuf fail;     /* exit 1 */
	struct strbuf unsure;   /* exit 2 when nothing failed */
};

/* Append "WHAT (count): name, name, ... and N more" when count > 0; names[0..count-1]. */
static void finding_add(struct strbuf *sb, const char *what, const char *const *names,
			size_t count)
{
	if (count == 0)
		return;
	sb_addf(sb, "%s%s (%zu): ", sb_str(sb)[0] ? "\n" : "", what, count);
	for (size_t i = 0; i < count && i < 5; i++)
		sb_addf(sb, "%s'%s'", i ? ", " : "", names[i]);
	if (count > 5)
		sb_addf(sb, " and %zu more", count - 5);
}

/* Print each line of sb as "report regress: PREFIX: line" to stderr and as a note of t. */
static void findings_print(const struct strbuf *sb, const char *prefix, struct table *t)
{
	const char *s = sb_str(sb);
	while (*s) {
		const char *end = strchr(s, '\n');
		int len = end ? (int)(end - s) : (int)strlen(s);
		fprintf(stderr, "report regress: %s: %.*s\n", prefix, len, s);
		table_note(t, "%s: %.*s", prefix, len, s);
		s += len + (end != NULL);
	}
}

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
		"Compare every case of the baseline with the candidate: slower when the change lies\n"
		"beyond the threshold with significance, across all cases together: the one-sided\n"
		"rank test that candidate / (1 + threshold) is still slower than the baseline, its\n"
		"p adjusted over the cases (Benjamini-Hochberg; column 'p slower') below alpha;\n"
		"faster likewise; same when the 95% CI lies within the threshold; unsure otherwise.\n"
		"Exit status, each reason printed:\n"
		"  0  no regression: every ok baseline case was compared and none is slower;\n"
		"  1  regression: a case is slower; a case ok in the baseline is error, oom,\n"
		"     unsupported or skipped in the candidate, or missing from it; or the candidate\n"
		"     run is not complete (running, interrupted, failed);\n"
		"  2  cannot tell: the runs share no case key, a case could not be compared, or a\n"
		"     case has insufficient data: fewer than " REPORT_STR(REPORT_MIN_ITERS)
		" measured iterations in either run, or\n"
		"     too few for the exact rank test to reach alpha (5 vs 5 reach 1/252); and\n"
		"     usage errors (a bad option, a missing database or run, runs from different\n"
		"     systems without --any-system)."};
	struct db *db = NULL;
	struct case_set base = {0}, cand = {0};
	struct case_index index = {0};
	struct case_pair *pairs = NULL;
	struct run_row rb = {0}, rc_row = {0};
	struct table t = {0};
	struct findings found = {STRBUF_INIT, STRBUF_INIT};
	const char **missing = NULL, **broken = NULL, **not_run = NULL, **uncompared = NULL,
		    **insufficient = NULL;
	size_t nmissing = 0, nbroken = 0, nnot_run = 0, nuncompared = 0, ninsufficient = 0, shared = 0;
	struct bd_error err;
	int64_t base_id = 0, cand_id = 0;
	size_t counts[VERDICT_COUNT] = {0};
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
	 * not read it as a regression (1). So is a database that cannot be read: it cannot tell. */
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
		status = report_error(&err, EXIT_CANNOT_TELL);
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
		status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_CANNOT_TELL);
		goto done;
	}
	if (case_index_build(&cand, 0, &index)) {
		fprintf(stderr, "report: out of memory\n");
		status = EXIT_CANNOT_TELL;
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
	       c_q = table_column(&t, "p slower", "", 4),
	       c_v = table_column(&t, "verdict", "", 0);
	size_t nb = base.n ? base.n : 1;
	pairs = calloc(nb, sizeof(*pairs));
	missing = calloc(nb, sizeof(*missing));
	broken = calloc(nb, sizeof(*broken));
	not_run = calloc(nb, sizeof(*not_run));
	uncompared = calloc(nb, sizeof(*uncompared));
	insufficient = calloc(nb, sizeof(*insufficient));
	if (!pairs || !missing || !broken || !not_run || !uncompared || !insufficient)
		abort();
	/* Walk the baseline: every ok case of it must be compared, or be a reason. */
	size_t nmatched = 0;
	for (size_t j = 0; j < base.n; j++) {
		const struct case_row *b = &base.rows[j];
		long i = case_index_find(&index, b->case_key, NULL);
		if (i >= 0)
			shared++;
		if (b->status != STATUS_OK)
			continue;
		if (i < 0)
			missing[nmissing++] = b->name;
		else if (cand.rows[i].status == STATUS_ERROR || cand.rows[i].status == STATUS_OOM)
			broken[nbroken++] = cand.rows[i].name;
		else if (cand.rows[i].status != STATUS_OK)
			not_run[nnot_run++] = cand.rows[i].name;
		else
			pairs[nmatched++] = (struct case_pair){.base = j, .cand = (size_t)i};
	}
	compare_pairs(&base, &cand, pairs, nmatched, (enum series_pick)pick, &o.rule);
	for (size_t k = 0; k < nmatched; k++) {
		const struct pair_result *pr = &pairs[k].result;
		if (!pairs[k].ok) {
			uncompared[nuncompared++] = cand.rows[pairs[k].cand].name;
			continue;
		}
		counts[pr->verdict]++;
		if (pr->verdict == VERDICT_INSUFFICIENT)
			insufficient[ninsufficient++] = cand.rows[pairs[k].cand].name;
		size_t r = table_row(&t);
		table_text(&t, r, c_case, cand.rows[pairs[k].cand].name);
		table_number(&t, r, c_base, pr->base.median / 1e6);
		table_number(&t, r, c_cand, pr->cand.median / 1e6);
		/* change in time: candidate / baseline - 1 = 1 / speedup - 1 */
		table_number(&t, r, c_chg, 100 * (1 / pr->speedup.ratio - 1));
		table_number(&t, r, c_lo, 100 * (1 / pr->speedup.hi - 1));
		table_number(&t, r, c_hi, 100 * (1 / pr->speedup.lo - 1));
		table_number(&t, r, c_p, pr->p);
		table_number(&t, r, c_q, pr->q_slower);
		table_text(&t, r, c_v, verdict_names[pr->verdict]);
	}

	/* The reasons, worst first: what fails the gate, then what keeps it from passing. */
	if (!rc_row.status || strcmp(rc_row.status, "complete"))
		sb_addf(&found.fail, "candidate run %lld is %s, not complete (%lld of its cases stored)",
			(long long)cand_id, rc_row.status ? rc_row.status : "of unknown status",
			(long long)cand.n);
	if (counts[VERDICT_SLOWER]) {
		const char **slower = calloc(counts[VERDICT_SLOWER], sizeof(*slower));
		size_t ns = 0;
		if (!slower)
			abort();
		for (size_t k = 0; k < nmatched; k++)
			if (pairs[k].ok && pairs[k].result.verdict == VERDICT_SLOWER)
				slower[ns++] = cand.rows[pairs[k].cand].name;
		finding_add(&found.fail, "slower", slower, ns);
		free(slower);
	}
	finding_add(&found.fail, "ok in the baseline, error or oom in the candidate", broken,
		    nbroken);
	finding_add(&found.fail, "ok in the baseline, unsupported or skipped in the candidate", not_run,
		    nnot_run);
	if (shared == 0 && base.n > 0)
		sb_addf(&found.unsure, "nothing comparable: the runs share no case key (%zu baseline "
				       "cases, %zu candidate cases)",
			base.n, cand.n);
	else
		finding_add(&found.fail, "ok in the baseline, missing from the candidate", missing,
			    nmissing);
	if (base.n == 0)
		sb_addf(&found.unsure, "nothing comparable: baseline run %lld has no case%s",
			(long long)base_id, filter.nwhere || filter.suite ? " that passes the filter" : "");
	else if (t.nrows == 0 && !sb_str(&found.fail)[0] && !sb_str(&found.unsure)[0])
		sb_addf(&found.unsure, "nothing comparable: no ok baseline case is ok in the candidate");
	finding_add(&found.unsure, "not compared (no measured samples of the phase)",
		    uncompared, nuncompared);
	char what[128];
	snprintf(what, sizeof(what), "insufficient data (fewer than %d iterations, or p cannot reach %.3g)",
		 REPORT_MIN_ITERS, o.rule.alpha);
	finding_add(&found.unsure, what, insufficient, ninsufficient);

	const char *verdict = sb_str(&found.fail)[0]     ? "REGRESSION"
			      : sb_str(&found.unsure)[0] ? "CANNOT TELL"
							 : "no regression";
	table_note(&t, "%zu cases compared: %zu slower, %zu faster, %zu same, %zu unsure%s; %zu not "
		       "compared (missing from one run or not ok)",
		   t.nrows, counts[VERDICT_SLOWER], counts[VERDICT_FASTER], counts[VERDICT_SAME],
		   counts[VERDICT_UNSURE], ninsufficient ? ", some insufficient" : "",
		   base.n + cand.n - 2 * t.nrows);
	findings_print(&found.fail, "regression", &t);
	if (!sb_str(&found.fail)[0])
		findings_print(&found.unsure, "cannot tell", &t);
	table_note(&t, "change: candidate median / baseline median - 1 (95%% bootstrap CI); p: "
		       "Mann-Whitney U, no change; p slower: one-sided, slower beyond the threshold, "
		       "Benjamini-Hochberg adjusted over the cases; threshold %.3g%%, alpha %.3g; "
		       "verdict: %s",
		   100 * o.rule.threshold, o.rule.alpha, verdict);
	report_print((enum report_format)fmt, &t, 1);
	status = sb_str(&found.fail)[0]     ? EXIT_REGRESSION
		 : sb_str(&found.unsure)[0] ? EXIT_CANNOT_TELL
					    : EXIT_OK;
done:
	table_free(&t);
	sb_free(&found.fail);
	sb_free(&found.unsure);
	free(missing);
	free(broken);
	free(not_run);
	free(uncompared);
	free(insufficient);
	db_run_row_clear(&rb);
	db_run_row_clear(&rc_row);
	free(pairs);
	case_index_free(&index);
	case_set_free(&base);
	case_set_free(&cand);
	db_close(db);
	return status;
}
