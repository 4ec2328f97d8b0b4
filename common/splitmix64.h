/* common/splitmix64.h: splitmix64 (Steele, Lea and Flood), the one small generator everything
 * seeded here starts from: the workloads' inputs (kernels/ref/rng.h), the order of a repeated
 * sweep's cases (runner/cmd_run.c), the bootstrap's xoshiro256** seeds (report/stats.c). Every
 * state (0 included) gives a full-period stream, and the same state the same numbers on every
 * machine and compiler. */
#ifndef BENCHDB_SPLITMIX64_H
#define BENCHDB_SPLITMIX64_H

#include <stdint.h>

/* The next number of the stream at *state, which it advances. */
static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
