/* kernels/params.h: one benchmark case's parameters, as the runner hands them to a workload. */
#ifndef BENCHDB_PARAMS_H
#define BENCHDB_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "vocab.h"

/* A transformer size (DESIGN "Workloads"); presets small..2.7B or user-defined in the sweep. */
struct model_config {
	char name[32];
	int64_t d_model, d_ff, num_layers, num_heads, vocab_size;
};

/* Parameter count of the DESIGN's formula: L(4d^2 + 3 d d_ff + 2d) + 2Vd + d; -1 on overflow. */
int64_t model_param_count(const struct model_config *m);

struct case_params {
	char suite[16];        /* "attention", "e2e", "matmul" */
	char impl[32];         /* "naive", "flash", "sdpa", "onednn", "benchdb", ... */
	enum bd_device device;
	enum bd_dtype dtype;
	enum bd_pass pass;
	int64_t batch_size;

	/* attention: Q, K, V are (batch_size, heads, seq_len, head_dim) */
	int64_t heads, seq_len, head_dim;
	int causal;

	/* e2e */
	struct model_config model;
	int64_t context_length;
	char attention[16];    /* attention impl inside the model: "naive", "flash", "sdpa" */

	/* matmul: C(m,n) = A(m,k) B(k,n) */
	int64_t m, n, k;

	/* measurement */
	int64_t warmup, iters;
	uint64_t seed;
	int64_t mem_limit;     /* bytes the workload may allocate; 0 = no limit */
	int sync;              /* CUDA: synchronize before reading timers (default 1) */
	int tf32;              /* CUDA: float32 GEMMs on TF32 tensor cores (default 0) */
};

#endif
