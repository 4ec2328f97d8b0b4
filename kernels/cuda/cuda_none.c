/* kernels/cuda/cuda_none.c: the CUDA entry points of a build without the CUDA toolkit: every CUDA
 * case is `unsupported` with this reason. */
#include <stdio.h>
#include <string.h>

#include "cuda_info.h"
#include "ops.h"

#define NO_CUDA "this benchdb was built without CUDA (no nvcc/CUDA toolkit found by CMake, or " \
		"BENCHDB_CUDA=OFF)"

int cuda_available(char *why, size_t n)
{
	if (why && n)
		snprintf(why, n, "%s", NO_CUDA);
	return 0;
}

void cuda_gpu_info(struct cuda_gpu_info *gi) { memset(gi, 0, sizeof(*gi)); }

int cuda_smem_per_block_optin(void) { return 0; }

static int no_cuda(struct bd_error *err) { return bd_fail(err, BD_EUNSUPPORTED, "%s", NO_CUDA); }

static int no_cuda_open(struct dev *dev, struct mem_arena *mem, struct bd_error *err)
{
	(void)mem;
	memset(dev, 0, sizeof(*dev));
	return no_cuda(err);
}

/* As kernels/cuda/backend_cuda.c's, so that a CUDA case's workload asks the same questions. */
const struct dev_backend dev_cuda_backend = {
	.device = DEVICE_CUDA,
	.async = 1,
	.host_memory = 0,
	.open = no_cuda_open,
	.available = no_cuda,
};
