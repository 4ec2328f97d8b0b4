/* runner/commands.h: what the `runner` commands (one file each: cmd_<name>.c) share. */
#ifndef BENCHDB_RUNNER_COMMANDS_H
#define BENCHDB_RUNNER_COMMANDS_H

#include "db.h"

#define RUNNER_PROG "runner"

/* The handlers, cmd_run, cmd_list, ..., are declared by the command table (main.c); each takes
 * its command line (common/opt.h) and returns the exit status (enum bd_exit, or 130 after an
 * interrupt). */

/* Shared by run --dry-run and list: print what the sweep expands to. */
struct sweep;
struct sweep_cases;
void print_case_list(const struct sweep *s, const struct sweep_cases *cases);

#endif
