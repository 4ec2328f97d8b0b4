/* kernels/cuda/attention_cuda.c: the CUDA backend's attention ops (ops.h), three
 * implementations behind them:
 *
 *   naive  S = scale·Q K^T through cuBLASLt (float32 scores), a row softmax kernel into P of the
 *          compute dtype (kept per attention for the backward: O(t²) memory, the point of the
 *          baseline), O = P V; backward dV = P^T dO, dP = dO V^T (float32), dS = P ⊙ (dP − Δ)
 *          in the compute dtype, dQ = scale·dS K, dK = scale·dS^T Q.
 *   flash  our tiled online-softmax kernels (flash.cu): LSE saved, O(t) memory.
 *   sdpa   cuDNN's fused attention (sdpa_cudnn.c), one plan per shape, cached per backend and
 *          built at create time (untimed); cuDNN's refusal of a shape, dtype or GPU is
 *          `unsupported` with cuDNN's reason.
 *
 * The compute dtype is shape->math. When the tensors are float32 and math is 16-bit (the model's
 * bf16 cases) Q, K, V are converted into per-attention copies, which the backward reuses with the
 * forward's 16-bit O, and the outputs are converted back.
 *
 * Scratch shared by every attention of a backend (float32 scores/dP, 16-bit dS, the converted
 * gradients, the flash/cuDNN workspace) grows at create time only and is looked up at run time,
 * so nothing is allocated while a phase is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda.h"
#include "cuda_kernels.h"
#include "flash.h"
#include "impls.h"
#ifdef BENCHDB_HAVE_CUDNN
#include "sdpa_cudnn.h"
#endif

enum att_impl { ATT_NAIVE, ATT_FLASH, ATT_SDPA };

enum scratch_slot {
	SCR_SCORES,   /* naive: (b·h, t, t) float32 scores of a 16-bit forward; dP (dS if float32) */
	SCR_DS,       /* naive, 16-bit: dS (b·h, t, t) */
	SCR_DO,       /* converting: dO, dQ, dK, dV in the compute dtype (b, h, t, dh) */
	SCR_DQ,
	SCR_DK,
	SCR_DV,
	SCR_WORK,     /* flash backward's / cuDNN's workspace */
	SCR_COUNT
};

struct sdpa_entry {
	struct cuda_flash_shape s;
	int backward;
	struct sdpa_plan *plan;
};

struct att_shared {
	void *scr[SCR_COUNT];
	size_t scr_bytes[SCR_COUNT];
#ifdef BENCHDB_HAVE_CUDNN
	struct sdpa_ctx *ctx;            /* opened on first sdpa use */
	struct sdpa_entry *plans;
	size_t nplans, cap_plans;
#endif
};

struct cuda_att {
	enum att_impl impl;
	struct dev_attention_shape s;
	struct cuda_flash_shape fs;      /* the shape in the compute dtype, scale 1/sqrt(dh) */
	int convert;                     /* float32 tensors, 16-bit compute */
	void *p;                         /* naive: (b·h, t, t) P of the last forward, compute dtype */
	void *q16, *k16, *v16, *o16;     /* converting: the last forward's inputs and output */
	struct sdpa_plan *plan;          /* sdpa: owned by the shared cache */
};

/* dev's error for a combination this backend cannot run (the case is `unsupported`) */
#define UNSUPPORTED(dev, ...) bd_fail(&(dev)->err, BD_EUNSUPPORTED, __VA_ARGS__)

static struct att_shared *shared(struct dev *dev)
{
	void **slot = cuda_dev_attention_shared(dev);
	if (!*slot)
		*slot = calloc(1, sizeof(struct att_shared));
	if (!*slot)
		bd_fail(&dev->err, BD_ENOMEM, "out of host memory");
	return *slot;
}

/* Make scratch slot at least bytes (create time only). */
static int reserve(struct dev *dev, struct att_shared *sh, enum scratch_slot slot, size_t bytes)
{
	if (bytes <= sh->scr_bytes[slot])
		return 0;
	dev->ops->free(dev, sh->scr[slot]);
	sh->scr[slot] = NULL;
	sh->scr_bytes[slot] = 0;
	if (!(sh->scr[slot] = dev->ops->alloc(dev, bytes)))
		return BD_ENOMEM;
	sh->scr_bytes[slot] = bytes;
	return 0;
}

#ifdef BENCHDB_HAVE_CUDNN
/* Field by field: a memcmp would also compare the struct's padding, whose bytes are unspecified,
 * and build a second plan for the same shape. */
static int same_shape(const struct cuda_flash_shape *a, const struct cuda_flash_shape *b)
{
	return a->b == b->b && a->h == b->h && a->t == b->t && a->dh == b->dh &&
	       a->causal == b->causal && a->dtype == b->dtype && a->scale == b->scale;
}

/* The cached cuDNN plan for fs (one made with a backward also serves a forward-only use). */
static int sdpa_get(struct dev *dev, struct att_shared *sh, const struct cuda_flash_shape *fs,
		    int backward, struct sdpa_plan **out)
{
	char why[768];
	for (size_t i = 0; i < sh->nplans; i++) {
		const struct sdpa_entry *e = &sh->plans[i];
		if (same_shape(&e->s, fs) && e->backward >= backward) {
			*out = e->plan;
			return 0;
		}
	}
	if (!sh->ctx && sdpa_ctx_open(&sh->ctx, cuda_dev_stream(dev), why, sizeof(why))) {
		return UNSUPPORTED(dev, "sdpa: %s", why);
	}
	if (sh->nplans == sh->cap_plans) {
		size_t cap = sh->cap_plans ? 2 * sh->cap_plans : 8;
		struct sdpa_entry *grown = realloc(sh->plans, cap * sizeof(*grown));
		if (!grown)
			return bd_fail(&dev->err, BD_ENOMEM, "out of host memory for sdpa plans");
		sh->plans = grown;
		sh->cap_plans = cap;
	}
	struct sdpa_entry e = {.backward = backward};
	memcpy(&e.s, fs, sizeof(*fs));
	int refused = 0;
	if (sdpa_plan_create(&e.plan, sh->ctx, fs, backward, why, sizeof(why), &refused)) {
		/* float32: whichever step cuDNN stops at, it is cuDNN not taking the dtype */
		int unsupported = refused || fs->dtype == DTYPE_FLOAT32;
		return bd_fail(&dev->err, unsupported ? BD_EUNSUPPORTED : BD_EINVAL, "sdpa: %s", why);
	}
	sh->plans[sh->nplans++] = e;
	*out = e.plan;
	return 0;
}
#endif

/* 0 if the flash kernels for fs fit this GPU's shared memory per block, else `unsupported` with
 * both sizes (99 KiB GPUs, compute capability 8.6, 8.9 and 12.x: 16-bit head_dim over 64), rather
 * than the "invalid argument" of the first launch (a case stored as an error). A device that
 * reports no limit (0) is left to the launch. */
static int flash_fits(struct dev *dev, const struct cuda_flash_shape *fs, int backward)
{
	size_t need = cuda_flash_smem_bytes(fs, backward);
	int device = 0, optin = 0;
	CUDA_TRY(dev, cudaGetDevice(&device), "cudaGetDevice");
	CUDA_TRY(dev, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
		 "cudaDeviceGetAttribute (shared memory per block)");
	if (optin > 0 && need > (size_t)optin)
		return UNSUPPORTED(dev, "flash: the %s %s kernels of head_dim %lld need %zu bytes of "
				   "shared memory per block; this GPU allows %d",
				   dtype_name((enum bd_dtype)fs->dtype),
				   backward ? "forward and backward" : "forward", (long long)fs->dh,
				   need, optin);
	return 0;
}

int cuda_attention_create(struct dev *dev, void **att, const char *impl,
			  const struct dev_attention_shape *s)
{
	*att = NULL;
	enum att_impl which;
	char names[128];
	if (!strcmp(impl, "naive"))
		which = ATT_NAIVE;
	else if (!strcmp(impl, "flash"))
		which = ATT_FLASH;
	else if (!strcmp(impl, "sdpa"))
		which = ATT_SDPA;
	else
		return UNSUPPORTED(dev, "attention '%s' does not run on cuda (cuda: %s)", impl,
				   impl_list("attention", DEVICE_CUDA, names, sizeof(names)));
	if (s->io != DTYPE_FLOAT32 && s->io != s->math)
		return UNSUPPORTED(dev, "attention on %s tensors cannot compute in %s",
				   dtype_name(s->io), dtype_name(s->math));
	if (s->b <= 0 || s->h <= 0 || s->t <= 0 || s->dh <= 0)
		return bd_fail(&dev->err, BD_EINVAL, "attention sizes must be positive");
	struct att_shared *sh = shared(dev);
	struct cuda_att *a = calloc(1, sizeof(*a));
	if (!sh || !a) {
		free(a);
		return bd_fail(&dev->err, BD_ENOMEM, "out of host memory");
	}
	a->impl = which;
	a->s = *s;
	a->convert = s->io != s->math;
	a->fs = (struct cuda_flash_shape){.b = s->b, .h = s->h, .t = s->t, .dh = s->dh,
					  .causal = s->causal, .dtype = (int)s->math,
					  .scale = (float)(1.0 / sqrt((double)s->dh))};
	size_t es = dtype_size(s->math), elems = (size_t)(s->b * s->h * s->t * s->dh);
	size_t scores = (size_t)(s->b * s->h) * (size_t)s->t * (size_t)s->t;
	int rc = 0;
	const char *why;
	switch (which) {
	case ATT_NAIVE:
		if (!(a->p = dev->ops->alloc(dev, scores * es))) {
			rc = BD_ENOMEM;
			break;
		}
		if ((s->math != DTYPE_FLOAT32 || s->backward) &&
		    (rc = reserve(dev, sh, SCR_SCORES, scores * sizeof(float))))
			break;
		if (s->math != DTYPE_FLOAT32 && s->backward)
			rc = reserve(dev, sh, SCR_DS, scores * es);
		break;
	case ATT_FLASH:
		if ((why = cuda_flash_unsupported(&a->fs))) {
			rc = UNSUPPORTED(dev, "%s", why);
			break;
		}
		if ((rc = flash_fits(dev, &a->fs, s->backward)))
			break;
		if (s->backward)
			rc = reserve(dev, sh, SCR_WORK, cuda_flash_bwd_workspace(&a->fs));
		break;
	case ATT_SDPA:
#ifdef BENCHDB_HAVE_CUDNN
		if (!(rc = sdpa_get(dev, sh, &a->fs, s->backward, &a->plan)))
			rc = reserve(dev, sh, SCR_WORK, sdpa_plan_workspace(a->plan));
#else
		rc = UNSUPPORTED(dev, "sdpa: this benchdb was built without cuDNN (install cuDNN 9 "
				 "and rebuild; CMake looks under CUDNN_ROOT)");
#endif
		break;
	}
	if (!rc && a->convert) {
		void **copies[] = {&a->q16, &a->k16, &a->v16, &a->o16};
		for (int i = 0; i < 4 && !rc; i++)
			if (!(*copies[i] = dev->ops->alloc(dev, elems * es)))
				rc = BD_ENOMEM;
		for (int slot = SCR_DO; slot <= SCR_DV && !rc && s->backward; slot++)
			rc = reserve(dev, sh, slot, elems * es);
	}
	if (rc) {
		cuda_attention_free(dev, a);
		return rc;
	}
	*att = a;
	return 0;
}

void cuda_attention_free(struct dev *dev, void *att)
{
	struct cuda_att *a = att;
	if (!a)
		return;
	void *bufs[] = {a->p, a->q16, a->k16, a->v16, a->o16};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		dev->ops->free(dev, bufs[i]);
	free(a);
}

/* ops.h attention_describe: the impl's own members (sdpa: cuDNN's graphs and engines,
 * sdpa_plan_describe), then "compute" (the dtype of the products), "converted_from" for
 * float32 tensors computed in 16 bits, and "timing_delay_us" ("adaptive" or the fixed µs). */
void cuda_attention_describe(struct dev *dev, void *att, char *buf, size_t n)
{
	const struct cuda_att *a = att;
	if (!buf || !n)
		return;
	buf[0] = '\0';
	if (!a)
		return;
	int int16 = a->s.math != DTYPE_FLOAT32;
	int len = 0;
	switch (a->impl) {
	case ATT_NAIVE:
		len = snprintf(buf, n, "\"gemm\": \"cublasLt\", \"softmax\": \"kernels.cu softmax_fwd\"");
		break;
	case ATT_FLASH:
		len = snprintf(buf, n, "\"kernels\": \"flash.cu\", \"math\": \"%s\"",
			       int16 ? "mma.sync m16n8k16, float32 accumulation" : "float32 FMA");
		break;
	case ATT_SDPA:
#ifdef BENCHDB_HAVE_CUDNN
		sdpa_plan_describe(a->plan, buf, n);
		len = (int)strlen(buf);
#endif
		break;
	}
	if (len < 0 || (size_t)len >= n) {   /* cut short: not JSON, say nothing of it */
		buf[0] = '\0';
		len = 0;
	}
	int64_t fixed = cuda_dev_timing_delay_fixed_ns(dev);
	char delay[48];
	if (fixed < 0)
		snprintf(delay, sizeof(delay), "\"adaptive\"");
	else
		snprintf(delay, sizeof(delay), "%lld", (long long)(fixed / 1000));
	/* only whole members: a cut one would not be JSON */
	char tail[160];
	int w = snprintf(tail, sizeof(tail), "%s\"compute\": \"%s\"%s, \"timing_delay_us\": %s",
			 len ? ", " : "", dtype_name(a->s.math),
			 a->convert ? ", \"converted_from\": \"float32\"" : "", delay);
	if (w > 0 && (size_t)len + (size_t)w < n)
		memcpy(buf + len, tail, (size_t)w + 1);
}

void cuda_attention_release(struct dev *dev, void **slot)
{
	struct att_shared *sh = *slot;
	if (!sh)
		return;
#ifdef BENCHDB_HAVE_CUDNN
	for (size_t i = 0; i < sh->nplans; i++)
		sdpa_plan_free(sh->plans[i].plan);
	free(sh->plans);
	sdpa_ctx_close(sh->ctx);
#endif
	for (int i = 0; i < SCR_COUNT; i++)
		dev->ops->free(dev, sh->scr[i]);
	free(sh);
	*slot = NULL;
}

/* Batched over b·h: C (m, n) = alpha · op(A) · op(B), packed, inputs of ab, output of c. */
static int att_gemm(struct dev *dev, const struct dev_attention_shape *s, int64_t m, int64_t n,
		    int64_t k, int ta, int tb, float alpha, enum bd_dtype ab, enum bd_dtype c,
		    const void *A, const void *B, void *C)
{
	struct dev_gemm g = {.batch = s->b * s->h, .m = m, .n = n, .k = k, .trans_a = ta,
			     .trans_b = tb, .ab_dtype = ab, .c_dtype = c, .alpha = alpha};
	return dev->ops->gemm(dev, &g, A, B, C);
}

static int naive_fwd(struct dev *dev, struct cuda_att *a, const void *q, const void *k,
		     const void *v, void *o, float *lse)
{
	const struct dev_attention_shape *s = &a->s;
	enum bd_dtype m = s->math;
	/* float32: the scores become P in place; 16-bit: float32 scores, then P in m */
	float *scores = m == DTYPE_FLOAT32 ? a->p : shared(dev)->scr[SCR_SCORES];
	int rc;
	if ((rc = att_gemm(dev, s, s->t, s->t, s->dh, 0, 1, a->fs.scale, m, DTYPE_FLOAT32, q, k,
			   scores)))
		return rc;
	CUDA_TRY(dev, cuda_softmax_fwd(scores, a->p, (int)m, lse, s->b * s->h * s->t, s->t,
					 s->causal, cuda_dev_stream(dev)), "attention softmax");
	return att_gemm(dev, s, s->t, s->dh, s->t, 0, 0, 1.0f, m, m, a->p, v, o);
}

static int naive_bwd(struct dev *dev, struct cuda_att *a, const void *q, const void *k,
		     const void *v, const void *d_o, void *dq, void *dk, void *dv)
{
	const struct dev_attention_shape *s = &a->s;
	struct att_shared *sh = shared(dev);
	enum bd_dtype m = s->math;
	float *dp = sh->scr[SCR_SCORES];
	void *ds = m == DTYPE_FLOAT32 ? (void *)dp : sh->scr[SCR_DS];
	int rc;
	if ((rc = att_gemm(dev, s, s->t, s->dh, s->t, 1, 0, 1.0f, m, m, a->p, d_o, dv)) ||
	    (rc = att_gemm(dev, s, s->t, s->t, s->dh, 0, 1, 1.0f, m, DTYPE_FLOAT32, d_o, v, dp)))
		return rc;
	CUDA_TRY(dev, cuda_softmax_bwd(a->p, dp, ds, (int)m, s->b * s->h * s->t, s->t,
					 cuda_dev_stream(dev)), "attention softmax backward");
	if ((rc = att_gemm(dev, s, s->t, s->dh, s->t, 0, 0, a->fs.scale, m, m, ds, k, dq)) ||
	    (rc = att_gemm(dev, s, s->t, s->dh, s->t, 1, 0, a->fs.scale, m, m, ds, q, dk)))
		return rc;
	return 0;
}

int cuda_attention_fwd(struct dev *dev, void *att, const void *q, const void *k, const void *v,
		       void *o, float *lse)
{
	struct cuda_att *a = att;
	const struct dev_attention_shape *s = &a->s;
	size_t elems = (size_t)(s->b * s->h * s->t * s->dh);
	void *out = o;
	int rc;
	if (a->convert) {
		if ((rc = dev->ops->convert(dev, a->q16, s->math, q, DTYPE_FLOAT32, elems)) ||
		    (rc = dev->ops->convert(dev, a->k16, s->math, k, DTYPE_FLOAT32, elems)) ||
		    (rc = dev->ops->convert(dev, a->v16, s->math, v, DTYPE_FLOAT32, elems)))
			return rc;
		q = a->q16;
		k = a->k16;
		v = a->v16;
		out = a->o16;
	}
	switch (a->impl) {
	case ATT_NAIVE:
		rc = naive_fwd(dev, a, q, k, v, out, lse);
		break;
	case ATT_FLASH:
		rc = 0;
		CUDA_TRY(dev, cuda_flash_fwd(&a->fs, q, k, v, out, lse, cuda_dev_stream(dev)),
			   "flash attention forward");
		break;
	default: {
#ifdef BENCHDB_HAVE_CUDNN
		struct att_shared *sh = shared(dev);
		char why[512];
		rc = sdpa_plan_fwd(a->plan, sh->ctx, q, k, v, out, lse, sh->scr[SCR_WORK], why,
				   sizeof(why))
			     ? bd_fail(&dev->err, BD_EINVAL, "sdpa forward: %s", why) : 0;
#else
		rc = bd_fail(&dev->err, BD_EUNSUPPORTED, "sdpa: built without cuDNN");
#endif
	}
	}
	if (!rc && a->convert)
		rc = dev->ops->convert(dev, o, DTYPE_FLOAT32, out, s->math, elems);
	return rc;
}

int cuda_attention_bwd(struct dev *dev, void *att, const void *q, const void *k, const void *v,
		       const void *o, const float *lse, const void *d_o, void *dq, void *dk,
		       void *dv)
{
	struct cuda_att *a = att;
	const struct dev_attention_shape *s = &a->s;
	struct att_shared *sh = shared(dev);
	size_t elems = (size_t)(s->b * s->h * s->t * s->dh);
	void *g[3] = {dq, dk, dv};
	int rc;
	if (!s->backward)
		return bd_fail(&dev->err, BD_EINVAL, "attention made for the forward only");
	if (a->convert) {
		if ((rc = dev->ops->convert(dev, sh->scr[SCR_DO], s->math, d_o, DTYPE_FLOAT32, elems)))
			return rc;
		q = a->q16;
		k = a->k16;
		v = a->v16;
		o = a->o16;
		d_o = sh->scr[SCR_DO];
		g[0] = sh->scr[SCR_DQ];
		g[1] = sh->scr[SCR_DK];
		g[2] = sh->scr[SCR_DV];
	}
	switch (a->impl) {
	case ATT_NAIVE:
		rc = naive_bwd(dev, a, q, k, v, d_o, g[0], g[1], g[2]);
		break;
	case ATT_FLASH:
		rc = 0;
		CUDA_TRY(dev, cuda_flash_bwd(&a->fs, q, k, v, o, lse, d_o, g[0], g[1], g[2],
					       sh->scr[SCR_WORK], cuda_dev_stream(dev)),
			   "flash attention backward");
		break;
	default: {
#ifdef BENCHDB_HAVE_CUDNN
		char why[512];
		rc = sdpa_plan_bwd(a->plan, sh->ctx, q, k, v, o, lse, d_o, g[0], g[1], g[2],
				   sh->scr[SCR_WORK], why, sizeof(why))
			     ? bd_fail(&dev->err, BD_EINVAL, "sdpa backward: %s", why) : 0;
#else
		rc = bd_fail(&dev->err, BD_EUNSUPPORTED, "sdpa: built without cuDNN");
#endif
	}
	}
	void *out[3] = {dq, dk, dv};
	for (int i = 0; i < 3 && !rc && a->convert; i++)
		rc = dev->ops->convert(dev, out[i], DTYPE_FLOAT32, g[i], s->math, elems);
	return rc;
}
