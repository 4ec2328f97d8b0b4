/* runner/commands.h: the `runner` command table's handlers (one file each: cmd_<name>.c). */
#ifndef BENCHDB_RUNNER_COMMANDS_H
#define BENCHDB_RUNNER_COMMANDS_H

#include "db.h"

#define RUNNER_PROG "runner"

/* Each returns the exit status (enum bd_exit, or 130 after an interrupt). argv[0] is the
 * command name. */
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_sysinfo(int argc, char **argv);

/* Shared by run --dry-run and list: print what the sweep expands to. */
struct sweep;
struct sweep_cases;
void print_case_list(const struct sweep *s, const struct sweep_cases *cases);

#endif
