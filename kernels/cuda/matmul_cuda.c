/* kernels/cuda/matmul_cuda.c: workload "matmul"/"cublaslt" on CUDA: C(m, n) = A(m, k) B(k, n)
 * through the CUDA backend's GEMM (cuBLASLt; ops.h), A and B float32 (true float32, or TF32
 * with tf32: true) or bfloat16, C float32, accumulation float32. It exists so that a sweep
 * measures the GPU's GEMM rate next to the models in the same run (model FLOP utilisation).
 * Plain C over the device-ops interface: on a build or machine without CUDA, dev_open says why
 * and the case is `unsupported`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "cuda_info.h"
#include "ops.h"
#include "rng.h"
#include "workload.h"

/* Validation: VALIDATE_ENTRIES random entries of C against a float64 dot product of the same
 * (possibly bfloat16) inputs, per entry within TOL · Σ_k |a_ik·b_kj|: float32 rounding of a
 * k-term sum in any order (bfloat16 products are exact in float32). TF32 rounds each input to
 * 10 mantissa bits first: 2^-11 relative per factor. */
#define VALIDATE_ENTRIES 256
#define TOL 1e-5
#define TOL_TF32 2e-3

struct matmul_cuda {
	struct case_params p;
	struct dev dev;
	int dev_open;
	void *a, *b;        /* (m, k), (k, n) in the dtype */
	float *c;           /* (m, n) */
	void *host_a, *host_b;
};

static size_t elem_size(enum bd_dtype t) { return t == DTYPE_BFLOAT16 ? 2 : 4; }

static double elem_get(const void *x, enum bd_dtype t, int64_t i)
{
	if (t == DTYPE_BFLOAT16)
		return bf16_to_float(((const uint16_t *)x)[i]);
	return ((const float *)x)[i];
}

static int mm_check(const struct case_params *p, struct wl_status *st)
{
	char why[256];
	if (p->dtype != DTYPE_FLOAT32 && p->dtype != DTYPE_BFLOAT16)
		return wl_set(st, WL_UNSUPPORTED, "the cublaslt matmul runs float32 and bfloat16, not %s",
			      dtype_name(p->dtype));
	if (p->pass != PASS_FORWARD)
		return wl_set(st, WL_UNSUPPORTED, "a matmul has only a forward pass, not %s",
			      pass_name(p->pass));
	if (p->m <= 0 || p->n <= 0 || p->k <= 0)
		return wl_set(st, WL_UNSUPPORTED, "m, n and k must be positive");
	if (!cuda_available(why, sizeof(why)))
		return wl_set(st, WL_UNSUPPORTED, "%s", why);
	return wl_set(st, WL_OK, "%s", "");
}

static void mm_figures(const struct case_params *p, struct wl_figures *f)
{
	double m = (double)p->m, n = (double)p->n, k = (double)p->k;
	memset(f, 0, sizeof(*f));
	f->flops[PHASE_FWD] = 2.0 * m * n * k;
	f->bytes[PHASE_FWD] = (m * k + k * n) * (double)elem_size(p->dtype) + m * n * sizeof(float);
}

static void fill(void *x, enum bd_dtype t, int64_t n, struct rng *r)
{
	for (int64_t i = 0; i < n; i++) {
		float v = rng_uniform(r, -1.0f, 1.0f);
		if (t == DTYPE_BFLOAT16)
			((uint16_t *)x)[i] = bf16_from_float(v);
		else
			((float *)x)[i] = v;
	}
}

static int from_dev(struct wl_status *st, struct matmul_cuda *c, int rc, const char *what)
{
	int code = rc == BD_ENOMEM ? WL_OOM : c->dev.unsupported ? WL_UNSUPPORTED : WL_ERROR;
	return wl_set(st, code, "%s: %s", what, c->dev.err.msg);
}

static int mm_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		    struct wl_status *st)
{
	struct matmul_cuda *c = calloc(1, sizeof(*c));
	*state = c;
	if (!c)
		return wl_set(st, WL_ERROR, "out of host memory");
	c->p = *p;
	struct bd_error err = {0};
	int rc = dev_open(&c->dev, DEVICE_CUDA, mem, &err);
	if (rc)
		return wl_set(st, rc == BD_ENOMEM ? WL_OOM : WL_UNSUPPORTED, "%s", err.msg);
	c->dev_open = 1;
	c->dev.tf32 = p->tf32;
	size_t es = elem_size(p->dtype);
	size_t na = (size_t)(p->m * p->k), nb = (size_t)(p->k * p->n), nc = (size_t)(p->m * p->n);
	if (!(c->a = c->dev.ops->alloc(&c->dev, na * es)) ||
	    !(c->b = c->dev.ops->alloc(&c->dev, nb * es)) ||
	    !(c->c = c->dev.ops->alloc(&c->dev, nc * sizeof(float))))
		return from_dev(st, c, BD_ENOMEM, "matmul operands");
	c->host_a = malloc(na * es);
	c->host_b = malloc(nb * es);
	if (!c->host_a || !c->host_b)
		return wl_set(st, WL_ERROR, "out of host memory for the inputs");
	struct rng r;
	rng_init(&r, p->seed);
	fill(c->host_a, p->dtype, (int64_t)na, &r);
	fill(c->host_b, p->dtype, (int64_t)nb, &r);
	if ((rc = c->dev.ops->upload(&c->dev, c->a, c->host_a, na * es)) ||
	    (rc = c->dev.ops->upload(&c->dev, c->b, c->host_b, nb * es)) ||
	    (rc = c->dev.ops->sync(&c->dev)))
		return from_dev(st, c, rc, "upload");
	return wl_set(st, WL_OK, "%s", "");
}

static int mm_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	struct matmul_cuda *c = state;
	if (phase != PHASE_FWD)
		return wl_set(st, WL_UNSUPPORTED, "a matmul has no %s phase", phase_name(phase));
	struct dev_gemm g = {.m = c->p.m, .n = c->p.n, .k = c->p.k, .ab_dtype = c->p.dtype,
			     .c_dtype = DTYPE_FLOAT32};
	int rc = c->dev.ops->gemm(&c->dev, &g, c->a, c->b, c->c);
	return rc ? from_dev(st, c, rc, "gemm") : WL_OK;
}

static int mm_validate(void *state, struct wl_status *st)
{
	struct matmul_cuda *c = state;
	const struct case_params *p = &c->p;
	int rc = mm_run(c, PHASE_FWD, st);
	if (rc != WL_OK)
		return rc;
	float *got = malloc((size_t)(p->m * p->n) * sizeof(float));
	if (!got)
		return wl_set(st, WL_ERROR, "out of host memory for validation");
	if ((rc = c->dev.ops->download(&c->dev, got, c->c, (size_t)(p->m * p->n) * sizeof(float)))) {
		free(got);
		return from_dev(st, c, rc, "download");
	}
	double tol = p->tf32 && p->dtype == DTYPE_FLOAT32 ? TOL_TF32 : TOL, worst = 0;
	int64_t wi = 0, wj = 0;
	struct rng r;
	rng_init(&r, p->seed + 1);
	for (int e = 0; e < VALIDATE_ENTRIES; e++) {
		int64_t i = (int64_t)(rng_next(&r) % (uint64_t)p->m);
		int64_t j = (int64_t)(rng_next(&r) % (uint64_t)p->n);
		double want = 0, mag = 0;
		for (int64_t kk = 0; kk < p->k; kk++) {
			double x = elem_get(c->host_a, p->dtype, i * p->k + kk) *
				   elem_get(c->host_b, p->dtype, kk * p->n + j);
			want += x;
			mag += fabs(x);
		}
		double g = got[i * p->n + j];
		double ratio = isnan(g) ? INFINITY : fabs(g - want) / (mag > 0 ? mag : 1);
		if (ratio > worst) {
			worst = ratio;
			wi = i;
			wj = j;
		}
	}
	free(got);
	st->max_diff = worst;
	st->tolerance = tol;
	if (!(worst <= tol))
		return wl_set(st, WL_ERROR, "C[%lld, %lld] differs from the float64 dot product by "
			      "%.3g of the sum of |terms| (tolerance %.3g)", (long long)wi,
			      (long long)wj, worst, tol);
	return wl_set(st, WL_OK, "%s", "");
}

static int mm_mark(void *state, int slot, struct wl_status *st)
{
	struct matmul_cuda *c = state;
	int rc = c->dev.ops->mark(&c->dev, slot);
	return rc ? from_dev(st, c, rc, "timer") : WL_OK;
}

static int mm_elapsed(void *state, enum bd_phase phase, int64_t *ns, struct wl_status *st)
{
	struct matmul_cuda *c = state;
	int rc = c->dev.ops->elapsed(&c->dev, 2 * (int)phase, 2 * (int)phase + 1, ns);
	return rc ? from_dev(st, c, rc, "timer") : WL_OK;
}

static int mm_drain(void *state, struct wl_status *st)
{
	struct matmul_cuda *c = state;
	int rc = c->dev.ops->sync(&c->dev);
	return rc ? from_dev(st, c, rc, "synchronize") : WL_OK;
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
	.impl = "cublaslt",
	.device = DEVICE_CUDA,
	.summary = "C = A B through cuBLASLt (float32, TF32 with tf32: true, or bfloat16 in)",
	.check = mm_check,
	.figures = mm_figures,
	.setup = mm_setup,
	.validate = mm_validate,
	.run = mm_run,
	.teardown = mm_teardown,
	.mark = mm_mark,
	.elapsed = mm_elapsed,
	.drain = mm_drain,
};
