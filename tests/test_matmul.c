/* tests/test_matmul.c: the oneDNN GEMM wrapper (float32 and bfloat16, transposes, batches,
 * strides, alpha/beta, errors, scratchpad accounting, version string) against a float64
 * reference, and the "matmul"/"onednn" workload through kernels/workload.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include "bf16.h"
#include "dnnl_wrap.h"
#include "planted_wait.h"
#include "rng.h"
#include "workload.h"

/* Element bound: tol · Σ_k |a_ik·b_kj| (+ for beta, |beta·c|). float32 accumulation stays within
 * a few ulps of that sum; 1e-5 is ~100 ulps, so a missing or doubled term (~1/k of it) fails. */
#define FP32_TOL 1e-5
/* bfloat16 inputs rounded from float32 inputs: each factor is off by up to 2^-9 relative, so a
 * product by up to ~2^-8; the sum by at most 2^-8 of Σ|a·b|. */
#define BF16_VS_FP32_TOL 0x1p-8

static int native_bf16;          /* oneDNN multiplies bfloat16 natively on this CPU */
static char onednn_isa[160];     /* onednn_version's text */

/* A test matrix: logical (rows, cols) element (i, j) at data[i·rs + j·cs + batch·bs]. */
struct matrix {
	float *data;
	int64_t rs, cs, bs;
};

static float at(const struct matrix *m, int64_t b, int64_t i, int64_t j)
{
	return m->data[b * m->bs + i * m->rs + j * m->cs];
}

/* Compare C (ldc, batch stride sc) with alpha·A·B + beta·C0 for every element. */
static void expect_product(const struct onednn_gemm_desc *d, const struct matrix *a,
			   const struct matrix *b, const float *c0, const float *c, int64_t ldc,
			   int64_t sc, double tol)
{
	int64_t batch = d->batch ? d->batch : 1;
	double alpha = d->alpha ? d->alpha : 1.0;
	for (int64_t bi = 0; bi < batch; bi++)
		for (int64_t i = 0; i < d->m; i++)
			for (int64_t j = 0; j < d->n; j++) {
				double want = 0, mag = 0;
				for (int64_t k = 0; k < d->k; k++) {
					double x = (double)at(a, bi, i, k) * at(b, bi, k, j);
					want += x;
					mag += fabs(x);
				}
				int64_t idx = bi * sc + i * ldc + j;
				want = alpha * want + d->beta * (c0 ? c0[idx] : 0);
				mag = fabs(alpha) * mag + fabs(d->beta * (c0 ? c0[idx] : 0));
				double diff = fabs(c[idx] - want);
				if (!(diff <= tol * mag + 1e-30))
					fail_msg("C[%lld][%lld][%lld] = %.9g, want %.9g (|diff| %.3g > %.3g)",
						 (long long)bi, (long long)i, (long long)j, c[idx], want,
						 diff, tol * mag);
			}
}

static float *random_floats(struct rng *r, int64_t n)
{
	float *x = malloc((size_t)n * sizeof(*x));
	assert_non_null(x);
	rng_fill(r, x, (size_t)n, -1.0f, 1.0f);
	return x;
}

/* Round x to bfloat16 values in place and return their bfloat16 copy (caller frees). */
static uint16_t *to_bf16(float *x, int64_t n)
{
	uint16_t *h = malloc((size_t)n * sizeof(*h));
	assert_non_null(h);
	for (int64_t i = 0; i < n; i++)
		x[i] = bf16_to_float(h[i] = bf16_from_float(x[i]));
	return h;
}

/* A product with every layout feature (batch, transposes, leading dimensions with pad extra
 * columns, alpha, beta), A and B in ab, C in c_dtype, against the float64 product of the values
 * the GEMM was given. */
static void expect_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
			int64_t pad, float alpha, float beta, enum bd_dtype ab, enum bd_dtype c_dtype)
{
	/* stored shapes, with pad extra columns per row so that ld > packed */
	int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
	int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
	int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
	int64_t sa = a_rows * lda, sb = b_rows * ldb, sc = m * ldc;
	struct rng r;
	rng_init(&r, (uint64_t)(m * 7 + n * 3 + k + trans_a * 2 + trans_b));
	float *a = random_floats(&r, batch * sa), *b = random_floats(&r, batch * sb);
	float *c = random_floats(&r, batch * sc);
	int bf16_in = ab == DTYPE_BFLOAT16, bf16_out = c_dtype == DTYPE_BFLOAT16;
	uint16_t *a16 = bf16_in ? to_bf16(a, batch * sa) : NULL;
	uint16_t *b16 = bf16_in ? to_bf16(b, batch * sb) : NULL;
	uint16_t *c16 = bf16_out ? to_bf16(c, batch * sc) : NULL;
	float *c0 = malloc((size_t)(batch * sc) * sizeof(float));
	memcpy(c0, c, (size_t)(batch * sc) * sizeof(float));
	struct onednn_gemm_desc d = {
		.batch = batch, .m = m, .n = n, .k = k, .trans_a = trans_a, .trans_b = trans_b,
		.lda = lda, .ldb = ldb, .ldc = ldc, .stride_a = sa, .stride_b = sb, .stride_c = sc,
		.ab_dtype = ab, .c_dtype = c_dtype, .alpha = alpha, .beta = beta,
	};
	struct onednn_gemm *g = NULL;
	struct bd_error err = {0};
	if (onednn_gemm_create(&g, &d, NULL, &err) < 0)
		fail_msg("create: %s", err.msg);
	/* the fallback exactly where bfloat16 is not native */
	assert_int_equal(onednn_gemm_is_fallback(g), bf16_in && !native_bf16);
	if (onednn_gemm_execute(g, bf16_in ? (void *)a16 : a, bf16_in ? (void *)b16 : b,
				bf16_out ? (void *)c16 : c, &err) < 0)
		fail_msg("execute: %s", err.msg);
	for (int64_t i = 0; bf16_out && i < batch * sc; i++)
		c[i] = bf16_to_float(c16[i]);
	struct matrix ma = {a, trans_a ? 1 : lda, trans_a ? lda : 1, sa};
	struct matrix mb = {b, trans_b ? 1 : ldb, trans_b ? ldb : 1, sb};
	/* float32 accumulation; a bfloat16 C adds its rounding, 2^-9 of |C| */
	expect_product(&d, &ma, &mb, c0, c, ldc, sc, bf16_out ? 0x1p-8 : FP32_TOL);
	/* padding columns of C are untouched */
	for (int64_t bi = 0; bi < batch; bi++)
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = n; j < ldc; j++)
				assert_true(c[bi * sc + i * ldc + j] == c0[bi * sc + i * ldc + j]);
	onednn_gemm_free(g);
	free(a), free(b), free(c), free(c0), free(a16), free(b16), free(c16);
}

static void expect_fp32_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, int trans_a,
			     int trans_b, int64_t pad, float alpha, float beta)
{
	expect_gemm(batch, m, n, k, trans_a, trans_b, pad, alpha, beta, DTYPE_FLOAT32,
		    DTYPE_FLOAT32);
}

static void test_gemm_fp32_matches_double_reference(void **state)
{
	(void)state;
	expect_fp32_gemm(1, 37, 29, 53, 0, 0, 0, 0, 0);
	expect_fp32_gemm(1, 1, 1, 1, 0, 0, 0, 0, 0);
	expect_fp32_gemm(1, 128, 96, 300, 0, 0, 0, 0, 0);
}

static void test_gemm_fp32_transposed_a_and_b(void **state)
{
	(void)state;
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++)
			expect_fp32_gemm(1, 33, 17, 65, ta, tb, 0, 0, 0);
}

static void test_gemm_fp32_batched_with_leading_dims_and_strides(void **state)
{
	(void)state;
	expect_fp32_gemm(3, 19, 23, 31, 0, 0, 5, 0, 0);
	expect_fp32_gemm(4, 16, 40, 24, 1, 1, 3, 0, 0);
	expect_fp32_gemm(5, 7, 9, 11, 0, 1, 0, 0, 0);
}

static void test_gemm_alpha_scales_and_beta_accumulates(void **state)
{
	(void)state;
	expect_fp32_gemm(1, 21, 13, 34, 0, 1, 0, 0.125f, 0);
	expect_fp32_gemm(1, 21, 13, 34, 0, 0, 0, 1, 1);
	expect_fp32_gemm(2, 21, 13, 34, 1, 0, 2, -0.5f, 0.75f);
}

/* bf16 A (m, k) and B (k, n) from float inputs; C float32 or bfloat16 */
static void expect_bf16_gemm(int64_t m, int64_t n, int64_t k, enum bd_dtype c_dtype)
{
	struct rng r;
	rng_init(&r, 99);
	float *a = random_floats(&r, m * k), *b = random_floats(&r, k * n);
	uint16_t *a16 = malloc((size_t)(m * k) * 2), *b16 = malloc((size_t)(k * n) * 2);
	float *ar = malloc((size_t)(m * k) * 4), *br = malloc((size_t)(k * n) * 4);
	for (int64_t i = 0; i < m * k; i++)
		ar[i] = bf16_to_float(a16[i] = bf16_from_float(a[i]));
	for (int64_t i = 0; i < k * n; i++)
		br[i] = bf16_to_float(b16[i] = bf16_from_float(b[i]));
	float *c = malloc((size_t)(m * n) * 4);
	uint16_t *c16 = malloc((size_t)(m * n) * 2);
	struct onednn_gemm_desc d = {.m = m, .n = n, .k = k, .ab_dtype = DTYPE_BFLOAT16,
				     .c_dtype = c_dtype};
	struct onednn_gemm *g = NULL;
	struct bd_error err = {0};
	if (onednn_gemm_create(&g, &d, NULL, &err) < 0)
		fail_msg("create: %s", err.msg);
	assert_int_equal(onednn_gemm_is_fallback(g), !native_bf16);
	if (onednn_gemm_execute(g, a16, b16, c_dtype == DTYPE_BFLOAT16 ? (void *)c16 : c, &err) < 0)
		fail_msg("execute: %s", err.msg);
	if (c_dtype == DTYPE_BFLOAT16)
		for (int64_t i = 0; i < m * n; i++)
			c[i] = bf16_to_float(c16[i]);
	/* against the rounded inputs: float32 accumulation (bfloat16 output adds 2^-9 of |C|) */
	struct matrix ma = {ar, k, 1, 0}, mb = {br, n, 1, 0};
	expect_product(&d, &ma, &mb, NULL, c, n, 0, c_dtype == DTYPE_BFLOAT16 ? 0x1p-8 : FP32_TOL);
	/* against the original float32 inputs: within bfloat16 rounding */
	struct matrix fa = {a, k, 1, 0}, fb = {b, n, 1, 0};
	expect_product(&d, &fa, &fb, NULL, c, n, 0, BF16_VS_FP32_TOL * 2);
	onednn_gemm_free(g);
	free(a), free(b), free(a16), free(b16), free(ar), free(br), free(c), free(c16);
}

static void test_gemm_bf16_matches_reference_within_8bit_mantissa(void **state)
{
	(void)state;
	expect_bf16_gemm(45, 38, 70, DTYPE_FLOAT32);
	expect_bf16_gemm(128, 64, 256, DTYPE_FLOAT32);
}

static void test_gemm_bf16_with_bf16_output(void **state)
{
	(void)state;
	expect_bf16_gemm(33, 20, 48, DTYPE_BFLOAT16);
}

/* The layouts the model's bfloat16 GEMMs use: batches, transposes, leading dimensions, alpha,
 * and beta accumulating into a float32 or a bfloat16 C. */
static void test_gemm_bf16_batched_transposed_strided_with_beta(void **state)
{
	(void)state;
	expect_gemm(3, 19, 23, 31, 0, 1, 5, 0.5f, 1, DTYPE_BFLOAT16, DTYPE_FLOAT32);
	expect_gemm(2, 21, 13, 34, 1, 0, 3, 1, 0.75f, DTYPE_BFLOAT16, DTYPE_BFLOAT16);
	expect_gemm(1, 17, 9, 40, 1, 1, 0, 0, 0, DTYPE_BFLOAT16, DTYPE_BFLOAT16);
}

/* One operand in ab: float32 values (rounded to bfloat16 in place when ab is bfloat16), and
 * what the GEMM takes (the same array, or its bfloat16 copy in *h, which the caller frees). */
static void *operand(float *x, int64_t n, enum bd_dtype ab, uint16_t **h)
{
	*h = ab == DTYPE_BFLOAT16 ? to_bf16(x, n) : NULL;
	return *h ? (void *)*h : (void *)x;
}

/* A layer's backward pair as the model runs it: dW(cols, k) = dYᵀ·X and dX(rows, k) = dY·W,
 * each made for one thread, run at once (threads 2) or where OpenMP offers one thread (threads
 * 1) or inside a parallel region (inside: one after the other), each against its float64
 * product, and on as many threads as that says; the shapes are large enough for oneDNN to
 * split each between two threads when it is not made for one. winner, when not 0: both made
 * with desc.tune against "ref" (onednn_tune_contender), each timed before the pair runs. */
static void expect_pair(enum bd_dtype ab, int threads, int inside, int winner)
{
	const int64_t rows = 256, cols = 160, k = 96;
	struct rng r;
	rng_init(&r, 7 + (uint64_t)ab);
	float *dy = random_floats(&r, rows * cols), *x = random_floats(&r, rows * k);
	float *w = random_floats(&r, cols * k);
	float *dw = calloc((size_t)(cols * k), sizeof(float)), *dx = calloc((size_t)(rows * k), 4);
	uint16_t *dy16, *x16, *w16;
	void *dy_in = operand(dy, rows * cols, ab, &dy16), *x_in = operand(x, rows * k, ab, &x16);
	void *w_in = operand(w, cols * k, ab, &w16);
	struct onednn_gemm_desc ddw = {.m = cols, .n = k, .k = rows, .trans_a = 1, .ab_dtype = ab,
				       .c_dtype = DTYPE_FLOAT32, .single_thread = 1, .tune = !!winner};
	struct onednn_gemm_desc ddx = {.m = rows, .n = k, .k = cols, .ab_dtype = ab,
				       .c_dtype = DTYPE_FLOAT32, .single_thread = 1, .tune = !!winner};
	struct onednn_gemm *gw = NULL, *gx = NULL;
	struct bd_error err = {0};
	if (winner)
		onednn_tune_contender("ref", winner);
	if (onednn_gemm_create(&gw, &ddw, NULL, &err) < 0 ||
	    onednn_gemm_create(&gx, &ddx, NULL, &err) < 0)
		fail_msg("create: %s", err.msg);
	int before = omp_get_max_threads(), dynamic = omp_get_dynamic(), rc = 0;
	omp_set_dynamic(0);   /* the teams asked for, whatever OMP_DYNAMIC says */
	omp_set_num_threads(threads);
	if (inside) {
#pragma omp parallel num_threads(2)
#pragma omp single
		rc = onednn_gemm_execute_pair(gw, dy_in, x_in, dw, gx, dy_in, w_in, dx, &err);
	} else {
		rc = onednn_gemm_execute_pair(gw, dy_in, x_in, dw, gx, dy_in, w_in, dx, &err);
		/* the tuning's timing on one thread gave the caller's thread count back */
		assert_int_equal(omp_get_max_threads(), threads);
	}
	omp_set_num_threads(before);
	omp_set_dynamic(dynamic);
	onednn_tune_contender(NULL, 0);
	if (rc)
		fail_msg("execute_pair: %s", err.msg);
	assert_int_equal(onednn_gemm_pair_threads(), inside ? 1 : threads);
	for (int i = 0; winner && i < 2; i++) {
		struct onednn_gemm *g = i ? gx : gw;
		int tuned = !onednn_gemm_is_fallback(g);
		assert_int_equal(onednn_gemm_tuning(g)->tuned, tuned);
		assert_int_equal(!strncmp(onednn_gemm_impl(g), "ref", 3), tuned && winner > 0);
		if (tuned)   /* timed on one thread, as each runs in the pair */
			assert_int_equal(onednn_gemm_tuning(g)->threads, 1);
	}
	struct matrix mdy_t = {dy, 1, cols, 0}, mx = {x, k, 1, 0};
	struct matrix mdy = {dy, cols, 1, 0}, mw = {w, k, 1, 0};
	expect_product(&ddw, &mdy_t, &mx, NULL, dw, k, 0, FP32_TOL);
	expect_product(&ddx, &mdy, &mw, NULL, dx, k, 0, FP32_TOL);
	onednn_gemm_free(gw);
	onednn_gemm_free(gx);
	free(dy), free(x), free(w), free(dw), free(dx), free(dy16), free(x16), free(w16);
}

static void test_gemm_pair_runs_both_products(void **state)
{
	(void)state;
	for (int threads = 1; threads <= 2; threads++) {
		expect_pair(DTYPE_FLOAT32, threads, 0, 0);
		expect_pair(DTYPE_BFLOAT16, threads, 0, 0);
	}
	/* inside a parallel region: on the calling thread, one after the other */
	expect_pair(DTYPE_BFLOAT16, 2, 1, 0);
	/* tuned: each timed on its own first, then the pair on what each kept */
	for (int winner = -1; winner <= 1; winner += 2) {
		expect_pair(DTYPE_FLOAT32, 2, 0, winner);
		expect_pair(DTYPE_BFLOAT16, 2, 0, winner);
		expect_pair(DTYPE_BFLOAT16, 2, 1, winner);
	}
}

/* A pair is two distinct products made for one thread each; anything else is refused. */
static void test_gemm_pair_refuses_shared_or_threaded_products(void **state)
{
	(void)state;
	struct onednn_gemm_desc one = {.m = 8, .n = 8, .k = 8, .single_thread = 1};
	struct onednn_gemm_desc team = {.m = 8, .n = 8, .k = 8};
	struct onednn_gemm *g1 = NULL, *g2 = NULL;
	struct bd_error err = {0};
	float a[64] = {0}, b[64] = {0}, c[64], d[64];
	assert_int_equal(onednn_gemm_create(&g1, &one, NULL, &err), 0);
	assert_int_equal(onednn_gemm_create(&g2, &team, NULL, &err), 0);
	assert_int_equal(onednn_gemm_execute_pair(g1, a, b, c, g2, a, b, d, &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "made for one thread each"));
	memset(&err, 0, sizeof(err));
	assert_int_equal(onednn_gemm_execute_pair(g1, a, b, c, g1, a, b, d, &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "two distinct products"));
	onednn_gemm_free(g1);
	onednn_gemm_free(g2);
}

static void test_bf16_conversion_rounds_to_nearest_even(void **state)
{
	(void)state;
	assert_int_equal(bf16_from_float(1.0f), 0x3f80);
	assert_true(bf16_to_float(bf16_from_float(1.0f + 0x1p-8f)) == 1.0f);          /* tie: even */
	assert_true(bf16_to_float(bf16_from_float(1.0f + 3 * 0x1p-8f)) == 1.0f + 0x1p-6f);
	assert_true(bf16_to_float(bf16_from_float(1.0f + 0x1p-8f + 0x1p-12f)) == 1.0f + 0x1p-7f);
	assert_true(isnan(bf16_to_float(bf16_from_float(NAN))));
}

static void test_gemm_rejects_bad_shapes_with_a_message(void **state)
{
	(void)state;
	struct onednn_gemm *g = (struct onednn_gemm *)&g;
	struct bd_error err = {0};
	struct onednn_gemm_desc d = {.m = 0, .n = 4, .k = 4};
	assert_int_equal(onednn_gemm_create(&g, &d, NULL, &err), BD_EINVAL);
	assert_null(g);
	assert_non_null(strstr(err.msg, "positive"));
	d = (struct onednn_gemm_desc){.m = 4, .n = 4, .k = 4, .lda = 2};
	assert_int_equal(onednn_gemm_create(&g, &d, NULL, &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "leading dimension"));
	d = (struct onednn_gemm_desc){.m = 4, .n = 4, .k = 4, .ab_dtype = DTYPE_FLOAT16};
	assert_int_equal(onednn_gemm_create(&g, &d, NULL, &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "bfloat16"));
	onednn_gemm_free(NULL);
}

static void test_gemm_scratchpad_is_counted_in_mem(void **state)
{
	(void)state;
	struct mem_arena mem;
	mem_init(&mem, 0);
	struct onednn_gemm_desc d = {.batch = 2, .m = 300, .n = 200, .k = 500,
				     .ab_dtype = DTYPE_BFLOAT16};
	struct onednn_gemm *g = NULL;
	struct bd_error err = {0};
	assert_int_equal(onednn_gemm_create(&g, &d, &mem, &err), 0);
	assert_int_equal(mem.live, (int64_t)onednn_gemm_scratch_bytes(g));
	assert_true(onednn_gemm_impl(g)[0] != '\0');
	onednn_gemm_free(g);
	assert_int_equal(mem.live, 0);
}

/* A float32 product of two matrices runs on oneDNN's gemm:jit (its sgemm) whatever the layout:
 * the brgemm matmul oneDNN lists first on AVX-512 runs some of the model's layouts at half rate
 * (dnnl_wrap.c, preferred_impl). */
static void test_gemm_fp32_single_products_take_gemm_jit(void **state)
{
	(void)state;
	struct bd_error err = {0};
	for (int t = 0; t < 3; t++) {
		struct onednn_gemm_desc d = {.m = 96, .n = 3072, .k = 64, .trans_a = t == 1,
					     .trans_b = t == 2, .beta = t == 2 ? 1.0f : 0.0f};
		struct onednn_gemm *g = NULL;
		assert_int_equal(onednn_gemm_create(&g, &d, NULL, &err), 0);
		assert_memory_equal(onednn_gemm_impl(g), "gemm:jit", 8);
		onednn_gemm_free(g);
	}
}

/* A tuned product's layout and types: every layout feature, A and B in ab, C in c, made for
 * the threads or for one (single_thread: as one of a pair). */
struct tune_case {
	int64_t m, n, k;
	int trans_a, trans_b;
	int64_t pad;
	float alpha, beta;
	enum bd_dtype ab, c;
	int single_thread;
};

/* A tuned product (desc.tune): with the contender kept or not, C = alpha·A·B + beta·C0 after
 * the first execution (the timing runs on a copy: beta adds once) and again after a second,
 * the kept implementation is the one the gemm names, the other's scratchpad is given back, and
 * the tuning says what it timed. contender: a prefix of oneDNN's implementation names ("ref"
 * exists on every CPU; NULL: the wrapper's own, by dtype); winner as onednn_tune_contender.
 * Returns whether the product was timed (tuned). */
static int expect_tuned(const char *contender, int winner, const struct tune_case *tc)
{
	int64_t m = tc->m, n = tc->n, k = tc->k, pad = tc->pad;
	int trans_a = tc->trans_a, trans_b = tc->trans_b;
	int64_t lda = (trans_a ? m : k) + pad, ldb = (trans_b ? k : n) + pad, ldc = n + pad;
	/* C exactly as long as its last row's end, so that a read past it is a sanitizer's error */
	int64_t sa = (trans_a ? k : m) * lda, sb = (trans_b ? n : k) * ldb, sc = (m - 1) * ldc + n;
	struct rng r;
	rng_init(&r, (uint64_t)(m + 3 * n + 5 * k + winner + 7 * (int)tc->ab));
	float *a = random_floats(&r, sa), *b = random_floats(&r, sb), *c = random_floats(&r, sc);
	float *c0 = malloc((size_t)sc * sizeof(float)), *c1 = malloc((size_t)sc * sizeof(float));
	assert_non_null(c0);
	assert_non_null(c1);
	uint16_t *a16, *b16, *c16 = tc->c == DTYPE_BFLOAT16 ? to_bf16(c, sc) : NULL;
	uint16_t *c16_1 = c16 ? malloc((size_t)sc * sizeof(uint16_t)) : NULL;
	void *a_in = operand(a, sa, tc->ab, &a16), *b_in = operand(b, sb, tc->ab, &b16);
	memcpy(c0, c, (size_t)sc * sizeof(float));
	struct onednn_gemm_desc d = {.m = m, .n = n, .k = k, .trans_a = trans_a, .trans_b = trans_b,
				     .lda = lda, .ldb = ldb, .ldc = ldc, .alpha = tc->alpha,
				     .beta = tc->beta, .ab_dtype = tc->ab, .c_dtype = tc->c,
				     .single_thread = tc->single_thread, .tune = 1};
	/* float32 accumulation; a bfloat16 C adds its rounding, 2^-9 of |C| */
	double tol = c16 ? 0x1p-8 : FP32_TOL;
	struct mem_arena mem;
	mem_init(&mem, 0);
	struct onednn_gemm *g = NULL;
	struct bd_error err = {0};
	onednn_tune_contender(contender, winner);
	if (onednn_gemm_create(&g, &d, &mem, &err) < 0)
		fail_msg("create: %s", err.msg);
	char choice[64];
	snprintf(choice, sizeof(choice), "%s", onednn_gemm_impl(g));
	assert_int_equal(onednn_gemm_tuning(g)->tuned, 0);
	if (onednn_gemm_execute(g, a_in, b_in, c16 ? (void *)c16 : c, &err) < 0)
		fail_msg("execute: %s", err.msg);
	onednn_tune_contender(NULL, 0);
	for (int64_t i = 0; c16 && i < sc; i++)
		c[i] = bf16_to_float(c16[i]);
	const struct onednn_gemm_tuning *t = onednn_gemm_tuning(g);
	struct matrix ma = {a, trans_a ? 1 : lda, trans_a ? lda : 1, 0};
	struct matrix mb = {b, trans_b ? 1 : ldb, trans_b ? ldb : 1, 0};
	expect_product(&d, &ma, &mb, c0, c, ldc, sc, tol);
	for (int64_t i = 0; i + 1 < m; i++)   /* C's padding is untouched */
		for (int64_t j = n; j < ldc; j++)
			assert_true(c[i * ldc + j] == c0[i * ldc + j]);
	print_message("tuned %s %lldx%lldx%lld%s against %s (winner %d): tuned %d, kept %s "
		      "(%.3g s), other %s (%.3g s)\n", dtype_name(tc->ab), (long long)m,
		      (long long)n, (long long)k, tc->single_thread ? " (1 thread)" : "",
		      contender ? contender : "the default", winner, t->tuned, t->kept, t->kept_s,
		      t->other, t->other_s);
	if (t->tuned) {
		assert_true(t->kept_s > 0 && t->other_s > 0);
		/* timed on the threads it runs with: one for one of a pair */
		assert_int_equal(t->threads, tc->single_thread ? 1 : omp_get_max_threads());
		assert_string_equal(onednn_gemm_impl(g), t->kept);
		assert_int_equal(!strcmp(t->kept, choice), !t->switched);
		assert_int_equal(strcmp(t->other, t->kept) != 0, 1);
		if (winner)
			assert_int_equal(t->switched, winner > 0);
		else   /* by time: the contender when it took under 0.95 of the choice's time */
			assert_int_equal(t->switched, t->switched ? t->kept_s < 0.95 * t->other_s
								  : t->other_s < 0.95 * t->kept_s);
		const char *want = contender ? contender :
				   tc->ab == DTYPE_FLOAT32 ? "brg" : "gemm:jit";
		assert_memory_equal(t->switched ? t->kept : t->other, want, strlen(want));
	} else {   /* no contender on this CPU, or the choice is one already (oneDNN has only
		    * "ref:any" for some strided layouts), or the bfloat16 fallback: the choice,
		    * as without tuning */
		assert_true(onednn_gemm_is_fallback(g) || !contender ||
			    !strncmp(choice, contender, strlen(contender)));
		assert_string_equal(onednn_gemm_impl(g), choice);
	}
	/* only the kept implementation's scratchpad is still held */
	assert_int_equal(mem.live, (int64_t)onednn_gemm_scratch_bytes(g));
	/* the kept primitive runs again, on C0 again */
	memcpy(c1, c0, (size_t)sc * sizeof(float));
	for (int64_t i = 0; c16 && i < sc; i++)
		c16_1[i] = bf16_from_float(c0[i]);
	if (onednn_gemm_execute(g, a_in, b_in, c16 ? (void *)c16_1 : c1, &err) < 0)
		fail_msg("second execute: %s", err.msg);
	for (int64_t i = 0; c16 && i < sc; i++)
		c1[i] = bf16_to_float(c16_1[i]);
	expect_product(&d, &ma, &mb, c0, c1, ldc, sc, tol);
	int tuned = t->tuned;
	onednn_gemm_free(g);
	assert_int_equal(mem.live, 0);
	free(a), free(b), free(c), free(c0), free(c1), free(a16), free(b16), free(c16), free(c16_1);
	return tuned;
}

/* desc.tune keeps a right product whichever implementation wins, whatever the layout and the
 * types, made for the threads or for one (with "ref", which every CPU has, forced to win and
 * to lose; with the default contender by time, where this CPU has one). */
static void test_gemm_tuned_products_stay_right_with_either_kept(void **state)
{
	(void)state;
	const enum bd_dtype f32 = DTYPE_FLOAT32, b16 = DTYPE_BFLOAT16;
	const struct tune_case forced[] = {
		{37, 29, 53, 0, 0, 0, 1, 0, f32, f32, 0},
		{21, 13, 34, 1, 0, 0, -0.5f, 0.75f, f32, f32, 0},
		{21, 13, 34, 1, 0, 3, -0.5f, 0.75f, f32, f32, 0},
		{33, 17, 65, 0, 1, 2, 0.125f, 1, f32, f32, 0},
		{33, 17, 65, 0, 1, 2, 0.125f, 1, f32, f32, 1},
		{33, 17, 65, 0, 1, 0, 0.125f, 1, f32, f32, 1},
		{21, 13, 34, 1, 0, 0, -0.5f, 0.75f, f32, f32, 1},
		{37, 29, 53, 0, 0, 0, 1, 0.5f, f32, f32, 1},
		{37, 29, 53, 0, 1, 0, 1, 0, b16, f32, 0},
		{21, 13, 34, 1, 0, 0, -0.5f, 0.75f, b16, b16, 0},
		{33, 17, 65, 0, 0, 2, 1, 1, b16, f32, 1},
		{33, 17, 65, 1, 0, 0, 1, 0, b16, f32, 1},
	};
	/* timed, by dtype and for the threads or one: oneDNN has only "ref:any" for some layouts
	 * (padded, or transposed with AVX2), which then is the choice and not tuned, but each kind
	 * of product has a layout that is (bfloat16 where it is native: not the fallback) */
	int timed_kinds[2][2] = {{0, 0}, {0, 0}};
	for (int winner = -1; winner <= 1; winner += 2)
		for (size_t i = 0; i < sizeof(forced) / sizeof(forced[0]); i++)
			timed_kinds[forced[i].ab == b16][forced[i].single_thread] +=
				expect_tuned("ref", winner, &forced[i]);
	for (int kind = 0; kind < 4; kind++)
		if (!(kind / 2) || native_bf16)
			assert_true(timed_kinds[kind / 2][kind % 2] > 0);
	const struct tune_case timed[] = {
		{96, 300, 64, 0, 1, 0, 1, 1, f32, f32, 0},
		{64, 96, 300, 1, 0, 0, 1, 0, f32, f32, 0},
		{96, 300, 64, 0, 1, 0, 1, 0, b16, b16, 0},
		{64, 96, 300, 1, 0, 0, 1, 1, b16, f32, 1},
		{128, 64, 200, 0, 1, 0, 1, 1, b16, f32, 0},
	};
	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		expect_tuned(NULL, 0, &timed[i]);
}

/* The tuning is optional: where the memory limit leaves no room for its buffers (the
 * contender's scratchpad, the copy of C it times onto), the product runs untuned and right, and
 * the arena keeps no refusal (the case did not run out of memory). */
static void test_gemm_tuning_refused_by_the_limit_is_not_an_oom(void **state)
{
	(void)state;
	const int64_t m = 96, n = 300, k = 64;
	struct rng r;
	rng_init(&r, 11);
	float *a = random_floats(&r, m * k), *b = random_floats(&r, k * n);
	float *c = calloc((size_t)(m * n), sizeof(float));
	assert_non_null(c);
	struct onednn_gemm_desc d = {.m = m, .n = n, .k = k};
	struct onednn_gemm *g = NULL;
	struct bd_error err = {0};
	assert_int_equal(onednn_gemm_create(&g, &d, NULL, &err), 0);
	size_t own = onednn_gemm_scratch_bytes(g);   /* the choice's scratchpad alone */
	onednn_gemm_free(g);
	for (int contender = 0; contender < 2; contender++) {
		struct mem_arena mem;
		mem_init(&mem, (int64_t)own + 1);
		d.tune = 1;
		/* "ref": no scratchpad, the copy of C refused; the default: its scratchpad too */
		onednn_tune_contender(contender ? "ref" : NULL, 1);
		if (onednn_gemm_create(&g, &d, &mem, &err) < 0)
			fail_msg("create: %s", err.msg);
		if (onednn_gemm_execute(g, a, b, c, &err) < 0)
			fail_msg("execute: %s", err.msg);
		onednn_tune_contender(NULL, 0);
		assert_int_equal(onednn_gemm_tuning(g)->tuned, 0);
		assert_int_equal(mem.failed, 0);
		assert_int_equal(mem.failed_need, 0);
		assert_int_equal(mem.live, (int64_t)own);
		struct matrix ma = {a, k, 1, 0}, mb = {b, n, 1, 0};
		expect_product(&d, &ma, &mb, NULL, c, n, 0, FP32_TOL);
		onednn_gemm_free(g);
		assert_int_equal(mem.live, 0);
	}
	free(a), free(b), free(c);
}

/* The tuning never leaves a product holding much more memory than untuned: a contender whose
 * scratchpad exceeds the choice's by more than C's size is not timed (oneDNN's gemm:jit writing
 * bfloat16 C keeps float32 copies of C there), so that with the contender forced to win the
 * case holds at most C's size more, and no case's memory or limit depends on which won. The
 * model's W2 dX (1024 x 3072 x 768, bfloat16 C, one thread) among them; what the contender
 * alone would hold is printed beside. */
static void test_gemm_tuning_keeps_memory_within_c(void **state)
{
	(void)state;
	const enum bd_dtype f32 = DTYPE_FLOAT32, b16 = DTYPE_BFLOAT16;
	const struct {
		int64_t m, n, k;
		enum bd_dtype ab, c;
		int single_thread;
	} cases[] = {{256, 384, 192, b16, b16, 0},  {1024, 3072, 768, b16, b16, 1},
		     {256, 384, 192, b16, f32, 0},  {256, 384, 192, b16, f32, 1},
		     {256, 384, 192, f32, f32, 0}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const int64_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
		struct onednn_gemm_desc d = {.m = m, .n = n, .k = k, .ab_dtype = cases[i].ab,
					     .c_dtype = cases[i].c,
					     .single_thread = cases[i].single_thread};
		struct rng r;
		rng_init(&r, 13 + i);
		float *a = random_floats(&r, m * k), *b = random_floats(&r, k * n);
		float *c = calloc((size_t)(m * n), sizeof(float));
		assert_non_null(c);
		uint16_t *a_h, *b_h;
		void *a_in = operand(a, m * k, d.ab_dtype, &a_h);
		void *b_in = operand(b, k * n, d.ab_dtype, &b_h);
		size_t c_bytes = (size_t)(m * n) * (d.c_dtype == b16 ? 2 : 4);
		struct onednn_gemm *plain = NULL, *alone = NULL, *g = NULL;
		struct bd_error err = {0};
		struct mem_arena mem;
		mem_init(&mem, 0);
		if (onednn_gemm_create(&plain, &d, NULL, &err) < 0)
			fail_msg("create: %s", err.msg);
		onednn_prefer_impl(d.ab_dtype == f32 ? "brg" : "gemm:jit");   /* the contender */
		int made = onednn_gemm_create(&alone, &d, NULL, &err);
		onednn_prefer_impl(NULL);
		if (made < 0)
			fail_msg("create the contender alone: %s", err.msg);
		d.tune = 1;
		onednn_tune_contender(NULL, 1);   /* the wrapper's own contender, kept if timed */
		if (onednn_gemm_create(&g, &d, &mem, &err) < 0)
			fail_msg("tuned: %s", err.msg);
		/* nothing of the tuning is held before the first execution, and there a contender
		 * over the bound is never made: not even for a moment does the case hold its
		 * scratchpad */
		size_t untuned = onednn_gemm_scratch_bytes(plain);
		int64_t made_peak = mem.peak;
		assert_int_equal(made_peak, (int64_t)untuned);
		if (onednn_gemm_execute(g, a_in, b_in, c, &err) < 0)
			fail_msg("tuned: %s", err.msg);
		onednn_tune_contender(NULL, 0);
		size_t held = onednn_gemm_scratch_bytes(g);
		print_message("%lldx%lldx%lld %s x %s -> %s%s: tuned %d, %s holds %zu bytes of "
			      "scratchpad (untuned %s %zu; %s alone %zu; C %zu; peak while made "
			      "%lld)\n", (long long)m,
			      (long long)n, (long long)k, dtype_name(d.ab_dtype),
			      dtype_name(d.ab_dtype), dtype_name(d.c_dtype),
			      d.single_thread ? " (1 thread)" : "", onednn_gemm_tuning(g)->tuned,
			      onednn_gemm_impl(g), held, onednn_gemm_impl(plain), untuned,
			      onednn_gemm_impl(alone), onednn_gemm_scratch_bytes(alone), c_bytes,
			      (long long)made_peak);
		assert_true(held <= untuned + c_bytes);
		assert_true(mem.peak <= (int64_t)(2 * untuned + 2 * c_bytes));
		assert_int_equal(mem.live, (int64_t)held);
		onednn_gemm_free(plain);
		onednn_gemm_free(alone);
		onednn_gemm_free(g);
		assert_int_equal(mem.live, 0);
		free(a), free(b), free(c), free(a_h), free(b_h);
	}
}

/* Two tuned gemms made before either runs, as a pair's are (the CPU backend makes both, then
 * runs them): until its first execution each holds its choice's memory alone, so under any
 * limit the untuned pair fits, the tuned pair is made and runs, right, and never reports
 * running out of memory (where the tuning finds no room, it runs untuned). The products: a
 * float32 one with A transposed, whose contender (brgemm, where the CPU has it) has a
 * scratchpad, and a bfloat16 one writing float32 (float32 without native bfloat16), whose
 * choice has one; the limits: the untuned pair's need plus each of the tuning's buffers, one
 * byte short and exactly. */
static void test_gemm_tuned_pair_fits_wherever_the_untuned_pair_fits(void **state)
{
	(void)state;
	struct bd_error err = {0};
	enum bd_dtype ab1 = onednn_gemm_supported(DTYPE_BFLOAT16, &err) ? DTYPE_FLOAT32 :
									  DTYPE_BFLOAT16;
	struct onednn_gemm_desc d[2] = {
		{.m = 512, .n = 512, .k = 512, .trans_a = 1, .single_thread = 1},
		{.m = 256, .n = 96, .k = 160, .ab_dtype = ab1, .c_dtype = DTYPE_FLOAT32,
		 .single_thread = 1},
	};
	struct rng r;
	rng_init(&r, 29);
	float *a[2], *b[2], *c[2];
	uint16_t *ah[2], *bh[2];
	void *ain[2], *bin[2];
	int64_t need = 0, own[2], cbytes[2];
	for (int i = 0; i < 2; i++) {
		a[i] = random_floats(&r, d[i].m * d[i].k);
		b[i] = random_floats(&r, d[i].k * d[i].n);
		c[i] = calloc((size_t)(d[i].m * d[i].n), sizeof(float));
		assert_non_null(c[i]);
		ain[i] = operand(a[i], d[i].m * d[i].k, d[i].ab_dtype, &ah[i]);
		bin[i] = operand(b[i], d[i].k * d[i].n, d[i].ab_dtype, &bh[i]);
		cbytes[i] = d[i].m * d[i].n * (int64_t)sizeof(float);
		struct onednn_gemm *g = NULL;
		if (onednn_gemm_create(&g, &d[i], NULL, &err) < 0)
			fail_msg("create: %s", err.msg);
		need += (int64_t)onednn_gemm_scratch_bytes(g);
		onednn_gemm_free(g);
		/* the default contender alone (where oneDNN has none, its first) */
		onednn_prefer_impl(d[i].ab_dtype == DTYPE_FLOAT32 ? "brg" : "gemm:jit");
		int made = onednn_gemm_create(&g, &d[i], NULL, &err);
		onednn_prefer_impl(NULL);
		if (made < 0)
			fail_msg("create the contender alone: %s", err.msg);
		own[i] = (int64_t)onednn_gemm_scratch_bytes(g);
		onednn_gemm_free(g);
	}
	print_message("untuned pair %lld bytes; contenders' scratchpads %lld and %lld; C %lld and "
		      "%lld\n", (long long)need, (long long)own[0], (long long)own[1],
		      (long long)cbytes[0], (long long)cbytes[1]);
	int64_t extra[] = {0, own[0], own[1], cbytes[0], cbytes[1], own[0] + cbytes[0],
			   own[1] + cbytes[1], own[0] + own[1] + cbytes[0] + cbytes[1]};
	for (size_t li = 0; li < 2 * sizeof(extra) / sizeof(extra[0]); li++) {
		int64_t limit = need + extra[li / 2] - (int64_t)(li % 2);
		if (limit < need)
			continue;
		struct mem_arena mem;
		mem_init(&mem, limit);
		struct onednn_gemm *g[2] = {NULL, NULL};
		for (int i = 0; i < 2; i++) {
			d[i].tune = 1;
			memset(c[i], 0, (size_t)cbytes[i]);
			if (onednn_gemm_create(&g[i], &d[i], &mem, &err) < 0)
				fail_msg("limit %lld (the untuned pair's %lld): create product %d: %s",
					 (long long)limit, (long long)need, i, err.msg);
		}
		if (onednn_gemm_execute_pair(g[0], ain[0], bin[0], c[0], g[1], ain[1], bin[1], c[1],
					     &err) < 0)
			fail_msg("limit %lld (the untuned pair's %lld): the pair: %s", (long long)limit,
				 (long long)need, err.msg);
		assert_int_equal(mem.failed, 0);
		assert_true(mem.peak <= limit);
		for (int i = 0; i < 2; i++) {
			struct matrix ma = {a[i], d[i].trans_a ? 1 : d[i].k, d[i].trans_a ? d[i].m : 1, 0};
			struct matrix mb = {b[i], d[i].n, 1, 0};
			expect_product(&d[i], &ma, &mb, NULL, c[i], d[i].n, 0, FP32_TOL);
			onednn_gemm_free(g[i]);
		}
		assert_int_equal(mem.live, 0);
	}
	for (int i = 0; i < 2; i++)
		free(a[i]), free(b[i]), free(c[i]), free(ah[i]), free(bh[i]);
}

/* A tuning timed while the process waited for a CPU (planted: a share of 0.5) keeps the
 * wrapper's choice even where the contender was found faster (forced), says so, and the
 * product is right; the same without the wait keeps the contender. */
static void test_gemm_tuning_under_contention_keeps_the_choice(void **state)
{
	(void)state;
	const int64_t m = 48, n = 40, k = 56;
	struct rng r;
	rng_init(&r, 31);
	float *a = random_floats(&r, m * k), *b = random_floats(&r, k * n);
	float *c = calloc((size_t)(m * n), sizeof(float));
	assert_non_null(c);
	for (int contended = 1; contended >= 0; contended--) {
		struct onednn_gemm_desc d = {.m = m, .n = n, .k = k, .tune = 1};
		struct onednn_gemm *g = NULL;
		struct bd_error err = {0};
		onednn_tune_contender("ref", 1);
		planted_wait_ns = contended ? 1000000 : 0;   /* a share of 0.5, or none */
		if (onednn_gemm_create(&g, &d, NULL, &err) < 0)
			fail_msg("create: %s", err.msg);
		char choice[64];
		snprintf(choice, sizeof(choice), "%s", onednn_gemm_impl(g));
		int rc = onednn_gemm_execute(g, a, b, c, &err);
		planted_wait_ns = 0;
		onednn_tune_contender(NULL, 0);
		if (rc < 0)
			fail_msg("execute: %s", err.msg);
		const struct onednn_gemm_tuning *t = onednn_gemm_tuning(g);
		print_message("contended %d: tuned %d, cpu_wait %.2f, kept %s (choice %s)\n", contended,
			      t->tuned, t->cpu_wait, onednn_gemm_impl(g), choice);
		assert_int_equal(t->tuned, 1);
		assert_int_equal(t->contended, contended);
		assert_true(contended ? t->cpu_wait > 0.4 : t->cpu_wait == 0.0);
		assert_int_equal(t->switched, !contended);
		assert_int_equal(!strncmp(onednn_gemm_impl(g), "ref", 3), !contended);
		if (contended)
			assert_string_equal(onednn_gemm_impl(g), choice);
		struct matrix ma = {a, k, 1, 0}, mb = {b, n, 1, 0};
		expect_product(&d, &ma, &mb, NULL, c, n, 0, FP32_TOL);
		onednn_gemm_free(g);
	}
	free(a), free(b), free(c);
}

/* Only a product of two matrices is tuned, float32 or bfloat16, for the threads or for one:
 * batched products, an untuned desc, the benchmarks' override and the bfloat16 fallback keep
 * the one implementation they are made with. */
static void test_gemm_tuning_only_where_asked_and_possible(void **state)
{
	(void)state;
	struct onednn_gemm_desc ds[] = {
		{.m = 16, .n = 24, .k = 32, .tune = 0},
		{.batch = 3, .m = 16, .n = 24, .k = 32, .tune = 1},
		{.batch = 3, .m = 16, .n = 24, .k = 32, .ab_dtype = DTYPE_BFLOAT16, .tune = 1},
		{.m = 16, .n = 24, .k = 32, .ab_dtype = DTYPE_BFLOAT16, .tune = 1},
		{.m = 16, .n = 24, .k = 32, .single_thread = 1, .tune = 1},
		{.m = 16, .n = 24, .k = 32, .tune = 1},   /* under onednn_prefer_impl */
	};
	size_t n = sizeof(ds) / sizeof(ds[0]);
	float *x = calloc(3 * 24 * 32 * 2, sizeof(float)), *y = calloc(3 * 24 * 32 * 2, sizeof(float));
	assert_non_null(x);
	assert_non_null(y);
	onednn_tune_contender("ref", 1);
	onednn_allow_bf16_fallback(1);
	for (size_t i = 0; i < n; i++) {
		struct onednn_gemm *g = NULL;
		struct bd_error err = {0};
		if (i == n - 1)
			onednn_prefer_impl("");
		assert_int_equal(onednn_gemm_create(&g, &ds[i], NULL, &err), 0);
		char made[64];
		snprintf(made, sizeof(made), "%s", onednn_gemm_impl(g));
		assert_int_equal(onednn_gemm_execute(g, x, x, y, &err), 0);
		/* tuned, and "ref" kept, exactly where asked and possible */
		int want = ds[i].tune && ds[i].batch <= 1 && i != n - 1 &&
			   !onednn_gemm_is_fallback(g);
		assert_int_equal(onednn_gemm_tuning(g)->tuned, want);
		assert_int_equal(!strncmp(onednn_gemm_impl(g), "ref", 3), want);
		if (!want)
			assert_string_equal(onednn_gemm_impl(g), made);
		assert_int_equal(strncmp(made, "ref", 3) != 0, 1);
		onednn_gemm_free(g);
	}
	onednn_prefer_impl(NULL);
	onednn_allow_bf16_fallback(!native_bf16);   /* as main set it */
	onednn_tune_contender(NULL, 0);
	free(x);
	free(y);
}

static void test_onednn_version_names_version_runtime_and_isa(void **state)
{
	(void)state;
	char buf[160];
	int n = onednn_version(buf, sizeof(buf));
	assert_true(n > 0 && n < (int)sizeof(buf));
	assert_true(!strncmp(buf, "oneDNN 2.", 9) || !strncmp(buf, "oneDNN 3.", 9));
	assert_non_null(strstr(buf, "cpu runtime: "));
	assert_non_null(strstr(buf, "isa: "));
	char small[8];
	onednn_version(small, sizeof(small));
	assert_int_equal(strlen(small), 7);
}

/* ---- the workload --------------------------------------------------------------------------- */

static struct case_params matmul_params(int64_t m, int64_t n, int64_t k, enum bd_dtype t)
{
	struct case_params p;
	memset(&p, 0, sizeof(p));
	p.suite = SUITE_MATMUL;
	snprintf(p.impl, sizeof(p.impl), "onednn");
	p.device = DEVICE_CPU;
	p.dtype = t;
	p.pass = PASS_FORWARD;
	p.m = m;
	p.n = n;
	p.k = k;
	p.seed = 5;
	p.warmup = 1;
	p.iters = 1;
	return p;
}

static const struct workload *matmul(void)
{
	const struct workload *w = workload_find("matmul", "onednn", DEVICE_CPU);
	assert_non_null(w);
	return w;
}

/* Without native bfloat16 the GEMM is unsupported, and says what the CPU has and what it needs;
 * the workload's check says the same, so the case is stored `unsupported`, never `error`. */
static void test_gemm_bf16_without_native_support_is_unsupported_with_the_isa(void **state)
{
	(void)state;
	struct bd_error err = {0};
	if (native_bf16) {
		printf("this CPU multiplies bfloat16 natively (%s): nothing unsupported to check; "
		       "run with ONEDNN_MAX_CPU_ISA=AVX2 to see that path\n", onednn_isa);
		skip();
	}
	onednn_allow_bf16_fallback(0);
	struct onednn_gemm_desc d = {.m = 8, .n = 8, .k = 8, .ab_dtype = DTYPE_BFLOAT16};
	struct onednn_gemm *g = (struct onednn_gemm *)&g;
	assert_int_equal(onednn_gemm_create(&g, &d, NULL, &err), BD_EUNSUPPORTED);
	onednn_allow_bf16_fallback(1);
	assert_null(g);
	assert_non_null(strstr(err.msg, "has no bfloat16 matmul on this CPU (isa "));
	assert_non_null(strstr(err.msg, "needs avx512_core"));
	struct wl_status st = {0};
	struct case_params p = matmul_params(64, 64, 64, DTYPE_BFLOAT16);
	assert_int_equal(matmul()->check(&p, &st), STATUS_UNSUPPORTED);
	assert_string_equal(st.reason, err.msg);
	p = matmul_params(64, 64, 64, DTYPE_FLOAT32);
	assert_int_equal(matmul()->check(&p, &st), STATUS_OK);
}

static void test_matmul_workload_validates_fp32_and_bf16(void **state)
{
	(void)state;
	enum bd_dtype types[] = {DTYPE_FLOAT32, DTYPE_BFLOAT16};
	/* the workload never takes the fallback: bfloat16 runs only where it is native */
	for (int i = 0; i < (native_bf16 ? 2 : 1); i++) {
		struct case_params p = matmul_params(130, 70, 257, types[i]);
		struct mem_arena mem;
		struct wl_status st = {0};
		void *s = NULL;
		mem_init(&mem, 0);
		assert_int_equal(matmul()->check(&p, &st), STATUS_OK);
		assert_int_equal(matmul()->setup(&p, &mem, &s, &st), STATUS_OK);
		if (matmul()->validate(s, &st) != STATUS_OK)
			fail_msg("validate %s: %s", dtype_name(types[i]), st.reason);
		assert_true(st.max_diff >= 0 && st.max_diff <= st.tolerance);
		int64_t live = mem.live;
		assert_int_equal(matmul()->run(s, PHASE_FWD, &st), STATUS_OK);
		assert_int_equal(mem.live, live);
		matmul()->teardown(s);
		assert_int_equal(mem.live, 0);
	}
	matmul()->teardown(NULL);
}

static void test_matmul_check_rejects_float16_and_backward(void **state)
{
	(void)state;
	struct wl_status st = {0};
	struct case_params p = matmul_params(8, 8, 8, DTYPE_FLOAT16);
	assert_int_equal(matmul()->check(&p, &st), STATUS_UNSUPPORTED);
	assert_string_equal(st.reason, "the cpu onednn matmul runs float32 and bfloat16 only, not "
			    "float16");
	p = matmul_params(8, 8, 8, DTYPE_FLOAT32);
	p.pass = PASS_FORWARD_BACKWARD;
	assert_int_equal(matmul()->check(&p, &st), STATUS_UNSUPPORTED);
	assert_non_null(strstr(st.reason, "forward"));
	p = matmul_params(8, 0, 8, DTYPE_FLOAT32);
	assert_int_equal(matmul()->check(&p, &st), STATUS_UNSUPPORTED);
}

/* tf32 is a CUDA GEMM mode: the cpu's float32 matmul with tf32: true would be stored as TF32
 * figures of a float32 product (schemas/sweep-format.md: unsupported on the cpu). */
static void test_matmul_check_refuses_tf32_on_the_cpu(void **state)
{
	(void)state;
	struct wl_status st = {0};
	struct case_params p = matmul_params(8, 8, 8, DTYPE_FLOAT32);
	p.tf32 = 1;
	assert_int_equal(matmul()->check(&p, &st), STATUS_UNSUPPORTED);
	assert_non_null(strstr(st.reason, "tf32 is a CUDA GEMM mode"));
}

static void test_matmul_figures_and_oom_under_limit(void **state)
{
	(void)state;
	struct case_params p = matmul_params(100, 200, 300, DTYPE_BFLOAT16);
	struct wl_figures f;
	matmul()->figures(&p, &f);
	assert_true(f.flops[PHASE_FWD] == 2.0 * 100 * 200 * 300);
	assert_true(f.bytes[PHASE_FWD] == (100.0 * 300 + 300.0 * 200) * 2 + 100.0 * 200 * 4);
	struct mem_arena mem;
	struct wl_status st = {0};
	void *s = NULL;
	mem_init(&mem, 50000);
	assert_int_equal(matmul()->setup(&p, &mem, &s, &st), STATUS_OOM);
	assert_non_null(strstr(st.reason, "50000"));
	matmul()->teardown(s);
	assert_int_equal(mem.live, 0);
	/* a oneDNN scratchpad the limit refuses: its size, the total and the limit */
	struct onednn_gemm_desc d = {.m = 256, .n = 384, .k = 192, .ab_dtype = DTYPE_BFLOAT16,
				     .c_dtype = DTYPE_FLOAT32};
	struct onednn_gemm *g = NULL;
	struct bd_error err = {0};
	assert_int_equal(onednn_gemm_create(&g, &d, NULL, &err), 0);
	size_t need = onednn_gemm_scratch_bytes(g);
	int fallback = onednn_gemm_is_fallback(g);
	onednn_gemm_free(g);
	if (need == 0 || fallback)   /* nothing to refuse with this library and CPU */
		return;
	void *held = mem_alloc(&mem, 1000);
	assert_non_null(held);
	mem.limit = (int64_t)need + 999;
	assert_int_equal(onednn_gemm_create(&g, &d, &mem, &err), BD_ENOMEM);
	char want[200];
	snprintf(want, sizeof(want), "needs %zu bytes (%zu in all with the 1000 already allocated), "
		 "over the memory limit of %zu bytes", need, need + 1000, need + 999);
	print_message("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "onednn's scratchpad ("));
	assert_non_null(strstr(err.msg, want));
	mem_free(&mem, held);
	assert_int_equal(mem.live, 0);
}

int main(void)
{
	struct bd_error err = {0};
	native_bf16 = onednn_gemm_supported(DTYPE_BFLOAT16, &err) == 0;
	onednn_version(onednn_isa, sizeof(onednn_isa));
	cpu_wait_plant(planted_reader);   /* the tuning's outcome is the test's, not the load's */
	if (!native_bf16) {
		/* the bfloat16 GEMM tests then check the fallback (dnnl_wrap.h), which holds the
		 * same contract; the workload test checks the refusal */
		printf("no native bfloat16 matmul: %s; bfloat16 GEMM tests use the float32 "
		       "fallback\n", err.msg);
		onednn_allow_bf16_fallback(1);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_fp32_matches_double_reference),
		cmocka_unit_test(test_gemm_fp32_transposed_a_and_b),
		cmocka_unit_test(test_gemm_fp32_batched_with_leading_dims_and_strides),
		cmocka_unit_test(test_gemm_alpha_scales_and_beta_accumulates),
		cmocka_unit_test(test_gemm_fp32_single_products_take_gemm_jit),
		cmocka_unit_test(test_gemm_tuned_products_stay_right_with_either_kept),
		cmocka_unit_test(test_gemm_tuning_only_where_asked_and_possible),
		cmocka_unit_test(test_gemm_tuning_refused_by_the_limit_is_not_an_oom),
		cmocka_unit_test(test_gemm_tuning_keeps_memory_within_c),
		cmocka_unit_test(test_gemm_tuned_pair_fits_wherever_the_untuned_pair_fits),
		cmocka_unit_test(test_gemm_tuning_under_contention_keeps_the_choice),
		cmocka_unit_test(test_gemm_bf16_matches_reference_within_8bit_mantissa),
		cmocka_unit_test(test_gemm_bf16_with_bf16_output),
		cmocka_unit_test(test_gemm_bf16_batched_transposed_strided_with_beta),
		cmocka_unit_test(test_gemm_bf16_without_native_support_is_unsupported_with_the_isa),
		cmocka_unit_test(test_gemm_pair_runs_both_products),
		cmocka_unit_test(test_gemm_pair_refuses_shared_or_threaded_products),
		cmocka_unit_test(test_bf16_conversion_rounds_to_nearest_even),
		cmocka_unit_test(test_gemm_rejects_bad_shapes_with_a_message),
		cmocka_unit_test(test_gemm_scratchpad_is_counted_in_mem),
		cmocka_unit_test(test_onednn_version_names_version_runtime_and_isa),
		cmocka_unit_test(test_matmul_workload_validates_fp32_and_bf16),
		cmocka_unit_test(test_matmul_check_rejects_float16_and_backward),
		cmocka_unit_test(test_matmul_check_refuses_tf32_on_the_cpu),
		cmocka_unit_test(test_matmul_figures_and_oom_under_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
