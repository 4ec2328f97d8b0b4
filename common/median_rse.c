/* common/median_rse.c: the relative standard error of a series' median (median_rse.h). */
#include "median_rse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* The 97.5% normal quantile: the ranks of the median's 95% interval are n/2 -+ Z sqrt(n)/2. */
#define Z 1.959963984540054

static void swap_i64(int64_t *a, int64_t *b)
{
	int64_t t = *a;
	*a = *b;
	*b = t;
}

/* The value of 0-based rank k of x[0..n), k < n, by selection (Hoare's quickselect with a median
 * of three pivot): x is reordered so that x[0..k) <= x[k] <= x[k+1..n). */
static int64_t select_rank(int64_t *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		if (x[mid] < x[lo])
			swap_i64(&x[mid], &x[lo]);
		if (x[hi] < x[lo])
			swap_i64(&x[hi], &x[lo]);
		if (x[hi] < x[mid])
			swap_i64(&x[hi], &x[mid]);
		int64_t pivot = x[mid];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				swap_i64(&x[i], &x[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return x[k];
}

/* The value at fractional 0-based rank r of x[0..n) (as if sorted), interpolated between
 * neighbours; reorders x. */
static double at_rank(int64_t *x, size_t n, double r)
{
	size_t lo = (size_t)r;
	if (lo + 1 >= n)
		return (double)select_rank(x, n, n - 1);
	double below = (double)select_rank(x, n, lo), f = r - (double)lo;
	if (f == 0)
		return below;
	int64_t above = x[lo + 1];   /* the least of what lies above rank lo */
	for (size_t i = lo + 2; i < n; i++)
		above = x[i] < above ? x[i] : above;
	return below + f * ((double)above - below);
}

/* The integrated autocorrelation time tau = 1 + 2 sum_k rho_k of the signs of times[0..n) about
 * median (the factor by which their dependence inflates the variance of their mean), by Geyer's
 * initial positive sequence: sums of pairs rho_{2m} + rho_{2m+1} (rho_0 = 1) are added while they
 * stay positive. Within 1..MEDIAN_RSE_MAX_TAU. signs: room for n (the scratch, reused). */
static double sign_tau(const int64_t *times, size_t n, double median, int64_t *signs)
{
	double mean = 0;
	for (size_t i = 0; i < n; i++) {
		signs[i] = (double)times[i] <= median;
		mean += (double)signs[i];
	}
	mean /= (double)n;
	double var = mean * (1 - mean) * (double)n;   /* sum of squared deviations of 0/1 values */
	if (!(var > 0))
		return 1;
	double tau = -1;   /* -rho_0, so that the first pair's 2 (rho_0 + rho_1) gives 1 + 2 rho_1 */
	for (size_t m = 0; 2 * m + 1 < n / 2 && 2 * m + 1 <= MEDIAN_RSE_MAX_LAG; m++) {
		double pair = 0;
		for (size_t k = 2 * m; k <= 2 * m + 1; k++) {
			double c = 0;
			for (size_t i = 0; i + k < n; i++)
				c += ((double)signs[i] - mean) * ((double)signs[i + k] - mean);
			pair += c / var;
		}
		if (pair <= 0)
			break;
		tau += 2 * pair;
	}
	return tau < 1 ? 1 : tau > MEDIAN_RSE_MAX_TAU ? MEDIAN_RSE_MAX_TAU : tau;
}

double median_rse_sign(const int64_t *times, size_t n, int64_t *scratch)
{
	if (n < MEDIAN_RSE_MIN_SAMPLES)
		return INFINITY;
	memcpy(scratch, times, n * sizeof(*times));
	double mid = (double)(n - 1) / 2, half = Z * sqrt((double)n) / 2;
	double median = at_rank(scratch, n, mid);
	if (!(median > 0) || mid - half < 0)
		return INFINITY;
	double se = (at_rank(scratch, n, mid + half) - at_rank(scratch, n, mid - half)) / (2 * Z);

	return se * sqrt(sign_tau(times, n, median, scratch)) / median;
}

/* sqrt((b - 1) / the 25th percentile of chi-square with b - 1 degrees of freedom), b = 4, 8, 16,
 * 32: what turns a standard deviation of b values into the upper end of its 50% interval
 * (scipy.stats.chi2.ppf(0.25, b - 1)). */
static const double block_upper[] = {1.5729462, 1.2826459, 1.1658138, 1.1049644};

double median_rse_blocks(const int64_t *times, size_t n, int64_t *scratch)
{
	double worst = 0, logs[MEDIAN_RSE_MAX_BLOCKS];
	for (size_t b = 4, j = 0; b <= MEDIAN_RSE_MAX_BLOCKS; b *= 2, j++) {
		size_t m = n / b;
		if (m < MEDIAN_RSE_MIN_BLOCK)
			break;
		const int64_t *first = times + (n - m * b);   /* the latest m b iterations */
		double mean = 0, ss = 0;
		for (size_t k = 0; k < b; k++) {
			memcpy(scratch, first + k * m, m * sizeof(*times));
			double median = at_rank(scratch, m, (double)(m - 1) / 2);
			if (!(median > 0))
				return INFINITY;
			logs[k] = log(median);
			mean += logs[k];
		}
		mean /= (double)b;
		for (size_t k = 0; k < b; k++)
			ss += (logs[k] - mean) * (logs[k] - mean);
		double se = sqrt(ss / (double)(b - 1) / (double)b) * block_upper[j];
		worst = se > worst ? se : worst;
	}
	return worst;
}

double median_rse(const int64_t *times, size_t n, int64_t *scratch)
{
	if (n < MEDIAN_RSE_MIN_SAMPLES)
		return INFINITY;
	double sign = median_rse_sign(times, n, scratch);
	double blocks = median_rse_blocks(times, n, scratch);
	return sign > blocks ? sign : blocks;
}

double median_rse_of(const double *times, size_t n, int64_t *scratch)
{
	if (n < MEDIAN_RSE_MIN_SAMPLES)
		return INFINITY;
	int64_t *as_ns = xmalloc(n * sizeof(*as_ns));
	for (size_t i = 0; i < n; i++)
		as_ns[i] = times[i] > 0 && times[i] < 9e18 ? (int64_t)llround(times[i]) : 0;
	double rse = median_rse(as_ns, n, scratch);
	free(as_ns);
	return rse;
}
