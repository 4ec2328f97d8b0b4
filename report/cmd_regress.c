/* report/cmd_regress.c: `report regress --baseline SEL --candidate SEL` — per case verdicts
 * (faster / slower / same / unsure / insufficient) between a baseline and a candidate, each one
 * run or a group of runs (every run with a label, the last K), for CI to gate on. It never passes
 * what it did not compare: exit 0 only when every ok baseline case was compared and none is
 * slower; 1 on a significant slowdown, a case that was ok and now failed or did not run, a
 * baseline case missing from the candidate, or a candidate run that is not complete; 2 when it
 * cannot tell (nothing comparable, too little data) and on usage errors. Every reason is printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"
#include "xalloc.h"

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

/* The runs of one side where a case key is: per run, the index of the case, or -1. */
static void find_case(const struct run_group *g, const char *key, long *at)
{
	for (size_t r = 0; r < g->n; r++)
		at[r] = case_index_find(&g->index[r], key, NULL);
}

/* n as a person reads it: "30" for one run, "30x4" for 4 runs of 30, "118/4" for 4 runs of
 * unequal length (118 iterations in all). */
static void n_text(char *out, size_t size, size_t total, size_t runs, int equal)
{
	if (runs <= 1)
		snprintf(out, size, "%zu", total);
	else if (equal)
		snprintf(out, size, "%zux%zu", total / runs, runs);
	else
		snprintf(out, size, "%zu/%zu", total, runs);
}

/* One compared case: where it is in the candidate (first run) and its result. */
/* The mean of cases.cpu_wait over the side's runs that know it (at[r] >= 0: the case's row in
 * run r); -1 when none does. */
static double side_wait(const struct run_group *g, const long *at)
{
	double sum = 0;
	size_t n = 0;
	for (size_t r = 0; r < g->n; r++)
		if (at[r] >= 0 && g->sets[r].rows[at[r]].cpu_wait >= 0) {
			sum += g->sets[r].rows[at[r]].cpu_wait;
			n++;
		}
	return n ? sum / (double)n : -1;
}

struct regress_case {
	const char *name;
	struct pair_result result;
	int equal_b, equal_c;   /* every run of the side has the same n */
};

int cmd_regress(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	o.rule.run_noise = REPORT_RUN_NOISE_PCT / 100.0;
	struct opt_list base_sels = {0}, cand_sels = {0};
	const char *base_label = NULL, *cand_label = NULL;
	long base_last = 0, cand_last = 0;
	int any_system = 0;
	const struct opt_spec specs[] = {
		{"baseline", 'b', OPT_LIST, "SEL",
		 "baseline run: id, uuid prefix, label, commit (repeatable)", &base_sels},
		{"baseline-label", 0, OPT_STRING, "LABEL", "every run with this label is a baseline run",
		 &base_label},
		{"baseline-last", 0, OPT_INT, "K",
		 "only the last K baseline runs (alone: the K before the candidate)", &base_last},
		{"candidate", 'c', OPT_LIST, "SEL", "candidate run (default latest; repeatable)",
		 &cand_sels},
		{"candidate-label", 0, OPT_STRING, "LABEL", "every run with this label is a candidate run",
		 &cand_label},
		{"candidate-last", 0, OPT_INT, "K", "only the last K candidate runs", &cand_last},
		REPORT_OPT_DB(&o),
		REPORT_OPT_THRESHOLD(&o, "slowdown that counts as a regression"),
		REPORT_OPT_ALPHA(&o),
		{"run-noise", 0, OPT_PERCENT, "PCT",
		 "one run a side: run-to-run spread assumed (default "
		 REPORT_STR(REPORT_RUN_NOISE_PCT) "; 0: none)",
		 &o.rule.run_noise},
		{"cpu-wait-gap", 0, OPT_PERCENT, "PCT",
		 "a slower side that waited for a CPU PCT points more of its time: contended "
		 "(default " REPORT_STR(REPORT_CPU_WAIT_GAP_PCT) "; 100: off)",
		 &o.rule.cpu_wait_gap},
		{"any-system", 0, OPT_FLAG, NULL, "compare runs made on different systems", &any_system},
		REPORT_OPT_PHASE(&o),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		REPORT_OPT_FORMAT(&o, 0),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "regress", "--baseline SEL | --baseline-label LABEL [options]",
		"Compare every case of the baseline with the candidate: slower when the change lies\n"
		"beyond the threshold with significance, across all cases together (p adjusted over\n"
		"the cases, Benjamini-Hochberg; column 'p slower') below alpha; faster likewise; same\n"
		"when the 95% CI lies within the threshold; unsure otherwise.\n"
		"One run a side: the iterations are the samples (one-sided Mann-Whitney U of candidate\n"
		"/ (1 + threshold) against the baseline); run-to-run noise is NOT measured: the output\n"
		"says so, and the verdict assumes a spread of --run-noise between runs (the change\n"
		"must also clear a normal test with that variance added).\n"
		"Three runs or more in all (e.g. --baseline-label main --baseline-last 5, or the runs\n"
		"of one `runner run --repeat N` under one label): each run's median is a sample, and\n"
		"the t test on their logs, variance pooled over the cases, includes the noise between\n"
		"runs (docs/performance.md, Measurement validity).\n"
		"Exit status, each reason printed:\n"
		"  0  no regression: every ok baseline case was compared and none is slower;\n"
		"  1  regression: a case is slower; a case ok in the baseline is error, oom,\n"
		"     unsupported or skipped in a candidate run, or missing from it; or a candidate\n"
		"     run is not complete (running, interrupted, failed);\n"
		"  2  cannot tell: the runs share no case key, a case could not be compared, or a\n"
		"     case has insufficient data: fewer than " REPORT_STR(REPORT_MIN_ITERS)
		" measured iterations in a run, or\n"
		"     too few for the exact rank test to reach alpha (5 vs 5 reach 1/252); a\n"
		"     case is contended: slower, but its candidate runs waited for a CPU (another\n"
		"     process had it) --cpu-wait-gap points more of their measured time than the\n"
		"     baseline's (cases.cpu_wait), so the machine may be what changed; and\n"
		"     usage errors (a bad option, a missing database or run, runs from different\n"
		"     systems without --any-system)."};
	struct db *db = NULL;
	struct run_group base = {0}, cand = {0};
	struct regress_case *cases = NULL;
	struct pair_result **family = NULL;
	struct table t = {0};
	struct findings found = {STRBUF_INIT, STRBUF_INIT};
	struct strbuf who_b = STRBUF_INIT, who_c = STRBUF_INIT;
	const char **missing = NULL, **broken = NULL, **not_run = NULL, **uncompared = NULL,
		   **insufficient = NULL, **slower = NULL, **contended = NULL;
	size_t nmissing = 0, nbroken = 0, nnot_run = 0, nuncompared = 0, ninsufficient = 0,
	       nslower = 0, ncontended = 0, shared = 0, ncases = 0, nkeys_distinct = 0;
	struct bd_error err;
	size_t counts[VERDICT_COUNT] = {0};
	int npos, fmt, pick;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if (base_sels.n == 0 && !base_label && base_last <= 0) {
		fprintf(stderr, "report regress: --baseline SEL (or --baseline-label LABEL, "
				"--baseline-last K) is required\n");
		return EXIT_USAGE;
	}
	if (base_last < 0 || cand_last < 0) {
		fprintf(stderr, "report regress: --baseline-last and --candidate-last take K >= 1\n");
		return EXIT_USAGE;
	}
	if ((status = verdict_rule_check(&o.rule, "regress")) >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if (cand_sels.n == 0 && !cand_label)
		cand_sels.items[cand_sels.n++] = "latest";
	/* A missing database or a selector that matches nothing is a usage error here (2): CI must
	 * not read it as a regression (1). So is a database that cannot be read: it cannot tell. */
	if (report_open(o.db_path, NULL, &db, NULL) >= 0) {
		status = EXIT_USAGE;
		goto done;
	}
	const struct run_group_spec cand_spec = {"candidate", cand_sels.items, cand_sels.n,
						 cand_label, cand_last};
	const struct run_group_spec base_spec = {"baseline", base_sels.items, base_sels.n,
						 base_label, base_last};
	if (run_group_select(db, &cand_spec, NULL, &cand, &err) ||
	    run_group_select(db, &base_spec, &cand, &base, &err)) {
		status = report_error(&err, EXIT_USAGE);
		goto done;
	}
	status = EXIT_OK;
	for (size_t i = 0; i < base.n + cand.n && !any_system; i++) {
		const struct run_row *r = i < base.n ? &base.rows[i] : &cand.rows[i - base.n];
		if (r->system_id == base.rows[0].system_id)
			continue;
		fprintf(stderr,
			"report regress: runs %lld (%s) and %lld (%s) ran on different systems; "
			"pass --any-system to compare them anyway\n",
			(long long)base.ids[0], base.rows[0].hostname, (long long)r->id, r->hostname);
		status = EXIT_USAGE;
		goto done;
	}
	struct case_filter filter = report_filter(&o);
	if (run_group_load(db, &base, &filter, &err) || run_group_load(db, &cand, &filter, &err)) {
		status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_CANNOT_TELL);
		goto done;
	}
	run_group_describe(&base, &who_b);
	run_group_describe(&cand, &who_c);
	char title[256];
	snprintf(title, sizeof(title), "regressions: %s vs baseline %s (%s)", sb_str(&who_c),
		 sb_str(&who_b), series_pick_names[pick]);
	table_init(&t, title);
	int many = base.n > 1 || cand.n > 1;
	/* n: one column "base/cand" for one run a side, else one per side ("30x4") */
	size_t c_case = table_column(&t, "case", "", 0),
	       c_nb = table_column(&t, many ? "n base" : "n", "", 0),
	       c_nc = many ? table_column(&t, "n cand", "", 0) : c_nb,
	       c_base = table_column(&t, "baseline", "ms", 3),
	       c_cand = table_column(&t, "candidate", "ms", 3),
	       c_chg = table_column(&t, "change", "%", 1), c_lo = table_column(&t, "ci lo", "%", 1),
	       c_hi = table_column(&t, "ci hi", "%", 1), c_p = table_column(&t, "p", "", 4),
	       c_q = table_column(&t, "p slower", "", 4),
	       c_v = table_column(&t, "verdict", "", 0);

	/* The baseline's case keys, in order of first appearance over its runs. */
	size_t nkeys = 0;
	for (size_t r = 0; r < base.n; r++)
		nkeys += base.sets[r].n;
	cases = xcalloc(nkeys, sizeof(*cases));
	family = xcalloc(nkeys, sizeof(*family));
	missing = xcalloc(nkeys, sizeof(*missing));
	broken = xcalloc(nkeys, sizeof(*broken));
	not_run = xcalloc(nkeys, sizeof(*not_run));
	uncompared = xcalloc(nkeys, sizeof(*uncompared));
	insufficient = xcalloc(nkeys, sizeof(*insufficient));
	slower = xcalloc(nkeys, sizeof(*slower));
	contended = xcalloc(nkeys, sizeof(*contended));
	long at_b[RUN_GROUP_MAX], at_c[RUN_GROUP_MAX];
	struct run_samples xb[RUN_GROUP_MAX], xc[RUN_GROUP_MAX];
	for (size_t r0 = 0; r0 < base.n; r0++) {
		for (size_t k = 0; k < base.sets[r0].n; k++) {
			const struct case_row *row = &base.sets[r0].rows[k];
			find_case(&base, row->case_key, at_b);
			int seen = 0;
			for (size_t r = 0; r < r0 && !seen; r++)
				seen = at_b[r] >= 0;
			if (seen)
				continue;   /* counted with its first run */
			nkeys_distinct++;
			find_case(&cand, row->case_key, at_c);
			size_t in_cand = 0, nb = 0, nc = 0, ok_c = 0;
			const struct case_row *worst = NULL;   /* a candidate case that is not ok */
			for (size_t r = 0; r < cand.n; r++) {
				if (at_c[r] < 0)
					continue;
				in_cand++;
				const struct case_row *c = &cand.sets[r].rows[at_c[r]];
				if (c->status == STATUS_OK)
					ok_c++;
				else if (!worst || c->status == STATUS_ERROR || c->status == STATUS_OOM)
					worst = c;
			}
			shared += in_cand > 0;
			for (size_t r = 0; r < base.n; r++) {
				if (at_b[r] < 0 || base.sets[r].rows[at_b[r]].status != STATUS_OK)
					continue;
				xb[nb].x = case_series_pick(&base.sets[r].series[at_b[r]],
							    (enum series_pick)pick, &xb[nb].n);
				nb++;
			}
			if (nb == 0)
				continue;   /* not ok in any baseline run: nothing to hold the candidate to */
			if (worst && (worst->status == STATUS_ERROR || worst->status == STATUS_OOM)) {
				broken[nbroken++] = worst->name;
				continue;
			}
			if (worst) {
				not_run[nnot_run++] = worst->name;
				continue;
			}
			if (in_cand < cand.n) {
				missing[nmissing++] = row->name;
				continue;
			}
			for (; nc < cand.n; nc++)
				xc[nc].x = case_series_pick(&cand.sets[nc].series[at_c[nc]],
							    (enum series_pick)pick, &xc[nc].n);
			int empty = 0;
			for (size_t r = 0; r < nb; r++)
				empty |= xb[r].n == 0;
			for (size_t r = 0; r < nc; r++)
				empty |= xc[r].n == 0;
			struct regress_case *rc = &cases[ncases];
			if (empty || compare_runs(xb, nb, xc, nc, &o.rule, &rc->result)) {
				uncompared[nuncompared++] = row->name;
				continue;
			}
			rc->name = row->name;
			rc->result.wait_base = side_wait(&base, at_b);
			rc->result.wait_cand = side_wait(&cand, at_c);
			rc->equal_b = rc->equal_c = 1;
			for (size_t r = 1; r < nb; r++)
				rc->equal_b &= xb[r].n == xb[0].n;
			for (size_t r = 1; r < nc; r++)
				rc->equal_c &= xc[r].n == xc[0].n;
			family[ncases++] = &rc->result;
		}
	}
	verdicts_decide(family, ncases, &o.rule);
	size_t nruns_method = 0, nsingle = 0;
	double worst_gap = -2, worst_wait[2] = {0, 0};   /* of the contended cases */
	for (size_t k = 0; k < ncases; k++) {
		const struct pair_result *pr = &cases[k].result;
		counts[pr->verdict]++;
		if (pr->verdict == VERDICT_INSUFFICIENT)
			insufficient[ninsufficient++] = cases[k].name;
		if (pr->verdict == VERDICT_SLOWER)
			slower[nslower++] = cases[k].name;
		if (pr->verdict == VERDICT_CONTENDED) {
			contended[ncontended++] = cases[k].name;
			double hi = fmax(pr->wait_cand, pr->wait_base),
			       lo = fmin(pr->wait_cand, pr->wait_base);
			if (hi - lo > worst_gap) {   /* [0]: the side that looks slower */
				worst_gap = hi - lo;
				worst_wait[0] = hi;
				worst_wait[1] = lo;
			}
		}
		nruns_method += pr->method == METHOD_RUNS;
		nsingle += pr->runs_base == 1;
		size_t r = table_row(&t);
		char n[48];
		table_text(&t, r, c_case, cases[k].name);
		if (many) {
			n_text(n, sizeof(n), pr->base.n, pr->runs_base, cases[k].equal_b);
			table_text(&t, r, c_nb, n);
			n_text(n, sizeof(n), pr->cand.n, pr->runs_cand, cases[k].equal_c);
			table_text(&t, r, c_nc, n);
		} else {
			snprintf(n, sizeof(n), "%zu/%zu", pr->base.n, pr->cand.n);
			table_text(&t, r, c_nb, n);
		}
		table_number(&t, r, c_base, pr->base.median / 1e6);
		table_number(&t, r, c_cand, pr->cand.median / 1e6);
		/* change in time: candidate / baseline - 1 = 1 / speedup - 1 */
		table_number(&t, r, c_chg, 100 * (1 / pr->speedup.ratio - 1));
		if (pr->method == METHOD_RUNS || (pr->base.n > 1 && pr->cand.n > 1)) {
			/* no interval from one sample */
			table_number(&t, r, c_lo, 100 * (1 / pr->speedup.hi - 1));
			table_number(&t, r, c_hi, 100 * (1 / pr->speedup.lo - 1));
		}
		table_number(&t, r, c_p, pr->p);
		if (!pr->insufficient)   /* no test was made */
			table_number(&t, r, c_q, pr->q_slower);
		table_text(&t, r, c_v, verdict_names[pr->verdict]);
	}

	/* The reasons, worst first: what fails the gate, then what keeps it from passing. */
	for (size_t r = 0; r < cand.n; r++) {
		const char *st = cand.rows[r].status;
		if (!st || strcmp(st, "complete"))
			sb_addf(&found.fail, "%scandidate run %lld is %s, not complete (%zu of its "
					     "cases stored)",
				sb_str(&found.fail)[0] ? "\n" : "", (long long)cand.ids[r],
				st ? st : "of unknown status", cand.sets[r].n);
	}
	finding_add(&found.fail, "slower", slower, nslower);
	finding_add(&found.fail, "ok in the baseline, error or oom in the candidate", broken,
		    nbroken);
	finding_add(&found.fail, "ok in the baseline, unsupported or skipped in the candidate",
		    not_run, nnot_run);
	size_t base_cases = 0, cand_cases = 0;
	for (size_t r = 0; r < base.n; r++)
		base_cases += base.sets[r].n;
	for (size_t r = 0; r < cand.n; r++)
		cand_cases += cand.sets[r].n;
	if (shared == 0 && base_cases > 0)
		sb_addf(&found.unsure, "nothing comparable: the runs share no case key (%zu baseline "
				       "cases, %zu candidate cases)",
			base_cases, cand_cases);
	else
		finding_add(&found.fail, "ok in the baseline, missing from the candidate", missing,
			    nmissing);
	if (base_cases == 0)
		sb_addf(&found.unsure, "nothing comparable: the baseline has no case%s",
			filter.nwhere || filter.suite ? " that passes the filter" : "");
	else if (ncases == 0 && !sb_str(&found.fail)[0] && !sb_str(&found.unsure)[0])
		sb_addf(&found.unsure, "nothing comparable: no ok baseline case is ok in the candidate");
	finding_add(&found.unsure, "not compared (no measured samples of the phase)", uncompared,
		    nuncompared);
	char what[192];
	snprintf(what, sizeof(what),
		 "insufficient data (fewer than %d iterations, or p cannot reach %.3g)",
		 REPORT_MIN_ITERS, o.rule.alpha);
	finding_add(&found.unsure, what, insufficient, ninsufficient);
	if (ncontended) {
		snprintf(what, sizeof(what),
			 "contended (the slower side waited for a CPU more of its time, up to %.0f%% "
			 "against %.0f%%: rerun on a quiet machine)",
			 100 * worst_wait[0], 100 * worst_wait[1]);
		finding_add(&found.unsure, what, contended, ncontended);
	}

	const char *verdict = sb_str(&found.fail)[0]     ? "REGRESSION"
			      : sb_str(&found.unsure)[0] ? "CANNOT TELL"
							 : "no regression";
	char n_contended[48] = "";
	if (ncontended)
		snprintf(n_contended, sizeof(n_contended), ", %zu contended", ncontended);
	table_note(&t, "%zu cases compared: %zu slower, %zu faster, %zu same, %zu unsure%s%s; %zu "
		       "not compared (missing from one run or not ok)",
		   ncases, counts[VERDICT_SLOWER], counts[VERDICT_FASTER], counts[VERDICT_SAME],
		   counts[VERDICT_UNSURE], n_contended, ninsufficient ? ", some insufficient" : "",
		   nkeys_distinct - ncases);
	findings_print(&found.fail, "regression", &t);
	if (!sb_str(&found.fail)[0])
		findings_print(&found.unsure, "cannot tell", &t);
	if (nruns_method)
		table_note(&t, "n: measured iterations x runs; noise between runs included: each run's "
			       "median is a sample (t test on logs, variance pooled over the cases); "
			       "baseline and candidate: geometric means of the runs' medians; CI: "
			       "95%% t interval");
	if (base.n == 1 && nruns_method)
		table_note(&t, "ONE baseline run: the spread between runs is estimated from the "
			       "candidate's runs alone (and the other cases'), assumed to hold for the "
			       "baseline too");
	if (nsingle && nruns_method < ncases)
		table_note(&t, "n: measured iterations (baseline/candidate); ONE baseline run: the "
			       "noise between runs is not measured but assumed (--run-noise %.3g%% of "
			       "a median per run, in the CI and the tests); select 3 or more runs, e.g. "
			       "--baseline-label LABEL, for a verdict that measures it",
			   100 * o.rule.run_noise);
	table_note(&t, "change: candidate median / baseline median - 1 (95%% CI); p: no change "
		       "(Mann-Whitney U, or t on runs); p slower: one-sided, slower beyond the "
		       "threshold, Benjamini-Hochberg adjusted over the cases; threshold %.3g%%, "
		       "alpha %.3g; verdict: %s",
		   100 * o.rule.threshold, o.rule.alpha, verdict);
	report_print((enum report_format)fmt, &t, 1);
	status = sb_str(&found.fail)[0]     ? EXIT_REGRESSION
		 : sb_str(&found.unsure)[0] ? EXIT_CANNOT_TELL
					    : EXIT_OK;
done:
	table_free(&t);
	sb_free(&found.fail);
	sb_free(&found.unsure);
	sb_free(&who_b);
	sb_free(&who_c);
	free(missing);
	free(broken);
	free(not_run);
	free(uncompared);
	free(insufficient);
	free(slower);
	free(contended);
	free(cases);
	free(family);
	run_group_free(&base);
	run_group_free(&cand);
	db_close(db);
	return status;
}
