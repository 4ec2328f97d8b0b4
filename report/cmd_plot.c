/* report/cmd_plot.c: `report plot KIND -o DIR` — one chart of a run (chart.c) as DIR/KIND.png and
 * DIR/KIND.svg, with notes on what was left out and how to read it; history: the series of the
 * cases the filters pick across their runs, with change points (history.h, chart_history.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "opt.h"
#include "report.h"
#include "xalloc.h"

/* DIR/history.png and .svg: the series f picks, with their change points and bands; one chart
 * for one series, small multiples for more (those whose newest runs moved first). A --case that
 * names a case of the run (set) by its name follows its key. */
static int plot_history(struct db *db, const struct case_set *set, struct history_filter *f,
			const struct cp_options *cpo, const struct verdict_rule *rule, size_t recent,
			const char *dir, struct strbuf *notes, struct bd_error *err)
{
	if (f->case_key) {
		const char *key = NULL;
		for (size_t i = 0; i < set->n && !key; i++)
			if (!strcmp(set->rows[i].case_key, f->case_key))
				key = set->rows[i].case_key;
		for (size_t i = 0; i < set->n && !key; i++)
			if (!strcmp(set->rows[i].name, f->case_key))
				key = set->rows[i].case_key;
		if (key)
			f->case_key = key;
	}
	struct history_set hs = {0};
	struct strbuf path = STRBUF_INIT, title = STRBUF_INIT;
	const struct history_series **drawn = NULL;
	size_t *order = NULL, n = 0;
	int rc = history_load(db, f, &hs, err);
	if (!rc && hs.n == 0) {
		struct strbuf what = STRBUF_INIT;
		history_filter_describe(f, &what);
		rc = bd_fail(err, BD_EINVAL, "no case matches%s (%zu cases of other runs left out; see "
					     "`report table` for names, `report export` for keys)",
			     sb_str(&what), hs.runs_left_out);
		sb_free(&what);
	}
	if (!rc)
		rc = history_noise(db, &hs, f->pick, rule, err);
	if (!rc && history_detect(&hs, cpo, rule, recent))
		rc = bd_fail(err, BD_EINVAL, "a run's median is not a finite time");
	if (rc)
		goto done;
	order = history_order(&hs);
	drawn = xmalloc(hs.n * sizeof(*drawn));
	for (size_t i = 0; i < hs.n; i++)
		if (hs.series[order[i]].n)
			drawn[n++] = &hs.series[order[i]];
	if (n == 1)
		sb_addf(&title, "%s on %s: median per run (ms)", drawn[0]->name, drawn[0]->host);
	else
		sb_addf(&title, "%zu case series across their runs: median per run (ms)", n);
	sb_addf(&path, "%s/history", dir);
	rc = chart_history_write(drawn, n, sb_str(&title), sb_str(&path), f->pick, notes, err);
	if (!rc && hs.runs_left_out) {
		struct strbuf what = STRBUF_INIT;
		history_filter_describe(&(struct history_filter){.label = f->label, .branch = f->branch,
								 .host = f->host}, &what);
		sb_addf(notes, "%zu cases of runs outside%s left out\n", hs.runs_left_out,
			sb_str(&what));
		sb_free(&what);
	}
done:
	free(drawn);
	free(order);
	sb_free(&path);
	sb_free(&title);
	history_free(&hs);
	return rc;
}

int cmd_plot(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	struct history_options h = HISTORY_OPTIONS_INIT;
	const char *baseline = "naive", *dir = NULL, *case_key = NULL;
	const struct opt_spec specs[] = {
		{"output", 'o', OPT_STRING, "DIR", "directory for KIND.png and KIND.svg (required)", &dir},
		REPORT_OPT_DB(&o),
		REPORT_OPT_RUN(&o, "run (default latest)"),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		REPORT_OPT_PHASE(&o),
		{"baseline", 'b', OPT_STRING, "IMPL", "speedup: the baseline impl (default naive)",
		 &baseline},
		{"case", 0, OPT_STRING, "KEY",
		 "history: the case key or name (default: every case the filters leave)", &case_key},
		HISTORY_OPT_RUNS(&h),
		HISTORY_OPT_DETECTOR(&h),
		HISTORY_OPT_CONTENTION(&o),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "plot", "KIND -o DIR [options]",
		"Write DIR/KIND.png and DIR/KIND.svg through gnuplot. KIND is one of:\n"
		"  latency  median time vs sequence length, one line per impl (and per any other\n"
		"           parameter the run varies), log-log, 95% CI of the median as error bars\n"
		"  speedup  bars of the speedup of each impl vs --baseline per shape, 95% bootstrap CI\n"
		"  warmup   per-iteration time, warm-up iterations included (up to 8 cases)\n"
		"  memory   peak memory (MiB) vs sequence length, log-log\n"
		"  history  each run's median of a case (--case) or of every case the filters leave\n"
		"           (small multiples), oldest run first, with its 95% CI, the change points\n"
		"           (as `report changes`, with the same run filters and detector options) and\n"
		"           the band of run-to-run noise around each segment; run ids and dates below"};
	struct db *db = NULL;
	struct case_set set = {0};
	struct strbuf notes = STRBUF_INIT;
	struct bd_error err;
	int64_t run_id = 0;
	int npos, pick, kind = -1;
	char **argv = NULL;   /* the positional arguments */
	int status = opt_parse_command(cl, specs, &usage, 1, 1, &argv, &npos);
	if (status >= 0)
		return status;
	for (int k = 0; k < CHART_KINDS; k++)
		if (!strcmp(argv[0], chart_kind_names[k]))
			kind = k;
	if (kind < 0) {
		fprintf(stderr, "report plot: unknown chart '%s' (valid: latency, speedup, warmup, "
				"memory, history)\n", argv[0]);
		return EXIT_USAGE;
	}
	if (!dir) {
		fprintf(stderr, "report plot: -o DIR is required (where %s.png and %s.svg go)\n",
			argv[0], argv[0]);
		return EXIT_USAGE;
	}
	if ((pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	struct history_filter f = {0};
	struct cp_options cpo;
	if ((status = history_options_check(&h, &o.rule, "plot", &f, &cpo)) >= 0)
		return status;
	struct case_filter filter = report_filter(&o);
	if ((status = report_open_set(o.db_path, o.run_sel, &filter, &db, &run_id, &set)) >= 0)
		goto done;
	status = EXIT_OK;
	if (set.n == 0 && kind != CHART_HISTORY) {
		fprintf(stderr, "report plot: no case of run %lld passes the filters\n", (long long)run_id);
		status = EXIT_FAIL;
		goto done;
	}
	struct chart_request rq = {
		.kind = (enum chart_kind)kind, .dir = dir, .run_id = run_id, .set = &set,
		.baseline = baseline, .pick = (enum series_pick)pick,
	};
	f.case_key = case_key;
	f.cases = filter;
	f.pick = (enum series_pick)pick;
	if (output_dir_make(dir, &err) ||
	    (kind == CHART_HISTORY ? plot_history(db, &set, &f, &cpo, &o.rule, (size_t)h.recent, dir,
						  &notes, &err)
				   : chart_write(db, &rq, &notes, &err))) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	if (kind != CHART_HISTORY) {   /* a run cut short: its chart lacks the cases it never reached */
		struct run_row run = {0};
		if (db_run_get(db, run_id, &run, &err) == 0 && run.status &&
		    strcmp(run.status, "complete"))
			sb_addf(&notes, "run %lld is %s: cases it did not reach are not in the chart\n",
				(long long)run_id, run.status);
		db_run_row_clear(&run);
	}
	printf("wrote %s/%s.png\nwrote %s/%s.svg\n", dir, argv[0], dir, argv[0]);
	/* What was left out, and how to read the chart. */
	const char *line = sb_str(&notes);
	while (*line) {
		size_t len = strcspn(line, "\n");
		printf("  note: %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
done:
	sb_free(&notes);
	case_set_free(&set);
	db_close(db);
	return status;
}
