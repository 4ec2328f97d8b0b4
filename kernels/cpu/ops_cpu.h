/* kernels/cpu/ops_cpu.h: the CPU kernels of the transformer's device ops (kernels/dev/ops.h),
 * besides GEMM and attention: embedding, RMSNorm, head split/merge with RoPE, SwiGLU, fused
 * softmax + cross-entropy, AdamW, and dtype conversion. Plain C over OpenMP threads; each kernel
 * has a float64 reference in tests/test_ops.c.
 *
 * Shapes and dtypes. n is the number of token rows (batch · context), d = d_model, f = d_ff,
 * V = vocab. "act" buffers are float32 or bfloat16 (uint16_t, see bf16.h) as their dtype
 * argument says; everything else is float32. Statistics (RMS, softmax sums, losses) are always
 * accumulated in float32 or wider, whatever the act dtype.
 *
 * bfloat16 stores round to nearest even. Where the CPU has AVX-512 BF16 (and the build targets
 * it), the kernels convert with its instructions; elsewhere, and when cpu_ops_force_fallback(1)
 * is set, a scalar path gives the same roundings.
 */
#ifndef BENCHDB_OPS_CPU_H
#define BENCHDB_OPS_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"      /* struct adamw_params */
#include "params.h"

/* dst[i] = src[i] for i < count, converting between DTYPE_FLOAT32 and DTYPE_BFLOAT16 (the same
 * dtype is a copy). */
void cpu_convert(void *dst, enum bd_dtype dst_dtype, const void *src, enum bd_dtype src_dtype,
		 size_t count);

/* out (n, d) = table[tokens[i]] (V, d). Tokens are in [0, V): the caller checks. */
void cpu_embedding_fwd(const int32_t *tokens, const float *table, float *out, int64_t n,
		       int64_t d);
/* dtable (V, d) += dout (n, d) scattered by tokens; repeated tokens sum. Deterministic for a
 * given thread count. */
void cpu_embedding_bwd(const int32_t *tokens, const float *dout, float *dtable, int64_t n,
		       int64_t d);

/* y (n, d) act = x / rms(x) * g, rms(x) = sqrt(mean(x^2) + eps); rstd (n) = 1 / rms(x). */
void cpu_rmsnorm_fwd(const float *x, const float *g, void *y, enum bd_dtype y_dtype, float *rstd,
		     int64_t n, int64_t d, float eps);
/* x_out (n, d) = x + y, then h (n, d) act = rmsnorm of x_out as cpu_rmsnorm_fwd, rstd (n): the
 * residual add and the next norm in one pass (x_out equals x + y rounded once, as a GEMM's
 * beta-1 accumulation gives it). x_out must not alias x or y. */
void cpu_residual_rmsnorm_fwd(const float *x, const float *y, float *x_out, const float *g,
			      void *h, enum bd_dtype h_dtype, float *rstd, int64_t n, int64_t d,
			      float eps);
/* Floats of workspace cpu_rmsnorm_bwd needs for rows of width d (per-thread dg partials). */
size_t cpu_rmsnorm_bwd_work(int64_t d);
/* From dy (n, d), the forward's x, g and rstd: dx (n, d) += dL/dx; dg (d) = dL/dg (overwritten).
 * work: cpu_rmsnorm_bwd_work(d) floats. */
void cpu_rmsnorm_bwd(const float *dy, const float *x, const float *g, const float *rstd,
		     float *dx, float *dg, int64_t n, int64_t d, float *work);

/* RoPE table for positions 0..t-1 and head_dim dh (even): table (t, dh/2, 2) holds
 * (cos, sin) of t · theta^(-2i/dh), computed in float64. */
void cpu_rope_table(float *table, int64_t t, int64_t dh, double theta);

/* Split heads: in is (b·t) rows of an act matrix with row stride ld elements; columns
 * [h·dh, (h+1)·dh) of row (bi·t + ti) go to out[bi, h, ti, :] (b, h, t, dh) float32. When
 * rope_table is not NULL, each pair (x[2i], x[2i+1]) of the row is rotated by the position's
 * angle: (x0·c − x1·s, x0·s + x1·c). */
void cpu_heads_split(const void *in, enum bd_dtype in_dtype, int64_t ld, float *out,
		     const float *rope_table, int64_t b, int64_t t, int64_t h, int64_t dh);
/* The transpose of cpu_heads_split: in (b, h, t, dh) float32 -> out rows with stride ld, act
 * dtype. When rope_table is not NULL each pair is rotated by minus the angle (the backward of
 * the split's rotation). Columns of out outside [0, h·dh) are not touched. */
void cpu_heads_merge(const float *in, void *out, enum bd_dtype out_dtype, int64_t ld,
		     const float *rope_table, int64_t b, int64_t t, int64_t h, int64_t dh);

/* u (n, 2f) act holds [a | c] per row (a = x·W1^T, c = x·W3^T); out (n, f) act = silu(a) ⊙ c,
 * silu(a) = a · sigmoid(a). */
void cpu_swiglu_fwd(const void *u, void *out, enum bd_dtype dtype, int64_t n, int64_t f);
/* du (n, 2f) act = [dL/da | dL/dc] from u and dout (n, f), all in dtype. */
void cpu_swiglu_bwd(const void *u, const void *dout, void *du, enum bd_dtype dtype, int64_t n,
		    int64_t f);

/* Fused softmax + cross-entropy over logits (n, V) float32 and targets (n) in [0, V):
 * lse (n) = log Σ_j exp(logits[i, j]); returns the mean loss (1/n) Σ_i (lse_i − logits[i, t_i]),
 * summed in float64. */
double cpu_xent_fwd(const float *logits, const int32_t *targets, float *lse, int64_t n,
		    int64_t V);
/* dlogits (n, V) act = scale · (softmax(logits) − onehot(targets)), from the forward's lse.
 * dlogits may be the logits buffer itself when the dtype is float32. The model passes
 * scale = 1/n (the mean). */
void cpu_xent_bwd(const float *logits, const float *lse, const int32_t *targets, void *dlogits,
		  enum bd_dtype dtype, int64_t n, int64_t V, float scale);

/* One AdamW step, step = 1, 2, ... (the bias corrections use it), over count elements:
 *   p *= 1 − lr·wd;  m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;
 *   p −= lr/(1−β1^step) · m / (sqrt(v)/sqrt(1−β2^step) + eps)
 * with p, g, m, v float32. When p_bf16 is not NULL it receives bfloat16(p) (the shadow copy
 * the bf16 GEMMs read). */
void cpu_adamw(float *p, const float *g, float *m, float *v, uint16_t *p_bf16, size_t count,
	       const struct adamw_params *hp, int64_t step);

/* Tests: 1 makes every kernel take the scalar bfloat16 path even where AVX-512 BF16 exists. */
void cpu_ops_force_fallback(int on);
/* "avx512_bf16" or "scalar": the bfloat16 conversion path the kernels take now. */
const char *cpu_ops_bf16_path(void);

#endif
