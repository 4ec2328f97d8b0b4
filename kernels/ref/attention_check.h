/* kernels/ref/attention_check.h: how every attention kernel's outputs are held to the float64
 * reference (attention_ref.h) by the attention workload (workloads/attention.c), so that
 * "validated" means the same thing on every device.
 *
 * Policy. The reference runs on everything when its cost (multiply-adds) is at most
 * ATTENTION_FULL_CHECK_MADDS. Above that, the forward is compared on ATTENTION_SAMPLE_ROWS spread
 * query rows plus the first and last of every (batch, head) at the case's shape (on a device
 * whose memory is not the host's, CUDA: of at most 8 spread heads, workloads/attention.c), and the
 * backward on a problem of B = min(batch, 2), H = min(heads, 2) and ATTENTION_REDUCED_SEQ (not a
 * multiple of any tile) with the case's head_dim and causal flag, through the same kernel code
 * (more than one head, so that a backward right only for the first head fails).
 *
 * Tolerance: |x - ref| <= tol.abs·max|ref| + tol.rel·|ref| per element, where max|ref| is taken
 * over the compared values of that tensor and (batch, head) (of dV when dQ or dK is exactly 0
 * everywhere, as with a single key: rounding noise around 0 is not an error; and at least
 * ATTENTION_GRAD_FLOOR of dV's for dQ and dK, whose terms cancel: with two keys dS of a row is
 * (x, −x), so a head's dQ can be ~1e-5 of dV's scale by chance while its rounding noise is that
 * of the terms, ~1e-7 of dV's scale; measured on the workload's inputs, max|dQ| and max|dK| of a
 * head are over 2.4e-2 of max|dV| from 4 keys on at head_dim 8 to 256, and over 2.9e-2 at 193
 * keys for any head_dim, so the floor acts only on degenerate heads). The absolute part
 * scales with the tensor so that the small gradients (dK at long sequences is ~1e-3) are held to
 * the same relative standard as O. The inputs the reference sees are the values the kernel saw (16-bit
 * inputs are rounded before both use them). The worst element (largest ratio to its bound) is
 * what a failure reports.
 */
#ifndef BENCHDB_ATTENTION_CHECK_H
#define BENCHDB_ATTENTION_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "attention_ref.h"
#include "mem.h"
#include "params.h"
#include "workload.h"

#define ATTENTION_FULL_CHECK_MADDS 2e8
#define ATTENTION_SAMPLE_ROWS 32
#define ATTENTION_REDUCED_SEQ 193
#define ATTENTION_GRAD_FLOOR 1e-2

struct attention_tol {
	double abs, rel;
};

/* The bound for outputs of dtype: float32 2e-5/1e-4; float16 (inputs, outputs and the 16-bit P
 * of the P·V product rounded to 11 bits) 2e-3/2e-3; bfloat16 (8 bits) 1.6e-2/1.6e-2. */
struct attention_tol attention_tol_for(enum bd_dtype dtype);

/* The worst element seen so far. Start with attention_check_init. */
struct attention_check {
	double ratio;          /* max over elements of |x - ref| / bound; -1 before any */
	double diff, bound;    /* at that element */
	char where[128];       /* e.g. "dK[b=0, h=0, s=17, d=3]" */
	const char *stage;     /* "forward output", "backward dK", ... */
};

void attention_check_init(struct attention_check *c);

/* The query rows a sampled check compares: 0, ATTENTION_SAMPLE_ROWS spread, S − 1. rows needs
 * ATTENTION_SAMPLE_ROWS + 2 entries. Returns the count. */
int64_t attention_sample_rows(int64_t seq_len, int64_t *rows);

/* Whether the full reference fits the budget for d (forward, plus backward when backward). */
int attention_check_is_full(const struct attention_dims *d, int backward);

/* One (batch, head) of a problem on the host, float32, row-major (S, D); lse (S). The gradients
 * are NULL when only the forward is checked. */
struct attention_head {
	const float *q, *k, *v, *o, *lse;
	const float *d_o, *dq, *dk, *dv;
};

/* Every row of head number head (b·H + h) of shape d against the reference: O and LSE, and dQ,
 * dK, dV when x->d_o is set. The float64 buffers come from mem when it is given (they then count
 * in the case's memory), else from the C heap. Returns 0 or BD_ENOMEM. */
int attention_check_head(struct attention_check *c, const struct attention_dims *d,
			 const struct attention_tol *tol, int64_t head, const struct attention_head *x,
			 struct mem_arena *mem);

/* The forward of head number head on nrows query rows at positions rows[]: q_rows, o_rows
 * (nrows, D) and lse_rows (nrows) packed; k, v the whole head (S, D). Returns 0 or BD_ENOMEM. */
int attention_check_rows(struct attention_check *c, const struct attention_dims *d,
			 const struct attention_tol *tol, int64_t head, const int64_t *rows,
			 int64_t nrows, const float *q_rows, const float *k, const float *v,
			 const float *o_rows, const float *lse_rows, struct mem_arena *mem);

/* The workload status of a finished check: st's max_diff and tolerance from c, and STATUS_OK, or
 * STATUS_ERROR naming the stage, the difference, the bound and where (at: appended, "" if none). */
int attention_check_result(struct wl_status *st, const struct attention_check *c, const char *at);

/* What every attention workload checks of a case whatever the device: a pass with no optimizer
 * step, positive sizes, tf32 off. STATUS_OK or STATUS_UNSUPPORTED with the reason. */
int attention_case_check(const struct case_params *p, struct wl_status *st);
/* FLOPs (4·B·H·S²·D forward, halved when causal; backward 2.5×) and minimum bytes (forward reads
 * Q, K, V and writes O; backward reads Q, K, V, O, dO and writes dQ, dK, dV) in the case's dtype. */
void attention_case_figures(const struct case_params *p, struct wl_figures *f);

#endif
