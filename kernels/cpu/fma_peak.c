/* kernels/cpu/fma_peak.c: the CPU's float32 FMA peak and its bfloat16 dot-product peak, measured
 * (kernels/fma_peak.h). */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "fma_peak.h"
#include "proc_wait.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FMA_PEAK_X86 1
#endif

#ifdef FMA_PEAK_X86
/* Twelve independent chains p0..p11, p = p·x + y for an FMA (they settle at y / (1 - x) = 0.1:
 * no overflow, no subnormals). The empty asm claims to change every chain each step, so that the
 * compiler can neither merge the chains nor shorten them; it emits no instruction. */
#define CHAIN_INIT(T, SET, p)                                                                   \
	T p##0 = SET(1.00f), p##1 = SET(1.01f), p##2 = SET(1.02f), p##3 = SET(1.03f),             \
	  p##4 = SET(1.04f), p##5 = SET(1.05f), p##6 = SET(1.06f), p##7 = SET(1.07f),             \
	  p##8 = SET(1.08f), p##9 = SET(1.09f), p##10 = SET(1.10f), p##11 = SET(1.11f)
#define CHAIN_STEP(F, p)                                                                        \
	do {                                                                                    \
		__asm__ volatile("" : "+v"(p##0), "+v"(p##1), "+v"(p##2), "+v"(p##3),          \
				 "+v"(p##4), "+v"(p##5), "+v"(p##6), "+v"(p##7), "+v"(p##8),   \
				 "+v"(p##9), "+v"(p##10), "+v"(p##11));                         \
		p##0 = F(p##0, x, y); p##1 = F(p##1, x, y); p##2 = F(p##2, x, y);               \
		p##3 = F(p##3, x, y); p##4 = F(p##4, x, y); p##5 = F(p##5, x, y);               \
		p##6 = F(p##6, x, y); p##7 = F(p##7, x, y); p##8 = F(p##8, x, y);               \
		p##9 = F(p##9, x, y); p##10 = F(p##10, x, y); p##11 = F(p##11, x, y);           \
	} while (0)
#define CHAIN_SUM(ADD, p)                                                                       \
	ADD(ADD(ADD(ADD(p##0, p##1), ADD(p##2, p##3)), ADD(ADD(p##4, p##5), ADD(p##6, p##7))),     \
	    ADD(ADD(p##8, p##9), ADD(p##10, p##11)))

__attribute__((target("avx2,fma"))) static float chains_avx2(long steps)
{
	CHAIN_INIT(__m256, _mm256_set1_ps, a);
	__m256 x = _mm256_set1_ps(0.9999999f), y = _mm256_set1_ps(1e-8f);
	for (long i = 0; i < steps; i++)
		CHAIN_STEP(_mm256_fmadd_ps, a);
	return _mm256_cvtss_f32(CHAIN_SUM(_mm256_add_ps, a));
}

__attribute__((target("avx512f"))) static float chains_avx512(long steps)
{
	CHAIN_INIT(__m512, _mm512_set1_ps, a);
	__m512 x = _mm512_set1_ps(0.9999999f), y = _mm512_set1_ps(1e-8f);
	for (long i = 0; i < steps; i++)
		CHAIN_STEP(_mm512_fmadd_ps, a);
	return _mm512_cvtss_f32(CHAIN_SUM(_mm512_add_ps, a));
}

/* Twenty-four chains on VDPBF16PS, twice the FMA loops' twelve, so that the dot product's
 * longer latency cannot leave its pipes idle. Each step adds to every float32 lane the dot
 * product of a pair of bfloat16 (0.5 · 2^-30, twice), far below the accumulator's last bit, so
 * the chains keep their starting values (no overflow, no subnormals) while every instruction
 * does its 32 multiply-adds. */
__attribute__((target("avx512f,avx512bf16"))) static float chains_avx512bf16(long steps)
{
	CHAIN_INIT(__m512, _mm512_set1_ps, a);
	CHAIN_INIT(__m512, _mm512_set1_ps, b);
	__m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.5f));
	__m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0x1p-30f), _mm512_set1_ps(0x1p-30f));
	for (long i = 0; i < steps; i++) {
		CHAIN_STEP(_mm512_dpbf16_ps, a);
		CHAIN_STEP(_mm512_dpbf16_ps, b);
	}
	return _mm512_cvtss_f32(_mm512_add_ps(CHAIN_SUM(_mm512_add_ps, a),
					      CHAIN_SUM(_mm512_add_ps, b)));
}

static int cpu_has(const char *isa)
{
	__builtin_cpu_init();
	if (!strcmp(isa, "avx512bf16"))
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
	if (!strcmp(isa, "avx512"))
		return __builtin_cpu_supports("avx512f");
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static volatile float fma_peak_sink;   /* the chains' sums go here, so their work is used */

/* Wall seconds for every thread of an OpenMP team to run steps loop steps of fn; *team: the
 * threads that ran (fewer than omp_get_max_threads() under OMP_THREAD_LIMIT or OMP_DYNAMIC);
 * *cpu_wait: the share of their time they waited for a CPU (-1 unknown). */
static double timed_rep(float (*fn)(long), long steps, int *team, double *cpu_wait)
{
	struct cpu_wait w0, w1;
	cpu_wait_read(&w0);
	double t0 = bd_now_seconds();
	float sum = 0;
	int n = 1;
#pragma omp parallel reduction(+ : sum)
	{
#pragma omp master
		n = omp_get_num_threads();
		sum += fn(steps);
	}
	double dt = bd_now_seconds() - t0;
	cpu_wait_read(&w1);
	*cpu_wait = cpu_wait_share(&w0, &w1);
	fma_peak_sink = sum;
	*team = n;
	return dt;
}
#define CHAINS_FN(f) f
#else
#define CHAINS_FN(f) NULL
#endif

/* The probes, by --isa name: what the CPU must have (as a refusal names it), the numbers
 * multiplied, the instruction and its width, and the chains its function runs. */
static const struct probe {
	const char *isa, *needs, *dtype, *instruction;
	int vector_bits, elem_bits, chains;
	float (*fn)(long);
} probes[] = {
	{"avx512", "avx512f", "float32", "fma", 512, 32, 12, CHAINS_FN(chains_avx512)},
	{"avx512bf16", "avx512_bf16", "bfloat16", "dot product", 512, 16, 24,
	 CHAINS_FN(chains_avx512bf16)},
	{"avx2", "avx2 with fma", "float32", "fma", 256, 32, 12, CHAINS_FN(chains_avx2)},
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static const struct probe *probe_named(const char *isa)
{
	for (size_t i = 0; i < NPROBES; i++)
		if (!strcmp(probes[i].isa, isa))
			return &probes[i];
	return NULL;
}

/* The probes' names, every one or (here) those this CPU has, comma-separated; "none" */
static void probe_names(char *buf, size_t n, int here)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NPROBES; i++) {
#ifdef FMA_PEAK_X86
		if (here && !cpu_has(probes[i].isa))
			continue;
#else
		if (here)
			continue;
#endif
		if (len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
						probes[i].isa);
	}
	if (!buf[0])
		snprintf(buf, n, "none");
}

int fma_peak_measure(const char *isa, int reps, double seconds, struct fma_peak *out,
		     struct bd_error *err)
{
	memset(out, 0, sizeof(*out));
	out->cpu_wait = -1;
	if (reps < 1 || reps > 1000 || !(seconds >= 0.001 && seconds <= 60))
		return bd_fail(err, BD_EINVAL, "fma peak: %d repetitions of %g s: want 1 to 1000 "
			       "repetitions of 0.001 to 60 s", reps, seconds);
	char names[64];
	if (isa && !probe_named(isa)) {
		probe_names(names, sizeof(names), 0);
		return bd_fail(err, BD_EINVAL, "unknown isa '%s' (valid: %s)", isa, names);
	}
#ifndef FMA_PEAK_X86
	return bd_fail(err, BD_EUNSUPPORTED, "the fma peak probe is x86-64 only");
#else
	if (!isa)
		isa = cpu_has("avx512") ? "avx512" : "avx2";
	const struct probe *p = probe_named(isa);
	if (!cpu_has(isa)) {
		probe_names(names, sizeof(names), 1);
		return bd_fail(err, BD_EUNSUPPORTED, "this cpu has no %s (valid here: %s)", p->needs,
			       names);
	}
	float (*fn)(long) = p->fn;
	snprintf(out->isa, sizeof(out->isa), "%s", p->isa);
	snprintf(out->dtype, sizeof(out->dtype), "%s", p->dtype);
	snprintf(out->instruction, sizeof(out->instruction), "%s", p->instruction);
	out->vector_bits = p->vector_bits;
	out->elem_bits = p->elem_bits;
	out->reps = reps;

	/* calibrate: grow the step count until one repetition lasts about `seconds` */
	long steps = 1 << 14;
	int team;
	double wait, dt = timed_rep(fn, steps, &team, &wait);
	while (dt < seconds * 0.5 && steps < (1L << 40)) {
		double scale = dt > 0 ? seconds / dt : 16;
		steps = (long)((double)steps * (scale < 16 ? scale : 16)) + 1;
		dt = timed_rep(fn, steps, &team, &wait);
	}
	if (dt > 0 && dt < seconds)
		steps = (long)((double)steps * seconds / dt) + 1;
	/* per thread: the threads counted are the team's that ran, each repetition's own */
	double flop = 2.0 * p->chains * (p->vector_bits / p->elem_bits) * (double)steps;
	for (int r = 0; r < reps; r++) {
		dt = timed_rep(fn, steps, &team, &wait);
		double g = flop * team / dt * 1e-9;
		if (g > out->best_gflops) {
			out->best_gflops = g;
			out->threads = team;
			out->cpu_wait = wait;
		}
		if (r == 0 || g < out->worst_gflops)
			out->worst_gflops = g;
	}
	out->rep_seconds = dt;
	return 0;
#endif
}
