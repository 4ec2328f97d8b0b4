/* kernels/fma_peak.h: the CPU's float32 FMA peak, measured (`runner sysinfo --fma-peak`).
 *
 * The ceiling no float32 kernel can pass: every thread the CPU kernels use (OpenMP's count) runs
 * independent chains of vector FMAs, twelve per loop step, enough to fill two FMA pipes of
 * four-cycle latency; nothing is loaded or stored. GEMM rates and model FLOP/s are read against
 * it (docs/performance.md). x86-64 only; the ISA is asked of the CPU at run time.
 */
#ifndef BENCHDB_FMA_PEAK_H
#define BENCHDB_FMA_PEAK_H

#include "error.h"

struct fma_peak {
	char isa[16];          /* "avx512" or "avx2" */
	int vector_bits;       /* 512 or 256 */
	int threads;
	int reps;
	double rep_seconds;    /* wall time of the last repetition (all run the same step count) */
	double best_gflops;    /* the fastest repetition: the peak */
	double worst_gflops;   /* the slowest: how steady the machine was */
};

/* Measure with isa (NULL: the widest this CPU has) in reps repetitions of about seconds each.
 * 0, or BD_EUNSUPPORTED (the CPU lacks isa; not x86-64) / BD_EINVAL (an unknown isa, reps or
 * seconds out of range) with err naming the valid choices. */
int fma_peak_measure(const char *isa, int reps, double seconds, struct fma_peak *out,
		     struct bd_error *err);

#endif
