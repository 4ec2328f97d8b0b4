/* kernels/ref/attention_check.c: attention outputs against the float64 reference (contracts in
 * attention_check.h). */
#include "attention_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mem.h"

struct attention_tol attention_tol_for(enum bd_dtype dtype)
{
	switch (dtype) {
	case DTYPE_FLOAT16:
		return (struct attention_tol){2e-3, 2e-3};
	case DTYPE_BFLOAT16:
		return (struct attention_tol){1.6e-2, 1.6e-2};
	default:
		return (struct attention_tol){2e-5, 1e-4};
	}
}

void attention_check_init(struct attention_check *c)
{
	c->ratio = -1;
	c->diff = c->bound = 0;
	c->where[0] = 0;
	c->stage = "forward output";
}

int64_t attention_sample_rows(int64_t S, int64_t *rows)
{
	int64_t n = 0;
	rows[n++] = 0;
	for (int64_t i = 1; i <= ATTENTION_SAMPLE_ROWS; i++)
		rows[n++] = i * (S - 1) / (ATTENTION_SAMPLE_ROWS + 1);
	rows[n++] = S - 1;
	return n;
}

int attention_check_is_full(const struct attention_dims *d, int backward)
{
	double cost = attention_ref_forward_cost(d);
	if (backward)
		cost += attention_ref_backward_cost(d);
	return cost <= ATTENTION_FULL_CHECK_MADDS;
}

/* n doubles from mem when given (counted in the case's memory), else from the C heap */
static double *work_alloc(struct mem_arena *mem, int64_t n)
{
	size_t bytes = (size_t)n * sizeof(double);
	return mem ? mem_alloc(mem, bytes) : malloc(bytes);
}

static void work_free(struct mem_arena *mem, double *p)
{
	if (mem)
		mem_free(mem, p);
	else
		free(p);
}

static void to_double(double *dst, const float *src, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = src[i];
}

static double max_abs(const double *x, int64_t n)
{
	double m = 0;
	for (int64_t i = 0; i < n; i++)
		m = fabs(x[i]) > m ? fabs(x[i]) : m;
	return m;
}

/* Compare nrows rows of ncols values: row r of x is at query position rows[r] (r when rows is
 * NULL); x and ref are packed (nrows, ncols). The absolute part of the bound scales with
 * max |ref|, or with zero_scale when ref is 0 everywhere (dQ and dK of a single key: rounding
 * noise around an exact 0 is no error), and with at least ATTENTION_GRAD_FLOOR·zero_scale (dQ
 * and dK of two keys, whose two terms cancel: see attention_check.h). */
static void check_rows(struct attention_check *c, const struct attention_tol *tol,
		       const char *stage, const char *tensor, const struct attention_dims *d,
		       int64_t head, const int64_t *rows, int64_t nrows, int64_t ncols,
		       const float *x, const double *ref, double zero_scale)
{
	double scale = max_abs(ref, nrows * ncols);
	if (scale == 0)
		scale = zero_scale;
	else if (scale < ATTENTION_GRAD_FLOOR * zero_scale)
		scale = ATTENTION_GRAD_FLOOR * zero_scale;
	for (int64_t r = 0; r < nrows; r++) {
		int64_t s = rows ? rows[r] : r;
		for (int64_t j = 0; j < ncols; j++) {
			double want = ref[r * ncols + j], got = x[r * ncols + j];
			double diff = fabs(got - want);
			double bound = tol->abs * scale + tol->rel * fabs(want);
			double ratio = bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0);
			if (isnan(got)) {
				diff = INFINITY;
				ratio = INFINITY;
			}
			if (ratio <= c->ratio)
				continue;
			c->ratio = ratio;
			c->diff = diff;
			c->bound = bound;
			c->stage = stage;
			if (ncols > 1)
				snprintf(c->where, sizeof(c->where), "%s[b=%lld, h=%lld, s=%lld, d=%lld]",
					 tensor, (long long)(head / d->heads),
					 (long long)(head % d->heads), (long long)s, (long long)j);
			else
				snprintf(c->where, sizeof(c->where), "%s[b=%lld, h=%lld, s=%lld]", tensor,
					 (long long)(head / d->heads), (long long)(head % d->heads),
					 (long long)s);
		}
	}
}

int attention_check_head(struct attention_check *c, const struct attention_dims *d,
			 const struct attention_tol *tol, int64_t head, const struct attention_head *x,
			 struct mem_arena *mem)
{
	int64_t S = d->seq_len, D = d->head_dim, n = S * D;
	/* q, k, v, d_o, then o, dq, dk, dv (S, D) each, then lse (S) */
	double *work = work_alloc(mem, 8 * n + S);
	if (!work)
		return BD_ENOMEM;
	double *q = work, *k = q + n, *v = k + n, *d_o = v + n;
	double *o = d_o + n, *dq = o + n, *dk = dq + n, *dv = dk + n, *lse = dv + n;
	to_double(q, x->q, n);
	to_double(k, x->k, n);
	to_double(v, x->v, n);
	int rc = attention_ref_forward_head(S, D, d->causal, q, k, v, NULL, S, o, lse);
	if (rc == 0) {
		check_rows(c, tol, "forward output", "O", d, head, NULL, S, D, x->o, o, 0);
		check_rows(c, tol, "forward log-sum-exp", "LSE", d, head, NULL, S, 1, x->lse, lse,
			   0);
	}
	if (rc == 0 && x->d_o) {
		to_double(d_o, x->d_o, n);
		rc = attention_ref_backward_head(S, D, d->causal, q, k, v, d_o, dq, dk, dv);
		if (rc == 0) {
			/* dQ and dK are sums of P·(dP − Delta) terms, dV of P·dO ones: dV's scale
			 * stands in for an identically zero dQ or dK, and a fraction of it for a
			 * nearly zero one */
			double dv_scale = max_abs(dv, n);
			check_rows(c, tol, "backward dQ", "dQ", d, head, NULL, S, D, x->dq, dq,
				   dv_scale);
			check_rows(c, tol, "backward dK", "dK", d, head, NULL, S, D, x->dk, dk,
				   dv_scale);
			check_rows(c, tol, "backward dV", "dV", d, head, NULL, S, D, x->dv, dv, 0);
		}
	}
	work_free(mem, work);
	return rc;
}

int attention_check_rows(struct attention_check *c, const struct attention_dims *d,
			 const struct attention_tol *tol, int64_t head, const int64_t *rows,
			 int64_t nrows, const float *q_rows, const float *k, const float *v,
			 const float *o_rows, const float *lse_rows, struct mem_arena *mem)
{
	int64_t S = d->seq_len, D = d->head_dim, n = S * D;
	/* k, v (S, D), the sampled q rows and o rows (nrows, D), lse (nrows) */
	double *work = work_alloc(mem, 2 * n + nrows * (2 * D + 1));
	if (!work)
		return BD_ENOMEM;
	double *dk = work, *dv = dk + n, *q = dv + n, *o = q + nrows * D, *lse = o + nrows * D;
	to_double(dk, k, n);
	to_double(dv, v, n);
	to_double(q, q_rows, nrows * D);
	int rc = attention_ref_forward_head(S, D, d->causal, q, dk, dv, rows, nrows, o, lse);
	if (rc == 0) {
		check_rows(c, tol, "forward output", "O", d, head, rows, nrows, D, o_rows, o, 0);
		check_rows(c, tol, "forward log-sum-exp", "LSE", d, head, rows, nrows, 1, lse_rows,
			   lse, 0);
	}
	work_free(mem, work);
	return rc;
}

int attention_case_check(const struct case_params *p, struct wl_status *st)
{
	if (p->pass == PASS_TRAIN_STEP)
		return wl_set(st, STATUS_UNSUPPORTED,
			      "attention has no optimizer step: train_step is an e2e pass; use "
			      "forward, backward or forward_backward");
	if (p->pass != PASS_FORWARD && p->pass != PASS_BACKWARD &&
	    p->pass != PASS_FORWARD_BACKWARD)
		return wl_set(st, STATUS_UNSUPPORTED, "unknown pass %d", (int)p->pass);
	if (p->batch_size <= 0 || p->heads <= 0 || p->seq_len <= 0 || p->head_dim <= 0)
		return wl_set(st, STATUS_UNSUPPORTED,
			      "batch_size, heads, seq_len and head_dim must be positive (got %lld, "
			      "%lld, %lld, %lld)", (long long)p->batch_size, (long long)p->heads,
			      (long long)p->seq_len, (long long)p->head_dim);
	if (p->tf32)
		return wl_set(st, STATUS_UNSUPPORTED, "tf32 is for the GEMMs of the e2e model and matmul; "
			      "the attention workloads compute float32 in float32 (set tf32: false)");
	return wl_set(st, STATUS_OK, "%s", "");
}

void attention_case_figures(const struct case_params *p, struct wl_figures *f)
{
	double bhsd = (double)p->batch_size * (double)p->heads * (double)p->seq_len *
		      (double)p->head_dim;
	double es = (double)dtype_size(p->dtype);
	double fwd = 4.0 * bhsd * (double)p->seq_len;    /* QK^T and PV: 2·2·S²·D per head */
	if (p->causal)
		fwd /= 2;
	unsigned phases = pass_phases(p->pass);
	memset(f, 0, sizeof(*f));
	if (phases & (1u << PHASE_FWD)) {
		f->flops[PHASE_FWD] = fwd;
		f->bytes[PHASE_FWD] = 4.0 * bhsd * es;
	}
	if (phases & (1u << PHASE_BWD)) {
		f->flops[PHASE_BWD] = 2.5 * fwd;
		f->bytes[PHASE_BWD] = 8.0 * bhsd * es;
	}
}

int attention_check_result(struct wl_status *st, const struct attention_check *c, const char *at)
{
	st->max_diff = c->diff;
	st->tolerance = c->bound;
	if (c->ratio > 1)
		return wl_set(st, STATUS_ERROR,
			      "%s differs from the float64 reference by %.3g (tolerance %.3g) at %s%s",
			      c->stage, c->diff, c->bound, c->where, at);
	return wl_set(st, STATUS_OK, "%s", "");
}
