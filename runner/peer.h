/* runner/peer.h: cases run by an external implementation — a sweep's `peers:` entry, a command
 * that prints its own per-iteration, per-phase timings in the line protocol of
 * schemas/peer-protocol.md. A peer case is stored like any other: same case key, same figures. */
#ifndef BENCHDB_PEER_H
#define BENCHDB_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "measure.h"
#include "sweep.h"

/* The protocol versions this runner reads (the `benchdb-peer N` header line): 1 and 2. A peer run
 * one process per case gets BENCHDB_PEER_PROTOCOL=1 (for the version-1 peers that check it) and
 * BENCHDB_PEER_PROTOCOL_MAX=2; a persistent peer speaks 2. */
#define PEER_PROTOCOL_VERSION 1
#define PEER_PROTOCOL_MAX 2
/* Bytes of the peer's stderr kept for the reason of a failed case (the last ones). */
#define PEER_STDERR_TAIL 2048
/* Bytes of the `info {...}` object with its nul: what cases.impl_info holds for a case. */
#define PEER_INFO_MAX 2048
_Static_assert(PEER_INFO_MAX == sizeof(((struct case_result *)0)->impl_info),
	       "a peer's info object is stored in case_result.impl_info");
/* A peer that writes more than this to stdout is stopped (its case is an error). */
#define PEER_STDOUT_MAX (64u << 20)

/* What a `check` line says: the worst element of one comparison with a reference. */
struct peer_check {
	char stage[32];              /* "output", "dq", "loss", ... */
	double diff, bound;          /* |x - ref| at the worst element, its tolerance (> 0) */
	char where[128];             /* where the worst element is, as printed; "" none */
};

/* A peer's stdout after validation against its case. */
struct peer_output {
	int version;                 /* of the header (persistent: the process's), 0 before it */
	int status_line;             /* line of the `status` line, 0 when there is none */
	enum bd_status status;     /* what the status line says (valid when status_line) */
	char reason[512];            /* the status line's reason; "" for ok */
	char error[512];             /* why the output is not valid; "" when it is */
	int truncated;               /* not valid only because it ends early: no header or no status
				      * line, every line before that well-formed */
	struct sample *samples;      /* `status ok` only: every (iteration, phase) of the case,
				      * iteration-major, warm-up first; malloc'd */
	size_t nsamples;
	int64_t param_bytes, peak_fwd_bytes, peak_bwd_bytes, peak_bytes; /* `memory`; -1 unknown */
	size_t ninfo;                /* `info KEY VALUE` lines (checked, not stored) */
	char impl_info[PEER_INFO_MAX]; /* the `info {...}` line's JSON object as printed; "" none */
	/* version 2 */
	size_t nchecks;              /* `check` lines */
	struct peer_check worst;     /* the one with the largest diff / bound (valid when nchecks) */
	int check_failed;            /* some diff > bound, or a diff that is not a number */
	int work_benchdb;            /* `work benchdb`: the built-in workload's figures */
	int64_t work_flops[PHASE_COUNT], work_bytes[PHASE_COUNT]; /* `work PHASE ...`; -1 unknown */
};

/* Parse a peer's whole stdout (len bytes) for the case p. Returns 0 when the output is valid —
 * a header, a status line last, and for `status ok` exactly one sample of every iteration
 * (warm-up included) and phase of p's pass — and BD_EINVAL otherwise, with out->error saying
 * which line is wrong and why ("line 4: 'sample 0 fwd x': ..."). Samples of a non-ok status are
 * dropped. Never prints. The caller frees out with peer_output_free (also after an error). */
int peer_parse_output(const char *text, size_t len, const struct case_params *p,
		      struct peer_output *out);
/* The same for one case of a persistent peer: text is that case's lines, the process's header
 * already read (version; 0: it is not, the process's first case, and text starts with it); the
 * first of them is line first_line of the process's output (for messages). paced: the case was
 * paced (BENCHDB_PACED), so its `ready` lines are valid (and say nothing to the parse). */
int peer_parse_case_block(const char *text, size_t len, const struct case_params *p, int version,
			  int paced, size_t first_line, struct peer_output *out);
void peer_output_free(struct peer_output *out);

/* FLOPs and bytes as the built-in workload of the suite computes them (the first registered one
 * on the case's device, else on any device: the figures do not depend on the impl); -1 (unknown)
 * when the suite has no workload in this build. */
void peer_figures(const struct case_params *p, struct wl_figures *f);

/* The running processes of persistent peers, from one of their cases to the next: the ones of the
 * peers whose cases run now, and each kept peer's (`persistent: keep`). */
struct peer_session;

struct peer_session *peer_session_new(void);   /* NULL when out of memory */
/* Before the cases of the n peers next (none: built-in cases only) are measured: stop the
 * processes that are neither next's nor kept (each: its stdin closed, 2 s to exit, then stopped
 * as at a timeout), so that an idle peer holds no memory or threads meanwhile unless the sweep
 * asked to keep it. Accepts NULL. */
void peer_session_yield(struct peer_session *s, const struct sweep_peer *const *next, size_t n);
/* Stop every process of the session, as above, and free it. Accepts NULL. */
void peer_session_free(struct peer_session *s);

/* Run case c through its peer (c->peer must be set): `/bin/sh -c COMMAND` in the directory of
 * sweep_path, with the case's parameters in BENCHDB_* environment variables and stdin from
 * /dev/null — or, for a persistent peer, as a `case {JSON}` line to the session's process
 * (started when it is not the peer's; without a session, a process for this case alone) —
 * stdout parsed with peer_parse_output, the tail of stderr kept for the reason. Fills res like
 * measure_case does and, like it, never fails as a function: a peer that cannot start, fails,
 * times out, prints something malformed or fails its own check is a STATUS_ERROR with the
 * reason. When measure_interrupted is set meanwhile, the peer's processes are stopped and
 * res->interrupted is set. on_iteration (may be NULL) sees the iterations as their samples
 * arrive. The caller frees res->samples. */
void peer_measure_case(const struct sweep_case *c, const char *sweep_path,
		       struct peer_session *session, struct case_result *res,
		       void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx);

/* A persistent peer's case measured in steps, between other cases' steps (interleaving,
 * cmd_run.c), as case_run_* does for a built-in one. peer_run_begin sends the case — paced:
 * with BENCHDB_PACED true, so that the peer sets up, validates, prints `ready` and waits — and
 * returns NULL when the case ended there (*res complete: a failure, or a peer that ran the whole
 * case without pausing); no other process of the session is stopped. peer_run_step has the peer
 * run up to count more iterations (`go N`, the warm-up first) and returns 1 once the case has
 * ended (its status line, a failure or an interrupt: res says which); peer_run_end completes
 * *res (its elapsed time: the runner's time in the case's calls) and frees the run. The case's
 * timeout counts its own time, not the pauses. */
struct peer_run;
struct peer_run *peer_run_begin(const struct sweep_case *c, const char *sweep_path,
				struct peer_session *session, int paced, struct case_result *res,
				void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx);
int peer_run_step(struct peer_run *r, int64_t count);
void peer_run_end(struct peer_run *r);

/* Make text from a peer printable in place: control characters (C0, DEL, C1), bidirectional
 * formatting characters (escape_hidden_len: each of their bytes) and bytes that are not valid
 * UTF-8 become '?', so that no escape sequence reaches a terminal or a report, and no text is
 * shown reordered. */
void peer_text_clean(char *s);

#endif
