/* common/median_rse.h: how precise the median of a series of iteration times is — the estimate
 * `iters: auto` stops on (runner/precision.c), stored per case (cases.rse) and read by the
 * reports' marks. What it bounds and what it does not: docs/performance.md, "iters: auto". */
#ifndef BENCHDB_MEDIAN_RSE_H
#define BENCHDB_MEDIAN_RSE_H

#include <stddef.h>
#include <stdint.h>

/* The estimator needs this many iterations before it says anything. */
#define MEDIAN_RSE_MIN_SAMPLES 10
/* The most the sign estimate inflates the median's variance for the iterations' dependence, and
 * the longest lag of the autocorrelations it sums (which bounds its cost to n x this). */
#define MEDIAN_RSE_MAX_TAU 100.0
#define MEDIAN_RSE_MAX_LAG 64
/* The block estimate: 4, 8, ... up to this many blocks, each of at least MEDIAN_RSE_MIN_BLOCK
 * iterations. */
#define MEDIAN_RSE_MAX_BLOCKS 32
#define MEDIAN_RSE_MIN_BLOCK 4

/* The estimated relative standard error of the median of times[0..n) (nanoseconds, in the order
 * they were measured): the larger of two estimates.
 *  - sign: the distribution-free order-statistic interval of the median (ranks n/2 -+ 1.96
 *    sqrt(n)/2) gives its standard error as the half-width / 1.96 for independent iterations;
 *    the median's variance is that of the fraction of iterations below it over the squared
 *    density there, so for autocorrelated iterations it is multiplied by the integrated
 *    autocorrelation time of the series' signs about the median (Geyer's initial positive
 *    sequence, lags up to MEDIAN_RSE_MAX_LAG, at most MEDIAN_RSE_MAX_TAU). Divided by the
 *    median. Sees dependence up to tens of iterations.
 *  - blocks (drift): the latest iterations cut into b = 4, 8, 16, 32 successive blocks of equal
 *    size (at least MEDIAN_RSE_MIN_BLOCK), the standard deviation of the blocks' log medians
 *    over sqrt(b), taken at the upper end of its own 50% interval (x 1.57 for 4 blocks, 1.10
 *    for 32: a standard deviation of 4 values is often low by chance, and a stopping rule
 *    stops on such lows), the largest over b: batch medians whose batches grow with n, so that
 *    a level that wanders within the series (drift, contention that comes and goes) is seen
 *    at the scale of a quarter of it.
 * Neither sees a change slower than the series itself: that is run-to-run variation.
 * scratch has room for n values. INFINITY when n < MEDIAN_RSE_MIN_SAMPLES or a median is not
 * > 0. */
double median_rse(const int64_t *times, size_t n, int64_t *scratch);
/* Its two parts: the sign estimate (INFINITY as above) and the block estimate (0 when n is too
 * short for 4 blocks of MEDIAN_RSE_MIN_BLOCK; INFINITY when a block's median is not > 0). */
double median_rse_sign(const int64_t *times, size_t n, int64_t *scratch);
double median_rse_blocks(const int64_t *times, size_t n, int64_t *scratch);

/* The same for double times (a report's series, nanoseconds); scratch has room for n. */
double median_rse_of(const double *times, size_t n, int64_t *scratch);

#endif
