/* kernels/cuda/cuda_kernels.h: the CUDA kernels of the transformer's device ops, as C launchers
 * (kernels/cuda/kernels.cu) that the C backend (backend_cuda.c) calls.
 *
 * Each launcher enqueues its kernels on stream and returns cudaGetLastError() of the launch
 * (cudaSuccess, or why the launch failed); failures inside a kernel surface at the next
 * synchronize. Semantics, shapes and dtypes are those of the matching cpu_* function in
 * kernels/cpu/ops_cpu.h; "act" buffers are float32 or bfloat16 (uint16_t bits, rounded to
 * nearest even) as dtype says (0 = float32, 2 = bfloat16: enum bd_dtype). Statistics are
 * accumulated in float32 (block sums) or float64 (the loss). cuda_convert and the attention
 * softmax also take float16 (1).
 *
 * Deterministic, except cuda_embedding_bwd: repeated tokens are summed with atomicAdd, in an
 * order that can change from run to run (float32 rounding differences only).
 */
#ifndef BENCHDB_CUDA_KERNELS_H
#define BENCHDB_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t cuda_convert(void *dst, int dst_dtype, const void *src, int src_dtype, size_t count,
			 cudaStream_t stream);
cudaError_t cuda_embedding_fwd(const int32_t *tokens, const float *table, float *out, int64_t n,
			       int64_t d, cudaStream_t stream);
cudaError_t cuda_embedding_bwd(const int32_t *tokens, const float *dout, float *dtable,
			       int64_t n, int64_t d, cudaStream_t stream);
cudaError_t cuda_rmsnorm_fwd(const float *x, const float *g, void *y, int y_dtype, float *rstd,
			     int64_t n, int64_t d, float eps, cudaStream_t stream);
/* Floats of workspace cuda_rmsnorm_bwd needs (the dg partial sums of row chunks). */
size_t cuda_rmsnorm_bwd_work(int64_t n, int64_t d);
cudaError_t cuda_rmsnorm_bwd(const float *dy, const float *x, const float *g, const float *rstd,
			     float *dx, float *dg, int64_t n, int64_t d, float *work,
			     cudaStream_t stream);
cudaError_t cuda_heads_split(const void *in, int in_dtype, int64_t ld, float *out,
			     const float *rope_table, int64_t b, int64_t t, int64_t h, int64_t dh,
			     cudaStream_t stream);
cudaError_t cuda_heads_merge(const float *in, void *out, int out_dtype, int64_t ld,
			     const float *rope_table, int64_t b, int64_t t, int64_t h, int64_t dh,
			     cudaStream_t stream);
cudaError_t cuda_swiglu_fwd(const void *u, void *out, int dtype, int64_t n, int64_t f,
			    cudaStream_t stream);
cudaError_t cuda_swiglu_bwd(const void *u, const void *dout, void *du, int dtype, int64_t n,
			    int64_t f, cudaStream_t stream);
/* lse (n) and loss (1 float on the device): the mean of lse_i − logits[i, targets_i]. */
cudaError_t cuda_xent_fwd(const float *logits, const int32_t *targets, float *lse, float *loss,
			  int64_t n, int64_t V, cudaStream_t stream);
cudaError_t cuda_xent_bwd(const float *logits, const float *lse, const int32_t *targets,
			  void *dlogits, int dtype, int64_t n, int64_t V, float scale,
			  cudaStream_t stream);
/* One AdamW step; step_size = lr / (1 − β1^step), bc2_sqrt = sqrt(1 − β2^step), decay =
 * 1 − lr·wd, computed by the caller in float64 as cpu_adamw does. */
struct cuda_adamw_args {
	float decay, beta1, beta2, one_minus_beta1, one_minus_beta2, step_size, bc2_sqrt, eps;
};
cudaError_t cuda_adamw(float *p, const float *g, float *m, float *v, uint16_t *p_bf16,
		       size_t count, const struct cuda_adamw_args *a, cudaStream_t stream);

/* Naive attention's row softmax over s (rows, t) float32 scores of rows/t query blocks into
 * p (rows, t) of p_dtype (p may be s when float32: in place); lse (rows) = log Σ_j exp(s_ij).
 * causal: query i (row % t) sees keys j <= i, P is 0 beyond. */
cudaError_t cuda_softmax_fwd(const float *s, void *p, int p_dtype, float *lse, int64_t rows,
			     int64_t t, int causal, cudaStream_t stream);
/* dS = P ⊙ (dP − Σ_j P_ij dP_ij) into ds: p and ds (rows, t) of dtype, dp float32 (ds may be
 * dp when float32: in place). */
cudaError_t cuda_softmax_bwd(const void *p, const float *dp, void *ds, int dtype, int64_t rows,
			     int64_t t, cudaStream_t stream);

/* cudaSuccess when the GPU can run this build's kernels (the binary holds code for its compute
 * capability: CMAKE_CUDA_ARCHITECTURES, by default 8.0 and 9.0 with PTX for later ones), else
 * why not (cudaErrorNoKernelImageForDevice on a 7.x GPU, say). Launches nothing. */
cudaError_t cuda_kernels_loadable(void);

/* A one-thread kernel that spins for at least cycles SM clock cycles (nothing when cycles <= 0):
 * the device-side delay the backend puts before a phase's start event (backend_cuda.c, mark), so
 * that the event fires when the phase is already queued behind it, not while the host is still
 * enqueuing it. */
cudaError_t cuda_timing_delay(long long cycles, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
