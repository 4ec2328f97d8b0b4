/* kernels/ref/matmul_common.c: see matmul_common.h. */
#include "matmul_common.h"

#include <math.h>
#include <string.h>

#include "bf16.h"

static double elem_get(const void *x, enum bd_dtype t, int64_t i)
{
	if (t == DTYPE_BFLOAT16)
		return bf16_to_float(((const uint16_t *)x)[i]);
	return ((const float *)x)[i];
}

int matmul_check_shape(const struct case_params *p, struct wl_status *st)
{
	if (p->pass != PASS_FORWARD)
		return wl_set(st, STATUS_UNSUPPORTED, "a matmul has only a forward pass, not %s",
			      pass_name(p->pass));
	if (p->m <= 0 || p->n <= 0 || p->k <= 0)
		return wl_set(st, STATUS_UNSUPPORTED, "m, n and k must be positive (got %lld, %lld, %lld)",
			      (long long)p->m, (long long)p->n, (long long)p->k);
	return wl_set(st, STATUS_OK, "%s", "");
}

void matmul_figures(const struct case_params *p, struct wl_figures *f)
{
	double m = (double)p->m, n = (double)p->n, k = (double)p->k;
	memset(f, 0, sizeof(*f));
	f->flops[PHASE_FWD] = 2.0 * m * n * k;
	/* read A and B, write C (float32) */
	f->bytes[PHASE_FWD] = (m * k + k * n) * (double)dtype_size(p->dtype) +
			      m * n * sizeof(float);
}

void matmul_fill(void *x, enum bd_dtype t, int64_t n, struct rng *r)
{
	for (int64_t i = 0; i < n; i++) {
		float v = rng_uniform(r, -1.0f, 1.0f);
		if (t == DTYPE_BFLOAT16)
			((uint16_t *)x)[i] = bf16_from_float(v);
		else
			((float *)x)[i] = v;
	}
}

int matmul_check_entries(const struct case_params *p, const void *a, const void *b,
			 const float *c, double tol, struct wl_status *st)
{
	struct rng r;
	rng_init(&r, p->seed + 1);
	double worst = -1;
	int64_t wi = 0, wj = 0;
	st->max_diff = -1;
	st->tolerance = 0;
	for (int e = 0; e < MATMUL_VALIDATE_ENTRIES; e++) {
		int64_t i = (int64_t)(rng_next(&r) % (uint64_t)p->m);
		int64_t j = (int64_t)(rng_next(&r) % (uint64_t)p->n);
		double want = 0, mag = 0;
		for (int64_t kk = 0; kk < p->k; kk++) {
			double x = elem_get(a, p->dtype, i * p->k + kk) *
				   elem_get(b, p->dtype, kk * p->n + j);
			want += x;
			mag += fabs(x);
		}
		double got = c[i * p->n + j], diff = fabs(got - want), bound = tol * mag;
		double ratio = bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0);
		if (isnan(got))
			ratio = diff = INFINITY;
		if (ratio > worst) {
			worst = ratio;
			wi = i;
			wj = j;
			st->max_diff = diff;
			st->tolerance = bound;
		}
	}
	if (worst > 1)
		return wl_set(st, STATUS_ERROR,
			      "matmul output differs from the float64 reference by %.3g (tolerance "
			      "%.3g) at C[%lld, %lld]",
			      st->max_diff, st->tolerance, (long long)wi, (long long)wj);
	return wl_set(st, STATUS_OK, "%s", "");
}
