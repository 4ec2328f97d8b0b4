/* runner/main.c: `runner` — the command table. Adding a command is one file and one row. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "error.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"run", cmd_run, "run a sweep and store every case in the database"},
	{"list", cmd_list, "show the cases a sweep expands to, without running anything"},
	{"sysinfo", cmd_sysinfo, "show what a run records about this machine and build"},
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: runner COMMAND [options]\n\n"
		     "Run transformer benchmarks and keep every run in a SQLite database.\n\n"
		     "commands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->help);
	fprintf(out, "\n'runner COMMAND --help' describes a command's options.\n");
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
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "runner: unknown command '%s' (valid:", argv[1]);
	for (const struct command *c = commands; c->name; c++)
		fprintf(stderr, "%s %s", c == commands ? "" : ",", c->name);
	fprintf(stderr, ")\n");
	return EXIT_USAGE;
}
