/* runner/precision.h: `iters: auto` — what stops a case's measured loop (the rule:
 * schemas/sweep-format.md, "iters: auto"; the estimator, common/median_rse.h, and why:
 * docs/performance.md, "iters: auto"). Pure functions of the values given, so that the tests
 * drive them with planted series. */
#ifndef BENCHDB_PRECISION_H
#define BENCHDB_PRECISION_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_wait.h"
#include "median_rse.h"
#include "params.h"

/* How long the estimate must stay at or below the target before the loop stops for precision:
 * while n grows by a fifth, and at least this many iterations (see precision_stop). */
#define PRECISION_HOLD 5
/* The share of its measured time the case may have waited for a CPU (cpu_wait.h) and still stop
 * for precision: beyond it the times depend on what else the machine runs, which changes on a
 * scale of seconds that no estimate from the case's own iterations sees (docs/performance.md,
 * "iters: auto"), so the case goes on to its budget. The level at which the reports mark a case
 * contended. */
#define PRECISION_MAX_CPU_WAIT CPU_WAIT_CONTENDED

/* What ends iters: auto's loop of case p after n measured iterations that took measured_ns
 * nanoseconds in all, or NULL to measure on. precise_since: the n at which the median's
 * estimated relative standard error went to p->target_rse or below (with the case's wait for a
 * CPU at most PRECISION_MAX_CPU_WAIT) and has stayed there at every estimate since (0: it is
 * above). In this order: nothing before p->min_iters; "precision" when it has stayed there while
 * n grew by a fifth (at least PRECISION_HOLD iterations: stopping at the first estimate below the
 * target would pick the estimates that are low by chance); "max_time" when measured_ns reaches
 * p->max_time seconds; "max_iters" at p->max_iters. */
const char *precision_stop(const struct case_params *p, int64_t n, int64_t measured_ns,
			   int64_t precise_since);

#endif
