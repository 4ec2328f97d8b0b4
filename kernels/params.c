/* kernels/params.c: the suite/impl names a sweep may use. */
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

int64_t model_param_count(const struct model_config *m)
{
	int64_t d = m->d_model, sq, ff, layer, blocks, embed, total;
	if (__builtin_mul_overflow(d, d, &sq) || __builtin_mul_overflow(sq, 4, &sq) ||
	    __builtin_mul_overflow(d, m->d_ff, &ff) || __builtin_mul_overflow(ff, 3, &ff) ||
	    __builtin_add_overflow(sq, ff, &layer) || __builtin_add_overflow(layer, 2 * d, &layer) ||
	    __builtin_mul_overflow(layer, m->num_layers, &blocks) ||
	    __builtin_mul_overflow(m->vocab_size, d, &embed) || __builtin_mul_overflow(embed, 2, &embed) ||
	    __builtin_add_overflow(blocks, embed, &total) || __builtin_add_overflow(total, d, &total))
		return -1;
	return total;
}
