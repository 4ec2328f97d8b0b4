/* runner/peer.c: a case run by an external implementation (schemas/peer-protocol.md), start to
 * finish: the environment (peer_env.c), the processes (peer_process.c), the output checked
 * against the case (peer_protocol.c), and every outcome a status in struct case_result, as in
 * measure.c. A persistent peer's process lives in a struct peer_session from case to case (a
 * kept one's from its first case to the end of the invocation).
 */
#include "peer_internal.h"

#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "escape.h"
#include "workload.h"

/* peer.h */
void peer_figures(const struct case_params *p, struct wl_figures *f)
{
	const struct workload *any = NULL, *same = NULL;
	for (const struct workload *const *w = workloads; *w; w++) {
		if (!suite_is((*w)->suite, p->suite) || !(*w)->figures)
			continue;
		if (!any)
			any = *w;
		if (!same && (*w)->device == p->device)
			same = *w;
	}
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		f->flops[ph] = f->bytes[ph] = -1;
	f->param_bytes = f->param_count = -1;
	if (same || any)
		(same ? same : any)->figures(p, f);
}

/* The directory of the sweep file (the peer's working directory). */
static char *sweep_dir(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* peer.h */
void peer_text_clean(char *s)
{
	unsigned char *u = (unsigned char *)s;
	while (*u) {
		size_t len = *u < 0x80 ? 1 : (*u & 0xe0) == 0xc0 ? 2 : (*u & 0xf0) == 0xe0 ? 3
			     : (*u & 0xf8) == 0xf0 ? 4 : 0;
		size_t k = 1;
		while (k < len && (u[k] & 0xc0) == 0x80)
			k++;
		int c1 = len == 2 && u[0] == 0xc2 && u[1] < 0xa0;   /* U+0080..U+009F: C1 controls */
		/* what RFC 3629 refuses in a well-formed sequence: overlong forms (C0, C1, E0 under
		 * A0, F0 under 90), UTF-16 surrogates (ED from A0) and beyond U+10FFFF (F4 from 90,
		 * F5 on) */
		int refused = k == len && ((len == 2 && u[0] < 0xc2) || (u[0] == 0xe0 && u[1] < 0xa0) ||
					   (u[0] == 0xed && u[1] >= 0xa0) || (u[0] == 0xf0 && u[1] < 0x90) ||
					   (u[0] == 0xf4 && u[1] >= 0x90) || u[0] >= 0xf5);
		size_t hidden = k == len && !refused ? escape_hidden_len((char *)u, &(unsigned){0}) : 0;
		if (len == 1 && (*u < 0x20 || *u == 0x7f)) {
			*u++ = '?';
		} else if (hidden) {   /* a bidirectional formatting character: each byte a '?' */
			for (size_t b = 0; b < hidden; b++)
				*u++ = '?';
		} else if (!len || k < len || c1 || refused) {
			*u++ = '?';   /* a byte that starts no valid sequence: each alike */
		} else {
			u += len;
		}
	}
}

/* The stderr tail as one line ("a | b | c"), made printable (peer_text_clean), into out. */
static size_t stderr_line(const char *err, size_t len, char *out, size_t size)
{
	size_t n = 0;
	int at_line_start = 1;
	for (size_t i = 0; i < len && n + 4 < size; i++) {
		unsigned char ch = (unsigned char)err[i];
		if (ch == '\n' || ch == '\r') {
			at_line_start = 1;
			continue;
		}
		if (at_line_start && (ch == ' ' || ch == '\t'))
			continue;
		if (at_line_start && n) {
			memcpy(out + n, " | ", 3);
			n += 3;
		}
		at_line_start = 0;
		out[n++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	peer_text_clean(out);
	return n;
}

/* res->reason = msg, then as much of the end of the stderr tail as fits. */
static void fail_with_stderr(struct case_result *res, const struct peer_proc *pr, const char *msg)
{
	static const char sep[] = "; stderr: ";
	char tail[PEER_STDERR_TAIL * 2];
	size_t n = stderr_line(pr->err, pr->err_len, tail, sizeof(tail));
	size_t room = sizeof(res->reason) - 1, mlen = strlen(msg);
	res->status = STATUS_ERROR;
	if (!n || mlen + sizeof(sep) + 16 > room) {
		snprintf(res->reason, sizeof(res->reason), "%s", msg);
		return;
	}
	size_t avail = room - mlen - (sizeof(sep) - 1);
	const char *from = tail, *dots = "";
	if (n > avail) {
		from = tail + n - (avail - 3);
		while ((*from & 0xc0) == 0x80)   /* not in the middle of a UTF-8 character */
			from++;
		dots = "...";
	}
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s%s%s%s", msg, sep, dots, from);
	memcpy(res->reason, sb_str(&sb), sb.len < room ? sb.len + 1 : room);
	res->reason[room] = '\0';
	sb_free(&sb);
}

/* "" when the peer exited with status 0, else how it ended. */
static void exit_text(int wstatus, char *out, size_t size)
{
	out[0] = '\0';
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) > 128 && WEXITSTATUS(wstatus) - 128 < NSIG) {
		/* the shell of `sh -c COMMAND` (dash does not exec the command) tells a command
		 * killed by signal S (the OOM killer's SIGKILL: 137) as its exit status 128 + S */
		int code = WEXITSTATUS(wstatus);
		snprintf(out, size, "peer exited with status %d (128 + %d: how a shell reports a "
			 "command killed by signal %d, %s)", code, code - 128, code - 128,
			 strsignal(code - 128));
	} else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus)) {
		int code = WEXITSTATUS(wstatus);
		snprintf(out, size, "peer exited with status %d%s", code,
			 code == 127 ? " (command not found)" :
			 code == 126 ? " (command not executable, or its directory cannot be entered)" : "");
	} else if (WIFSIGNALED(wstatus)) {
		int sig = WTERMSIG(wstatus);
		snprintf(out, size, "peer killed by signal %d (%s)", sig, strsignal(sig));
	}
}

/* A version-2 case has the FLOPs and bytes its work lines state, none before. */
static void figures_unknown(struct case_result *res)
{
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		res->figures.flops[ph] = res->figures.bytes[ph] = -1;
	res->figures.param_bytes = res->figures.param_count = -1;
}

/* A valid output's results into res: status, reason, samples (moved), memory, impl_info; for
 * version 2 the check (max_diff, tolerance; a failed check or a missing required one is an
 * error, its samples dropped) and the work (FLOPs and bytes). */
static void output_take(const struct sweep_case *c, struct peer_output *po, struct case_result *res)
{
	const struct sweep_peer *peer = c->peer;
	res->status = po->status;
	snprintf(res->reason, sizeof(res->reason), "%s", po->reason);
	peer_text_clean(res->reason);
	memcpy(res->impl_info, po->impl_info, sizeof(res->impl_info));
	if (po->version >= 2 && po->work_benchdb) {
		peer_figures(&c->params, &res->figures);
	} else if (po->version >= 2) {   /* the peer's own figures, or none */
		figures_unknown(res);
		for (int ph = 0; ph < PHASE_COUNT; ph++) {
			res->figures.flops[ph] = (double)po->work_flops[ph];
			res->figures.bytes[ph] = (double)po->work_bytes[ph];
		}
	}
	if (po->param_bytes >= 0)
		res->figures.param_bytes = po->param_bytes;
	res->peak_fwd_bytes = po->peak_fwd_bytes;
	res->peak_bwd_bytes = po->peak_bwd_bytes;
	res->peak_bytes = po->peak_bytes;
	if (res->peak_bytes < 0)   /* the overall peak is at least each phase's */
		res->peak_bytes = po->peak_fwd_bytes > po->peak_bwd_bytes ? po->peak_fwd_bytes :
									 po->peak_bwd_bytes;
	if (po->nchecks) {
		res->max_diff = isnan(po->worst.diff) ? INFINITY : po->worst.diff;
		res->tolerance = po->worst.bound;
	}
	if (po->status != STATUS_OK)
		return;
	if (po->check_failed) {
		char where[160];
		peer_text_clean(po->worst.where);
		snprintf(where, sizeof(where), "%s%s", po->worst.where[0] ? " at " : "", po->worst.where);
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "peer check failed: %s differs from the "
			 "reference by %.3g (tolerance %.3g)%s", po->worst.stage, po->worst.diff,
			 po->worst.bound, where);
		return;
	}
	if (!po->nchecks && peer->check_required) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "peer '%s' printed no check line (check: "
			 "required)", peer->name);
		return;
	}
	res->stop_reason = "iters";
	res->samples = po->samples;
	res->nsamples = po->nsamples;
	po->samples = NULL;
	po->nsamples = 0;
	res->rse = case_result_rse(res, c->params.warmup);
}

/* The outcome of a peer's output: how (exit_text, "" for exit 0), the output parsed as ok or
 * not (rc, po). Returns 1 when the output was malformed (a persistent peer's process is then
 * no longer to be trusted). */
static int output_outcome(const struct sweep_case *c, const struct peer_proc *pr, int rc,
			  const char *how, struct peer_output *po, struct case_result *res)
{
	char msg[768];
	if (po->version >= 2)
		figures_unknown(res);
	if (rc && po->truncated && how[0]) {          /* it died before finishing its output */
		fail_with_stderr(res, pr, how);
	} else if (rc) {
		snprintf(msg, sizeof(msg), "malformed peer output: %s%s%s", po->error, how[0] ? "; " : "",
			 how);
		fail_with_stderr(res, pr, msg);
		return 1;
	} else if (po->status == STATUS_OK && how[0]) {
		snprintf(msg, sizeof(msg), "the peer printed 'status ok' but %s", how);
		fail_with_stderr(res, pr, msg);
	} else {
		output_take(c, po, res);
	}
	return 0;
}

/* A read that did not end with the case's output: timeout, overflow (an error with the stderr
 * tail) or interrupt (nothing stored). The peer has been stopped. */
static void read_failed(enum peer_read why, const struct sweep_peer *peer,
			const struct peer_proc *pr, struct case_result *res)
{
	char msg[256];
	if (why == PEER_READ_INTERRUPTED) {
		res->interrupted = 1;
		return;
	}
	if (why == PEER_READ_TIMEOUT)
		snprintf(msg, sizeof(msg), "peer '%s' timed out after %" PRId64 " s", peer->name,
			 peer->timeout_s);
	else
		snprintf(msg, sizeof(msg), "peer '%s' wrote more than %u MiB to stdout", peer->name,
			 PEER_STDOUT_MAX >> 20);
	fail_with_stderr(res, pr, msg);
}

/* One process for the case: started, read to its end, its output judged. */
static void measure_one(const struct sweep_case *c, const char *dir, char **envp,
			struct case_result *res,
			void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	const struct sweep_peer *peer = c->peer;
	const struct case_params *p = &c->params;
	struct peer_proc pr;
	struct peer_output po;
	char how[160];
	memset(&po, 0, sizeof(po));
	if (peer_proc_start(&pr, peer->command, dir, envp, 0)) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "cannot start peer '%s': %s", peer->name,
			 pr.start_error);
		goto done;
	}
	enum peer_read why = peer_proc_read(&pr, pr.started_ns + peer->timeout_s * 1000000000LL, 0,
					    p->warmup + p->iters, on_iteration, ctx);
	peer_proc_stop(&pr, why == PEER_READ_ENDED);
	res->cpu_wait = cpu_wait_tree_share(&pr.wait);
	if (why != PEER_READ_ENDED) {
		read_failed(why, peer, &pr, res);
		goto done;
	}
	exit_text(pr.wstatus, how, sizeof(how));
	int rc = peer_parse_output(sb_str(&pr.out), pr.out.len, p, &po);
	output_outcome(c, &pr, rc, how, &po, res);
done:
	peer_output_free(&po);
	peer_proc_free(&pr);
}

/* ---- persistent peers ------------------------------------------------------------------------- */

/* One persistent peer's running process. */
struct peer_slot {
	const struct sweep_peer *peer;   /* whose process runs; NULL: none */
	struct peer_proc proc;
	int version;                     /* of its header, once read; 0 before */
};

/* The processes of the persistent peers: one per kept peer (persistent: keep), and the ones of
 * the peers whose cases run now (several in an interleaved group). Each slot is allocated on its
 * own: a paced case holds its slot while others are added. */
struct peer_session {
	struct peer_slot **slots;
	size_t n;
};

struct peer_session *peer_session_new(void) { return calloc(1, sizeof(struct peer_session)); }

static void slot_end(struct peer_slot *t)
{
	if (!t->peer)
		return;
	peer_proc_stop(&t->proc, 1);
	peer_proc_free(&t->proc);
	t->peer = NULL;
	t->version = 0;
}

void peer_session_yield(struct peer_session *s, const struct sweep_peer *const *next, size_t n)
{
	for (size_t i = 0; s && i < s->n; i++) {
		const struct sweep_peer *peer = s->slots[i]->peer;
		int wanted = 0;
		for (size_t j = 0; j < n && !wanted; j++)
			wanted = next[j] == peer;
		if (peer && !wanted && peer->persistent != PEER_KEPT)
			slot_end(s->slots[i]);
	}
}

void peer_session_free(struct peer_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		slot_end(s->slots[i]);
		free(s->slots[i]);
	}
	free(s->slots);
	free(s);
}

/* The slot of peer's process in s, or a free one (NULL: out of memory). */
static struct peer_slot *slot_for(struct peer_session *s, const struct sweep_peer *peer)
{
	struct peer_slot *free_slot = NULL;
	for (size_t i = 0; i < s->n; i++) {
		if (s->slots[i]->peer == peer)
			return s->slots[i];
		if (!s->slots[i]->peer && !free_slot)
			free_slot = s->slots[i];
	}
	if (free_slot)
		return free_slot;
	struct peer_slot **grown = realloc(s->slots, (s->n + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	s->slots = grown;
	if (!(s->slots[s->n] = calloc(1, sizeof(**s->slots))))
		return NULL;
	return s->slots[s->n++];
}

/* The `case {JSON}` line of c: its variables (the environment a one-process peer gets, without
 * the runner's own) as a JSON object of strings, keys sorted, and BENCHDB_PACED "true" for a
 * paced case; malloc'd, NULL when out of memory. */
static char *case_line(const struct sweep_case *c, int paced)
{
	struct peer_env vars = {0};
	json_t *obj = json_object();
	char *json = NULL, *line = NULL;
	if (!obj || peer_env_build(c, c->peer, 1, 0, &vars))
		goto done;
	for (size_t i = 0; i < vars.n; i++) {
		char *eq = strchr(vars.vars[i], '=');
		*eq = '\0';
		int rc = json_object_set_new(obj, vars.vars[i], json_string(eq + 1));
		*eq = '=';
		if (rc)
			goto done;
	}
	if (paced && json_object_set_new(obj, "BENCHDB_PACED", json_string("true")))
		goto done;
	if ((json = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS)) && asprintf(&line, "case %s\n",
										  json) < 0)
		line = NULL;
done:
	free(json);
	json_decref(obj);
	peer_env_free(&vars);
	return line;
}

/* A persistent peer's case in progress: read to its status line at once, or paced — its
 * iterations in steps that the runner asks for (`go N`), between other cases' steps. */
struct peer_run {
	const struct sweep_case *c;
	struct peer_slot *slot, own;     /* own: the slot when there is no session */
	struct case_result *res;
	int paced;
	int64_t total;                   /* warm-up + measured iterations */
	int64_t asked;                   /* iterations the go lines asked for so far */
	int64_t used_ns;                 /* the case's time so far (its timeout), start-up included
					  * for a process's first case; paused time not */
	int64_t own_ns;                  /* the runner's time in this case: its elapsed time */
	int gone;                        /* a line could not be sent: the process is gone */
	int resent;                      /* the case line went to a new process once already */
	int finished;
	void (*on_iteration)(void *ctx, int64_t iter, int64_t total);
	void *ctx;
};

/* The case ends with res complete: the process goes on to the next case unless end (a crash, a
 * timeout, an interrupt, something malformed). */
static void run_conclude(struct peer_run *r, int end)
{
	struct peer_slot *s = r->slot;
	if (s->peer)
		r->res->cpu_wait = cpu_wait_tree_share(&s->proc.wait);
	if (end)
		slot_end(s);
	r->finished = 1;
}

/* A read that stopped at a `ready` line: fine when the case is paced and the peer ran what the
 * go lines asked for, and has more to run; else the output is malformed (concluded). Returns 1
 * when concluded. */
static int run_ready(struct peer_run *r)
{
	struct peer_slot *s = r->slot;
	struct case_result *res = r->res;
	struct peer_output po;
	char msg[600];
	int64_t ran = s->proc.iters_at_ready;
	if (r->paced && ran == r->asked && r->asked < r->total)
		return 0;
	if (!r->paced) {   /* the parse names the line */
		memset(&po, 0, sizeof(po));
		peer_parse_case_block(sb_str(&s->proc.out), s->proc.scanned, &r->c->params, s->version, 0,
				      s->proc.lines_before + 1, &po);
		snprintf(msg, sizeof(msg), "malformed peer output: %s", po.error);
		peer_output_free(&po);
	} else if (r->asked >= r->total) {
		snprintf(msg, sizeof(msg), "malformed peer output: a 'ready' line after the case's last "
			 "iteration (%" PRId64 "): its status line was due", r->total);
	} else {
		snprintf(msg, sizeof(msg), "malformed peer output: a 'ready' line after %" PRId64
			 " iterations, where the runner had asked for %" PRId64 " (go lines)", ran, r->asked);
	}
	fail_with_stderr(res, &s->proc, msg);
	run_conclude(r, 1);
	return 1;
}

/* A paced case's 'status ok' before its last step was asked for: it ran on past a step without
 * the runner's go, and its last iterations overlapped the other cases' steps. Stores the error
 * (1) or returns 0. */
static int ran_ahead(struct peer_run *r, const struct peer_output *po)
{
	if (po->status != STATUS_OK || !r->paced || r->asked <= 0 || r->asked >= r->total)
		return 0;
	char msg[320];
	snprintf(msg, sizeof(msg), "malformed peer output: 'status ok' after %" PRId64
		 " iterations of a paced case, where the runner had asked for %" PRId64
		 " (go lines) and was waiting for a 'ready' line", r->slot->proc.iters_seen, r->asked);
	fail_with_stderr(r->res, &r->slot->proc, msg);
	return 1;
}

/* Whether the process, now ended, ended between its last case and this one: it had served a
 * case, printed nothing for this one but blank and comment lines, and could not be sent its case
 * line or exited with status 0. A process on its way out after its last case may still take the
 * next case's line (the check before sending it saw it alive), and its exit is not this case's.
 * Once per case: a new process that does the same is the case's error. */
static int ended_before_case(const struct peer_run *r)
{
	const struct peer_proc *pr = &r->slot->proc;
	const char *text = sb_str(&pr->out), *end = text + pr->out.len;
	if (r->resent || r->asked || pr->ncases < 2)
		return 0;
	if (!r->gone && !(WIFEXITED(pr->wstatus) && WEXITSTATUS(pr->wstatus) == 0))
		return 0;
	return peer_text_ignored(text, end);
}

/* A persistent peer's valid output (po) under a header other than version 2's: the case's error
 * (1), or 0. */
static int not_version_2(const struct sweep_peer *peer, const struct peer_output *po,
			 struct case_result *res)
{
	if (po->version == 2)
		return 0;
	res->status = STATUS_ERROR;
	snprintf(res->reason, sizeof(res->reason), "malformed peer output: a persistent peer "
		 "speaks protocol 2, and '%s' printed 'benchdb-peer %d'", peer->name, po->version);
	return 1;
}

/* Read the case's output on to its status line, a `ready` line or the process's end. Returns 1
 * when the case is concluded (res complete), 0 at a ready line that asks for the next step, 2
 * when the process had ended before the case (ended_before_case: nothing concluded, the process
 * stopped; the caller starts a new one and sends the case line again). */
static int run_read(struct peer_run *r)
{
	const struct sweep_peer *peer = r->c->peer;
	const struct case_params *p = &r->c->params;
	struct peer_slot *s = r->slot;
	struct case_result *res = r->res;
	struct peer_output po;
	char how[160];
	int end = 1;
	memset(&po, 0, sizeof(po));
	int64_t t0 = now_ns();
	int64_t deadline = r->gone ? t0 + PEER_TERM_GRACE_NS :
				     t0 + peer->timeout_s * 1000000000LL - r->used_ns;
	enum peer_read why = peer_proc_read(&s->proc, deadline, 1, r->total, r->on_iteration, r->ctx);
	r->used_ns += now_ns() - t0;
	if (why == PEER_READ_READY)
		return run_ready(r);
	if (why == PEER_READ_STATUS) {
		/* nothing may follow a case's status line but blank and comment lines, as for a
		 * one-process peer: output that came with it (or waits in the pipe) is parsed with
		 * the case, whose parse then names the line */
		size_t len = peer_proc_output_waiting(&s->proc) ? s->proc.out.len :
								  s->proc.case_end;
		int rc = peer_parse_case_block(sb_str(&s->proc.out), len, p, s->version, r->paced,
					       s->proc.lines_before + 1, &po);
		if (rc || (!not_version_2(peer, &po, res) && !ran_ahead(r, &po))) {
			s->version = po.version;
			end = output_outcome(r->c, &s->proc, rc, "", &po, res);
		}
	} else if (why == PEER_READ_CLOSED) {   /* still running: stopped, its status ours */
		char msg[320];
		peer_proc_stop(&s->proc, 1);
		snprintf(msg, sizeof(msg), "peer '%s' closed its stdout before the case's status "
			 "line", peer->name);
		fail_with_stderr(res, &s->proc, msg);
	} else if (why == PEER_READ_TIMEOUT && r->gone) {
		/* a line could not be sent (its stdin is closed), and in the grace after it the
		 * process neither ended nor printed its status line: no timeout of the case's, a
		 * process that no longer reads, on its way out (a new one for the case, once) or
		 * not */
		char msg[320];
		res->cpu_wait = cpu_wait_tree_share(&s->proc.wait);
		peer_proc_stop(&s->proc, 0);
		if (ended_before_case(r))
			return 2;
		snprintf(msg, sizeof(msg), "peer '%s' closed its stdin before the case's status line",
			 peer->name);
		fail_with_stderr(res, &s->proc, msg);
	} else if (why != PEER_READ_ENDED) {
		res->cpu_wait = cpu_wait_tree_share(&s->proc.wait);
		peer_proc_stop(&s->proc, 0);
		read_failed(why, peer, &s->proc, res);
	} else {
		peer_proc_stop(&s->proc, 1);   /* it ended before the case's status line */
		if (ended_before_case(r))
			return 2;
		exit_text(s->proc.wstatus, how, sizeof(how));
		int rc = peer_parse_case_block(sb_str(&s->proc.out), s->proc.out.len, p, s->version,
					       r->paced, s->proc.lines_before + 1, &po);
		/* as for a one-process peer (output_outcome): a malformed line is named, a whole
		 * case's output without a line end after its status line is fine */
		if (rc && po.truncated && !how[0])
			fail_with_stderr(res, &s->proc, "peer exited with status 0 before the "
					 "case's status line");
		else if (rc || (!not_version_2(peer, &po, res) && !ran_ahead(r, &po)))
			output_outcome(r->c, &s->proc, rc, how, &po, res);
	}
	peer_output_free(&po);
	run_conclude(r, end);
	return 1;
}

/* Send the case's line to the slot's process (started first when it is not the peer's) and read
 * up to its first `ready` line (paced) or its end. */
static void run_start(struct peer_run *r, const char *dir)
{
	const struct sweep_peer *peer = r->c->peer;
	struct peer_slot *s = r->slot;
	struct case_result *res = r->res;
	struct peer_env env = {0};
	char *line = NULL;
	figures_unknown(res);   /* protocol 2: the peer's work lines say */
again:
	if (s->peer == peer && !peer_proc_alive(&s->proc))   /* it exited after its last case */
		slot_end(s);
	/* output after its last case's status line, come since that case was stored: the process
	 * is not to be trusted, and the output is not this case's (a new process for it) */
	if (s->peer == peer && peer_proc_output_waiting(&s->proc))
		slot_end(s);
	if (s->peer != peer) {
		slot_end(s);
		if (peer_env_build(NULL, peer, 1, 1, &env)) {
			res->status = STATUS_ERROR;
			snprintf(res->reason, sizeof(res->reason), "out of memory for peer '%s'", peer->name);
			goto failed;
		}
		s->peer = peer;
		if (peer_proc_start(&s->proc, peer->command, dir, env.vars, 1)) {
			res->status = STATUS_ERROR;
			snprintf(res->reason, sizeof(res->reason), "cannot start peer '%s': %s", peer->name,
				 s->proc.start_error);
			goto failed;
		}
	}
	peer_proc_case_begin(&s->proc);
	if (!(line = case_line(r->c, r->paced))) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "out of memory for peer '%s'", peer->name);
		goto failed;
	}
	/* a process's first case counts its start-up */
	r->used_ns = s->proc.ncases == 1 ? now_ns() - s->proc.started_ns : 0;
	r->gone = peer_proc_send(&s->proc, line, strlen(line)) != 0;   /* gone: read what it left */
	if (run_read(r) == 2) {   /* it was on its way out: the case goes to a new process */
		slot_end(s);
		r->resent = 1;
		r->gone = 0;
		free(line);
		line = NULL;
		peer_env_free(&env);
		env = (struct peer_env){0};
		goto again;
	}
	goto done;
failed:
	run_conclude(r, 1);
done:
	free(line);
	peer_env_free(&env);
}

/* ---- the case --------------------------------------------------------------------------------- */

/* res as a peer case starts it. Returns 0, or 1 when the case ends here (res complete but for
 * its elapsed time): no peer, or iters: auto. */
static int case_init(const struct sweep_case *c, struct case_result *res)
{
	const struct case_params *p = &c->params;
	memset(res, 0, sizeof(*res));
	res->max_diff = res->tolerance = -1;   /* until a check line says */
	res->peak_fwd_bytes = res->peak_bwd_bytes = res->peak_bytes = -1;
	res->cpu_wait = -1;
	res->rse = INFINITY;
	peer_figures(p, &res->figures);
	if (!c->peer) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "case '%s' has no peer", c->name);
		return 1;
	}
	res->iters = p->iters == ITERS_AUTO ? 0 : p->iters;
	/* the protocol gives a peer a count to run (schemas/peer-protocol.md); it cannot be told
	 * when the median is precise enough, and a count chosen here would not be iters: auto */
	if (p->iters == ITERS_AUTO) {
		res->status = STATUS_UNSUPPORTED;
		snprintf(res->reason, sizeof(res->reason), "iters: auto is not supported for a peer "
			 "('%s' is run by peer %s, and the peer protocol runs a fixed count of "
			 "iterations); give this benchmark a fixed iters", c->name, c->peer->name);
		return 1;
	}
	return 0;
}

/* peer.h */
struct peer_run *peer_run_begin(const struct sweep_case *c, const char *sweep_path,
				struct peer_session *session, int paced, struct case_result *res,
				void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	int64_t t_start = now_ns();
	struct peer_run *r = NULL;
	char *dir = NULL;
	if (case_init(c, res))
		goto ended;
	if (!c->peer->persistent) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "peer '%s' runs one process per case: its "
			 "cases cannot be paced", c->peer->name);
		goto ended;
	}
	if (measure_interrupted) {   /* nothing started for a run that is stopping */
		res->interrupted = 1;
		goto ended;
	}
	if (!(r = calloc(1, sizeof(*r))) || !(dir = sweep_dir(sweep_path)) ||
	    !(r->slot = session ? slot_for(session, c->peer) : &r->own)) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "out of memory for peer '%s'", c->peer->name);
		goto ended;
	}
	r->c = c;
	r->res = res;
	r->paced = paced;
	r->total = c->params.warmup + c->params.iters;
	r->on_iteration = on_iteration;
	r->ctx = ctx;
	run_start(r, dir);
	free(dir);
	r->own_ns = now_ns() - t_start;
	if (!r->finished)
		return r;
	peer_run_end(r);
	return NULL;
ended:
	free(r);
	free(dir);
	res->elapsed_ns = now_ns() - t_start;
	return NULL;
}

/* peer.h */
int peer_run_step(struct peer_run *r, int64_t count)
{
	if (r->finished)
		return 1;
	int64_t t_start = now_ns(), n = r->total - r->asked;
	char go[48];
	if (count < n)
		n = count > 0 ? count : 1;
	if (measure_interrupted) {   /* no step for a run that is stopping */
		peer_proc_stop(&r->slot->proc, 0);
		r->res->interrupted = 1;
		run_conclude(r, 1);
		r->own_ns += now_ns() - t_start;
		return 1;
	}
	if (peer_proc_output_waiting(&r->slot->proc)) {   /* it did not wait for this go line */
		fail_with_stderr(r->res, &r->slot->proc, "malformed peer output: output after its "
				 "'ready' line before the runner's go line (a paced peer waits for 'go N': "
				 "this one ran on while other implementations were measured)");
		run_conclude(r, 1);
		r->own_ns += now_ns() - t_start;
		return 1;
	}
	snprintf(go, sizeof(go), "go %" PRId64 "\n", n);
	r->asked += n;
	r->slot->proc.ready = 0;   /* answered */
	if (peer_proc_send(&r->slot->proc, go, strlen(go)))
		r->gone = 1;
	run_read(r);
	r->own_ns += now_ns() - t_start;
	return r->finished;
}

/* peer.h */
void peer_run_end(struct peer_run *r)
{
	if (!r)
		return;
	if (!r->finished) {   /* left before its last step: nothing of it is stored */
		r->res->interrupted = 1;
		run_conclude(r, 1);
	}
	slot_end(&r->own);   /* without a session: one process for this case only */
	r->res->elapsed_ns = r->own_ns;
	free(r);
}

void peer_measure_case(const struct sweep_case *c, const char *sweep_path,
		       struct peer_session *session, struct case_result *res,
		       void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	const struct sweep_peer *peer = c->peer;
	struct peer_env env = {0};
	char *dir = NULL;
	peer_session_yield(session, &peer, 1);   /* another peer's process: not this case's time */
	if (peer && peer->persistent) {   /* read to its end: never paced */
		peer_run_end(peer_run_begin(c, sweep_path, session, 0, res, on_iteration, ctx));
		return;
	}
	int64_t t_start = now_ns();
	if (case_init(c, res))
		goto done;
	if (!(dir = sweep_dir(sweep_path)) || peer_env_build(c, peer, 0, 1, &env)) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "out of memory for peer '%s'", peer->name);
		goto done;
	}
	measure_one(c, dir, env.vars, res, on_iteration, ctx);
done:
	peer_env_free(&env);
	free(dir);
	res->elapsed_ns = now_ns() - t_start;
}
