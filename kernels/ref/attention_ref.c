/* kernels/ref/attention_ref.c: float64 reference attention (definitions in attention_ref.h).
 * Deliberately naive: one query row at a time, every sum in double, nothing tiled or reused. */
#include "attention_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static double dot(const double *x, const double *y, int64_t n)
{
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += x[i] * y[i];
	return s;
}

/* Softmax probabilities p[0..nkeys) of the query row q_row (head_dim) at position i: nkeys is
 * i + 1 when causal, else seq_len. Returns the row's log-sum-exp. */
static double row_probs(int64_t seq_len, int64_t head_dim, int causal, const double *q_row,
			const double *k, int64_t i, double *p, int64_t *nkeys)
{
	double scale = 1.0 / sqrt((double)head_dim);
	int64_t n = causal ? i + 1 : seq_len;
	double m = -INFINITY;
	for (int64_t j = 0; j < n; j++) {
		p[j] = scale * dot(q_row, k + j * head_dim, head_dim);
		if (p[j] > m)
			m = p[j];
	}
	double l = 0;
	for (int64_t j = 0; j < n; j++) {
		p[j] = exp(p[j] - m);
		l += p[j];
	}
	for (int64_t j = 0; j < n; j++)
		p[j] /= l;
	*nkeys = n;
	return m + log(l);
}

int attention_ref_forward_head(int64_t seq_len, int64_t head_dim, int causal, const double *q,
			       const double *k, const double *v, const int64_t *rows,
			       int64_t nrows, double *o, double *lse)
{
	double *p = malloc((size_t)seq_len * sizeof(*p));   /* (seq_len) one row of P */
	if (!p)
		return BD_ENOMEM;
	for (int64_t r = 0; r < nrows; r++) {
		int64_t i = rows ? rows[r] : r, nkeys;
		double row_lse =
			row_probs(seq_len, head_dim, causal, q + r * head_dim, k, i, p, &nkeys);
		if (lse)
			lse[r] = row_lse;
		if (!o)
			continue;
		for (int64_t c = 0; c < head_dim; c++) {
			double s = 0;
			for (int64_t j = 0; j < nkeys; j++)
				s += p[j] * v[j * head_dim + c];
			o[r * head_dim + c] = s;
		}
	}
	free(p);
	return 0;
}

int attention_ref_backward_head(int64_t seq_len, int64_t head_dim, int causal, const double *q,
				const double *k, const double *v, const double *d_o, double *dq,
				double *dk, double *dv)
{
	double scale = 1.0 / sqrt((double)head_dim);
	double *p = malloc((size_t)seq_len * sizeof(*p));      /* (seq_len) one row of P */
	double *o = malloc((size_t)head_dim * sizeof(*o));     /* (head_dim) one row of O */
	int rc = 0;
	if (!p || !o) {
		rc = BD_ENOMEM;
		goto done;
	}
	size_t bytes = (size_t)(seq_len * head_dim) * sizeof(double);
	memset(dq, 0, bytes);
	memset(dk, 0, bytes);
	memset(dv, 0, bytes);
	for (int64_t i = 0; i < seq_len; i++) {
		int64_t nkeys;
		row_probs(seq_len, head_dim, causal, q + i * head_dim, k, i, p, &nkeys);
		const double *dout = d_o + i * head_dim;
		for (int64_t c = 0; c < head_dim; c++) {
			o[c] = 0;
			for (int64_t j = 0; j < nkeys; j++)
				o[c] += p[j] * v[j * head_dim + c];
		}
		double delta = dot(dout, o, head_dim);
		for (int64_t j = 0; j < nkeys; j++) {
			double dp = dot(dout, v + j * head_dim, head_dim);
			double ds = p[j] * (dp - delta);
			for (int64_t c = 0; c < head_dim; c++) {
				dq[i * head_dim + c] += scale * ds * k[j * head_dim + c];
				dk[j * head_dim + c] += scale * ds * q[i * head_dim + c];
				dv[j * head_dim + c] += p[j] * dout[c];
			}
		}
	}
done:
	free(p);
	free(o);
	return rc;
}

int attention_ref_forward(const struct attention_dims *d, const double *q, const double *k,
			  const double *v, double *o, double *lse)
{
	int64_t S = d->seq_len, D = d->head_dim, heads = d->batch * d->heads;
	for (int64_t h = 0; h < heads; h++) {
		int rc = attention_ref_forward_head(S, D, d->causal, q + h * S * D, k + h * S * D,
						    v + h * S * D, NULL, S, o ? o + h * S * D : NULL,
						    lse ? lse + h * S : NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int attention_ref_backward(const struct attention_dims *d, const double *q, const double *k,
			   const double *v, const double *d_o, double *dq, double *dk, double *dv)
{
	int64_t S = d->seq_len, D = d->head_dim, heads = d->batch * d->heads;
	for (int64_t h = 0; h < heads; h++) {
		int64_t off = h * S * D;
		int rc = attention_ref_backward_head(S, D, d->causal, q + off, k + off, v + off,
						     d_o + off, dq + off, dk + off, dv + off);
		if (rc < 0)
			return rc;
	}
	return 0;
}

double attention_ref_forward_cost(const struct attention_dims *d)
{
	/* QK^T and PV: 2 S² D per head (halved when causal) */
	double c = 2.0 * (double)(d->batch * d->heads) * (double)d->seq_len * (double)d->seq_len *
		   (double)d->head_dim;
	return d->causal ? c / 2 : c;
}

double attention_ref_backward_cost(const struct attention_dims *d)
{
	/* recomputed forward (2), dP, dQ, dK, dV (4): 6 S² D per head */
	return 3.0 * attention_ref_forward_cost(d);
}
