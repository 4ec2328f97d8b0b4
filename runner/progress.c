/* runner/progress.c: sweep progress lines with elapsed time and an ETA. The ETA weighs the cases
 * by the work they will do (FLOPs, else bytes, else one each): on a sweep whose cases grow
 * quadratically in size, elapsed / cases done x cases left is off many times over. */
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "xalloc.h"

/* Redraw the terminal line at most this often. */
#define REDRAW_NS 100000000LL

static void fmt_duration(char *out, size_t n, int64_t ns)
{
	int64_t s = ns / 1000000000LL;
	if (s >= 3600)
		snprintf(out, n, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
			 (long long)(s % 60));
	else
		snprintf(out, n, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
}

/* Work before each case in the first basis every case states, or NULL (by count). */
static double *work_before(size_t n, const struct progress_work *work, enum progress_basis *basis)
{
	*basis = PROGRESS_BY_COUNT;
	if (!work || !n)
		return NULL;
	double *before = xmalloc((n + 1) * sizeof(*before));
	for (int b = PROGRESS_BY_FLOPS; b < PROGRESS_BY_COUNT; b++) {
		int known = 1;
		before[0] = 0;
		for (size_t i = 0; i < n && known; i++) {
			double w = b == PROGRESS_BY_FLOPS ? work[i].flops : work[i].bytes;
			known = w >= 0;
			before[i + 1] = before[i] + w;
		}
		if (known && before[n] > 0) {
			*basis = (enum progress_basis)b;
			return before;
		}
	}
	free(before);
	return NULL;
}

static double work_until(const struct progress *pg, size_t index, double fraction)
{
	if (!pg->work_before)
		return (double)index + fraction;
	size_t i = index < pg->ncases ? index : pg->ncases;
	double case_work = i < pg->ncases ? pg->work_before[i + 1] - pg->work_before[i] : 0;
	return pg->work_before[i] + fraction * case_work;
}

int64_t progress_eta_ns(const struct progress *pg, size_t index, double fraction,
			int64_t elapsed_ns)
{
	double done = work_until(pg, index, fraction), all = work_until(pg, pg->ncases, 0);
	if (done <= 0)
		return -1;
	return (int64_t)((double)elapsed_ns / done * (all - done));
}

static void eta(const struct progress *pg, size_t index, double fraction, int64_t now, char *out,
		size_t n)
{
	int64_t left = progress_eta_ns(pg, index, fraction, now - pg->start_ns);
	if (left < 0)
		snprintf(out, n, "?");
	else
		fmt_duration(out, n, left);
}

void progress_init(struct progress *pg, size_t ncases, const struct progress_work *work)
{
	pg->tty = isatty(STDERR_FILENO);
	pg->ncases = ncases;
	pg->index = 0;
	pg->name = "";
	pg->start_ns = pg->last_draw_ns = now_ns();
	pg->work_before = work_before(ncases, work, &pg->basis);
	pg->dropped_at = 0;
}

/* After a write to stderr: a failure (EPIPE from a closed pipe, EIO from a lost terminal) drops
 * the progress for the rest of the sweep. */
static void written(struct progress *pg)
{
	if (ferror(stderr) && !pg->dropped_at) {
		pg->dropped_at = pg->index + 1;
		clearerr(stderr);
	}
}

static void draw(struct progress *pg, double fraction)
{
	if (pg->dropped_at)
		return;
	char el[32], left[32];
	pg->last_draw_ns = now_ns();
	fmt_duration(el, sizeof(el), pg->last_draw_ns - pg->start_ns);
	eta(pg, pg->index, fraction, pg->last_draw_ns, left, sizeof(left));
	char *name = escape_controls(pg->name);   /* a name quotes sweep text */
	fprintf(stderr, "\r\033[K[%zu/%zu] %s  %3.0f%%  elapsed %s  eta %s", pg->index + 1, pg->ncases,
		name, 100.0 * fraction, el, left);
	free(name);
	fflush(stderr);
	written(pg);
}

void progress_case_start(struct progress *pg, size_t index, const char *name)
{
	pg->index = index;
	pg->name = name;
	if (pg->tty)
		draw(pg, 0);
}

void progress_iteration(void *ctx, int64_t iter, int64_t total)
{
	struct progress *pg = ctx;
	if (pg->tty && now_ns() - pg->last_draw_ns > REDRAW_NS)
		draw(pg, (double)iter / (double)total);
}

void progress_case_end(struct progress *pg, const struct case_result *res)
{
	if (pg->tty || pg->dropped_at) {
		draw(pg, 1.0);
		return;
	}
	char el[32], left[32];
	int64_t now = now_ns();
	fmt_duration(el, sizeof(el), now - pg->start_ns);
	eta(pg, pg->index, 1.0, now, left, sizeof(left));
	char *name = escape_controls(pg->name), *reason = escape_controls(res->reason);
	char stop[128] = "";   /* iters: auto: how many, and what stopped it */
	if (res->stop_reason && strcmp(res->stop_reason, "iters"))
		snprintf(stop, sizeof(stop), isfinite(res->rse) ? "; iters auto: %lld, %s, rse %.2f%%" :
			 "; iters auto: %lld, %s", (long long)res->iters, res->stop_reason, 100 * res->rse);
	fprintf(stderr, "[%zu/%zu] %s: %s%s%s%s (%.2f s; elapsed %s, eta %s)\n", pg->index + 1,
		pg->ncases, name, status_name(res->status), res->reason[0] ? ": " : "",
		reason, stop, (double)res->elapsed_ns / 1e9, el, left);
	free(name);
	free(reason);
	fflush(stderr);
	written(pg);
}

void progress_finish(struct progress *pg)
{
	if (pg->tty && !pg->dropped_at)
		fprintf(stderr, "\r\033[K");
	free(pg->work_before);
	pg->work_before = NULL;
	pg->basis = PROGRESS_BY_COUNT;
}
