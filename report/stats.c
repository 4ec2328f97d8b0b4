/* report/stats.c: descriptive statistics (mean, standard deviation, median and its confidence
 * interval, quantiles, extremes) — the report's only implementation of them — and the
 * comparisons behind the report: bootstrap interval of a ratio of medians, Mann-Whitney U,
 * speedup summaries and the steady-state index of a series of iterations. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "splitmix64.h"
#include "xalloc.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void sort_doubles(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
}

double median_inplace(double *x, size_t n)
{
	if (n == 0)
		return 0;
	sort_doubles(x, n);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* A malloc'd copy of x[0..n-1], n > 0: the scratch that selection and sorting reorder, so that
 * callers' series stay as they are. */
static double *scratch_copy(const double *x, size_t n)
{
	double *copy = xmalloc(n * sizeof(*copy));
	memcpy(copy, x, n * sizeof(*copy));
	return copy;
}

/* The 1-based rank k of the lower end of the median's 95% interval over n samples: the largest k
 * with P(Binomial(n, 1/2) <= k - 1) <= 0.025, so that [x_(k), x_(n+1-k)] holds the median with
 * probability 1 - 2 P(B <= k - 1) >= 95%, as close to 95% as whole ranks allow; 1 (the whole
 * range) when even that falls short (n < 6). The binomial terms are summed from 8 standard
 * deviations below n/2 (what lies below is under 1e-15), each from the last, the first through
 * lgamma, so that no 2^-n underflows: O(sqrt(n)). */
static size_t median_ci_rank(size_t n)
{
	double dn = (double)n, from = floor(dn / 2 - 4 * sqrt(dn));
	size_t j = from > 0 ? (size_t)from : 0, k = 1;
	double term = exp(lgamma(dn + 1) - lgamma((double)j + 1) - lgamma(dn - (double)j + 1) -
			  dn * log(2.0));
	for (double cdf = term; j + 1 <= n / 2 && cdf <= 0.025; j++) {
		k = j + 1;   /* P(B <= k - 1) = cdf <= 0.025 */
		term *= (dn - (double)j) / ((double)j + 1);
		cdf += term;
	}
	return k;
}

int median_ci(const double *x, size_t n, double *median, double *lo, double *hi)
{
	if (n == 0)
		return BD_EINVAL;
	double *sorted = scratch_copy(x, n);
	*median = median_inplace(sorted, n);
	size_t k = median_ci_rank(n);   /* 1-based; the upper end is its mirror */
	*lo = sorted[k - 1];
	*hi = sorted[n - k];
	free(sorted);
	return 0;
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
	double *copy = scratch_copy(x, n);
	s->median = median_inplace(copy, n);
	free(copy);
}

/* ---- selection -------------------------------------------------------------------------------- */

static void swap_double(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* Reorder x[0..n-1] so that x[k] is the k-th smallest (0-based), everything before it <= x[k] and
 * everything after it >= x[k]; returns x[k]. Expected O(n): median-of-three pivots and a
 * branchless Lomuto partition (about three times faster than Hoare's here, its branches being
 * unpredictable); when the pivot is the least value left, the values equal to it are gathered
 * too, so runs of ties (a constant series gives a constant bootstrap) cannot make it quadratic.
 * NaNs must not be present. */
static double select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* the k-th smallest lies in x[lo..hi-1] */
	while (hi - lo > 16) {
		size_t mid = lo + (hi - lo) / 2, last = hi - 1;
		if (x[mid] < x[lo])
			swap_double(&x[mid], &x[lo]);
		if (x[last] < x[lo])
			swap_double(&x[last], &x[lo]);
		if (x[last] < x[mid])
			swap_double(&x[last], &x[mid]);
		swap_double(&x[mid], &x[last]);
		double pivot = x[last];
		size_t less = lo; /* x[lo..less-1] < pivot */
		for (size_t i = lo; i < last; i++) {
			double v = x[i];
			x[i] = x[less];
			x[less] = v;
			less += v < pivot;
		}
		swap_double(&x[less], &x[last]);
		if (k < less) {
			hi = less;
			continue;
		}
		size_t equal = less + 1; /* x[less..equal-1] == pivot */
		if (less == lo) {
			for (size_t i = equal; i < hi; i++) {
				double v = x[i];
				x[i] = x[equal];
				x[equal] = v;
				equal += !(pivot < v);
			}
		}
		if (k < equal)
			return pivot;
		lo = equal;
	}
	for (size_t i = lo + 1; i < hi; i++)
		for (size_t j = i; j > lo && x[j] < x[j - 1]; j--)
			swap_double(&x[j], &x[j - 1]);
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

/* The order statistic of 0-based rank k of x[0..n-1] plus frac of the way to the next one (k < n,
 * 0 <= frac < 1); reorders x like select_kth(). */
static double rank_interpolated(double *x, size_t n, size_t k, double frac)
{
	double below = select_kth(x, n, k);
	if (frac == 0 || k + 1 >= n)
		return below;
	double above = x[k + 1];
	for (size_t i = k + 2; i < n; i++)
		if (x[i] < above)
			above = x[i];
	/* equal neighbours need no interpolation (and two equal infinities would give NaN) */
	return above == below ? below : below + frac * (above - below);
}

/* The p_lo- and p_hi-quantiles (0 <= p_lo <= p_hi <= 1) of x[0..n-1], n > 0, interpolated linearly
 * between order statistics (Hyndman-Fan type 7, the default of R and NumPy); reorders x. The second
 * selection only searches what the first left above it. */
static void quantile_pair(double *x, size_t n, double p_lo, double p_hi, double *lo, double *hi)
{
	double h_lo = p_lo * (double)(n - 1), h_hi = p_hi * (double)(n - 1);
	size_t k_lo = (size_t)h_lo, k_hi = (size_t)h_hi;
	*lo = rank_interpolated(x, n, k_lo, h_lo - (double)k_lo);
	if (k_hi > k_lo) /* x[k_lo+1..n-1] now holds exactly the ranks above k_lo */
		*hi = rank_interpolated(x + k_lo + 1, n - k_lo - 1, k_hi - k_lo - 1, h_hi - (double)k_hi);
	else
		*hi = rank_interpolated(x, n, k_hi, h_hi - (double)k_hi);
}

int quantiles(const double *x, size_t n, double p_lo, double p_hi, double *lo, double *hi)
{
	if (n == 0)
		return BD_EINVAL;
	double *copy = scratch_copy(x, n);
	quantile_pair(copy, n, p_lo, p_hi, lo, hi);
	free(copy);
	return 0;
}

/* ---- bootstrap -------------------------------------------------------------------------------- */

/* xoshiro256** (Blackman and Vigna), seeded through splitmix64 as its authors recommend. */
struct rng {
	uint64_t s[4];
};

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

/* Uniform double in [0, 1) from the top 53 bits. */
static double rng_unit(struct rng *g)
{
	return (double)(rng_next(g) >> 11) * 0x1p-53;
}

/*
 * The median of a resample of a sorted series, drawn without drawing the resample.
 *
 * Resampling sorted[0..n-1] with replacement draws n indices uniformly from 0..n-1; because sorted
 * is ascending, the k-th smallest resampled value is sorted[k-th smallest index]. With k = (n+1)/2
 * (1-based), A = the k-th smallest index and N(j) = how many indices are <= j ~ Binomial(n, (j+1)/n):
 *
 *   P(A <= j) = P(N(j) >= k)                                   (tabulated once per series: cdf)
 *
 * For odd n the median is sorted[A]. For even n it is (sorted[A] + sorted[B]) / 2 with B the
 * (k+1)-th smallest index; B > A exactly when N(A) = k and some index equals A, so
 *
 *   P(A = a, B > a) = C(n,k) ((n-1-a)/n)^(n-k) [((a+1)/n)^k - (a/n)^k]
 *
 * and then the n - k indices above a are independent and uniform on a+1..n-1, B being their least:
 * B = a + T with T the least of n - k uniform draws on 1..L, L = n-1-a. T = 1 with probability
 * 1 - (1 - 1/L)^(n-k) (tabulated: first), and given T > 1, T - 1 is the least of n - k uniform
 * draws on 1..L-1. So D = B - A has P(D = 0 | A = a) = 1 - P(A = a, B > a) / P(A = a) and
 * P(D = d+1 | D > d, A = a) = first[L - d]; the first steps are tabulated per a (step_cdf) and
 * compared without branches, and the rare longer steps walk up first[].
 *
 * Each resampled median so has exactly the distribution it has when the n indices are drawn one by
 * one, at O(1) expected cost instead of O(n) (a histogram of n drawn indices per resample took
 * about 4 s for 5000 pairs of 50-sample series at 2000 resamples).
 */
struct median_sampler {
	const double *sorted; /* (n) ascending */
	size_t n;
	double *cdf;          /* (n) P(A <= j); cdf[n-1] = 1 */
	double *step_cdf;     /* (n, STEPS) even n only: P(D <= d | A = a) at [a * STEPS + d] */
	double *first;        /* (n) even n only: first[L] = P(T = 1 | L); first[0] unused */
	uint32_t *guide;      /* (GUIDE n) the least j with cdf[j] > g / (GUIDE n): inversion
			       * starts there, and most often ends there too */
};

#define STEPS 4 /* D <= 3 in 97% of draws at 50 samples */
#define GUIDE 4

/* P(Binomial(n, q) >= k), 1 <= k <= n, 0 < q < 1, log_choose = log C(n, k), to within 1e-17 of
 * the larger of it and 0.001 (finer than a 53-bit uniform resolves). Sums the tail that does not
 * hold the mode, from its largest term outward, so terms only shrink and nothing overflows. */
static double binomial_at_least(size_t n, size_t k, double q, double log_choose)
{
	double dn = (double)n, odds = q / (1 - q), sum = 0;
	if ((double)k > dn * q) {
		double t = exp(log_choose + (double)k * log(q) + (dn - (double)k) * log1p(-q));
		for (size_t i = k; t > 0; i++) {
			sum += t;
			if (i == n || t < (sum + 1e-3) * 1e-17)
				break;
			t *= (dn - (double)i) / (double)(i + 1) * odds;
		}
		return sum;
	}
	/* 1 - P(N <= k-1), from pmf(k-1) = pmf(k) k / (n-k+1) down */
	double t = exp(log_choose + log((double)k / (dn - (double)k + 1)) +
		       (double)(k - 1) * log(q) + (dn - (double)k + 1) * log1p(-q));
	for (size_t i = k - 1; t > 0; i--) {
		sum += t;
		if (i == 0 || t < (sum + 1e-3) * 1e-17)
			break;
		t *= (double)i / (dn - (double)i + 1) / odds;
	}
	return 1 - sum;
}

/* Fill the tables of m (its arrays already point at scratch of n entries each). */
static void median_sampler_init(struct median_sampler *m)
{
	size_t n = m->n, k = (n + 1) / 2; /* 1-based rank of the (lower) middle value */
	double dn = (double)n, log_choose = 0;
	for (size_t i = 0; i < k; i++)
		log_choose += log((dn - (double)i) / (double)(i + 1));
	for (size_t j = 0; j + 1 < n; j++) {
		double p = binomial_at_least(n, k, (double)(j + 1) / dn, log_choose);
		/* rounding must not make the table step down */
		m->cdf[j] = j > 0 && p < m->cdf[j - 1] ? m->cdf[j - 1] : p;
	}
	m->cdf[n - 1] = 1;
	for (size_t g = 0, j = 0; g < GUIDE * n; g++) {
		while (m->cdf[j] <= (double)g / (GUIDE * dn))
			j++;
		m->guide[g] = (uint32_t)j;
	}
	if (n % 2)
		return;
	for (size_t above = 1; above < n; above++)
		m->first[above] = -expm1((dn - (double)k) * log1p(-1 / (double)above));
	for (size_t a = 0; a < n; a++) {
		double p_a = m->cdf[a] - (a ? m->cdf[a - 1] : 0), p_move = 0;
		if (a + 1 < n)
			p_move = exp(log_choose + (dn - (double)k) * log((dn - 1 - (double)a) / dn) +
				     (double)k * log((double)(a + 1) / dn)) *
				 -expm1((double)k * log1p(-1 / (double)(a + 1)));
		double stay = p_a > 0 ? 1 - p_move / p_a : 1, *c = m->step_cdf + a * STEPS;
		c[0] = stay < 0 ? 0 : stay > 1 ? 1 : stay;
		for (size_t d = 0, above = n - 1 - a; d + 1 < STEPS; d++)
			/* exactly 1 once no index is left above, so a step never runs past n - 1 */
			c[d + 1] = d + 1 >= above ? 1 : c[d] + (1 - c[d]) * m->first[above - d];
	}
}

/* Draw count resampled medians into medians[0..count-1]. The generator is worked on as a local
 * copy, so that its state stays in registers instead of being stored and reloaded per number. */
static void median_sampler_draw(const struct median_sampler *m, struct rng *gen, double *medians,
				size_t count)
{
	struct rng g = *gen;
	size_t n = m->n, slots = GUIDE * n;
	for (size_t r = 0; r < count; r++) {
		double u = rng_unit(&g);
		size_t slot = (size_t)(u * (double)slots);
		size_t a = m->guide[slot < slots ? slot : slots - 1];
		while (u >= m->cdf[a])
			a++;
		if (n % 2) {
			medians[r] = m->sorted[a];
			continue;
		}
		const double *c = m->step_cdf + a * STEPS;
		double v = rng_unit(&g);
		size_t b = a + (size_t)(v >= c[0]) + (size_t)(v >= c[1]) + (size_t)(v >= c[2]) +
			   (size_t)(v >= c[3]);
		if (b - a == STEPS) /* first[1] = 1 ends the walk by b = n - 1 */
			while (rng_unit(&g) >= m->first[n - b])
				b++;
		medians[r] = 0.5 * (m->sorted[a] + m->sorted[b]);
	}
	*gen = g;
}

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Besides the documented cases, BD_EINVAL also answers a NULL pointer, a non-finite sample, a level
 * outside (0, 1), resamples < 1 or a series longer than UINT32_MAX.
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

	size_t n = nb + nc, nr = (size_t)resamples;
	/* one block: for both series sorted values, cdf, first (n doubles each) and step_cdf
	 * (STEPS n), then ratios and candidate medians (nr each), then the guides (GUIDE n uint32) */
	double *block = xmalloc(((3 + STEPS) * n + 2 * nr) * sizeof(double) +
				GUIDE * n * sizeof(uint32_t));
	double *cdfs = block + n, *firsts = cdfs + n, *step_cdfs = firsts + n;
	double *ratios = step_cdfs + STEPS * n, *cand_medians = ratios + nr;
	uint32_t *guides = (uint32_t *)(cand_medians + nr);
	struct median_sampler sb = {block, nb, cdfs, step_cdfs, firsts, guides};
	struct median_sampler sc = {block + nb, nc, cdfs + nb, step_cdfs + STEPS * nb, firsts + nb,
				    guides + GUIDE * nb};

	memcpy(block, base, nb * sizeof(*base));
	memcpy(block + nb, cand, nc * sizeof(*cand));
	double mb = median_inplace(block, nb), mc = median_inplace(block + nb, nc);
	int rc = BD_EINVAL;
	if (!(mb > 0 && mc > 0))
		goto done;
	median_sampler_init(&sb);
	median_sampler_init(&sc);

	struct rng g;
	rng_seed(&g, seed);
	median_sampler_draw(&sb, &g, ratios, nr);
	median_sampler_draw(&sc, &g, cand_medians, nr);
	for (size_t r = 0; r < nr; r++) {
		/* a series with non-positive samples can resample to a median of 0 or less; 0/0 would
		 * be NaN, which has no place in a percentile, so it counts as no change */
		ratios[r] = ratios[r] == 0 && cand_medians[r] == 0 ? 1 : ratios[r] / cand_medians[r];
	}
	double tail = (1 - level) / 2;
	out->ratio = mb / mc;
	quantile_pair(ratios, nr, tail, 1 - tail, &out->lo, &out->hi);
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

/* The pooled ranking of x and y: twice the midrank of each value (an integer), in sorted order,
 * with which sample it came from. */
struct ranking {
	struct ranked *all;   /* (n) sorted */
	unsigned *rank2;      /* (n) twice the midrank of all[i] */
	size_t n, nx, ny;
	uint64_t rank2_sum_x; /* sum of rank2 over x */
	double tie_term;      /* sum of t^3 - t over tie groups of size t */
	int ties;
};

static void ranking_free(struct ranking *r)
{
	free(r->all);
	free(r->rank2);
}

/* BD_EINVAL for an empty series, a NULL pointer or a NaN (it has no rank). */
static int ranking_make(const double *x, size_t nx, const double *y, size_t ny, struct ranking *r)
{
	memset(r, 0, sizeof(*r));
	if (!x || !y || nx == 0 || ny == 0 || nx + ny > UINT32_MAX / 2)
		return BD_EINVAL;
	for (size_t i = 0; i < nx; i++)
		if (isnan(x[i]))
			return BD_EINVAL;
	for (size_t i = 0; i < ny; i++)
		if (isnan(y[i]))
			return BD_EINVAL;
	size_t n = nx + ny;
	r->all = xmalloc(n * sizeof(*r->all));
	r->rank2 = xmalloc(n * sizeof(*r->rank2));
	r->n = n;
	r->nx = nx;
	r->ny = ny;
	for (size_t i = 0; i < nx; i++)
		r->all[i] = (struct ranked){x[i], 1};
	for (size_t i = 0; i < ny; i++)
		r->all[nx + i] = (struct ranked){y[i], 0};
	qsort(r->all, n, sizeof(*r->all), cmp_ranked);
	/* each run of ties at 0-based positions [i, j) shares the midrank (i + 1 + j) / 2 */
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && r->all[j].value == r->all[i].value; j++)
			;
		double t = (double)(j - i);
		r->tie_term += t * t * t - t;
		r->ties |= j - i > 1;
		for (size_t k = i; k < j; k++) {
			r->rank2[k] = (unsigned)(i + 1 + j);
			if (r->all[k].from_x)
				r->rank2_sum_x += r->rank2[k];
		}
	}
	return 0;
}

/*
 * Exact tails of the rank sum of x under the null hypothesis (every assignment of the pooled
 * values to the two samples equally likely), conditional on the ties observed: the distribution
 * of the sum of k of the n doubled midranks drawn without replacement, by counting subsets
 * (cnt[j][s] = how many j-subsets of the values seen so far sum to s) over the smaller sample.
 * Without ties this is the classical exact Mann-Whitney distribution (scipy's method='exact');
 * with ties it is the exact permutation distribution of the midrank statistic. O(n k S) time
 * for S the sum of all doubled ranks, hence only for n <= MW_EXACT_MAX_N. Sets *ge = P(W_x >=
 * observed), *le = P(W_x <= observed).
 */
static void rank_sum_exact_tails(const struct ranking *r, double *ge, double *le)
{
	int x_small = r->nx <= r->ny;
	size_t k = x_small ? r->nx : r->ny, n = r->n;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += r->rank2[i];
	uint64_t obs = x_small ? r->rank2_sum_x : total - r->rank2_sum_x; /* of the smaller sample */
	size_t width = (size_t)total + 1;
	double *cnt = xcalloc((k + 1) * width, sizeof(*cnt));
	cnt[0] = 1;
	uint64_t reach = 0; /* the largest sum seen so far */
	for (size_t i = 0; i < n; i++) {
		unsigned v = r->rank2[i];
		reach += v;
		for (size_t j = i + 1 < k ? i + 1 : k; j >= 1; j--) {
			double *to = cnt + j * width;
			const double *from = cnt + (j - 1) * width;
			for (size_t sum = (size_t)reach; sum >= v; sum--)
				to[sum] += from[sum - v];
		}
	}
	const double *dist = cnt + k * width;
	double all = 0, at_least = 0, at_most = 0;
	for (size_t sum = 0; sum < width; sum++) {
		all += dist[sum];
		if (sum >= obs)
			at_least += dist[sum];
		if (sum <= obs)
			at_most += dist[sum];
	}
	free(cnt);
	/* W_x = total - W_small when the smaller sample is y: the tails swap */
	*ge = (x_small ? at_least : at_most) / all;
	*le = (x_small ? at_most : at_least) / all;
	if (*ge > 1)
		*ge = 1;
	if (*le > 1)
		*le = 1;
}

/* U of x, z, and the normal-approximation tails P(U >= u) and P(U <= u) with tie and continuity
 * correction. */
static void rank_sum_normal(const struct ranking *r, double *u, double *z, double *ge, double *le)
{
	double n1 = (double)r->nx, n2 = (double)r->ny, nn = (double)r->n;
	*u = (double)r->rank2_sum_x / 2 - n1 * (n1 + 1) / 2;
	double mean = n1 * n2 / 2;
	double var = n1 * n2 / 12 * ((nn + 1) - r->tie_term / (nn * (nn - 1)));
	double d = *u - mean;
	if (var <= 0) {
		*z = 0;
		*ge = *le = 1;
		return;
	}
	/* continuity correction: half a step toward the mean for each tail */
	*z = fabs(d) <= 0.5 ? 0 : (d - copysign(0.5, d)) / sqrt(var);
	*ge = 0.5 * erfc((d - 0.5) / sqrt(var) / sqrt(2.0));
	*le = 0.5 * erfc(-(d + 0.5) / sqrt(var) / sqrt(2.0));
	if (*ge > 1)
		*ge = 1;
	if (*le > 1)
		*le = 1;
}

/* Returns 0; BD_EINVAL for an empty series, a NULL pointer or a NaN (it has no rank). *out is
 * zeroed on every error. */
int mann_whitney_u(const double *x, size_t nx, const double *y, size_t ny, struct mann_whitney *out)
{
	if (!out)
		return BD_EINVAL;
	memset(out, 0, sizeof(*out));
	struct ranking r;
	int rc = ranking_make(x, nx, y, ny, &r);
	if (rc)
		return rc;
	double ge, le;
	rank_sum_normal(&r, &out->u, &out->z, &ge, &le);
	if (r.tie_term >= (double)r.n * r.n * r.n - (double)r.n) {
		out->p = 1; /* every value tied: nothing to rank */
	} else if (r.n <= MW_EXACT_MAX_N) {
		out->exact = 1;
		rank_sum_exact_tails(&r, &ge, &le);
		out->p = 2 * (ge < le ? ge : le);
	} else {
		/* within half a step of the mean, z is 0 and p is 1 */
		out->p = out->z == 0 ? 1 : erfc(fabs(out->z) / sqrt(2.0));
	}
	if (out->p > 1)
		out->p = 1;
	ranking_free(&r);
	return 0;
}

int mann_whitney_greater(const double *x, size_t nx, const double *y, size_t ny, double *p)
{
	if (!p)
		return BD_EINVAL;
	*p = 1;
	struct ranking r;
	int rc = ranking_make(x, nx, y, ny, &r);
	if (rc)
		return rc;
	double u, z, ge, le;
	rank_sum_normal(&r, &u, &z, &ge, &le);
	if (r.n <= MW_EXACT_MAX_N)
		rank_sum_exact_tails(&r, &ge, &le);
	*p = ge;
	ranking_free(&r);
	return 0;
}

double mann_whitney_min_p(size_t nx, size_t ny)
{
	if (nx == 0 || ny == 0)
		return 1;
	/* 1 / C(nx + ny, nx): the one arrangement with every x above every y */
	double log_choose = lgamma((double)(nx + ny + 1)) - lgamma((double)(nx + 1)) -
			    lgamma((double)(ny + 1));
	double exact = exp(-log_choose);
	if (nx + ny <= MW_EXACT_MAX_N)
		return exact;
	/* the normal approximation at full separation (continuity corrected) */
	double n1 = (double)nx, n2 = (double)ny;
	double d = n1 * n2 / 2, sd = sqrt(n1 * n2 * (n1 + n2 + 1) / 12);
	return 0.5 * erfc((d - 0.5) / sd / sqrt(2.0));
}

/* ---- Student's t and multiplicity ------------------------------------------------------------ */

/* One step of the modified Lentz algorithm for a continued fraction b0 + a1/(b1 + a2/(b2 + ...)):
 * with its running c and d, the factor by which the convergent changes. */
static double lentz_step(double *c, double *d, double a, double b)
{
	const double tiny = 1e-300;
	*d = b + a * *d;
	*d = fabs(*d) < tiny ? tiny : *d;
	*c = b + a / *c;
	*c = fabs(*c) < tiny ? tiny : *c;
	*d = 1 / *d;
	return *d * *c;
}

/* Continued fraction of the regularized incomplete beta function I_x(a, b) (modified Lentz), for
 * x < (a + 1) / (a + b + 2), where it converges fast. */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	d = fabs(d) < tiny ? tiny : d;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 500; m++) {
		double m2 = 2.0 * m;
		h *= lentz_step(&c, &d, m * (b - m) * x / ((a + m2 - 1) * (a + m2)), 1);
		double delta = lentz_step(&c, &d, -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)), 1);
		h *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return h;
}

/* I_x(a, b), 0 <= x <= 1. */
static double beta_regularized(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double student_t_sf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 0 : 1;
	double tail = 0.5 * beta_regularized(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? tail : 1 - tail;
}

double student_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -student_t_quantile(1 - p, df);
	/* bisection on the survival function: P(T > q) = 1 - p */
	double lo = 0, hi = 1;
	while (student_t_sf(hi, df) > 1 - p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (student_t_sf(mid, df) > 1 - p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* Regularized lower incomplete gamma P(a, x), series or continued fraction (Numerical Recipes'
 * split at x = a + 1), to about 1e-14: the chi-square limit of F. */
static double gamma_regularized(double a, double x)
{
	if (x <= 0)
		return 0;
	double front = exp(a * log(x) - x - lgamma(a));
	if (x < a + 1) {
		double term = 1 / a, sum = term;
		for (int n = 1; n < 1000 && fabs(term) > 1e-16 * fabs(sum); n++) {
			term *= x / (a + n);
			sum += term;
		}
		return front * sum;
	}
	double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
	for (int i = 1; i < 1000; i++) {
		b += 2;
		double delta = lentz_step(&c, &d, -i * (i - a), b);
		h *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return 1 - front * h;
}

double f_sf(double x, double d1, double d2)
{
	if (isnan(x) || !(d1 > 0) || !(d2 > 0))
		return NAN;
	if (x <= 0)
		return 1;
	if (isinf(x))
		return 0;
	if (isinf(d2))
		return 1 - gamma_regularized(d1 / 2, d1 * x / 2);
	return beta_regularized(d2 / 2, d1 / 2, d2 / (d2 + d1 * x));
}

double f_quantile(double p, double d1, double d2)
{
	if (!(p > 0 && p < 1) || !(d1 > 0) || !(d2 > 0))
		return NAN;
	double lo = 0, hi = 1;
	while (f_sf(hi, d1, d2) > 1 - p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (f_sf(mid, d1, d2) > 1 - p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

struct ordered_p {
	double p;
	size_t at;
};

static int cmp_ordered_p(const void *a, const void *b)
{
	return cmp_double(&((const struct ordered_p *)a)->p, &((const struct ordered_p *)b)->p);
}

void bh_adjust(const double *p, size_t n, double *q)
{
	if (n == 0)
		return;
	struct ordered_p *o = xmalloc(n * sizeof(*o));
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		q[i] = NAN;
		if (!isnan(p[i]))
			o[m++] = (struct ordered_p){p[i], i};
	}
	qsort(o, m, sizeof(*o), cmp_ordered_p);
	/* q_(k) = min over j >= k of m p_(j) / j, capped at 1 (step-up) */
	double running = 1;
	for (size_t k = m; k >= 1; k--) {
		double v = o[k - 1].p * (double)m / (double)k;
		if (v < running)
			running = v;
		q[o[k - 1].at] = running;
	}
	free(o);
}

/* ---- summaries -------------------------------------------------------------------------------- */

/* Only finite, positive speedups count (n is how many did). */
void speedup_summarize(const double *speedups, size_t n, double tie_band, struct speedup_summary *out)
{
	memset(out, 0, sizeof(*out));
	double *valid = xcalloc(n, sizeof(*valid));
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
		valid[out->n++] = s;
	}
	if (out->n) {
		out->geomean = exp(log_sum / (double)out->n);
		out->mean = sum / (double)out->n;
		out->median = median_select(valid, out->n);
	}
	free(valid);
}

/* Mann-Kendall trend statistic of x[0..n-1] in time order: S = sum over i < j of sign(x[j] - x[i])
 * over its standard deviation under no trend, sqrt(n (n-1) (2n+5) / 18) (ties not corrected: a
 * smaller |z|, the cautious side here). Series longer than 2048 are thinned evenly to 2048. */
static double mann_kendall_z(const double *x, size_t n)
{
	size_t stride = n > 2048 ? (n + 2047) / 2048 : 1, m = (n + stride - 1) / stride;
	double sum = 0;
	for (size_t i = 0; i < m; i++)
		for (size_t j = i + 1; j < m; j++) {
			double a = x[i * stride], b = x[j * stride];
			sum += (b > a) - (b < a);
		}
	double dm = (double)m, var = dm * (dm - 1) * (2 * dm + 5) / 18;
	return var > 0 ? sum / sqrt(var) : 0;
}

/* The warm-up detector's constants (steady_state_index; why these: docs/performance.md,
 * "Warm-up"). An iteration z spreads above the steady level scores z^2/2 - WARMUP_PENALTY, one
 * at or below it -WARMUP_PENALTY: the first is the log-likelihood ratio of "slower by some
 * amount" against "steady" for normal noise, so an iteration leans to warm-up beyond
 * sqrt(2 x 2) = 2 spreads. z is capped at WARMUP_CAP, which keeps what a spike adds
 * (2.8^2/2 - 2 = 1.92) below what a steady iteration takes away (2): a spike of L iterations
 * after L steady ones never outweighs them. The spread is at least WARMUP_MIN_SPREAD (log
 * scale), so that a series of equal times still has a scale. */
#define WARMUP_PENALTY 2.0
#define WARMUP_CAP 2.8
/* A warm-up's total score must reach this: one slow iteration alone must be 2.45 spreads out
 * (a steady iteration is 2 spreads out 2.3% of the time, 2.45 0.7%). */
#define WARMUP_MARGIN 1.0
#define WARMUP_MIN_SPREAD 1e-3
/* the IQR of a normal distribution in standard deviations */
#define IQR_PER_SD 1.3489795

/* Level and spread of y[0..n), n > 0, on the log scale: the midpoint of the quartiles and the
 * IQR as standard deviations (a steady state with two modes gets the middle and their
 * distance, not one mode and the noise of the other); scratch has room for n. */
static void steady_level(const double *y, size_t n, double *scratch, double *level,
			 double *spread)
{
	double q1, q3;
	memcpy(scratch, y, n * sizeof(*y));
	quantile_pair(scratch, n, 0.25, 0.75, &q1, &q3);
	*level = (q1 + q3) / 2;
	*spread = fmax((q3 - q1) / IQR_PER_SD, WARMUP_MIN_SPREAD);
}

/* The prefix length d in [0, n] that maximises the summed warm-up score of y[0..d) against
 * level and spread (the first such d), 0 when no prefix reaches WARMUP_MARGIN; excess:
 * log(1 + band), the part of an excess that does not count. */
static size_t warmup_argmax(const double *y, size_t n, double level, double spread,
			    double excess)
{
	double sum = 0, best = WARMUP_MARGIN;
	size_t d = 0;
	for (size_t i = 0; i < n; i++) {
		double z = (y[i] - level - excess) / spread;
		z = fmin(z, WARMUP_CAP);
		sum += z > 0 ? z * z / 2 - WARMUP_PENALTY : -WARMUP_PENALTY;
		if (sum > best) {
			best = sum;
			d = i + 1;
		}
	}
	return d;
}

size_t steady_state_index(const double *x, size_t n, double band)
{
	if (n < 4)
		return 0;
	double *y = xmalloc(2 * n * sizeof(*y)), *scratch = y + n;
	/* a time under 1 ns (0: below the clock's resolution) is 1 ns, as fast as a time can be,
	 * and finite: as -infinity, a quarter of the last half at 0 made the level or the spread
	 * infinite or NaN, and every iteration warm-up ("never" steady) */
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] > 1 ? log(x[i]) : 0;
	/* the steady state is judged on y[from..n): first the last half, then what follows the
	 * warm-up found (more iterations where it is short, the steady ones where it is long) */
	size_t from = n / 2, d = 0;
	double level, spread, excess = log1p(fmax(band, 0));
	for (int pass = 0; pass < 4; pass++) {
		steady_level(y + from, n - from, scratch, &level, &spread);
		d = warmup_argmax(y, n, level, spread, excess);
		if (n - d < 8 || d == from)
			break;
		from = d;
	}
	/* still warming up at the end: the last half trends down (Mann-Kendall z < -3), and its
	 * second quarter's median lies more than a spread below its first quarter's */
	size_t half = n / 2, q = (n - half) / 2;
	if (n - half >= 8 && d < n) {
		steady_level(y + half, n - half, scratch, &level, &spread);
		memcpy(scratch, y + half, (n - half) * sizeof(*y));
		double m3 = median_select(scratch, q), m4 = median_select(scratch + q, n - half - q);
		if (mann_kendall_z(y + half, n - half) < -3 && m3 - m4 > spread)
			d = n;
	}
	free(y);
	return d;
}
