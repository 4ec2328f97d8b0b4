/* kernels/cuda/cuda_info.c: the GPU probe and the GPU facts the runner records (cuda_info.h). */
#include "cuda_info.h"

#include <stdio.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_runtime.h>
#ifdef BENCHDB_HAVE_CUDNN
#include <cudnn.h>
#endif

static int probed, available;
static char probe_why[256];

int cuda_available(char *why, size_t n)
{
	if (!probed) {
		probed = 1;
		int count = 0;
		cudaError_t e = cudaGetDeviceCount(&count);
		int driver = 0;
		if (cudaDriverGetVersion(&driver) != cudaSuccess)
			driver = 0;
		if (e != cudaSuccess) {
			cudaGetLastError();
			snprintf(probe_why, sizeof(probe_why),
				 "no usable CUDA GPU: %scudaGetDeviceCount: %s (%s)",
				 driver ? "" : "no NVIDIA driver on this machine; ", cudaGetErrorString(e),
				 cudaGetErrorName(e));
		} else if (count == 0) {
			snprintf(probe_why, sizeof(probe_why), "no CUDA GPU on this machine");
		} else {
			available = 1;
		}
	}
	if (why && n)
		snprintf(why, n, "%s", available ? "" : probe_why);
	return available;
}

/* CUDA's version integers: 1000·major + 10·minor. */
static void cuda_version(char *out, size_t n, int v)
{
	if (v > 0)
		snprintf(out, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

void cuda_gpu_info(struct cuda_gpu_info *gi)
{
	memset(gi, 0, sizeof(*gi));
	int v = 0;
	if (cudaRuntimeGetVersion(&v) == cudaSuccess)
		cuda_version(gi->runtime, sizeof(gi->runtime), v);
	size_t lt = cublasLtGetVersion();   /* 10000·major + 100·minor + patch */
	snprintf(gi->cublas, sizeof(gi->cublas), "%zu.%zu.%zu", lt / 10000, (lt / 100) % 100,
		 lt % 100);
#ifdef BENCHDB_HAVE_CUDNN
	size_t dnn = cudnnGetVersion();   /* 10000·major + 100·minor + patch (cuDNN 9) */
	snprintf(gi->cudnn, sizeof(gi->cudnn), "%zu.%zu.%zu", dnn / 10000, (dnn / 100) % 100,
		 dnn % 100);
#endif
	v = 0;
	if (cudaDriverGetVersion(&v) == cudaSuccess)
		cuda_version(gi->driver, sizeof(gi->driver), v);
	if (!cuda_available(NULL, 0))
		return;
	cudaGetDeviceCount(&gi->count);
	struct cudaDeviceProp prop;
	if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
		cudaGetLastError();
		return;
	}
	snprintf(gi->name, sizeof(gi->name), "%s", prop.name);
	gi->mem_bytes = (int64_t)prop.totalGlobalMem;
	gi->sm_count = prop.multiProcessorCount;
	snprintf(gi->cc, sizeof(gi->cc), "%d.%d", prop.major, prop.minor);
	int khz = 0;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
		gi->clock_mhz = khz / 1000;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
		gi->mem_clock_mhz = khz / 1000;
	cudaGetLastError();
}

int cuda_smem_per_block_optin(void)
{
	int device = 0, optin = 0;
	if (cudaGetDevice(&device) != cudaSuccess ||
	    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
		    cudaSuccess)
		return 0;
	return optin;
}
