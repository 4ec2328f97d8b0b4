/* runner/progress.c: sweep progress lines with elapsed time and an ETA. The ETA weighs the cases
 * by the work they will do (FLOPs, else bytes, else one each): on a sweep whose cases grow
 * quadratically in size, elapsed / cases done x cases left is off many times over. Each case
 * also costs a fixed time (setup, validation, storing) that dominates small ones, so from the
 * second finished case on the ETA is a fitted cost model, fixed + per-work x work, summed over the
 * cases left; a case that will not run (unsupported, or over its memory limit) costs nothing.
 * Measured against the truth on the shipped CPU sweeps: docs/performance.md, "ETA". */
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

/* Work of case i alone, in the basis' unit (count: 1). */
static double work_of(const struct progress *pg, size_t i)
{
	return pg->work_before ? pg->work_before[i + 1] - pg->work_before[i] : 1;
}

void progress_observe(struct progress *pg, size_t index, int64_t ns)
{
	double w = index < pg->ncases ? work_of(pg, index) : 0, t = (double)ns;
	if (w <= 0 || t <= 0)
		return;
	double k = 1 / (t * t);   /* relative errors: a 2 s case counts as much as a 2 min one */
	pg->s0 += k;
	pg->s1 += k * w;
	pg->s2 += k * w * w;
	pg->sy += k * t;
	pg->swy += k * w * t;
	pg->nfit++;
}

/* The fitted cost model: fixed ns per case and ns per unit of work, both >= 0. 0, or -1 before
 * PROGRESS_FIT_MIN cases. */
static int cost_model(const struct progress *pg, double *fixed, double *per_work)
{
	if (pg->nfit < PROGRESS_FIT_MIN)
		return -1;
	double det = pg->s0 * pg->s2 - pg->s1 * pg->s1;
	*fixed = *per_work = -1;
	if (det > 1e-12 * pg->s0 * pg->s2) {   /* the cases' work differed */
		*fixed = (pg->sy * pg->s2 - pg->s1 * pg->swy) / det;
		*per_work = (pg->s0 * pg->swy - pg->s1 * pg->sy) / det;
	}
	if (*fixed < 0 || *per_work < 0) {   /* one term alone, the one that fits better */
		double only_work = pg->swy / pg->s2, only_fixed = pg->sy / pg->s0;
		/* weighted squared residuals of each: sum k (t - f)^2 up to the common sum k t^2 */
		double r_work = only_work * only_work * pg->s2 - 2 * only_work * pg->swy;
		double r_fixed = only_fixed * only_fixed * pg->s0 - 2 * only_fixed * pg->sy;
		int work_alone = det > 1e-12 * pg->s0 * pg->s2 && r_work < r_fixed;
		*fixed = work_alone ? 0 : only_fixed;
		*per_work = work_alone ? only_work : 0;
	}
	return 0;
}

int64_t progress_eta_ns(const struct progress *pg, size_t index, double fraction,
			int64_t elapsed_ns)
{
	double fixed, per_work;
	if (cost_model(pg, &fixed, &per_work) == 0) {
		double left = 0;
		for (size_t i = index; i < pg->ncases; i++) {
			double w = work_of(pg, i);
			if (w > 0)
				left += (i == index ? 1 - fraction : 1) * (fixed + per_work * w);
		}
		return (int64_t)left;
	}
	double done = work_until(pg, index, fraction), all = work_until(pg, pg->ncases, 0);
	if (done <= 0)
		return -1;
	double by_work = (double)elapsed_ns / done * (all - done);
	/* Too few cases to fit: the truth lies between "each case left costs what one cost" and
	 * "each costs what its work costs" when the cases grow (the fixed cost is the first's, at
	 * most), so take their geometric mean: within the square root of their ratio of either. */
	double ran = 0, left = 0;
	for (size_t i = 0; pg->work_before && i < pg->ncases; i++)
		if (work_of(pg, i) > 0)
			*(i < index ? &ran : &left) += 1;
	if (!pg->work_before)
		return (int64_t)by_work;
	if (index < pg->ncases && work_of(pg, index) > 0) {
		ran += fraction;
		left -= fraction;
	}
	double by_count = (double)elapsed_ns / ran * left;
	return ran > 0 && by_count > 0 ? (int64_t)sqrt(by_work * by_count) : (int64_t)by_work;
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
	pg->start_ns = pg->last_draw_ns = pg->last_end_ns = now_ns();
	pg->work_before = work_before(ncases, work, &pg->basis);
	pg->s0 = pg->s1 = pg->s2 = pg->sy = pg->swy = 0;
	pg->nfit = 0;
}

static void draw(struct progress *pg, double fraction)
{
	char el[32], left[32];
	pg->last_draw_ns = now_ns();
	fmt_duration(el, sizeof(el), pg->last_draw_ns - pg->start_ns);
	eta(pg, pg->index, fraction, pg->last_draw_ns, left, sizeof(left));
	char *name = escape_controls(pg->name);   /* a name quotes sweep text */
	fprintf(stderr, "\r\033[K[%zu/%zu] %s  %3.0f%%  elapsed %s  eta %s", pg->index + 1, pg->ncases,
		name, 100.0 * fraction, el, left);
	free(name);
	fflush(stderr);
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
	int64_t end = now_ns();
	progress_observe(pg, pg->index, end - pg->last_end_ns);
	pg->last_end_ns = end;
	if (pg->tty) {
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
}

void progress_finish(struct progress *pg)
{
	if (pg->tty)
		fprintf(stderr, "\r\033[K");
	free(pg->work_before);
	pg->work_before = NULL;
	pg->basis = PROGRESS_BY_COUNT;
}
