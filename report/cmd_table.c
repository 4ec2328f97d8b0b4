/* report/cmd_table.c: `report [table]` — a run's cases as tables laid out like a course writeup
 * (tables.c), one per suite (and --group-by value), under a heading with the run's provenance. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "opt.h"
#include "report.h"
#include "shape.h"
#include "xalloc.h"

/* Markdown heading with the run's provenance. */
static void run_header(struct db *db, const struct run_row *r, long warmup, struct strbuf *out)
{
	struct sysinfo si;
	struct bd_error err;
	if (db_system_get(db, r->system_id, &si, &err))
		memset(&si, 0, sizeof(si));
	/* stored text, each kept on its line: a line break in a sweep's name ended the heading, and
	 * what followed it was markdown of its own */
	sb_addf(out, "## run %lld: ", (long long)r->id);
	sb_add_inline(out, r->sweep_name ? r->sweep_name : "?", 0);
	sb_addf(out, " (%s)\n\n", r->status);
	sb_addf(out, "- started %s, uuid %s%s", r->started_at, r->uuid, r->label ? ", label " : "");
	sb_add_inline(out, r->label, 0);
	sb_add(out, "\n- host ");
	sb_add_inline(out, si.hostname, 0);
	sb_add(out, ": ");
	sb_add_inline(out, si.cpu_model[0] ? si.cpu_model : "?", 0);
	sb_addf(out, ", %d cores, ", si.cpu_cores);
	sb_add_inline(out, si.blas[0] ? si.blas : "no BLAS recorded", 0);
	sb_addc(out, '\n');
	if (r->git_commit) {
		sb_addf(out, "- git %.12s%s on ", r->git_commit, r->git_dirty == 1 ? " (dirty)" : "");
		sb_add_inline(out, r->git_branch ? r->git_branch : "?", 0);
		sb_addc(out, '\n');
	} else
		sb_add(out, "- git commit unknown (built outside a git checkout)\n");
	if (warmup == TABLE_OWN_WARMUP)
		sb_addf(out, "- %lld cases, %lld ok; times are means over measured iterations (warm-up "
			     "excluded)\n\n",
			(long long)r->ncases, (long long)r->nok);
	else   /* --warmup K: the stored iterations after the first K, the run's warm-up included */
		sb_addf(out, "- %lld cases, %lld ok; times are means over the stored iterations after "
			     "the first %ld (--warmup %ld)\n\n",
			(long long)r->ncases, (long long)r->nok, warmup, warmup);
}

int cmd_table(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *group_by = NULL, *pivot = NULL, *columns = NULL, *time_unit = NULL;
	const char *layout_name = NULL, *prefer = NULL;
	int derived = 0, fold = 0;
	long warmup = TABLE_OWN_WARMUP;
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
		{"layout", 'l', OPT_STRING, "NAME",
		 "a named table: coursework (the coursework's e2e timing table, in seconds)", &layout_name},
		{"columns", 'c', OPT_STRING, "LIST",
		 "these columns in this order, each NAME or NAME=HEADING ('model,fwd mean=fwd avg')",
		 &columns},
		{"time-unit", 0, OPT_STRING, "UNIT", "every time in this unit: " SHAPE_TIME_UNITS,
		 &time_unit},
		{"fold", 0, OPT_FLAG, NULL,
		 "columns with one value on every row go into the title (formats with titles)", &fold},
		{"prefer", 0, OPT_STRING, "KEY=V,V",
		 "of cases that differ only in KEY, the one whose value is listed first (where none "
		 "of them has a listed value, they stay)", &prefer},
		{"warmup", 0, OPT_INT, "K",
		 "times as if the first K stored iterations were the warm-up (nothing re-run)", &warmup},
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "table", "[options]",
		"Print a run's cases as tables: parameters (e2e: the model's parameter count, too), mean,\n"
		"median and standard deviation of each timed phase over the measured iterations, status\n"
		"and peak memory. `report` alone does this for the latest run. --columns chooses, orders\n"
		"and renames the columns (any parameter, compile, a phase's mean/median/std, ...),\n"
		"--time-unit converts the times, --fold moves constant columns into the title; --layout\n"
		"coursework does all of it for the coursework's table (one per dtype; with --warmup 0 or\n"
		"1, the same without or with one warm-up step, from the stored iterations)."};
	struct db *db = NULL;
	struct case_row *cases = NULL;
	struct run_row run = {0};
	struct report_output out = REPORT_OUTPUT_INIT;
	struct table_shape shape = {0};
	struct table *tables = NULL;
	size_t ntables = 0;
	struct bd_error err;
	size_t n = 0, nall = 0;
	int64_t run_id = 0;
	int npos, fmt, pick;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	const struct table_layout *layout = NULL;
	if (layout_name && !(layout = table_layout_find(layout_name))) {
		struct strbuf names = STRBUF_INIT;
		table_layout_names(&names);
		fprintf(stderr, "report table: unknown layout '%s' (valid: %s)\n", layout_name,
			sb_str(&names));
		sb_free(&names);
		return EXIT_USAGE;
	}
	if (layout && (pivot || (o.suite && strcmp(o.suite, layout->suite)))) {
		fprintf(stderr, "report table: --layout %s is a table of %s cases: it does not combine with "
				"%s\n", layout->name, layout->suite, pivot ? "--pivot" : "another --suite");
		return EXIT_USAGE;
	}
	if (derived && pivot) {   /* a pivot's cells are mean times: it has no rate columns */
		fprintf(stderr, "report table: --derived does not combine with --pivot (a pivot holds mean "
				"times only): give --derived without --pivot for tokens/s and samples/s\n");
		return EXIT_USAGE;
	}
	if (warmup < 0 && warmup != TABLE_OWN_WARMUP) {
		fprintf(stderr, "report table: --warmup expects a count of iterations >= 0, got %ld\n",
			warmup);
		return EXIT_USAGE;
	}
	if (layout) {   /* the layout's choices, each unless given */
		o.suite = layout->suite;
		prefer = prefer ? prefer : layout->prefer;
		group_by = group_by ? group_by : layout->group_by;
		columns = columns ? columns : layout->columns;
		time_unit = time_unit ? time_unit : layout->time_unit;
	}
	if (table_shape_parse(columns, time_unit, fold, &shape, &err))
		return report_error(&err, EXIT_USAGE);
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
	const int shaped = columns || time_unit || fold;
	const struct table_request rq = {
		.group_by = group_by, .pivot = pivot, .prefer = prefer, .pick = pick,
		.flags = derived ? TABLE_DERIVED : 0, .warmup = warmup, .shape = shaped ? &shape : NULL,
		.title = layout ? layout->title : NULL,
		.titled = !format_is((enum report_format)fmt, FORMAT_UNTITLED),
		.exact = format_is((enum report_format)fmt, FORMAT_DATA)};
	int rc = report_tables(db, cases, n, &rq, &tables, &ntables, &err);
	if (rc) {
		status = report_error(&err, rc == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL);
		goto done;
	}
	if (format_is((enum report_format)fmt, FORMAT_TERMINAL))
		run_header(db, &run, warmup, &out.text);
	report_output_begin(&out, (enum report_format)fmt);
	if (ntables == 0) {
		struct table t;
		table_init(&t, "no cases");
		table_note(&t, "no cases stored in run %lld%s%s", (long long)run_id,
			   o.suite ? " for suite " : "", o.suite ? o.suite : "");
		report_output_table(&out, &t, 0, NULL);
	}
	for (size_t i = 0; i < ntables; i++)
		render_table(&tables[i], out.fmt, &out.text);
	status = report_output_end(&out, 0);
done:
	for (size_t i = 0; i < ntables; i++)
		table_free(&tables[i]);
	free(tables);
	table_shape_free(&shape);
	report_output_free(&out);
	db_case_rows_free(cases, nall);
	db_run_row_clear(&run);
	db_close(db);
	return status;
}
