/* report/cmd_table.c: `report [table]` — a run's cases as tables laid out like a course writeup
 * (tables.c), one per suite (and --group-by value), under a heading with the run's provenance. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"
#include "xalloc.h"

/* Markdown heading with the run's provenance. */
static void run_header(struct db *db, const struct run_row *r, struct strbuf *out)
{
	struct sysinfo si;
	struct bd_error err;
	if (db_system_get(db, r->system_id, &si, &err))
		memset(&si, 0, sizeof(si));
	sb_addf(out, "## run %lld: %s (%s)\n\n", (long long)r->id,
		r->sweep_name ? r->sweep_name : "?", r->status);
	sb_addf(out, "- started %s, uuid %s%s%s\n", r->started_at, r->uuid, r->label ? ", label " : "",
		r->label ? r->label : "");
	sb_addf(out, "- host %s: %s, %d cores, %s\n", si.hostname, si.cpu_model[0] ? si.cpu_model : "?",
		si.cpu_cores, si.blas[0] ? si.blas : "no BLAS recorded");
	if (r->git_commit)
		sb_addf(out, "- git %.12s%s on %s\n", r->git_commit, r->git_dirty == 1 ? " (dirty)" : "",
			r->git_branch ? r->git_branch : "?");
	else
		sb_add(out, "- git commit unknown (built outside a git checkout)\n");
	sb_addf(out, "- %lld cases, %lld ok; times are means over measured iterations (warm-up "
		     "excluded)\n\n",
		(long long)r->ncases, (long long)r->nok);
}

/* The group a case belongs to: its suite, and with --group-by the value of that parameter. */
static void group_of(const struct case_row *c, const char *group_by, char *out, size_t n)
{
	char v[128] = "";
	if (group_by)
		json_field(c->params_json, group_by, v, sizeof(v));
	snprintf(out, n, "%s%s%s%s%s", c->suite, group_by ? ", " : "", group_by ? group_by : "",
		 group_by ? "=" : "", v);
}

int cmd_table(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *group_by = NULL, *pivot = NULL;
	int derived = 0;
	const struct opt_spec specs[] = {
		REPORT_OPT_DB(&o),
		REPORT_OPT_RUN(&o, "run id, uuid prefix, label, git commit or 'latest' (default)"),
		REPORT_OPT_FORMAT(&o, 0),
		{"suite", 0, OPT_STRING, "NAME", "only cases of this suite (attention, e2e, matmul)",
		 &o.suite},
		REPORT_OPT_WHERE(&o),
		{"group-by", 'g', OPT_STRING, "KEY", "one table per value of this parameter (e.g. dtype)",
		 &group_by},
		{"pivot", 'p', OPT_STRING, "KEY",
		 "one column per value of this parameter (e.g. impl), holding the mean time", &pivot},
		{"phase", 0, OPT_STRING, "PHASE", "with --pivot: fwd, bwd, opt or total (default)",
		 &o.phase},
		{"derived", 'd', OPT_FLAG, NULL, "add tokens/s, samples/s, GB/s and CV% columns", &derived},
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "table", "[options]",
		"Print a run's cases as tables: parameters (e2e: the model's parameter count, too), mean\n"
		"and standard deviation of each timed phase over the measured iterations, status and\n"
		"peak memory. `report` alone does this for the latest run."};
	struct db *db = NULL;
	struct case_row *cases = NULL;
	struct run_row run = {0};
	struct report_output out = REPORT_OUTPUT_INIT;
	struct bd_error err;
	size_t n = 0, nall = 0;
	int64_t run_id = 0;
	int npos, fmt, pick;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if ((status = report_open(o.db_path, o.run_sel, &db, &run_id)) >= 0)
		goto done;
	status = EXIT_OK;
	if (db_run_get(db, run_id, &run, &err) ||
	    db_cases_list(db, run_id, o.suite, &cases, &n, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	nall = n;
	char scope[64];
	snprintf(scope, sizeof(scope), "run %lld", (long long)run_id);
	struct case_filter filter = report_filter(&o);
	if (case_rows_filter(cases, &n, &filter, scope, &err)) {
		status = report_error(&err, EXIT_USAGE);
		goto done;
	}
	if (format_is((enum report_format)fmt, FORMAT_TERMINAL))
		run_header(db, &run, &out.text);
	report_output_begin(&out, (enum report_format)fmt);
	if (n == 0) {
		struct table t;
		table_init(&t, "no cases");
		table_note(&t, "no cases stored in run %lld%s%s", (long long)run_id,
			   o.suite ? " for suite " : "", o.suite ? o.suite : "");
		report_output_table(&out, &t, 0, NULL);
	}
	/* One table per suite (and --group-by value), in order of first appearance. */
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char gi[256], gj[256];
		group_of(&cases[i], group_by, gi, sizeof(gi));
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++) {
			group_of(&cases[j], group_by, gj, sizeof(gj));
			seen = !strcmp(gi, gj);
		}
		if (seen)
			continue;
		size_t m = 0;
		struct case_row *group = xcalloc(n, sizeof(*group));
		for (size_t j = i; j < n; j++) {
			group_of(&cases[j], group_by, gj, sizeof(gj));
			if (!strcmp(gi, gj))
				group[m++] = cases[j];   /* shallow: strings stay owned by cases */
		}
		struct table t;
		rc = pivot ? pivot_table(db, cases[i].suite, group, m, pivot, (enum series_pick)pick, &t,
					 &err)
			   : table_of_cases(db, cases[i].suite, group, m, derived ? TABLE_DERIVED : 0,
					    &t, &err);
		if (!rc && group_by) {
			free(t.title);
			t.title = xstrdup(gi);
		}
		free(group);
		rc = report_output_table(&out, &t, rc, &err);
	}
	status = report_output_end(&out, rc);
done:
	report_output_free(&out);
	db_case_rows_free(cases, nall);
	db_run_row_clear(&run);
	db_close(db);
	return status;
}
