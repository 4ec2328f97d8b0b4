/* kernels/dev/ops.h: the device-ops interface the transformer (model.c) is written against.
 *
 * A backend (kernels/cpu/backend_cpu.c, kernels/cuda/backend_cuda.c) fills struct dev_ops. The
 * model never touches a device pointer itself: it allocates through the backend, uploads its
 * initial parameters and tokens, and calls ops. Nothing model-level is CPU-specific.
 *
 * Conventions
 *  - Every op returns 0 or a negative enum bd_rc with dev->err filled (message names the op).
 *    BD_ENOMEM means the memory limit or the device refused an allocation: the case is `oom`.
 *  - Buffers are device pointers from ops->alloc; "act" buffers hold float32 or bfloat16 as the
 *    dtype argument says; the rest are float32 (int32 for tokens).
 *  - Ops are asynchronous on a device with a stream; ops->sync waits for all of them. The CPU
 *    backend is synchronous.
 *  - Shapes: n token rows (batch · context), d = d_model, f = d_ff, V = vocab, (b, h, t, dh) heads.
 *    The semantics of each op are those of the matching cpu_* function in kernels/cpu/ops_cpu.h.
 */
#ifndef BENCHDB_MODEL_OPS_H
#define BENCHDB_MODEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "mem.h"
#include "params.h"

/* AdamW hyper-parameters (PyTorch's torch.optim.AdamW formulation). */
struct adamw_params {
	float lr, beta1, beta2, eps, weight_decay;
};

/* For every batch entry: C(m, n) = alpha · op(A)(m, k) · op(B)(k, n) + beta · C, row-major.
 * A and B have ab_dtype (float32 or bfloat16), C has c_dtype; accumulation is float32. */
struct dev_gemm {
	int64_t batch;           /* 0 is taken as 1 */
	int64_t m, n, k;
	int trans_a, trans_b;    /* 1: the stored matrix is (k, m) / (n, k) and used transposed */
	int64_t lda, ldb, ldc;   /* row strides in elements; 0 = packed */
	int64_t stride_a, stride_b, stride_c; /* between batch entries; 0 = packed */
	enum bd_dtype ab_dtype, c_dtype;
	float alpha;             /* 0 is taken as 1 */
	float beta;              /* 0: C is overwritten */
};

/* One attention problem: q, k, v, o, d_o, dq, dk, dv are (b, h, t, dh) of io; lse (b, h, t)
 * float32, natural log; scale 1/sqrt(dh). math is the case's precision: the CUDA backend, and the
 * CPU's naive kernel in bfloat16, compute in math (16-bit inputs to the products, float32
 * softmax statistics and accumulation), converting float32 buffers to math and back when io is
 * float32 and math is not (the model's case); the CPU backend takes float32 buffers only, and
 * its flash kernel computes in float32 whatever math is (kernels/cpu/attention_cpu.h). */
struct dev_attention_shape {
	int64_t b, h, t, dh;
	int causal;
	int backward;            /* 0: only the forward will run */
	enum bd_dtype io;        /* of the tensors passed in; float32 in the model */
	enum bd_dtype math;      /* see above */
};

struct dev;

struct dev_ops {
	const char *name;        /* "cpu", "cuda": device_name of its device */

	/* memory: zero-filled, accounted in dev->mem (live, peak, limit) */
	void *(*alloc)(struct dev *dev, size_t bytes);
	void (*free)(struct dev *dev, void *p);
	int (*upload)(struct dev *dev, void *dst, const void *host_src, size_t bytes);
	int (*download)(struct dev *dev, void *host_dst, const void *src, size_t bytes);
	int (*copy)(struct dev *dev, void *dst, const void *src, size_t bytes);
	int (*zero)(struct dev *dev, void *p, size_t bytes);
	int (*sync)(struct dev *dev);

	/* GEMM; the backend builds and caches its plan per distinct dev_gemm (planning is never
	 * repeated for a shape once done: the model calls each shape once untimed first). */
	int (*gemm)(struct dev *dev, const struct dev_gemm *g, const void *a, const void *b, void *c);
	/* Optional (NULL: gemm twice): two independent products, g0's then g1's or at once as the
	 * backend sees fit; neither's output may overlap the other's inputs or output. */
	int (*gemm_pair)(struct dev *dev, const struct dev_gemm *g0, const void *a0, const void *b0,
			 void *c0, const struct dev_gemm *g1, const void *a1, const void *b1,
			 void *c1);
	/* Optional (NULL: nothing): how the backend ran what it ran so far, as the members of a JSON
	 * object without its braces (workload.h describe), into buf (n bytes). */
	void (*describe)(struct dev *dev, char *buf, size_t n);

	int (*convert)(struct dev *dev, void *dst, enum bd_dtype dst_dtype, const void *src,
		       enum bd_dtype src_dtype, size_t count);
	int (*embedding_fwd)(struct dev *dev, const int32_t *tokens, const float *table, float *out,
			     int64_t n, int64_t d);
	int (*embedding_bwd)(struct dev *dev, const int32_t *tokens, const float *dout,
			     float *dtable, int64_t n, int64_t d);
	int (*rmsnorm_fwd)(struct dev *dev, const float *x, const float *g, void *y,
			   enum bd_dtype y_dtype, float *rstd, int64_t n, int64_t d, float eps);
	/* x_out = x + y (the residual add), then rmsnorm_fwd of x_out into h and rstd, in one pass
	 * over the rows. x_out may not alias x or y. NULL on a backend without it: the model then
	 * copies x and accumulates the projection into it in the GEMM (beta 1). */
	int (*residual_rmsnorm_fwd)(struct dev *dev, const float *x, const float *y, float *x_out,
				    const float *g, void *h, enum bd_dtype h_dtype, float *rstd,
				    int64_t n, int64_t d, float eps);
	int (*rmsnorm_bwd)(struct dev *dev, const float *dy, const float *x, const float *g,
			   const float *rstd, float *dx, float *dg, int64_t n, int64_t d);
	int (*heads_split)(struct dev *dev, const void *in, enum bd_dtype in_dtype, int64_t ld,
			   float *out, const float *rope_table, int64_t b, int64_t t, int64_t h,
			   int64_t dh);
	int (*heads_merge)(struct dev *dev, const float *in, void *out, enum bd_dtype out_dtype,
			   int64_t ld, const float *rope_table, int64_t b, int64_t t, int64_t h,
			   int64_t dh);
	int (*swiglu_fwd)(struct dev *dev, const void *u, void *out, enum bd_dtype dtype, int64_t n,
			  int64_t f);
	int (*swiglu_bwd)(struct dev *dev, const void *u, const void *dout, void *du,
			  enum bd_dtype dtype, int64_t n, int64_t f);
	/* loss: one float on the device, the mean cross-entropy */
	int (*xent_fwd)(struct dev *dev, const float *logits, const int32_t *targets, float *lse,
			float *loss, int64_t n, int64_t V);
	int (*xent_bwd)(struct dev *dev, const float *logits, const float *lse,
			const int32_t *targets, void *dlogits, enum bd_dtype dtype, int64_t n,
			int64_t V, float scale);
	int (*adamw)(struct dev *dev, float *p, const float *g, float *m, float *v,
		     uint16_t *p_bf16, size_t count, const struct adamw_params *hp, int64_t step);

	/* attention: impl is an attention row of the backend's table (impls.c: "naive", "flash",
	 * "sdpa" on cuda); create returns BD_EUNSUPPORTED with a reason for an impl or shape the
	 * backend cannot run (the case is then `unsupported`). */
	int (*attention_create)(struct dev *dev, void **att, const char *impl,
				const struct dev_attention_shape *s);
	int (*attention_fwd)(struct dev *dev, void *att, const void *q, const void *k,
			     const void *v, void *o, float *lse);
	/* from the inputs and outputs of the last forward of att on the same tensors */
	int (*attention_bwd)(struct dev *dev, void *att, const void *q, const void *k,
			     const void *v, const void *o, const float *lse, const void *d_o,
			     void *dq, void *dk, void *dv);
	void (*attention_free)(struct dev *dev, void *att);
	/* Optional (NULL): what att runs beyond its impl's name, as the members of a JSON object
	 * without its braces (workload.h describe: the graph and engine cuDNN chose, ...), into buf
	 * (n bytes); "" for nothing. */
	void (*attention_describe)(struct dev *dev, void *att, char *buf, size_t n);

	/* Timing on the work stream, NULL on a synchronous device (the CPU). mark records event
	 * slot (0 .. DEV_TIMER_SLOTS-1) on the stream, an even (start) slot behind a device-side
	 * delay that covers the host's enqueue of the work it times (CUDA: backend_cuda.c, "the
	 * timing window"); elapsed waits for slot `to` and gives the
	 * nanoseconds between the two marks. */
	int (*mark)(struct dev *dev, int slot);
	int (*elapsed)(struct dev *dev, int from, int to, int64_t *ns);
	/* Named ranges for profilers (NVTX on CUDA), NULL where there are none. */
	void (*range_push)(struct dev *dev, const char *name);
	void (*range_pop)(struct dev *dev);

	/* everything the backend cached (GEMM plans, workspaces); dev_free calls it */
	void (*release)(struct dev *dev);
};

#define DEV_TIMER_SLOTS 8

struct dev {
	const struct dev_ops *ops;
	struct mem_arena *mem;   /* accounting and limit of this case */
	struct bd_error err;     /* the last failure */
	int tf32;                /* CUDA: float32 GEMMs may use TF32 tensor cores (set after open,
				  * before the first gemm); the CPU backend refuses it */
	void *impl;              /* backend state */
	const struct dev_backend *backend;   /* set by dev_open */
};

/* A profiler range around what follows, when the backend has them; printf-style name. */
void dev_range_push(struct dev *dev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dev_range_pop(struct dev *dev);

/* A backend as a workload sees it before opening one: how to open it and what a case may ask of
 * it, answered without opening it. One per device, in dev.c's table; a backend is this and its
 * dev_ops (and its rows in impls.c). */
struct dev_backend {
	enum bd_device device;
	/* 1: ops are queued on a stream and mark/elapsed time them there (CUDA); 0: an op is done
	 * when it returns, and the host clock times it (the CPU) */
	int async;
	/* 1: its buffers are host memory (the CPU): reading one back is a copy, and a case's own
	 * host buffers count against the case's memory as the device's do */
	int host_memory;
	int (*open)(struct dev *dev, struct mem_arena *mem, struct bd_error *err);
	/* Optional (NULL: always): 0 when this build and machine can open it, else BD_EUNSUPPORTED
	 * with why ("no usable CUDA GPU: ..."). The probe behind it runs once per process. */
	int (*available)(struct bd_error *err);
	/* Optional (NULL: no objection): BD_EUNSUPPORTED with why when gemm cannot take ab_dtype
	 * inputs (or TF32 rounding, when tf32 is set) here; 0 otherwise (the suites refuse the dtypes
	 * they never take themselves). */
	int (*gemm_supported)(enum bd_dtype ab_dtype, int tf32, struct bd_error *err);
};

/* device's backend; NULL for a device out of range. */
const struct dev_backend *dev_backend(enum bd_device device);
/* Make the backend for device. Returns 0, or BD_EUNSUPPORTED with err when the device is not
 * built in or not present (err says why), or another code when opening it failed. */
int dev_open(struct dev *dev, enum bd_device device, struct mem_arena *mem, struct bd_error *err);
/* Release the backend's caches. Buffers the model allocated must be freed first. */
void dev_close(struct dev *dev);

/* The backends, for dev.c's table. dev_cuda_backend's open fails with the reason on a build
 * without CUDA or a machine without a usable GPU (kernels/cuda/). */
extern const struct dev_backend dev_cpu_backend, dev_cuda_backend;

#endif
