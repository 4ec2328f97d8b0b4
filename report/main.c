/* report/main.c: `report` — the command table. With no command (or only options) it prints the
 * latest run's tables, like `report table`; options may come before the command (opt_dispatch). */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "opt.h"
#include "report.h"

static const struct opt_command commands[] = {
	{"table", cmd_table, "a run's cases as tables (the default command)"},
	{"runs", cmd_runs, "list the runs in the database"},
	{"compare", cmd_compare, "speedups against a baseline impl or run, with CIs and a summary"},
	{"warmup", cmd_warmup, "what 0/1/2/5 warm-up iterations would have given, from stored samples"},
	{"regress", cmd_regress, "per-case verdicts between two runs; exit 1 on a regression"},
	{"history", cmd_history, "one case (or a filter) across every run, with step changes"},
	{"plot", cmd_plot, "charts through gnuplot (PNG and SVG)"},
	{"writeup", cmd_writeup, "a markdown document with tables and charts"},
	{"export", cmd_export, "raw samples or per-case statistics as CSV or JSON"},
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: report [options] [COMMAND] [options]\n\n"
		     "Turn a benchdb database into tables. Without a command: `report table`.\n\n"
		     "commands:\n");
	for (const struct opt_command *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->help);
	fprintf(out, "\n'report COMMAND --help' describes a command's options. Options may also come\n"
		     "before the command: 'report --db x.db runs' is 'report runs --db x.db'.\n");
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("report (benchdb) %s\n", BENCHDB_VERSION);
		return EXIT_OK;
	}
	/* `report [options] --compare IMPL [options]` is `report compare --baseline IMPL [options]`. */
	for (int i = 1; argc >= 2 && argv[1][0] == '-' && i < argc; i++) {
		if (strcmp(argv[i], "--compare") && strncmp(argv[i], "--compare=", 10))
			continue;
		char *args[argc + 2];
		int n = 0;
		args[n++] = "compare";
		for (int j = 1; j < argc; j++) {
			if (j != i) {
				args[n++] = argv[j];
			} else if (argv[j][9] == '=') {
				args[n++] = "--baseline";
				args[n++] = argv[j] + 10;
			} else {
				args[n++] = "--baseline";   /* its value follows (missing: compare says so) */
			}
		}
		args[n] = NULL;
		return cmd_compare(n, args);
	}
	return opt_dispatch(REPORT_PROG, commands, &commands[0], argc, argv);
}
