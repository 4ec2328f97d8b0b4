/* runner/peer_internal.h: what the peer module's parts share — peer_protocol.c (the output lines),
 * peer_env.c (the case as environment variables), peer_process.c (starting, watching and
 * stopping the peer's processes) and peer.c (a case, start to finish). Not for use outside
 * runner/peer*.c and their tests. */
#ifndef BENCHDB_PEER_INTERNAL_H
#define BENCHDB_PEER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "cpu_wait.h"
#include "peer.h"
#include "strbuf.h"

/* "fwd, bwd" (sep ", ") or "fwd bwd" (sep " "): the phases in the mask, in phase order. */
void peer_phase_list(unsigned phases, const char *sep, char *buf, size_t size);

/* ---- the environment (peer_env.c) ----------------------------------------------------------- */

struct peer_env {
	char **vars;   /* NULL-terminated, each "NAME=VALUE" malloc'd */
	size_t n, cap;
	int failed;    /* an allocation failed */
};

/* The environment of peer's process (schemas/peer-protocol.md, "Environment"): with_environ, the
 * runner's own without the BENCHDB_* names the runner sets or peer's parameters take; then the
 * protocol's variables (one process per case, or persistent); then, when c is given, the case's
 * parameters: every parameter of its suite as BENCHDB_<KEY> in canonical text, and its peer
 * parameters. BD_ENOMEM when an allocation failed; free e with peer_env_free either way. */
int peer_env_build(const struct sweep_case *c, const struct sweep_peer *peer, int persistent,
		   int with_environ, struct peer_env *e);
void peer_env_free(struct peer_env *e);

/* ---- the processes (peer_process.c) --------------------------------------------------------- */

/* How long a peer may take to exit after its stdin closed (persistent), and after SIGTERM
 * (timeout, interrupt), before the guardian kills everything below it. */
#define PEER_TERM_GRACE_NS 2000000000LL

/* A running peer: its guardian (the parent and process-group leader of the peer's processes) and
 * the pipes to it. */
struct peer_proc {
	pid_t pid;                          /* the guardian; -1 when none runs */
	int in_fd, out_fd, err_fd;          /* stdin's write end (persistent; else -1), stdout's and
					     * stderr's read ends */
	struct strbuf out;                  /* stdout from the current case's first line on */
	size_t scanned;                     /* out scanned for lines up to here */
	size_t case_end;                    /* out's bytes up to the case's status line, 0 while it
					     * has not come */
	int case_refused;                   /* persistent: case_end is at a line no output may hold
					     * (a nul byte, no line kind), not at a status line */
	int ready;                          /* a paced case's `ready` line came and has not been
					     * answered (peer_proc_read stops scanning there) */
	int64_t iters_at_ready;             /* iters_seen when it came */
	size_t lines_before;                /* stdout lines before out (persistent: earlier cases) */
	size_t ncases;                      /* cases begun in this process */
	char err[PEER_STDERR_TAIL];         /* the last bytes of stderr (since the case began) */
	size_t err_len;
	int64_t iters_seen;                 /* progress of the case: sample lines' iterations */
	int64_t started_ns, case_started_ns;
	struct cpu_wait_tree wait;          /* the process tree's CPU wait since the case began */
	int exited, wstatus;                /* reaped, and waitpid's status (the peer's) */
	char start_error[256];              /* why the peer could not be started */
};

/* What ended a peer_proc_read. */
enum peer_read {
	PEER_READ_ENDED,        /* the peer's processes are gone and its output read */
	PEER_READ_STATUS,       /* until_status: the case's status line came */
	PEER_READ_READY,        /* until_status: a `ready` line came (a paced case) */
	PEER_READ_TIMEOUT,      /* the deadline passed */
	PEER_READ_INTERRUPTED,  /* measure_interrupted was set */
	PEER_READ_OVERFLOW,     /* more than PEER_STDOUT_MAX in the case's output */
	PEER_READ_CLOSED,       /* until_status: stdout closed before the status line, and the
				 * peer still ran a drain period later (a crash, not an exit) */
};

/* Start `/bin/sh -c command` in dir with environment envp, below a new guardian; stdin a pipe
 * (persistent) or /dev/null. 0, or BD_EIO with pr->start_error; free pr with peer_proc_free
 * either way. */
int peer_proc_start(struct peer_proc *pr, const char *command, const char *dir, char **envp,
		    int persistent);
/* Whether the peer still runs (its guardian has not exited). */
int peer_proc_alive(struct peer_proc *pr);
/* Whether the line from line (up to its '\n' or end) is one the protocol ignores anywhere: blank
 * or a comment ('#' after leading white space). A partial line counts as far as it goes. */
int peer_line_ignored(const char *line, const char *end);
/* Whether every line of [text, end) is one peer_line_ignored ignores (1 for no text). */
int peer_text_ignored(const char *text, const char *end);
/* Whether stdout has output past the scan other than blank and comment lines: after the last
 * line scanned (a `ready` line stops the scan), what out holds and what the pipe holds now (read
 * into out). A paced peer waiting for its `go` line prints nothing of substance; output then
 * means it ran on without waiting. */
int peer_proc_output_waiting(struct peer_proc *pr);
/* Write text to the peer's stdin (persistent). BD_EIO when the peer has closed it or is gone. */
int peer_proc_send(struct peer_proc *pr, const char *text, size_t len);
/* A new case of a persistent peer: drops the previous case's output (up to its status line) and
 * stderr tail, restarts the progress and the CPU-wait reading. */
void peer_proc_case_begin(struct peer_proc *pr);
/* Read stdout and stderr until one of enum peer_read happens; the CPU wait of the peer's tree is
 * sampled meanwhile. until_status (a persistent peer's case): stop at its status line, or at a
 * `ready` line, which also stops the scan of the lines until the caller clears pr->ready (it
 * answered with `go N`). total: warm-up + measured iterations, for on_iteration (may be NULL). */
enum peer_read peer_proc_read(struct peer_proc *pr, int64_t deadline, int until_status,
			      int64_t total,
			      void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx);
/* End the peer: its stdin closed (a persistent peer exits then), gently: up to PEER_TERM_GRACE_NS
 * to exit; then SIGTERM to its process group and another grace; then the guardian kills every
 * process below it. The guardian is reaped: pr->exited, pr->wstatus. */
void peer_proc_stop(struct peer_proc *pr, int gently);
void peer_proc_free(struct peer_proc *pr);

#endif
