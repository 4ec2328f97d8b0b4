/* kernels/model/model_ref.c: the float64 reference of the transformer (model.h): plain loops, no
 * tiling, no threads, every intermediate kept. It is the yardstick for the device backends and is
 * itself checked against finite differences in tests/test_model.c. Meant for tiny shapes. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* y(n, out) = x(n, in) · W^T, W (out, in) */
static void mm_wt(const double *x, const double *w, double *y, int64_t n, int64_t in, int64_t out)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t o = 0; o < out; o++) {
			double s = 0;
			for (int64_t k = 0; k < in; k++)
				s += x[i * in + k] * w[o * in + k];
			y[i * out + o] = s;
		}
}

/* dx(n, in) += dy(n, out) · W; dW(out, in) += dy^T · x */
static void mm_wt_bwd(const double *x, const double *w, const double *dy, double *dx, double *dw,
		      int64_t n, int64_t in, int64_t out)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t o = 0; o < out; o++) {
			double g = dy[i * out + o];
			for (int64_t k = 0; k < in; k++) {
				dx[i * in + k] += g * w[o * in + k];
				if (dw)
					dw[o * in + k] += g * x[i * in + k];
			}
		}
}

static void rmsnorm(const double *x, const double *g, double *y, double *rstd, int64_t n,
		    int64_t d)
{
	for (int64_t i = 0; i < n; i++) {
		double ss = 0;
		for (int64_t j = 0; j < d; j++)
			ss += x[i * d + j] * x[i * d + j];
		rstd[i] = 1.0 / sqrt(ss / (double)d + (double)MODEL_NORM_EPS);
		for (int64_t j = 0; j < d; j++)
			y[i * d + j] = x[i * d + j] * rstd[i] * g[j];
	}
}

/* dx += ..., dg += ... */
static void rmsnorm_bwd(const double *x, const double *g, const double *rstd, const double *dy,
			double *dx, double *dg, int64_t n, int64_t d)
{
	for (int64_t i = 0; i < n; i++) {
		double r = rstd[i], dot = 0;
		for (int64_t j = 0; j < d; j++) {
			dot += dy[i * d + j] * g[j] * x[i * d + j];
			dg[j] += dy[i * d + j] * x[i * d + j] * r;
		}
		for (int64_t j = 0; j < d; j++)
			dx[i * d + j] += r * g[j] * dy[i * d + j] -
					 x[i * d + j] * r * r * r * dot / (double)d;
	}
}

/* Rotate interleaved pairs of each head of rows (n = b·t, width d) by sign · angle(pos). */
static void rope(double *x, int64_t ld, int64_t b, int64_t t, int64_t h, int64_t dh, double sign)
{
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t ti = 0; ti < t; ti++)
			for (int64_t hi = 0; hi < h; hi++)
				for (int64_t i = 0; i < dh / 2; i++) {
					double ang = (double)ti * pow(MODEL_ROPE_THETA,
								      -2.0 * (double)i / (double)dh);
					double c = cos(ang), s = sign * sin(ang);
					double *p = x + (bi * t + ti) * ld + hi * dh + 2 * i;
					double x0 = p[0], x1 = p[1];
					p[0] = x0 * c - x1 * s;
					p[1] = x0 * s + x1 * c;
				}
}

static double silu(double a) { return a / (1.0 + exp(-a)); }

void model_ref_loss_grad(const struct model_config *c, int64_t b, int64_t t,
			 const int32_t *tokens, const int32_t *targets, const double *params,
			 double *loss, double *grads)
{
	struct model_layout lay;
	model_layout(c, &lay);
	const int64_t d = c->d_model, f = c->d_ff, V = c->vocab_size, L = c->num_layers,
		      h = c->num_heads, dh = d / h, n = b * t;
	const double scale = 1.0 / sqrt((double)dh);
	/* per layer: x, h1, qkv (rotated), P (b, h, t, t), om, x_mid, h2, u, g; rstd1, rstd2 */
	const int64_t per = n * d * 5 + n * 3 * d + b * h * t * t + n * 2 * f + n * f + 2 * n;
	double *acts = calloc((size_t)(L * per + n * d * 2 + n * V + n), sizeof(double));
	double *x_final = acts + L * per, *hf = x_final + n * d, *logits = hf + n * d,
	       *rstd_f = logits + n * V;
#define ACT(l, field) (acts + (l) * per + (field))
	const int64_t o_x = 0, o_h1 = n * d, o_qkv = 2 * n * d, o_p = o_qkv + 3 * n * d,
		      o_om = o_p + b * h * t * t, o_xm = o_om + n * d, o_h2 = o_xm + n * d,
		      o_u = o_h2 + n * d, o_g = o_u + 2 * n * f, o_r1 = o_g + n * f, o_r2 = o_r1 + n;

	/* forward */
	for (int64_t i = 0; i < n; i++)
		memcpy(ACT(0, o_x) + i * d, params + lay.embedding + tokens[i] * d,
		       (size_t)d * sizeof(double));
	for (int64_t l = 0; l < L; l++) {
		const double *w = params + lay.layer0 + l * lay.layer_stride;
		double *x = ACT(l, o_x), *h1 = ACT(l, o_h1), *qkv = ACT(l, o_qkv), *P = ACT(l, o_p),
		       *om = ACT(l, o_om), *xm = ACT(l, o_xm), *h2 = ACT(l, o_h2), *u = ACT(l, o_u),
		       *g = ACT(l, o_g);
		double *x_out = l + 1 < L ? ACT(l + 1, o_x) : x_final;
		rmsnorm(x, w + lay.attn_norm, h1, ACT(l, o_r1), n, d);
		mm_wt(h1, w + lay.w_qkv, qkv, n, d, 3 * d);
		rope(qkv, 3 * d, b, t, h, dh, 1);
		rope(qkv + d, 3 * d, b, t, h, dh, 1);
		for (int64_t bi = 0; bi < b; bi++)
			for (int64_t hi = 0; hi < h; hi++)
				for (int64_t i = 0; i < t; i++) {
					double *p = P + ((bi * h + hi) * t + i) * t, mx = -INFINITY, sum = 0;
					const double *q = qkv + (bi * t + i) * 3 * d + hi * dh;
					for (int64_t j = 0; j <= i; j++) {
						const double *k = qkv + (bi * t + j) * 3 * d + d + hi * dh;
						double s = 0;
						for (int64_t e = 0; e < dh; e++)
							s += q[e] * k[e];
						p[j] = s * scale;
						mx = fmax(mx, p[j]);
					}
					for (int64_t j = 0; j <= i; j++)
						sum += (p[j] = exp(p[j] - mx));
					double *o = om + (bi * t + i) * d + hi * dh;
					for (int64_t j = 0; j <= i; j++) {
						p[j] /= sum;
						const double *v = qkv + (bi * t + j) * 3 * d + 2 * d + hi * dh;
						for (int64_t e = 0; e < dh; e++)
							o[e] += p[j] * v[e];
					}
				}
		mm_wt(om, w + lay.w_o, xm, n, d, d);
		for (int64_t i = 0; i < n * d; i++)
			xm[i] += x[i];
		rmsnorm(xm, w + lay.ffn_norm, h2, ACT(l, o_r2), n, d);
		mm_wt(h2, w + lay.w_13, u, n, d, 2 * f);
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < f; j++)
				g[i * f + j] = silu(u[i * 2 * f + j]) * u[i * 2 * f + f + j];
		mm_wt(g, w + lay.w_2, x_out, n, f, d);
		for (int64_t i = 0; i < n * d; i++)
			x_out[i] += xm[i];
	}
	rmsnorm(x_final, params + lay.final_norm, hf, rstd_f, n, d);
	mm_wt(hf, params + lay.lm_head, logits, n, d, V);
	double total = 0;
	for (int64_t i = 0; i < n; i++) {
		double *z = logits + i * V, mx = -INFINITY, sum = 0;
		for (int64_t j = 0; j < V; j++)
			mx = fmax(mx, z[j]);
		for (int64_t j = 0; j < V; j++)
			sum += exp(z[j] - mx);
		double lse = mx + log(sum);
		total += lse - z[targets[i]];
		/* keep the softmax in logits for the backward */
		for (int64_t j = 0; j < V; j++)
			z[j] = exp(z[j] - lse);
	}
	*loss = total / (double)n;
	if (!grads)
		goto done;

	/* backward; scratch holds dx (n, d), dnorm (n, d), dbig (n, max(3d, 2f, V)) for dlogits,
	 * du and dqkv, dsmall (n, max(f, d)) for dg and dom, dP (t) */
	memset(grads, 0, (size_t)lay.total * sizeof(double));
	int64_t wide = V > 3 * d ? V : 3 * d, narrow = f > d ? f : d;
	if (2 * f > wide)
		wide = 2 * f;
	double *dx = calloc((size_t)(2 * n * d + n * wide + n * narrow + t), sizeof(double));
	double *dnorm = dx + n * d, *dbig = dnorm + n * d, *dsmall = dbig + n * wide,
	       *dP = dsmall + n * narrow;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < V; j++)
			dbig[i * V + j] = (logits[i * V + j] - (j == targets[i])) / (double)n;
	mm_wt_bwd(hf, params + lay.lm_head, dbig, dnorm, grads + lay.lm_head, n, d, V);
	rmsnorm_bwd(x_final, params + lay.final_norm, rstd_f, dnorm, dx, grads + lay.final_norm, n, d);
	for (int64_t l = L - 1; l >= 0; l--) {
		const double *w = params + lay.layer0 + l * lay.layer_stride;
		double *gw = grads + lay.layer0 + l * lay.layer_stride;
		double *x = ACT(l, o_x), *h1 = ACT(l, o_h1), *qkv = ACT(l, o_qkv), *P = ACT(l, o_p),
		       *om = ACT(l, o_om), *xm = ACT(l, o_xm), *h2 = ACT(l, o_h2), *u = ACT(l, o_u),
		       *g = ACT(l, o_g);
		/* FFN: x_out = xm + W2 g; dx flows to xm unchanged */
		double *dg = dsmall, *du = dbig;
		memset(dg, 0, (size_t)(n * f) * sizeof(double));
		mm_wt_bwd(g, w + lay.w_2, dx, dg, gw + lay.w_2, n, f, d);
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < f; j++) {
				double a = u[i * 2 * f + j], cc = u[i * 2 * f + f + j];
				double s = 1.0 / (1.0 + exp(-a)), gg = dg[i * f + j];
				du[i * 2 * f + j] = gg * cc * (s + a * s * (1 - s));
				du[i * 2 * f + f + j] = gg * a * s;
			}
		memset(dnorm, 0, (size_t)(n * d) * sizeof(double));
		mm_wt_bwd(h2, w + lay.w_13, du, dnorm, gw + lay.w_13, n, d, 2 * f);
		rmsnorm_bwd(xm, w + lay.ffn_norm, ACT(l, o_r2), dnorm, dx, gw + lay.ffn_norm, n, d);
		/* attention: xm = x + Wo om */
		double *dom = dsmall, *dqkv = dbig;
		memset(dom, 0, (size_t)(n * d) * sizeof(double));
		mm_wt_bwd(om, w + lay.w_o, dx, dom, gw + lay.w_o, n, d, d);
		memset(dqkv, 0, (size_t)(n * 3 * d) * sizeof(double));
		for (int64_t bi = 0; bi < b; bi++)
			for (int64_t hi = 0; hi < h; hi++)
				for (int64_t i = 0; i < t; i++) {
					const double *p = P + ((bi * h + hi) * t + i) * t;
					const double *dout = dom + (bi * t + i) * d + hi * dh;
					const double *q = qkv + (bi * t + i) * 3 * d + hi * dh;
					double *dq = dqkv + (bi * t + i) * 3 * d + hi * dh, dot = 0;
					for (int64_t j = 0; j <= i; j++) {
						const double *v = qkv + (bi * t + j) * 3 * d + 2 * d + hi * dh;
						double *dvv = dqkv + (bi * t + j) * 3 * d + 2 * d + hi * dh;
						double s = 0;
						for (int64_t e = 0; e < dh; e++) {
							s += dout[e] * v[e];
							dvv[e] += p[j] * dout[e];
						}
						dP[j] = s;
						dot += p[j] * s;
					}
					for (int64_t j = 0; j <= i; j++) {
						double ds = p[j] * (dP[j] - dot) * scale;
						const double *k = qkv + (bi * t + j) * 3 * d + d + hi * dh;
						double *dk = dqkv + (bi * t + j) * 3 * d + d + hi * dh;
						for (int64_t e = 0; e < dh; e++) {
							dq[e] += ds * k[e];
							dk[e] += ds * q[e];
						}
					}
				}
		rope(dqkv, 3 * d, b, t, h, dh, -1);
		rope(dqkv + d, 3 * d, b, t, h, dh, -1);
		memset(dnorm, 0, (size_t)(n * d) * sizeof(double));
		mm_wt_bwd(h1, w + lay.w_qkv, dqkv, dnorm, gw + lay.w_qkv, n, d, 3 * d);
		rmsnorm_bwd(x, w + lay.attn_norm, ACT(l, o_r1), dnorm, dx, gw + lay.attn_norm, n, d);
	}
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < d; j++)
			grads[lay.embedding + tokens[i] * d + j] += dx[i * d + j];
	free(dx);
done:
	free(acts);
#undef ACT
}
