/* report/cmd_regress.c: `report regress --baseline SEL --candidate SEL` — per case verdicts
 * (faster / slower / same / unsure / insufficient / contended) between a baseline and a
 * candidate, each one run or a group of runs (every run with a label, the last K), for CI to gate
 * on. The unit of evidence is the run: each run's median is one sample, and the noise between
 * runs comes from the noise model (noise.h) — these runs and the history of their system. It
 * never passes what it did not compare or could not tell: exit 0 only when every ok baseline case
 * was compared, none is slower and none is unsure (--lenient: none unsure that is slower beyond
 * the threshold);
 * 1 on a significant slowdown, a case that was ok and now failed or did not run, a baseline case
 * missing from the candidate, or a candidate run that is not complete; 2 when it cannot tell
 * (unsure, contended, nothing comparable, too little data) and on usage errors. Every reason is
 * printed, with the smallest change these runs could detect. */
#include <ctype.h>
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

/* Print each line of sb as "report regress: PREFIX: line" to stderr and as a note of t, and add
 * it to list as "- PREFIX: line" (the summary's list of reasons). */
static void findings_print(const struct strbuf *sb, const char *prefix, struct table *t,
			   struct strbuf *list)
{
	const char *s = sb_str(sb);
	while (*s) {
		const char *end = strchr(s, '\n');
		int len = end ? (int)(end - s) : (int)strlen(s);
		fprintf(stderr, "report regress: %s: %.*s\n", prefix, len, s);
		table_note(t, "%s: %.*s", prefix, len, s);
		sb_addf(list, "- %s: %.*s\n", prefix, len, s);
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

/* A baseline case that was not compared, and why: the candidate's status (error, oom,
 * unsupported, skipped), "missing" or "not compared". */
struct uncompared_row {
	const char *name, *why;
};

struct regress_case {
	const char *name, *key;
	struct pair_result result;
	int equal_b, equal_c;   /* every run of the side has the same n */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "1/34" (percent each side waited for a CPU), "" when neither side is known. */
static void wait_text(char *out, size_t size, double wait_b, double wait_c)
{
	char b[16] = "?", c[16] = "?";
	if (wait_b >= 0)
		snprintf(b, sizeof(b), "%.0f", 100 * wait_b);
	if (wait_c >= 0)
		snprintf(c, sizeof(c), "%.0f", 100 * wait_c);
	if (wait_b >= 0 || wait_c >= 0)
		snprintf(out, size, "%s/%s", b, c);
	else
		out[0] = 0;
}

/* The standard error at which a change of detect (fraction) is detected as slower 90% of the
 * time (compare_modeled's rule), at normal quantiles; 0 when none is (detect <= threshold). */
static double se_to_detect(double detect, const struct verdict_rule *rule)
{
	double goal = log1p(detect), margin = log1p(rule->threshold);
	double z_a = verdict_quantile(1 - rule->alpha, INFINITY), z_p = verdict_quantile(0.9, INFINITY);
	if (goal <= margin)
		return 0;
	return fmin(goal / (z_a + z_p), (goal - margin) / z_p);
}

/* The verdicts a pull-request summary lists case by case, in this order (slower first); the
 * others (same, faster) are only counted. */
static const enum verdict summary_verdicts[] = {VERDICT_SLOWER, VERDICT_CONTENDED, VERDICT_UNSURE,
						VERDICT_INSUFFICIENT};
#define SUMMARY_ROWS 25   /* cases listed case by case; all are in the folded table */
#define SUMMARY_MAX_BYTES 60000   /* a GitHub comment holds 65536 characters: beyond this the
				     folded full table is left out (and said so) */

/* --format summary (FORMAT_SHORT), for a pull-request comment or a CI job summary: the marker and
 * the verdict, its counts, the reasons (a list), the smallest change these runs detect, the noise between
 * runs when it was assumed (noise_caveat; NULL when measured), the cases that are not same or
 * faster; the whole table (t), the noise model and how to read them folded below. */
static void summary_print(enum report_format fmt, int status, const char *verdict,
			 const char *counts_text, const struct strbuf *reasons, const char *detect_text,
			 const char *noise_caveat, const struct regress_case *cases, size_t ncases,
			 struct table *t)
{
	struct report_output out = REPORT_OUTPUT_INIT;
	struct table brief;
	format_summary_head("regress", status, verdict, &out.text);
	sb_addf(&out.text, "%s\n\n", counts_text);
	if (reasons->len)
		sb_addf(&out.text, "%s\n", sb_str(reasons));
	if (detect_text[0])
		sb_addf(&out.text, "%s\n\n", detect_text);
	if (noise_caveat)   /* what the verdicts rest on, when it was not measured */
		sb_addf(&out.text, "_%c%s._\n\n", toupper((unsigned char)noise_caveat[0]), noise_caveat + 1);
	report_output_begin(&out, fmt);
	size_t listed = 0, nlist = 0;
	for (size_t k = 0; k < ncases; k++)
		for (size_t v = 0; v < sizeof(summary_verdicts) / sizeof(summary_verdicts[0]); v++)
			nlist += cases[k].result.verdict == summary_verdicts[v];
	char title[96] = "cases that are not same or faster";
	if (nlist > SUMMARY_ROWS)
		snprintf(title, sizeof(title), "cases that are not same or faster (the first %d of %zu)",
			 SUMMARY_ROWS, nlist);
	table_init(&brief, title);
	size_t c_case = table_column(&brief, "case", "", 0),
	       c_base = table_column(&brief, "baseline", "ms", 3),
	       c_cand = table_column(&brief, "candidate", "ms", 3),
	       c_chg = table_column(&brief, "change", "%", 1),
	       c_lo = table_column(&brief, "ci lo", "%", 1), c_hi = table_column(&brief, "ci hi", "%", 1),
	       c_v = table_column(&brief, "verdict", "", 0);
	for (size_t v = 0; v < sizeof(summary_verdicts) / sizeof(summary_verdicts[0]); v++)
		for (size_t k = 0; k < ncases && listed < SUMMARY_ROWS; k++) {
			const struct pair_result *pr = &cases[k].result;
			if (pr->verdict != summary_verdicts[v])
				continue;
			size_t r = table_row(&brief);
			listed++;
			table_text(&brief, r, c_case, cases[k].name);
			table_number(&brief, r, c_base, pr->base.median / 1e6);
			table_number(&brief, r, c_cand, pr->cand.median / 1e6);
			table_number(&brief, r, c_chg, 100 * (1 / pr->speedup.ratio - 1));
			table_number(&brief, r, c_lo, 100 * (1 / pr->speedup.hi - 1));
			table_number(&brief, r, c_hi, 100 * (1 / pr->speedup.lo - 1));
			table_text(&brief, r, c_v, verdict_names[pr->verdict]);
		}
	if (listed)
		report_output_table(&out, &brief, 0, NULL);
	else
		table_free(&brief);
	struct strbuf full = STRBUF_INIT;
	render_table(t, fmt, &full);
	if (out.text.len + full.len < SUMMARY_MAX_BYTES) {
		sb_addf(&out.text, "<details><summary>all %zu case%s, the noise between runs, how to "
				   "read this</summary>\n\n%s</details>\n", t->nrows, t->nrows == 1 ? "" : "s",
			sb_str(&full));
	} else {
		sb_addf(&out.text, "The table of all %zu cases (%zu bytes) does not fit a comment: `report "
				   "regress` with `--format md` prints it.\n", t->nrows, full.len);
	}
	sb_free(&full);
	report_output_end(&out, 0);
	report_output_free(&out);
}

int cmd_regress(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	o.rule.either_contended = 0;   /* a slowdown against a baseline that waited is still one */
	struct opt_list base_sels = {0}, cand_sels = {0};
	const char *base_label = NULL, *cand_label = NULL;
	long base_last = 0, cand_last = 0;
	int any_system = 0, lenient = 0, no_history = 0;
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
		{"candidate-last", 0, OPT_INT, "K", "only the last K candidate runs (alone: the last K runs)",
		 &cand_last},
		REPORT_OPT_DB(&o),
		REPORT_OPT_THRESHOLD(&o, "slowdown that counts as a regression"),
		REPORT_OPT_ALPHA(&o),
		{"run-noise", 0, OPT_PERCENT, "PCT",
		 "run-to-run spread assumed where nothing measures it (default "
		 REPORT_STR(NOISE_RUN_NOISE_PCT) ")",
		 &o.rule.assumed.run_noise},
		{"detect", 0, OPT_PERCENT, "PCT",
		 "the change the notes say whether these runs detect (default "
		 REPORT_STR(REPORT_DETECT_PCT) ")", &o.rule.detect},
		{"lenient", 0, OPT_FLAG, NULL,
		 "pass unsure cases whose change is within the threshold (exit 0, not 2)", &lenient},
		{"no-history", 0, OPT_FLAG, NULL,
		 "the noise from these runs alone, not the system's other runs", &no_history},
		{"cpu-wait-gap", 0, OPT_PERCENT, "PCT",
		 "a slower side that waited for a CPU PCT points more of its time: contended "
		 "(default " REPORT_STR(REPORT_CPU_WAIT_GAP_PCT) "; 100: off)",
		 &o.rule.cpu_wait_gap},
		{"cpu-wait-level", 0, OPT_PERCENT, "PCT",
		 "... or PCT of its time or more (default " REPORT_STR(REPORT_CPU_WAIT_LEVEL_PCT)
		 "; 100: off)", &o.rule.cpu_wait_level},
		{"any-system", 0, OPT_FLAG, NULL, "compare runs made on different systems", &any_system},
		REPORT_OPT_PHASE(&o),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		REPORT_OPT_FORMAT(&o, 0),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "regress", "--baseline SEL | --baseline-label LABEL [options]",
		"Compare every case of the baseline with the candidate, the run being the unit of\n"
		"evidence: each run's median is one sample, and the noise between runs comes from the\n"
		"runs compared and the other runs of their system (sessions: the runs of one `runner\n"
		"run --repeat N` agree more closely than runs made at different times; a change between\n"
		"the sides is never counted as noise). A case is slower when the change is significant\n"
		"(t test on the log medians; p adjusted over the cases, Benjamini-Hochberg; column\n"
		"'p slower') below alpha and beyond the threshold; faster likewise; same when the 95%\n"
		"CI lies within the threshold; unsure otherwise. What the data cannot measure is\n"
		"assumed and said: one run a side with no history assumes --run-noise per run. The\n"
		"notes give the smallest change these runs detect (column 'detect': 90% of the time)\n"
		"and, when a case is unsure, how many runs a side would detect --detect.\n"
		"Exit status, each reason printed:\n"
		"  0  no regression: every ok baseline case was compared, none is slower and none\n"
		"     is unsure (--lenient: none unsure with a change beyond the threshold);\n"
		"  1  regression: a case is slower; a case ok in the baseline is error, oom,\n"
		"     unsupported or skipped in a candidate run, or missing from it; or a candidate\n"
		"     run is not complete (running, interrupted, failed);\n"
		"  2  cannot tell: a case is unsure (these runs cannot tell a change of the threshold\n"
		"     from noise); a case is contended: slower (or faster), but the side that looks\n"
		"     slower waited for a CPU (another process had it) --cpu-wait-level of its\n"
		"     measured time or more, or --cpu-wait-gap points more than the other side\n"
		"     (cases.cpu_wait); a case has fewer than " REPORT_STR(REPORT_MIN_ITERS)
		" measured iterations in a run;\n"
		"     the runs share no case key, or a case could not be compared; and usage errors\n"
		"     (a bad option, a missing database or run, a run selected on both sides, runs\n"
		"     from different systems without --any-system)."};
	struct db *db = NULL;
	struct run_group base = {0}, cand = {0};
	struct regress_case *cases = NULL;
	struct pair_result **family = NULL;
	struct table t = {0};
	struct findings found = {STRBUF_INIT, STRBUF_INIT};
	struct strbuf who_b = STRBUF_INIT, who_c = STRBUF_INIT;
	struct uncompared_row *left_out = NULL;   /* baseline cases not compared: rows too */
	const char **missing = NULL, **broken = NULL, **not_run = NULL, **uncompared = NULL,
		   **partial = NULL,
		   **insufficient = NULL, **slower = NULL, **contended = NULL, **unsure = NULL,
		   **keys = NULL;
	size_t nmissing = 0, nbroken = 0, nnot_run = 0, nuncompared = 0, npartial = 0, ninsufficient = 0,
	       nslower = 0, ncontended = 0, nunsure = 0, shared = 0, ncases = 0, nkeys_distinct = 0,
	       nsorted = 0, nleft_out = 0;
	struct noise_data noise = {0};
	struct noise_model model = {0};
	double *detectable = NULL;
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
	/* --candidate-last K alone: the last K runs (as --baseline-last K alone takes the K before
	 * them); with no candidate option at all, the latest run */
	if (cand_sels.n == 0 && !cand_label && cand_last <= 0)
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
	       c_hi = table_column(&t, "ci hi", "%", 1), c_q = table_column(&t, "p slower", "", 4),
	       c_det = table_column(&t, "detect", "%", 1),
	       c_wait = table_column(&t, "cpu wait", "%", 0),
	       c_v = table_column(&t, "verdict", "", 0);

	/* The baseline's case keys, in order of first appearance over its runs. */
	size_t nkeys = 0;
	for (size_t r = 0; r < base.n; r++)
		nkeys += base.sets[r].n;
	size_t cap = nkeys ? nkeys : 1;
	cases = xcalloc(cap, sizeof(*cases));
	family = xcalloc(cap, sizeof(*family));
	missing = xcalloc(cap, sizeof(*missing));
	broken = xcalloc(cap, sizeof(*broken));
	left_out = xcalloc(cap, sizeof(*left_out));
	not_run = xcalloc(cap, sizeof(*not_run));
	uncompared = xcalloc(cap, sizeof(*uncompared));
	partial = xcalloc(cap, sizeof(*partial));
	insufficient = xcalloc(cap, sizeof(*insufficient));
	slower = xcalloc(cap, sizeof(*slower));
	contended = xcalloc(cap, sizeof(*contended));
	unsure = xcalloc(cap, sizeof(*unsure));
	keys = xcalloc(cap, sizeof(*keys));
	long at_b[RUN_GROUP_MAX], at_c[RUN_GROUP_MAX];
	/* the noise model: the sides' runs and the history of their systems, on the baseline's keys */
	for (size_t r = 0; r < base.n; r++)
		for (size_t k = 0; k < base.sets[r].n; k++)
			keys[nsorted++] = base.sets[r].rows[k].case_key;
	qsort(keys, nsorted, sizeof(*keys), cmp_str);
	const struct run_group *sides[2] = {&base, &cand};
	if (run_groups_noise(db, sides, 2, pick, keys, nsorted, !no_history, &o.rule.assumed,
			     &noise, &model, &err)) {
		status = report_error(&err, EXIT_CANNOT_TELL);
		goto done;
	}
	for (size_t r0 = 0; r0 < base.n; r0++) {
		for (size_t k = 0; k < base.sets[r0].n; k++) {
			const struct case_row *row = &base.sets[r0].rows[k];
			find_case(&base, row->case_key, at_b);
			int seen = at_b[r0] != (long)k;   /* a later copy of the key in this run */
			for (size_t r = 0; r < r0 && !seen; r++)
				seen = at_b[r] >= 0;
			if (seen)
				continue;   /* counted with its first run */
			nkeys_distinct++;
			find_case(&cand, row->case_key, at_c);
			size_t in_cand = 0, nb = 0;
			const struct case_row *worst = NULL;   /* a candidate case that is not ok */
			for (size_t r = 0; r < cand.n; r++) {
				if (at_c[r] < 0)
					continue;
				in_cand++;
				const struct case_row *c = &cand.sets[r].rows[at_c[r]];
				if (c->status != STATUS_OK &&
				    (!worst || c->status == STATUS_ERROR || c->status == STATUS_OOM))
					worst = c;
			}
			shared += in_cand > 0;
			for (size_t r = 0; r < base.n; r++)
				nb += at_b[r] >= 0 && base.sets[r].rows[at_b[r]].status == STATUS_OK;
			if (nb == 0)
				continue;   /* not ok in any baseline run: nothing to hold the candidate to */
			if (worst) {
				left_out[nleft_out++] = (struct uncompared_row){worst->name,
										 status_name(worst->status)};
				if (worst->status == STATUS_ERROR || worst->status == STATUS_OOM)
					broken[nbroken++] = worst->name;
				else
					not_run[nnot_run++] = worst->name;
				continue;
			}
			if (in_cand < cand.n) {
				left_out[nleft_out++] = (struct uncompared_row){row->name, "missing"};
				missing[nmissing++] = row->name;
				continue;
			}
			struct regress_case *rc = &cases[ncases];
			if (run_groups_compare_case(&model, &noise, row->case_key, &base, at_b, &cand,
						    at_c, pick, &o.rule, &rc->result)) {
				left_out[nleft_out++] = (struct uncompared_row){row->name, "not compared"};
				uncompared[nuncompared++] = row->name;
				continue;
			}
			rc->name = row->name;
			rc->key = row->case_key;
			rc->equal_b = rc->equal_c = 1;
			size_t first_b = 0, first_c = 0, n;
			for (size_t r = 0; r < base.n; r++) {
				if (at_b[r] < 0)
					continue;
				case_series_pick(&base.sets[r].series[at_b[r]], (enum series_pick)pick, &n);
				rc->equal_b &= !first_b || n == first_b;
				first_b = first_b ? first_b : n;
			}
			for (size_t r = 0; r < cand.n; r++) {
				case_series_pick(&cand.sets[r].series[at_c[r]], (enum series_pick)pick, &n);
				rc->equal_c &= !first_c || n == first_c;
				first_c = first_c ? first_c : n;
			}
			/* a run where the case is ok but gave no median (no samples of the phase, or
			 * times not positive) is left out: compared on the other runs, said, not passed
			 * over */
			if (rc->result.runs_base < nb || rc->result.runs_cand < cand.n)
				partial[npartial++] = row->name;
			family[ncases++] = &rc->result;
		}
	}
	verdicts_decide(family, ncases, &o.rule);
	/* of the contended cases, the one whose slower side waited most: [0] that side's wait, [1]
	 * the other side's (-1: not recorded) */
	double worst_wait[2] = {-2, -1};
	detectable = xcalloc(ncases + 1, sizeof(*detectable));
	size_t ndetectable = 0, runs_needed = 0, nunsure_beyond = 0;
	for (size_t k = 0; k < ncases; k++) {
		const struct pair_result *pr = &cases[k].result;
		counts[pr->verdict]++;
		if (pr->verdict == VERDICT_INSUFFICIENT)
			insufficient[ninsufficient++] = cases[k].name;
		if (pr->verdict == VERDICT_SLOWER)
			slower[nslower++] = cases[k].name;
		if (pr->verdict == VERDICT_UNSURE) {
			/* --lenient passes an unsure case only when its change is within the threshold */
			int beyond = pr->log_change > log1p(o.rule.threshold);
			nunsure_beyond += beyond;
			if (!lenient || beyond)
				unsure[nunsure++] = cases[k].name;
			if (pr->detectable > o.rule.detect && o.rule.detect > o.rule.threshold) {
				double se = se_to_detect(o.rule.detect, &o.rule);
				size_t need = noise_runs_for(&model, noise_data_find(&noise, cases[k].key),
							     se * se);
				if (!need || need > runs_needed)
					runs_needed = need ? need : SIZE_MAX;
			}
		}
		if (pr->verdict == VERDICT_CONTENDED) {
			contended[ncontended++] = cases[k].name;
			/* the side that looks slower is the candidate when it is slower, else the
			 * baseline (a faster candidate whose baseline waited), whichever waited more */
			int cand_slower = pr->log_change > 0;
			double slow = cand_slower ? pr->wait_cand : pr->wait_base,
			       fast = cand_slower ? pr->wait_base : pr->wait_cand;
			if (slow > worst_wait[0]) {
				worst_wait[0] = slow;
				worst_wait[1] = fast;
			}
		}
		if (!pr->insufficient && isfinite(pr->detectable))
			detectable[ndetectable++] = pr->detectable;
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
		table_number(&t, r, c_lo, 100 * (1 / pr->speedup.hi - 1));
		table_number(&t, r, c_hi, 100 * (1 / pr->speedup.lo - 1));
		if (!pr->insufficient)   /* no test was made */
			table_number(&t, r, c_q, pr->q_slower);
		if (isfinite(pr->detectable))
			table_number(&t, r, c_det, 100 * pr->detectable);
		char wait[32];
		wait_text(wait, sizeof(wait), pr->wait_base, pr->wait_cand);
		table_text(&t, r, c_wait, wait);
		table_text(&t, r, c_v, verdict_names[pr->verdict]);
	}
	/* the baseline cases that were not compared are rows too, their verdict what happened to
	 * them: a table (csv, json) read without its notes must not show a failed case as absent */
	for (size_t k = 0; k < nleft_out; k++) {
		size_t r = table_row(&t);
		table_text(&t, r, c_case, left_out[k].name);
		table_text(&t, r, c_v, left_out[k].why);
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
	char what[256];
	snprintf(what, sizeof(what), "insufficient data (fewer than %d measured iterations in a run)",
		 REPORT_MIN_ITERS);
	finding_add(&found.unsure, what, insufficient, ninsufficient);
	if (ncontended) {
		char other[32] = "an unknown share";
		if (worst_wait[1] >= 0)
			snprintf(other, sizeof(other), "%.0f%%", 100 * worst_wait[1]);
		snprintf(what, sizeof(what),
			 "contended (the slower side waited for a CPU, up to %.0f%% of its time "
			 "against %s on the other side: rerun on a quiet machine)",
			 100 * fmax(worst_wait[0], 0), other);
		finding_add(&found.unsure, what, contended, ncontended);
	}
	if (nunsure) {
		/* what these runs could and could not have told, and what would */
		if (runs_needed == SIZE_MAX)
			snprintf(what, sizeof(what), "unsure (a %.3g%% change would not be detected with "
						     "these runs, and no number of runs a side would: the "
						     "noise is too large)", 100 * o.rule.detect);
		else if (runs_needed)
			snprintf(what, sizeof(what), "unsure (a %.3g%% change would not be detected with "
						     "these runs; about %zu runs a side, each at a "
						     "different time, would detect it)",
				 100 * o.rule.detect, runs_needed);
		else
			snprintf(what, sizeof(what), "unsure (the change may be within the %.3g%% threshold "
						     "or beyond it; these runs detect changes from the "
						     "size in column detect)", 100 * o.rule.threshold);
		finding_add(&found.unsure, what, unsure, nunsure);
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
	struct strbuf reasons = STRBUF_INIT;   /* the summary's list */
	findings_print(&found.fail, "regression", &t, &reasons);
	if (!sb_str(&found.fail)[0])
		findings_print(&found.unsure, "cannot tell", &t, &reasons);
	for (size_t r = 0; r < base.n; r++) {   /* not a failure, but not passed over either */
		const char *st = base.rows[r].status;
		const char *lacks = base.n > 1 ? "compared on the other baseline runs that have them"
					       : "not compared";
		if (st && !strcmp(st, "complete"))
			continue;
		fprintf(stderr, "report regress: note: baseline run %lld is %s, not complete (%zu of its "
				"cases stored): the cases it lacks are %s\n",
			(long long)base.ids[r], st ? st : "of unknown status", base.sets[r].n, lacks);
		table_note(&t, "baseline run %lld is %s, not complete (%zu of its cases stored): the cases "
			       "it lacks are %s",
			   (long long)base.ids[r], st ? st : "of unknown status", base.sets[r].n, lacks);
	}
	if (npartial) {
		struct strbuf names = STRBUF_INIT;
		for (size_t i = 0; i < npartial; i++)
			sb_addf(&names, "%s%s", i ? ", " : "", partial[i]);
		table_note(&t, "compared on fewer runs than the side has (column n): %zu case%s ok in a "
			       "run without a median of the phase (no samples, or times not positive: a "
			       "damaged run?), left out of that run: %s",
			   npartial, npartial == 1 ? "" : "s", sb_str(&names));
		sb_free(&names);
	}
	if (lenient && counts[VERDICT_UNSURE] > nunsure)
		table_note(&t, "--lenient: %zu unsure case%s with a change within the threshold "
			       "passed", counts[VERDICT_UNSURE] - nunsure,
			   counts[VERDICT_UNSURE] - nunsure == 1 ? "" : "s");
	double med, lo, hi;
	char detect_text[256] = "";
	if (ndetectable && !detectable_range(detectable, ndetectable, &med, &lo, &hi)) {
		table_note(&t, "smallest slowdown these runs detect (90%% of the time, alpha %.3g; "
			       "column detect): %.3g%% for the median case, %.3g%% to %.3g%% over the "
			       "cases; to reach a smaller one, run more runs a side at different times "
			       "(`runner run --repeat N` on different days, or keep history)",
			   o.rule.alpha, 100 * med, 100 * lo, 100 * hi);
		if (hi - lo < 0.0005)
			snprintf(detect_text, sizeof(detect_text),
				 "Smallest slowdown these runs detect (90%% of the time): **%.3g%%**.", 100 * med);
		else
			snprintf(detect_text, sizeof(detect_text),
				 "Smallest slowdown these runs detect (90%% of the time): **%.3g%%** for the "
				 "median case, %.3g%% to %.3g%% over the cases.", 100 * med, 100 * lo, 100 * hi);
	}
	size_t busy = 0;   /* cases where a side waited for a CPU at the level: contention shown */
	for (size_t k = 0; k < ncases; k++)
		busy += cases[k].result.wait_base >= o.rule.cpu_wait_level ||
			cases[k].result.wait_cand >= o.rule.cpu_wait_level;
	if (busy && o.rule.cpu_wait_level < 1)
		table_note(&t, "%zu case%s waited for a CPU %.3g%% of the measured time or more on a side "
			       "(column cpu wait): the machine was busy, and the noise between runs there "
			       "is the machine's; a quiet machine tells more",
			   busy, busy == 1 ? "" : "s", 100 * o.rule.cpu_wait_level);
	struct strbuf nl = STRBUF_INIT;   /* kept for the summary */
	noise_model_describe(&model, &nl);
	table_note(&t, "%s", sb_str(&nl));
	table_note(&t, "n: measured iterations%s; baseline, candidate: the runs' medians (geometric "
		       "mean over runs); change: candidate / baseline - 1 with its 95%% CI, from the "
		       "noise between runs; p slower: one-sided t test, Benjamini-Hochberg adjusted "
		       "over the cases; slower: p slower below alpha %.3g and the change beyond the "
		       "threshold %.3g%%; cpu wait: %% of the measured time each side (baseline/"
		       "candidate) waited for a CPU; verdict: %s",
		   many ? " x runs" : " (baseline/candidate)", o.rule.alpha,
		   100 * o.rule.threshold, verdict);
	status = sb_str(&found.fail)[0]     ? EXIT_REGRESSION
		 : sb_str(&found.unsure)[0] ? EXIT_CANNOT_TELL
					    : EXIT_OK;
	if (format_is((enum report_format)fmt, FORMAT_SHORT)) {
		char counts_text[512], n_insufficient[48] = "";
		if (ninsufficient)
			snprintf(n_insufficient, sizeof(n_insufficient), ", %zu insufficient", ninsufficient);
		snprintf(counts_text, sizeof(counts_text),
			 "**%zu case%s** compared: %zu slower, %zu faster, %zu same, %zu unsure, %zu "
			 "contended%s; %zu not compared. Candidate %s against baseline %s (%s).",
			 ncases, ncases == 1 ? "" : "s", counts[VERDICT_SLOWER], counts[VERDICT_FASTER], counts[VERDICT_SAME],
			 counts[VERDICT_UNSURE], counts[VERDICT_CONTENDED], n_insufficient,
			 nkeys_distinct - ncases, sb_str(&who_c), sb_str(&who_b),
			 series_pick_names[pick]);
		summary_print((enum report_format)fmt, status, verdict, counts_text, &reasons, detect_text,
			      model.basis == NOISE_MEASURED ? NULL : sb_str(&nl), cases, ncases, &t);
	} else {
		report_print((enum report_format)fmt, &t, 1);
	}
	sb_free(&nl);
	sb_free(&reasons);
done:
	table_free(&t);
	sb_free(&found.fail);
	sb_free(&found.unsure);
	sb_free(&who_b);
	sb_free(&who_c);
	free(missing);
	free(broken);
	free(left_out);
	free(not_run);
	free(uncompared);
	free(partial);
	free(insufficient);
	free(slower);
	free(contended);
	free(unsure);
	free(keys);
	free(detectable);
	free(cases);
	free(family);
	noise_data_free(&noise);
	noise_model_free(&model);
	run_group_free(&base);
	run_group_free(&cand);
	db_close(db);
	return status;
}
