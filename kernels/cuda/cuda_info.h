/* kernels/cuda/cuda_info.h: is there a usable CUDA GPU, and what is it. No CUDA headers, so
 * that code built without CUDA (the runner's sysinfo, the workloads' checks) can include it;
 * a build without CUDA links cuda_none.c instead of cuda_info.c. */
#ifndef BENCHDB_CUDA_INFO_H
#define BENCHDB_CUDA_INFO_H

#include <stddef.h>
#include <stdint.h>

/* 1 when this build has the CUDA backend and the process sees at least one GPU; else 0 and why
 * (if not NULL) says which ("built without CUDA", "no usable CUDA GPU: cudaGetDeviceCount: ..."),
 * in a form that completes "cannot run on cuda: ...". The probe runs once per process. */
int cuda_available(char *why, size_t n);

/* What the runner records about the GPUs (device 0 for the per-device fields). Fields this
 * machine or build cannot tell stay empty / 0. */
struct cuda_gpu_info {
	char name[256];
	int count;                 /* GPUs visible to this process */
	int64_t mem_bytes;
	int sm_count;
	char cc[16];               /* compute capability, "9.0" */
	int clock_mhz, mem_clock_mhz; /* peak SM and memory clocks */
	char driver[64];           /* CUDA version the driver supports, "13.0" */
	char runtime[64];          /* CUDA runtime linked in, "13.0" */
	char cublas[64];           /* cuBLASLt, "13.1.0" */
	char cudnn[64];            /* cuDNN linked in, "9.19.0"; empty when built without it */
};
void cuda_gpu_info(struct cuda_gpu_info *gi);

#endif
