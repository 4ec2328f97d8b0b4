/* report/stats.c: descriptive statistics (mean, standard deviation, median, extremes) and the
 * comparisons behind the report: bootstrap interval of a ratio of medians, Mann-Whitney U,
 * speedup summaries and the steady-state index of a series of iterations. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double median_inplace(double *x, size_t n)
{
	if (n == 0)
		return 0;
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void summarize(const double *x, size_t n, struct summary *s)
{
	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	s->n = n;
	s->min = s->max = x[0];
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < s->min)
			s->min = x[i];
		if (x[i] > s->max)
			s->max = x[i];
	}
	s->mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	s->cv = s->mean != 0 ? s->std / s->mean : 0;
	double *copy = malloc(n * sizeof(*copy));
	if (copy) {
		memcpy(copy, x, n * sizeof(*copy));
		s->median = median_inplace(copy, n);
		free(copy);
	}
}

/* ---- selection -------------------------------------------------------------------------------- */

static void swap_double(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* Reorder x[0..n-1] so that x[k] is the k-th smallest (0-based), everything before it <= x[k] and
 * everything after it >= x[k]; returns x[k]. Hoare partition around a median of three: expected
 * O(n), and the scans stay in bounds even if a NaN slips in (the result is then meaningless). */
static double select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (hi > lo) {
		if (hi - lo < 16) {
			for (size_t i = lo + 1; i <= hi; i++)
				for (size_t j = i; j > lo && x[j] < x[j - 1]; j--)
					swap_double(&x[j], &x[j - 1]);
			break;
		}
		size_t mid = lo + (hi - lo) / 2;
		if (x[mid] < x[lo])
			swap_double(&x[mid], &x[lo]);
		if (x[hi] < x[lo])
			swap_double(&x[hi], &x[lo]);
		if (x[hi] < x[mid])
			swap_double(&x[hi], &x[mid]);
		double pivot = x[mid];
		size_t i = lo, j = hi;
		for (;;) {
			while (x[i] < pivot)
				i++;
			while (pivot < x[j])
				j--;
			if (i >= j)
				break;
			swap_double(&x[i], &x[j]);
			i++;
			j--;
		}
		/* x[lo..j] <= pivot <= x[j+1..hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return x[k];
}

/* Median of x[0..n-1], n > 0, by selection; reorders x. Same arithmetic as median_inplace(), so
 * the two agree bit for bit. */
static double median_select(double *x, size_t n)
{
	double upper = select_kth(x, n, n / 2);
	if (n % 2)
		return upper;
	/* after the selection x[0..n/2-1] <= upper: the lower middle value is their maximum */
	double lower = x[0];
	for (size_t i = 1; i < n / 2; i++)
		if (x[i] > lower)
			lower = x[i];
	return 0.5 * (lower + upper);
}

/* The p-quantile (0 <= p <= 1) of x[0..n-1], n > 0, interpolated linearly between order
 * statistics (Hyndman-Fan type 7, the default of R and NumPy); reorders x. */
static double quantile_select(double *x, size_t n, double p)
{
	double h = p * (double)(n - 1);
	size_t k = (size_t)h;
	if (k >= n - 1)
		return select_kth(x, n, n - 1);
	double below = select_kth(x, n, k), frac = h - (double)k;
	if (frac == 0)
		return below;
	double above = x[k + 1];
	for (size_t i = k + 2; i < n; i++)
		if (x[i] < above)
			above = x[i];
	/* equal neighbours need no interpolation (and two equal infinities would give NaN) */
	return above == below ? below : below + frac * (above - below);
}

/* ---- bootstrap -------------------------------------------------------------------------------- */

/* xoshiro256** (Blackman and Vigna), seeded through splitmix64 as its authors recommend. */
struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *g, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		g->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *g)
{
	uint64_t *s = g->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Exactly uniform integer in [0, n) from 32 random bits, n >= 1 (Lemire's multiply-and-reject). */
static uint32_t uniform_below(uint32_t bits, uint32_t n, struct rng *g)
{
	uint64_t m = (uint64_t)bits * n;
	if ((uint32_t)m < n) {
		uint32_t threshold = (uint32_t)-n % n;
		while ((uint32_t)m < threshold)
			m = (uint64_t)(uint32_t)rng_next(g) * n;
	}
	return (uint32_t)(m >> 32);
}

/* Median of one resample with replacement of sorted[0..n-1] (ascending). Since sorted is
 * monotone, the k-th smallest resampled value is sorted[k-th smallest drawn index], so the draw
 * is a histogram of n indices (counts: n entries, scratch) walked up to the middle ranks: O(n),
 * no sort and no copy of values. */
static double resample_median(const double *sorted, size_t n, uint32_t *counts, struct rng *g)
{
	memset(counts, 0, n * sizeof(*counts));
	size_t i = 0;
	for (; i + 1 < n; i += 2) {
		uint64_t r = rng_next(g);
		counts[uniform_below((uint32_t)r, (uint32_t)n, g)]++;
		counts[uniform_below((uint32_t)(r >> 32), (uint32_t)n, g)]++;
	}
	if (i < n)
		counts[uniform_below((uint32_t)(rng_next(g) >> 32), (uint32_t)n, g)]++;

	size_t lower_rank = (n - 1) / 2, upper_rank = n / 2; /* 0-based ranks of the middle values */
	size_t j = 0, seen = counts[0];
	while (seen <= lower_rank)
		seen += counts[++j];
	double lower = sorted[j];
	if (n % 2)
		return lower;
	while (seen <= upper_rank)
		seen += counts[++j];
	return 0.5 * (lower + sorted[j]);
}

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Besides the documented cases, BD_EINVAL also answers a NULL pointer, a non-finite sample, a level
 * outside (0, 1), resamples < 1 or a series longer than UINT32_MAX; BD_ENOMEM a failed allocation.
 * *out is zeroed on every error. One allocation per call, none per resample. */
int bootstrap_ratio_of_medians(const double *base, size_t nb, const double *cand, size_t nc,
			       double level, int resamples, uint64_t seed, struct ratio_ci *out)
{
	if (!out)
		return BD_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!base || !cand || nb == 0 || nc == 0 || nb > UINT32_MAX || nc > UINT32_MAX)
		return BD_EINVAL;
	if (!(level > 0 && level < 1) || resamples < 1 || !all_finite(base, nb) ||
	    !all_finite(cand, nc))
		return BD_EINVAL;

	size_t nmax = nb > nc ? nb : nc, nr = (size_t)resamples;
	/* one block: sorted base (nb), sorted cand (nc), ratios (nr) as doubles, then counts (nmax) */
	double *block = malloc((nb + nc + nr) * sizeof(double) + nmax * sizeof(uint32_t));
	if (!block)
		return BD_ENOMEM;
	double *base_sorted = block, *cand_sorted = block + nb, *ratios = cand_sorted + nc;
	uint32_t *counts = (uint32_t *)(ratios + nr);

	memcpy(base_sorted, base, nb * sizeof(*base));
	memcpy(cand_sorted, cand, nc * sizeof(*cand));
	double mb = median_inplace(base_sorted, nb), mc = median_inplace(cand_sorted, nc);
	int rc = BD_EINVAL;
	if (!(mb > 0 && mc > 0))
		goto done;

	struct rng g;
	rng_seed(&g, seed);
	for (size_t r = 0; r < nr; r++) {
		double rb = resample_median(base_sorted, nb, counts, &g);
		double rcand = resample_median(cand_sorted, nc, counts, &g);
		/* a series with non-positive samples can resample to a median of 0 or less; 0/0 would
		 * be NaN, which has no place in a percentile, so it counts as no change */
		ratios[r] = rb == 0 && rcand == 0 ? 1 : rb / rcand;
	}
	double tail = (1 - level) / 2;
	out->ratio = mb / mc;
	out->lo = quantile_select(ratios, nr, tail);
	out->hi = quantile_select(ratios, nr, 1 - tail);
	rc = 0;
done:
	free(block);
	return rc;
}

/* ---- Mann-Whitney U --------------------------------------------------------------------------- */

struct ranked {
	double value;
	int from_x;
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->value, &((const struct ranked *)b)->value);
}

/* Besides the documented cases, BD_EINVAL answers an empty series, a NULL pointer or a NaN (it has
 * no rank); BD_ENOMEM a failed allocation. *out is zeroed on every error. */
int mann_whitney_u(const double *x, size_t nx, const double *y, size_t ny, struct mann_whitney *out)
{
	if (!out)
		return BD_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!x || !y || nx == 0 || ny == 0)
		return BD_EINVAL;
	for (size_t i = 0; i < nx; i++)
		if (isnan(x[i]))
			return BD_EINVAL;
	for (size_t i = 0; i < ny; i++)
		if (isnan(y[i]))
			return BD_EINVAL;

	size_t n = nx + ny;
	struct ranked *all = malloc(n * sizeof(*all));
	if (!all)
		return BD_ENOMEM;
	for (size_t i = 0; i < nx; i++)
		all[i] = (struct ranked){x[i], 1};
	for (size_t i = 0; i < ny; i++)
		all[nx + i] = (struct ranked){y[i], 0};
	qsort(all, n, sizeof(*all), cmp_ranked);

	/* each run of ties at 0-based positions [i, j) shares the midrank (i + 1 + j) / 2 */
	double rank_sum_x = 0, tie_term = 0; /* tie_term: sum of t^3 - t over tie groups of size t */
	for (size_t i = 0, j; i < n; i = j) {
		size_t in_x = 0;
		for (j = i; j < n && all[j].value == all[i].value; j++)
			in_x += (size_t)all[j].from_x;
		double t = (double)(j - i);
		rank_sum_x += (double)in_x * ((double)(i + 1 + j) / 2);
		tie_term += t * t * t - t;
	}
	free(all);

	double n1 = (double)nx, n2 = (double)ny, nn = (double)n;
	out->u = rank_sum_x - n1 * (n1 + 1) / 2;
	double mean = n1 * n2 / 2;
	double var = n1 * n2 / 12 * ((nn + 1) - tie_term / (nn * (nn - 1)));
	double d = out->u - mean;
	/* continuity correction moves U half a step toward the mean; within half a step, z is 0 */
	if (var <= 0 || fabs(d) <= 0.5) {
		out->z = 0;
		out->p = 1;
	} else {
		out->z = (d - copysign(0.5, d)) / sqrt(var);
		out->p = erfc(fabs(out->z) / sqrt(2.0));
		if (out->p > 1)
			out->p = 1;
	}
	return 0;
}

/* ---- summaries -------------------------------------------------------------------------------- */

/* Only finite, positive speedups count (n is how many did). The median needs a copy; if that
 * allocation fails the median is NaN, since this contract has no status to return. */
void speedup_summarize(const double *speedups, size_t n, double tie_band, struct speedup_summary *out)
{
	memset(out, 0, sizeof(*out));
	double *valid = n ? malloc(n * sizeof(*valid)) : NULL;
	double log_sum = 0, sum = 0;
	for (size_t i = 0; i < n; i++) {
		double s = speedups[i];
		if (!(s > 0) || !isfinite(s))
			continue;
		if (out->n == 0 || s < out->min)
			out->min = s;
		if (out->n == 0 || s > out->max)
			out->max = s;
		if (s > 1 + tie_band)
			out->wins++;
		else if (s < 1 - tie_band)
			out->losses++;
		else
			out->ties++;
		log_sum += log(s);
		sum += s;
		if (valid)
			valid[out->n] = s;
		out->n++;
	}
	if (out->n) {
		out->geomean = exp(log_sum / (double)out->n);
		out->mean = sum / (double)out->n;
		out->median = valid ? median_select(valid, out->n) : NAN;
	}
	free(valid);
}

/* The median of the last half needs a copy; if that allocation fails the answer is n (no steady
 * state found), the cautious one, since this contract has no status to return. A value is within
 * band when |x - m| <= band * |m|; a NaN never is. */
size_t steady_state_index(const double *x, size_t n, double band)
{
	if (n == 0)
		return 0;
	size_t half_start = n / 2, half_n = n - half_start; /* the last ceil(n/2) values */
	double *half = malloc(half_n * sizeof(*half));
	if (!half)
		return n;
	memcpy(half, x + half_start, half_n * sizeof(*half));
	double m = median_select(half, half_n), tol = band * fabs(m);
	free(half);
	size_t i = n;
	while (i > 0 && fabs(x[i - 1] - m) <= tol)
		i--;
	return i;
}
