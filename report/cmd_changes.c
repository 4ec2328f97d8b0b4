/* report/cmd_changes.c: `report changes` — change points in the history of every case (or the
 * cases a filter picks), per case key and host, over the runs of a label or branch: E-divisive
 * means with a permutation test (changepoint.h). For a nightly job: exit 1 when the newest runs of
 * a case began a slower segment; 2 when it cannot tell (the newest change is explained by
 * contention, no case has enough runs, no case matches); 0 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "opt.h"
#include "report.h"

#define EXIT_SLOWER 1
#define EXIT_CANNOT_TELL 2

/* "abcdef123456" (+dirty) or "unknown" */
static void commit_text(const struct run_row *run, char *out, size_t n)
{
	if (run->git_commit)
		snprintf(out, n, "%.12s%s", run->git_commit, run->git_dirty == 1 ? "+dirty" : "");
	else
		snprintf(out, n, "unknown");
}

/* The columns both tables start with: the case key (with_key: a format that drops titles), the
 * case's name and its host. */
static void series_columns(struct table *t, const char *title, int with_key)
{
	table_init(t, title);
	if (with_key)
		table_column(t, "case key", "", 0);
	table_column(t, "case", "", 0);
	table_column(t, "host", "", 0);
}

static void series_cells(struct table *t, size_t r, const struct history_series *s, int with_key)
{
	size_t c = 0;
	if (with_key)
		table_text(t, r, c++, s->case_key);
	table_text(t, r, c++, s->name);
	table_text(t, r, c, s->host);
}

/* Every change point of every series, oldest first within a series. */
static void changes_table(const struct history_set *hs, int with_key, struct table *t)
{
	series_columns(t, "Change points", with_key);
	size_t c_run = table_column(t, "run", "", 0), c_when = table_column(t, "started", "", 0),
	       c_commit = table_column(t, "commit", "", 0),
	       c_before = table_column(t, "before", "ms", 3),
	       c_after = table_column(t, "after", "ms", 3),
	       c_chg = table_column(t, "change", "%", 1), c_lo = table_column(t, "ci lo", "%", 1),
	       c_hi = table_column(t, "ci hi", "%", 1), c_p = table_column(t, "p", "", 4),
	       c_v = table_column(t, "verdict", "", 0);
	for (size_t i = 0; i < hs->n; i++) {
		const struct history_series *s = &hs->series[i];
		for (size_t k = 0; k < s->cp.n; k++) {
			const struct history_change *c = &s->changes[k];
			const struct history_point *p = &s->points[c->cp.index];
			size_t r = table_row(t);
			char commit[64], when[32];
			series_cells(t, r, s, with_key);
			table_number(t, r, c_run, (double)p->run->id);
			history_date(p->run->started_at, when, sizeof(when));
			table_text(t, r, c_when, when);
			commit_text(p->run, commit, sizeof(commit));
			table_text(t, r, c_commit, commit);
			table_number(t, r, c_before, exp(c->cp.before) / 1e6);
			table_number(t, r, c_after, exp(c->cp.after) / 1e6);
			table_number(t, r, c_chg, 100 * c->cp.change);
			table_number(t, r, c_lo, 100 * c->cp.lo);
			table_number(t, r, c_hi, 100 * c->cp.hi);
			table_number(t, r, c_p, c->cp.p);
			table_text(t, r, c_v, history_verdict_names[c->verdict]);
		}
	}
}

/* One row per series (only_moved: per series whose newest runs are not steady, or whose newest
 * run is off its segment): its runs, change points and what its newest runs say. */
static void newest_table(const struct history_set *hs, int with_key, size_t recent, int only_moved,
			 struct table *t)
{
	series_columns(t, only_moved ? "Newest runs of the cases that are not steady"
				     : "Newest runs of each case", with_key);
	int in_sessions = 0;   /* the noise is then of a session's mean, not of one run */
	for (size_t i = 0; i < hs->n; i++)
		in_sessions |= hs->series[i].nsessions < hs->series[i].n;
	size_t c_runs = table_column(t, "runs", "", 0), c_cps = table_column(t, "changes", "", 0),
	       c_since = table_column(t, "segment from run", "", 0),
	       c_seg = table_column(t, "runs in it", "", 0),
	       c_med = table_column(t, "its mean", "ms", 3),
	       c_noise = table_column(t, in_sessions ? "session noise" : "run noise", "%", 1),
	       c_status = table_column(t, "newest", "", 0);
	for (size_t i = 0; i < hs->n; i++) {
		const struct history_series *s = &hs->series[i];
		if (only_moved && s->newest == NEWEST_STEADY && s->newest_off == 0 &&
		    !s->unmeasured_run)
			continue;
		size_t r = table_row(t);
		series_cells(t, r, s, with_key);
		table_number(t, r, c_runs, (double)s->n);
		table_number(t, r, c_cps, (double)s->cp.n);
		char status[256];
		snprintf(status, sizeof(status), "%s", history_newest_names[s->newest]);
		if (s->n) {
			size_t from = s->cp.n ? s->cp.points[s->cp.n - 1].index : 0;
			table_number(t, r, c_since, (double)s->points[from].run->id);
			table_number(t, r, c_seg, (double)(s->n - from));
			table_number(t, r, c_med, exp(history_segment_mean(s, from, s->n)) / 1e6);
			if (s->cp.noise > 0)
				table_number(t, r, c_noise, 100 * s->cp.noise);
			if (s->newest == NEWEST_SLOWER || s->newest == NEWEST_FASTER ||
			    s->newest == NEWEST_CONTENDED)
				snprintf(status, sizeof(status), "%s %+.1f%%", history_newest_names[s->newest],
					 100 * s->newest_net);
			else if (s->newest == NEWEST_STEADY && s->nsessions >= recent && !s->quiet_first)
				snprintf(status, sizeof(status), "steady (no change in %zu %s)", recent,
					 s->nsessions < s->n ? "sessions" : "runs");
			else if (s->newest == NEWEST_TOO_FEW && s->nsessions < s->n)
				snprintf(status, sizeof(status), "too few sessions (%zu, in %zu runs)",
					 s->nsessions, s->n);
			else if (s->newest == NEWEST_GONE)
				snprintf(status, sizeof(status), "no longer run: not in run %lld (complete) "
					 "nor after", (long long)s->gone_run->id);
			if (s->quiet_first) {
				size_t len = strlen(status);
				snprintf(status + len, sizeof(status) - len, " against runs %lld-%lld (the "
					 "newest change is contention ending)", (long long)s->quiet_first->id,
					 (long long)s->quiet_last->id);
			}
			if (s->unmeasured_run) {
				size_t len = strlen(status);
				snprintf(status + len, sizeof(status) - len, "; run %lld: no measured "
					 "samples", (long long)s->unmeasured_run->id);
			}
			if (s->newest_off != 0) {
				size_t len = strlen(status), first = s->n - 1;
				while (first > 0 && s->session[first - 1] == s->session[s->n - 1])
					first--;
				if (first == s->n - 1)
					snprintf(status + len, sizeof(status) - len, "; newest run %+.1f%%: "
						 "one run is not a change point", 100 * s->newest_off);
				else
					snprintf(status + len, sizeof(status) - len, "; newest session (runs "
						 "%lld-%lld) %+.1f%%: one session is not a change point",
						 (long long)s->points[first].run->id,
						 (long long)s->points[s->n - 1].run->id, 100 * s->newest_off);
			}
		}
		table_text(t, r, c_status, status);
	}
}

/* The cases not ok in their host's newest run though ok before: exit 1, as regress fails a case
 * ok in the baseline and not in the candidate. */
static void broken_table(const struct history_set *hs, int with_key, struct table *t)
{
	series_columns(t, "Cases not ok in their newest run", with_key);
	size_t c_run = table_column(t, "run", "", 0), c_when = table_column(t, "started", "", 0),
	       c_status = table_column(t, "status", "", 0),
	       c_ok = table_column(t, "last ok run", "", 0),
	       c_reason = table_column(t, "reason", "", 0);
	for (size_t i = 0; i < hs->n; i++) {
		const struct history_series *s = &hs->series[i];
		if (!s->broken_run)
			continue;
		size_t r = table_row(t);
		char when[32], status[96];
		series_cells(t, r, s, with_key);
		table_number(t, r, c_run, (double)s->broken_run->id);
		history_date(s->broken_run->started_at, when, sizeof(when));
		table_text(t, r, c_when, when);
		if (s->broken_row)
			snprintf(status, sizeof(status), "%s", status_name(s->broken_row->status));
		else
			snprintf(status, sizeof(status), "missing (the run is %s)",
				 s->broken_run->status ? s->broken_run->status : "of unknown status");
		table_text(t, r, c_status, status);
		table_number(t, r, c_ok, (double)s->points[s->n - 1].run->id);
		if (s->broken_row && s->broken_row->reason)
			table_text(t, r, c_reason, s->broken_row->reason);
	}
}

int cmd_changes(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	struct history_options h = HISTORY_OPTIONS_INIT;
	struct cp_options cpo;
	struct history_filter f = {0};
	const char *case_key = NULL;
	const struct opt_spec specs[] = {
		{"case", 'c', OPT_STRING, "KEY", "only this case key (exact, as stored in cases.case_key)",
		 &case_key},
		REPORT_OPT_WHERE(&o),
		REPORT_OPT_SUITE(&o),
		HISTORY_OPT_RUNS(&h),
		REPORT_OPT_PHASE(&o),
		HISTORY_OPT_DETECTOR(&h),
		HISTORY_OPT_RECENT(&h),
		HISTORY_OPT_CONTENTION(&o),
		REPORT_OPT_FORMAT(&o, 0),
		REPORT_OPT_DB(&o),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "changes", "[--label LABEL] [--case KEY | --where KEY=VALUE ...] [options]",
		"Change points in the history of every case (or those the filter picks), one series per\n"
		"case key and host, oldest run first: each run's median (the runs of one --repeat\n"
		"group are one point, their mean: they share that time's state of the machine),\n"
		"split by E-divisive means\n"
		"(Matteson and James 2014, as Apache Otava and MongoDB's signal-processing-algorithms),\n"
		"each split kept when a permutation test says so at --alpha, both sides at least\n"
		"--min-segment runs (a lone spike is never one), smaller changes than --min-change\n"
		"merged away. A change whose slower side waited for a CPU --cpu-wait-level of its\n"
		"time, or --cpu-wait-gap points more than the other side, is contended. Give --label\n"
		"(or --branch) so that other runs (a pull request's) do not enter a nightly history.\n"
		"Exit status: 1 when the newest runs of a case began a slower\n"
		"segment (within --recent runs), or a case ok before is error, oom, unsupported or\n"
		"skipped in the newest run that has it, or missing from its host's newest run of its\n"
		"sweep where that run is not complete; 2 when it cannot tell (a contended newest\n"
		"change, no case still run with 2 x --min-segment runs, no case matches) and on usage\n"
		"errors; 0 otherwise. A case newer complete runs of its sweep lack is no longer run:\n"
		"no verdict."};
	struct db *db = NULL;
	struct history_set hs = {0};
	struct bd_error err;
	int npos, fmt, pick, status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if ((status = history_options_check(&h, &o.rule, "changes", &f, &cpo)) >= 0)
		return status;
	if (case_key && !case_key[0]) {
		fprintf(stderr, "report changes: --case needs a case key, got ''\n");
		return EXIT_USAGE;
	}
	f.case_key = case_key;
	f.cases = report_filter(&o);
	f.pick = (enum series_pick)pick;
	/* A missing, foreign or unreadable database is a usage error (2), as in regress and nodes:
	 * a nightly gate must not read it as newest runs slower (1). */
	if (report_open(o.db_path, NULL, &db, NULL) >= 0) {
		status = EXIT_USAGE;
		goto done;
	}
	if (history_load(db, &f, &hs, &err)) {
		status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_CANNOT_TELL);
		goto done;
	}
	if (hs.n == 0) {
		struct strbuf what = STRBUF_INIT;
		history_filter_describe(&f, &what);
		fprintf(stderr, "report changes: no case matches%s (%zu cases of other runs left out)\n",
			sb_str(&what), hs.runs_left_out);
		sb_free(&what);
		status = EXIT_CANNOT_TELL;
		goto done;
	}
	/* an error reading the data after the database opened is "cannot tell" (2, as regress says
	 * it), never the verdict "newest runs slower" (1) */
	if (history_noise(db, &hs, f.pick, &o.rule, &err)) {
		status = report_error(&err, EXIT_CANNOT_TELL);
		goto done;
	}
	if (history_detect(&hs, &cpo, &o.rule, (size_t)h.recent)) {
		fprintf(stderr, "report changes: cannot tell: a run's median is not a finite time\n");
		status = EXIT_CANNOT_TELL;
		goto done;
	}
	size_t count[NEWEST_COUNT] = {0}, changes = 0, broken = 0, unmeasured = 0, in_sessions = 0;
	for (size_t i = 0; i < hs.n; i++) {
		in_sessions += hs.series[i].nsessions < hs.series[i].n;
		count[hs.series[i].newest]++;
		changes += hs.series[i].cp.n;
		broken += hs.series[i].broken_run != NULL;
		unmeasured += hs.series[i].unmeasured_run != NULL;
	}
	/* a newest run that measured nothing of a case says nothing about it: cannot tell, as
	 * regress says of a case with no measured samples */
	/* a case no longer run says nothing of today's code: judged are the others alone */
	status = count[NEWEST_SLOWER] || broken ? EXIT_SLOWER
		 : count[NEWEST_CONTENDED] || count[NEWEST_TOO_FEW] + count[NEWEST_GONE] == hs.n ||
				 unmeasured
			 ? EXIT_CANNOT_TELL
			 : EXIT_OK;
	const char *verdict = count[NEWEST_SLOWER] && broken ? "SLOWER, AND NOT OK"
			      : count[NEWEST_SLOWER]	       ? "SLOWER"
			      : broken		       ? "NOT OK"
			      : status == EXIT_CANNOT_TELL ? "CANNOT TELL"
							   : "no new slower segment";
	struct report_output out = REPORT_OUTPUT_INIT;
	/* where runs of one session count once, --recent and --min-segment count sessions */
	const char *counted = in_sessions ? "sessions" : "runs";
	int brief = format_is((enum report_format)fmt, FORMAT_SHORT),
	    untitled = format_is((enum report_format)fmt, FORMAT_UNTITLED);
	if (brief)
		format_summary_head("changes", status, verdict, &out.text);
	if (brief || format_is((enum report_format)fmt, FORMAT_TERMINAL))
		sb_addf(&out.text, "**%s**: %zu series; the newest %ld %s began a slower segment in %zu, "
				   "a faster one in %zu, a contended change in %zu; %zu steady, %zu with "
				   "too few %s, %zu no longer run; %zu change points in all; %zu not ok "
				   "in their newest run\n\n",
			verdict, hs.n, h.recent, counted, count[NEWEST_SLOWER], count[NEWEST_FASTER],
			count[NEWEST_CONTENDED], count[NEWEST_STEADY], count[NEWEST_TOO_FEW], counted,
			count[NEWEST_GONE], changes, broken);
	report_output_begin(&out, (enum report_format)fmt);
	struct table t, newest;
	changes_table(&hs, untitled, &t);
	if (changes == 0)
		table_note(&t, "no change point in any series");
	table_note(&t, "change: mean of the segment's log medians after / before - 1, 95%% t interval "
		       "with the %s noise of the series; p: permutation p of the split (%u "
		       "permutations, alpha %.3g, each form at alpha / 2); segments of %zu %s or more; "
		       "changes under %.3g%% merged",
		   in_sessions ? "session-to-session (a session's mean's)" : "run-to-run",
		   cpo.permutations, cpo.alpha, cpo.min_segment, counted, 100 * cpo.min_change);
	if (hs.runs_left_out) {
		struct strbuf what = STRBUF_INIT;
		history_filter_describe(&(struct history_filter){.label = f.label, .branch = f.branch,
								 .host = f.host}, &what);
		table_note(&t, "%zu cases of runs outside%s left out", hs.runs_left_out, sb_str(&what));
		sb_free(&what);
	}
	/* a summary: the series whose newest runs say something, then every change point folded */
	newest_table(&hs, untitled, (size_t)h.recent, brief, &newest);
	table_note(&newest, "verdict: %s; exit 1 when a slower segment began within the newest %ld "
			    "%s or a case is not ok in its newest run, 2 when a contended change "
			    "did, or when no series still run has %zu %s",
		   verdict, h.recent, counted, 2 * cpo.min_segment, counted);
	if (in_sessions)
		table_note(&newest, "%zu series have runs of one session (one runner run --repeat, one "
				    "group, one code): they share the machine's state of that time, so "
				    "each session counts once, as one run does: its runs' mean is one "
				    "point of the test, and --recent and --min-segment count sessions",
			   in_sessions);
	if (count[NEWEST_GONE])
		table_note(&newest, "no longer run: a case that newer complete runs of its sweep on its "
				    "host do not have (dropped from the sweep): no verdict, neither a "
				    "failure nor a pass");
	if (unmeasured)
		table_note(&newest, "%zu case%s ok in %s newest run with no measured samples%s: that "
				    "run is not in the series, which cannot tell what it measured (exit 2)",
			   unmeasured, unmeasured == 1 ? "" : "s", unmeasured == 1 ? "its" : "their",
			   f.pick == PICK_TOTAL ? "" : " of the phase");
	int rc = 0;
	if (broken) {   /* what fails first */
		struct table bt;
		broken_table(&hs, untitled, &bt);
		table_note(&bt, "ok in earlier runs, not in the newest run that has the case (or missing "
				"from its host's newest run of its sweep, which is not complete); the "
				"series' change points are of its ok runs");
		rc = report_output_table(&out, &bt, rc, NULL);
	}
	if (brief) {
		if (newest.nrows)
			rc = report_output_table(&out, &newest, rc, NULL);
		else
			table_free(&newest);
		sb_addf(&out.text, "<details><summary>the %zu change points of the %zu series</summary>"
				   "\n\n", changes, hs.n);
		rc = report_output_table(&out, &t, rc, NULL);
		sb_add(&out.text, "</details>\n");
	} else {
		rc = report_output_table(&out, &t, rc, NULL);
		rc = report_output_table(&out, &newest, rc, NULL);
	}
	int written = report_output_end(&out, rc);
	report_output_free(&out);
	if (written != EXIT_OK)
		status = written;
	for (size_t i = 0; i < hs.n && status == EXIT_SLOWER; i++) {
		const struct history_series *s = &hs.series[i];
		if (s->broken_row)
			fprintf(stderr, "report changes: %s: '%s' on %s in run %lld (ok in run %lld)%s%s\n",
				status_name(s->broken_row->status), s->name, s->host,
				(long long)s->broken_run->id, (long long)s->points[s->n - 1].run->id,
				s->broken_row->reason ? ": " : "",
				s->broken_row->reason ? s->broken_row->reason : "");
		else if (s->broken_run)
			fprintf(stderr, "report changes: missing: '%s' on %s from run %lld, which is %s "
					"(ok in run %lld)\n",
				s->name, s->host, (long long)s->broken_run->id,
				s->broken_run->status ? s->broken_run->status : "of unknown status",
				(long long)s->points[s->n - 1].run->id);
	}
	if (status == EXIT_CANNOT_TELL && count[NEWEST_GONE] &&
	    count[NEWEST_TOO_FEW] + count[NEWEST_GONE] == hs.n)
		fprintf(stderr, "report changes: cannot tell: of the %zu cases matched, %zu are no "
				"longer run (newer complete runs of their sweep lack them) and %zu have too "
				"few runs\n", hs.n, count[NEWEST_GONE], count[NEWEST_TOO_FEW]);
	for (size_t i = 0; i < hs.n && status == EXIT_CANNOT_TELL; i++)
		if (hs.series[i].unmeasured_run)
			fprintf(stderr, "report changes: cannot tell: '%s' on %s is ok in run %lld with "
					"no measured samples (its series ends at run %lld)\n",
				hs.series[i].name, hs.series[i].host,
				(long long)hs.series[i].unmeasured_run->id,
				(long long)hs.series[i].points[hs.series[i].n - 1].run->id);
	for (size_t i = 0; i < hs.n && status == EXIT_SLOWER; i++)
		if (hs.series[i].newest == NEWEST_SLOWER)
			fprintf(stderr, "report changes: slower: '%s' on %s, %+.1f%% since run %lld%s\n",
				hs.series[i].name, hs.series[i].host,
				100 * hs.series[i].newest_net,
				(long long)hs.series[i]
					.points[hs.series[i].changes[hs.series[i].newest_change].cp.index]
					.run->id,
				hs.series[i].quiet_first ? ", against the runs before contention" : "");
done:
	history_free(&hs);
	db_close(db);
	return status;
}
