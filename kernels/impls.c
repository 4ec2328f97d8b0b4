/* kernels/impls.c: the implementation table of each backend (impls.h), and the names a sweep may
 * use, read from them. */
#include "impls.h"

#include <stdio.h>
#include <string.h>

#include "workload.h"

#define F32 IMPL_DTYPE(DTYPE_FLOAT32)
#define F16 IMPL_DTYPE(DTYPE_FLOAT16)
#define BF16 IMPL_DTYPE(DTYPE_BFLOAT16)
#define ANY 0   /* whatever its workload's check (e2e: the model's) or its backend accepts */

static const struct impl cpu_impls[] = {
	{"attention", "naive",
	 "materialised S = QK^T (oneDNN matmul), softmax, PV; O(S^2) memory, float32", F32},
	{"attention", "flash",
	 "tiled online-softmax attention (FlashAttention-2 style), O(S) memory, float32", F32},
	{"matmul", "onednn",
	 "C = A B through oneDNN's matmul primitive (float32 or bfloat16 in, float32 out)",
	 F32 | BF16},
	{"e2e", "benchdb",
	 "the decoder LM (docs/design.md) on oneDNN + OpenMP, float32 or bf16 mixed", ANY},
	{NULL, NULL, NULL, 0},
};

static const struct impl cuda_impls[] = {
	{"e2e", "benchdb",
	 "the decoder LM on CUDA: cuBLASLt GEMMs, own kernels, float32/TF32 or bf16 mixed", ANY},
	{"matmul", "cublaslt",
	 "C = A B through cuBLASLt (float32, TF32 with tf32: true, or bfloat16 in)", F32 | BF16},
	{"attention", "naive",
	 "materialised S = QK^T (cuBLASLt), softmax kernel, PV; O(S^2) memory; float32, float16, "
	 "bfloat16", F32 | F16 | BF16},
	{"attention", "flash",
	 "tiled online-softmax kernels, LSE saved; tensor cores for float16/bfloat16",
	 F32 | F16 | BF16},
	{"attention", "sdpa",   /* cuDNN refuses what it does not take, with its reason */
	 "cuDNN fused scaled-dot-product attention (graph API), float16/bfloat16", ANY},
	{NULL, NULL, NULL, 0},
};

static const struct impl *const tables[DEVICE_COUNT] = {
	[DEVICE_CPU] = cpu_impls,
	[DEVICE_CUDA] = cuda_impls,
};

const struct impl *impl_table(enum bd_device device)
{
	static const struct impl none[] = {{NULL, NULL, NULL, 0}};
	return (unsigned)device < DEVICE_COUNT ? tables[device] : none;
}

const struct impl *impl_find(const char *suite, const char *name, enum bd_device device)
{
	for (const struct impl *m = impl_table(device); m->suite; m++)
		if (!strcmp(m->suite, suite) && !strcmp(m->name, name))
			return m;
	return NULL;
}

int impl_runs_on(const char *suite, const char *name, enum bd_device device)
{
	return impl_find(suite, name, device) != NULL;
}

const char *impl_list(const char *suite, enum bd_device device, char *buf, size_t n)
{
	size_t len = 0;
	if (n)
		buf[0] = '\0';
	for (const struct impl *m = impl_table(device); m->suite; m++) {
		if (strcmp(m->suite, suite) || len >= n)
			continue;
		int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", m->name);
		len += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

const char *const workload_suites[] = {"attention", "e2e", "matmul", NULL};

/* The impls of each suite on any device, in the tables' order (the cpu's first), without
 * repeats: the sweep's valid choices, which include impls of devices this build lacks. */
#define SUITE_MAX_IMPLS 32
static const char *suite_impls[sizeof(workload_suites) / sizeof(workload_suites[0])]
			      [SUITE_MAX_IMPLS + 1];

static void suite_impls_fill(int s)
{
	int n = 0;
	for (int d = 0; d < DEVICE_COUNT; d++)
		for (const struct impl *m = impl_table((enum bd_device)d); m->suite; m++) {
			if (strcmp(m->suite, workload_suites[s]) || n == SUITE_MAX_IMPLS)
				continue;
			int seen = 0;
			for (int i = 0; i < n && !seen; i++)
				seen = !strcmp(suite_impls[s][i], m->name);
			if (!seen)
				suite_impls[s][n++] = m->name;
		}
	suite_impls[s][n] = NULL;
}

const char *const *workload_impl_names(const char *suite)
{
	for (int s = 0; workload_suites[s]; s++)
		if (!strcmp(workload_suites[s], suite)) {
			if (!suite_impls[s][0])
				suite_impls_fill(s);
			return suite_impls[s];
		}
	return NULL;
}
