/* kernels/workloads/matmul_dev.c: workload "matmul"/"cublaslt" on CUDA: C(m, n) = A(m, k) B(k, n)
 * through the CUDA backend's GEMM (cuBLASLt; ops.h), A and B float32 (true float32, or TF32
 * with tf32: true) or bfloat16, C float32, accumulation float32. It exists so that a sweep
 * measures the GPU's GEMM rate next to the models in the same run (model FLOP utilisation).
 * Plain C over the device-ops interface: on a build or machine without CUDA, dev_open says why
 * and the case is `unsupported`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_rule.h"
#include "cuda_info.h"
#include "matmul_common.h"
#include "ops.h"


struct matmul_cuda {
	struct case_params p;
	struct dev dev;
	int dev_open;
	void *a, *b;        /* (m, k), (k, n) in the dtype */
	float *c;           /* (m, n) */
	void *host_a, *host_b;
};

static int mm_check(const struct case_params *p, struct wl_status *st)
{
	char why[256];
	int code = matmul_check_shape(p, "cublaslt", st);
	if (code == STATUS_OK && !cuda_available(why, sizeof(why)))
		return wl_set(st, STATUS_UNSUPPORTED, "%s", why);
	return code;
}

static int mm_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		    struct wl_status *st)
{
	struct matmul_cuda *c = calloc(1, sizeof(*c));
	*state = c;
	if (!c)
		return wl_set(st, STATUS_ERROR, "out of host memory");
	c->p = *p;
	int rc = wl_dev_open(&c->dev, p, mem, st);   /* p->device is cuda: this workload's */
	if (rc)
		return rc;
	c->dev_open = 1;
	size_t es = dtype_size(p->dtype);
	size_t na = (size_t)(p->m * p->k), nb = (size_t)(p->k * p->n), nc = (size_t)(p->m * p->n);
	if (!(c->a = c->dev.ops->alloc(&c->dev, na * es)) ||
	    !(c->b = c->dev.ops->alloc(&c->dev, nb * es)) ||
	    !(c->c = c->dev.ops->alloc(&c->dev, nc * sizeof(float))))
		return wl_from_dev(st, &c->dev, BD_ENOMEM, "matmul operands");
	c->host_a = malloc(na * es);
	c->host_b = malloc(nb * es);
	if (!c->host_a || !c->host_b)
		return wl_set(st, STATUS_ERROR, "out of host memory for the inputs");
	struct rng r;
	rng_init(&r, p->seed);
	matmul_fill(c->host_a, p->dtype, (int64_t)na, &r);
	matmul_fill(c->host_b, p->dtype, (int64_t)nb, &r);
	if ((rc = c->dev.ops->upload(&c->dev, c->a, c->host_a, na * es)) ||
	    (rc = c->dev.ops->upload(&c->dev, c->b, c->host_b, nb * es)) ||
	    (rc = c->dev.ops->sync(&c->dev)))
		return wl_from_dev(st, &c->dev, rc, "upload");
	return wl_set(st, STATUS_OK, "%s", "");
}

static int mm_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	struct matmul_cuda *c = state;
	if (phase != PHASE_FWD)
		return wl_set(st, STATUS_UNSUPPORTED, "a matmul has no %s phase", phase_name(phase));
	struct dev_gemm g = {.m = c->p.m, .n = c->p.n, .k = c->p.k, .ab_dtype = c->p.dtype,
			     .c_dtype = DTYPE_FLOAT32};
	int rc = c->dev.ops->gemm(&c->dev, &g, c->a, c->b, c->c);
	return rc ? wl_from_dev(st, &c->dev, rc, "gemm") : STATUS_OK;
}

static int mm_validate(void *state, struct wl_status *st)
{
	struct matmul_cuda *c = state;
	const struct case_params *p = &c->p;
	int rc = mm_run(c, PHASE_FWD, st);
	if (rc != STATUS_OK)
		return rc;
	float *got = malloc((size_t)(p->m * p->n) * sizeof(float));
	if (!got)
		return wl_set(st, STATUS_ERROR, "out of host memory for validation");
	if ((rc = c->dev.ops->download(&c->dev, got, c->c, (size_t)(p->m * p->n) * sizeof(float)))) {
		free(got);
		return wl_from_dev(st, &c->dev, rc, "download");
	}
	rc = matmul_check_entries(p, c->host_a, c->host_b, got, check_rule_for(p).atol, st);
	free(got);
	return rc;
}

static int mm_mark(void *state, int slot, struct wl_status *st)
{
	return wl_dev_mark(&((struct matmul_cuda *)state)->dev, slot, st);
}

static int mm_elapsed(void *state, enum bd_phase phase, int64_t *ns, struct wl_status *st)
{
	return wl_dev_elapsed(&((struct matmul_cuda *)state)->dev, phase, ns, st);
}

static int mm_drain(void *state, struct wl_status *st)
{
	return wl_dev_drain(&((struct matmul_cuda *)state)->dev, st);
}

static void mm_teardown(void *state)
{
	struct matmul_cuda *c = state;
	if (!c)
		return;
	if (c->dev_open) {
		c->dev.ops->free(&c->dev, c->a);
		c->dev.ops->free(&c->dev, c->b);
		c->dev.ops->free(&c->dev, c->c);
		dev_close(&c->dev);
	}
	free(c->host_a);
	free(c->host_b);
	free(c);
}

const struct workload matmul_cuda_cublaslt = {
	.suite = "matmul",
	.device = DEVICE_CUDA,
	.check = mm_check,
	.figures = matmul_figures,
	.setup = mm_setup,
	.validate = mm_validate,
	.run = mm_run,
	.teardown = mm_teardown,
	.mark = mm_mark,
	.elapsed = mm_elapsed,
	.drain = mm_drain,
};
