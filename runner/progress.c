/* runner/progress.c: sweep progress lines with elapsed time and an ETA. The ETA weighs the cases
 * by the work they will do (FLOPs, else bytes, else one each): on a sweep whose cases grow
 * quadratically in size, elapsed / cases done x cases left is off many times over. Each case
 * also costs a fixed time (setup, validation, storing) that dominates small ones, and larger ones
 * run nearer the machine's peak, so from the third finished case on the ETA is a fitted cost
 * model, fixed + scale x work^power, summed over the cases left; a case that will not run
 * (unsupported, or over its memory limit) costs nothing.
 * Measured against the truth on the shipped CPU sweeps: docs/performance.md, "ETA". */
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_wait.h"
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

static int by_kind(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
	return x < y ? -1 : x > y;
}

/* Each case's kind as a dense index 0 .. *nkinds - 1 (all 0 without work). */
static size_t *kinds(size_t n, const struct progress_work *work, size_t *nkinds)
{
	size_t *kind_of = xcalloc(n ? n : 1, sizeof(*kind_of));
	*nkinds = 1;
	if (!work || !n)
		return kind_of;
	uint64_t (*pairs)[2] = xmalloc(n * sizeof(*pairs));   /* (kind, case) sorted by kind */
	for (size_t i = 0; i < n; i++) {
		pairs[i][0] = work[i].kind;
		pairs[i][1] = i;
	}
	qsort(pairs, n, sizeof(*pairs), by_kind);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && pairs[i][0] != pairs[i - 1][0])
			k++;
		kind_of[pairs[i][1]] = k;
	}
	*nkinds = k + 1;
	free(pairs);
	return kind_of;
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
	if (t <= 0 || !pg->seen || index >= pg->ncases)
		return;
	if (w <= 0) {   /* a case that did not run */
		pg->idle_ns += t;
		pg->nidle++;
		return;
	}
	if (pg->nfit == pg->ncases)
		return;
	pg->seen[pg->nfit][0] = w;
	pg->seen[pg->nfit][1] = t;
	pg->seen_case[pg->nfit] = index;
	pg->nfit++;
}

/* The powers the cost model tries: work^0.5 .. work^1 in steps of 0.05. */
#define POWER_MIN 0.5
#define POWER_STEPS 11

struct cost_fit {
	double fixed, scale, power, residual;
};

/* fixed + scale x work^power fitted to the seen cases by least squares on relative errors (each
 * case weighs 1/t^2: a 2 s case counts as much as a 2 min one), fixed and scale >= 0 (else the
 * better of each alone). */
static void cost_fit_power(const struct progress *pg, double power, struct cost_fit *f)
{
	double s0 = 0, s1 = 0, s2 = 0, sy = 0, swy = 0;
	for (size_t i = 0; i < pg->nfit; i++) {
		double t = pg->seen[i][1], x = pow(pg->seen[i][0], power), k = 1 / (t * t);
		s0 += k;
		s1 += k * x;
		s2 += k * x * x;
		sy += k * t;
		swy += k * x * t;
	}
	double det = s0 * s2 - s1 * s1;
	int solvable = det > 1e-12 * s0 * s2;   /* the cases' work differed */
	f->power = power;
	f->fixed = f->scale = -1;
	if (solvable) {
		f->fixed = (sy * s2 - s1 * swy) / det;
		f->scale = (s0 * swy - s1 * sy) / det;
	}
	if (f->fixed < 0 || f->scale < 0) {   /* one term alone, the one that fits better */
		double only_work = swy / s2, only_fixed = sy / s0;
		double r_work = only_work * only_work * s2 - 2 * only_work * swy;
		double r_fixed = only_fixed * only_fixed * s0 - 2 * only_fixed * sy;
		int work_alone = solvable && r_work < r_fixed;
		f->fixed = work_alone ? 0 : only_fixed;
		f->scale = work_alone ? only_work : 0;
	}
	f->residual = 0;
	for (size_t i = 0; i < pg->nfit; i++) {
		double t = pg->seen[i][1];
		double e = (f->fixed + f->scale * pow(pg->seen[i][0], power) - t) / t;
		f->residual += e * e;
	}
}

/* The cost model of the power that fits best. 0, or -1 before PROGRESS_FIT_MIN cases. */
static int cost_model(const struct progress *pg, struct cost_fit *best)
{
	if (pg->nfit < PROGRESS_FIT_MIN)
		return -1;
	cost_fit_power(pg, POWER_MIN, best);
	for (int k = 1; k < POWER_STEPS; k++) {
		struct cost_fit f;
		cost_fit_power(pg, POWER_MIN + (1 - POWER_MIN) * k / (POWER_STEPS - 1), &f);
		if (f.residual < best->residual)
			*best = f;
	}
	return 0;
}

/* Beyond the work the seen cases span, cost grows at least as work^PROGRESS_GROWTH_MIN. */
#define PROGRESS_GROWTH_MIN 0.8

/* A case's cost by the model. The fit is trusted over the work the seen cases span and as far
 * again beyond the largest (on a log scale, half that span: W x sqrt(W / smallest)); past that
 * it costs at least the fit's cost there times (work / there)^PROGRESS_GROWTH_MIN. The first
 * cases of a sweep are small, their time mostly the fixed cost, and a fit of them says the cost
 * hardly grows: extrapolated 1000-fold in work it predicted ~0 for the rest of the sweep (eta
 * 0:02 where 1:40 was left), when a larger kernel or model runs nearer the machine's peak, not
 * for free. docs/performance.md, "ETA". */
static double case_cost(const struct cost_fit *f, double scale, double w, double trusted)
{
	double cost = f->fixed + scale * pow(w, f->power);
	if (w <= trusted)
		return cost;
	double at = f->fixed + scale * pow(trusted, f->power);
	return fmax(cost, at * pow(w / trusted, PROGRESS_GROWTH_MIN));
}

/* The cost model with a scale per kind, fixed + scale[kind] x work^power, by the same least
 * squares on relative errors (fixed >= 0, each scale >= 0); scale[k] < 0 for a kind not seen.
 * Returns the residual. */
static double kind_fit_power(const struct progress *pg, double power, double *fixed,
			     double *scale)
{
	double (*d)[3] = xcalloc(pg->nkinds, sizeof(*d));   /* per kind: sum q x, q x^2, q x t */
	double s0 = 0, sy = 0;
	for (size_t i = 0; i < pg->nfit; i++) {
		double t = pg->seen[i][1], x = pow(pg->seen[i][0], power), q = 1 / (t * t);
		double *dk = d[pg->kind_of[pg->seen_case[i]]];
		dk[0] += q * x;
		dk[1] += q * x * x;
		dk[2] += q * x * t;
		s0 += q;
		sy += q * t;
	}
	double den = s0, num = sy;
	for (size_t k = 0; k < pg->nkinds; k++)
		if (d[k][1] > 0) {
			den -= d[k][0] * d[k][0] / d[k][1];
			num -= d[k][0] * d[k][2] / d[k][1];
		}
	*fixed = den > 1e-12 * s0 ? fmax(num / den, 0) : 0;
	for (size_t k = 0; k < pg->nkinds; k++)
		scale[k] = d[k][1] > 0 ? fmax((d[k][2] - *fixed * d[k][0]) / d[k][1], 0) : -1;
	free(d);
	double residual = 0;
	for (size_t i = 0; i < pg->nfit; i++) {
		double t = pg->seen[i][1], e;
		e = (*fixed + scale[pg->kind_of[pg->seen_case[i]]] * pow(pg->seen[i][0], power) - t) / t;
		residual += e * e;
	}
	return residual;
}

/* Kinds (a float32 and a bfloat16 case, say) run at different rates per unit of work: with more
 * than one kind seen, the model with a scale per kind (one fixed cost and power, fitted
 * together) in *kf, and the scales (< 0: a kind not seen); with one, all scales < 0. */
static double *kind_model(const struct progress *pg, struct cost_fit *kf)
{
	double *scale = xmalloc(pg->nkinds * sizeof(*scale)), *try = xmalloc(pg->nkinds * sizeof(*try));
	char *seen = xcalloc(pg->nkinds, 1);
	size_t nk = 0;
	for (size_t i = 0; i < pg->nfit; i++) {
		size_t k = pg->kind_of[pg->seen_case[i]];
		nk += !seen[k];
		seen[k] = 1;
	}
	free(seen);
	for (size_t k = 0; k < pg->nkinds; k++)
		scale[k] = -1;
	for (int j = 0; nk > 1 && j < POWER_STEPS; j++) {
		double fixed, power = POWER_MIN + (1 - POWER_MIN) * j / (POWER_STEPS - 1);
		double r = kind_fit_power(pg, power, &fixed, try);
		if (j == 0 || r < kf->residual) {
			*kf = (struct cost_fit){fixed, 0, power, r};
			memcpy(scale, try, pg->nkinds * sizeof(*scale));
		}
	}
	free(try);
	return scale;
}

int64_t progress_eta_ns(const struct progress *pg, size_t index, double fraction,
			int64_t elapsed_ns)
{
	struct cost_fit f = {0};
	if (cost_model(pg, &f) == 0) {
		double left = 0, lo = INFINITY, hi = 0;
		for (size_t i = 0; i < pg->nfit; i++) {
			lo = fmin(lo, pg->seen[i][0]);
			hi = fmax(hi, pg->seen[i][0]);
		}
		double trusted = hi * sqrt(hi / lo);
		/* a scale per kind; a kind not seen yet (scale < 0) costs what the fit of all says */
		struct cost_fit kf = f;
		double *scale = kind_model(pg, &kf);
		double idle = pg->nidle ? pg->idle_ns / (double)pg->nidle : 0;
		for (size_t i = index; i < pg->ncases; i++) {
			double w = work_of(pg, i), part = i == index ? 1 - fraction : 1;
			double sk = scale[pg->kind_of[i]];
			left += part * (w <= 0	 ? idle
					: sk >= 0 ? case_cost(&kf, sk, w, trusted)
						  : case_cost(&f, f.scale, w, trusted));
		}
		free(scale);
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
	pg->dropped_at = 0;
	pg->seen = xcalloc(ncases ? ncases : 1, sizeof(*pg->seen));
	pg->seen_case = xcalloc(ncases ? ncases : 1, sizeof(*pg->seen_case));
	pg->nfit = 0;
	pg->idle_ns = 0;
	pg->nidle = 0;
	pg->kind_of = kinds(ncases, work, &pg->nkinds);
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
	int64_t end = now_ns();
	/* the case's own time where it says (the impls of one shape measured in alternating rounds
	 * end together: the time since the last end would give the first all of the group's and the
	 * others nearly nothing, and a fit on relative errors then predicts ~0 for every case) */
	progress_observe(pg, pg->index, res->elapsed_ns > 0 ? res->elapsed_ns : end - pg->last_end_ns);
	pg->last_end_ns = end;
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
	char waited[48] = "";   /* measured under contention (cpu_wait.h) */
	if (res->status == STATUS_OK && res->cpu_wait > CPU_WAIT_CONTENDED)
		snprintf(waited, sizeof(waited), "; waited for a CPU %.0f%%", 100 * res->cpu_wait);
	fprintf(stderr, "[%zu/%zu] %s: %s%s%s%s%s (%.2f s; elapsed %s, eta %s)\n", pg->index + 1,
		pg->ncases, name, status_name(res->status), res->reason[0] ? ": " : "",
		reason, stop, waited, (double)res->elapsed_ns / 1e9, el, left);
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
	free(pg->seen);
	pg->seen = NULL;
	free(pg->seen_case);
	pg->seen_case = NULL;
	free(pg->kind_of);
	pg->kind_of = NULL;
	pg->nfit = pg->nidle = 0;
	pg->basis = PROGRESS_BY_COUNT;
}
