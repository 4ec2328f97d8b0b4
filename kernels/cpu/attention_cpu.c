/* kernels/cpu/attention_cpu.c: the naive attention (float32 and bfloat16) and the table of the
 * cpu's attention kernels (naive here, flash in attention_flash.c), which the cpu backend's
 * attention ops run (backend_cpu.c; the attention workload is workloads/attention.c). */
#include "attention_cpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "attention_kernel.h"
#include "bf16.h"
#include "impls.h"
#include "dnnl_wrap.h"
#include "ops_cpu.h"
#include "simd.h"
#include "simd_bf16.h"

#define F32 sizeof(float)
#define B16 sizeof(uint16_t)

/* mem_alloc_for n elements of one of a's buffers, named with the impl and the shape */
void *attention_cpu_alloc(struct attention_cpu *a, double n, size_t elem_size,
			  struct bd_error *err, const char *name)
{
	const struct attention_dims *d = &a->dims;
	return mem_alloc_for(a->mem, n * (double)elem_size, err, "%s attention %s for (B, H, S, "
			     "D) = (%lld, %lld, %lld, %lld)", a->kernel->name, name,
			     (long long)d->batch, (long long)d->heads, (long long)d->seq_len,
			     (long long)d->head_dim);
}

/* The products take a->math (ab_dtype) and write float32. */
static int naive_create(struct attention_cpu *a, struct bd_error *err)
{
	const struct attention_dims *d = &a->dims;
	int64_t heads = d->batch * d->heads, S = d->seq_len, D = d->head_dim;
	float scale = 1.0f / sqrtf((float)D);
	double scores = (double)heads * (double)S * (double)S, n = (double)(heads * S * D);
	enum bd_dtype ab = a->math;
	int bf16 = ab == DTYPE_BFLOAT16, rc;

	if (!(a->p = attention_cpu_alloc(a, scores, F32, err, bf16 ? "scores (B, H, S, S) float32"
								    : "P (B, H, S, S) float32")))
		return BD_ENOMEM;
	if (bf16 && (!(a->p16 = attention_cpu_alloc(a, scores, B16, err, "P (B, H, S, S) bfloat16")) ||
		     !(a->in16 = attention_cpu_alloc(a, (a->backward ? 4 : 3) * n, B16, err,
						     a->backward ? "Q, K, V, dO in bfloat16"
								 : "Q, K, V in bfloat16"))))
		return BD_ENOMEM;
	struct onednn_gemm_desc qk = {.batch = heads, .m = S, .n = S, .k = D, .trans_b = 1,
				      .alpha = scale, .ab_dtype = ab};
	struct onednn_gemm_desc pv = {.batch = heads, .m = S, .n = D, .k = S, .ab_dtype = ab};
	if ((rc = onednn_gemm_create(&a->qk, &qk, a->mem, err)) == BD_EUNSUPPORTED) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err->msg);
		return bd_fail(err, rc, "the cpu naive attention computes %s through oneDNN's "
			       "matmul: %s", dtype_name(ab), why);
	}
	if (rc < 0 || (rc = onednn_gemm_create(&a->pv, &pv, a->mem, err)) < 0)
		return rc;
	if (!a->backward)
		return 0;
	if ((bf16 ? !(a->ds16 = attention_cpu_alloc(a, scores, B16, err, "dS (B, H, S, S) bfloat16"))
		  : !(a->dp = attention_cpu_alloc(a, scores, F32, err, "dP (B, H, S, S) float32"))) ||
	    !(a->delta = attention_cpu_alloc(a, (double)(heads * S), F32, err,
					     "delta (B, H, S) float32")))
		return BD_ENOMEM;
	struct onednn_gemm_desc dv = {.batch = heads, .m = S, .n = D, .k = S, .trans_a = 1,
				      .ab_dtype = ab};
	struct onednn_gemm_desc dp = {.batch = heads, .m = S, .n = S, .k = D, .trans_b = 1,
				      .ab_dtype = ab};
	struct onednn_gemm_desc dq = {.batch = heads, .m = S, .n = D, .k = S, .alpha = scale,
				      .ab_dtype = ab};
	struct onednn_gemm_desc dk = {.batch = heads, .m = S, .n = D, .k = S, .trans_a = 1,
				      .alpha = scale, .ab_dtype = ab};
	if ((rc = onednn_gemm_create(&a->dv_mm, &dv, a->mem, err)) < 0 ||
	    (rc = onednn_gemm_create(&a->dp_mm, &dp, a->mem, err)) < 0 ||
	    (rc = onednn_gemm_create(&a->dq_mm, &dq, a->mem, err)) < 0 ||
	    (rc = onednn_gemm_create(&a->dk_mm, &dk, a->mem, err)) < 0)
		return rc;
	return 0;
}

static int flash_create(struct attention_cpu *a, struct bd_error *err)
{
	const struct attention_dims *d = &a->dims;
	struct flash_workspace *w = &a->ws;
	attention_flash_plan(w, d, omp_get_max_threads(), a->backward);
	char name[96];
	snprintf(name, sizeof(name), "per-thread tiles (%d threads x %zu floats)", w->nthreads,
		 w->thread_floats);
	if (!(w->tiles = attention_cpu_alloc(a, (double)w->nthreads * (double)w->thread_floats,
					     F32, err, name)))
		return BD_ENOMEM;
	if (!a->backward)
		return 0;
	snprintf(name, sizeof(name), "dQ partial sums (%d chunks x B x H x S x D rounded up)",
		 w->dq_chunks);
	if (!(w->dq_acc = attention_cpu_alloc(a, (double)w->dq_floats, F32, err, name)) ||
	    !(w->delta = attention_cpu_alloc(a, (double)(d->batch * d->heads * d->seq_len), F32,
					     err, "delta (B, H, S) float32")))
		return BD_ENOMEM;
	return 0;
}

static int naive_forward(struct attention_cpu *a, const float *q, const float *k, const float *v,
			 float *o, float *lse, struct bd_error *err);
static int naive_backward(struct attention_cpu *a, const float *q, const float *k,
			  const float *v, const float *o, const float *lse, const float *d_o,
			  float *dq, float *dk, float *dv, struct bd_error *err);

static int flash_forward(struct attention_cpu *a, const float *q, const float *k,
			 const float *v, float *o, float *lse, struct bd_error *err)
{
	(void)err;
	attention_flash_forward(&a->dims, &a->ws, q, k, v, o, lse);
	return 0;
}

static int flash_backward(struct attention_cpu *a, const float *q, const float *k,
			  const float *v, const float *o, const float *lse, const float *d_o,
			  float *dq, float *dk, float *dv, struct bd_error *err)
{
	(void)err;
	attention_flash_backward(&a->dims, &a->ws, q, k, v, o, lse, d_o, dq, dk, dv);
	return 0;
}

static const struct cpu_kernel naive_kernel = {"naive", 0, naive_create, naive_forward,
					       naive_backward, NULL, 1};
static const struct cpu_kernel flash_kernel = {"flash", 0, flash_create, flash_forward,
					       flash_backward, NULL, 0};

/* The cpu's attention kernels, by the names of the cpu table's attention rows (impls.c); a
 * kernel in a file of its own is declared here (attention_kernel.h). */
static const struct cpu_kernel *const kernels[] = {
	&naive_kernel,
	&flash_kernel,
};

int attention_cpu_create(struct attention_cpu **out, const char *impl,
			 const struct attention_dims *d, enum bd_dtype math, int backward,
			 struct mem_arena *mem, struct bd_error *err)
{
	struct attention_cpu *a = NULL;
	const struct cpu_kernel *kernel = NULL;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]) && !kernel; i++)
		if (!strcmp(kernels[i]->name, impl))
			kernel = kernels[i];
	if (!kernel) {
		char names[128];
		return bd_fail(err, BD_EUNSUPPORTED, "attention '%s' does not run on the cpu "
			       "(cpu: %s)", impl,
			       impl_list("attention", DEVICE_CPU, names, sizeof(names)));
	}
	if (d->batch <= 0 || d->heads <= 0 || d->seq_len <= 0 || d->head_dim <= 0)
		return bd_fail(err, BD_EINVAL, "attention sizes must be positive");
	if (math != DTYPE_FLOAT32 && math != DTYPE_BFLOAT16)
		return bd_fail(err, BD_EUNSUPPORTED, "the cpu attention computes in float32 or "
			       "bfloat16, not %s", dtype_name(math));
	a = mem_alloc(mem, sizeof(*a) + kernel->state_bytes);   /* zeroed, the kernel's state too */
	if (!a)
		return bd_fail(err, BD_ENOMEM, "cannot allocate %zu bytes of attention state",
			       sizeof(*a) + kernel->state_bytes);
	a->kernel = kernel;
	a->dims = *d;
	a->math = kernel->bf16_math ? math : DTYPE_FLOAT32;
	a->backward = backward;
	a->mem = mem;
	rc = kernel->create(a, err);
	if (rc < 0) {
		attention_cpu_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void attention_cpu_free(struct attention_cpu *a)
{
	if (!a)
		return;
	if (a->kernel->free)
		a->kernel->free(a);
	onednn_gemm_free(a->qk);
	onednn_gemm_free(a->pv);
	onednn_gemm_free(a->dv_mm);
	onednn_gemm_free(a->dp_mm);
	onednn_gemm_free(a->dq_mm);
	onednn_gemm_free(a->dk_mm);
	mem_free(a->mem, a->p);
	mem_free(a->mem, a->dp);
	mem_free(a->mem, a->p16);
	mem_free(a->mem, a->ds16);
	mem_free(a->mem, a->in16);
	mem_free(a->mem, a->delta);
	mem_free(a->mem, a->ws.tiles);
	mem_free(a->mem, a->ws.dq_acc);
	mem_free(a->mem, a->ws.delta);
	mem_free(a->mem, a);
}

/* Row x[0..S) holds scale·q·k for one query: replace x[0..n) by its softmax and zero x[n..S)
 * (the causal mask); with p16 not NULL, write those into p16[0..S) rounded to bfloat16 instead
 * (x then holds the exponentials). Returns the log-sum-exp of x[0..n). */
static float softmax_row(float *x, uint16_t *p16, int64_t n, int64_t S, int native)
{
	vfloat mv = vbroadcast(-INFINITY);
	int64_t j = 0;
	for (; j + VL <= n; j += VL)
		mv = vmax(mv, vload(x + j));
	float m = hmax(mv);
	for (; j < n; j++)
		m = x[j] > m ? x[j] : m;
	float m2 = m * LOG2E;
	vfloat sum = {0};
	for (j = 0; j + VL <= n; j += VL) {
		vfloat e = vexp2(vload(x + j) * LOG2E - m2);
		vstore(x + j, e);
		sum += e;
	}
	if (j < n) {             /* the tail through one padded vector; -inf gives 0 */
		float tail[VL];
		for (int t = 0; t < VL; t++)
			tail[t] = j + t < n ? x[j + t] : -INFINITY;
		vfloat e = vexp2(vload(tail) * LOG2E - m2);
		sum += e;
		vstore(tail, e);
		memcpy(x + j, tail, (size_t)(n - j) * sizeof(float));
	}
	float l = hsum(sum), inv = 1.0f / l;
	if (p16) {
		for (j = 0; j + VL <= n; j += VL) {
			vbf16 h = bf16_narrow(native, vload(x + j) * inv);
			memcpy(p16 + j, &h, sizeof(h));
		}
		for (; j < n; j++)
			p16[j] = bf16_from_float(x[j] * inv);
		memset(p16 + n, 0, (size_t)(S - n) * sizeof(uint16_t));
	} else {
		for (j = 0; j < n; j++)
			x[j] *= inv;
		memset(x + n, 0, (size_t)(S - n) * sizeof(float));
	}
	return m + logf(l);
}

/* Tensor i (0..3: Q, K, V, dO) of a bfloat16 naive, rounded from x into a->in16 when x is not
 * NULL; with x NULL, the copy the last call made. */
static const uint16_t *in16(struct attention_cpu *a, int i, const float *x)
{
	const struct attention_dims *d = &a->dims;
	size_t n = (size_t)(d->batch * d->heads * d->seq_len * d->head_dim);
	uint16_t *t = a->in16 + (size_t)i * n;
	if (x)
		cpu_convert(t, DTYPE_BFLOAT16, x, DTYPE_FLOAT32, n);
	return t;
}

static int naive_forward(struct attention_cpu *a, const float *q, const float *k, const float *v,
			 float *o, float *lse, struct bd_error *err)
{
	const struct attention_dims *d = &a->dims;
	int64_t S = d->seq_len, rows = d->batch * d->heads * S;
	int causal = d->causal, bf16 = a->math == DTYPE_BFLOAT16, native = simd_bf16_native();
	const void *qa = q, *ka = k, *va = v, *pa = a->p;
	if (bf16) {
		qa = in16(a, 0, q);
		ka = in16(a, 1, k);
		va = in16(a, 2, v);
		pa = a->p16;
	}
	int rc = onednn_gemm_execute(a->qk, qa, ka, a->p, err);
	if (rc < 0)
		return rc;
	float *p = a->p;
	uint16_t *p16 = a->p16;
#pragma omp parallel for schedule(static)
	for (int64_t r = 0; r < rows; r++) {
		int64_t i = r % S;
		lse[r] = softmax_row(p + r * S, bf16 ? p16 + r * S : NULL, causal ? i + 1 : S, S,
				     native);
	}
	return onednn_gemm_execute(a->pv, pa, va, o, err);
}

/* float32 math: ds[0..S) = p ⊙ (ds - delta) in place (dP in, dS out). */
static void ds_row_f32(const float *p, float *ds, int64_t S, float delta)
{
#pragma omp simd
	for (int64_t j = 0; j < S; j++)
		ds[j] = p[j] * (ds[j] - delta);
}

/* bfloat16 math: ds[0..S) = p ⊙ (dp - delta) rounded to bfloat16, zero from n on (where p is). */
static void ds_row_bf16(const uint16_t *p, const float *dp, uint16_t *ds, int64_t n, int64_t S,
			float delta, int native)
{
	int64_t j = 0;
	for (; j + VL <= n; j += VL) {
		vbf16 ph;
		memcpy(&ph, p + j, sizeof(ph));
		vbf16 h = bf16_narrow(native, bf16_widen(ph) * (vload(dp + j) - delta));
		memcpy(ds + j, &h, sizeof(h));
	}
	for (; j < n; j++)
		ds[j] = bf16_from_float(bf16_to_float(p[j]) * (dp[j] - delta));
	memset(ds + n, 0, (size_t)(S - n) * sizeof(uint16_t));
}

/* The products take P, dO, V, dS, K and Q in a->math; dP lands in a->dp (float32 math, then dS
 * in place) or in a->p (bfloat16 math: the scores are no longer needed, P is in a->p16). */
static int naive_backward(struct attention_cpu *a, const float *q, const float *k,
			  const float *v, const float *o, const float *lse, const float *d_o,
			  float *dq, float *dk, float *dv, struct bd_error *err)
{
	(void)lse;
	const struct attention_dims *d = &a->dims;
	int64_t S = d->seq_len, D = d->head_dim, rows = d->batch * d->heads * S;
	int causal = d->causal, bf16 = a->math == DTYPE_BFLOAT16, native = simd_bf16_native();
	const void *qa = q, *ka = k, *va = v, *doa = d_o, *pa = a->p, *dsa = a->dp;
	float *dp = a->dp;
	if (bf16) {           /* Q, K, V as the forward rounded them */
		qa = in16(a, 0, NULL);
		ka = in16(a, 1, NULL);
		va = in16(a, 2, NULL);
		doa = in16(a, 3, d_o);
		pa = a->p16;
		dsa = a->ds16;
		dp = a->p;
	}
	int rc;
	if ((rc = onednn_gemm_execute(a->dv_mm, pa, doa, dv, err)) < 0 ||
	    (rc = onednn_gemm_execute(a->dp_mm, doa, va, dp, err)) < 0)
		return rc;
	const float *p = a->p;
	const uint16_t *p16 = a->p16, *do16 = doa;
	uint16_t *ds16 = a->ds16;
	float *delta = a->delta;
#pragma omp parallel for schedule(static)
	for (int64_t r = 0; r < rows; r++) {
		/* Δ from the dO the products took, so that Σ_j P dS = 0 holds as in exact arithmetic
		 * (O is P V of the rounded P and V) */
		float s = 0;
		for (int64_t j = 0; j < D; j++)
			s += (bf16 ? bf16_to_float(do16[r * D + j]) : d_o[r * D + j]) * o[r * D + j];
		delta[r] = s;
		if (bf16)
			ds_row_bf16(p16 + r * S, dp + r * S, ds16 + r * S, causal ? r % S + 1 : S, S, s,
				    native);
		else
			ds_row_f32(p + r * S, dp + r * S, S, s);
	}
	if ((rc = onednn_gemm_execute(a->dq_mm, dsa, ka, dq, err)) < 0 ||
	    (rc = onednn_gemm_execute(a->dk_mm, dsa, qa, dk, err)) < 0)
		return rc;
	return 0;
}

int attention_cpu_forward(struct attention_cpu *a, const float *q, const float *k,
			  const float *v, float *o, float *lse, struct bd_error *err)
{
	return a->kernel->forward(a, q, k, v, o, lse, err);
}

int attention_cpu_backward(struct attention_cpu *a, const float *q, const float *k,
			   const float *v, const float *o, const float *lse, const float *d_o,
			   float *dq, float *dk, float *dv, struct bd_error *err)
{
	if (!a->backward)
		return bd_fail(err, BD_EINVAL, "attention state was made without backward buffers");
	return a->kernel->backward(a, q, k, v, o, lse, d_o, dq, dk, dv, err);
}
