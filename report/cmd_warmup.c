/* report/cmd_warmup.c: `report warmup` — what the measurement would have given with k warm-up
 * iterations, for every case of a run (warmup.c), from the stored samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

static int parse_ks(const char *text, int *ks, int *nk)
{
	*nk = 0;
	const char *p = text;
	while (*p) {
		char *end;
		long k = strtol(p, &end, 10);
		if (end == p || k < 0 || k > 1000000 || *nk >= WARMUP_MAX_K || (*end && *end != ','))
			return -1;
		for (int i = 0; i < *nk; i++)
			if (ks[i] == k)
				return -1;   /* "1,1": two columns of one name (JSON keys k=1_mean_ms_2) */
		ks[(*nk)++] = (int)k;
		if (*end == ',' && !end[1])
			return -1; /* "0,1,": a trailing comma, not a list of two */
		p = *end ? end + 1 : end;
	}
	return *nk ? 0 : -1;
}

int cmd_warmup(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *ks_text = "0,1,2,5";
	double band = REPORT_STEADY_BAND;
	const struct opt_spec specs[] = {
		REPORT_OPT_DB(&o),
		REPORT_OPT_RUN(&o, "run (default latest)"),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		{"k", 'k', OPT_STRING, "LIST", "warm-up counts to evaluate (default 0,1,2,5)", &ks_text},
		REPORT_OPT_PHASE(&o),
		{"band", 0, OPT_PERCENT, "PCT",
		 "warm-up: an excess up to this over the steady level does not count (default "
		 REPORT_STR(REPORT_STEADY_BAND_PCT) ": any that stands out of the noise)", &band},
		REPORT_OPT_FORMAT(&o, 0),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "warmup", "[options]",
		"What the measurement would have given with k warm-up iterations (mean and std of the\n"
		"`iters` iterations after the first k), the first-iteration penalty (first iteration /\n"
		"median of the last half) and the steady-state iteration, for every case of a run —\n"
		"from the stored samples, without running anything."};
	struct db *db = NULL;
	struct case_set set = {0};
	struct table t = {0};
	struct bd_error err;
	int64_t run_id;
	int ks[WARMUP_MAX_K], nk, npos, fmt, pick;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if (parse_ks(ks_text, ks, &nk)) {
		fprintf(stderr, "report warmup: --k expects a list such as 0,1,2,5 (at most %d different "
			"counts from 0 to 1000000), got '%s'\n", WARMUP_MAX_K, ks_text);
		return EXIT_USAGE;
	}
	if (!(band >= 0 && isfinite(band))) {   /* nan, -5, inf: read as 0 (or all) before */
		fprintf(stderr, "report warmup: --band expects a percentage, a finite number >= 0, "
			"got %g\n", 100 * band);
		return EXIT_USAGE;
	}
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	struct case_filter filter = report_filter(&o);
	filter.rows_only = 1;
	if ((status = report_open_set(o.db_path, o.run_sel, &filter, &db, &run_id, &set)) >= 0)
		goto done;
	status = EXIT_OK;
	if (warmup_table(db, run_id, &set, ks, nk, (enum series_pick)pick, band, &t, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	report_print((enum report_format)fmt, &t, 1);
done:
	table_free(&t);
	case_set_free(&set);
	db_close(db);
	return status;
}
