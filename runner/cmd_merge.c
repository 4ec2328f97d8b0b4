/* runner/cmd_merge.c: `runner merge --db OUT.db IN.db...` — bring the databases of many nodes
 * (or of the shards of one sweep) into one, one transaction per input (db_merge). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "db.h"
#include "opt.h"

/* Set by SIGINT, SIGTERM, SIGHUP: the input being merged is rolled back, its temporary copy
 * removed, and the rest not started. */
static volatile sig_atomic_t merge_stop;

static void on_signal(int sig)
{
	(void)sig;
	merge_stop = 1;
}

int cmd_merge(struct cmd_line *cl)
{
	const char *db_path = BENCHDB_DEFAULT_DB;
	long busy_timeout_s = DB_BUSY_TIMEOUT_DEFAULT_S;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database to merge into (default bench.db; created if "
		 "missing)", &db_path},
		RUNNER_OPT_BUSY_TIMEOUT(&busy_timeout_s),
		{0},
	};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "merge", "[options] IN.db...",
		"Import every run of the given benchdb databases — systems, cases, samples — into one,\n"
		"one transaction per input. Runs keep their uuid, so merging a database again imports\n"
		"nothing new (or only what its runs gained since); systems are matched by fingerprint.\n"
		"A run whose uuid is already there must be the same run (sweep, start, machine, shard,\n"
		"group, label, and the cases both hold, samples included): another one is refused with\n"
		"what differs. Each input's line says what was added, skipped and refused. Inputs\n"
		"from an older benchdb are read through a migrated temporary copy and never written.\n"
		"Exit status: 0 when every input was imported, 1 when one (or a run of one) could not\n"
		"be (it is named, and the rest is still imported), 2 for a bad option, 130 when a\n"
		"signal stopped it (the input being merged rolled back, the later ones not started;\n"
		"a signal after the last input was committed stops nothing, and the status is 0)."};
	struct db *db = NULL;
	struct bd_error err;
	int npos = 0, status, failed = 0, refused = 0, rolled_back = 0;
	char **argv = NULL;   /* the positional arguments */
	if ((status = opt_parse_command(cl, specs, &usage, 1, 1 << 20, &argv, &npos)) >= 0 ||
	    (status = runner_busy_timeout("merge", busy_timeout_s)) >= 0)
		return status;
	if (db_open(db_path, DB_CREATE, &db, &err)) {
		bd_error_print("runner merge", &err);
		return EXIT_FAIL;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: a wait is cut short */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct db_merge_counts all = {0};
	int i;
	for (i = 0; i < npos && !merge_stop; i++) {
		struct db_merge_counts n;
		if (db_merge(db, argv[i], &merge_stop, &n, &err)) {
			if (err.code == BD_EINTR) {   /* this input rolled back; the loop ends here */
				rolled_back = 1;
				failed++;
				i++;
				break;
			}
			bd_error_print("runner merge", &err);
			db_merge_counts_clear(&n);
			failed++;
			continue;
		}
		printf("%s: added %lld runs, %lld cases, %lld samples, %lld systems; skipped %lld runs "
		       "and %lld cases already present; %lld runs ended since; refused %lld runs\n",
		       argv[i], (long long)n.runs, (long long)n.cases, (long long)n.samples,
		       (long long)n.systems, (long long)n.runs_present, (long long)n.cases_present,
		       (long long)n.runs_updated, (long long)n.runs_refused);
		if (n.refused) {   /* one line per run: the uuid is another run's here */
			for (char *line = strtok(n.refused, "\n"); line; line = strtok(NULL, "\n"))
				fprintf(stderr, "runner merge: %s: refused %s\n", argv[i], line);
			refused++;
		}
		all.runs += n.runs;
		all.cases += n.cases;
		all.runs_refused += n.runs_refused;
		db_merge_counts_clear(&n);
	}
	printf("merged %d of %d databases into %s: added %lld runs, %lld cases; refused %lld runs\n",
	       i - failed, npos, db_path, (long long)all.runs, (long long)all.cases,
	       (long long)all.runs_refused);
	db_close(db);
	/* A signal that came after the last input was committed stopped nothing: every input is in,
	 * and the status says so (a merge is all of an input or nothing of it, and the exit status
	 * must tell which). One that came between inputs left the earlier ones merged. */
	if (merge_stop && (rolled_back || i < npos)) {
		if (rolled_back)
			fprintf(stderr, "runner merge: interrupted: %s rolled back (its temporary copy "
				"removed), the %d after it not merged\n", argv[i - 1], npos - i);
		else
			fprintf(stderr, "runner merge: interrupted between inputs: the first %d "
				"done, the %d after them not started\n", i, npos - i);
		return EXIT_INTERRUPTED;
	}
	if (merge_stop)
		fprintf(stderr, "runner merge: a stop signal came after the last input was merged: "
			"nothing was left to stop\n");
	return failed || refused ? EXIT_FAIL : EXIT_OK;
}
