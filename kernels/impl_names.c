/* kernels/impl_names.c: the suite/impl names a sweep may use. */
#include "params.h"

#include <string.h>

const char *const workload_suites[] = {"attention", "e2e", "matmul", NULL};

static const char *const attention_impls[] = {"naive", "flash", "sdpa", NULL};
static const char *const e2e_impls[] = {"benchdb", NULL};
static const char *const matmul_impls[] = {"onednn", "cublaslt", NULL};

const char *const *workload_impl_names(const char *suite)
{
	if (!strcmp(suite, "attention"))
		return attention_impls;
	if (!strcmp(suite, "e2e"))
		return e2e_impls;
	if (!strcmp(suite, "matmul"))
		return matmul_impls;
	return NULL;
}
