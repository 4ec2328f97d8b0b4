/* kernels/cuda/cuda_info.h: is there a usable CUDA GPU, and what is it. No CUDA headers, so
 * that code built without CUDA (the workloads' checks, build_info.c) can include it;
 * a build without CUDA links cuda_none.c instead of cuda_info.c. */
#ifndef BENCHDB_CUDA_INFO_H
#define BENCHDB_CUDA_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "build_info.h"

/* 1 when this build has the CUDA backend and the process sees at least one GPU; else 0 and why
 * (if not NULL) says which ("built without CUDA", "no usable CUDA GPU: cudaGetDeviceCount: ..."),
 * in a form that completes "cannot run on cuda: ...". The probe runs once per process. */
int cuda_available(char *why, size_t n);

/* What the runner records about the GPUs (struct cuda_gpu_info: build_info.h). */
void cuda_gpu_info(struct cuda_gpu_info *gi);

/* The shared memory per block a kernel may opt in to on the current GPU, in bytes
 * (cudaDevAttrMaxSharedMemoryPerBlockOptin); 0 where unknown or without CUDA. */
int cuda_smem_per_block_optin(void);

#endif
