/* common/cli.h: a program made of commands — `PROG [options] COMMAND [options]` — run from its
 * command table. Each program's main.c is the table and one call to cli_main(); each command is
 * `int cmd_<name>(struct cmd_line *line)` in cmd_<name>.c, so adding one is a file and a row:
 *
 *     #define PROG_COMMANDS(X) X(run, "run a sweep") X(list, "show the cases of a sweep")
 *     PROG_COMMANDS(CLI_DECLARE)
 *     static const struct opt_command commands[] = {PROG_COMMANDS(CLI_ROW){0}};
 */
#ifndef BENCHDB_CLI_H
#define BENCHDB_CLI_H

#include "opt.h"

/* For a commands list X(name, help) ...: the handler's prototype, and its table row. */
#define CLI_DECLARE(name, help) int cmd_##name(struct cmd_line *line);
#define CLI_ROW(name, help) {#name, cmd_##name, help},

/* `PROG [options] --OPTION VALUE [options]` is `PROG COMMAND [options] --AS VALUE [options]`
 * (report: --compare IMPL is compare --baseline IMPL). Only when the first argument is an option. */
struct cli_shorthand {
	const char *option;    /* with its dashes: "--compare" */
	const char *command;   /* a row of the table */
	const char *as;        /* with its dashes: "--baseline" */
};

struct cli_program {
	const char *name;             /* "report" */
	const char *version;          /* printed by --version as "NAME (benchdb) VERSION" */
	const char *summary;          /* the paragraph under the usage line */
	const char *example_before;   /* options before the command, e.g. "--db x.db runs" ... */
	const char *example_after;    /* ... and the same after it: "runs --db x.db" */
	const struct opt_command *commands;   /* ends with a zeroed row */
	const struct opt_command *fallback;   /* runs without a command word; NULL: usage error */
	const struct cli_shorthand *shorthand;   /* NULL for none */
};

/* For a command whose output is a side show (runner run's summary: the sweep is in the
 * database): a closed pipe on standard output (`| head`, `| tail -0`: EPIPE) leaves its exit
 * status as it is. Any other failed write (a full disk, /dev/full) is still exit 1. */
void cli_stdout_pipe_may_close(void);

/* Run the command argv names (opt_dispatch), or print the program's usage: to stdout for
 * `help`, `--help` or `-h` as the first argument (exit 0), to stderr when there is no argument and
 * no fallback (exit 2). `--version` as the first argument prints the version. Returns the exit
 * status, a failure (1, with the reason on stderr) when standard output could not be written
 * or closed. */
int cli_main(const struct cli_program *p, int argc, char **argv);

#endif
