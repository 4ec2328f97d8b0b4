/* report/main.c: `report` — the command table. Adding a command is one file (cmd_<name>.c) and
 * one row. With no command (or only options) it prints the latest run's tables, like `report
 * table`; options may come before the command (opt_dispatch); `report --compare IMPL` is
 * `report compare --baseline IMPL`. */
#include "cli.h"

#define REPORT_COMMANDS(X)                                                                         \
	X(table, "a run's cases as tables (the default command)")                                  \
	X(runs, "list the runs in the database")                                                   \
	X(compare, "speedups against a baseline impl or run, with CIs and a summary")              \
	X(warmup, "what 0/1/2/5 warm-up iterations would have given, from stored samples")         \
	X(regress, "per-case verdicts between two runs; exit 1 on a regression")                   \
	X(history, "one case (or a filter) across every run, with step changes")                   \
	X(changes, "change points in every case's history; exit 1 when the newest runs are slower")  \
	X(site, "the database as a static web site (history, change points, runs, compare)")     \
	X(plot, "charts through gnuplot (PNG and SVG)")                                            \
	X(writeup, "a markdown document with tables and charts")                                   \
	X(export, "raw samples or per-case statistics as CSV or JSON")                             \
	X(nodes, "node-to-node consistency of the same cases; exit 1 when a node is out of bounds") \
	/* a new command: cmd_<name>.c and a row above this line */

REPORT_COMMANDS(CLI_DECLARE)

static const struct opt_command commands[] = {REPORT_COMMANDS(CLI_ROW){NULL, NULL, NULL}};

int main(int argc, char **argv)
{
	static const struct cli_shorthand compare = {"--compare", "compare", "--baseline"};
	static const struct cli_program report = {
		.name = "report", .version = BENCHDB_VERSION, .commands = commands,
		.summary = "Turn a benchdb database into tables. Without a command: `report table`.",
		.example_before = "--db x.db runs", .example_after = "runs --db x.db",
		.fallback = &commands[0],   /* table */
		.shorthand = &compare,
	};
	return cli_main(&report, argc, argv);
}
