/* tests/log_median.h: the log of a series' median by sorting a copy, the plain reference the
 * windows checks of iters: auto compare with (test_measure.c, window_check.c). Header-only. */
#ifndef BENCHDB_TESTS_LOG_MEDIAN_H
#define BENCHDB_TESTS_LOG_MEDIAN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The log of the median of x[0..n), by sorting a copy into sorted. */
static double log_median(const int64_t *x, int64_t n, int64_t *sorted)
{
	memcpy(sorted, x, (size_t)n * sizeof(*x));
	qsort(sorted, (size_t)n, sizeof(*sorted), cmp_i64);
	return log(((double)sorted[(n - 1) / 2] + (double)sorted[n / 2]) / 2);
}

#endif
