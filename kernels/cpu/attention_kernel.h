/* kernels/cpu/attention_kernel.h: what a cpu attention kernel implements to be a row of the
 * table in attention_cpu.c (by the name of its attention row in impls.c's cpu table), behind
 * attention_cpu.h's one interface. Internal to kernels/cpu.
 *
 * A new kernel is a file of its own with a `const struct cpu_kernel`, declared and listed in
 * attention_cpu.c's kernels[], and its row in impls.c. Its buffers come from attention_cpu_alloc
 * (counted in the case's memory); what it keeps is its state_bytes at attention_cpu_state(a),
 * zeroed, which its free releases. (naive and flash, in attention_cpu.c, keep theirs in the
 * fields below.)
 */
#ifndef BENCHDB_ATTENTION_KERNEL_H
#define BENCHDB_ATTENTION_KERNEL_H

#include "attention_cpu.h"
#include "attention_flash.h"
#include "dnnl_wrap.h"

/* create makes the buffers of a (kernel, dims, backward and mem are set); forward and backward
 * are attention_cpu_forward's and attention_cpu_backward's; free (NULL: nothing) releases what
 * its state holds. */
struct cpu_kernel {
	const char *name;
	size_t state_bytes;       /* of its own state, after struct attention_cpu */
	int (*create)(struct attention_cpu *a, struct bd_error *err);
	int (*forward)(struct attention_cpu *a, const float *q, const float *k, const float *v,
		       float *o, float *lse, struct bd_error *err);
	int (*backward)(struct attention_cpu *a, const float *q, const float *k, const float *v,
			const float *o, const float *lse, const float *d_o, float *dq, float *dk,
			float *dv, struct bd_error *err);
	void (*free)(struct attention_cpu *a);
};

struct attention_cpu {
	const struct cpu_kernel *kernel;
	struct attention_dims dims;
	int backward;                 /* backward buffers exist */
	struct mem_arena *mem;

	/* naive */
	struct onednn_gemm *qk;       /* P = scale·Q K^T, batched over B·H */
	struct onednn_gemm *pv;       /* O = P V */
	struct onednn_gemm *dv_mm;    /* dV = P^T dO */
	struct onednn_gemm *dp_mm;    /* dP = dO V^T */
	struct onednn_gemm *dq_mm;    /* dQ = scale·dS K */
	struct onednn_gemm *dk_mm;    /* dK = scale·dS^T Q */
	float *p;                     /* (B, H, S, S) scores, then probabilities, kept for backward */
	float *dp;                    /* (B, H, S, S) dP, then dS in place */
	float *delta;                 /* (B, H, S) Δ = rowsum(dO ⊙ O); naive and flash */

	/* flash */
	struct flash_workspace ws;
};

/* The kernel's state_bytes of its own, zeroed at create. */
static inline void *attention_cpu_state(struct attention_cpu *a) { return a + 1; }

/* n floats from a->mem for the buffer named by what ("P (B, H, S, S) float32"); NULL with err
 * (BD_ENOMEM) naming the kernel, the buffer, the shape, the bytes and the limit. */
float *attention_cpu_alloc(struct attention_cpu *a, double n, struct bd_error *err,
			   const char *what);

#endif
