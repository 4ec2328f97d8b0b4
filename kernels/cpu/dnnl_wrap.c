/* kernels/cpu/dnnl_wrap.c: oneDNN matmul behind struct onednn_gemm (see dnnl_wrap.h).
 *
 * oneDNN 2.x and 3.x differ in the C API used here:
 *   memory descriptors  2.x: a struct filled by dnnl_memory_desc_init_by_strides
 *                       3.x: an opaque handle from dnnl_memory_desc_create_with_strides (freed)
 *   matmul pd           2.x: dnnl_matmul_desc_init + dnnl_primitive_desc_create
 *                       3.x: dnnl_matmul_primitive_desc_create(engine, ...)
 *   post-ops            2.x: eltwise takes a leading scale; sum takes only a scale
 *                       3.x: eltwise has no scale; sum takes scale, zero point and data type
 * md_make, the MD_* macros and the #if blocks below are the only places that know.
 */
#include "dnnl_wrap.h"

#include "bf16.h"
#include "clock.h"
#include "proc_wait.h"

#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <oneapi/dnnl/dnnl_version.h>

#if DNNL_VERSION_MAJOR >= 3
#define MD_PTR(md) (md)              /* dnnl_memory_desc_t is already a handle */
#define MD_DESTROY(md) dnnl_memory_desc_destroy(md)
#else
#define MD_PTR(md) (&(md))           /* dnnl_memory_desc_t is a struct */
#define MD_DESTROY(md) ((void)(md))
#endif

static dnnl_status_t md_make(dnnl_memory_desc_t *md, int ndims, const dnnl_dims_t dims,
			     dnnl_data_type_t type, const dnnl_dims_t strides)
{
#if DNNL_VERSION_MAJOR >= 3
	return dnnl_memory_desc_create_with_strides(md, ndims, dims, type, strides);
#else
	return dnnl_memory_desc_init_by_strides(md, ndims, dims, type, strides);
#endif
}

struct onednn_gemm {
	struct onednn_gemm_desc desc;
	dnnl_primitive_t primitive;
	dnnl_memory_t a_mem, b_mem, c_mem, scratch_mem;
	void *scratch;                   /* scratch_bytes, from mem or malloc */
	size_t scratch_bytes;
	struct mem_arena *mem;           /* NULL: scratch came from malloc */
	char impl[64];
	/* the test-only bfloat16 fallback (onednn_allow_bf16_fallback): the primitive is float32
	 * over packed float32 copies of A and B (and of C when C is bfloat16) */
	float *a32, *b32, *c32;
	size_t fallback_bytes;
	/* desc.tune: the implementation to time against the wrapper's choice, made and timed on
	 * the first execution (tune_first), so that nothing of the tuning is held before it; NULL
	 * once timed, or where there is none */
	const char *contender;
	struct onednn_gemm_tuning tuning;
};

static int bf16_fallback;           /* onednn_allow_bf16_fallback; tests only */

void onednn_allow_bf16_fallback(int allow) { bf16_fallback = allow; }

/* The process-wide CPU engine and streams, made once: streams[0] for every product, streams[1]
 * for the second of a pair (a stream is not to be used by two threads at once). */
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t engine;
static dnnl_stream_t streams[2];
static dnnl_status_t engine_status = dnnl_success;

static void engine_init(void)
{
	engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
	for (int i = 0; i < 2 && engine_status == dnnl_success; i++)
		engine_status = dnnl_stream_create(&streams[i], engine, dnnl_stream_default_flags);
}

static int engine_get(struct bd_error *err)
{
	pthread_once(&engine_once, engine_init);
	if (engine_status != dnnl_success)
		return bd_fail(err, BD_EINVAL, "cannot create the onednn cpu engine: %s",
			       dnnl_status2str(engine_status));
	return 0;
}

static dnnl_data_type_t dnnl_type(enum bd_dtype t)
{
	switch (t) {
	case DTYPE_FLOAT32: return dnnl_f32;
	case DTYPE_BFLOAT16: return dnnl_bf16;
	default: return dnnl_data_type_undef;
	}
}

/* Fill dims/strides of a (batch, rows, cols) matrix stored with row stride ld and batch stride
 * bs; transposed storage swaps the two inner strides. ndims is 2 when batch is 1. */
static int matrix_layout(int64_t batch, int64_t rows, int64_t cols, int trans, int64_t ld,
			 int64_t bs, dnnl_dims_t dims, dnnl_dims_t strides)
{
	int64_t stored_cols = trans ? rows : cols;
	int64_t stored_rows = trans ? cols : rows;
	if (!ld)
		ld = stored_cols;
	if (!bs)
		bs = ld * stored_rows;
	int64_t row_stride = trans ? 1 : ld, col_stride = trans ? ld : 1;
	int n = 0;
	if (batch > 1) {
		dims[n] = batch;
		strides[n++] = bs;
	}
	dims[n] = rows;
	strides[n++] = row_stride;
	dims[n] = cols;
	strides[n++] = col_stride;
	return n;
}

static const char *check_desc(const struct onednn_gemm_desc *d)
{
	if (d->m <= 0 || d->n <= 0 || d->k <= 0 || d->batch < 0)
		return "m, n and k must be positive";
	if (dnnl_type(d->ab_dtype) == dnnl_data_type_undef)
		return "a and b must be float32 or bfloat16";
	if (dnnl_type(d->c_dtype) == dnnl_data_type_undef)
		return "c must be float32 or bfloat16";
	int64_t a_cols = d->trans_a ? d->m : d->k, b_cols = d->trans_b ? d->k : d->n;
	if ((d->lda && d->lda < a_cols) || (d->ldb && d->ldb < b_cols) || (d->ldc && d->ldc < d->n))
		return "a leading dimension is smaller than the stored row";
	return NULL;
}

static const char *runtime_name(unsigned r)
{
	switch (r) {
	case DNNL_RUNTIME_NONE: return "none";
	case DNNL_RUNTIME_SEQ: return "sequential";
	case DNNL_RUNTIME_OMP: return "OMP";
	case DNNL_RUNTIME_TBB: return "TBB";
	case DNNL_RUNTIME_THREADPOOL: return "threadpool";
	default: return "other";
	}
}

/* Only ISA names present in both 2.x and 3.x; anything else is printed as a number. */
static const char *isa_name(dnnl_cpu_isa_t isa)
{
	switch (isa) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	default: return NULL;
	}
}

/* "isa avx2", plus the variable that capped it when one is set */
static void isa_text(char *buf, size_t size)
{
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
	const char *name = isa_name(isa);
	const char *cap_var = getenv("ONEDNN_MAX_CPU_ISA") ? "ONEDNN_MAX_CPU_ISA"
			      : getenv("DNNL_MAX_CPU_ISA") ? "DNNL_MAX_CPU_ISA" : NULL;
	if (cap_var && !strcasecmp(getenv(cap_var), "all"))
		cap_var = NULL;   /* no cap */
	int n = name ? snprintf(buf, size, "isa %s", name)
		     : snprintf(buf, size, "isa 0x%x", (unsigned)isa);
	if (cap_var && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", capped by %s=%s", cap_var, getenv(cap_var));
}

/* oneDNN has no implementation for d on this CPU: BD_EUNSUPPORTED, with what is missing and what
 * would provide it. */
static int fail_unimplemented(struct bd_error *err, const struct onednn_gemm_desc *d)
{
	const dnnl_version_t *v = dnnl_version();
	char isa[96];
	isa_text(isa, sizeof(isa));
	if (d->ab_dtype == DTYPE_BFLOAT16)
		return bd_fail(err, BD_EUNSUPPORTED,
			       "oneDNN %d.%d.%d has no bfloat16 matmul on this CPU (%s); it needs %s",
			       v->major, v->minor, v->patch, isa,
			       v->major >= 3 ? "avx512_core, avx2_vnni_2 or newer (avx512_core_bf16 "
					       "and AMX compute bfloat16 natively)"
					     : "avx512_core or newer (avx512_core_bf16 and AMX compute "
					       "bfloat16 natively)");
	return bd_fail(err, BD_EUNSUPPORTED,
		       "oneDNN %d.%d.%d has no %s matmul for batch %lld, %lldx%lldx%lld on this CPU "
		       "(%s)", v->major, v->minor, v->patch, dtype_name(d->ab_dtype),
		       (long long)(d->batch ? d->batch : 1), (long long)d->m, (long long)d->n,
		       (long long)d->k, isa);
}

static int fail_dnnl(struct bd_error *err, dnnl_status_t s, const char *what,
		     const struct onednn_gemm_desc *d)
{
	if (s == dnnl_unimplemented)
		return fail_unimplemented(err, d);
	return bd_fail(err, s == dnnl_out_of_memory ? BD_ENOMEM : BD_EINVAL,
		       "onednn matmul %s failed for %s batch %lld, %lldx%lldx%lld%s%s: %s", what,
		       dtype_name(d->ab_dtype), (long long)(d->batch ? d->batch : 1),
		       (long long)d->m, (long long)d->n, (long long)d->k,
		       d->trans_a ? ", a transposed" : "", d->trans_b ? ", b transposed" : "",
		       dnnl_status2str(s));
}
/* Attributes: user-managed scratchpad, and post-ops for alpha (linear) and beta (sum). */
static dnnl_status_t make_attr(dnnl_primitive_attr_t *attr, float alpha, float beta)
{
	dnnl_post_ops_t ops = NULL;
	dnnl_status_t s = dnnl_primitive_attr_create(attr);
	if (s == dnnl_success)
		s = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
	if (s != dnnl_success || (alpha == 1.0f && beta == 0.0f))
		goto done;
	s = dnnl_post_ops_create(&ops);
	if (s == dnnl_success && alpha != 1.0f)
#if DNNL_VERSION_MAJOR >= 3
		s = dnnl_post_ops_append_eltwise(ops, dnnl_eltwise_linear, alpha, 0.0f);
#else
		s = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear, alpha, 0.0f);
#endif
	if (s == dnnl_success && beta != 0.0f)
#if DNNL_VERSION_MAJOR >= 3
		s = dnnl_post_ops_append_sum(ops, beta, 0, dnnl_data_type_undef);
#else
		s = dnnl_post_ops_append_sum(ops, beta);
#endif
	if (s == dnnl_success)
		s = dnnl_primitive_attr_set_post_ops(*attr, ops);
done:
	if (ops)
		dnnl_post_ops_destroy(ops);
	return s;
}

static int impl_is(const_dnnl_primitive_desc_t pd, const char *prefix)
{
	const char *impl = NULL;
	return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
	       impl && !strncmp(impl, prefix, strlen(prefix));
}

/* The matmul primitive descriptor: oneDNN's first implementation for it, or the first whose
 * name starts with prefer when one does (prefer NULL: the first). */
static dnnl_status_t matmul_pd(dnnl_primitive_desc_t *pd, const dnnl_memory_desc_t *a_md,
			       const dnnl_memory_desc_t *b_md, const dnnl_memory_desc_t *c_md,
			       const_dnnl_primitive_attr_t attr, const char *prefer)
{
#if DNNL_VERSION_MAJOR >= 3
	dnnl_status_t s = dnnl_matmul_primitive_desc_create(pd, engine, *a_md, *b_md, NULL, *c_md,
							    attr);
	if (s != dnnl_success || !prefer)
		return s;
	while (!impl_is(*pd, prefer))
		if (dnnl_primitive_desc_next_impl(*pd) != dnnl_success) {
			/* none is: back to the first */
			dnnl_primitive_desc_destroy(*pd);
			*pd = NULL;
			return dnnl_matmul_primitive_desc_create(pd, engine, *a_md, *b_md, NULL, *c_md,
								 attr);
		}
	return dnnl_success;
#else
	dnnl_matmul_desc_t op;
	dnnl_primitive_desc_iterator_t it = NULL;
	dnnl_status_t s = dnnl_matmul_desc_init(&op, a_md, b_md, NULL, c_md);
	if (s == dnnl_success && prefer)
		s = dnnl_primitive_desc_iterator_create(&it, &op, attr, engine, NULL);
	if (s != dnnl_success || !prefer)
		return s == dnnl_success ? dnnl_primitive_desc_create(pd, &op, attr, engine, NULL) : s;
	do {
		*pd = dnnl_primitive_desc_iterator_fetch(it);
		if (*pd && impl_is(*pd, prefer))
			break;
		if (*pd)
			dnnl_primitive_desc_destroy(*pd);
		*pd = NULL;
	} while (dnnl_primitive_desc_iterator_next(it) == dnnl_success);
	dnnl_primitive_desc_iterator_destroy(it);
	return *pd ? dnnl_success : dnnl_primitive_desc_create(pd, &op, attr, engine, NULL);
#endif
}

/* 64-byte aligned, from g's arena (counted, under its limit) or the heap */
static void *buf_alloc(struct onednn_gemm *g, size_t bytes)
{
	void *p = NULL;
	if (g->mem)
		return mem_alloc(g->mem, bytes);
	return posix_memalign(&p, 64, bytes ? bytes : 1) ? NULL : p;
}

static void buf_free(struct onednn_gemm *g, void *p)
{
	if (g->mem)
		mem_free(g->mem, p);
	else
		free(p);
}

static const char *impl_override;   /* onednn_prefer_impl; benchmarks only */

void onednn_prefer_impl(const char *prefix) { impl_override = prefix; }

/* Which of oneDNN's implementations to take for d, by prefix of its name; NULL: oneDNN's first.
 *
 * float32, one product: "gemm:jit", oneDNN's BLAS-style sgemm (the kernels behind dnnl_sgemm),
 * which is oneDNN's own first choice up to AVX2. With AVX-512, oneDNN 2.6 and 3.2 list their
 * brgemm matmul ("brg:avx512_core") first, which runs the transformer's products whose B is
 * stored (k, n) with n = 3072 (dY·W2 and dYᵀ·G of the W2 projection) at half the rate of the
 * others, while gemm:jit runs every product of the model at the rate of the 2048³ one, as MKL
 * does (docs/performance.md, "the GEMM library"). Batched products (the attention) and
 * bfloat16 keep oneDNN's first: there brgemm, and on AMX its tiles, are the faster. With
 * desc.tune the brgemm matmul is made beside gemm:jit and timed against it on the first
 * execution (tune_first, make_contender): on a Zen 5 it runs the forward W2 product (k = 3072)
 * in 0.82 of gemm:jit's time (the Intel AVX-512 host: 0.94), and which shapes brgemm wins, and
 * by how much, differs from CPU to CPU. */
static const char *preferred_impl(const struct onednn_gemm_desc *d)
{
	if (impl_override)
		return *impl_override ? impl_override : NULL;
	if (d->ab_dtype == DTYPE_FLOAT32 && d->batch <= 1)
		return "gemm:jit";
	return NULL;
}

/* What a primitive may be, checked on its descriptor before it is made (its kernels generated,
 * its scratchpad allocated): the implementation prefer names, not the first oneDNN offers in
 * its place (exact), and a scratchpad of at most max_scratch bytes. */
struct primitive_terms {
	int exact;
	size_t max_scratch;
};

static const struct primitive_terms ANY_PRIMITIVE = {0, SIZE_MAX};

/* The primitive for d (its dtypes and layouts), its memories and scratchpad, into g; one that
 * would break terms is not made: BD_EUNSUPPORTED, saying why. */
static int make_primitive(struct onednn_gemm *g, const struct onednn_gemm_desc *d,
			  const char *prefer, struct primitive_terms terms, struct bd_error *err)
{
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t a_md, b_md, c_md;
	int have_md = 0;
	dnnl_status_t s;
	const char *what = "descriptor";
	int rc = 0;

	dnnl_dims_t dims, strides;
	int nd = matrix_layout(d->batch, d->m, d->k, d->trans_a, d->lda, d->stride_a, dims, strides);
	s = md_make(&a_md, nd, dims, dnnl_type(d->ab_dtype), strides);
	if (s == dnnl_success) {
		have_md |= 1;
		nd = matrix_layout(d->batch, d->k, d->n, d->trans_b, d->ldb, d->stride_b, dims,
				   strides);
		s = md_make(&b_md, nd, dims, dnnl_type(d->ab_dtype), strides);
	}
	if (s == dnnl_success) {
		have_md |= 2;
		nd = matrix_layout(d->batch, d->m, d->n, 0, d->ldc, d->stride_c, dims, strides);
		s = md_make(&c_md, nd, dims, dnnl_type(d->c_dtype), strides);
	}
	if (s == dnnl_success) {
		have_md |= 4;
		what = "attributes";
		s = make_attr(&attr, d->alpha, d->beta);
	}
	/* oneDNN sizes a primitive's split of the work (and its kernels' blocking) for the threads
	 * OpenMP offers when it is made; a single-threaded one is made while one is offered */
	int threads = omp_get_max_threads();
	if (d->single_thread)
		omp_set_num_threads(1);
	if (s == dnnl_success) {
		what = "primitive descriptor";
		s = matmul_pd(&pd, &a_md, &b_md, &c_md, attr, prefer);
	}
	if (s == dnnl_success) {
		const char *impl = NULL;
		if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
			    dnnl_success && impl)
			snprintf(g->impl, sizeof(g->impl), "%s", impl);
		/* 2.x returns a pointer to a struct, 3.x a handle: both go straight back into oneDNN */
		g->scratch_bytes = dnnl_memory_desc_get_size(
			dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));
		if (terms.exact && prefer && strncmp(g->impl, prefer, strlen(prefer)))
			rc = bd_fail(err, BD_EUNSUPPORTED, "onednn offers no %s for this matmul (its "
				     "first: %s)", prefer, g->impl);
		else if (g->scratch_bytes > terms.max_scratch)
			rc = bd_fail(err, BD_EUNSUPPORTED, "onednn's %s needs %zu bytes of scratchpad, "
				     "over %zu", g->impl, g->scratch_bytes, terms.max_scratch);
	}
	if (s == dnnl_success && !rc) {
		what = "primitive";
		s = dnnl_primitive_create(&g->primitive, pd);
	}
	if (d->single_thread)
		omp_set_num_threads(threads);
	if (rc)
		goto done;
	if (s == dnnl_success) {
		what = "memory";
		s = dnnl_memory_create(&g->a_mem, MD_PTR(a_md), engine, DNNL_MEMORY_NONE);
	}
	if (s == dnnl_success)
		s = dnnl_memory_create(&g->b_mem, MD_PTR(b_md), engine, DNNL_MEMORY_NONE);
	if (s == dnnl_success)
		s = dnnl_memory_create(&g->c_mem, MD_PTR(c_md), engine, DNNL_MEMORY_NONE);
	if (s != dnnl_success) {
		rc = fail_dnnl(err, s, what, d);
		goto done;
	}

	if (g->scratch_bytes) {
		/* refused by the arena: the sizes, as every oom reason gives them (mem_vfail) */
		g->scratch = g->mem ? mem_alloc_for(g->mem, (double)g->scratch_bytes, err,
						    "onednn's scratchpad (%s)", g->impl) :
				      buf_alloc(g, g->scratch_bytes);
		if (!g->scratch) {
			rc = g->mem ? BD_ENOMEM :
				      bd_fail(err, BD_ENOMEM, "cannot allocate %zu bytes of onednn "
					      "scratchpad: out of host memory", g->scratch_bytes);
			goto done;
		}
		s = dnnl_memory_create(&g->scratch_mem,
				       dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0),
				       engine, g->scratch);
		if (s != dnnl_success) {
			rc = fail_dnnl(err, s, "scratchpad", d);
			goto done;
		}
	}
done:
	if (have_md & 1)
		MD_DESTROY(a_md);
	if (have_md & 2)
		MD_DESTROY(b_md);
	if (have_md & 4)
		MD_DESTROY(c_md);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return rc;
}

/* Stored (rows, cols) and strides of op(X) = (rows_op, cols_op) kept transposed or not. */
struct stored { int64_t rows, cols, ld, bs; };

static struct stored stored_of(int64_t rows_op, int64_t cols_op, int trans, int64_t ld, int64_t bs)
{
	struct stored m = {.rows = trans ? cols_op : rows_op, .cols = trans ? rows_op : cols_op};
	m.ld = ld ? ld : m.cols;
	m.bs = bs ? bs : m.ld * m.rows;
	return m;
}

/* The fallback: the float32 desc over packed copies (C stays in place when it is float32), and
 * the copies themselves, through the same memory accounting as the scratchpad. */
static int make_fallback(struct onednn_gemm *g, struct bd_error *err)
{
	const struct onednn_gemm_desc *d = &g->desc;
	struct onednn_gemm_desc f = *d;
	f.ab_dtype = DTYPE_FLOAT32;
	f.lda = f.ldb = f.stride_a = f.stride_b = 0;
	if (d->c_dtype == DTYPE_BFLOAT16) {
		f.c_dtype = DTYPE_FLOAT32;
		f.ldc = f.stride_c = 0;
	}
	size_t a_n = (size_t)(d->batch * d->m * d->k), b_n = (size_t)(d->batch * d->k * d->n);
	size_t c_n = d->c_dtype == DTYPE_BFLOAT16 ? (size_t)(d->batch * d->m * d->n) : 0;
	g->fallback_bytes = (a_n + b_n + c_n) * sizeof(float);
	if (!(g->a32 = buf_alloc(g, a_n * sizeof(float))) ||
	    !(g->b32 = buf_alloc(g, b_n * sizeof(float))) ||
	    (c_n && !(g->c32 = buf_alloc(g, c_n * sizeof(float)))))
		return bd_fail(err, BD_ENOMEM, "cannot allocate %zu bytes of float32 copies for the "
			       "bfloat16 fallback", g->fallback_bytes);
	return make_primitive(g, &f, preferred_impl(&f), ANY_PRIMITIVE, err);
}

/* C's extent in bytes: from its first element to its last row's n-th */
static size_t c_extent_bytes(const struct onednn_gemm_desc *d)
{
	struct stored sc = stored_of(d->m, d->n, 0, d->ldc, d->stride_c);
	return (size_t)((sc.rows - 1) * sc.ld + sc.cols) * (d->c_dtype == DTYPE_BFLOAT16 ? 2 : 4);
}

/* The implementation a tuned gemm is timed against (desc.tune), by the dtype of A and B:
 * float32, oneDNN's brgemm matmul, which runs some products faster than the wrapper's gemm:jit
 * and many slower; bfloat16, oneDNN's gemm:jit (its gemm_bf16bf16f32 kernels), which on a
 * Zen 5 without AMX runs the linear layers' backward products 3-19% faster than oneDNN's
 * first, brgemm, on one thread, the forward ones about as fast, the batched ones slower. Which
 * wins, by shape, is the CPU's (docs/performance.md, "float32: the faster of two kernels, per
 * shape" and "bfloat16 too"). */
static const char *contender_override;   /* onednn_tune_contender; tests only */
static int tune_winner;                    /* 0: by time; 1: the contender; -1: the choice */

static const char *contender_for(const struct onednn_gemm_desc *d)
{
	if (contender_override)
		return contender_override;
	return d->ab_dtype == DTYPE_FLOAT32 ? "brg" : "gemm:jit";
}

void onednn_tune_contender(const char *prefix, int winner)
{
	contender_override = prefix;
	tune_winner = winner;
}

/* The tuning is optional: where the memory limit refused one of its buffers, the arena
 * forgets the refusal (a case that then runs untuned did not run out of memory). */
static void forget_refusal(struct mem_arena *mem, const struct mem_arena *before)
{
	if (mem) {
		mem->failed = before->failed;
		mem->failed_need = before->failed_need;
	}
}

/* desc.tune, at the first execution (tune_first): the contender g->contender names, made beside
 * g's choice; NULL where it cannot be made (none on this CPU, no memory for its scratchpad),
 * which leaves g as it is, untuned: a choice between two correct products, never a failure.
 * Nor is one made whose scratchpad would exceed the choice's by more than C's own size (asked
 * of its descriptor, before its kernels are generated or its scratchpad allocated): oneDNN's
 * gemm:jit writing bfloat16 C accumulates into float32 copies of C in its scratchpad (the
 * model's W2 dX, 1024 x 3072 x 768 on one thread: 12.6 MB beside brgemm's 0.13 MB;
 * test_matmul prints both), which, kept, would raise the case's memory by run-to-run chance
 * and, under a memory limit, could refuse what the untuned case fits. (Where the tuning keeps
 * a contender, the case holds at most C's size more.) It is made here rather than with g, so
 * that gemms made before any runs (the two of a pair) hold only their choices' memory: each
 * one's tuning then has the room the others leave, and never takes it from their choices. */
static struct onednn_gemm *make_contender(struct onednn_gemm *g, const char *contender)
{
	const struct onednn_gemm_desc *d = &g->desc;
	struct onednn_gemm *alt = calloc(1, sizeof(*alt));
	struct bd_error ignored = {0};
	if (!alt)
		return NULL;
	alt->desc = *d;
	alt->mem = g->mem;
	struct mem_arena before = g->mem ? *g->mem : (struct mem_arena){0};
	struct primitive_terms terms = {.exact = 1,
					.max_scratch = g->scratch_bytes + c_extent_bytes(d)};
	if (make_primitive(alt, &alt->desc, contender, terms, &ignored)) {
		onednn_gemm_free(alt);
		forget_refusal(g->mem, &before);
		return NULL;
	}
	snprintf(g->tuning.kept, sizeof(g->tuning.kept), "%s", g->impl);
	snprintf(g->tuning.other, sizeof(g->tuning.other), "%s", alt->impl);
	return alt;
}

/* The contender g is to be timed against at its first execution, named when g is made (the
 * tests' overrides then in force); NULL: g is not tuned */
static const char *contender_wanted(const struct onednn_gemm *g)
{
	const struct onednn_gemm_desc *d = &g->desc;
	const char *contender = contender_for(d);
	if (!d->tune || d->batch > 1 || impl_override || g->a32 ||
	    !strncmp(g->impl, contender, strlen(contender)))
		return NULL;
	return contender;
}

int onednn_gemm_create(struct onednn_gemm **out, const struct onednn_gemm_desc *desc,
		       struct mem_arena *mem, struct bd_error *err)
{
	*out = NULL;
	const char *bad = check_desc(desc);
	if (bad)
		return bd_fail(err, BD_EINVAL, "onednn matmul: %s", bad);
	int rc = engine_get(err);
	if (rc < 0)
		return rc;
	struct onednn_gemm *g = calloc(1, sizeof(*g));
	if (!g)
		return bd_fail(err, BD_ENOMEM, "out of host memory for an onednn gemm");
	g->desc = *desc;
	g->mem = mem;
	if (!g->desc.batch)
		g->desc.batch = 1;
	if (g->desc.alpha == 0.0f)
		g->desc.alpha = 1.0f;
	rc = make_primitive(g, &g->desc, preferred_impl(&g->desc), ANY_PRIMITIVE, err);
	if (rc == BD_EUNSUPPORTED && bf16_fallback && g->desc.ab_dtype == DTYPE_BFLOAT16)
		rc = make_fallback(g, err);
	if (rc < 0) {
		onednn_gemm_free(g);
		return rc;
	}
	g->contender = contender_wanted(g);
	*out = g;
	return 0;
}

/* float32 <-> bfloat16 between a stored matrix (ld, bs) and its packed float32 copy */
static void unpack_bf16(float *dst, const uint16_t *src, int64_t batch, struct stored m)
{
	for (int64_t b = 0; b < batch; b++)
		for (int64_t r = 0; r < m.rows; r++)
			for (int64_t c = 0; c < m.cols; c++)
				*dst++ = bf16_to_float(src[b * m.bs + r * m.ld + c]);
}

static void pack_bf16(uint16_t *dst, const float *src, int64_t batch, struct stored m)
{
	for (int64_t b = 0; b < batch; b++)
		for (int64_t r = 0; r < m.rows; r++)
			for (int64_t c = 0; c < m.cols; c++)
				dst[b * m.bs + r * m.ld + c] = bf16_from_float(*src++);
}

static int execute(struct onednn_gemm *g, dnnl_stream_t stream, const void *a, const void *b,
		   void *c, struct bd_error *err)
{
	dnnl_status_t s = dnnl_memory_set_data_handle(g->a_mem, (void *)a);
	if (s == dnnl_success)
		s = dnnl_memory_set_data_handle(g->b_mem, (void *)b);
	if (s == dnnl_success)
		s = dnnl_memory_set_data_handle(g->c_mem, c);
	if (s == dnnl_success) {
		dnnl_exec_arg_t args[] = {
			{DNNL_ARG_SRC, g->a_mem},
			{DNNL_ARG_WEIGHTS, g->b_mem},
			{DNNL_ARG_DST, g->c_mem},
			{DNNL_ARG_SCRATCHPAD, g->scratch_mem},
		};
		s = dnnl_primitive_execute(g->primitive, stream, g->scratch_mem ? 4 : 3, args);
	}
	if (s == dnnl_success)
		s = dnnl_stream_wait(stream);
	if (s != dnnl_success)
		return fail_dnnl(err, s, "execution", &g->desc);
	return 0;
}

static int run_on(struct onednn_gemm *g, dnnl_stream_t stream, const void *a, const void *b,
		  void *c, struct bd_error *err)
{
	if (!g->a32)
		return execute(g, stream, a, b, c, err);
	const struct onednn_gemm_desc *d = &g->desc;
	struct stored sc = stored_of(d->m, d->n, 0, d->ldc, d->stride_c);
	unpack_bf16(g->a32, a, d->batch, stored_of(d->m, d->k, d->trans_a, d->lda, d->stride_a));
	unpack_bf16(g->b32, b, d->batch, stored_of(d->k, d->n, d->trans_b, d->ldb, d->stride_b));
	if (!g->c32)
		return execute(g, stream, g->a32, g->b32, c, err);
	if (d->beta != 0.0f)
		unpack_bf16(g->c32, c, d->batch, sc);
	int rc = execute(g, stream, g->a32, g->b32, g->c32, err);
	if (!rc)
		pack_bf16(c, g->c32, d->batch, sc);
	return rc;
}

/* The process's minor page faults so far (every thread's). */
static long minor_faults(void)
{
	struct rusage u;
	return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_minflt;
}

/* The first execution of a gemm with a contender to time: the contender is made
 * (make_contender), then both run on a, b and a copy of c (so that a beta != 0 product still
 * adds to c once; its extent exactly C's, from g's arena, aligned as the arena's buffers),
 * TUNE_COLD times each untimed, then in alternating order until each has
 * TUNE_ROUNDS timed runs without a page fault (at most TUNE_MAX_ROUNDS rounds: then its
 * fastest, faults or not). A run that faults pays for the kernel's zeroing of fresh buffers,
 * which the steady state does not: in the model's first pass gemm:jit's buffers for some
 * shapes faulted for several calls, and with those runs counted the choices swung from run to
 * run towards brgemm. The contender is kept when its fastest time is below TUNE_MARGIN of the
 * wrapper's choice's fastest (a margin, so that near ties, which flip from run to run, keep
 * the choice), and the other is freed — unless the process's threads waited for a CPU for
 * more than CPU_WAIT_CONTENDED of the timing (another process's load, which slows the two
 * kernels unequally and for no reason of theirs): then the choice is kept and the tuning says
 * so (`contended`). The case's own cpu_wait covers its measured iterations, not this timing,
 * which runs in validation: without the rule a burst of load there changed the kernels the
 * case then ran, and nothing said so. One made for one thread (one of a pair) is timed on
 * one thread. Where the contender cannot be made, without memory for the copy, or where the
 * contender fails to run, g stays with its choice, untuned; only the choice's own failure
 * fails the product. */
#define TUNE_COLD 2
#define TUNE_ROUNDS 4
#define TUNE_MAX_ROUNDS 12
#define TUNE_MARGIN 0.95
static int tune_first(struct onednn_gemm *g, const void *a, const void *b, const void *c,
		      struct bd_error *err)
{
	const struct onednn_gemm_desc *d = &g->desc;
	struct onednn_gemm *alt = make_contender(g, g->contender);
	g->contender = NULL;
	if (!alt)
		return 0;
	size_t bytes = c_extent_bytes(d);
	struct mem_arena before = g->mem ? *g->mem : (struct mem_arena){0};
	void *scratch_c = buf_alloc(g, bytes);
	if (!scratch_c) {
		forget_refusal(g->mem, &before);
		onednn_gemm_free(alt);
		return 0;
	}
	struct onednn_gemm *who[2] = {g, alt};
	double best[2] = {0, 0}, best_any[2] = {0, 0};
	int clean[2] = {0, 0}, faulted = 0;
	int rc = 0, alt_failed = 0;
	struct bd_error alt_err = {0};
	/* one made for one thread is timed on one, as it runs beside the other of its pair (where
	 * oneDNN's gemm:jit would otherwise take every thread OpenMP offers) */
	int threads = omp_get_max_threads();
	if (d->single_thread)
		omp_set_num_threads(1);
	int timed_on = omp_get_max_threads();
	struct cpu_wait wait0, wait1;
	cpu_wait_read(&wait0);
	for (int r = -TUNE_COLD; !rc && !alt_failed && r < TUNE_MAX_ROUNDS &&
	     (clean[0] < TUNE_ROUNDS || clean[1] < TUNE_ROUNDS); r++)
		for (int i = 0; i < 2 && !rc && !alt_failed; i++) {
			int k = r % 2 ? 1 - i : i;
			if (d->beta != 0.0f)   /* with beta 0 C is written, never read */
				memcpy(scratch_c, c, bytes);
			long f0 = minor_faults();
			double t0 = bd_now_seconds();
			int krc = execute(who[k], streams[0], a, b, scratch_c, k ? &alt_err : err);
			double t = bd_now_seconds() - t0;
			if (krc) {
				*(k ? &alt_failed : &rc) = krc;
				continue;
			}
			if (r < 0)
				continue;
			if (!best_any[k] || t < best_any[k])
				best_any[k] = t;
			if (minor_faults() != f0) {
				faulted++;
				continue;
			}
			clean[k]++;
			if (!best[k] || t < best[k])
				best[k] = t;
		}
	cpu_wait_read(&wait1);
	if (d->single_thread)
		omp_set_num_threads(threads);
	for (int k = 0; k < 2; k++)
		if (!best[k])
			best[k] = best_any[k];
	buf_free(g, scratch_c);
	if (rc || alt_failed) {
		onednn_gemm_free(alt);
		return rc;
	}
	g->tuning.tuned = 1;
	g->tuning.faulted = faulted;
	g->tuning.threads = timed_on;
	g->tuning.kept_s = best[0];
	g->tuning.other_s = best[1];
	g->tuning.cpu_wait = cpu_wait_share(&wait0, &wait1);
	g->tuning.contended = g->tuning.cpu_wait > CPU_WAIT_CONTENDED;
	int faster = tune_winner ? tune_winner > 0 : best[1] < TUNE_MARGIN * best[0];
	if (faster && !g->tuning.contended) {
		/* the contender's primitive, memories and scratchpad move into g; g's old ones
		 * into alt, which is freed */
		struct onednn_gemm mine = *g;
		*g = *alt;
		*alt = mine;
		g->tuning = alt->tuning;
		snprintf(g->tuning.kept, sizeof(g->tuning.kept), "%s", alt->tuning.other);
		snprintf(g->tuning.other, sizeof(g->tuning.other), "%s", alt->tuning.kept);
		g->tuning.kept_s = best[1];
		g->tuning.other_s = best[0];
		g->tuning.switched = 1;
	}
	onednn_gemm_free(alt);
	return 0;
}

int onednn_gemm_execute(struct onednn_gemm *g, const void *a, const void *b, void *c,
			struct bd_error *err)
{
	int rc;
	if (g->contender && (rc = tune_first(g, a, b, c, err)))
		return rc;
	return run_on(g, streams[0], a, b, c, err);
}

const struct onednn_gemm_tuning *onednn_gemm_tuning(const struct onednn_gemm *g)
{
	return &g->tuning;
}

static _Atomic int pair_threads;   /* onednn_gemm_pair_threads */

int onednn_gemm_pair_threads(void) { return pair_threads; }

int onednn_gemm_execute_pair(struct onednn_gemm *g0, const void *a0, const void *b0, void *c0,
			     struct onednn_gemm *g1, const void *a1, const void *b1, void *c1,
			     struct bd_error *err)
{
	if (g0 == g1 || !g0->desc.single_thread || !g1->desc.single_thread)
		return bd_fail(err, BD_EINVAL, "onednn matmul: a pair takes two distinct products "
			       "made for one thread each");
	struct onednn_gemm *g[2] = {g0, g1};
	const void *a[2] = {a0, a1}, *b[2] = {b0, b1};
	void *c[2] = {c0, c1};
	struct bd_error errs[2] = {{0}};
	int rc[2] = {0, 0};
	/* the first execution of a tuned one times its two on one thread, before the pair runs
	 * (onto copies of C: the pair's products do not read each other's results) */
	for (int i = 0; i < 2; i++)
		if (g[i]->contender && (rc[i] = tune_first(g[i], a[i], b[i], c[i], err)))
			return rc[i];
	int team = omp_in_parallel() || omp_get_max_threads() < 2 ? 1 : 2;
#pragma omp parallel num_threads(team)
	{
		/* inside the region oneDNN runs each primitive on the calling thread alone */
		for (int i = omp_get_thread_num(); i < 2; i += omp_get_num_threads())
			rc[i] = run_on(g[i], streams[i], a[i], b[i], c[i], &errs[i]);
		if (omp_get_thread_num() == 0)
			pair_threads = omp_get_num_threads();
	}
	for (int i = 0; i < 2; i++)
		if (rc[i]) {
			if (err)
				*err = errs[i];
			return rc[i];
		}
	return 0;
}

/* The probe's answer per dtype, made once: every case's check asks (runner list, runner run). */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int done, rc;
	struct bd_error err;
} probes[DTYPE_COUNT];

int onednn_gemm_supported(enum bd_dtype ab_dtype, struct bd_error *err)
{
	struct onednn_gemm_desc d = {.m = 8, .n = 8, .k = 8, .ab_dtype = ab_dtype,
				     .c_dtype = DTYPE_FLOAT32};
	if ((unsigned)ab_dtype >= DTYPE_COUNT)
		return bd_fail(err, BD_EINVAL, "onednn matmul: unknown dtype %d", (int)ab_dtype);
	pthread_mutex_lock(&probe_lock);
	if (!probes[ab_dtype].done) {
		struct onednn_gemm *g = NULL;
		int rc = onednn_gemm_create(&g, &d, NULL, &probes[ab_dtype].err);
		if (!rc && g->a32)   /* only the fallback could make it */
			rc = fail_unimplemented(&probes[ab_dtype].err, &d);
		onednn_gemm_free(g);
		/* an engine or memory failure says nothing about the CPU: asked again next time */
		probes[ab_dtype].done = rc == 0 || rc == BD_EUNSUPPORTED;
		probes[ab_dtype].rc = rc;
	}
	int rc = probes[ab_dtype].rc;
	if (rc && err)
		*err = probes[ab_dtype].err;
	pthread_mutex_unlock(&probe_lock);
	return rc;
}

void onednn_gemm_free(struct onednn_gemm *g)
{
	if (!g)
		return;
	if (g->primitive)
		dnnl_primitive_destroy(g->primitive);
	if (g->a_mem)
		dnnl_memory_destroy(g->a_mem);
	if (g->b_mem)
		dnnl_memory_destroy(g->b_mem);
	if (g->c_mem)
		dnnl_memory_destroy(g->c_mem);
	if (g->scratch_mem)
		dnnl_memory_destroy(g->scratch_mem);
	buf_free(g, g->scratch);
	buf_free(g, g->a32);
	buf_free(g, g->b32);
	buf_free(g, g->c32);
	free(g);
}

size_t onednn_gemm_scratch_bytes(const struct onednn_gemm *g)
{
	return g->scratch_bytes + g->fallback_bytes;
}

int onednn_gemm_is_fallback(const struct onednn_gemm *g) { return g->a32 != NULL; }

const char *onednn_gemm_impl(const struct onednn_gemm *g) { return g->impl; }

int onednn_version(char *buf, size_t size)
{
	const dnnl_version_t *v = dnnl_version();
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
	const char *isa_text = isa_name(isa);
	char isa_num[32];
	if (!isa_text) {
		snprintf(isa_num, sizeof(isa_num), "0x%x", (unsigned)isa);
		isa_text = isa_num;
	}
	return snprintf(buf, size, "oneDNN %d.%d.%d (cpu runtime: %s, isa: %s)", v->major, v->minor,
			v->patch, runtime_name(v->cpu_runtime), isa_text);
}
