/* kernels/cpu/fma_peak.c: the CPU's float32 FMA peak, measured (kernels/fma_peak.h). */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "fma_peak.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FMA_PEAK_X86 1
#endif

#define CHAINS 12

#ifdef FMA_PEAK_X86
/* Twelve independent chains a = a·x + y (they settle at y / (1 - x) = 0.1: no overflow, no
 * subnormals). The empty asm claims to change every chain each step, so that the compiler can
 * neither merge the chains nor shorten them; it emits no instruction. */
#define CHAIN_INIT(T, SET)                                                                      \
	T a0 = SET(1.00f), a1 = SET(1.01f), a2 = SET(1.02f), a3 = SET(1.03f), a4 = SET(1.04f),    \
	  a5 = SET(1.05f), a6 = SET(1.06f), a7 = SET(1.07f), a8 = SET(1.08f), a9 = SET(1.09f),    \
	  a10 = SET(1.10f), a11 = SET(1.11f), x = SET(0.9999999f), y = SET(1e-8f)
#define CHAIN_STEP(F)                                                                           \
	do {                                                                                    \
		__asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4),        \
				 "+x"(a5), "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10),  \
				 "+x"(a11));                                                    \
		a0 = F(a0, x, y); a1 = F(a1, x, y); a2 = F(a2, x, y); a3 = F(a3, x, y);         \
		a4 = F(a4, x, y); a5 = F(a5, x, y); a6 = F(a6, x, y); a7 = F(a7, x, y);         \
		a8 = F(a8, x, y); a9 = F(a9, x, y); a10 = F(a10, x, y); a11 = F(a11, x, y);     \
	} while (0)
#define CHAIN_SUM(ADD) ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))),     \
			   ADD(ADD(a8, a9), ADD(a10, a11)))

__attribute__((target("avx2,fma"))) static float chains_avx2(long steps)
{
	CHAIN_INIT(__m256, _mm256_set1_ps);
	for (long i = 0; i < steps; i++)
		CHAIN_STEP(_mm256_fmadd_ps);
	return _mm256_cvtss_f32(CHAIN_SUM(_mm256_add_ps));
}

__attribute__((target("avx512f"))) static float chains_avx512(long steps)
{
	CHAIN_INIT(__m512, _mm512_set1_ps);
	for (long i = 0; i < steps; i++)
		CHAIN_STEP(_mm512_fmadd_ps);
	return _mm512_cvtss_f32(CHAIN_SUM(_mm512_add_ps));
}

static int cpu_has(const char *isa)
{
	__builtin_cpu_init();
	if (!strcmp(isa, "avx512"))
		return __builtin_cpu_supports("avx512f");
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static volatile float fma_peak_sink;   /* the chains' sums go here, so their work is used */

/* Wall seconds for every OpenMP thread to run steps loop steps of fn. */
static double timed_rep(float (*fn)(long), long steps)
{
	double t0 = bd_now_seconds();
	float sum = 0;
#pragma omp parallel reduction(+ : sum)
	sum += fn(steps);
	double dt = bd_now_seconds() - t0;
	fma_peak_sink = sum;
	return dt;
}
#endif

int fma_peak_measure(const char *isa, int reps, double seconds, struct fma_peak *out,
		     struct bd_error *err)
{
	memset(out, 0, sizeof(*out));
	if (reps < 1 || reps > 1000 || !(seconds >= 0.001 && seconds <= 60))
		return bd_fail(err, BD_EINVAL, "fma peak: %d repetitions of %g s: want 1 to 1000 "
			       "repetitions of 0.001 to 60 s", reps, seconds);
	if (isa && strcmp(isa, "avx512") && strcmp(isa, "avx2"))
		return bd_fail(err, BD_EINVAL, "unknown isa '%s' (valid: avx512, avx2)", isa);
#ifndef FMA_PEAK_X86
	return bd_fail(err, BD_EUNSUPPORTED, "the fma peak probe is x86-64 only");
#else
	if (!isa)
		isa = cpu_has("avx512") ? "avx512" : "avx2";
	if (!cpu_has(isa))
		return bd_fail(err, BD_EUNSUPPORTED, "this cpu has no %s (valid here: %s)",
			       !strcmp(isa, "avx512") ? "avx512f" : "avx2 with fma",
			       cpu_has("avx2") ? "avx2" : "none");
	int wide = !strcmp(isa, "avx512");
	float (*fn)(long) = wide ? chains_avx512 : chains_avx2;
	snprintf(out->isa, sizeof(out->isa), "%s", isa);
	out->vector_bits = wide ? 512 : 256;
	out->threads = omp_get_max_threads();
	out->reps = reps;

	/* calibrate: grow the step count until one repetition lasts about `seconds` */
	long steps = 1 << 14;
	double dt = timed_rep(fn, steps);
	while (dt < seconds * 0.5 && steps < (1L << 40)) {
		double scale = dt > 0 ? seconds / dt : 16;
		steps = (long)((double)steps * (scale < 16 ? scale : 16)) + 1;
		dt = timed_rep(fn, steps);
	}
	if (dt > 0 && dt < seconds)
		steps = (long)((double)steps * seconds / dt) + 1;
	double flop = 2.0 * CHAINS * (out->vector_bits / 32) * (double)steps * out->threads;
	for (int r = 0; r < reps; r++) {
		dt = timed_rep(fn, steps);
		double g = flop / dt * 1e-9;
		if (g > out->best_gflops)
			out->best_gflops = g;
		if (r == 0 || g < out->worst_gflops)
			out->worst_gflops = g;
	}
	out->rep_seconds = dt;
	return 0;
#endif
}
