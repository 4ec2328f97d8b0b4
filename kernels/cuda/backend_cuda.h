/* kernels/cuda/backend_cuda.h: what the CUDA backend's files share with each other (the model
 * and the workloads use ops.h only). backend_cuda.c owns the stream, the allocator and the GEMMs;
 * attention_cuda.c the attention ops, over the backend's own ops. */
#ifndef BENCHDB_BACKEND_CUDA_H
#define BENCHDB_BACKEND_CUDA_H

#include <cuda_runtime.h>

#include "ops.h"

/* The backend's work stream. */
cudaStream_t cuda_dev_stream(struct dev *dev);
/* The slot where attention_cuda.c keeps its per-backend state (NULL until first used). */
void **cuda_dev_attention_shared(struct dev *dev);
/* A failed CUDA call as dev's error: BD_ENOMEM for cudaErrorMemoryAllocation, else BD_EINVAL;
 * the message names what, CUDA's error and the file and line of the call (cuda_fail: the
 * caller's). Clears a non-sticky error. */
int cuda_fail_at(struct dev *dev, cudaError_t e, const char *what, const char *file, int line);
#define cuda_fail(dev, e, what) cuda_fail_at((dev), (e), (what), __FILE__, __LINE__)
/* Return cuda_fail's rc from the enclosing function when call fails. */
#define CUDA_TRY(dev, call, what)                                                            \
	do {                                                                                 \
		cudaError_t e_ = (call);                                                     \
		if (e_ != cudaSuccess)                                                       \
			return cuda_fail((dev), e_, (what));                                 \
	} while (0)


/* The attention ops of dev_ops (ops.h), in attention_cuda.c. */
int cuda_attention_create(struct dev *dev, void **att, const char *impl,
			  const struct dev_attention_shape *s);
int cuda_attention_fwd(struct dev *dev, void *att, const void *q, const void *k, const void *v,
		       void *o, float *lse);
int cuda_attention_bwd(struct dev *dev, void *att, const void *q, const void *k, const void *v,
		       const void *o, const float *lse, const void *d_o, void *dq, void *dk,
		       void *dv);
void cuda_attention_free(struct dev *dev, void *att);
void cuda_attention_describe(struct dev *dev, void *att, char *buf, size_t n);
/* The timing delay before start events: its fixed length in nanoseconds
 * (BENCHDB_CUDA_TIMING_DELAY_US), or -1 when it adapts to the host's enqueue time. */
int64_t cuda_dev_timing_delay_fixed_ns(struct dev *dev);
/* Free the per-backend attention state in *shared (scratch, cuDNN plans and handle); called by
 * the backend's release before its buffers go. */
void cuda_attention_release(struct dev *dev, void **shared);

#endif
