/* kernels/cpu/attention_cpu.h: float32 attention on the CPU, the implementations of the cpu table
 * (impls.c: "naive", "flash") behind one interface, which the cpu backend's attention ops call
 * (backend_cpu.c).
 *
 *   naive: S = scale·Q K^T for every (batch, head) through oneDNN's batched matmul, a row-wise
 *          softmax into P (B, H, S, S) kept for the backward, O = P V. Backward from the saved
 *          P with four more matmuls. O(S²) memory per head, on purpose: it is the baseline.
 *   flash: tiled with online softmax (attention_flash.c); saves only LSE (B, H, S); O(S) extra
 *          memory per head.
 *
 * Tensors: q, k, v, o, d_o, dq, dk, dv are contiguous (B, H, S, D) float32; lse is (B, H, S),
 * natural log, scale = 1/sqrt(D), causal: query i attends to keys j <= i.
 */
#ifndef BENCHDB_ATTENTION_CPU_H
#define BENCHDB_ATTENTION_CPU_H

#include "attention_ref.h"
#include "error.h"
#include "mem.h"

struct attention_cpu;

/*
 * Make the state of the kernel named impl ("naive", "flash") for shape d: all its buffers
 * (naive: P, and dP when backward; flash: per-thread tiles, and Δ and dQ partials when backward)
 * and its oneDNN primitives come from mem. backward: 0 if only the forward will run. Returns
 * 0, BD_ENOMEM (err names the buffer, its bytes and the limit), BD_EUNSUPPORTED (no such kernel
 * on the cpu) or BD_EINVAL.
 */
int attention_cpu_create(struct attention_cpu **out, const char *impl,
			 const struct attention_dims *d, int backward, struct mem_arena *mem,
			 struct bd_error *err);
/* Accepts NULL. Frees through the mem given to create. */
void attention_cpu_free(struct attention_cpu *a);

/* O and LSE from Q, K, V. No allocation. Returns 0 or BD_EINVAL (a oneDNN failure). */
int attention_cpu_forward(struct attention_cpu *a, const float *q, const float *k,
			  const float *v, float *o, float *lse, struct bd_error *err);
/* dQ, dK, dV from Q, K, V, the last forward's O and LSE, and dO. naive also uses the P its
 * last forward saved, so the forward must have run on the same inputs. No allocation. */
int attention_cpu_backward(struct attention_cpu *a, const float *q, const float *k,
			   const float *v, const float *o, const float *lse, const float *d_o,
			   float *dq, float *dk, float *dv, struct bd_error *err);

#endif
