/* runner/precision.h: `iters: auto` — how precise a case's median is so far, and what stops its
 * measured loop (the rule: schemas/sweep-format.md, "iters: auto"; the estimator and why:
 * docs/performance.md, "iters: auto"). Pure functions of the times given, so that the tests
 * drive them with planted series. */
#ifndef BENCHDB_PRECISION_H
#define BENCHDB_PRECISION_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

/* The estimator needs this many iterations before it says anything. */
#define PRECISION_MIN_SAMPLES 10
/* The most the estimator inflates the median's variance for the iterations' dependence, and the
 * longest lag of the autocorrelations it sums (which bounds its cost to n x this). */
#define PRECISION_MAX_TAU 100.0
#define PRECISION_MAX_LAG 64
/* How long the estimate must stay at or below the target before the loop stops for precision:
 * while n grows by a fifth, and at least this many iterations (see precision_stop). */
#define PRECISION_HOLD 5

/* The estimated relative standard error of the median of times[0..n) (nanoseconds, in the order
 * they were measured). The distribution-free order-statistic interval of the median (ranks
 * n/2 -+ 1.96 sqrt(n)/2) gives its standard error as the half-width / 1.96 for independent
 * iterations. The median's variance is that of the fraction of iterations below it, over the
 * squared density there; iterations are autocorrelated, so that variance is multiplied by the
 * integrated autocorrelation time of the series' signs about the median (Geyer's initial positive
 * sequence, lags up to PRECISION_MAX_LAG, at most PRECISION_MAX_TAU). Divided by the median.
 * scratch has room for n values. INFINITY when n < PRECISION_MIN_SAMPLES or the median is not
 * > 0. */
double median_rse(const int64_t *times, size_t n, int64_t *scratch);

/* What ends iters: auto's loop of case p after n measured iterations that took measured_ns
 * nanoseconds in all, or NULL to measure on. precise_since: the n at which the median's
 * estimated relative standard error went to p->target_rse or below and has stayed there at
 * every estimate since (0: it is above). In this order: nothing before p->min_iters;
 * "precision" when it has stayed there while n grew by a fifth (at least PRECISION_HOLD
 * iterations: stopping at the first estimate below the target would pick the estimates that
 * are low by chance); "max_time" when measured_ns reaches p->max_time seconds; "max_iters" at
 * p->max_iters. */
const char *precision_stop(const struct case_params *p, int64_t n, int64_t measured_ns,
			   int64_t precise_since);

#endif
