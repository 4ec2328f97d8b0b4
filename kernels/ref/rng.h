/* kernels/ref/rng.h: the deterministic generator that fills workload inputs from a case's seed:
 * splitmix64 (common/splitmix64.h), so that the same seed gives the same inputs on every machine
 * and compiler.
 */
#ifndef BENCHDB_RNG_H
#define BENCHDB_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "splitmix64.h"

struct rng {
	uint64_t state;
};

static inline void rng_init(struct rng *r, uint64_t seed) { r->state = seed; }

static inline uint64_t rng_next(struct rng *r) { return splitmix64(&r->state); }

/* Uniform in [0, 1) with 24 random bits (every value exactly representable as a float). */
static inline float rng_unit(struct rng *r) { return (float)(rng_next(r) >> 40) * 0x1p-24f; }

/* Uniform in [lo, hi). */
static inline float rng_uniform(struct rng *r, float lo, float hi)
{
	return lo + (hi - lo) * rng_unit(r);
}

/* Fill x[0..n) with values uniform in [lo, hi). */
static inline void rng_fill(struct rng *r, float *x, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = rng_uniform(r, lo, hi);
}

#endif
