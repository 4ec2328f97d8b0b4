/* report/cmd_history.c: `report history --case KEY | --where KEY=VALUE` — one benchmark across
 * every run that has it, oldest first: provenance (commit, host), the median with a 95% interval,
 * and a step flag where the median moved significantly against the previous ok run. One table per
 * case key; the cases come from db_cases_by_key (every run at once, grouped by key). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

/* How many case keys of the latest run the "give a selector" message shows. */
#define EXAMPLE_KEYS 3

/* A few case keys of the latest run, to copy into --case (prints nothing when there is none). */
static void list_example_keys(const char *db_path, const char *suite)
{
	struct db *db = NULL;
	struct case_row *rows = NULL;
	struct bd_error err;
	size_t n = 0;
	int64_t latest = 0;
	if (db_open(db_path, DB_READONLY, &db, &err) || db_run_resolve(db, "latest", &latest, &err) ||
	    db_cases_list(db, latest, suite, &rows, &n, &err))
		goto done;
	if (n)
		fprintf(stderr, "case keys of run %lld, for example:\n", (long long)latest);
	for (size_t i = 0; i < n && i < EXAMPLE_KEYS; i++)
		fprintf(stderr, "  --case '%s'\n", rows[i].case_key);
	if (n > EXAMPLE_KEYS)
		fprintf(stderr, "  ... %zu in all\n", n);
done:
	db_case_rows_free(rows, n);
	db_close(db);
}

static int cmp_run_id(const void *key, const void *elem)
{
	int64_t id = *(const int64_t *)key, have = ((const struct run_row *)elem)->id;
	return (id > have) - (id < have);
}

/* The run with this id in runs[0..nruns-1] (db_runs_list: ordered by id), or NULL. */
static const struct run_row *run_of(const struct run_row *runs, size_t nruns, int64_t id)
{
	return runs ? bsearch(&id, runs, nruns, sizeof(*runs), cmp_run_id) : NULL;
}

/* The table of one case key: rows[0..n-1] are its cases, oldest run first. with_key: a first
 * column repeats the key (CSV drops titles, and its tables must still say whose rows they are). */
static int key_table(struct db *db, const struct case_row *rows, size_t n,
		     const struct run_row *runs, size_t nruns, enum series_pick pick,
		     const struct verdict_rule *rule, int with_key, struct table *t,
		     struct bd_error *err)
{
	struct case_series cur = {0}, prev = {0};
	size_t steps = 0;
	int rc = 0;
	char title[2048];
	snprintf(title, sizeof(title), "%s (%s)", rows[0].name, rows[0].case_key);
	table_init(t, title);
	size_t c_key = with_key ? table_column(t, "case key", "", 0) : 0;
	size_t c_run = table_column(t, "run", "", 0), c_start = table_column(t, "started", "", 0),
	       c_commit = table_column(t, "commit", "", 0), c_host = table_column(t, "host", "", 0),
	       c_status = table_column(t, "status", "", 0),
	       c_med = table_column(t, "median", "ms", 3), c_lo = table_column(t, "ci lo", "ms", 3),
	       c_hi = table_column(t, "ci hi", "ms", 3), c_n = table_column(t, "n", "", 0),
	       c_step = table_column(t, "step", "", 0);
	for (size_t i = 0; i < n; i++) {
		const struct case_row *c = &rows[i];
		const struct run_row *run = run_of(runs, nruns, c->run_id);
		size_t r = table_row(t);
		if (with_key)
			table_text(t, r, c_key, c->case_key);
		table_number(t, r, c_run, (double)c->run_id);
		if (run) {
			char commit[64];
			if (run->git_commit)
				snprintf(commit, sizeof(commit), "%.12s%s", run->git_commit,
					 run->git_dirty == 1 ? "+dirty" : "");
			else
				snprintf(commit, sizeof(commit), "unknown");
			table_text(t, r, c_start, run->started_at);
			table_text(t, r, c_commit, commit);
			table_text(t, r, c_host, run->hostname);
		}
		table_text(t, r, c_status, status_name(c->status));
		if (c->status != STATUS_OK) {
			table_note(t, "run %lld: %s — %s", (long long)c->run_id, status_name(c->status),
				   c->reason ? c->reason : "no reason stored");
			continue;
		}
		if ((rc = case_series_load(db, c, &cur, err)))
			goto done;
		size_t m, mprev;
		const double *x = case_series_pick(&cur, pick, &m);
		if (m == 0) {
			case_series_free(&cur);
			continue;
		}
		double median, lo, hi;
		median_ci(x, m, &median, &lo, &hi);   /* m > 0: no error */
		table_number(t, r, c_med, median / 1e6);
		if (m > 1) {   /* no interval from one sample */
			table_number(t, r, c_lo, lo / 1e6);
			table_number(t, r, c_hi, hi / 1e6);
		}
		table_number(t, r, c_n, (double)m);
		const double *xp = case_series_pick(&prev, pick, &mprev);
		struct pair_result pr;
		if (mprev && !compare_pair(xp, mprev, x, m, rule, &pr) &&
		    (pr.verdict == VERDICT_SLOWER || pr.verdict == VERDICT_FASTER)) {
			/* change in time: this median / previous median - 1 = 1 / speedup - 1 */
			char step[48];
			snprintf(step, sizeof(step), "%s %+.1f%%", verdict_names[pr.verdict],
				 100 * (1 / pr.speedup.ratio - 1));
			table_text(t, r, c_step, step);
			steps++;
		}
		case_series_free(&prev);
		prev = cur;   /* this run is the next one's previous ok run */
		memset(&cur, 0, sizeof(cur));
	}
	table_note(t, "%zu run%s, %zu step change%s; median and 95%% interval over the measured "
		      "iterations (%s), the interval from order statistics (distribution-free)",
		   n, n == 1 ? "" : "s", steps, steps == 1 ? "" : "s", series_pick_names[pick]);
	table_note(t, "step: against the previous ok run, when the one-sided Mann-Whitney U test "
		      "says the change lies beyond %.3g%% (p < %.3g); n: measured iterations",
		   100 * rule->threshold, rule->alpha);
done:
	case_series_free(&cur);
	case_series_free(&prev);
	return rc;
}

int cmd_history(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *case_key = NULL;
	const struct opt_spec specs[] = {
		{"case", 'c', OPT_STRING, "KEY", "the case key to follow (exact, as stored in cases.case_key)",
		 &case_key},
		{"where", 'w', OPT_LIST, "KEY=VALUE", "every case with this parameter value (repeatable)",
		 &o.where},
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_PHASE(&o),
		REPORT_OPT_THRESHOLD(&o, "change that counts as a step"),
		REPORT_OPT_ALPHA(&o),
		REPORT_OPT_FORMAT(&o, 0),
		REPORT_OPT_DB(&o),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "history", "--case KEY | --where KEY=VALUE ... [options]",
		"Follow one case key (or every case the filter matches, one table per key) across every\n"
		"run that has it, oldest first: run, start time, git commit, host, status, the median\n"
		"with a 95% distribution-free interval, and a step flag (slower +x% / faster -x%) where\n"
		"the median moved beyond the threshold, significantly (Mann-Whitney U), against the\n"
		"previous ok run. Exit status: 1 when no case matches, 2 on usage errors."};
	struct db *db = NULL;
	struct case_row *rows = NULL;
	struct run_row *runs = NULL;
	struct report_output out = REPORT_OUTPUT_INIT;
	struct bd_error err;
	size_t n = 0, nall = 0, nruns = 0;
	int npos, fmt, pick;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if ((status = verdict_rule_check(&o.rule, "history")) >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if (case_key && !case_key[0]) {
		fprintf(stderr, "report history: --case needs a case key, got ''\n");
		return EXIT_USAGE;
	}
	if (!case_key && o.where.n == 0) {
		fprintf(stderr, "report history: give a case: --case KEY (exact) or --where KEY=VALUE\n");
		list_example_keys(o.db_path, o.suite);
		return EXIT_USAGE;
	}
	if ((status = report_open(o.db_path, NULL, &db, NULL)) >= 0)
		goto done;
	status = EXIT_OK;
	if (db_runs_list(db, &runs, &nruns, &err) ||
	    db_cases_by_key(db, case_key, o.suite, &rows, &nall, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	n = nall;
	struct case_filter filter = report_filter(&o);
	if (case_rows_filter(rows, &n, &filter, "any run", &err)) {
		status = report_error(&err, EXIT_USAGE);
		goto done;
	}
	if (n == 0) {
		if (case_key)
			fprintf(stderr, "report history: no run has a case with key '%s'%s%s%s\n", case_key,
				o.suite ? " in suite " : "", o.suite ? o.suite : "",
				o.where.n ? " that matches the --where filter" : "");
		else
			fprintf(stderr, "report history: no case of any run matches the --where filter%s%s\n",
				o.suite ? " in suite " : "", o.suite ? o.suite : "");
		list_example_keys(o.db_path, o.suite);
		status = EXIT_FAIL;
		goto done;
	}
	report_output_begin(&out, (enum report_format)fmt);
	int rc = 0;
	for (size_t i = 0, end; i < n && !rc; i = end) {
		for (end = i + 1; end < n && !strcmp(rows[end].case_key, rows[i].case_key);)
			end++;
		struct table t;
		rc = key_table(db, &rows[i], end - i, runs, nruns, (enum series_pick)pick, &o.rule,
			       format_is((enum report_format)fmt, FORMAT_UNTITLED), &t, &err);
		rc = report_output_table(&out, &t, rc, &err);
	}
	status = report_output_end(&out, rc);
done:
	report_output_free(&out);
	db_case_rows_free(rows, nall);
	db_run_rows_free(runs, nruns);
	db_close(db);
	return status;
}
