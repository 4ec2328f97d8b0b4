/* kernels/cpu/dnnl_wrap.h: GEMM through oneDNN's matmul primitive, one interface for oneDNN 2.x
 * and 3.x (their C APIs differ in how descriptors are made; dnnl_wrap.c hides that).
 *
 * A struct onednn_gemm is made once per shape and executed many times on raw pointers:
 *
 *	struct onednn_gemm_desc d = {.batch = B * H, .m = S, .n = S, .k = D, .trans_b = 1,
 *				     .alpha = 1 / sqrtf(D)};
 *	struct onednn_gemm *g = NULL;
 *	if (onednn_gemm_create(&g, &d, mem, err) < 0) ...
 *	onednn_gemm_execute(g, q, k, s, err);       // s = alpha·q·k^T for every batch entry
 *	onednn_gemm_free(g);
 *
 * All products run on one CPU engine and stream, created on first use and kept for the process
 * (and a second stream for the second product of a pair: onednn_gemm_execute_pair).
 * Names use the onednn_ prefix so that they never collide with the library's own dnnl_ names.
 */
#ifndef BENCHDB_DNNL_WRAP_H
#define BENCHDB_DNNL_WRAP_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "mem.h"
#include "params.h"

/* For every batch entry b: C_b(m, n) = alpha · op(A_b)(m, k) · op(B_b)(k, n) + beta · C_b.
 * Matrices are row-major; a zero-initialised desc plus m, n, k is a packed float32 product. */
struct onednn_gemm_desc {
	int64_t batch;             /* independent products; 0 is taken as 1 */
	int64_t m, n, k;
	int trans_a;               /* 0: A stored (m, k); 1: A stored (k, m), used transposed */
	int trans_b;               /* 0: B stored (k, n); 1: B stored (n, k), used transposed */
	int64_t lda, ldb, ldc;     /* row strides of the stored matrices, elements; 0 = packed */
	int64_t stride_a, stride_b, stride_c; /* between batch entries, elements; 0 = packed */
	enum bd_dtype ab_dtype;    /* A and B: DTYPE_FLOAT32 or DTYPE_BFLOAT16 */
	enum bd_dtype c_dtype;     /* C: DTYPE_FLOAT32 or DTYPE_BFLOAT16 (accumulation is float32) */
	float alpha;               /* 0 is taken as 1, so that a zeroed desc means a plain product */
	float beta;                /* 0: C is overwritten and never read */
	int single_thread;         /* 1: made for one thread, to run beside another product
				    * (onednn_gemm_execute_pair); 0: for the OpenMP threads */
	int tune;                  /* 1: a product of two matrices (batch 1; not the bfloat16
				    * fallback) is timed on its first execution against a
				    * contender, made then, where one differs from the wrapper's
				    * choice (float32: oneDNN's brgemm matmul; bfloat16: its
				    * gemm:jit) and needs no more scratchpad than the choice's
				    * plus C's own size; the faster of the two, timed on the
				    * threads it is made for, is kept (onednn_gemm_tuning); until
				    * then the gemm holds its choice's memory alone. 0: the
				    * wrapper's choice */
};

/* What a gemm made with desc.tune found. tuned 0: not timed (no contender, or not executed
 * yet); else the implementation kept and the other, with the fastest of each one's timed runs
 * on the first execution's operands, in seconds; switched 1: the contender was kept; faulted:
 * the timed runs left out because the process page-faulted during them; threads: the OpenMP
 * threads the timing ran with (1 for one made for one thread); cpu_wait: the share of the
 * timing's time the process's threads waited for a CPU (common/proc_wait.h; -1 unknown);
 * contended 1: it was above CPU_WAIT_CONTENDED, so the wrapper's choice was kept whatever the
 * times said (another process's load is not a slower kernel). */
struct onednn_gemm_tuning {
	int tuned, switched, faulted, threads, contended;
	char kept[64], other[64];
	double kept_s, other_s, cpu_wait;
};

struct onednn_gemm;

/*
 * Make the primitive for desc. oneDNN's scratchpad (packing buffers) is allocated through mem
 * when mem is not NULL, so that it counts towards the case's memory and its limit, and with
 * malloc otherwise. Returns 0, or BD_EUNSUPPORTED (oneDNN has no implementation of it on this
 * CPU, e.g. bfloat16 without AVX-512: err names the ISA it has and what is needed), BD_EINVAL
 * (a bad desc, or another oneDNN failure quoted in err) or BD_ENOMEM (err gives the bytes).
 * *out is NULL on failure.
 */
int onednn_gemm_create(struct onednn_gemm **out, const struct onednn_gemm_desc *desc,
		       struct mem_arena *mem, struct bd_error *err);
/* Run the product on a, b, c (element types as in the desc; bfloat16 is uint16_t). Synchronous;
 * oneDNN spreads the work over the OpenMP threads itself. Not to be called from two threads at
 * once: every gemm runs on the one shared stream, and each owns one scratchpad. The first
 * execution of a gemm made with desc.tune may run both implementations a few times first (on a
 * copy of c, from the gemm's arena, counted and under its limit) and keep the faster: c is
 * still written once. onednn_gemm_execute_pair does the same for each of its two first, before
 * the pair runs. */
int onednn_gemm_execute(struct onednn_gemm *g, const void *a, const void *b, void *c,
			struct bd_error *err);
/* Run two independent products at once, one OpenMP thread each, each on its own stream: g0 and
 * g1 must be distinct gemms made with single_thread (else BD_EINVAL), and their outputs must not
 * overlap each other's inputs or outputs. Called inside a parallel region, or where OpenMP offers
 * one thread (OMP_NUM_THREADS=1), the two run one after the other on the calling thread. Returns
 * 0, or the first failure's code with its reason in err. Every product of the pair ran when it
 * returns. onednn_gemm_pair_threads: how many threads the last pair ran on (1 or 2). */
int onednn_gemm_execute_pair(struct onednn_gemm *g0, const void *a0, const void *b0, void *c0,
			     struct onednn_gemm *g1, const void *a1, const void *b1, void *c1,
			     struct bd_error *err);
int onednn_gemm_pair_threads(void);
/* Accepts NULL. */
void onednn_gemm_free(struct onednn_gemm *g);
/* Bytes of oneDNN scratchpad this gemm holds (already allocated; through mem if one was given),
 * plus the float32 copies of the bfloat16 fallback when it is one. */
size_t onednn_gemm_scratch_bytes(const struct onednn_gemm *g);
/* 0 when oneDNN multiplies ab_dtype matrices natively on this CPU (probed once per dtype with a
 * tiny primitive descriptor, then remembered), else BD_EUNSUPPORTED with onednn_gemm_create's
 * reason. Never counts the fallback below. */
int onednn_gemm_supported(enum bd_dtype ab_dtype, struct bd_error *err);

/* TESTS ONLY — never called by runner: where oneDNN has no bfloat16 matmul on this CPU, let
 * onednn_gemm_create make one anyway from a float32 primitive over float32 copies of the
 * bfloat16 operands. The widening is exact and the products accumulate in float32, as on the
 * native path; a bfloat16 C is rounded from the float32 result, as there. It lets the bfloat16
 * code above the GEMM (the model's mixed precision) be checked on CPUs without native
 * bfloat16; its timing means nothing. onednn_gemm_is_fallback says which a gemm got. */
void onednn_allow_bf16_fallback(int allow);
int onednn_gemm_is_fallback(const struct onednn_gemm *g);
/* BENCHMARKS ONLY — never called by runner: the gemms made from now on take the first of
 * oneDNN's implementations whose name starts with prefix ("": oneDNN's first, e.g.
 * "brg:avx512_core" on AVX-512) instead of the wrapper's own choice ("gemm:jit" for float32
 * single products: dnnl_wrap.c, preferred_impl); NULL goes back to that choice. Not
 * thread-safe; configs/perf/gemm_libs.c compares the two. onednn_gemm_impl says which a gemm
 * got. */
void onednn_prefer_impl(const char *prefix);
/* oneDNN's name for the implementation it picked, e.g. "brg:avx512_core". Owned by g. */
const char *onednn_gemm_impl(const struct onednn_gemm *g);
/* TESTS ONLY — never called by runner: the contender of each gemm made with desc.tune from now
 * on (named when the gemm is made, made at its first execution) is the first of oneDNN's
 * implementations whose name starts with prefix (NULL: the default by dtype, "brg" for float32
 * and "gemm:jit" for bfloat16; "ref" exists on every CPU; prefix must outlive those gemms),
 * and winner decides which the first execution's timing found faster: 0 by time (the
 * default), 1 the contender, -1 the wrapper's choice, so that both outcomes are exercised on
 * any CPU (the contention rule still applies: tests that force a winner plant a quiet
 * cpu_wait reader, common/proc_wait.h). Not thread-safe. */
void onednn_tune_contender(const char *prefix, int winner);
/* desc.tune's outcome for g (see struct onednn_gemm_tuning). Owned by g. */
const struct onednn_gemm_tuning *onednn_gemm_tuning(const struct onednn_gemm *g);

/* Write e.g. "oneDNN 2.6.3 (cpu runtime: OMP, isa: avx512_core_bf16)" into buf (always
 * NUL-terminated). Returns the length it wanted, like snprintf. */
int onednn_version(char *buf, size_t size);

#endif
