/* report/cmd_runs.c: `report runs` — every run in the database, oldest first (by start time, as
 * `latest` and the histories go: a merged database's ids need not follow time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

static int run_time_cmp(const void *a, const void *b)
{
	return db_run_time_cmp(a, b);
}

int cmd_runs(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const struct opt_spec specs[] = {REPORT_OPT_DB(&o), REPORT_OPT_FORMAT(&o, 0), {0}};
	static const struct cmd_usage usage = {
		REPORT_PROG, "runs", "[options]",
		"List the runs in the database, oldest first by start time, with their status, sweep,\n"
		"label, group and shard (I/N), machine, git commit and case counts. Any column that\n"
		"identifies a run can be given to --run elsewhere (a group: its shards as one run)."};
	struct db *db = NULL;
	struct run_row *runs = NULL;
	size_t n = 0;
	struct bd_error err;
	struct table t = {0};
	int npos, fmt;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0)
		return EXIT_USAGE;
	if ((status = report_open(o.db_path, NULL, &db, NULL)) >= 0)
		goto done;
	status = EXIT_OK;
	if (db_runs_list(db, &runs, &n, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	if (n > 1)   /* (runs is NULL when there are none: qsort's pointer may not be) */
		qsort(runs, n, sizeof(*runs), run_time_cmp);
	table_init(&t, "runs");
	size_t c_id = table_column(&t, "id", "", 0), c_uuid = table_column(&t, "uuid", "", 0),
	       c_start = table_column(&t, "started", "", 0), c_status = table_column(&t, "status", "", 0),
	       c_sweep = table_column(&t, "sweep", "", 0), c_label = table_column(&t, "label", "", 0),
	       c_group = table_column(&t, "group", "", 0), c_shard = table_column(&t, "shard", "", 0),
	       c_host = table_column(&t, "host", "", 0), c_git = table_column(&t, "git", "", 0),
	       c_cases = table_column(&t, "cases", "", 0), c_ok = table_column(&t, "ok", "", 0);
	for (size_t i = 0; i < n; i++) {
		const struct run_row *r = &runs[i];
		size_t row = table_row(&t);
		char git[64];
		snprintf(git, sizeof(git), "%.10s%s", r->git_commit ? r->git_commit : "unknown",
			 r->git_dirty == 1 ? "+dirty" : "");
		table_number(&t, row, c_id, (double)r->id);
		char uuid[40];
		/* At a terminal the 8-character prefix that --run accepts; elsewhere the whole uuid. */
		int prefix = format_is((enum report_format)fmt, FORMAT_TERMINAL);
		snprintf(uuid, sizeof(uuid), "%.*s", prefix ? 8 : 39, r->uuid);
		table_text(&t, row, c_uuid, uuid);
		table_text(&t, row, c_start, r->started_at);
		/* a `running` run whose runner is gone: abandoned (schemas/007_liveness.sql) */
		table_text(&t, row, c_status, !strcmp(r->status, "running") &&
				db_run_liveness(db, r->id, NULL, 0) == RUN_LIVENESS_DEAD ? "abandoned"
											 : r->status);
		table_text(&t, row, c_sweep, r->sweep_name ? r->sweep_name : "");
		table_text(&t, row, c_label, r->label ? r->label : "");
		/* what --run GROUP reads as one run, and each shard's slice of it */
		table_text(&t, row, c_group, r->group_id ? r->group_id : "");
		char shard[48] = "";
		if (r->shard_count > 0)
			snprintf(shard, sizeof(shard), "%lld/%lld", (long long)r->shard_index,
				 (long long)r->shard_count);
		table_text(&t, row, c_shard, shard);
		table_text(&t, row, c_host, r->hostname ? r->hostname : "");
		table_text(&t, row, c_git, git);
		table_number(&t, row, c_cases, (double)r->ncases);
		table_number(&t, row, c_ok, (double)r->nok);
	}
	if (n == 0)
		table_note(&t, "no runs yet: `runner run SWEEP.yaml --db %s` stores one", o.db_path);
	report_print((enum report_format)fmt, &t, 1);
done:
	table_free(&t);
	db_run_rows_free(runs, n);
	db_close(db);
	return status;
}
