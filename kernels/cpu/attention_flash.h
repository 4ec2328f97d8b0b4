/* kernels/cpu/attention_flash.h: the tiled (FlashAttention-2 style) float32 CPU kernels.
 * Internal to kernels/cpu; other code goes through attention_cpu.h. */
#ifndef BENCHDB_ATTENTION_FLASH_H
#define BENCHDB_ATTENTION_FLASH_H

#include <stddef.h>

#include "attention_ref.h"

/* Everything the flash kernels use besides their inputs and outputs. Sized by
 * attention_flash_plan for one problem shape and thread count; the buffers are the caller's. */
struct flash_workspace {
	int nthreads;          /* OpenMP threads the kernels run with */
	size_t thread_floats;  /* per-thread tiles and packed head copies, floats per thread */
	float *tiles;          /* (nthreads, thread_floats) */
	int dq_chunks;         /* key-tile chunks per (batch, head) in the backward (1..nthreads) */
	size_t dq_floats;      /* floats of dq_acc (0 for a forward-only workspace) */
	float *dq_acc;         /* (dq_chunks, B, H, S, Dp) dQ partial sums, Dp = head_dim rounded
				* up to the vector width */
	float *delta;          /* (B, H, S) Δ_i = Σ_d dO ⊙ O */
};

/* Fill nthreads, thread_floats, dq_chunks and dq_floats for d (backward: 1 if the backward will
 * run). Allocation is the caller's: tiles, dq_acc (backward) and delta (backward). */
void attention_flash_plan(struct flash_workspace *w, const struct attention_dims *d,
			  int nthreads, int backward);

/* q, k, v: (B, H, S, D); o: (B, H, S, D); lse: (B, H, S), natural log. */
void attention_flash_forward(const struct attention_dims *d, struct flash_workspace *w,
			     const float *q, const float *k, const float *v, float *o, float *lse);
/* From the inputs, the forward's o and lse and the output gradient d_o (all as above), write
 * dq, dk, dv (B, H, S, D). Uses w->delta and w->dq_acc. */
void attention_flash_backward(const struct attention_dims *d, struct flash_workspace *w,
			      const float *q, const float *k, const float *v, const float *o,
			      const float *lse, const float *d_o, float *dq, float *dk, float *dv);

#endif
