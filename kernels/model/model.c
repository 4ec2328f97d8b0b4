/* kernels/model/model.c: the transformer over the device-ops interface (see model.h).
 *
 * Every buffer is allocated in model_create; the phases only call ops. Shapes below use
 * n = batch·ctx token rows, d = d_model, f = d_ff, V = vocab, h heads of dh = d/h.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_cpu.h"   /* cpu_rope_table: the RoPE table is computed on the host */
#include "rng.h"

const struct adamw_params model_adamw = {
	.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.01f};

/* What the forward keeps of one layer for the backward. */
struct layer_acts {
	float *x;        /* (n, d) f32: the layer's input (residual stream) */
	float *rstd1;    /* (n) */
	void *h1;        /* (n, d) act: attn_norm(x) */
	float *q, *k, *v;/* (b, h, t, dh) f32, q and k rotated */
	float *o;        /* (b, h, t, dh) f32 */
	float *lse;      /* (b, h, t) */
	void *om;        /* (n, d) act: o with heads merged */
	float *x_mid;    /* (n, d) f32: x + attention */
	float *rstd2;    /* (n) */
	void *h2;        /* (n, d) act: ffn_norm(x_mid) */
	void *u;         /* (n, 2f) act: [W1 h2 | W3 h2] */
	void *g;         /* (n, f) act: silu(W1 h2) ⊙ W3 h2 */
	void *att;       /* the backend's attention state */
};

struct model {
	struct dev *dev;
	struct model_shape s;
	struct model_layout lay;
	int64_t n, d, f, V, L, h, dh;
	size_t act_size;          /* bytes per act element: 4 or 2 */
	enum bd_dtype act;

	float *params;            /* (P) f32 master weights */
	uint16_t *params_bf16;    /* (P) bf16 shadow, NULL for float32 */
	float *grads;             /* (P), NULL in MODEL_INFER */
	float *adam_m, *adam_v;   /* (P), MODEL_TRAIN only */
	int64_t step;             /* AdamW steps taken */

	int32_t *tokens, *targets;/* (n) */
	float *rope;              /* (t, dh/2, 2) */
	struct layer_acts *layers;/* L entries; MODEL_INFER: all share entry 0's buffers */
	float *x_final;           /* (n, d) f32: the last layer's output (inference: ping-pong) */
	float *x_last;            /* the last forward's final residual: x_final or layers[0].x */
	float *rstd_f;            /* (n) */
	void *hf;                 /* (n, d) act */
	float *logits;            /* (n, V) f32 */
	float *lse_ce;            /* (n) */
	float *loss;              /* (1) */

	/* backward scratch, shared by the layers */
	float *dx;                /* (n, d) f32: gradient of the residual stream */
	void *dx_act;             /* (n, d) act; aliases dx for float32 */
	void *dlogits;            /* (n, V) act; aliases logits for float32 */
	float *dnorm;             /* (n, d) f32: gradient of a norm's output */
	void *dg;                 /* (n, f) act */
	void *du;                 /* (n, 2f) act */
	void *dom;                /* (n, d) act */
	float *d_o, *dq, *dk, *dv;/* (b, h, t, dh) f32 */
	void *qkv;                /* (n, 3d) act: the QKV projection (forward), its gradient
				   * (backward); only the split heads are kept per layer. Once the
				   * heads are split, the forward's O and W2 projections (n, d) f32
				   * pass through it on their way to residual_rmsnorm_fwd */

	struct model_memory mem;
	int64_t *account;         /* the counter model_create's allocations go to */
	const char *what;         /* what model_create is allocating now, for messages */
	const char *refused;      /* the first allocation refused (then the rest is only counted) */
	int broken;               /* that refusal was a device error, not a lack of memory */
	int64_t live_before;      /* the arena's bytes in use when model_create began (another
				   * model's: the e2e case's beside its validation model) */
};

/* ---- layout, init, figures ---------------------------------------------------------------- */

void model_layout(const struct model_config *c, struct model_layout *lay)
{
	int64_t d = c->d_model, f = c->d_ff, V = c->vocab_size;
	lay->embedding = 0;
	lay->layer0 = V * d;
	lay->attn_norm = 0;
	lay->w_qkv = d;
	lay->w_o = lay->w_qkv + 3 * d * d;
	lay->ffn_norm = lay->w_o + d * d;
	lay->w_13 = lay->ffn_norm + d;
	lay->w_2 = lay->w_13 + 2 * f * d;
	lay->layer_stride = lay->w_2 + d * f;
	lay->final_norm = lay->layer0 + c->num_layers * lay->layer_stride;
	lay->lm_head = lay->final_norm + d;
	lay->total = lay->lm_head + V * d;
}

int model_tensors(const struct model_config *c, struct model_tensor *out, int max)
{
	struct model_layout lay;
	model_layout(c, &lay);
	int64_t d = c->d_model, f = c->d_ff, V = c->vocab_size;
	int nt = 0;
#define TENSOR(off, len, ...)                                                              \
	do {                                                                               \
		if (nt < max) {                                                            \
			snprintf(out[nt].name, sizeof(out[nt].name), __VA_ARGS__);         \
			out[nt].offset = (off);                                            \
			out[nt].count = (len);                                             \
		}                                                                          \
		nt++;                                                                      \
	} while (0)
	TENSOR(lay.embedding, V * d, "embedding");
	for (int64_t l = 0; l < c->num_layers; l++) {
		int64_t w = lay.layer0 + l * lay.layer_stride;
		TENSOR(w + lay.attn_norm, d, "layer%lld.attn_norm", (long long)l);
		TENSOR(w + lay.w_qkv, d * d, "layer%lld.w_q", (long long)l);
		TENSOR(w + lay.w_qkv + d * d, d * d, "layer%lld.w_k", (long long)l);
		TENSOR(w + lay.w_qkv + 2 * d * d, d * d, "layer%lld.w_v", (long long)l);
		TENSOR(w + lay.w_o, d * d, "layer%lld.w_o", (long long)l);
		TENSOR(w + lay.ffn_norm, d, "layer%lld.ffn_norm", (long long)l);
		TENSOR(w + lay.w_13, f * d, "layer%lld.w_1", (long long)l);
		TENSOR(w + lay.w_13 + f * d, f * d, "layer%lld.w_3", (long long)l);
		TENSOR(w + lay.w_2, d * f, "layer%lld.w_2", (long long)l);
	}
	TENSOR(lay.final_norm, d, "final_norm");
	TENSOR(lay.lm_head, V * d, "lm_head");
#undef TENSOR
	return nt;
}

/* *worst = x where x is larger, NaN or infinite (then infinity): a NaN is never passed over */
static void keep_worst(double *worst, double x)
{
	if (!(x <= *worst))
		*worst = isfinite(x) ? x : INFINITY;
}

double model_grad_error(const struct model_config *c, const float *g, const double *ref,
			char *worst, size_t size)
{
	int nt = model_tensors(c, NULL, 0);
	struct model_tensor *t = malloc((size_t)nt * sizeof(*t));
	if (!t) {
		if (worst && size)
			snprintf(worst, size, "(out of host memory)");
		return INFINITY;
	}
	model_tensors(c, t, nt);
	double w = 0;
	for (int i = 0; i < nt; i++) {
		double e = 0, s = 0;
		for (int64_t j = t[i].offset; j < t[i].offset + t[i].count; j++) {
			keep_worst(&e, fabs((double)g[j] - ref[j]));
			s = fmax(s, fabs(ref[j]));
		}
		double rel = e / (s > 0 ? s : 1);
		if (rel >= w) {
			w = rel;
			if (worst && size)
				snprintf(worst, size, "%.47s", t[i].name);
		}
	}
	free(t);
	return w;
}

double model_adamw_first_step_error(const float *p0, const float *g, const float *p1,
				    int64_t count)
{
	const struct adamw_params *hp = &model_adamw;
	double worst = 0;
	for (int64_t i = 0; i < count; i++) {
		double p = (double)p0[i] * (1 - (double)hp->lr * hp->weight_decay);
		double m1 = (1 - (double)hp->beta1) * g[i], v1 = (1 - (double)hp->beta2) * g[i] * g[i];
		double upd = (double)hp->lr / (1 - hp->beta1) * m1 /
			     (sqrt(v1) / sqrt(1 - (double)hp->beta2) + hp->eps);
		keep_worst(&worst, fabs((p - upd) - p1[i]));
	}
	return worst;
}

double model_adamw_second_step_error(const float *p1, const float *g1, const float *g2,
				     const float *p2, int64_t count)
{
	const struct adamw_params *hp = &model_adamw;
	double b1 = hp->beta1, b2 = hp->beta2;
	double bc1 = 1 - b1 * b1, bc2 = 1 - b2 * b2, worst = 0;
	for (int64_t i = 0; i < count; i++) {
		double p = (double)p1[i] * (1 - (double)hp->lr * hp->weight_decay);
		double m2 = b1 * (1 - b1) * g1[i] + (1 - b1) * g2[i];
		double v2 = b2 * (1 - b2) * g1[i] * g1[i] + (1 - b2) * g2[i] * g2[i];
		double upd = (double)hp->lr / bc1 * m2 / (sqrt(v2) / sqrt(bc2) + hp->eps);
		keep_worst(&worst, fabs((p - upd) - p2[i]));
	}
	return worst;
}

void model_init_params(const struct model_config *c, uint64_t seed, float *params)
{
	struct model_layout lay;
	model_layout(c, &lay);
	struct rng r;
	rng_init(&r, seed ^ 0x6d6f64656cull);
	/* uniform on [-a, a] has standard deviation a/sqrt(3) */
	float a = (float)(MODEL_INIT_STD * sqrt(3.0));
	rng_fill(&r, params, (size_t)lay.total, -a, a);
	int64_t d = c->d_model;
	for (int64_t l = 0; l < c->num_layers; l++) {
		float *layer = params + lay.layer0 + l * lay.layer_stride;
		for (int64_t i = 0; i < d; i++)
			layer[lay.attn_norm + i] = layer[lay.ffn_norm + i] = 1.0f;
	}
	for (int64_t i = 0; i < d; i++)
		params[lay.final_norm + i] = 1.0f;
}

void model_init_tokens(const struct model_config *c, int64_t n, uint64_t seed, int32_t *tokens,
		       int32_t *targets)
{
	struct rng r;
	rng_init(&r, seed ^ 0x746f6b656eull);
	uint64_t V = (uint64_t)c->vocab_size;
	for (int64_t i = 0; i < n; i++) {
		tokens[i] = (int32_t)(rng_next(&r) % V);
		targets[i] = (int32_t)(rng_next(&r) % V);
	}
}

static double gemm_flops(const struct model_config *c, int64_t n)
{
	double d = (double)c->d_model, f = (double)c->d_ff;
	return 2.0 * (double)n * ((double)c->num_layers * (4 * d * d + 3 * d * f) +
				  (double)c->vocab_size * d);
}

/* causal attention: 4·b·h·t²·dh halved = 2·b·t²·d per layer */
static double attention_flops(const struct model_config *c, int64_t b, int64_t t)
{
	return 2.0 * (double)b * (double)t * (double)t * (double)c->d_model * (double)c->num_layers;
}

double model_flops_fwd(const struct model_config *c, int64_t batch, int64_t ctx)
{
	return gemm_flops(c, batch * ctx) + attention_flops(c, batch, ctx);
}

double model_flops_bwd(const struct model_config *c, int64_t batch, int64_t ctx)
{
	return 2 * gemm_flops(c, batch * ctx) + 2.5 * attention_flops(c, batch, ctx);
}

int model_check(const struct model_shape *s, struct bd_error *err)
{
	const struct model_config *c = &s->cfg;
	if (s->dtype != DTYPE_FLOAT32 && s->dtype != DTYPE_BFLOAT16)
		return bd_fail(err, BD_EINVAL, "the model runs in float32 or bfloat16 mixed precision, "
			       "not %s", dtype_name(s->dtype));
	if (c->d_model <= 0 || c->num_heads <= 0 || c->d_model % c->num_heads)
		return bd_fail(err, BD_EINVAL, "num_heads %lld does not divide d_model %lld",
			       (long long)c->num_heads, (long long)c->d_model);
	if ((c->d_model / c->num_heads) % 2)
		return bd_fail(err, BD_EINVAL, "head_dim %lld is odd; RoPE rotates pairs",
			       (long long)(c->d_model / c->num_heads));
	if (c->vocab_size <= 0 || c->vocab_size > INT32_MAX || c->d_ff <= 0 || c->num_layers <= 0 ||
	    s->batch <= 0 || s->ctx <= 0)
		return bd_fail(err, BD_EINVAL, "model sizes must be positive (and vocab below 2^31)");
	return 0;
}

/* ---- create / free ------------------------------------------------------------------------ */

/* Allocate bytes on the device, counted in m->account. Once one allocation has been refused,
 * nothing more is allocated but every size is still counted, so that an oom can say what the
 * whole model needs. NULL when refused; model_create checks m->refused at the end. */
static void *take(struct model *m, size_t bytes)
{
	*m->account += (int64_t)bytes;
	if (m->refused)
		return NULL;
	void *p = m->dev->ops->alloc(m->dev, bytes);
	if (!p) {
		m->refused = m->what;
		m->broken = m->dev->err.code != BD_ENOMEM;
	}
	return p;
}

#define TAKE(ptr, count, elem) ((ptr) = take(m, (size_t)(count) * (elem)))

static void alloc_layer(struct model *m, struct layer_acts *a, int with_x)
{
	size_t f32 = sizeof(float), act = m->act_size;
	int64_t n = m->n, d = m->d, f = m->f, bh = m->s.batch * m->h;
	if (with_x)
		TAKE(a->x, n * d, f32);
	TAKE(a->rstd1, n, f32);
	TAKE(a->h1, n * d, act);
	TAKE(a->q, n * d, f32);
	TAKE(a->k, n * d, f32);
	TAKE(a->v, n * d, f32);
	TAKE(a->o, n * d, f32);
	TAKE(a->lse, bh * m->s.ctx, f32);
	TAKE(a->om, n * d, act);
	TAKE(a->x_mid, n * d, f32);
	TAKE(a->rstd2, n, f32);
	TAKE(a->h2, n * d, act);
	TAKE(a->u, n * 2 * f, act);
	TAKE(a->g, n * f, act);
}

static void free_layer(struct model *m, struct layer_acts *a, int with_x)
{
	struct dev *dev = m->dev;
	void *bufs[] = {a->rstd1, a->h1, a->q, a->k, a->v, a->o, a->lse, a->om, a->x_mid,
			a->rstd2, a->h2, a->u, a->g};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		dev->ops->free(dev, bufs[i]);
	if (with_x)
		dev->ops->free(dev, a->x);
	if (a->att)
		dev->ops->attention_free(dev, a->att);
}

#define GIB(x) ((double)(x) / (1024.0 * 1024 * 1024))

/* The oom message: what was refused, and what the whole model needs, with what the arena held
 * before the model (the case's own model, for its validation model): that sum is also stored as
 * the arena's failed_need, which the runner records as the case's peak, and is what a limit
 * must at least give. */
static int fail_oom(struct model *m)
{
	struct mem_arena *mem = m->dev->mem;
	const struct model_memory *mm = &m->mem;
	int64_t total = mm->params + mm->grads + mm->optim + mm->activations + mm->workspace;
	int64_t need = m->live_before + total;
	/* the limit refused, or the device itself (whose message the backend left in err) */
	int by_limit = mem->limit > 0 && mem->failed_need > mem->limit;
	char device_said[sizeof(m->dev->err.msg)];
	snprintf(device_said, sizeof(device_said), "%s", m->dev->err.msg);
	if (need > mem->failed_need)
		mem->failed_need = need;
	char others[128] = "";
	if (m->live_before > 0)
		snprintf(others, sizeof(others), "; %lld in all with the %lld already allocated",
			 (long long)need, (long long)m->live_before);
	char where[256];
	if (by_limit)
		snprintf(where, sizeof(where), "over the memory limit of %lld bytes (%.2f GiB)",
			 (long long)mem->limit, GIB(mem->limit));
	else
		snprintf(where, sizeof(where), "more than the %s would give",
			 m->dev->backend->host_memory ? "host" : "GPU");
	return bd_fail(&m->dev->err, BD_ENOMEM,
		       "needs %lld bytes (%.2f GiB: parameters %.2f, gradients %.2f, AdamW state %.2f, "
		       "activations %.2f, scratch %.2f; attention workspace not counted%s), %s; the %s "
		       "did not fit%s%.400s", (long long)total, GIB(total), GIB(mm->params),
		       GIB(mm->grads), GIB(mm->optim), GIB(mm->activations), GIB(mm->workspace),
		       others, where, m->refused, by_limit || !device_said[0] ? "" : ": ",
		       by_limit ? "" : device_said);
}

/* m's sizes from s. */
static void model_dims(struct model *m, const struct model_shape *s)
{
	m->s = *s;
	model_layout(&s->cfg, &m->lay);
	m->d = s->cfg.d_model;
	m->f = s->cfg.d_ff;
	m->V = s->cfg.vocab_size;
	m->L = s->cfg.num_layers;
	m->h = s->cfg.num_heads;
	m->dh = m->d / m->h;
	m->n = s->batch * s->ctx;
	m->act = s->dtype;
	m->act_size = s->dtype == DTYPE_BFLOAT16 ? 2 : 4;
}

/* Take the parameters, gradients, AdamW state and activations (m->layers has L entries), each
 * counted under what it holds; the attention workspaces are the backend's (model_create). */
static void take_state(struct model *m)
{
	const struct model_shape *s = &m->s;
	int64_t P = m->lay.total, n = m->n, d = m->d, V = m->V;
	const size_t f32 = sizeof(float), act = m->act_size;
	int train = s->mode != MODEL_INFER;

	m->what = "parameters";
	m->account = &m->mem.params;
	TAKE(m->params, P, f32);
	if (m->act == DTYPE_BFLOAT16)
		TAKE(m->params_bf16, P, sizeof(uint16_t));
	if (train) {
		m->what = "gradients";
		m->account = &m->mem.grads;
		TAKE(m->grads, P, f32);
	}
	if (s->mode == MODEL_TRAIN) {
		m->what = "AdamW state";
		m->account = &m->mem.optim;
		TAKE(m->adam_m, P, f32);
		TAKE(m->adam_v, P, f32);
	}

	m->what = "activations";
	m->account = &m->mem.activations;
	/* MODEL_INFER: one set of layer buffers; the residual stream ping-pongs between two */
	for (int64_t l = 0; l < (train ? m->L : 1); l++)
		alloc_layer(m, &m->layers[l], 1);
	TAKE(m->x_final, n * d, f32);
	if (!train)
		for (int64_t l = 1; l < m->L; l++)
			m->layers[l] = m->layers[0];
	TAKE(m->rstd_f, n, f32);
	TAKE(m->hf, n * d, act);
	TAKE(m->logits, n * V, f32);
	TAKE(m->lse_ce, n, f32);
	TAKE(m->loss, 1, f32);
}

/* Take the scratch the layers share: tokens, RoPE table, the QKV buffer, backward gradients. */
static void take_scratch(struct model *m)
{
	int64_t n = m->n, d = m->d, f = m->f, V = m->V;
	const size_t f32 = sizeof(float), act = m->act_size;
	m->what = "scratch";
	m->account = &m->mem.workspace;
	TAKE(m->tokens, n, sizeof(int32_t));
	TAKE(m->targets, n, sizeof(int32_t));
	TAKE(m->rope, m->s.ctx * m->dh, f32);
	TAKE(m->qkv, n * 3 * d, act);
	if (m->s.mode != MODEL_INFER) {
		TAKE(m->dx, n * d, f32);
		if (m->act == DTYPE_BFLOAT16) {
			TAKE(m->dx_act, n * d, act);
			TAKE(m->dlogits, n * V, act);
		} else {
			m->dx_act = m->dx;
			m->dlogits = m->logits;
		}
		TAKE(m->dnorm, n * d, f32);
		TAKE(m->dg, n * f, act);
		TAKE(m->du, n * 2 * f, act);
		TAKE(m->dom, n * d, act);
		TAKE(m->d_o, n * d, f32);
		TAKE(m->dq, n * d, f32);
		TAKE(m->dk, n * d, f32);
		TAKE(m->dv, n * d, f32);
	}
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* The least the naive attention's workspace holds on every backend: each attention instance
 * (one per layer with a backward, one shared by the layers without) keeps its P (b, h, t, t) in
 * the compute dtype, and a backward or a 16-bit compute adds one float32 (b, h, t, t) of scores
 * or dP (the CPU keeps one per instance, CUDA one shared). The score matrices are O(t²) and
 * dominate a naive model's memory at long contexts; other workspaces (flash's tiles, cuDNN's)
 * are O(t) and the backend's, and are not counted. Saturates at INT64_MAX. */
static int64_t naive_scores_bytes(const struct model_shape *s)
{
	if (strcmp(s->attention, "naive"))
		return 0;
	int train = s->mode != MODEL_INFER;
	int64_t scores, p, extra = 0, n = train ? s->cfg.num_layers : 1;
	if (__builtin_mul_overflow(s->batch, s->cfg.num_heads, &scores) ||
	    __builtin_mul_overflow(scores, s->ctx, &scores) ||
	    __builtin_mul_overflow(scores, s->ctx, &scores) ||
	    __builtin_mul_overflow(scores, (int64_t)dtype_size(s->dtype), &p) ||
	    __builtin_mul_overflow(p, n, &p) ||
	    ((train || s->dtype != DTYPE_FLOAT32) &&
	     __builtin_mul_overflow(scores, (int64_t)sizeof(float), &extra)))
		return INT64_MAX;
	return sat_add(p, extra);
}

int model_memory_estimate(const struct model_shape *s, struct model_memory *mm,
			  struct bd_error *err)
{
	memset(mm, 0, sizeof(*mm));
	int rc = model_check(s, err);
	if (rc)
		return rc;
	struct model m = {0};
	model_dims(&m, s);
	m.layers = calloc((size_t)m.L, sizeof(*m.layers));
	if (!m.layers)
		return bd_fail(err, BD_ENOMEM, "out of host memory");
	m.refused = "nothing: only counting";   /* take() counts and allocates nothing */
	take_state(&m);
	take_scratch(&m);
	free(m.layers);
	*mm = m.mem;
	mm->activations = sat_add(mm->activations, naive_scores_bytes(s));
	return 0;
}

int model_create(struct model **out, struct dev *dev, const struct model_shape *s, uint64_t seed,
		 const float *host_params)
{
	*out = NULL;
	int rc = model_check(s, &dev->err);
	if (rc)
		return rc;
	struct model *m = calloc(1, sizeof(*m));
	float *init = NULL;
	int32_t *tok = NULL;
	if (!m)
		return bd_fail(&dev->err, BD_ENOMEM, "out of host memory");
	m->dev = dev;
	m->live_before = dev->mem->live;
	model_dims(m, s);
	int64_t P = m->lay.total, n = m->n;
	const size_t f32 = sizeof(float);
	int train = s->mode != MODEL_INFER;

	m->layers = calloc((size_t)m->L, sizeof(*m->layers));
	if (!m->layers) {
		rc = bd_fail(&dev->err, BD_ENOMEM, "out of host memory");
		goto done;
	}

	take_state(m);
	struct dev_attention_shape as = {.b = s->batch, .h = m->h, .t = s->ctx, .dh = m->dh,
					 .causal = 1, .backward = train, .io = DTYPE_FLOAT32,
					 .math = s->dtype};
	for (int64_t l = 0; !m->refused && l < (train ? m->L : 1); l++) {
		int64_t before = dev->mem->live;
		if ((rc = dev->ops->attention_create(dev, &m->layers[l].att, s->attention, &as))) {
			if (rc == BD_ENOMEM) {
				m->refused = "attention workspace";
				break;
			}
			goto done;
		}
		m->mem.activations += dev->mem->live - before;
	}
	take_scratch(m);
	if (m->refused) {
		/* a device error keeps the backend's message */
		rc = m->broken ? bd_fail(&dev->err, BD_EINVAL, "allocating the %s: %.900s", m->refused,
					 dev->err.msg) : fail_oom(m);
		goto done;
	}

	/* initial values, made on the host */
	tok = malloc((size_t)(2 * n) * sizeof(*tok));
	init = host_params ? NULL : malloc((size_t)P * sizeof(*init));
	float *rope = malloc((size_t)(s->ctx * m->dh) * sizeof(*rope));
	if (!tok || (!host_params && !init) || !rope) {
		free(rope);
		rc = bd_fail(&dev->err, BD_ENOMEM, "out of host memory for the initial values");
		goto done;
	}
	if (!host_params)
		model_init_params(&s->cfg, seed, init);
	model_init_tokens(&s->cfg, n, seed, tok, tok + n);
	cpu_rope_table(rope, s->ctx, m->dh, MODEL_ROPE_THETA);
	const float *p0 = host_params ? host_params : init;
	if ((rc = dev->ops->upload(dev, m->params, p0, (size_t)P * f32)) ||
	    (rc = dev->ops->upload(dev, m->tokens, tok, (size_t)n * sizeof(int32_t))) ||
	    (rc = dev->ops->upload(dev, m->targets, tok + n, (size_t)n * sizeof(int32_t))) ||
	    (rc = dev->ops->upload(dev, m->rope, rope, (size_t)(s->ctx * m->dh) * f32)))
		goto done_rope;
	if (m->params_bf16 &&
	    (rc = dev->ops->convert(dev, m->params_bf16, DTYPE_BFLOAT16, m->params, DTYPE_FLOAT32,
				    (size_t)P)))
		goto done_rope;
	rc = dev->ops->sync(dev);
done_rope:
	free(rope);
	goto done;
done:
	free(tok);
	free(init);
	if (rc) {
		model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	struct dev *dev = m->dev;
	void (*release)(struct dev *, void *) = dev->ops->free;
	if (m->layers) {
		int train = m->s.mode != MODEL_INFER;
		for (int64_t l = 0; l < (train ? m->L : 1); l++)
			free_layer(m, &m->layers[l], 1);
		free(m->layers);
	}
	if (m->dx_act != m->dx)
		release(dev, m->dx_act);
	if (m->dlogits != m->logits)
		release(dev, m->dlogits);
	void *bufs[] = {m->params, m->params_bf16, m->grads, m->adam_m, m->adam_v, m->tokens,
			m->targets, m->rope, m->x_final, m->rstd_f, m->hf, m->logits, m->lse_ce,
			m->loss, m->dx, m->dnorm, m->dg, m->du, m->dom, m->d_o, m->dq, m->dk, m->dv,
			m->qkv};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		release(dev, bufs[i]);
	free(m);
}

void model_memory(const struct model *m, struct model_memory *mm) { *mm = m->mem; }

/* ---- the phases --------------------------------------------------------------------------- */

/* The weights a GEMM reads: the bfloat16 shadow in mixed precision. */
static const void *weight(const struct model *m, int64_t offset)
{
	if (m->params_bf16)
		return m->params_bf16 + offset;
	return m->params + offset;
}

/* y(rows, cols) = x(rows, k) · W^T, W stored (cols, k); y in c_dtype, += when beta is 1 */
static int linear(struct model *m, const void *x, int64_t w_off, void *y, int64_t rows,
		  int64_t cols, int64_t k, enum bd_dtype c_dtype, float beta)
{
	struct dev_gemm g = {.m = rows, .n = cols, .k = k, .trans_b = 1, .ab_dtype = m->act,
			     .c_dtype = c_dtype, .beta = beta};
	return m->dev->ops->gemm(m->dev, &g, x, weight(m, w_off), y);
}

/* dx(rows, k) = dy(rows, cols) · W, W stored (cols, k) */
static struct dev_gemm dx_gemm(const struct model *m, int64_t rows, int64_t cols, int64_t k,
			       enum bd_dtype c_dtype)
{
	return (struct dev_gemm){.m = rows, .n = k, .k = cols, .ab_dtype = m->act,
				 .c_dtype = c_dtype};
}

/* dW(cols, k) = dy(rows, cols)^T · x(rows, k), float32 into the gradient buffer */
static struct dev_gemm dw_gemm(const struct model *m, int64_t rows, int64_t cols, int64_t k)
{
	return (struct dev_gemm){.m = cols, .n = k, .k = rows, .trans_a = 1, .ab_dtype = m->act,
				 .c_dtype = DTYPE_FLOAT32};
}

/* Both gradients of a linear layer y = x·W^T from dy: dW into the gradient buffer and dx
 * (dx_dtype), at once where the backend pairs products (they read the same dy). */
static int linear_grads(struct model *m, const void *dy, const void *x, int64_t w_off, void *dx,
			int64_t rows, int64_t cols, int64_t k, enum bd_dtype dx_dtype)
{
	struct dev *dev = m->dev;
	struct dev_gemm gw = dw_gemm(m, rows, cols, k), gx = dx_gemm(m, rows, cols, k, dx_dtype);
	float *dw = m->grads + w_off;
	const void *w = weight(m, w_off);
	int rc;
	if (dev->ops->gemm_pair)
		return dev->ops->gemm_pair(dev, &gw, dy, x, dw, &gx, dy, w, dx);
	if ((rc = dev->ops->gemm(dev, &gw, dy, x, dw)))
		return rc;
	return dev->ops->gemm(dev, &gx, dy, w, dx);
}

/* Byte offset of column col in an act matrix. */
static void *act_col(const struct model *m, void *base, int64_t col)
{
	return (char *)base + (size_t)col * m->act_size;
}

/* x_out = x + proj, then the norm with gain g of x_out into h, rstd: fused where the backend
 * has it, else x_out = x, and proj's GEMM accumulates into x_out (beta 1). Before proj's GEMM:
 * where proj's product goes (its C and beta); after it: residual_norm_finish. */
struct residual {
	void *c;
	float beta;
};

static struct residual residual_start(struct model *m, const float *x, float *x_out, int *rc)
{
	if (m->dev->ops->residual_rmsnorm_fwd)
		return (struct residual){m->qkv, 0};   /* qkv is free once the heads are split */
	*rc = m->dev->ops->copy(m->dev, x_out, x, (size_t)(m->n * m->d) * sizeof(float));
	return (struct residual){x_out, 1};
}

static int residual_finish(struct model *m, const float *x, float *x_out, const float *g,
			   void *h, float *rstd)
{
	struct dev *dev = m->dev;
	if (dev->ops->residual_rmsnorm_fwd)
		return dev->ops->residual_rmsnorm_fwd(dev, x, m->qkv, x_out, g, h, m->act, rstd, m->n,
						      m->d, MODEL_NORM_EPS);
	return dev->ops->rmsnorm_fwd(dev, x_out, g, h, m->act, rstd, m->n, m->d, MODEL_NORM_EPS);
}

int model_forward(struct model *m)
{
	struct dev *dev = m->dev;
	const struct dev_ops *op = dev->ops;
	int64_t n = m->n, d = m->d, f = m->f, V = m->V, b = m->s.batch, t = m->s.ctx;
	const struct model_layout *lay = &m->lay;
	int train = m->s.mode != MODEL_INFER;
	int rc = 0;
	float *x = m->layers[0].x;
	struct residual r;
	if ((rc = op->embedding_fwd(dev, m->tokens, m->params + lay->embedding, x, n, d)) ||
	    (rc = op->rmsnorm_fwd(dev, x, m->params + lay->layer0 + lay->attn_norm, m->layers[0].h1,
				  m->act, m->layers[0].rstd1, n, d, MODEL_NORM_EPS)))
		return rc;
	for (int64_t l = 0; l < m->L; l++) {
		struct layer_acts *a = &m->layers[l];
		int64_t w = lay->layer0 + l * lay->layer_stride;
		void *att = train ? a->att : m->layers[0].att;
		/* the layer's output: the next layer's x, or (inference) the other ping-pong buffer;
		 * and where the norm that follows it goes: the next layer's attn_norm, or the final
		 * norm after the last layer (inference: every layer's is layers[0]'s) */
		int last = l + 1 == m->L;
		float *x_out = train ? (!last ? m->layers[l + 1].x : m->x_final)
				     : (x == m->layers[0].x ? m->x_final : m->layers[0].x);
		struct layer_acts *next = last ? NULL : &m->layers[train ? l + 1 : 0];
		const float *next_g = m->params + (last ? lay->final_norm
							: w + lay->layer_stride + lay->attn_norm);
		dev_range_push(dev, "layer %lld", (long long)l);
		/* a->h1 = attn_norm(x) is made by the previous layer (or before the loop) */
		if ((rc = linear(m, a->h1, w + lay->w_qkv, m->qkv, n, 3 * d, d, m->act, 0)) ||
		    (rc = op->heads_split(dev, m->qkv, m->act, 3 * d, a->q, m->rope, b, t, m->h,
					  m->dh)) ||
		    (rc = op->heads_split(dev, act_col(m, m->qkv, d), m->act, 3 * d, a->k, m->rope, b,
					  t, m->h, m->dh)) ||
		    (rc = op->heads_split(dev, act_col(m, m->qkv, 2 * d), m->act, 3 * d, a->v, NULL,
					  b, t, m->h, m->dh)) ||
		    (rc = op->attention_fwd(dev, att, a->q, a->k, a->v, a->o, a->lse)) ||
		    (rc = op->heads_merge(dev, a->o, a->om, m->act, d, NULL, b, t, m->h, m->dh)) ||
		    (r = residual_start(m, x, a->x_mid, &rc), rc) ||
		    (rc = linear(m, a->om, w + lay->w_o, r.c, n, d, d, DTYPE_FLOAT32, r.beta)) ||
		    (rc = residual_finish(m, x, a->x_mid, m->params + w + lay->ffn_norm, a->h2,
					  a->rstd2)) ||
		    (rc = linear(m, a->h2, w + lay->w_13, a->u, n, 2 * f, d, m->act, 0)) ||
		    (rc = op->swiglu_fwd(dev, a->u, a->g, m->act, n, f)) ||
		    (r = residual_start(m, a->x_mid, x_out, &rc), rc) ||
		    (rc = linear(m, a->g, w + lay->w_2, r.c, n, d, f, DTYPE_FLOAT32, r.beta)) ||
		    (rc = residual_finish(m, a->x_mid, x_out, next_g, last ? m->hf : next->h1,
					  last ? m->rstd_f : next->rstd1))) {
			dev_range_pop(dev);
			return rc;
		}
		dev_range_pop(dev);
		x = x_out;
	}
	m->x_last = x;
	if ((rc = linear(m, m->hf, lay->lm_head, m->logits, n, V, d, DTYPE_FLOAT32, 0)) ||
	    (rc = op->xent_fwd(dev, m->logits, m->targets, m->lse_ce, m->loss, n, V)))
		return rc;
	return 0;
}

/* dx_act = dx in the GEMMs' dtype (a no-op alias for float32) */
static int dx_to_act(struct model *m)
{
	if (m->dx_act == m->dx)
		return 0;
	return m->dev->ops->convert(m->dev, m->dx_act, m->act, m->dx, DTYPE_FLOAT32,
				    (size_t)(m->n * m->d));
}

int model_backward(struct model *m)
{
	struct dev *dev = m->dev;
	const struct dev_ops *op = dev->ops;
	int64_t n = m->n, d = m->d, f = m->f, V = m->V, b = m->s.batch, t = m->s.ctx;
	const struct model_layout *lay = &m->lay;
	int rc;
	if (!m->grads)
		return bd_fail(&dev->err, BD_EINVAL, "model created for the forward only");
	if ((rc = op->xent_bwd(dev, m->logits, m->lse_ce, m->targets, m->dlogits, m->act, n, V,
			       1.0f / (float)n)) ||
	    (rc = linear_grads(m, m->dlogits, m->hf, lay->lm_head, m->dnorm, n, V, d,
				 DTYPE_FLOAT32)) ||
	    (rc = op->zero(dev, m->dx, (size_t)(n * d) * sizeof(float))) ||
	    (rc = op->rmsnorm_bwd(dev, m->dnorm, m->x_last, m->params + lay->final_norm, m->rstd_f,
				  m->dx, m->grads + lay->final_norm, n, d)))
		return rc;
	for (int64_t l = m->L - 1; l >= 0; l--) {
		struct layer_acts *a = &m->layers[l];
		int64_t w = lay->layer0 + l * lay->layer_stride;
		dev_range_push(dev, "layer %lld backward", (long long)l);
		if ((rc = dx_to_act(m)) ||
		    (rc = linear_grads(m, m->dx_act, a->g, w + lay->w_2, m->dg, n, d, f, m->act)) ||
		    (rc = op->swiglu_bwd(dev, a->u, m->dg, m->du, m->act, n, f)) ||
		    (rc = linear_grads(m, m->du, a->h2, w + lay->w_13, m->dnorm, n, 2 * f, d,
					 DTYPE_FLOAT32)) ||
		    (rc = op->rmsnorm_bwd(dev, m->dnorm, a->x_mid, m->params + w + lay->ffn_norm, a->rstd2,
					  m->dx, m->grads + w + lay->ffn_norm, n, d)) ||
		    (rc = dx_to_act(m)) ||
		    (rc = linear_grads(m, m->dx_act, a->om, w + lay->w_o, m->dom, n, d, d, m->act)) ||
		    (rc = op->heads_split(dev, m->dom, m->act, d, m->d_o, NULL, b, t, m->h, m->dh)) ||
		    (rc = op->attention_bwd(dev, a->att, a->q, a->k, a->v, a->o, a->lse, m->d_o, m->dq,
					    m->dk, m->dv)) ||
		    (rc = op->heads_merge(dev, m->dq, m->qkv, m->act, 3 * d, m->rope, b, t, m->h,
					  m->dh)) ||
		    (rc = op->heads_merge(dev, m->dk, act_col(m, m->qkv, d), m->act, 3 * d, m->rope,
					  b, t, m->h, m->dh)) ||
		    (rc = op->heads_merge(dev, m->dv, act_col(m, m->qkv, 2 * d), m->act, 3 * d, NULL,
					  b, t, m->h, m->dh)) ||
		    (rc = linear_grads(m, m->qkv, a->h1, w + lay->w_qkv, m->dnorm, n, 3 * d, d,
					 DTYPE_FLOAT32)) ||
		    (rc = op->rmsnorm_bwd(dev, m->dnorm, a->x, m->params + w + lay->attn_norm, a->rstd1,
					  m->dx, m->grads + w + lay->attn_norm, n, d))) {
			dev_range_pop(dev);
			return rc;
		}
		dev_range_pop(dev);
	}
	float *d_emb = m->grads + lay->embedding;
	if ((rc = op->zero(dev, d_emb, (size_t)(V * d) * sizeof(float))) ||
	    (rc = op->embedding_bwd(dev, m->tokens, m->dx, d_emb, n, d)))
		return rc;
	return 0;
}

int model_step(struct model *m)
{
	if (!m->adam_m)
		return bd_fail(&m->dev->err, BD_EINVAL, "model created without optimizer state");
	m->step++;
	return m->dev->ops->adamw(m->dev, m->params, m->grads, m->adam_m, m->adam_v,
				  m->params_bf16, (size_t)m->lay.total, &model_adamw, m->step);
}

int model_loss(struct model *m, double *loss)
{
	float x = 0;
	int rc = m->dev->ops->download(m->dev, &x, m->loss, sizeof(x));
	*loss = x;
	return rc;
}

int model_grads(struct model *m, float *host)
{
	if (!m->grads)
		return bd_fail(&m->dev->err, BD_EINVAL, "model created for the forward only");
	return m->dev->ops->download(m->dev, host, m->grads, (size_t)m->lay.total * sizeof(float));
}

int model_params(struct model *m, float *host)
{
	return m->dev->ops->download(m->dev, host, m->params, (size_t)m->lay.total * sizeof(float));
}
