/* kernels/workloads/matmul.c: the matmul workload (suite "matmul") on every device: C(m, n) =
 * A(m, k) B(k, n) through the device's GEMM (ops.h: oneDNN on the cpu, impl "onednn"; cuBLASLt
 * on cuda, impl "cublaslt"), A and B float32 (true float32, or TF32 with tf32: true where the
 * device has it) or bfloat16, C float32, accumulation float32. It exists so that a sweep measures
 * the machine's GEMM rate next to attention and the models in the same run (model FLOP
 * utilisation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_rule.h"
#include "dev_workload.h"
#include "matmul_common.h"

struct mm_case {
	struct wl_case c;       /* first: the case as the shared hooks take it */
	void *a, *b;            /* (m, k), (k, n) in the dtype, on the device */
	float *out;             /* C (m, n) */
};

static int mm_check(const struct case_params *p, struct wl_status *st)
{
	int code = wl_check_dtype(p, st);
	if (code == STATUS_OK)
		code = matmul_check_shape(p, st);
	if (code == STATUS_OK)
		code = wl_check_device(p, st);
	if (code == STATUS_OK)
		code = wl_check_gemm(p, st);
	return code;
}

static int mm_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		    struct wl_status *st)
{
	int rc = wl_case_open(sizeof(struct mm_case), p, mem, state, st);
	if (rc)
		return rc;
	struct mm_case *c = *state;
	struct dev *dev = &c->c.dev;
	size_t es = dtype_size(p->dtype);
	size_t na = (size_t)(p->m * p->k), nb = (size_t)(p->k * p->n), nc = (size_t)(p->m * p->n);
	void *host_a = NULL, *host_b = NULL;
	if (!(c->a = wl_dev_alloc(dev, na * es, "matmul A (m, k)")) ||
	    !(c->b = wl_dev_alloc(dev, nb * es, "matmul B (k, n)")) ||
	    !(c->out = wl_dev_alloc(dev, nc * sizeof(float), "matmul C (m, n)")))
		return wl_from_dev(st, dev, BD_ENOMEM, NULL);
	host_a = malloc(na * es);
	host_b = malloc(nb * es);
	if (!host_a || !host_b) {
		rc = wl_set(st, STATUS_ERROR, "out of host memory for the inputs");
		goto done;
	}
	struct rng r;
	rng_init(&r, p->seed);
	matmul_fill(host_a, p->dtype, (int64_t)na, &r);
	matmul_fill(host_b, p->dtype, (int64_t)nb, &r);
	if ((rc = dev->ops->upload(dev, c->a, host_a, na * es)) ||
	    (rc = dev->ops->upload(dev, c->b, host_b, nb * es)) || (rc = dev->ops->sync(dev))) {
		rc = wl_from_dev(st, dev, rc, "upload");
		goto done;
	}
	rc = wl_set(st, STATUS_OK, "%s", "");
done:
	free(host_a);
	free(host_b);
	return rc;
}

static int mm_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	struct mm_case *c = state;
	const struct case_params *p = &c->c.p;
	if (phase != PHASE_FWD)
		return wl_set(st, STATUS_UNSUPPORTED, "a matmul has no %s phase", phase_name(phase));
	struct dev_gemm g = {.m = p->m, .n = p->n, .k = p->k, .ab_dtype = p->dtype,
			     .c_dtype = DTYPE_FLOAT32};
	int rc = c->c.dev.ops->gemm(&c->c.dev, &g, c->a, c->b, c->out);
	return rc ? wl_from_dev(st, &c->c.dev, rc, "gemm") : STATUS_OK;
}

/* One product, then MATMUL_VALIDATE_ENTRIES entries of C against the float64 reference, from
 * host copies of A, B and C read back from the device. */
static int mm_validate(void *state, struct wl_status *st)
{
	struct mm_case *c = state;
	struct dev *dev = &c->c.dev;
	const struct case_params *p = &c->c.p;
	st->max_diff = -1;
	st->tolerance = 0;
	int rc = mm_run(c, PHASE_FWD, st);
	if (rc != STATUS_OK)
		return rc;
	size_t es = dtype_size(p->dtype);
	size_t na = (size_t)(p->m * p->k), nb = (size_t)(p->k * p->n), nc = (size_t)(p->m * p->n);
	void *a = malloc(na * es), *b = malloc(nb * es);
	float *got = malloc(nc * sizeof(float));
	if (!a || !b || !got) {
		rc = wl_set(st, STATUS_ERROR, "out of host memory for validation");
		goto done;
	}
	if ((rc = dev->ops->download(dev, a, c->a, na * es)) ||
	    (rc = dev->ops->download(dev, b, c->b, nb * es)) ||
	    (rc = dev->ops->download(dev, got, c->out, nc * sizeof(float)))) {
		rc = wl_from_dev(st, dev, rc, "download");
		goto done;
	}
	/* bound per entry: atol · Σ_k |a_ik·b_kj| (check_rule.h, matmul_common.h) */
	rc = matmul_check_entries(p, a, b, got, check_rule_for(p).atol, st);
done:
	free(a);
	free(b);
	free(got);
	return rc;
}

static void mm_teardown(void *state)
{
	struct mm_case *c = state;
	if (c && c->c.dev_open) {
		c->c.dev.ops->free(&c->c.dev, c->a);
		c->c.dev.ops->free(&c->c.dev, c->b);
		c->c.dev.ops->free(&c->c.dev, c->out);
	}
	wl_case_close(state);
}

const struct workload matmul_workload = {
	.suite = "matmul",
	.check = mm_check,
	.figures = matmul_figures,
	.setup = mm_setup,
	.validate = mm_validate,
	.run = mm_run,
	.teardown = mm_teardown,
	.describe = wl_case_describe,
	.mark = wl_case_mark,
	.elapsed = wl_case_elapsed,
	.drain = wl_case_drain,
};
