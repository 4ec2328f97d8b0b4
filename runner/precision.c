/* runner/precision.c: iters: auto's estimator and stopping rule (precision.h). */
#include "precision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The 97.5% normal quantile: the ranks of the median's 95% interval are n/2 -+ Z sqrt(n)/2. */
#define Z 1.959963984540054

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The value at 0-based rank r of sorted[0..n), interpolated between neighbours. */
static double at_rank(const int64_t *sorted, size_t n, double r)
{
	size_t lo = (size_t)r;
	if (lo + 1 >= n)
		return (double)sorted[n - 1];
	double f = r - (double)lo;
	return (double)sorted[lo] + f * (double)(sorted[lo + 1] - sorted[lo]);
}

/* The integrated autocorrelation time tau = 1 + 2 sum_k rho_k of the signs of times[0..n) about
 * median (the factor by which their dependence inflates the variance of their mean), by Geyer's
 * initial positive sequence: sums of pairs rho_{2m} + rho_{2m+1} (rho_0 = 1) are added while they
 * stay positive. Within 1..PRECISION_MAX_TAU. signs: room for n (the scratch, reused). */
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
	for (size_t m = 0; 2 * m + 1 < n / 2 && 2 * m + 1 <= PRECISION_MAX_LAG; m++) {
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
	return tau < 1 ? 1 : tau > PRECISION_MAX_TAU ? PRECISION_MAX_TAU : tau;
}

double median_rse(const int64_t *times, size_t n, int64_t *scratch)
{
	if (n < PRECISION_MIN_SAMPLES)
		return INFINITY;
	memcpy(scratch, times, n * sizeof(*times));
	qsort(scratch, n, sizeof(*scratch), cmp_i64);
	double mid = (double)(n - 1) / 2, half = Z * sqrt((double)n) / 2;
	double median = at_rank(scratch, n, mid);
	if (!(median > 0) || mid - half < 0)
		return INFINITY;
	double se = (at_rank(scratch, n, mid + half) - at_rank(scratch, n, mid - half)) / (2 * Z);

	return se * sqrt(sign_tau(times, n, median, scratch)) / median;
}

const char *precision_stop(const struct case_params *p, int64_t n, int64_t measured_ns,
			   int64_t precise_since)
{
	int64_t hold = n / 5 > PRECISION_HOLD ? n / 5 : PRECISION_HOLD;
	if (n < p->min_iters)
		return NULL;
	if (precise_since > 0 && n - precise_since >= hold)
		return "precision";
	if ((double)measured_ns >= p->max_time * 1e9)
		return "max_time";
	if (n >= p->max_iters)
		return "max_iters";
	return NULL;
}
