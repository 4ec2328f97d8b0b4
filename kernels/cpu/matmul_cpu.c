/* kernels/cpu/matmul_cpu.c: workload "matmul"/"onednn" on the CPU: C(m, n) = A(m, k) B(k, n)
 * through oneDNN (dnnl_wrap.h), A and B float32 or bfloat16, C float32. It exists so that a
 * sweep measures the machine's matmul rate next to attention in the same run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_rule.h"
#include "dnnl_wrap.h"
#include "matmul_common.h"

struct matmul_case {
	struct case_params params;
	struct mem_arena *mem;
	struct onednn_gemm *gemm;
	void *a;         /* (m, k) float32 or bfloat16 (uint16_t) */
	void *b;         /* (k, n) likewise */
	float *c;        /* (m, n) float32 */
};

static int matmul_check(const struct case_params *p, struct wl_status *st)
{
	if (p->device != DEVICE_CPU)
		return wl_set(st, STATUS_UNSUPPORTED, "the onednn matmul runs on the cpu only");
	if (matmul_check_shape(p, "cpu onednn", st) != STATUS_OK)
		return st->code;
	struct bd_error err = {0};
	int rc = onednn_gemm_supported(p->dtype, &err);
	return rc ? wl_from_error(st, rc, NULL, &err) : STATUS_OK;
}

/* mem_alloc of n elements of size bytes for the named matrix; STATUS_OOM with the bytes. */
static void *alloc_matrix(struct mem_arena *mem, double n, size_t size, const char *name,
			  struct wl_status *st)
{
	double bytes = n * (double)size;
	void *p = bytes < 0x1p62 ? mem_alloc(mem, (size_t)bytes) : NULL;
	if (p)
		return p;
	double in_all = (double)mem->live + bytes;
	if (mem->limit > 0 && in_all > (double)mem->limit)
		wl_set(st, STATUS_OOM,
		       "matmul %s needs %.0f bytes (%.0f in all with the %lld already allocated), "
		       "over the memory limit of %lld bytes",
		       name, bytes, in_all, (long long)mem->live, (long long)mem->limit);
	else
		wl_set(st, STATUS_OOM, "matmul %s needs %.0f bytes: out of host memory", name, bytes);
	return NULL;
}

static int matmul_setup(const struct case_params *p, struct mem_arena *mem, void **state,
			struct wl_status *st)
{
	struct bd_error err = {0};
	struct matmul_case *c = mem_alloc(mem, sizeof(*c));
	*state = c;
	if (!c)
		return wl_set(st, STATUS_OOM, "cannot allocate %zu bytes of case state", sizeof(*c));
	c->params = *p;
	c->mem = mem;
	size_t es = dtype_size(p->dtype);
	double m = (double)p->m, n = (double)p->n, k = (double)p->k;
	if (!(c->a = alloc_matrix(mem, m * k, es, "A (m, k)", st)) ||
	    !(c->b = alloc_matrix(mem, k * n, es, "B (k, n)", st)) ||
	    !(c->c = alloc_matrix(mem, m * n, sizeof(float), "C (m, n)", st)))
		return st->code;
	struct onednn_gemm_desc d = {.m = p->m, .n = p->n, .k = p->k, .ab_dtype = p->dtype,
				     .c_dtype = DTYPE_FLOAT32};
	int rc = onednn_gemm_create(&c->gemm, &d, mem, &err);
	if (rc < 0)
		return wl_from_error(st, rc, NULL, &err);
	struct rng r;
	rng_init(&r, p->seed);
	matmul_fill(c->a, p->dtype, p->m * p->k, &r);
	matmul_fill(c->b, p->dtype, p->k * p->n, &r);
	return wl_set(st, STATUS_OK, "%s", "");
}

static int matmul_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	struct matmul_case *c = state;
	struct bd_error err = {0};
	if (phase != PHASE_FWD)
		return wl_set(st, STATUS_UNSUPPORTED, "a matmul has no %s phase", phase_name(phase));
	int rc = onednn_gemm_execute(c->gemm, c->a, c->b, c->c, &err);
	if (rc < 0)
		return wl_from_error(st, rc, NULL, &err);
	return STATUS_OK;
}

static int matmul_validate(void *state, struct wl_status *st)
{
	struct matmul_case *c = state;
	const struct case_params *p = &c->params;
	st->max_diff = -1;
	st->tolerance = 0;
	int rc = matmul_run(c, PHASE_FWD, st);
	if (rc != STATUS_OK)
		return rc;
	return matmul_check_entries(p, c->a, c->b, c->c, check_rule_for(p).atol, st);
}

static void matmul_teardown(void *state)
{
	struct matmul_case *c = state;
	if (!c)
		return;
	onednn_gemm_free(c->gemm);
	mem_free(c->mem, c->a);
	mem_free(c->mem, c->b);
	mem_free(c->mem, c->c);
	mem_free(c->mem, c);
}

const struct workload matmul_cpu_onednn = {
	.suite = "matmul",
	.device = DEVICE_CPU,
	.check = matmul_check,
	.figures = matmul_figures,
	.setup = matmul_setup,
	.validate = matmul_validate,
	.run = matmul_run,
	.teardown = matmul_teardown,
};
