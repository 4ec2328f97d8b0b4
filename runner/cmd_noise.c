/* runner/cmd_noise.c: `runner noise` — fold the runs stored into the summaries of the noise
 * between runs (schemas/010_run_noise.sql; report/noise.h) and say what they show per system.
 * `runner run` folds each run it completes; this is for runs stored before schema 10, runs
 * brought in by `runner merge`, and after runs were deleted (--rebuild). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "escape.h"
#include "noise.h"
#include "opt.h"
#include "report.h"
#include "strbuf.h"

int cmd_noise(struct cmd_line *cl)
{
	const char *db_path = BENCHDB_DEFAULT_DB;
	int rebuild = 0;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database to update (default " BENCHDB_DEFAULT_DB ")",
		 &db_path},
		{"rebuild", 0, OPT_FLAG, NULL, "forget every fold and fold every run again", &rebuild},
		{0}};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "noise", "[--db PATH] [--rebuild]",
		"Fold every complete run that is not yet folded into the stored noise sessions (per\n"
		"system, case key, series and session: how many runs, the mean and the sum of squares\n"
		"of their log medians), which the verdicts of `report` read as the history of the\n"
		"system's noise, then print the noise between runs each system shows (the per-iteration\n"
		"total). `runner run` folds each run it completes; run this after `runner merge`, for\n"
		"runs stored before schema 10, or with --rebuild after runs were deleted."};
	int npos = 0;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	struct db *db = NULL;
	struct run_session *runs = NULL;
	size_t nruns = 0, folded_now = 0;
	struct bd_error err;
	if (db_open(db_path, 0, &db, &err)) {
		bd_error_print(RUNNER_PROG " noise", &err);
		/* BD_EINVAL: --db names no file ("", :memory:), a usage error as in run and close */
		status = err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto done;
	}
	if ((rebuild && db_noise_clear(db, &err)) || db_run_sessions(db, 0, 0, &runs, &nruns, &err)) {
		bd_error_print(RUNNER_PROG " noise", &err);
		status = EXIT_FAIL;
		goto done;
	}
	status = EXIT_OK;
	for (size_t i = 0; i < nruns; i++) {
		int folded = 0;
		if (runs[i].folded || strcmp(runs[i].status, "complete"))
			continue;
		if (noise_fold_run(db, runs[i].id, &folded, &err)) {
			bd_error_print(RUNNER_PROG " noise", &err);
			status = EXIT_FAIL;
			goto done;
		}
		folded_now += folded;
	}
	printf("%s: %zu run%s folded now\n", db_path, folded_now, folded_now == 1 ? "" : "s");
	/* what each system shows: its runs' model, pooled over its cases */
	for (size_t i = 0; i < nruns; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = runs[j].system_id == runs[i].system_id;
		if (seen)
			continue;
		struct noise_data d = {0};
		struct noise_model m = {0};
		const struct noise_assumed a = NOISE_ASSUMED_DEFAULT;
		struct sysinfo si;
		struct strbuf sb = STRBUF_INIT;
		int rc = db_system_get(db, runs[i].system_id, &si, &err);
		if (!rc)
			rc = noise_history_load(db, &runs[i].system_id, 1, PICK_TOTAL, NULL, 0, NULL, NULL,
						&d, &err);
		if (!rc)
			rc = noise_model_fit(&d, &a, &m);
		if (!rc) {
			/* the hostname is the database's (a merged node's BENCHDB_NODE): escaped */
			char *host = escape_controls(si.hostname);
			noise_model_describe(&m, &sb);
			printf("system %lld (%s): %s\n", (long long)runs[i].system_id, host, sb_str(&sb));
			free(host);
		} else {
			bd_error_print(RUNNER_PROG " noise", &err);
			status = EXIT_FAIL;
		}
		sb_free(&sb);
		noise_model_free(&m);
		noise_data_free(&d);
	}
done:
	free(runs);
	db_close(db);
	return status;
}
