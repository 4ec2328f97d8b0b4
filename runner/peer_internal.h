/* runner/peer_internal.h: what the peer module's parts share — peer_protocol.c (the output lines),
 * peer_env.c (the case as environment variables), peer_process.c (starting, watching and
 * stopping the peer's processes) and peer.c (a case, start to finish). Not for use outside
 * runner/peer*.c and their tests. */
#ifndef BENCHDB_PEER_INTERNAL_H
#define BENCHDB_PEER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/* The runner's environment without the BENCHDB_* names the runner sets, plus the case's
 * parameters: every parameter of its suite as BENCHDB_<KEY> in canonical text
 * (schemas/peer-protocol.md). BD_ENOMEM when an allocation failed; free e with peer_env_free
 * either way. */
int peer_env_build(const struct sweep_case *c, struct peer_env *e);
void peer_env_free(struct peer_env *e);

/* ---- the processes (peer_process.c) --------------------------------------------------------- */

/* How long a peer may take to exit after SIGTERM (timeout, interrupt) before SIGKILL. */
#define PEER_TERM_GRACE_NS 2000000000LL

/* One run of a peer's command, from start to the end of its processes. */
struct peer_run {
	struct strbuf out;                  /* stdout, whole */
	char err[PEER_STDERR_TAIL];         /* the last bytes of stderr */
	size_t err_len;
	int wstatus;                        /* waitpid's, valid when exited */
	int exited, timed_out, interrupted, overflow;
	char start_error[256];              /* why the peer could not be started */
	size_t scanned;                     /* stdout scanned for progress up to here */
	int64_t iters_seen;
};

/* Start the peer (`/bin/sh -c COMMAND` in dir, environment envp) and read it until it exits,
 * times out, overflows or the runner is interrupted; its processes are gone and the child reaped
 * when this returns. total: warm-up + measured iterations, for on_iteration (may be NULL). */
void peer_process_run(const struct sweep_peer *peer, const char *dir, char **envp, int64_t total,
		      struct peer_run *r,
		      void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx);

#endif
