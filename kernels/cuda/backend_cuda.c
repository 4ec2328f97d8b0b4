/* kernels/cuda/backend_cuda.c: the CUDA backend of the device-ops interface (kernels/dev/ops.h).
 *
 *  - One stream per backend; every op is enqueued on it and returns without waiting, except
 *    download and sync. Events on that stream time the phases (mark/elapsed), each start event
 *    behind a short device-side delay (see "timing" below).
 *  - Memory: cudaMalloc per buffer, counted in the case's mem_arena (live, peak, limit) with
 *    the exact bytes asked for; a refusal by the limit or by the GPU is BD_ENOMEM with the bytes
 *    requested and the GPU's free memory. Nothing is allocated inside a phase: the cuBLASLt
 *    workspace, the RMSNorm partial sums and the attention scratch are made before timing.
 *  - GEMMs: cuBLASLt, one plan (descriptors + heuristic algorithm) per distinct dev_gemm, TF32
 *    setting and operand alignment, kept until dev_close. Row-major C = op(A)·op(B) is run as
 *    the column-major C^T = op(B)^T·op(A)^T, so no operand is copied. bfloat16 and float16 inputs
 *    accumulate in float32; float32 inputs use CUBLAS_COMPUTE_32F, or _FAST_TF32 when dev->tf32.
 *  - Attention (naive, flash, cuDNN SDPA) is attention_cuda.c, over this file's ops.
 *  - NVTX ranges through range_push/range_pop (nvtx3, header-only).
 * A CUDA error inside a kernel (an illegal address, say) leaves the CUDA context unusable for
 * the rest of the process; it is reported as the failing op's error.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "backend_cuda.h"
#include "cuda_info.h"
#include "cuda_kernels.h"
#include "ops.h"

#define LT_WORKSPACE_BYTES ((size_t)32 << 20)   /* Hopper's recommended cuBLASLt workspace */

struct block {
	void *p;
	size_t bytes;
};

struct gemm_plan {
	struct dev_gemm key;
	int tf32;
	unsigned align_a, align_b, align_c;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;   /* of the column-major call: B, A, C */
	cublasLtMatmulAlgo_t algo;
	size_t workspace;
};

struct cuda_backend {
	cudaStream_t stream;
	cublasLtHandle_t lt;
	void *lt_work;
	cudaEvent_t ev[DEV_TIMER_SLOTS];
	struct block *blocks;
	size_t nblocks, cap_blocks;
	struct gemm_plan *plans;
	size_t nplans, cap_plans;
	float *norm_work;
	size_t norm_work_floats;
	void *att_shared;            /* attention_cuda.c's scratch, plan cache and cuDNN handle */
	/* the timing delay (cuda_mark) */
	double clock_khz;                        /* the SMs' peak clock: cycles per µs × 1000 */
	int64_t fixed_delay_ns;                  /* BENCHDB_CUDA_TIMING_DELAY_US, or -1: adaptive */
	int64_t start_host_ns[DEV_TIMER_SLOTS];  /* host clock after each start mark; 0 none */
	int64_t enqueue_ns[DEV_TIMER_SLOTS / 2]; /* host time between a pair's marks; -1 none yet */
};

static struct cuda_backend *be(struct dev *dev) { return dev->impl; }

cudaStream_t cuda_dev_stream(struct dev *dev) { return be(dev)->stream; }

int64_t cuda_dev_timing_delay_fixed_ns(struct dev *dev) { return be(dev)->fixed_delay_ns; }

void **cuda_dev_attention_shared(struct dev *dev) { return &be(dev)->att_shared; }

/* file without its directories, for the messages */
static const char *base_name(const char *file)
{
	const char *slash = strrchr(file, '/');
	return slash ? slash + 1 : file;
}

int cuda_fail_at(struct dev *dev, cudaError_t e, const char *what, const char *file, int line)
{
	cudaGetLastError();   /* clears a non-sticky error */
	return bd_fail(&dev->err, e == cudaErrorMemoryAllocation ? BD_ENOMEM : BD_EINVAL,
		       "cuda: %s: %s (%s) at %s:%d", what, cudaGetErrorString(e), cudaGetErrorName(e),
		       base_name(file), line);
}

static int lt_fail(struct dev *dev, cublasStatus_t s, const char *what, const char *file, int line)
{
	return bd_fail(&dev->err, s == CUBLAS_STATUS_ALLOC_FAILED ? BD_ENOMEM : BD_EINVAL,
		       "cublasLt: %s: %s (%d) at %s:%d", what, cublasLtGetStatusString(s), (int)s,
		       base_name(file), line);
}

/* Return lt_fail's rc, with the file and line of the call, when call fails. */
#define LT_TRY(dev, call, what)                                                              \
	do {                                                                                 \
		cublasStatus_t s_ = (call);                                                  \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                             \
			return lt_fail((dev), s_, (what), __FILE__, __LINE__);               \
	} while (0)

/* ---- memory --------------------------------------------------------------------------------- */

static void *cuda_alloc(struct dev *dev, size_t bytes)
{
	struct cuda_backend *cb = be(dev);
	if (cb->nblocks == cb->cap_blocks) {
		size_t cap = cb->cap_blocks ? 2 * cb->cap_blocks : 64;
		struct block *grown = realloc(cb->blocks, cap * sizeof(*grown));
		if (!grown) {
			bd_fail(&dev->err, BD_ENOMEM, "out of host memory for the block table");
			return NULL;
		}
		cb->blocks = grown;
		cb->cap_blocks = cap;
	}
	int64_t peak = dev->mem->peak;
	if (mem_charge(dev->mem, bytes)) {
		bd_fail(&dev->err, BD_ENOMEM, "allocating %zu bytes would exceed the memory limit "
			"(%lld bytes in use, limit %lld)", bytes, (long long)dev->mem->live,
			(long long)dev->mem->limit);
		return NULL;
	}
	void *p = NULL;
	/* cudaMalloc(0) gives NULL, which would read as a refusal */
	cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(p, 0, bytes, cb->stream);
	if (e != cudaSuccess) {
		cudaGetLastError();
		if (p)
			cudaFree(p);
		mem_uncharge(dev->mem, bytes);
		dev->mem->peak = peak;
		if (e != cudaErrorMemoryAllocation) {
			/* not a refusal: the context is broken (an earlier kernel fault, say) */
			bd_fail(&dev->err, BD_EINVAL, "cudaMalloc of %zu bytes failed: %s (%s)", bytes,
				cudaGetErrorString(e), cudaGetErrorName(e));
			return NULL;
		}
		mem_refused(dev->mem, bytes);
		size_t free_b = 0, total_b = 0;
		cudaMemGetInfo(&free_b, &total_b);
		cudaGetLastError();
		bd_fail(&dev->err, BD_ENOMEM, "cudaMalloc of %zu bytes failed: %s (the GPU has %zu of "
			"%zu bytes free; this case holds %lld)", bytes, cudaGetErrorString(e), free_b,
			total_b, (long long)dev->mem->live);
		return NULL;
	}
	cb->blocks[cb->nblocks++] = (struct block){p, bytes};
	return p;
}

static void cuda_free_op(struct dev *dev, void *p)
{
	struct cuda_backend *cb = be(dev);
	if (!p)
		return;
	for (size_t i = cb->nblocks; i-- > 0;)
		if (cb->blocks[i].p == p) {
			mem_uncharge(dev->mem, cb->blocks[i].bytes);
			cb->blocks[i] = cb->blocks[--cb->nblocks];
			cudaFree(p);   /* waits for the work in flight that may use p */
			cudaGetLastError();
			return;
		}
}

static int cuda_upload(struct dev *dev, void *dst, const void *host_src, size_t bytes)
{
	/* from pageable memory: returns once host_src has been staged */
	CUDA_TRY(dev, cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, be(dev)->stream),
		 "upload (cudaMemcpyAsync)");
	return 0;
}

static int cuda_download(struct dev *dev, void *host_dst, const void *src, size_t bytes)
{
	struct cuda_backend *cb = be(dev);
	CUDA_TRY(dev, cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, cb->stream),
		 "download (cudaMemcpyAsync)");
	CUDA_TRY(dev, cudaStreamSynchronize(cb->stream), "download (cudaStreamSynchronize)");
	return 0;
}

static int cuda_copy(struct dev *dev, void *dst, const void *src, size_t bytes)
{
	CUDA_TRY(dev, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, be(dev)->stream),
		 "copy (cudaMemcpyAsync)");
	return 0;
}

static int cuda_zero(struct dev *dev, void *p, size_t bytes)
{
	CUDA_TRY(dev, cudaMemsetAsync(p, 0, bytes, be(dev)->stream), "zero (cudaMemsetAsync)");
	return 0;
}

static int cuda_sync(struct dev *dev)
{
	CUDA_TRY(dev, cudaStreamSynchronize(be(dev)->stream), "cudaStreamSynchronize");
	return 0;
}

/* ---- GEMM ----------------------------------------------------------------------------------- */

static cudaDataType_t lt_type(enum bd_dtype t)
{
	return t == DTYPE_BFLOAT16 ? CUDA_R_16BF : t == DTYPE_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
}

/* The largest power of two up to 256 that divides the address (cuBLASLt's alignment prefs). */
static unsigned alignment(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	unsigned al = 256;
	while (al > 1 && (a & (al - 1)))
		al >>= 1;
	return al;
}

/* dev_gemm with the defaults filled in (batch 1, alpha 1, packed strides). */
static struct dev_gemm gemm_normal(const struct dev_gemm *g)
{
	struct dev_gemm n = *g;
	if (!n.batch)
		n.batch = 1;
	if (n.alpha == 0)
		n.alpha = 1;
	if (!n.lda)
		n.lda = n.trans_a ? n.m : n.k;
	if (!n.ldb)
		n.ldb = n.trans_b ? n.k : n.n;
	if (!n.ldc)
		n.ldc = n.n;
	/* between batch entries: the stored rows times the row stride, as dnnl_wrap.c */
	if (!n.stride_a)
		n.stride_a = n.lda * (n.trans_a ? n.k : n.m);
	if (!n.stride_b)
		n.stride_b = n.ldb * (n.trans_b ? n.n : n.k);
	if (!n.stride_c)
		n.stride_c = n.ldc * n.m;
	return n;
}

static int same_plan(const struct gemm_plan *p, const struct dev_gemm *g, int tf32, unsigned aa,
		     unsigned ab, unsigned ac)
{
	const struct dev_gemm *k = &p->key;
	return k->batch == g->batch && k->m == g->m && k->n == g->n && k->k == g->k &&
	       k->trans_a == g->trans_a && k->trans_b == g->trans_b && k->lda == g->lda &&
	       k->ldb == g->ldb && k->ldc == g->ldc && k->stride_a == g->stride_a &&
	       k->stride_b == g->stride_b && k->stride_c == g->stride_c &&
	       k->ab_dtype == g->ab_dtype && k->c_dtype == g->c_dtype && k->alpha == g->alpha &&
	       k->beta == g->beta && p->tf32 == tf32 && p->align_a == aa && p->align_b == ab &&
	       p->align_c == ac;
}

static void plan_free(struct gemm_plan *p)
{
	if (p->lc)
		cublasLtMatrixLayoutDestroy(p->lc);
	if (p->lb)
		cublasLtMatrixLayoutDestroy(p->lb);
	if (p->la)
		cublasLtMatrixLayoutDestroy(p->la);
	if (p->op)
		cublasLtMatmulDescDestroy(p->op);
}

static int layout(struct dev *dev, cublasLtMatrixLayout_t *out, cudaDataType_t type, int64_t rows,
		  int64_t cols, int64_t ld, int64_t batch, int64_t stride)
{
	LT_TRY(dev, cublasLtMatrixLayoutCreate(out, type, (uint64_t)rows, (uint64_t)cols, ld),
	       "cublasLtMatrixLayoutCreate");
	int32_t count = (int32_t)batch;
	LT_TRY(dev, cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
						     sizeof(count)), "layout batch count");
	LT_TRY(dev, cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
						     &stride, sizeof(stride)), "layout batch stride");
	return 0;
}

/* Descriptors and the heuristic's first algorithm for g (normalised). */
static int plan_make(struct dev *dev, struct gemm_plan *p)
{
	const struct dev_gemm *g = &p->key;
	if (g->batch > INT32_MAX)
		return bd_fail(&dev->err, BD_EINVAL, "gemm batch %lld is over cuBLASLt's limit",
			       (long long)g->batch);
	cublasComputeType_t compute = p->tf32 && g->ab_dtype == DTYPE_FLOAT32
					      ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	LT_TRY(dev, cublasLtMatmulDescCreate(&p->op, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
	/* column-major: C^T (n, m) = op(B)^T (n, k) · op(A)^T (k, m) */
	cublasOperation_t ta = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasOperation_t tb = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
	LT_TRY(dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
	       "transa");
	LT_TRY(dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
	       "transb");
	cudaDataType_t ab = lt_type(g->ab_dtype), c = lt_type(g->c_dtype);
	int rc;
	if ((rc = layout(dev, &p->la, ab, g->trans_b ? g->k : g->n, g->trans_b ? g->n : g->k, g->ldb,
			 g->batch, g->stride_b)) ||
	    (rc = layout(dev, &p->lb, ab, g->trans_a ? g->m : g->k, g->trans_a ? g->k : g->m, g->lda,
			 g->batch, g->stride_a)) ||
	    (rc = layout(dev, &p->lc, c, g->n, g->m, g->ldc, g->batch, g->stride_c)))
		return rc;
	cublasLtMatmulPreference_t pref = NULL;
	LT_TRY(dev, cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
	uint64_t ws = LT_WORKSPACE_BYTES;
	uint32_t al_a = p->align_b, al_b = p->align_a, al_c = p->align_c;   /* swapped operands */
	cublasLtMatmulHeuristicResult_t res;
	int found = 0;
	cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
		pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
							 &al_a, sizeof(al_a));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
							 &al_b, sizeof(al_b));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
							 &al_c, sizeof(al_c));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
							 &al_c, sizeof(al_c));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulAlgoGetHeuristic(be(dev)->lt, p->op, p->la, p->lb, p->lc, p->lc, pref,
						   1, &res, &found);
	cublasLtMatmulPreferenceDestroy(pref);
	if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED)
		return lt_fail(dev, s, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
	if (s == CUBLAS_STATUS_NOT_SUPPORTED || found < 1) {
		return bd_fail(&dev->err, BD_EUNSUPPORTED, "cublasLt has no algorithm for a %s x %s -> %s "
			       "gemm %lldx%lldx%lld (batch %lld)%s", dtype_name(g->ab_dtype),
			       dtype_name(g->ab_dtype), dtype_name(g->c_dtype), (long long)g->m,
			       (long long)g->n, (long long)g->k, (long long)g->batch,
			       p->tf32 ? " with TF32" : "");
	}
	p->algo = res.algo;
	p->workspace = res.workspaceSize;
	return 0;
}

static int cuda_gemm(struct dev *dev, const struct dev_gemm *g0, const void *a, const void *b,
		     void *c)
{
	struct cuda_backend *cb = be(dev);
	if (g0->m <= 0 || g0->n <= 0 || g0->k <= 0 || g0->batch < 0)
		return bd_fail(&dev->err, BD_EINVAL, "cuda gemm: m, n and k must be positive");
	if (g0->ab_dtype == DTYPE_FLOAT32 && g0->c_dtype != DTYPE_FLOAT32) {
		return bd_fail(&dev->err, BD_EUNSUPPORTED, "cuda gemm: float32 inputs give float32 only");
	}
	struct dev_gemm g = gemm_normal(g0);
	if (g.lda < (g.trans_a ? g.m : g.k) || g.ldb < (g.trans_b ? g.k : g.n) || g.ldc < g.n)
		return bd_fail(&dev->err, BD_EINVAL, "cuda gemm: a leading dimension is smaller than "
			       "the stored row");
	unsigned aa = alignment(a), ab = alignment(b), ac = alignment(c);
	int tf32 = dev->tf32 != 0;
	struct gemm_plan *p = NULL;
	for (size_t i = 0; i < cb->nplans && !p; i++)
		if (same_plan(&cb->plans[i], &g, tf32, aa, ab, ac))
			p = &cb->plans[i];
	if (!p) {
		if (cb->nplans == cb->cap_plans) {
			size_t cap = cb->cap_plans ? 2 * cb->cap_plans : 16;
			struct gemm_plan *grown = realloc(cb->plans, cap * sizeof(*grown));
			if (!grown)
				return bd_fail(&dev->err, BD_ENOMEM, "out of host memory for gemm plans");
			cb->plans = grown;
			cb->cap_plans = cap;
		}
		struct gemm_plan made = {.key = g, .tf32 = tf32, .align_a = aa, .align_b = ab,
					 .align_c = ac};
		int rc = plan_make(dev, &made);
		if (rc) {
			plan_free(&made);
			return rc;
		}
		cb->plans[cb->nplans] = made;
		p = &cb->plans[cb->nplans++];
	}
	float alpha = g.alpha, beta = g.beta;
	LT_TRY(dev, cublasLtMatmul(cb->lt, p->op, &alpha, b, p->la, a, p->lb, &beta, c, p->lc, c, p->lc,
				   &p->algo, cb->lt_work, p->workspace, cb->stream), "cublasLtMatmul");
	return 0;
}

/* ---- elementwise and row ops ---------------------------------------------------------------- */

static int cuda_convert_op(struct dev *dev, void *dst, enum bd_dtype dst_dtype, const void *src,
			   enum bd_dtype src_dtype, size_t count)
{
	CUDA_TRY(dev, cuda_convert(dst, dst_dtype, src, src_dtype, count, be(dev)->stream),
		 "convert");
	return 0;
}

static int cuda_embedding_fwd_op(struct dev *dev, const int32_t *tokens, const float *table,
				 float *out, int64_t n, int64_t d)
{
	CUDA_TRY(dev, cuda_embedding_fwd(tokens, table, out, n, d, be(dev)->stream),
		 "embedding_fwd");
	return 0;
}

static int cuda_embedding_bwd_op(struct dev *dev, const int32_t *tokens, const float *dout,
				 float *dtable, int64_t n, int64_t d)
{
	CUDA_TRY(dev, cuda_embedding_bwd(tokens, dout, dtable, n, d, be(dev)->stream),
		 "embedding_bwd");
	return 0;
}

static int cuda_rmsnorm_fwd_op(struct dev *dev, const float *x, const float *g, void *y,
			       enum bd_dtype y_dtype, float *rstd, int64_t n, int64_t d, float eps)
{
	CUDA_TRY(dev, cuda_rmsnorm_fwd(x, g, y, y_dtype, rstd, n, d, eps, be(dev)->stream),
		 "rmsnorm_fwd");
	return 0;
}

static int cuda_rmsnorm_bwd_op(struct dev *dev, const float *dy, const float *x, const float *g,
			       const float *rstd, float *dx, float *dg, int64_t n, int64_t d)
{
	struct cuda_backend *cb = be(dev);
	size_t need = cuda_rmsnorm_bwd_work(n, d);
	if (need > cb->norm_work_floats) {
		/* first backward of this shape (the untimed validation pass): kept until dev_close */
		cuda_free_op(dev, cb->norm_work);
		cb->norm_work_floats = 0;
		if (!(cb->norm_work = cuda_alloc(dev, need * sizeof(float))))
			return BD_ENOMEM;
		cb->norm_work_floats = need;
	}
	CUDA_TRY(dev, cuda_rmsnorm_bwd(dy, x, g, rstd, dx, dg, n, d, cb->norm_work, cb->stream),
		 "rmsnorm_bwd");
	return 0;
}

static int cuda_heads_split_op(struct dev *dev, const void *in, enum bd_dtype in_dtype,
			       int64_t ld, float *out, const float *rope_table, int64_t b,
			       int64_t t, int64_t h, int64_t dh)
{
	CUDA_TRY(dev, cuda_heads_split(in, in_dtype, ld, out, rope_table, b, t, h, dh,
					 be(dev)->stream), "heads_split");
	return 0;
}

static int cuda_heads_merge_op(struct dev *dev, const float *in, void *out,
			       enum bd_dtype out_dtype, int64_t ld, const float *rope_table,
			       int64_t b, int64_t t, int64_t h, int64_t dh)
{
	CUDA_TRY(dev, cuda_heads_merge(in, out, out_dtype, ld, rope_table, b, t, h, dh,
					 be(dev)->stream), "heads_merge");
	return 0;
}

static int cuda_swiglu_fwd_op(struct dev *dev, const void *u, void *out, enum bd_dtype dtype,
			      int64_t n, int64_t f)
{
	CUDA_TRY(dev, cuda_swiglu_fwd(u, out, dtype, n, f, be(dev)->stream), "swiglu_fwd");
	return 0;
}

static int cuda_swiglu_bwd_op(struct dev *dev, const void *u, const void *dout, void *du,
			      enum bd_dtype dtype, int64_t n, int64_t f)
{
	CUDA_TRY(dev, cuda_swiglu_bwd(u, dout, du, dtype, n, f, be(dev)->stream), "swiglu_bwd");
	return 0;
}

static int cuda_xent_fwd_op(struct dev *dev, const float *logits, const int32_t *targets,
			    float *lse, float *loss, int64_t n, int64_t V)
{
	CUDA_TRY(dev, cuda_xent_fwd(logits, targets, lse, loss, n, V, be(dev)->stream),
		 "xent_fwd");
	return 0;
}

static int cuda_xent_bwd_op(struct dev *dev, const float *logits, const float *lse,
			    const int32_t *targets, void *dlogits, enum bd_dtype dtype, int64_t n,
			    int64_t V, float scale)
{
	CUDA_TRY(dev, cuda_xent_bwd(logits, lse, targets, dlogits, dtype, n, V, scale,
				      be(dev)->stream), "xent_bwd");
	return 0;
}

static int cuda_adamw_op(struct dev *dev, float *p, const float *g, float *m, float *v,
			 uint16_t *p_bf16, size_t count, const struct adamw_params *hp,
			 int64_t step)
{
	double bc1 = 1.0 - pow((double)hp->beta1, (double)step);
	double bc2 = 1.0 - pow((double)hp->beta2, (double)step);
	struct cuda_adamw_args a = {
		.decay = (float)(1.0 - (double)hp->lr * (double)hp->weight_decay),
		.beta1 = hp->beta1,
		.beta2 = hp->beta2,
		.one_minus_beta1 = (float)(1.0 - (double)hp->beta1),
		.one_minus_beta2 = (float)(1.0 - (double)hp->beta2),
		.step_size = (float)((double)hp->lr / bc1),
		.bc2_sqrt = (float)sqrt(bc2),
		.eps = hp->eps,
	};
	CUDA_TRY(dev, cuda_adamw(p, g, m, v, p_bf16, count, &a, be(dev)->stream), "adamw");
	return 0;
}

/* ---- timing, ranges ------------------------------------------------------------------------- */

/* The timing window. Slots pair up: 2·k starts a window, 2·k + 1 ends it (the workloads time
 * phase k between them). An event recorded on an idle stream fires at once, so the host's work
 * of enqueuing the phase (launch overhead, cudaFuncSetAttribute, cuDNN's execute setup) would
 * be inside the device time, and most of it for small shapes. So a start mark first enqueues
 * timing_delay (kernels.cu), a one-thread spin long enough to cover that enqueue: the start
 * event fires when the delay ends, with the phase already queued behind it, and the window
 * holds the device's work alone. The delay is 1.25 × the host time the same window took to
 * enqueue last time + TIMING_DELAY_MARGIN_NS (TIMING_DELAY_FIRST_NS before any), at most
 * TIMING_DELAY_MAX_NS; BENCHDB_CUDA_TIMING_DELAY_US fixes it (0: none, the idle-stream window).
 * Its cost: the GPU idles for the delay, outside the window, so an iteration takes about the
 * host's enqueue time longer in wall time; the window itself loses nothing. */
#define TIMING_DELAY_FIRST_NS 100000          /* 100 µs */
#define TIMING_DELAY_MARGIN_NS 20000          /* 20 µs: the event record and launch latency */
#define TIMING_DELAY_MAX_NS 100000000         /* 100 ms */
#define TIMING_DELAY_ENV "BENCHDB_CUDA_TIMING_DELAY_US"

static int64_t host_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds of delay before start slot's event. */
static int64_t timing_delay_ns(const struct cuda_backend *cb, int slot)
{
	if (cb->fixed_delay_ns >= 0)
		return cb->fixed_delay_ns;
	int64_t last = cb->enqueue_ns[slot / 2];
	if (last < 0)
		return TIMING_DELAY_FIRST_NS;
	int64_t ns = last + last / 4 + TIMING_DELAY_MARGIN_NS;
	return ns < TIMING_DELAY_MAX_NS ? ns : TIMING_DELAY_MAX_NS;
}

static int cuda_mark(struct dev *dev, int slot)
{
	struct cuda_backend *cb = be(dev);
	if (slot < 0 || slot >= DEV_TIMER_SLOTS)
		return bd_fail(&dev->err, BD_EINVAL, "timer slot %d out of range", slot);
	int start = slot % 2 == 0;
	if (start) {
		double cycles = (double)timing_delay_ns(cb, slot) * cb->clock_khz * 1e-6;
		CUDA_TRY(dev, cuda_timing_delay((long long)ceil(cycles), cb->stream), "timing delay");
	}
	CUDA_TRY(dev, cudaEventRecord(cb->ev[slot], cb->stream), "cudaEventRecord");
	int64_t now = host_ns();
	if (start) {
		cb->start_host_ns[slot] = now;
	} else if (cb->start_host_ns[slot - 1]) {
		cb->enqueue_ns[slot / 2] = now - cb->start_host_ns[slot - 1];
		cb->start_host_ns[slot - 1] = 0;
	}
	return 0;
}

/* BENCHDB_CUDA_TIMING_DELAY_US into cb (whole µs, 0 .. 1 s), or adaptive when unset. */
static int timing_delay_config(struct dev *dev, struct cuda_backend *cb)
{
	cb->fixed_delay_ns = -1;
	for (int i = 0; i < DEV_TIMER_SLOTS / 2; i++)
		cb->enqueue_ns[i] = -1;
	const char *v = getenv(TIMING_DELAY_ENV);
	if (!v || !*v)
		return 0;
	char *end = NULL;
	errno = 0;
	long long us = strtoll(v, &end, 10);
	if (errno || *end || us < 0 || us > 1000000)
		return bd_fail(&dev->err, BD_EINVAL, "%s='%s': want whole microseconds, 0 to 1000000 "
			       "(0: no delay before the start events)", TIMING_DELAY_ENV, v);
	cb->fixed_delay_ns = (int64_t)us * 1000;
	return 0;
}

static int cuda_elapsed(struct dev *dev, int from, int to, int64_t *ns)
{
	struct cuda_backend *cb = be(dev);
	if (from < 0 || to < 0 || from >= DEV_TIMER_SLOTS || to >= DEV_TIMER_SLOTS)
		return bd_fail(&dev->err, BD_EINVAL, "timer slot out of range");
	float ms = 0;
	CUDA_TRY(dev, cudaEventSynchronize(cb->ev[to]), "cudaEventSynchronize");
	CUDA_TRY(dev, cudaEventElapsedTime(&ms, cb->ev[from], cb->ev[to]), "cudaEventElapsedTime");
	*ns = (int64_t)llround((double)ms * 1e6);
	return 0;
}

static void cuda_range_push(struct dev *dev, const char *name)
{
	(void)dev;
	nvtxRangePushA(name);
}

static void cuda_range_pop(struct dev *dev)
{
	(void)dev;
	nvtxRangePop();
}

/* ---- open / release ------------------------------------------------------------------------- */

static void cuda_release(struct dev *dev)
{
	struct cuda_backend *cb = be(dev);
	if (!cb)
		return;
	if (cb->stream) {
		cudaStreamSynchronize(cb->stream);
		cudaGetLastError();
	}
	for (size_t i = 0; i < cb->nplans; i++)
		plan_free(&cb->plans[i]);
	free(cb->plans);
	cuda_attention_release(dev, &cb->att_shared);
	cuda_free_op(dev, cb->norm_work);
	cuda_free_op(dev, cb->lt_work);
	/* buffers the caller did not free (a bug) are freed, so that the GPU is clean */
	for (size_t i = 0; i < cb->nblocks; i++) {
		mem_uncharge(dev->mem, cb->blocks[i].bytes);
		cudaFree(cb->blocks[i].p);
	}
	free(cb->blocks);
	for (int i = 0; i < DEV_TIMER_SLOTS; i++)
		if (cb->ev[i])
			cudaEventDestroy(cb->ev[i]);
	if (cb->lt)
		cublasLtDestroy(cb->lt);
	if (cb->stream)
		cudaStreamDestroy(cb->stream);
	cudaGetLastError();
	free(cb);
	dev->impl = NULL;
}

static const struct dev_ops cuda_ops = {
	.name = "cuda",
	.alloc = cuda_alloc,
	.free = cuda_free_op,
	.upload = cuda_upload,
	.download = cuda_download,
	.copy = cuda_copy,
	.zero = cuda_zero,
	.sync = cuda_sync,
	.gemm = cuda_gemm,
	.convert = cuda_convert_op,
	.embedding_fwd = cuda_embedding_fwd_op,
	.embedding_bwd = cuda_embedding_bwd_op,
	.rmsnorm_fwd = cuda_rmsnorm_fwd_op,
	.rmsnorm_bwd = cuda_rmsnorm_bwd_op,
	.heads_split = cuda_heads_split_op,
	.heads_merge = cuda_heads_merge_op,
	.swiglu_fwd = cuda_swiglu_fwd_op,
	.swiglu_bwd = cuda_swiglu_bwd_op,
	.xent_fwd = cuda_xent_fwd_op,
	.xent_bwd = cuda_xent_bwd_op,
	.adamw = cuda_adamw_op,
	.attention_create = cuda_attention_create,
	.attention_fwd = cuda_attention_fwd,
	.attention_bwd = cuda_attention_bwd,
	.attention_free = cuda_attention_free,
	.attention_describe = cuda_attention_describe,
	.mark = cuda_mark,
	.elapsed = cuda_elapsed,
	.range_push = cuda_range_push,
	.range_pop = cuda_range_pop,
	.release = cuda_release,
};

/* A GPU this build has no code for (a 7.x one: the kernels are built for 8.0 and later) is
 * `unsupported` with the reason, not an error at the first launch of every case (each timed phase
 * launches the timing delay). */
static int cuda_backend_available(struct bd_error *err)
{
	char why[256];
	if (!cuda_available(why, sizeof(why)))
		return bd_fail(err, BD_EUNSUPPORTED, "%s", why);
	cudaError_t e = cuda_kernels_loadable();
	if (e == cudaSuccess)
		return 0;
	cudaGetLastError();
	int major = 0, minor = 0;
	if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
	    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess)
		cudaGetLastError();
	return bd_fail(err, BD_EUNSUPPORTED, "this benchdb's CUDA kernels do not run on this GPU "
		       "(compute capability %d.%d): %s (%s); they need 8.0 or newer and a build whose "
		       "CMAKE_CUDA_ARCHITECTURES covers the GPU", major, minor, cudaGetErrorString(e),
		       cudaGetErrorName(e));
}

static int cuda_open(struct dev *dev, struct mem_arena *mem, struct bd_error *err)
{
	memset(dev, 0, sizeof(*dev));
	int rc = cuda_backend_available(err);
	if (rc)
		return rc;
	struct cuda_backend *cb = calloc(1, sizeof(*cb));
	if (!cb)
		return bd_fail(err, BD_ENOMEM, "out of host memory");
	dev->ops = &cuda_ops;
	dev->mem = mem;
	dev->impl = cb;
	cudaError_t e;
	cublasStatus_t s;
	if ((e = cudaSetDevice(0)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&cb->stream, cudaStreamNonBlocking)) != cudaSuccess) {
		rc = cuda_fail(dev, e, "opening device 0");
		goto fail;
	}
	for (int i = 0; i < DEV_TIMER_SLOTS; i++)
		if ((e = cudaEventCreate(&cb->ev[i])) != cudaSuccess) {
			rc = cuda_fail(dev, e, "cudaEventCreate");
			goto fail;
		}
	int khz = 0;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) != cudaSuccess || khz <= 0) {
		cudaGetLastError();
		khz = 2000000;   /* unknown: 2 GHz, above every GPU's clock, so the delay is not short */
	}
	cb->clock_khz = khz;
	if ((rc = timing_delay_config(dev, cb)))
		goto fail;
	if ((s = cublasLtCreate(&cb->lt)) != CUBLAS_STATUS_SUCCESS) {
		rc = lt_fail(dev, s, "cublasLtCreate", __FILE__, __LINE__);
		goto fail;
	}
	if (!(cb->lt_work = cuda_alloc(dev, LT_WORKSPACE_BYTES))) {
		rc = BD_ENOMEM;
		goto fail;
	}
	return 0;
fail:
	if (err)
		*err = dev->err;
	cuda_release(dev);
	dev->ops = NULL;
	return rc;
}

const struct dev_backend dev_cuda_backend = {
	.device = DEVICE_CUDA,
	.async = 1,
	.host_memory = 0,
	.open = cuda_open,
	.available = cuda_backend_available,
};
