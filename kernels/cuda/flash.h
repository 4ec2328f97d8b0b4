/* kernels/cuda/flash.h: fused (flash) attention on CUDA, forward and backward, as C launchers
 * (kernels/cuda/flash.cu).
 *
 * S = scale·Q Kᵀ per head (causal: S_ij = −∞ for j > i), P = softmax_rows(S), O = P V,
 * LSE_i = log Σ_j exp(S_ij). Backward: dV = Pᵀ dO, dP = dO Vᵀ, Delta_i = Σ_d dO_id O_id,
 * dS = P ⊙ (dP − Delta), dQ = scale·dS K, dK = scale·dSᵀ Q. S and P never reach global memory.
 *
 * float16 and bfloat16 run on tensor cores (mma.sync, sm_80 and later) with float32
 * accumulation and softmax statistics; float32 runs on CUDA cores in float32 (no TF32).
 *
 * Every launcher enqueues its work on stream, allocates nothing, and returns the first CUDA
 * error of its calls and launches (cudaErrorInvalidValue where cuda_flash_unsupported says
 * why not); failures inside a kernel surface at the next synchronize. An empty problem
 * (b, h or t zero) does nothing and returns cudaSuccess.
 *
 * Not deterministic: the backward sums dQ over key blocks with float32 atomicAdd, in an order
 * that can change from run to run (rounding differences only).
 */
#ifndef BENCHDB_FLASH_H
#define BENCHDB_FLASH_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cuda_flash_shape {
	int64_t b, h, t, dh;   /* q, k, v, o, d_o, dq, dk, dv: contiguous (b, h, t, dh) of dtype */
	int causal;            /* query i sees keys j <= i */
	int dtype;             /* enum bd_dtype: 0 float32, 1 float16, 2 bfloat16 */
	float scale;           /* softmax scale (the caller passes 1/sqrt(dh)) */
};

/* NULL if the kernels can run s, else why not (a static string, e.g. "flash: head_dim must be
 * 16..128"). */
const char *cuda_flash_unsupported(const struct cuda_flash_shape *s);

/* Bytes of dynamic shared memory per block the largest of s's kernels needs: the forward's, and
 * the backward's too when backward; 0 for an unsupported shape. Over 48 KiB the launchers raise
 * the kernel's limit, which fails (cudaErrorInvalidValue) on a GPU whose opt-in maximum
 * (cudaDevAttrMaxSharedMemoryPerBlockOptin) is below this: 99 KiB on compute capability 8.6, 8.9
 * and 12.x, where the 16-bit kernels of head_dim 65..128 do not fit. */
size_t cuda_flash_smem_bytes(const struct cuda_flash_shape *s, int backward);

/* Bytes of device workspace cuda_flash_bwd needs (contents on entry do not matter); 0 for an
 * empty or unsupported shape. */
size_t cuda_flash_bwd_workspace(const struct cuda_flash_shape *s);

/* O (b, h, t, dh) dtype and lse (b, h, t) float32 = natural log of Σ_j exp(scale·q_i·k_j) over
 * the keys query i sees. */
cudaError_t cuda_flash_fwd(const struct cuda_flash_shape *s, const void *q, const void *k,
			   const void *v, void *o, float *lse, cudaStream_t stream);

/* dq, dk, dv (b, h, t, dh) dtype, overwritten, from q, k, v, the forward's o and lse, and d_o;
 * workspace holds cuda_flash_bwd_workspace(s) bytes of device memory, 16-byte aligned. */
cudaError_t cuda_flash_bwd(const struct cuda_flash_shape *s, const void *q, const void *k,
			   const void *v, const void *o, const float *lse, const void *d_o,
			   void *dq, void *dk, void *dv, void *workspace, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
