/* report/changepoint.c: E-divisive means with a permutation test, a minimum segment length and a
 * minimum magnitude, on a case's series of run medians (changepoint.h).
 *
 * For a segment z[a..b) and a split a < tau < kappa <= b, X = z[a..tau), Y = z[tau..kappa),
 * nx = |X|, ny = |Y|:
 *
 *   E(X, Y) = 2/(nx ny) sum |x - y| - 2/(nx (nx-1)) sum_{i<k} |x_i - x_k|
 *                                  - 2/(ny (ny-1)) sum_{j<k} |y_j - y_k|
 *   Q(tau, kappa) = nx ny / (nx + ny) E(X, Y)
 *
 * (Matteson and James 2014, with alpha = 1: the energy distance, which is zero exactly when X and Y
 * have the same distribution.) The candidate of a segment is the tau of the largest Q over every
 * kappa; the next change point is the candidate of the segment whose Q is largest. It is kept when
 * the permutation test says that so large a Q is rare when there is no change: R times, the values
 * of every current segment are shuffled within it and the largest Q of any segment recomputed;
 * p = (b + 1) / (R + 1), b the count of shuffles whose largest Q reaches the observed one. Under
 * no change every order of a segment is equally likely, so P(p <= alpha) <= alpha: an A/A history
 * gets a first (false) change point with probability at most alpha, whatever the distribution.
 *
 * The shuffles draw from splitmix64 with a fixed seed: the same history gives the same answer.
 * Every sum of distances over a block of the series comes from a 2-D prefix sum of the distance
 * matrix, so each test is O(n^2) per shuffle. */
#include "changepoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "splitmix64.h"
#include "stats.h"
#include "xalloc.h"

/* prefix[(i) (n+1) + j] = sum over r < i, c < j of |z[r] - z[c]|. */
static void prefix_build(const double *z, size_t n, double *prefix)
{
	size_t w = n + 1;
	memset(prefix, 0, w * sizeof(*prefix));
	for (size_t i = 0; i < n; i++) {
		double row = 0;
		prefix[(i + 1) * w] = 0;
		for (size_t j = 0; j < n; j++) {
			row += fabs(z[i] - z[j]);
			prefix[(i + 1) * w + j + 1] = prefix[i * w + j + 1] + row;
		}
	}
}

/* Sum of |z[r] - z[c]| over r in [r0, r1), c in [c0, c1). */
static double block(const double *prefix, size_t w, size_t r0, size_t r1, size_t c0, size_t c1)
{
	return prefix[r1 * w + c1] - prefix[r0 * w + c1] - prefix[r1 * w + c0] + prefix[r0 * w + c0];
}

/* The best split of a partition in each form: [0] over every kappa (Matteson and James), [1] with
 * kappa at the segment's end. q is -INFINITY where no segment can be split. */
struct split {
	double q[2];
	size_t seg[2], tau[2];
};

/* The largest Q over splits of [a, b) with both sides at least m long, in both forms, folded into
 * best (a segment too short to split leaves it as it is). */
static void segment_best(const double *prefix, size_t n, size_t s, size_t a, size_t b, size_t m,
			 struct split *best)
{
	size_t w = n + 1;
	if (b - a < 2 * m)
		return;
	for (size_t t = a + m; t + m <= b; t++) {
		double nx = (double)(t - a);
		double wx = block(prefix, w, a, t, a, t) / (nx * (nx - 1));   /* sum_{i<k} 2/(nx(nx-1)) */
		for (size_t k = t + m; k <= b; k++) {
			double ny = (double)(k - t);
			double between = block(prefix, w, a, t, t, k) / (nx * ny);
			double wy = block(prefix, w, t, k, t, k) / (ny * (ny - 1));
			double q = nx * ny / (nx + ny) * (2 * between - wx - wy);
			for (int f = 0; f < 2; f++)
				if (q > best->q[f] && (f == 0 || k == b)) {
					best->q[f] = q;
					best->seg[f] = s;
					best->tau[f] = t;
				}
		}
	}
}

/* The best split of every segment of the partition bounds[0..nb] (bounds[0] = 0, bounds[nb] = n). */
static struct split partition_best(const double *prefix, size_t n, const size_t *bounds, size_t nb,
				   size_t m)
{
	struct split best = {{-INFINITY, -INFINITY}, {0, 0}, {0, 0}};
	for (size_t s = 0; s < nb; s++)
		segment_best(prefix, n, s, bounds[s], bounds[s + 1], m, &best);
	return best;
}

/* The forms a detection uses, and the level each is held to (both: alpha / 2 each, Bonferroni). */
static int form_used(const struct cp_options *o, int f)
{
	return o->form == CP_FORM_BOTH || (int)o->form == (f == 0 ? CP_FORM_KAPPA : CP_FORM_WHOLE);
}

/* The permutation p of each form's observed Q: (b + 1) / (R + 1); stops early (p[f] then a lower
 * bound, already beyond its level) once no form used can reach its level. */
static void permutation_p(const double *y, size_t n, const size_t *bounds, size_t nb,
			  const struct cp_options *o, const struct split *observed, uint64_t *state,
			  double *z, double *prefix, double p[2])
{
	double level = o->form == CP_FORM_BOTH ? o->alpha / 2 : o->alpha;
	double give_up = level * (o->permutations + 1.0), reach[2];
	unsigned beyond[2] = {0, 0}, r;
	for (int f = 0; f < 2; f++)   /* the observed Q's rounding must not make it look rarer */
		reach[f] = observed->q[f] - 1e-9 * fabs(observed->q[f]);
	memcpy(z, y, n * sizeof(*z));
	for (r = 0; r < o->permutations; r++) {
		for (size_t s = 0; s < nb; s++)   /* Fisher-Yates within each segment */
			for (size_t i = bounds[s + 1] - 1; i > bounds[s]; i--) {
				size_t j = bounds[s] + (size_t)(splitmix64(state) % (i - bounds[s] + 1));
				double keep = z[i];
				z[i] = z[j];
				z[j] = keep;
			}
		prefix_build(z, n, prefix);
		struct split perm = partition_best(prefix, n, bounds, nb, o->min_segment);
		int hopeless = 1;
		for (int f = 0; f < 2; f++) {
			beyond[f] += perm.q[f] >= reach[f];
			hopeless &= !form_used(o, f) || beyond[f] + 1.0 > give_up;
		}
		if (hopeless) {
			r++;
			break;
		}
	}
	for (int f = 0; f < 2; f++)
		p[f] = (beyond[f] + 1.0) / (r + 1.0);
}

static double segment_mean(const double *y, size_t a, size_t b)
{
	double sum = 0;
	for (size_t i = a; i < b; i++)
		sum += y[i];
	return sum / (double)(b - a);
}

double cp_noise_of_series(const double *y, size_t n)
{
	if (n < 3)
		return 0;
	double *d = xmalloc((n - 1) * sizeof(*d));
	for (size_t i = 0; i + 1 < n; i++)
		d[i] = y[i + 1] - y[i];
	double med = median_inplace(d, n - 1);
	for (size_t i = 0; i + 1 < n; i++)
		d[i] = fabs(d[i] - med);
	double mad = median_inplace(d, n - 1);
	free(d);
	return 1.4826 * mad / sqrt(2.0);
}

/* Fill the points' means, changes and intervals from the partition; noise from the segments. */
static void describe(const struct cp_series *s, struct cp_result *r)
{
	size_t n = s->n, k = r->n + 1;
	double ss = 0, se2 = 0;
	for (size_t seg = 0; seg < k; seg++) {
		size_t a = seg ? r->points[seg - 1].index : 0, b = seg < r->n ? r->points[seg].index : n;
		double mean = segment_mean(s->y, a, b);
		for (size_t i = a; i < b; i++)
			ss += (s->y[i] - mean) * (s->y[i] - mean);
	}
	if (s->se)
		for (size_t i = 0; i < n; i++)
			se2 += s->se[i] * s->se[i] / (double)n;
	r->noise_df = n > k ? (double)(n - k) : 0;
	double own = r->noise_df > 0 ? sqrt(ss / r->noise_df) : 0;
	double model = s->run_noise > 0 ? sqrt(s->run_noise * s->run_noise + se2) : 0;
	r->noise_estimated = !(s->run_noise > 0);
	r->noise = own > model ? own : model;
	double tq = r->noise_df > 0 ? student_t_quantile(0.975, r->noise_df) : NAN;
	for (size_t i = 0; i < r->n; i++) {
		struct cp_point *p = &r->points[i];
		size_t a = i ? r->points[i - 1].index : 0, b = i + 1 < r->n ? r->points[i + 1].index : n;
		p->before = segment_mean(s->y, a, p->index);
		p->after = segment_mean(s->y, p->index, b);
		double d = p->after - p->before;
		double half = tq * r->noise * sqrt(1.0 / (double)(p->index - a) + 1.0 / (double)(b - p->index));
		p->change = expm1(d);
		p->lo = expm1(d - half);
		p->hi = expm1(d + half);
	}
}

static int cmp_point(const void *a, const void *b)
{
	size_t x = ((const struct cp_point *)a)->index, y = ((const struct cp_point *)b)->index;
	return (x > y) - (x < y);
}

/* The detector on a series whose every run is a session of its own. */
static int find_points(const struct cp_series *s, const struct cp_options *o, struct cp_result *out)
{
	memset(out, 0, sizeof(*out));
	out->p_stop = 1;
	if (o->min_segment < 2 || !(o->alpha > 0 && o->alpha < 1) || o->permutations < 1 ||
	    !(o->min_change >= 0) || o->form > CP_FORM_WHOLE)
		return BD_EINVAL;
	for (size_t i = 0; i < s->n; i++)
		if (!isfinite(s->y[i]))
			return BD_EINVAL;
	size_t n = s->n;
	if (n >= 2 * o->min_segment) {
		size_t *bounds = xmalloc((n + 2) * sizeof(*bounds)), nb = 1;
		double *prefix = xmalloc((n + 1) * (n + 1) * sizeof(*prefix));
		double *z = xmalloc(n * sizeof(*z));
		uint64_t state = o->seed ^ (uint64_t)n;
		out->points = xmalloc((n / o->min_segment + 1) * sizeof(*out->points));
		bounds[0] = 0;
		bounds[1] = n;
		prefix_build(s->y, n, prefix);
		for (;;) {
			struct split best = partition_best(prefix, n, bounds, nb, o->min_segment);
			if (best.q[0] == -INFINITY)
				break;
			double p[2];
			permutation_p(s->y, n, bounds, nb, o, &best, &state, z, prefix, p);
			prefix_build(s->y, n, prefix);   /* the shuffles used it */
			int f = o->form == CP_FORM_WHOLE || (o->form == CP_FORM_BOTH && p[1] < p[0]);
			double pf = o->form == CP_FORM_BOTH ? fmin(1, 2 * p[f]) : p[f];
			if (pf > o->alpha) {
				out->p_stop = pf;
				break;
			}
			size_t seg = best.seg[f];
			out->points[out->n++] = (struct cp_point){.index = best.tau[f], .p = pf};
			memmove(&bounds[seg + 2], &bounds[seg + 1], (nb - seg) * sizeof(*bounds));
			bounds[seg + 1] = best.tau[f];
			nb++;
		}
		qsort(out->points, out->n, sizeof(*out->points), cmp_point);
		free(bounds);
		free(prefix);
		free(z);
	}
	/* merge: the smallest change below min_change goes first, then its neighbours are redone */
	double floor_log = log1p(o->min_change);
	for (;;) {
		describe(s, out);
		size_t weakest = out->n;
		for (size_t i = 0; i < out->n; i++)
			if (fabs(out->points[i].after - out->points[i].before) < floor_log &&
			    (weakest == out->n || fabs(out->points[i].after - out->points[i].before) <
							  fabs(out->points[weakest].after -
							       out->points[weakest].before)))
				weakest = i;
		if (weakest == out->n)
			break;
		memmove(&out->points[weakest], &out->points[weakest + 1],
			(out->n - weakest - 1) * sizeof(*out->points));
		out->n--;
	}
	out->sessions = n;
	return 0;
}

/* Runs of one session share its shift: were they points of their own, a session's runs would
 * move together, the shuffles would break them apart, and an A/A history would get a change point
 * far more often than alpha (20 nights of 3 runs, 3% noise a quarter of it the session's: 14 of
 * 200 series against 4 of 200 with one run a night; docs/performance.md). So the series the
 * detector sees is one point a session, its mean y: under no change the sessions, not the runs,
 * are exchangeable. A mean of k runs is less noisy than one run by the runs' own part:
 * var = run_noise^2 - within^2 (1 - 1/k), its own standard error se^2 / k. */
int changepoints_find(const struct cp_series *s, const struct cp_options *o, struct cp_result *out)
{
	size_t n = s->n, nsess = 0;
	for (size_t i = 0; i < n; i++)
		nsess += !s->session || i == 0 || s->session[i] != s->session[i - 1];
	if (nsess == n) {
		struct cp_series runs = *s;
		runs.session = NULL;
		return find_points(&runs, o, out);
	}
	size_t *start = xmalloc((nsess + 1) * sizeof(*start));
	double *m = xmalloc(nsess * sizeof(*m)), *se = xmalloc(nsess * sizeof(*se));
	double within2 = s->run_noise_within * s->run_noise_within, model2 = 0;
	if (within2 > s->run_noise * s->run_noise)
		within2 = s->run_noise * s->run_noise;
	for (size_t i = 0, k = 0; i < n; k++) {
		size_t end = i + 1;
		while (end < n && s->session[end] == s->session[i])
			end++;
		double sum = 0, se2 = 0, runs = (double)(end - i);
		for (size_t j = i; j < end; j++) {
			sum += s->y[j];
			se2 += s->se ? s->se[j] * s->se[j] : 0;
		}
		start[k] = i;
		m[k] = sum / runs;
		se[k] = sqrt(se2) / runs;
		model2 += (s->run_noise * s->run_noise - within2 * (1 - 1 / runs)) / (double)nsess;
		i = end;
	}
	start[nsess] = n;
	struct cp_series means = {.y = m, .se = s->se ? se : NULL, .n = nsess,
				  .run_noise = s->run_noise > 0 ? sqrt(model2) : 0};
	int rc = find_points(&means, o, out);
	for (size_t i = 0; !rc && i < out->n; i++)   /* a session's index to its first run's */
		out->points[i].index = start[out->points[i].index];
	free(start);
	free(m);
	free(se);
	return rc;
}

void cp_result_free(struct cp_result *r)
{
	if (!r)
		return;
	free(r->points);
	memset(r, 0, sizeof(*r));
}
