/* runner/main.c: `runner` — the command table. Adding a command is one file and one row. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "error.h"
#include "opt.h"

static const struct opt_command commands[] = {
	{"run", cmd_run, "run a sweep and store every case in the database"},
	{"list", cmd_list, "show the cases a sweep expands to, without running anything"},
	{"sysinfo", cmd_sysinfo, "show what a run records about this machine and build"},
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: runner [options] COMMAND [options]\n\n"
		     "Run transformer benchmarks and keep every run in a SQLite database.\n\n"
		     "commands:\n");
	for (const struct opt_command *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->help);
	fprintf(out, "\n'runner COMMAND --help' describes a command's options. Options may also come\n"
		     "before the command: 'runner --db x.db run s.yaml' is 'runner run --db x.db s.yaml'.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("runner (benchdb) %s\n", BENCHDB_VERSION);
		return EXIT_OK;
	}
	return opt_dispatch(RUNNER_PROG, commands, NULL, argc, argv);
}
