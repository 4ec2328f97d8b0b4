/* kernels/workloads/attention.c: the attention workload (suite "attention") on every device: the
 * attention impls of the device's table (impls.c), which its backend's attention_create tells
 * apart by name (ops.h; the cpu: cpu/attention_cpu.c, cuda: cuda/attention_cuda.c), so that the
 * kernels timed here are the ones the e2e model uses.
 *
 * A case's tensors live on the device in the case's dtype (the impl's row says which it takes);
 * inputs are uniform in [-1, 1) from the seed, rounded to the dtype on the host so that the
 * float64 reference sees exactly what the kernel sees. Validation follows attention_check.h: the
 * whole problem when the reference is cheap, else sampled rows at the case's shape plus the full
 * backward at B = min(batch, 2), H = min(heads, 2), S = ATTENTION_REDUCED_SEQ. The sampled rows are those of every (batch,
 * head) on a device whose memory is the host's (its kernels are about as slow as the reference,
 * and reading a head back is a copy), of up to ATTENTION_SAMPLE_HEADS spread heads elsewhere. The
 * outputs are read back head by head, so the host never holds a whole large tensor.
 *
 * Memory: every device buffer (the tensors, P for naive, the kernels' workspaces) goes through
 * the backend's allocator into the case's arena; where the device's memory is the host's, the
 * float64 reference's buffers count too. The implementation is made before the tensors, so that
 * a combination it refuses allocates none; when it runs out of memory, the tensors it did not
 * get to are added to what the case needed. Peak after the forward is what the forward holds
 * before any backward buffer is touched. cuDNN's own handle memory is not counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_check.h"
#include "bf16.h"
#include "dev_workload.h"
#include "rng.h"

/* At most this many (batch, head) pairs, first and last included, get the sampled check where
 * the device's memory is not the host's: the float64 reference of 34 rows costs 68·S·D
 * multiply-adds per head. */
#define ATTENTION_SAMPLE_HEADS 8

enum { T_Q, T_K, T_V, T_O, T_DO, T_DQ, T_DK, T_DV, T_COUNT };

static const char *const tensor_names[T_COUNT] = {"Q", "K", "V", "O", "dO", "dQ", "dK", "dV"};

/* One problem on the device: tensors of dtype, lse float32. */
struct problem {
	struct attention_dims dims;
	enum bd_dtype dtype;
	int backward;
	void *t[T_COUNT];
	float *lse;
	void *att;              /* the backend's attention state */
};

struct att_case {
	struct wl_case c;       /* first: the case as the shared hooks take it */
	struct problem prob;
};

static int64_t elems(const struct attention_dims *d)
{
	return d->batch * d->heads * d->seq_len * d->head_dim;
}

/* x (n floats) as dtype into out (n elements of dtype_size(dtype)); x is rounded in place to the
 * values the dtype holds. */
static void encode(float *x, void *out, size_t n, enum bd_dtype dtype)
{
	uint16_t *h = out;
	for (size_t i = 0; i < n; i++) {
		if (dtype == DTYPE_BFLOAT16)
			x[i] = bf16_to_float(h[i] = bf16_from_float(x[i]));
		else if (dtype == DTYPE_FLOAT16)
			x[i] = f16_to_float(h[i] = f16_from_float(x[i]));
	}
	if (dtype == DTYPE_FLOAT32)
		memcpy(out, x, n * sizeof(float));
}

static void decode(const void *in, float *x, size_t n, enum bd_dtype dtype)
{
	const uint16_t *h = in;
	if (dtype == DTYPE_FLOAT32)
		memcpy(x, in, n * sizeof(float));
	else
		for (size_t i = 0; i < n; i++)
			x[i] = dtype == DTYPE_BFLOAT16 ? bf16_to_float(h[i]) : f16_to_float(h[i]);
}

static void problem_release(struct dev *dev, struct problem *pr)
{
	if (pr->att)
		dev->ops->attention_free(dev, pr->att);
	for (int i = 0; i < T_COUNT; i++)
		dev->ops->free(dev, pr->t[i]);
	dev->ops->free(dev, pr->lse);
	memset(pr, 0, sizeof(*pr));
}

/* Allocate pr's tensors and the implementation's state on dev, fill Q, K, V (and dO) from seed.
 * Returns 0 or a dev rc (dev->err says why; BD_EUNSUPPORTED for what the device cannot run); on
 * failure pr is released. */
static int problem_init(struct dev *dev, struct problem *pr, const char *impl,
			const struct attention_dims *d, enum bd_dtype dtype, int backward,
			uint64_t seed)
{
	memset(pr, 0, sizeof(*pr));
	pr->dims = *d;
	pr->dtype = dtype;
	pr->backward = backward;
	size_t n = (size_t)elems(d), bytes = n * dtype_size(dtype);
	size_t rows = (size_t)(d->batch * d->heads * d->seq_len);
	int ntensors = backward ? T_COUNT : T_DO;
	struct dev_attention_shape s = {.b = d->batch, .h = d->heads, .t = d->seq_len,
					.dh = d->head_dim, .causal = d->causal,
					.backward = backward, .io = dtype, .math = dtype};
	float *x = NULL;
	void *enc = NULL;
	int rc = 0;
	/* the implementation first: an unsupported combination allocates no tensor */
	if ((rc = dev->ops->attention_create(dev, &pr->att, impl, &s))) {
		struct mem_arena *mem = dev->mem;
		double rest = (double)ntensors * (double)bytes + (double)rows * sizeof(float);
		if (rc == BD_ENOMEM && mem->failed)   /* what the case needed: its tensors too */
			mem->failed_need = (double)mem->failed_need + rest < 0x1p63
						   ? mem->failed_need + (int64_t)rest : INT64_MAX;
		goto done;
	}
	for (int i = 0; i <= ntensors; i++) {   /* the tensors, then LSE */
		void **t = i < ntensors ? &pr->t[i] : (void **)&pr->lse;
		if (!(*t = wl_dev_alloc(dev, i < ntensors ? bytes : rows * sizeof(float),
					"%s attention tensor %s of (B, H, S, D) = (%lld, %lld, %lld, "
					"%lld) %s", impl, i < ntensors ? tensor_names[i] : "LSE",
					(long long)d->batch, (long long)d->heads,
					(long long)d->seq_len, (long long)d->head_dim,
					dtype_name(i < ntensors ? dtype : DTYPE_FLOAT32)))) {
			rc = BD_ENOMEM;
			goto done;
		}
	}
	x = malloc(n * sizeof(float));
	enc = malloc(bytes);
	if (!x || !enc) {
		rc = bd_fail(&dev->err, BD_ENOMEM, "out of host memory for the attention inputs");
		goto done;
	}
	struct rng r;
	rng_init(&r, seed);
	int inputs[] = {T_Q, T_K, T_V, T_DO};
	for (int i = 0; i < (backward ? 4 : 3) && !rc; i++) {
		rng_fill(&r, x, n, -1.0f, 1.0f);
		encode(x, enc, n, dtype);
		rc = dev->ops->upload(dev, pr->t[inputs[i]], enc, bytes);
	}
	if (!rc)
		rc = dev->ops->sync(dev);   /* the host buffers go next */
done:
	free(x);
	free(enc);
	if (rc)
		problem_release(dev, pr);
	return rc;
}

static int problem_forward(struct dev *dev, struct problem *pr)
{
	return dev->ops->attention_fwd(dev, pr->att, pr->t[T_Q], pr->t[T_K], pr->t[T_V],
				       pr->t[T_O], pr->lse);
}

static int problem_backward(struct dev *dev, struct problem *pr)
{
	return dev->ops->attention_bwd(dev, pr->att, pr->t[T_Q], pr->t[T_K], pr->t[T_V],
				       pr->t[T_O], pr->lse, pr->t[T_DO], pr->t[T_DQ], pr->t[T_DK],
				       pr->t[T_DV]);
}

/* Head number head of tensor i into x (S·D floats); raw is S·D elements of scratch. */
static int fetch_head(struct dev *dev, const struct problem *pr, int i, int64_t head, void *raw,
		      float *x)
{
	size_t n = (size_t)(pr->dims.seq_len * pr->dims.head_dim), es = dtype_size(pr->dtype);
	int rc = dev->ops->download(dev, raw, (const char *)pr->t[i] + (size_t)head * n * es, n * es);
	if (!rc)
		decode(raw, x, n, pr->dtype);
	return rc;
}

/* The check of every head (full) or of sampled rows of the heads (see the file comment). */
static int check_problem(struct dev *dev, const struct problem *pr, int full,
			 struct attention_check *c, struct wl_status *st)
{
	const struct attention_dims *d = &pr->dims;
	int64_t S = d->seq_len, D = d->head_dim, n = S * D, heads = d->batch * d->heads;
	struct attention_tol tol = attention_tol_for(pr->dtype);
	int host = dev->backend->host_memory;
	struct mem_arena *ref_mem = host ? dev->mem : NULL;   /* of the float64 reference */
	int grads = full && pr->backward;
	int ntensors = grads ? T_COUNT : T_DO;
	float *buf = malloc((size_t)(ntensors * n + S) * sizeof(float));
	void *raw = malloc((size_t)n * sizeof(float));
	int64_t rows[ATTENTION_SAMPLE_ROWS + 2], nrows = attention_sample_rows(S, rows);
	float *packed = malloc((size_t)(nrows * (2 * D + 1)) * sizeof(float));
	int code = STATUS_OK, rc = 0;
	if (!buf || !raw || !packed) {
		code = wl_set(st, STATUS_ERROR, "out of host memory for the attention check");
		goto done;
	}
	float *x[T_COUNT] = {0}, *lse = buf + ntensors * n;
	for (int i = 0; i < ntensors; i++)
		x[i] = buf + i * n;
	int64_t nheads = full || host || heads <= ATTENTION_SAMPLE_HEADS ? heads
								 : ATTENTION_SAMPLE_HEADS;
	for (int64_t j = 0; j < nheads && !rc; j++) {
		int64_t h = nheads == heads ? j : j * (heads - 1) / (ATTENTION_SAMPLE_HEADS - 1);
		for (int i = 0; i < ntensors && !rc; i++)
			rc = fetch_head(dev, pr, i, h, raw, x[i]);
		if (!rc)
			rc = dev->ops->download(dev, lse, pr->lse + h * S, (size_t)S * sizeof(float));
		if (rc)
			break;
		if (full) {
			struct attention_head hx = {.q = x[T_Q], .k = x[T_K], .v = x[T_V], .o = x[T_O],
						    .lse = lse};
			if (grads) {
				hx.d_o = x[T_DO];
				hx.dq = x[T_DQ];
				hx.dk = x[T_DK];
				hx.dv = x[T_DV];
			}
			rc = attention_check_head(c, d, &tol, h, &hx, ref_mem);
		} else {
			float *q = packed, *o = q + nrows * D, *l = o + nrows * D;
			for (int64_t r = 0; r < nrows; r++) {
				memcpy(q + r * D, x[T_Q] + rows[r] * D, (size_t)D * sizeof(float));
				memcpy(o + r * D, x[T_O] + rows[r] * D, (size_t)D * sizeof(float));
				l[r] = lse[rows[r]];
			}
			rc = attention_check_rows(c, d, &tol, h, rows, nrows, q, x[T_K], x[T_V], o, l,
						  ref_mem);
		}
		if (rc == BD_ENOMEM) {   /* the sizes, as every other oom reason gives them */
			struct bd_error why = {0};
			if (ref_mem && ref_mem->failed)   /* the arena as it was when it refused */
				mem_fail(&why, ref_mem, (double)ref_mem->failed, "out of host memory",
					 "the float64 attention reference (head %lld)", (long long)h);
			else
				snprintf(why.msg, sizeof(why.msg), "out of host memory for the float64 "
					 "attention reference (head %lld)", (long long)h);
			code = wl_set(st, STATUS_OOM, "%s", why.msg);
			goto done;
		}
	}
	if (rc)
		code = wl_from_dev(st, dev, rc, "reading the attention outputs");
done:
	free(buf);
	free(raw);
	free(packed);
	return code;
}

static int has_backward(enum bd_pass pass) { return (pass_phases(pass) >> PHASE_BWD) & 1; }

static int att_check(const struct case_params *p, struct wl_status *st)
{
	int code = wl_check_dtype(p, st);
	if (code == STATUS_OK)
		code = attention_case_check(p, st);
	if (code == STATUS_OK)
		code = wl_check_device(p, st);
	return code;
}

static int att_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		     struct wl_status *st)
{
	int rc = wl_case_open(sizeof(struct att_case), p, mem, state, st);
	if (rc)
		return rc;
	struct att_case *c = *state;
	struct attention_dims d = {p->batch_size, p->heads, p->seq_len, p->head_dim, p->causal};
	rc = problem_init(&c->c.dev, &c->prob, p->impl, &d, p->dtype, has_backward(p->pass), p->seed);
	if (rc)
		return wl_from_dev(st, &c->c.dev, rc, p->impl);
	return wl_set(st, STATUS_OK, "%s", "");
}

static int att_validate(void *state, struct wl_status *st)
{
	struct att_case *c = state;
	struct dev *dev = &c->c.dev;
	const char *impl = c->c.p.impl;
	struct problem *pr = &c->prob, reduced = {0};
	struct attention_check chk;
	int backward = pr->backward, full = attention_check_is_full(&pr->dims, backward);
	int code, rc;
	char at[64] = "";             /* where the worst value was, when not at the case's shape */
	attention_check_init(&chk);
	st->max_diff = -1;
	st->tolerance = 0;
	if ((rc = problem_forward(dev, pr)) || (full && backward && (rc = problem_backward(dev, pr))) ||
	    (rc = dev->ops->sync(dev)))
		return wl_from_dev(st, dev, rc, impl);
	if ((code = check_problem(dev, pr, full, &chk, st)))
		return code;
	if (!full && backward && chk.ratio <= 1) {
		/* two batches and two heads where the case has them: a backward that gets only the
		 * first (batch, head) right must not pass */
		struct attention_dims small = {pr->dims.batch < 2 ? 1 : 2, pr->dims.heads < 2 ? 1 : 2,
					       ATTENTION_REDUCED_SEQ, pr->dims.head_dim,
					       pr->dims.causal};
		struct attention_check bwd;
		attention_check_init(&bwd);
		if ((rc = problem_init(dev, &reduced, impl, &small, pr->dtype, 1, c->c.p.seed + 1)) ||
		    (rc = problem_forward(dev, &reduced)) || (rc = problem_backward(dev, &reduced)) ||
		    (rc = dev->ops->sync(dev))) {
			problem_release(dev, &reduced);
			return wl_from_dev(st, dev, rc, impl);
		}
		code = check_problem(dev, &reduced, 1, &bwd, st);
		problem_release(dev, &reduced);
		if (code)
			return code;
		if (bwd.ratio > chk.ratio) {
			chk = bwd;
			snprintf(at, sizeof(at), " (checked at B=%lld, H=%lld, S=%d)",
				 (long long)small.batch, (long long)small.heads, ATTENTION_REDUCED_SEQ);
		}
	}
	return attention_check_result(st, &chk, at);
}

static int att_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	struct att_case *c = state;
	int rc;
	switch (phase) {
	case PHASE_FWD:
		rc = problem_forward(&c->c.dev, &c->prob);
		break;
	case PHASE_BWD:
		if (!c->prob.backward)
			return wl_set(st, STATUS_ERROR, "backward asked of a forward-only case");
		rc = problem_backward(&c->c.dev, &c->prob);
		break;
	default:
		return wl_set(st, STATUS_UNSUPPORTED, "attention has no %s phase", phase_name(phase));
	}
	return rc ? wl_from_dev(st, &c->c.dev, rc, phase_name(phase)) : STATUS_OK;
}

/* What the backend says the case's attention runs (cuDNN's graph and engine, ...). */
static void att_describe(void *state, char *buf, size_t n)
{
	struct att_case *c = state;
	if (n)
		buf[0] = '\0';
	if (c && c->c.dev_open && c->prob.att && c->c.dev.ops->attention_describe)
		c->c.dev.ops->attention_describe(&c->c.dev, c->prob.att, buf, n);
}

static void att_teardown(void *state)
{
	struct att_case *c = state;
	if (c && c->c.dev_open)
		problem_release(&c->c.dev, &c->prob);
	wl_case_close(state);
}

const struct workload attention_workload = {
	.suite = "attention",
	.check = att_check,
	.figures = attention_case_figures,
	.setup = att_setup,
	.validate = att_validate,
	.run = att_run,
	.teardown = att_teardown,
	.mark = wl_case_mark,
	.elapsed = wl_case_elapsed,
	.drain = wl_case_drain,
	.describe = att_describe,
};
