/* runner/commands.h: what the `runner` commands (one file each: cmd_<name>.c) share. */
#ifndef BENCHDB_RUNNER_COMMANDS_H
#define BENCHDB_RUNNER_COMMANDS_H

#include "db.h"

#define RUNNER_PROG "runner"
/* Exit status after SIGINT/SIGTERM, as shells report a signal death (128 + SIGINT). */
#define EXIT_INTERRUPTED 130

/* The handlers, cmd_run, cmd_list, ..., are declared by the command table (main.c); each takes
 * its command line (common/opt.h) and returns the exit status (enum bd_exit, or 130 after an
 * interrupt). */

/* --busy-timeout: how long a command waits for another process's lock on its database, from the
 * open on (db_set_default_busy_timeout); every runner command that opens one takes it. */
#define RUNNER_OPT_BUSY_TIMEOUT(seconds)                                                           \
	{"busy-timeout", 0, OPT_INT, "SECONDS",                                                    \
	 "how long to wait for another process's lock, retrying (default 3600)", seconds}
/* Apply --busy-timeout: -1 when fine, else the usage exit status (the message printed). */
int runner_busy_timeout(const char *command, long seconds);

/* Shared by run --dry-run and list: print what the sweep expands to. cases: those to list; all:
 * the whole sweep's when cases are a shard's slice of it (each case numbered by its place in
 * all, the counts said of all), else NULL. */
struct sweep;
struct sweep_cases;
void print_case_list(const struct sweep *s, const struct sweep_cases *cases,
		     const struct sweep_cases *all);
/* --mem-limit of run and list: text (NULL: not given, *limit 0) as bytes; prints the error for
 * command and returns EXIT_USAGE when it is not a size, else -1. */
#include <stdint.h>
int mem_limit_option(const char *text, const char *command, int64_t *limit);
/* Apply a memory limit to the cases: every case when given (--mem-limit overrides the sweep),
 * else the CPU cases without a mem_limit of their own (the runner's default share); limit 0:
 * nothing. */
void cases_limit_memory(struct sweep_cases *cases, int64_t limit, int given);
/* The limit of a CPU case without mem_limit in the sweep or --mem-limit (run's, and list's
 * preview of it): DEFAULT_MEM_SHARE of the memory available now, so that no sweep drives the
 * machine into swap. */
#define DEFAULT_MEM_SHARE 0.8
int64_t default_mem_limit(void);
/* Shared by slurm and kube: " --label L --mem-limit M" (each when not NULL), shell-quoted, for
 * the runner command line their scripts write. */
struct strbuf;
void cluster_run_options(struct strbuf *sb, const char *label, const char *mem_limit);

#endif
