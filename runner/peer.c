/* runner/peer.c: a case run by an external implementation (schemas/peer-protocol.md), start to
 * finish: the environment (peer_env.c), the processes (peer_process.c), the output checked
 * against the case (peer_protocol.c), and every outcome a status in struct case_result, as in
 * measure.c.
 */
#include "peer_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "workload.h"

/* peer.h */
void peer_figures(const struct case_params *p, struct wl_figures *f)
{
	const struct workload *any = NULL, *same = NULL;
	for (const struct workload *const *w = workloads; *w; w++) {
		if (strcmp((*w)->suite, p->suite) || !(*w)->figures)
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

/* The stderr tail as one line ("a | b | c"), control characters as spaces, into out. */
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
	return n;
}

/* res->reason = msg, then as much of the end of the stderr tail as fits. */
static void fail_with_stderr(struct case_result *res, const struct peer_run *r, const char *msg)
{
	static const char sep[] = "; stderr: ";
	char tail[PEER_STDERR_TAIL * 2];
	size_t n = stderr_line(r->err, r->err_len, tail, sizeof(tail));
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
static void exit_text(const struct peer_run *r, char *out, size_t size)
{
	out[0] = '\0';
	if (WIFEXITED(r->wstatus) && WEXITSTATUS(r->wstatus)) {
		int code = WEXITSTATUS(r->wstatus);
		snprintf(out, size, "peer exited with status %d%s", code,
			 code == 127 ? " (command not found)" :
			 code == 126 ? " (command not executable, or its directory cannot be entered)" : "");
	} else if (WIFSIGNALED(r->wstatus)) {
		int sig = WTERMSIG(r->wstatus);
		snprintf(out, size, "peer killed by signal %d (%s)", sig, strsignal(sig));
	}
}

void peer_measure_case(const struct sweep_case *c, const char *sweep_path, struct case_result *res,
		       void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	const struct case_params *p = &c->params;
	const struct sweep_peer *peer = c->peer;
	int64_t t_start = now_ns();
	struct peer_run run;
	struct peer_output po;
	struct peer_env env = {0};
	char *dir = NULL, msg[768], how[160];

	memset(res, 0, sizeof(*res));
	memset(&run, 0, sizeof(run));
	memset(&po, 0, sizeof(po));
	run.out = (struct strbuf)STRBUF_INIT;
	res->max_diff = res->tolerance = -1;   /* a peer is not validated against the reference */
	res->peak_fwd_bytes = res->peak_bwd_bytes = res->peak_bytes = -1;
	peer_figures(p, &res->figures);

	if (!peer) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "case '%s' has no peer", c->name);
		goto done;
	}
	res->iters = p->iters == ITERS_AUTO ? 0 : p->iters;
	/* the protocol gives a peer a count to run (schemas/peer-protocol.md); it cannot be told
	 * when the median is precise enough, and a count chosen here would not be iters: auto */
	if (p->iters == ITERS_AUTO) {
		res->status = STATUS_UNSUPPORTED;
		snprintf(res->reason, sizeof(res->reason), "iters: auto is not supported for a peer "
			 "('%s' is run by peer %s, and the peer protocol runs a fixed count of "
			 "iterations); give this benchmark a fixed iters", c->name, peer->name);
		goto done;
	}
	if (peer_env_build(c, &env) || !(dir = sweep_dir(sweep_path))) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "out of memory for peer '%s'", peer->name);
		goto done;
	}
	peer_process_run(peer, dir, env.vars, p->warmup + p->iters, &run, on_iteration, ctx);
	if (run.start_error[0]) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "cannot start peer '%s': %s", peer->name,
			 run.start_error);
		goto done;
	}
	if (run.interrupted) {
		res->interrupted = 1;
		goto done;
	}
	if (run.timed_out) {
		snprintf(msg, sizeof(msg), "peer '%s' timed out after %" PRId64 " s", peer->name,
			 peer->timeout_s);
		fail_with_stderr(res, &run, msg);
		goto done;
	}
	if (run.overflow) {
		snprintf(msg, sizeof(msg), "peer '%s' wrote more than %u MiB to stdout", peer->name,
			 PEER_STDOUT_MAX >> 20);
		fail_with_stderr(res, &run, msg);
		goto done;
	}
	exit_text(&run, how, sizeof(how));
	int rc = peer_parse_output(sb_str(&run.out), run.out.len, p, &po);
	if (rc && po.truncated && how[0]) {          /* it died before finishing its output */
		fail_with_stderr(res, &run, how);
	} else if (rc) {
		snprintf(msg, sizeof(msg), "malformed peer output: %s%s%s", po.error, how[0] ? "; " : "",
			 how);
		fail_with_stderr(res, &run, msg);
	} else if (po.status == STATUS_OK && how[0]) {
		snprintf(msg, sizeof(msg), "the peer printed 'status ok' but %s", how);
		fail_with_stderr(res, &run, msg);
	} else {
		res->status = po.status;
		res->stop_reason = po.status == STATUS_OK ? "iters" : NULL;
		snprintf(res->reason, sizeof(res->reason), "%s", po.reason);
		res->samples = po.samples;
		res->nsamples = po.nsamples;
		po.samples = NULL;
		po.nsamples = 0;
		if (po.param_bytes >= 0)
			res->figures.param_bytes = po.param_bytes;
		res->peak_fwd_bytes = po.peak_fwd_bytes;
		res->peak_bwd_bytes = po.peak_bwd_bytes;
		res->peak_bytes = po.peak_bytes;
		memcpy(res->impl_info, po.impl_info, sizeof(res->impl_info));
		if (res->peak_bytes < 0)   /* the overall peak is at least each phase's */
			res->peak_bytes = po.peak_fwd_bytes > po.peak_bwd_bytes ? po.peak_fwd_bytes :
										 po.peak_bwd_bytes;
	}
done:
	peer_output_free(&po);
	sb_free(&run.out);
	peer_env_free(&env);
	free(dir);
	res->elapsed_ns = now_ns() - t_start;
}
