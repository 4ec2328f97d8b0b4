/* kernels/params.h: one benchmark case's parameters, as the runner hands them to a workload. */
#ifndef BENCHDB_PARAMS_H
#define BENCHDB_PARAMS_H

#include <stddef.h>
#include <stdint.h>

enum bd_device { DEVICE_CPU, DEVICE_CUDA, DEVICE_COUNT };
enum bd_dtype { DTYPE_FLOAT32, DTYPE_FLOAT16, DTYPE_BFLOAT16, DTYPE_COUNT };
enum bd_pass { PASS_FORWARD, PASS_BACKWARD, PASS_FORWARD_BACKWARD, PASS_TRAIN_STEP, PASS_COUNT };
/* Timed phases of one iteration. */
enum bd_phase { PHASE_FWD, PHASE_BWD, PHASE_OPT, PHASE_COUNT };

const char *device_name(enum bd_device d);   /* "cpu", "cuda" */
const char *dtype_name(enum bd_dtype t);     /* "float32", "float16", "bfloat16" */
const char *pass_name(enum bd_pass p);       /* "forward", "backward", "forward_backward", "train_step" */
const char *phase_name(enum bd_phase p);     /* "fwd", "bwd", "opt" */
/* Bytes of one element: 4 for float32, 2 for float16 and bfloat16. */
size_t dtype_size(enum bd_dtype t);
/* Parse the names above; return -1 when unknown. */
int device_parse(const char *s);
int dtype_parse(const char *s);
int pass_parse(const char *s);
int phase_parse(const char *s);
/* Bit mask of the phases a pass times: forward -> fwd; backward -> bwd; forward_backward -> fwd|bwd;
 * train_step -> fwd|bwd|opt. */
unsigned pass_phases(enum bd_pass p);

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
