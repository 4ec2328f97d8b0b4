/* kernels/workloads/build_info.c: kernels_build_info (build_info.h) from the backends' probes. */
#include "build_info.h"

#include <stdio.h>
#include <string.h>

#include "cuda_info.h"
#include "dnnl_wrap.h"

void kernels_build_info(struct kernels_build_info *bi)
{
	struct bd_error err = {0};
	memset(bi, 0, sizeof(*bi));
	onednn_version(bi->blas, sizeof(bi->blas));
	if (onednn_gemm_supported(DTYPE_BFLOAT16, &err))
		snprintf(bi->cpu_bf16, sizeof(bi->cpu_bf16), "no: %s", err.msg);
	else
		snprintf(bi->cpu_bf16, sizeof(bi->cpu_bf16), "native");
	if (cuda_available(bi->no_gpu, sizeof(bi->no_gpu)))
		bi->no_gpu[0] = '\0';
	cuda_gpu_info(&bi->gpu);
}
