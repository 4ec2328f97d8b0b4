/* runner/cmd_merge.c: `runner merge --db OUT.db IN.db...` — bring the databases of many nodes
 * (or of the shards of one sweep) into one, one transaction per input (db_merge). */
#include <stdio.h>

#include "commands.h"
#include "db.h"
#include "opt.h"

int cmd_merge(struct cmd_line *cl)
{
	const char *db_path = BENCHDB_DEFAULT_DB;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database to merge into (default bench.db; created if "
		 "missing)", &db_path},
		{0},
	};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "merge", "[options] IN.db...",
		"Import every run of the given benchdb databases — systems, cases, samples — into one,\n"
		"one transaction per input. Runs keep their uuid, so merging a database again imports\n"
		"nothing new (or only what its runs gained since); systems are matched by fingerprint.\n"
		"Inputs from an older benchdb are read through a migrated temporary copy and never\n"
		"written. Exit status: 0 when every input was imported, 1 when one could not be (it is\n"
		"named, and the others are still imported), 2 for a bad option."};
	struct db *db = NULL;
	struct bd_error err;
	int npos = 0, status, failed = 0;
	char **argv = NULL;   /* the positional arguments */
	if ((status = opt_parse_command(cl, specs, &usage, 1, 1 << 20, &argv, &npos)) >= 0)
		return status;
	if (db_open(db_path, DB_CREATE, &db, &err)) {
		bd_error_print("runner merge", &err);
		return EXIT_FAIL;
	}
	struct db_merge_counts all = {0};
	for (int i = 0; i < npos; i++) {
		struct db_merge_counts n;
		if (db_merge(db, argv[i], &n, &err)) {
			bd_error_print("runner merge", &err);
			failed++;
			continue;
		}
		printf("%s: %lld runs imported (%lld already present), %lld cases, %lld samples, "
		       "%lld new systems\n", argv[i], (long long)n.runs, (long long)n.runs_present,
		       (long long)n.cases, (long long)n.samples, (long long)n.systems);
		all.runs += n.runs;
		all.cases += n.cases;
	}
	printf("merged %d of %d databases into %s: %lld runs, %lld cases\n", npos - failed, npos,
	       db_path, (long long)all.runs, (long long)all.cases);
	db_close(db);
	return failed ? EXIT_FAIL : EXIT_OK;
}
