/* kernels/cpu/attention_cpu.c: the naive float32 attention and the table of the cpu's attention
 * kernels (naive here, flash in attention_flash.c), which the cpu backend's attention ops run
 * (backend_cpu.c; the attention workload is workloads/attention.c). */
#include "attention_cpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "attention_kernel.h"
#include "impls.h"
#include "dnnl_wrap.h"
#include "simd.h"

/* mem_alloc_for n floats of one of a's buffers, named with the impl and the shape */
float *attention_cpu_alloc(struct attention_cpu *a, double n, struct bd_error *err,
			   const char *name)
{
	const struct attention_dims *d = &a->dims;
	return mem_alloc_for(a->mem, n * (double)sizeof(float), err, "%s attention %s for (B, H, S, "
			     "D) = (%lld, %lld, %lld, %lld)", a->kernel->name, name,
			     (long long)d->batch, (long long)d->heads, (long long)d->seq_len,
			     (long long)d->head_dim);
}

static int naive_create(struct attention_cpu *a, struct bd_error *err)
{
	const struct attention_dims *d = &a->dims;
	int64_t heads = d->batch * d->heads, S = d->seq_len, D = d->head_dim;
	float scale = 1.0f / sqrtf((float)D);
	double scores = (double)heads * (double)S * (double)S;
	int rc;

	if (!(a->p = attention_cpu_alloc(a, scores, err, "P (B, H, S, S) float32")))
		return BD_ENOMEM;
	struct onednn_gemm_desc qk = {.batch = heads, .m = S, .n = S, .k = D, .trans_b = 1,
				      .alpha = scale};
	struct onednn_gemm_desc pv = {.batch = heads, .m = S, .n = D, .k = S};
	if ((rc = onednn_gemm_create(&a->qk, &qk, a->mem, err)) < 0 ||
	    (rc = onednn_gemm_create(&a->pv, &pv, a->mem, err)) < 0)
		return rc;
	if (!a->backward)
		return 0;
	if (!(a->dp = attention_cpu_alloc(a, scores, err, "dP (B, H, S, S) float32")) ||
	    !(a->delta = attention_cpu_alloc(a, (double)(heads * S), err, "delta (B, H, S) float32")))
		return BD_ENOMEM;
	struct onednn_gemm_desc dv = {.batch = heads, .m = S, .n = D, .k = S, .trans_a = 1};
	struct onednn_gemm_desc dp = {.batch = heads, .m = S, .n = S, .k = D, .trans_b = 1};
	struct onednn_gemm_desc dq = {.batch = heads, .m = S, .n = D, .k = S, .alpha = scale};
	struct onednn_gemm_desc dk = {.batch = heads, .m = S, .n = D, .k = S, .trans_a = 1,
				      .alpha = scale};
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
	if (!(w->tiles = attention_cpu_alloc(a, (double)w->nthreads * (double)w->thread_floats, err,
				       name)))
		return BD_ENOMEM;
	if (!a->backward)
		return 0;
	snprintf(name, sizeof(name), "dQ partial sums (%d chunks x B x H x S x D rounded up)",
		 w->dq_chunks);
	if (!(w->dq_acc = attention_cpu_alloc(a, (double)w->dq_floats, err, name)) ||
	    !(w->delta = attention_cpu_alloc(a, (double)(d->batch * d->heads * d->seq_len), err,
				       "delta (B, H, S) float32")))
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
					       naive_backward, NULL};
static const struct cpu_kernel flash_kernel = {"flash", 0, flash_create, flash_forward,
					       flash_backward, NULL};

/* The cpu's attention kernels, by the names of the cpu table's attention rows (impls.c); a
 * kernel in a file of its own is declared here (attention_kernel.h). */
static const struct cpu_kernel *const kernels[] = {
	&naive_kernel,
	&flash_kernel,
};

int attention_cpu_create(struct attention_cpu **out, const char *impl,
			 const struct attention_dims *d, int backward, struct mem_arena *mem,
			 struct bd_error *err)
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
	a = mem_alloc(mem, sizeof(*a) + kernel->state_bytes);   /* zeroed, the kernel's state too */
	if (!a)
		return bd_fail(err, BD_ENOMEM, "cannot allocate %zu bytes of attention state",
			       sizeof(*a) + kernel->state_bytes);
	a->kernel = kernel;
	a->dims = *d;
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
	mem_free(a->mem, a->delta);
	mem_free(a->mem, a->ws.tiles);
	mem_free(a->mem, a->ws.dq_acc);
	mem_free(a->mem, a->ws.delta);
	mem_free(a->mem, a);
}

/* Row x[0..S) holds scale·q·k for one query: replace x[0..n) by its softmax and zero x[n..S)
 * (the causal mask). Returns the log-sum-exp of x[0..n). */
static float softmax_row(float *x, int64_t n, int64_t S)
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
	for (j = 0; j < n; j++)
		x[j] *= inv;
	memset(x + n, 0, (size_t)(S - n) * sizeof(float));
	return m + logf(l);
}

static int naive_forward(struct attention_cpu *a, const float *q, const float *k, const float *v,
			 float *o, float *lse, struct bd_error *err)
{
	const struct attention_dims *d = &a->dims;
	int64_t S = d->seq_len, rows = d->batch * d->heads * S;
	int causal = d->causal;
	int rc = onednn_gemm_execute(a->qk, q, k, a->p, err);
	if (rc < 0)
		return rc;
	float *p = a->p;
#pragma omp parallel for schedule(static)
	for (int64_t r = 0; r < rows; r++) {
		int64_t i = r % S;
		lse[r] = softmax_row(p + r * S, causal ? i + 1 : S, S);
	}
	return onednn_gemm_execute(a->pv, a->p, v, o, err);
}

static int naive_backward(struct attention_cpu *a, const float *q, const float *k,
			  const float *v, const float *o, const float *lse, const float *d_o,
			  float *dq, float *dk, float *dv, struct bd_error *err)
{
	(void)lse;
	const struct attention_dims *d = &a->dims;
	int64_t S = d->seq_len, D = d->head_dim, rows = d->batch * d->heads * S;
	int rc;
	if ((rc = onednn_gemm_execute(a->dv_mm, a->p, d_o, dv, err)) < 0 ||
	    (rc = onednn_gemm_execute(a->dp_mm, d_o, v, a->dp, err)) < 0)
		return rc;
	const float *p = a->p;
	float *ds = a->dp, *delta = a->delta;
#pragma omp parallel for schedule(static)
	for (int64_t r = 0; r < rows; r++) {
		float s = 0;
		for (int64_t j = 0; j < D; j++)
			s += d_o[r * D + j] * o[r * D + j];
		delta[r] = s;
		const float *p_row = p + r * S;
		float *ds_row = ds + r * S;
#pragma omp simd
		for (int64_t j = 0; j < S; j++)
			ds_row[j] = p_row[j] * (ds_row[j] - s);
	}
	if ((rc = onednn_gemm_execute(a->dq_mm, a->dp, k, dq, err)) < 0 ||
	    (rc = onednn_gemm_execute(a->dk_mm, a->dp, q, dk, err)) < 0)
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
