/* common/clock.h: the monotonic clock in seconds, for timing done inside the libraries (the FMA
 * peak's repetitions, the GEMM tuning's candidates). */
#ifndef BENCHDB_CLOCK_H
#define BENCHDB_CLOCK_H

#include <time.h>

static inline double bd_now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif
