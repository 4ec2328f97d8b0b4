/* kernels/build_info.h: what the kernels of this build run on, for the runner's system info — the
 * one call the runner makes into kernels/ besides the workloads (workload.h). */
#ifndef BENCHDB_BUILD_INFO_H
#define BENCHDB_BUILD_INFO_H

#include <stddef.h>
#include <stdint.h>

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

struct kernels_build_info {
	char blas[256];            /* oneDNN's version: "oneDNN 3.5.3 (cpu runtime: OMP, ...)" */
	char cpu_bf16[1100];       /* "native", or "no: " and why the cpu's bfloat16 cases are
				    * unsupported */
	char no_gpu[256];          /* why no CUDA GPU is usable; "" when one is */
	struct cuda_gpu_info gpu;
};

/* Fill bi. The probes behind it run once per process. */
void kernels_build_info(struct kernels_build_info *bi);

#endif
