/* report/cmd_plot.c: `report plot KIND -o DIR` — one chart of a run (chart.c) as DIR/KIND.png and
 * DIR/KIND.svg, with notes on what was left out and how to read it. */
#include <stdio.h>
#include <string.h>

#include "opt.h"
#include "report.h"

int cmd_plot(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
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
		 "history: the case key or name (default: the one case the filters leave)",
		 &case_key},
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
		"  history  median of one case (--case) in every run of the database, by run and commit"};
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
		.baseline = baseline, .pick = (enum series_pick)pick, .case_key = case_key,
	};
	if (output_dir_make(dir, &err) || chart_write(db, &rq, &notes, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
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
