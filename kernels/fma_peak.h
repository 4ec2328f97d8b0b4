/* kernels/fma_peak.h: the CPU's float32 FMA peak, measured (`runner sysinfo --fma-peak`).
 *
 * The ceiling no float32 kernel can pass: every thread the CPU kernels use (OpenMP's count) runs
 * independent chains of vector FMAs, twelve per loop step, enough to fill two FMA pipes of
 * four-cycle latency (twenty-four for the dot products below); nothing is loaded or stored. GEMM rates and model FLOP/s are read against
 * it (docs/performance.md). x86-64 only; the ISA is asked of the CPU at run time. With the ISA
 * avx512bf16 the chains are AVX512-BF16 dot products (VDPBF16PS: 32 bfloat16 multiply-adds into
 * 16 float32 lanes), the ceiling of bfloat16 products on a CPU without AMX; AMX tiles are not
 * measured.
 */
#ifndef BENCHDB_FMA_PEAK_H
#define BENCHDB_FMA_PEAK_H

#include "error.h"

struct fma_peak {
	char isa[16];          /* "avx512", "avx512bf16" or "avx2" */
	char dtype[16];        /* the multiplied numbers: "float32", or "bfloat16" (avx512bf16) */
	char instruction[16];  /* "fma", or "dot product" (avx512bf16) */
	int vector_bits;       /* 512 or 256 */
	int elem_bits;         /* 32 or 16: a vector instruction's multiply-adds are
				  vector_bits / elem_bits */
	int threads;
	int reps;
	double rep_seconds;    /* wall time of the last repetition (all run the same step count) */
	double best_gflops;    /* the fastest repetition: the peak */
	double worst_gflops;   /* the slowest: how steady the machine was */
	double cpu_wait;       /* the share of the fastest repetition's thread time spent waiting
				  for a CPU (proc_wait.h): above CPU_WAIT_CONTENDED the peak is
				  higher than best_gflops; -1 when unknown */
};

/* Measure with isa (NULL: the widest float32 this CPU has) in reps repetitions of about seconds each.
 * 0, or BD_EUNSUPPORTED (the CPU lacks isa; not x86-64) / BD_EINVAL (an unknown isa, reps or
 * seconds out of range) with err naming the valid choices. */
int fma_peak_measure(const char *isa, int reps, double seconds, struct fma_peak *out,
		     struct bd_error *err);

#endif
