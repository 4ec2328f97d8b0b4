/* runner/main.c: `runner` — the command table. Adding a command is one file (cmd_<name>.c) and
 * one row. */
#include "cli.h"

#define RUNNER_COMMANDS(X)                                                                         \
	X(run, "run a sweep and store every case in the database")                                 \
	X(list, "show the cases a sweep expands to, without running anything")                     \
	X(sysinfo, "show what a run records about this machine and build")                         \
	X(merge, "import the runs of other benchdb databases (other nodes, shards) into one")       \
	X(slurm, "write (and submit) a Slurm job: a sweep's shards, or the sweep on every node")     \
	X(kube, "write a Kubernetes Indexed Job: a sweep's shards, or the sweep on every node")      \
	X(migrate, "upgrade a database made by an older benchdb to this build's schema")           \
	X(close, "end a run whose runner is gone (kill -9, a crash) as interrupted")               \
	X(noise, "fold the runs stored into the noise between runs that verdicts read")           \
	/* a new command: cmd_<name>.c and a row above this line */

RUNNER_COMMANDS(CLI_DECLARE)

static const struct opt_command commands[] = {RUNNER_COMMANDS(CLI_ROW){NULL, NULL, NULL}};

int main(int argc, char **argv)
{
	static const struct cli_program runner = {
		.name = "runner", .version = BENCHDB_VERSION, .commands = commands,
		.summary = "Run transformer benchmarks and keep every run in a SQLite database.",
		.example_before = "--db x.db run s.yaml", .example_after = "run --db x.db s.yaml",
	};
	return cli_main(&runner, argc, argv);
}
