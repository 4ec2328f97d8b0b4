/* kernels/cpu/backend_cpu.c: the CPU backend of the device-ops interface (kernels/dev/ops.h).
 *
 * Memory is host memory through the case's mem_arena; GEMMs are oneDNN matmul primitives
 * (dnnl_wrap.h) made on first use of a shape and kept until dev_close; attention is the naive or
 * flash CPU kernel (attention_cpu.h); everything else is ops_cpu.c. All calls are synchronous.
 *
 * gemm_pair (a layer's dW and dX, which read the same dY): with exactly two OpenMP threads and
 * bfloat16 operands, the two products run at once, one single-threaded primitive per thread,
 * instead of one after the other with oneDNN's split of each between the threads (whose uneven
 * halves leave a thread waiting: docs/performance.md, "dW beside dX"). BENCHDB_GEMM_PAIRS
 * chooses: auto (unset: as just said), off (never), on (with two threads, float32 too).
 *
 * Products of two matrices (not batched) are tuned: a contender is made beside the wrapper's
 * choice — float32: oneDNN's brgemm matmul beside gemm:jit; bfloat16: gemm:jit beside
 * oneDNN's first (brgemm) — and the first execution keeps the faster (dnnl_wrap.h, desc.tune),
 * since which is faster depends on the shape and the CPU (docs/performance.md, "float32: the
 * faster of two kernels, per shape", "bfloat16 too"). A pair's products are timed on one thread
 * each, as they run. BENCHDB_GEMM_TUNE chooses: auto (unset: tuned), off (each product on the
 * wrapper's choice, as before the tuning).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_cpu.h"
#include "dnnl_wrap.h"
#include "impls.h"
#include "ops.h"
#include "ops_cpu.h"

struct gemm_entry {
	struct dev_gemm key;
	int single_thread;       /* made for one thread, for a pair */
	struct onednn_gemm *gemm;
};

enum pairs_mode { PAIRS_AUTO, PAIRS_OFF, PAIRS_ON };
static const char *const pairs_names[] = {"auto", "off", "on"};

struct cpu_backend {
	struct gemm_entry *gemms;
	size_t ngemms, cap;
	enum pairs_mode pairs;   /* BENCHDB_GEMM_PAIRS */
	int tune_off;            /* BENCHDB_GEMM_TUNE=off */
	int64_t paired, unpaired; /* gemm_pair calls run at once, and one after the other */
	float *norm_work;        /* cpu_rmsnorm_bwd workspace */
	size_t norm_work_floats;
};

static struct cpu_backend *be(struct dev *dev) { return dev->impl; }

static void *cpu_alloc(struct dev *dev, size_t bytes)
{
	void *p = mem_alloc(dev->mem, bytes);
	if (!p)
		bd_fail(&dev->err, BD_ENOMEM, "allocating %zu bytes failed (%s)", bytes,
			dev->mem->limit > 0 && dev->mem->live + (int64_t)bytes > dev->mem->limit
				? "over the memory limit" : "the host is out of memory");
	return p;
}
static void cpu_free(struct dev *dev, void *p) { mem_free(dev->mem, p); }

static int cpu_copy(struct dev *dev, void *dst, const void *src, size_t bytes)
{
	(void)dev;
	memcpy(dst, src, bytes);
	return 0;
}

static int cpu_zero(struct dev *dev, void *p, size_t bytes)
{
	(void)dev;
	memset(p, 0, bytes);
	return 0;
}

static int cpu_sync(struct dev *dev)
{
	(void)dev;
	return 0;
}

static int same_gemm(const struct dev_gemm *a, const struct dev_gemm *b)
{
	return a->batch == b->batch && a->m == b->m && a->n == b->n && a->k == b->k &&
	       a->trans_a == b->trans_a && a->trans_b == b->trans_b && a->lda == b->lda &&
	       a->ldb == b->ldb && a->ldc == b->ldc && a->stride_a == b->stride_a &&
	       a->stride_b == b->stride_b && a->stride_c == b->stride_c &&
	       a->ab_dtype == b->ab_dtype && a->c_dtype == b->c_dtype && a->alpha == b->alpha &&
	       a->beta == b->beta;
}

/* The plan of g (made for one thread or for OpenMP's), made on first use. */
static int plan(struct dev *dev, const struct dev_gemm *g, int single_thread,
		struct onednn_gemm **out)
{
	struct cpu_backend *cb = be(dev);
	struct gemm_entry *e = NULL;
	for (size_t i = 0; i < cb->ngemms; i++)
		if (cb->gemms[i].single_thread == single_thread && same_gemm(&cb->gemms[i].key, g)) {
			e = &cb->gemms[i];
			break;
		}
	if (!e) {
		if (cb->ngemms == cb->cap) {
			size_t cap = cb->cap ? 2 * cb->cap : 16;
			struct gemm_entry *grown = realloc(cb->gemms, cap * sizeof(*grown));
			if (!grown)
				return bd_fail(&dev->err, BD_ENOMEM, "out of host memory for gemm plans");
			cb->gemms = grown;
			cb->cap = cap;
		}
		struct onednn_gemm_desc d = {
			.batch = g->batch, .m = g->m, .n = g->n, .k = g->k, .trans_a = g->trans_a,
			.trans_b = g->trans_b, .lda = g->lda, .ldb = g->ldb, .ldc = g->ldc,
			.stride_a = g->stride_a, .stride_b = g->stride_b, .stride_c = g->stride_c,
			.ab_dtype = g->ab_dtype, .c_dtype = g->c_dtype, .alpha = g->alpha,
			.beta = g->beta, .single_thread = single_thread, .tune = !cb->tune_off};
		struct onednn_gemm *made = NULL;
		int rc = onednn_gemm_create(&made, &d, dev->mem, &dev->err);
		if (rc)
			return rc;
		e = &cb->gemms[cb->ngemms++];
		e->key = *g;
		e->single_thread = single_thread;
		e->gemm = made;
	}
	*out = e->gemm;
	return 0;
}

static int cpu_gemm(struct dev *dev, const struct dev_gemm *g, const void *a, const void *b,
		    void *c)
{
	struct onednn_gemm *p = NULL;
	int rc = plan(dev, g, 0, &p);
	return rc ? rc : onednn_gemm_execute(p, a, b, c, &dev->err);
}

/* Whether g0 and g1 run at once: see the top of the file. Measured on the model's backward
 * products with two threads: bfloat16 1.05-1.16x, float32 0.96-1.05x; more threads than two
 * would need a team per product, which oneDNN's OpenMP build cannot be given. */
static int pair_wanted(const struct cpu_backend *cb, const struct dev_gemm *g0,
		       const struct dev_gemm *g1)
{
	if (cb->pairs == PAIRS_OFF || omp_in_parallel() || omp_get_max_threads() != 2 ||
	    same_gemm(g0, g1))
		return 0;
	return cb->pairs == PAIRS_ON ||
	       (g0->ab_dtype == DTYPE_BFLOAT16 && g1->ab_dtype == DTYPE_BFLOAT16);
}

static int cpu_gemm_pair(struct dev *dev, const struct dev_gemm *g0, const void *a0,
			 const void *b0, void *c0, const struct dev_gemm *g1, const void *a1,
			 const void *b1, void *c1)
{
	struct cpu_backend *cb = be(dev);
	struct onednn_gemm *p0 = NULL, *p1 = NULL;
	int rc;
	if (!pair_wanted(cb, g0, g1)) {
		cb->unpaired++;
		if ((rc = cpu_gemm(dev, g0, a0, b0, c0)))
			return rc;
		return cpu_gemm(dev, g1, a1, b1, c1);
	}
	if ((rc = plan(dev, g0, 1, &p0)) || (rc = plan(dev, g1, 1, &p1)))
		return rc;
	cb->paired++;
	return onednn_gemm_execute_pair(p0, a0, b0, c0, p1, a1, b1, c1, &dev->err);
}

/* One tuned product that kept the contender, after ", " when listed: "m x n x k" with the
 * transposed operands, "(1 thread)" for one of a pair, and the fraction of the other's time the
 * kept one took, e.g. "1024x768x3072 B^T 0.80". */
static int describe_switched(char *one, size_t n, const struct gemm_entry *e, int listed)
{
	const struct dev_gemm *g = &e->key;
	const struct onednn_gemm_tuning *t = onednn_gemm_tuning(e->gemm);
	return snprintf(one, n, "%s %lldx%lldx%lld%s%s%s %.2f", listed ? "," : "",
			(long long)g->m, (long long)g->n, (long long)g->k, g->trans_a ? " A^T" : "",
			g->trans_b ? " B^T" : "", e->single_thread ? " (1 thread)" : "",
			t->other_s > 0 ? t->kept_s / t->other_s : 0.0);
}

/* The tuned products (BENCHDB_GEMM_TUNE) as JSON members, after ", ": how many were timed, in
 * which dtypes, how many of them while the process waited for a CPU (the choice kept), and
 * per implementation kept over the wrapper's choice the products that kept it
 * (describe_switched), then the setting; "none timed" where products of two matrices ran
 * and none had a contender (or the memory limit left no room to time it); with the setting
 * off, the setting alone where such a product ran; "" when none did. Products that do not fit
 * in n are counted, not listed. */
static void describe_tuning(const struct cpu_backend *cb, char *buf, size_t n)
{
	size_t timed = 0, moved = 0, listed = 0, singles = 0, contended = 0;
	int dtypes = 0;   /* 1: float32 timed, 2: bfloat16 */
	for (size_t i = 0; i < cb->ngemms; i++) {
		const struct onednn_gemm_tuning *t = onednn_gemm_tuning(cb->gemms[i].gemm);
		const struct dev_gemm *g = &cb->gemms[i].key;
		singles += g->batch <= 1;
		if (t->tuned) {
			timed++;
			contended += t->contended != 0;
			dtypes |= g->ab_dtype == DTYPE_BFLOAT16 ? 2 : 1;
		}
		moved += t->switched != 0;
	}
	buf[0] = '\0';
	if (n < 200)
		return;
	if (cb->tune_off && singles) {
		snprintf(buf, n, ", \"gemm_tuning\": \"off\"");
		return;
	}
	if (!timed) {   /* products ran, none had a contender to time or room to time it */
		if (singles)
			snprintf(buf, n, ", \"gemm_tuned\": \"none timed\", \"gemm_tuning\": \"auto\"");
		return;
	}
	static const char *const dtype_names[] = {"", "float32 ", "bfloat16 ",
						  "float32 and bfloat16 "};
	size_t len = (size_t)snprintf(buf, n, ", \"gemm_tuned\": \"%zu %sshape%s timed", timed,
				      dtype_names[dtypes], timed == 1 ? "" : "s");
	if (contended)   /* n >= 200: room for it */
		len += (size_t)snprintf(buf + len, n - len, ", %zu while the process waited for a "
					"CPU (the choice kept)", contended);
	/* each implementation kept, at its first product that kept it, with all that did */
	for (size_t i = 0; i < cb->ngemms && listed < moved; i++) {
		const struct onednn_gemm_tuning *ti = onednn_gemm_tuning(cb->gemms[i].gemm);
		size_t first = i, count = 0;
		if (!ti->switched)
			continue;
		for (size_t j = 0; j < cb->ngemms; j++) {
			const struct onednn_gemm_tuning *tj = onednn_gemm_tuning(cb->gemms[j].gemm);
			if (tj->switched && !strcmp(tj->kept, ti->kept)) {
				first = j < first ? j : first;
				count++;
			}
		}
		if (first != i)   /* listed with its first */
			continue;
		if (len + 160 >= n)   /* room for a name, " and N more" and the setting */
			break;
		len += (size_t)snprintf(buf + len, n - len, "; %s kept for %zu:", ti->kept, count);
		size_t here = 0;
		for (size_t j = i; j < cb->ngemms; j++) {
			const struct onednn_gemm_tuning *tj = onednn_gemm_tuning(cb->gemms[j].gemm);
			if (!tj->switched || strcmp(tj->kept, ti->kept))
				continue;
			char one[128];
			int w = describe_switched(one, sizeof(one), &cb->gemms[j], here > 0);
			if (w < 0 || (size_t)w >= sizeof(one) || len + (size_t)w + 120 >= n)
				break;
			memcpy(buf + len, one, (size_t)w + 1);
			len += (size_t)w;
			here++;
		}
		if (here < count)
			len += (size_t)snprintf(buf + len, n - len, " and %zu more", count - here);
		listed += count;
	}
	if (listed < moved)
		len += (size_t)snprintf(buf + len, n - len, "; %zu more kept the other", moved - listed);
	snprintf(buf + len, n - len, "\", \"gemm_tuning\": \"auto\"");
}

static void cpu_describe(struct dev *dev, char *buf, size_t n)
{
	const struct cpu_backend *cb = be(dev);
	char tuning[1024];
	describe_tuning(cb, tuning, sizeof(tuning));
	if (!cb->paired && !cb->unpaired) {
		/* without its leading ", " */
		snprintf(buf, n, "%s", tuning[0] ? tuning + 2 : "");
		return;
	}
	snprintf(buf, n, "\"gemm_pairs\": \"%s\", \"gemm_pairs_setting\": \"%s\"%s",
		 cb->paired && cb->unpaired ? "some at once" :
		 cb->paired ? "at once, one thread each" : "one after the other",
		 pairs_names[cb->pairs], tuning);
}

static int cpu_convert_op(struct dev *dev, void *dst, enum bd_dtype dst_dtype, const void *src,
			  enum bd_dtype src_dtype, size_t count)
{
	(void)dev;
	cpu_convert(dst, dst_dtype, src, src_dtype, count);
	return 0;
}

static int cpu_embedding_fwd_op(struct dev *dev, const int32_t *tokens, const float *table,
				float *out, int64_t n, int64_t d)
{
	(void)dev;
	cpu_embedding_fwd(tokens, table, out, n, d);
	return 0;
}

static int cpu_embedding_bwd_op(struct dev *dev, const int32_t *tokens, const float *dout,
				float *dtable, int64_t n, int64_t d)
{
	(void)dev;
	cpu_embedding_bwd(tokens, dout, dtable, n, d);
	return 0;
}

static int cpu_rmsnorm_fwd_op(struct dev *dev, const float *x, const float *g, void *y,
			      enum bd_dtype y_dtype, float *rstd, int64_t n, int64_t d, float eps)
{
	(void)dev;
	cpu_rmsnorm_fwd(x, g, y, y_dtype, rstd, n, d, eps);
	return 0;
}

static int cpu_residual_rmsnorm_fwd_op(struct dev *dev, const float *x, const float *y,
				       float *x_out, const float *g, void *h, enum bd_dtype h_dtype,
				       float *rstd, int64_t n, int64_t d, float eps)
{
	(void)dev;
	cpu_residual_rmsnorm_fwd(x, y, x_out, g, h, h_dtype, rstd, n, d, eps);
	return 0;
}

static int cpu_rmsnorm_bwd_op(struct dev *dev, const float *dy, const float *x, const float *g,
			      const float *rstd, float *dx, float *dg, int64_t n, int64_t d)
{
	struct cpu_backend *cb = be(dev);
	size_t need = cpu_rmsnorm_bwd_work(d);
	if (need > cb->norm_work_floats) {
		/* first backward of this width: the workspace is kept (and counted) until dev_close */
		mem_free(dev->mem, cb->norm_work);
		cb->norm_work_floats = 0;
		if (!(cb->norm_work = mem_alloc(dev->mem, need * sizeof(float))))
			return bd_fail(&dev->err, BD_ENOMEM,
				       "allocating the rmsnorm workspace (%zu bytes) exceeds the "
				       "memory limit", need * sizeof(float));
		cb->norm_work_floats = need;
	}
	cpu_rmsnorm_bwd(dy, x, g, rstd, dx, dg, n, d, cb->norm_work);
	return 0;
}

static int cpu_heads_split_op(struct dev *dev, const void *in, enum bd_dtype in_dtype, int64_t ld,
			      float *out, const float *rope_table, int64_t b, int64_t t, int64_t h,
			      int64_t dh)
{
	(void)dev;
	cpu_heads_split(in, in_dtype, ld, out, rope_table, b, t, h, dh);
	return 0;
}

static int cpu_heads_merge_op(struct dev *dev, const float *in, void *out, enum bd_dtype out_dtype,
			      int64_t ld, const float *rope_table, int64_t b, int64_t t, int64_t h,
			      int64_t dh)
{
	(void)dev;
	cpu_heads_merge(in, out, out_dtype, ld, rope_table, b, t, h, dh);
	return 0;
}

static int cpu_swiglu_fwd_op(struct dev *dev, const void *u, void *out, enum bd_dtype dtype,
			     int64_t n, int64_t f)
{
	(void)dev;
	cpu_swiglu_fwd(u, out, dtype, n, f);
	return 0;
}

static int cpu_swiglu_bwd_op(struct dev *dev, const void *u, const void *dout, void *du,
			     enum bd_dtype dtype, int64_t n, int64_t f)
{
	(void)dev;
	cpu_swiglu_bwd(u, dout, du, dtype, n, f);
	return 0;
}

static int cpu_xent_fwd_op(struct dev *dev, const float *logits, const int32_t *targets,
			   float *lse, float *loss, int64_t n, int64_t V)
{
	(void)dev;
	*loss = (float)cpu_xent_fwd(logits, targets, lse, n, V);
	return 0;
}

static int cpu_xent_bwd_op(struct dev *dev, const float *logits, const float *lse,
			   const int32_t *targets, void *dlogits, enum bd_dtype dtype, int64_t n,
			   int64_t V, float scale)
{
	(void)dev;
	cpu_xent_bwd(logits, lse, targets, dlogits, dtype, n, V, scale);
	return 0;
}

static int cpu_adamw_op(struct dev *dev, float *p, const float *g, float *m, float *v,
			uint16_t *p_bf16, size_t count, const struct adamw_params *hp, int64_t step)
{
	(void)dev;
	cpu_adamw(p, g, m, v, p_bf16, count, hp, step);
	return 0;
}

static int cpu_attention_create(struct dev *dev, void **att, const char *impl,
				const struct dev_attention_shape *s)
{
	*att = NULL;
	char names[128];
	if (!impl_runs_on("attention", impl, DEVICE_CPU))
		return bd_fail(&dev->err, BD_EUNSUPPORTED, "attention '%s' does not run on the cpu "
			       "(cpu: %s)", impl, impl_list("attention", DEVICE_CPU, names, sizeof(names)));
	if (s->io != DTYPE_FLOAT32) {
		return bd_fail(&dev->err, BD_EUNSUPPORTED, "the cpu attention takes float32 tensors, not %s",
			       dtype_name(s->io));
	}
	struct attention_dims d = {.batch = s->b, .heads = s->h, .seq_len = s->t,
				   .head_dim = s->dh, .causal = s->causal};
	struct attention_cpu *a = NULL;
	int rc = attention_cpu_create(&a, impl, &d, s->math, s->backward, dev->mem, &dev->err);
	*att = a;
	return rc;
}

static int cpu_attention_fwd(struct dev *dev, void *att, const void *q, const void *k,
			     const void *v, void *o, float *lse)
{
	return attention_cpu_forward(att, q, k, v, o, lse, &dev->err);
}

static int cpu_attention_bwd(struct dev *dev, void *att, const void *q, const void *k,
			     const void *v, const void *o, const float *lse, const void *d_o,
			     void *dq, void *dk, void *dv)
{
	return attention_cpu_backward(att, q, k, v, o, lse, d_o, dq, dk, dv, &dev->err);
}

static void cpu_attention_free(struct dev *dev, void *att)
{
	(void)dev;
	attention_cpu_free(att);
}

static void cpu_release(struct dev *dev)
{
	struct cpu_backend *cb = be(dev);
	if (!cb)
		return;
	for (size_t i = 0; i < cb->ngemms; i++)
		onednn_gemm_free(cb->gemms[i].gemm);
	free(cb->gemms);
	mem_free(dev->mem, cb->norm_work);
	free(cb);
	dev->impl = NULL;
}

static const struct dev_ops cpu_ops = {
	.name = "cpu",
	.alloc = cpu_alloc,
	.free = cpu_free,
	.upload = cpu_copy,
	.download = cpu_copy,
	.copy = cpu_copy,
	.zero = cpu_zero,
	.sync = cpu_sync,
	.gemm = cpu_gemm,
	.gemm_pair = cpu_gemm_pair,
	.describe = cpu_describe,
	.convert = cpu_convert_op,
	.embedding_fwd = cpu_embedding_fwd_op,
	.embedding_bwd = cpu_embedding_bwd_op,
	.rmsnorm_fwd = cpu_rmsnorm_fwd_op,
	.residual_rmsnorm_fwd = cpu_residual_rmsnorm_fwd_op,
	.rmsnorm_bwd = cpu_rmsnorm_bwd_op,
	.heads_split = cpu_heads_split_op,
	.heads_merge = cpu_heads_merge_op,
	.swiglu_fwd = cpu_swiglu_fwd_op,
	.swiglu_bwd = cpu_swiglu_bwd_op,
	.xent_fwd = cpu_xent_fwd_op,
	.xent_bwd = cpu_xent_bwd_op,
	.adamw = cpu_adamw_op,
	.attention_create = cpu_attention_create,
	.attention_fwd = cpu_attention_fwd,
	.attention_bwd = cpu_attention_bwd,
	.attention_free = cpu_attention_free,
	.release = cpu_release,
};

static int cpu_open(struct dev *dev, struct mem_arena *mem, struct bd_error *err)
{
	memset(dev, 0, sizeof(*dev));
	struct cpu_backend *cb = calloc(1, sizeof(*cb));
	if (!cb)
		return bd_fail(err, BD_ENOMEM, "out of host memory");
	const char *pairs = getenv("BENCHDB_GEMM_PAIRS");
	if (pairs && *pairs) {
		size_t i = 0;
		while (i < 3 && strcmp(pairs, pairs_names[i]))
			i++;
		if (i == 3) {
			free(cb);
			return bd_fail(err, BD_EINVAL, "environment variable BENCHDB_GEMM_PAIRS is "
				       "\"%s\": expected auto, off or on", pairs);
		}
		cb->pairs = (enum pairs_mode)i;
	}
	const char *tune = getenv("BENCHDB_GEMM_TUNE");
	if (tune && *tune) {
		if (strcmp(tune, "auto") && strcmp(tune, "off")) {
			free(cb);
			return bd_fail(err, BD_EINVAL, "environment variable BENCHDB_GEMM_TUNE is "
				       "\"%s\": expected auto or off", tune);
		}
		cb->tune_off = !strcmp(tune, "off");
	}
	dev->ops = &cpu_ops;
	dev->mem = mem;
	dev->impl = cb;
	return 0;
}

/* oneDNN's matmul computes float32 in float32, and bfloat16 only where the CPU has it natively. */
static int cpu_gemm_supported(enum bd_dtype ab_dtype, int tf32, struct bd_error *err)
{
	if (tf32)
		return bd_fail(err, BD_EUNSUPPORTED, "tf32 is a CUDA GEMM mode; the cpu backend "
			       "computes float32 GEMMs in float32 (set tf32: false)");
	return ab_dtype == DTYPE_BFLOAT16 ? onednn_gemm_supported(ab_dtype, err) : 0;
}

const struct dev_backend dev_cpu_backend = {
	.device = DEVICE_CPU,
	.async = 0,
	.host_memory = 1,
	.open = cpu_open,
	.gemm_supported = cpu_gemm_supported,
};
