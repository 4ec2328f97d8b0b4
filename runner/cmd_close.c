/* runner/cmd_close.c: `runner close RUN` — end a run whose runner is gone (kill -9, a crash, a
 * lost machine) as `interrupted`, at its last heartbeat. A run whose runner is alive, or one that
 * nothing tells about (stored before schema 7), is closed only with --force. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opt.h"

int cmd_close(struct cmd_line *cl)
{
	const char *db_path = BENCHDB_DEFAULT_DB;
	long busy_timeout_s = DB_BUSY_TIMEOUT_DEFAULT_S;
	int force = 0;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database (default " BENCHDB_DEFAULT_DB ")", &db_path},
		{"force", 0, OPT_FLAG, NULL, "close it although its runner looks alive or cannot be told",
		 &force},
		RUNNER_OPT_BUSY_TIMEOUT(&busy_timeout_s),
		{0}};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "close", "[--db PATH] [--force] [--busy-timeout SECONDS] RUN",
		"Mark a run that is still `running` but whose runner is gone (`report runs` shows it as\n"
		"`abandoned`) as `interrupted`, ended at its last heartbeat. Its stored cases stay; `runner\n"
		"run SWEEP.yaml --resume RUN` continues it instead."};
	int npos = 0;
	char **argv = NULL;   /* the positional arguments */
	int status = opt_parse_command(cl, specs, &usage, 1, 1, &argv, &npos);
	if (status >= 0 || (status = runner_busy_timeout("close", busy_timeout_s)) >= 0)
		return status;
	struct db *db = NULL;
	struct bd_error err;
	int64_t run_id = 0;
	int locked = 0;
	char why[300];
	status = EXIT_OK;
	if (db_open(db_path, 0, &db, &err) || db_run_resolve_one(db, argv[0], &run_id, &err)) {
		bd_error_print(RUNNER_PROG " close", &err);
		status = err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto done;
	}
	/* looked at twice: without a lock (a refusal waits for no one), then again inside the
	 * transaction that closes it, so that a resume taking the run over meanwhile is not ended
	 * under it */
	for (int pass = 0; pass < 2; pass++) {
		if (pass && db_run_takeover_begin(db, &err)) {
			bd_error_print(RUNNER_PROG " close", &err);
			status = EXIT_FAIL;
			goto done;
		}
		locked = pass;
		int live = db_run_liveness(db, run_id, why, sizeof(why));
		if (live == RUN_LIVENESS_ENDED) {
			fprintf(stderr, "runner close: run %lld is not running: nothing to close\n",
				(long long)run_id);
			status = EXIT_FAIL;
			goto done;
		}
		if (!force && live != RUN_LIVENESS_DEAD) {
			fprintf(stderr, "runner close: run %lld %s; pass --force to close it anyway\n",
				(long long)run_id, live == RUN_LIVENESS_ALIVE ? "is alive"
				: why[0] ? "cannot be told alive or gone"
				: "has no runner on record (before schema 7)");
			if (why[0])
				fprintf(stderr, "runner close: %s\n", why);
			status = EXIT_FAIL;
			goto done;
		}
	}
	if (db_run_close(db, run_id, &err) || (locked = 0, db_run_takeover_end(db, 1, &err))) {
		bd_error_print(RUNNER_PROG " close", &err);
		status = EXIT_FAIL;
		goto done;
	}
	printf("run %lld closed: interrupted%s%s%s\n", (long long)run_id, why[0] ? " (" : "", why,
	       why[0] ? ")" : "");
done:
	if (locked)
		db_run_takeover_end(db, 0, NULL);
	db_close(db);
	return status;
}
