/* tests/test_attention.c: the float64 attention reference against finite differences, the naive
 * and flash float32 kernels against the reference (forward, LSE and backward; odd sequence
 * lengths and head sizes, causal and not), naive in bfloat16 against it, and the attention
 * workloads through kernels/workload.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include "attention_cpu.h"
#include "attention_ref.h"
#include "bf16.h"
#include "dev_workload.h"
#include "dnnl_wrap.h"
#include "impls.h"
#include "rng.h"
#include "workload.h"

/* float32 kernels vs the float64 reference: max |x - ref| <= KERNEL_TOL · max |ref| + 1e-7 per
 * tensor. Measured errors are ~1e-7 of max |ref|, so this leaves two orders of magnitude, and
 * one wrong key in a 193-key softmax (~1/193 of a value) is far outside it. */
#define KERNEL_TOL 2e-5

/* naive in bfloat16 (bfloat16 products, float32 softmax and accumulation) vs the float64
 * reference on the same inputs rounded to bfloat16, so that what is left is P and dS rounded to
 * bfloat16 (2^-9 relative each): measured 0.001-0.0035 of max |ref| for O, dQ, dK and dV over
 * the shapes below, so 1e-2 (the workloads' bfloat16 rule is 1.6e-2, schemas/peer-protocol.md).
 * The LSE comes from float32 scores of the rounded inputs: held to KERNEL_TOL (measured 1e-7). */
#define BF16_TOL 1e-2

/* ---- helpers -------------------------------------------------------------------------------- */

/* x as doubles; rounded to bfloat16 first when round */
static double *to_doubles_as(const float *x, int64_t n, int round)
{
	double *d = malloc((size_t)n * sizeof(*d));
	assert_non_null(d);
	for (int64_t i = 0; i < n; i++)
		d[i] = round ? bf16_to_float(bf16_from_float(x[i])) : x[i];
	return d;
}

static double *to_doubles(const float *x, int64_t n) { return to_doubles_as(x, n, 0); }

static float *random_floats(struct rng *r, int64_t n)
{
	float *x = malloc((size_t)n * sizeof(*x));
	assert_non_null(x);
	rng_fill(r, x, (size_t)n, -1.0f, 1.0f);
	return x;
}

/* max |x - ref| / (max |ref| + 1e-7/KERNEL_TOL): at most KERNEL_TOL when x is close enough */
static double scaled_error(const float *x, const double *ref, int64_t n)
{
	double err = 0, scale = 0;
	for (int64_t i = 0; i < n; i++) {
		double e = fabs(x[i] - ref[i]);
		if (isnan(x[i]))
			e = INFINITY;
		err = e > err ? e : err;
		scale = fabs(ref[i]) > scale ? fabs(ref[i]) : scale;
	}
	return err / (scale + 1e-7 / KERNEL_TOL);
}

/* Returns the scaled error; fails past tol. */
static double expect_close(const char *what, const char *impl, const struct attention_dims *d,
			   const float *x, const double *ref, int64_t n, double tol)
{
	double e = scaled_error(x, ref, n);
	if (!(e <= tol))
		fail_msg("%s %s differs from the reference by %.3g of its max (allowed %.3g) at "
			 "B=%lld H=%lld S=%lld D=%lld causal=%d", impl, what, e, tol,
			 (long long)d->batch, (long long)d->heads, (long long)d->seq_len,
			 (long long)d->head_dim, d->causal);
	return e;
}

/* Run impl forward and backward in math on random inputs of shape d and hold O, LSE, dQ, dK
 * and dV to the float64 reference: in float32 at KERNEL_TOL; in bfloat16 (naive) the reference
 * takes the inputs rounded to bfloat16, O and the gradients are held to BF16_TOL, LSE to
 * KERNEL_TOL. */
static void expect_kernel_matches_reference_in(const char *name, enum bd_dtype math, int64_t B,
					       int64_t H, int64_t S, int64_t D, int causal)
{
	struct attention_dims d = {B, H, S, D, causal};
	int64_t n = B * H * S * D, rows = B * H * S;
	int bf16 = math == DTYPE_BFLOAT16;
	double tol = bf16 ? BF16_TOL : KERNEL_TOL;
	struct mem_arena mem;
	struct bd_error err = {0};
	struct attention_cpu *a = NULL;
	mem_init(&mem, 0);
	assert_int_equal(attention_cpu_create(&a, name, &d, math, 1, &mem, &err), 0);

	struct rng r;
	rng_init(&r, (uint64_t)(S * 1000 + D * 10 + causal));
	float *q = random_floats(&r, n), *k = random_floats(&r, n), *v = random_floats(&r, n);
	float *d_o = random_floats(&r, n);
	float *o = calloc((size_t)n, sizeof(float)), *lse = calloc((size_t)rows, sizeof(float));
	float *dq = calloc((size_t)n, sizeof(float)), *dk = calloc((size_t)n, sizeof(float));
	float *dv = calloc((size_t)n, sizeof(float));
	assert_int_equal(attention_cpu_forward(a, q, k, v, o, lse, &err), 0);
	assert_int_equal(attention_cpu_backward(a, q, k, v, o, lse, d_o, dq, dk, dv, &err), 0);

	double *rq = to_doubles_as(q, n, bf16), *rk = to_doubles_as(k, n, bf16);
	double *rv = to_doubles_as(v, n, bf16), *rdo = to_doubles_as(d_o, n, bf16);
	double *ro = malloc((size_t)n * sizeof(double)), *rlse = malloc((size_t)rows * sizeof(double));
	double *rdq = malloc((size_t)n * sizeof(double)), *rdk = malloc((size_t)n * sizeof(double));
	double *rdv = malloc((size_t)n * sizeof(double));
	assert_int_equal(attention_ref_forward(&d, rq, rk, rv, ro, rlse), 0);
	assert_int_equal(attention_ref_backward(&d, rq, rk, rv, rdo, rdq, rdk, rdv), 0);

	double eo = expect_close("O", name, &d, o, ro, n, tol);
	double el = expect_close("LSE", name, &d, lse, rlse, rows, KERNEL_TOL);
	double eq = expect_close("dQ", name, &d, dq, rdq, n, tol);
	double ek = expect_close("dK", name, &d, dk, rdk, n, tol);
	double ev = expect_close("dV", name, &d, dv, rdv, n, tol);
	if (bf16)
		print_message("%s bfloat16 S=%lld D=%lld causal=%d: O %.2g LSE %.2g dQ %.2g dK %.2g "
			      "dV %.2g of max\n", name, (long long)S, (long long)D, causal, eo, el, eq,
			      ek, ev);

	float *fbufs[] = {q, k, v, d_o, o, lse, dq, dk, dv};
	double *dbufs[] = {rq, rk, rv, rdo, ro, rlse, rdq, rdk, rdv};
	for (int i = 0; i < 9; i++) {
		free(fbufs[i]);
		free(dbufs[i]);
	}
	attention_cpu_free(a);
	assert_int_equal(mem.live, 0);
}

static void expect_kernel_matches_reference(const char *name, int64_t B, int64_t H, int64_t S,
					    int64_t D, int causal)
{
	expect_kernel_matches_reference_in(name, DTYPE_FLOAT32, B, H, S, D, causal);
}

/* ---- the reference itself ------------------------------------------------------------------- */

/* L = Σ O ⊙ G */
static double loss(const struct attention_dims *d, const double *q, const double *k,
		   const double *v, const double *g, double *o)
{
	assert_int_equal(attention_ref_forward(d, q, k, v, o, NULL), 0);
	int64_t n = d->batch * d->heads * d->seq_len * d->head_dim;
	double l = 0;
	for (int64_t i = 0; i < n; i++)
		l += o[i] * g[i];
	return l;
}

static void expect_reference_gradients_match_finite_differences(int causal)
{
	struct attention_dims d = {1, 2, 5, 4, causal};
	int64_t n = d.batch * d.heads * d.seq_len * d.head_dim;
	struct rng r;
	rng_init(&r, 7);
	double *x[3], *g = malloc((size_t)n * sizeof(double)), *o = malloc((size_t)n * sizeof(double));
	double *grad[3];
	for (int t = 0; t < 3; t++) {
		x[t] = malloc((size_t)n * sizeof(double));
		grad[t] = malloc((size_t)n * sizeof(double));
		for (int64_t i = 0; i < n; i++)
			x[t][i] = rng_uniform(&r, -1.0f, 1.0f);
	}
	for (int64_t i = 0; i < n; i++)
		g[i] = rng_uniform(&r, -1.0f, 1.0f);
	assert_int_equal(attention_ref_backward(&d, x[0], x[1], x[2], g, grad[0], grad[1], grad[2]),
			 0);
	const char *names[3] = {"dQ", "dK", "dV"};
	const double h = 1e-5;
	double largest = 0;
	for (int t = 0; t < 3; t++)
		for (int64_t i = 0; i < n; i++) {
			double keep = x[t][i];
			x[t][i] = keep + h;
			double up = loss(&d, x[0], x[1], x[2], g, o);
			x[t][i] = keep - h;
			double down = loss(&d, x[0], x[1], x[2], g, o);
			x[t][i] = keep;
			double fd = (up - down) / (2 * h);
			if (fabs(fd - grad[t][i]) > 1e-8 + 1e-6 * fabs(fd))
				fail_msg("reference %s[%lld] = %.12g but the central difference is %.12g "
					 "(causal=%d)", names[t], (long long)i, grad[t][i], fd, causal);
			largest = fabs(fd) > largest ? fabs(fd) : largest;
		}
	assert_true(largest > 1e-2);   /* the comparison was not between zeros */
	for (int t = 0; t < 3; t++) {
		free(x[t]);
		free(grad[t]);
	}
	free(g);
	free(o);
}

static void test_reference_gradients_match_finite_differences(void **state)
{
	(void)state;
	expect_reference_gradients_match_finite_differences(0);
}

static void test_reference_gradients_match_finite_differences_causal(void **state)
{
	(void)state;
	expect_reference_gradients_match_finite_differences(1);
}

static void test_reference_causal_first_row_is_first_value_row(void **state)
{
	(void)state;
	/* query 0 sees only key 0: O[0] = V[0] and LSE[0] = scale·q0·k0 */
	struct attention_dims d = {1, 1, 3, 2, 1};
	double q[6] = {1, 2, 0, 0, 0, 0}, k[6] = {3, -1, 9, 9, 9, 9}, v[6] = {0.5, -0.25, 7, 7, 7, 7};
	double o[6], lse[3];
	assert_int_equal(attention_ref_forward(&d, q, k, v, o, lse), 0);
	assert_true(fabs(o[0] - 0.5) < 1e-15 && fabs(o[1] + 0.25) < 1e-15);
	assert_true(fabs(lse[0] - (1 * 3 + 2 * -1) / sqrt(2.0)) < 1e-15);
}

static void test_reference_rows_variant_matches_full_forward(void **state)
{
	(void)state;
	for (int causal = 0; causal < 2; causal++) {
		int64_t S = 37, D = 8, rows[] = {0, 5, 17, 36};
		struct rng r;
		rng_init(&r, 3);
		double q[37 * 8], k[37 * 8], v[37 * 8], o[37 * 8], lse[37];
		for (int i = 0; i < S * D; i++) {
			q[i] = rng_uniform(&r, -1, 1);
			k[i] = rng_uniform(&r, -1, 1);
			v[i] = rng_uniform(&r, -1, 1);
		}
		assert_int_equal(attention_ref_forward_head(S, D, causal, q, k, v, NULL, S, o, lse), 0);
		double qs[4 * 8], os[4 * 8], lses[4];
		for (int r2 = 0; r2 < 4; r2++)
			memcpy(qs + r2 * D, q + rows[r2] * D, D * sizeof(double));
		assert_int_equal(attention_ref_forward_head(S, D, causal, qs, k, v, rows, 4, os, lses),
				 0);
		for (int r2 = 0; r2 < 4; r2++) {
			assert_true(fabs(lses[r2] - lse[rows[r2]]) < 1e-14);
			for (int j = 0; j < D; j++)
				assert_true(fabs(os[r2 * D + j] - o[rows[r2] * D + j]) < 1e-14);
		}
	}
}

static void test_comparison_detects_one_wrong_value(void **state)
{
	(void)state;
	/* the check these tests rely on must fail for a single entry off by 1e-3 of the scale */
	float x[4] = {0.5f, -0.25f, 1.0f, 0.125f};
	double ref[4] = {0.5, -0.25, 1.0, 0.125};
	assert_true(scaled_error(x, ref, 4) <= KERNEL_TOL);
	x[3] += 1e-3f;
	assert_false(scaled_error(x, ref, 4) <= KERNEL_TOL);
	x[3] = NAN;
	assert_false(scaled_error(x, ref, 4) <= KERNEL_TOL);
}

/* ---- kernels against the reference ---------------------------------------------------------- */

static void test_naive_matches_reference_odd_seq(void **state)
{
	(void)state;
	int64_t seqs[] = {1, 7, 65, 193};
	for (int causal = 0; causal < 2; causal++)
		for (size_t i = 0; i < 4; i++)
			expect_kernel_matches_reference("naive", 2, 2, seqs[i], 32, causal);
}

/* Longer sequences than above, causal and not, at more heads: the model's S = 256, and an odd
 * 531. */
static void test_naive_matches_reference_long_seq(void **state)
{
	(void)state;
	expect_kernel_matches_reference("naive", 2, 3, 256, 16, 1);
	expect_kernel_matches_reference("naive", 1, 1, 531, 8, 1);
	expect_kernel_matches_reference("naive", 1, 1, 256, 8, 0);
}

static void test_naive_matches_reference_head_dims(void **state)
{
	(void)state;
	int64_t dims[] = {16, 40, 64, 128};
	for (size_t i = 0; i < 4; i++)
		expect_kernel_matches_reference("naive", 1, 2, 65, dims[i], (int)(i & 1));
}

/* bfloat16 (the model's mixed precision): odd and tile-sized sequences, causal and not, the
 * model's head size 64 and odd ones; forward and backward. */
static void test_naive_bfloat16_matches_reference_of_rounded_inputs(void **state)
{
	(void)state;
	int64_t seqs[] = {1, 7, 65, 193};
	for (int causal = 0; causal < 2; causal++)
		for (size_t i = 0; i < 4; i++)
			expect_kernel_matches_reference_in("naive", DTYPE_BFLOAT16, 2, 2, seqs[i], 64,
							   causal);
	expect_kernel_matches_reference_in("naive", DTYPE_BFLOAT16, 2, 3, 256, 64, 1);
	expect_kernel_matches_reference_in("naive", DTYPE_BFLOAT16, 1, 2, 100, 40, 1);
	expect_kernel_matches_reference_in("naive", DTYPE_BFLOAT16, 1, 1, 33, 8, 0);
}

/* Keys that differ only below bfloat16's precision (1 + j·2^-15 rounds to 1 for j < 128) get
 * equal weights in bfloat16, so a query of fours has LSE = 4·sqrt(D) + ln S and O = the mean of
 * V's rows rounded to bfloat16; in float32 their scores spread by 4·sqrt(D)·(S - 1)·2^-15 =
 * 0.06, and the LSE moves by about half of that. */
static void test_naive_bfloat16_rounds_the_products_inputs(void **state)
{
	(void)state;
	enum { S = 64, D = 64 };
	struct attention_dims d = {1, 1, S, D, 0};
	static float q[S * D], k[S * D], v[S * D], o[S * D], lse[S];
	struct rng r;
	rng_init(&r, 5);
	rng_fill(&r, v, S * D, -1.0f, 1.0f);
	for (int i = 0; i < S * D; i++) {
		q[i] = 4.0f;
		k[i] = 1.0f + (float)(i / D) * 0x1p-15f;
	}
	double lse_bf16 = 4 * sqrt((double)D) + log((double)S);
	for (int bf16 = 0; bf16 < 2; bf16++) {
		struct mem_arena mem;
		struct bd_error err = {0};
		struct attention_cpu *a = NULL;
		mem_init(&mem, 0);
		assert_int_equal(attention_cpu_create(&a, "naive", &d,
						      bf16 ? DTYPE_BFLOAT16 : DTYPE_FLOAT32, 0, &mem,
						      &err), 0);
		assert_int_equal(attention_cpu_forward(a, q, k, v, o, lse, &err), 0);
		double worst_o = 0;
		for (int j = 0; j < D; j++) {
			double mean = 0;
			for (int i = 0; i < S; i++)
				mean += bf16_to_float(bf16_from_float(v[i * D + j])) / S;
			for (int i = 0; i < S; i++)
				worst_o = fmax(worst_o, fabs(o[i * D + j] - mean));
		}
		if (bf16) {
			assert_true(fabs(lse[S - 1] - lse_bf16) < 1e-5 * lse_bf16);
			assert_true(worst_o < 1e-6);   /* P = 1/64 exactly */
		} else {
			assert_true(fabs(lse[S - 1] - lse_bf16) > 1e-2);
		}
		attention_cpu_free(a);
	}
}

/* Where oneDNN has no bfloat16 matmul (AVX2; ONEDNN_MAX_CPU_ISA=AVX2) and the tests' float32
 * stand-in is off, a bfloat16 naive is refused with the reason, having kept nothing; where it
 * has one, it is made. */
static void test_naive_bfloat16_refused_with_reason_without_bfloat16_matmul(void **state)
{
	(void)state;
	struct attention_dims d = {1, 2, 16, 8, 1};
	struct mem_arena mem;
	struct bd_error err = {0}, probe = {0};
	struct attention_cpu *a = NULL;
	mem_init(&mem, 0);
	int native = onednn_gemm_supported(DTYPE_BFLOAT16, &probe) == 0;
	onednn_allow_bf16_fallback(0);
	int rc = attention_cpu_create(&a, "naive", &d, DTYPE_BFLOAT16, 1, &mem, &err);
	onednn_allow_bf16_fallback(!native);
	if (native) {
		assert_int_equal(rc, 0);
		attention_cpu_free(a);
	} else {
		assert_int_equal(rc, BD_EUNSUPPORTED);
		assert_null(a);
		assert_non_null(strstr(err.msg, "naive"));
		assert_non_null(strstr(err.msg, "bfloat16"));
	}
	assert_int_equal(mem.live, 0);
	/* float16 is no cpu attention's math */
	assert_int_equal(attention_cpu_create(&a, "naive", &d, DTYPE_FLOAT16, 1, &mem, &err),
			 BD_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "float16"));
}

/* flash computes in float32 whatever the case's precision: the same bits for either math. */
static void test_flash_computes_float32_whatever_math(void **state)
{
	(void)state;
	struct attention_dims d = {1, 2, 70, 32, 1};
	int64_t n = 2 * 70 * 32, rows = 2 * 70;
	struct rng r;
	rng_init(&r, 9);
	float *in = random_floats(&r, 4 * n), *out[2];
	for (int bf16 = 0; bf16 < 2; bf16++) {
		struct mem_arena mem;
		struct bd_error err = {0};
		struct attention_cpu *a = NULL;
		mem_init(&mem, 0);
		assert_int_equal(attention_cpu_create(&a, "flash", &d,
						      bf16 ? DTYPE_BFLOAT16 : DTYPE_FLOAT32, 1, &mem,
						      &err), 0);
		float *o = out[bf16] = calloc((size_t)(4 * n + rows), sizeof(float));
		float *lse = o + 4 * n;
		assert_int_equal(attention_cpu_forward(a, in, in + n, in + 2 * n, o, lse, &err), 0);
		assert_int_equal(attention_cpu_backward(a, in, in + n, in + 2 * n, o, lse, in + 3 * n,
							o + n, o + 2 * n, o + 3 * n, &err), 0);
		attention_cpu_free(a);
	}
	assert_memory_equal(out[0], out[1], (size_t)(4 * n + rows) * sizeof(float));
	free(in);
	free(out[0]);
	free(out[1]);
}

static void test_flash_matches_reference_odd_seq(void **state)
{
	(void)state;
	int64_t seqs[] = {1, 7, 65, 193};
	for (size_t i = 0; i < 4; i++)
		expect_kernel_matches_reference("flash", 2, 3, seqs[i], 64, 0);
}

static void test_flash_matches_reference_causal_odd_seq(void **state)
{
	(void)state;
	int64_t seqs[] = {1, 7, 65, 193};
	for (size_t i = 0; i < 4; i++)
		expect_kernel_matches_reference("flash", 2, 3, seqs[i], 64, 1);
}

static void test_flash_matches_reference_head_dims_16_32_40_64_128(void **state)
{
	(void)state;
	int64_t dims[] = {16, 32, 40, 64, 128};
	for (int causal = 0; causal < 2; causal++)
		for (size_t i = 0; i < 5; i++)
			expect_kernel_matches_reference("flash", 1, 2, 97, dims[i], causal);
}

static void test_flash_matches_reference_head_dim_256_and_odd_8_72(void **state)
{
	(void)state;
	expect_kernel_matches_reference("flash", 1, 1, 130, 256, 1);
	expect_kernel_matches_reference("flash", 1, 1, 70, 8, 0);
	expect_kernel_matches_reference("flash", 1, 1, 70, 72, 1);
}

static void test_flash_matches_reference_at_tile_edges(void **state)
{
	(void)state;
	/* around the register tiles (64 columns with AVX-512, 16 with AVX2 and SSE), the softmax
	 * steps of 64 keys / queries, and the 96-row work items and backward key tiles (32 with
	 * SSE), causal and not */
	int64_t seqs[] = {15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 97, 128, 129, 160, 192, 257};
	for (int causal = 0; causal < 2; causal++)
		for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
			expect_kernel_matches_reference("flash", 1, 1, seqs[i], 16, causal);
}

static void test_flash_matches_reference_head_dims_off_the_vector_width(void **state)
{
	(void)state;
	/* head_dim 20 and 100: not a multiple of 8 or 16 floats, so the padded columns of the
	 * output and gradient tiles are a partial register tile */
	for (int causal = 0; causal < 2; causal++) {
		expect_kernel_matches_reference("flash", 2, 1, 161, 20, causal);
		expect_kernel_matches_reference("flash", 1, 2, 83, 100, causal);
	}
}

/* Tests that need a given OpenMP thread count set it with one of these and get the previous
 * count back from restore_threads, also when they fail. */
static int saved_threads;

static int use_2_threads(void **state)
{
	(void)state;
	saved_threads = omp_get_max_threads();
	omp_set_num_threads(2);
	return 0;
}

static int use_4_threads(void **state)
{
	(void)state;
	saved_threads = omp_get_max_threads();
	omp_set_num_threads(4);
	return 0;
}

static int restore_threads(void **state)
{
	(void)state;
	omp_set_num_threads(saved_threads);
	return 0;
}

static void test_flash_backward_sums_dq_partials_when_threads_exceed_heads(void **state)
{
	(void)state;
	/* one head and 4 threads: the key tiles are split into chunks whose dQ partials are summed */
	expect_kernel_matches_reference("flash", 1, 1, 400, 32, 0);
	expect_kernel_matches_reference("flash", 1, 1, 400, 32, 1);
}

static void test_flash_lse_matches_reference_and_naive(void **state)
{
	(void)state;
	struct attention_dims d = {2, 1, 150, 24, 1};
	int64_t n = 2 * 150 * 24, rows = 300;
	struct mem_arena mem;
	struct bd_error err = {0};
	struct attention_cpu *flash = NULL, *naive = NULL;
	mem_init(&mem, 0);
	assert_int_equal(attention_cpu_create(&flash, "flash", &d, DTYPE_FLOAT32, 0, &mem, &err), 0);
	assert_int_equal(attention_cpu_create(&naive, "naive", &d, DTYPE_FLOAT32, 0, &mem, &err), 0);
	struct rng r;
	rng_init(&r, 11);
	float *q = random_floats(&r, n), *k = random_floats(&r, n), *v = random_floats(&r, n);
	float *o = malloc(n * sizeof(float)), *lse_f = malloc(rows * sizeof(float));
	float *lse_n = malloc(rows * sizeof(float));
	assert_int_equal(attention_cpu_forward(flash, q, k, v, o, lse_f, &err), 0);
	assert_int_equal(attention_cpu_forward(naive, q, k, v, o, lse_n, &err), 0);
	double *rq = to_doubles(q, n), *rk = to_doubles(k, n), *rv = to_doubles(v, n);
	double *rlse = malloc(rows * sizeof(double));
	assert_int_equal(attention_ref_forward(&d, rq, rk, rv, NULL, rlse), 0);
	for (int64_t i = 0; i < rows; i++) {
		assert_true(fabs(lse_f[i] - rlse[i]) <= 1e-5 * (1 + fabs(rlse[i])));
		assert_true(fabs(lse_n[i] - rlse[i]) <= 1e-5 * (1 + fabs(rlse[i])));
	}
	/* causal row 0 sees one key: its LSE is that key's score */
	double s00 = 0;
	for (int j = 0; j < 24; j++)
		s00 += rq[j] * rk[j];
	assert_true(fabs(lse_f[0] - s00 / sqrt(24.0)) < 1e-5);
	free(q), free(k), free(v), free(o), free(lse_f), free(lse_n);
	free(rq), free(rk), free(rv), free(rlse);
	attention_cpu_free(flash);
	attention_cpu_free(naive);
}

/* ---- the workloads -------------------------------------------------------------------------- */

static struct case_params attention_params(const char *impl, int64_t B, int64_t H, int64_t S,
					   int64_t D, int causal, enum bd_pass pass)
{
	struct case_params p;
	memset(&p, 0, sizeof(p));
	p.suite = SUITE_ATTENTION;
	snprintf(p.impl, sizeof(p.impl), "%s", impl);
	p.device = DEVICE_CPU;
	p.dtype = DTYPE_FLOAT32;
	p.pass = pass;
	p.batch_size = B;
	p.heads = H;
	p.seq_len = S;
	p.head_dim = D;
	p.causal = causal;
	p.warmup = 1;
	p.iters = 1;
	p.seed = 1234;
	p.sync = 1;
	return p;
}

static const struct workload *find(const char *impl)
{
	const struct workload *w = workload_find("attention", impl, DEVICE_CPU);
	assert_non_null(w);
	return w;
}

/* The attention impls of the cpu table (impls.c) into names; how many. Every test of the
 * workloads below runs each, so that a new one is held to the reference like these. */
static int cpu_attention_impls(const char *names[], int max)
{
	int n = 0;
	for (const struct impl *m = impl_table(DEVICE_CPU); m->suite && n < max; m++)
		if (!strcmp(m->suite, "attention"))
			names[n++] = m->name;
	return n;
}

static void test_registry_has_cpu_naive_and_flash(void **state)
{
	(void)state;
	assert_ptr_equal(find("naive"), find("flash"));
	assert_int_equal(find("naive")->device, DEVICE_CPU);
	assert_null(find("naive")->mark);   /* the cpu is timed with the host clock */
	assert_null(workload_find("attention", "sdpa", DEVICE_CPU));
	const char *impls[8];
	assert_true(cpu_attention_impls(impls, 8) >= 2);
}

static void test_check_rejects_float16_bfloat16_and_train_step_with_reason(void **state)
{
	(void)state;
	const char *impls[8];
	for (int i = 0, n = cpu_attention_impls(impls, 8); i < n; i++) {
		const struct workload *w = find(impls[i]);
		struct wl_status st = {0};
		struct case_params p = attention_params(impls[i], 1, 1, 8, 8, 0, PASS_FORWARD);
		assert_int_equal(w->check(&p, &st), STATUS_OK);
		p.dtype = DTYPE_FLOAT16;
		assert_int_equal(w->check(&p, &st), STATUS_UNSUPPORTED);
		assert_int_equal(st.code, STATUS_UNSUPPORTED);
		assert_non_null(strstr(st.reason, "float32 only"));
		assert_non_null(strstr(st.reason, impls[i]));
		p.dtype = DTYPE_BFLOAT16;
		assert_int_equal(w->check(&p, &st), STATUS_UNSUPPORTED);
		assert_non_null(strstr(st.reason, "bfloat16"));
		p = attention_params(impls[i], 1, 1, 8, 8, 0, PASS_TRAIN_STEP);
		assert_int_equal(w->check(&p, &st), STATUS_UNSUPPORTED);
		assert_non_null(strstr(st.reason, "train_step"));
		p = attention_params(impls[i], 1, 1, 0, 8, 0, PASS_FORWARD);
		assert_int_equal(w->check(&p, &st), STATUS_UNSUPPORTED);
		assert_non_null(strstr(st.reason, "positive"));
	}
}

static void test_figures_count_flops_and_bytes(void **state)
{
	(void)state;
	struct wl_figures f;
	struct case_params p = attention_params("flash", 2, 3, 128, 64, 0, PASS_FORWARD_BACKWARD);
	double fwd = 4.0 * 2 * 3 * 128 * 128 * 64, bhsd = 2.0 * 3 * 128 * 64;
	find("flash")->figures(&p, &f);
	assert_true(f.flops[PHASE_FWD] == fwd && f.flops[PHASE_BWD] == 2.5 * fwd);
	assert_true(f.bytes[PHASE_FWD] == 4 * bhsd * 4 && f.bytes[PHASE_BWD] == 8 * bhsd * 4);
	assert_true(f.flops[PHASE_OPT] == 0 && f.param_bytes == 0);
	p.causal = 1;
	p.pass = PASS_FORWARD;
	find("naive")->figures(&p, &f);
	assert_true(f.flops[PHASE_FWD] == fwd / 2 && f.flops[PHASE_BWD] == 0);
}

static void test_setup_under_tiny_mem_limit_returns_oom_with_bytes(void **state)
{
	(void)state;
	const char *impls[8];
	for (int i = 0, n = cpu_attention_impls(impls, 8); i < n; i++) {
		const struct workload *w = find(impls[i]);
		struct case_params p = attention_params(impls[i], 2, 2, 256, 64, 0, PASS_FORWARD);
		struct mem_arena mem;
		struct wl_status st = {0};
		void *s = NULL;
		mem_init(&mem, 100000);
		assert_int_equal(w->setup(&p, &mem, &s, &st), STATUS_OOM);
		assert_int_equal(st.code, STATUS_OOM);
		assert_non_null(strstr(st.reason, "bytes"));
		assert_non_null(strstr(st.reason, "100000"));   /* the limit */
		w->teardown(s);
		assert_int_equal(mem.live, 0);
	}
	/* the naive attention's P alone is over this limit; the flash attention fits */
	struct case_params p = attention_params("naive", 1, 1, 2048, 64, 0, PASS_FORWARD);
	struct mem_arena mem;
	struct wl_status st = {0};
	void *s = NULL;
	mem_init(&mem, 8 << 20);
	assert_int_equal(find("naive")->setup(&p, &mem, &s, &st), STATUS_OOM);
	assert_non_null(strstr(st.reason, "P (B, H, S, S)"));
	/* what the case needed: P and the tensors the implementation's refusal kept from being
	 * allocated (Q, K, V, O (S, D) and LSE (S) float32) */
	assert_true(mem.failed_need >= (2048.0 * 2048 + 4 * 2048.0 * 64 + 2048) * sizeof(float));
	find("naive")->teardown(s);
	s = NULL;
	p = attention_params("flash", 1, 1, 2048, 64, 0, PASS_FORWARD);
	assert_int_equal(find("flash")->setup(&p, &mem, &s, &st), STATUS_OK);
	find("flash")->teardown(s);
	assert_int_equal(mem.live, 0);
}

/* Peak bytes of a forward_backward case (B = H = 1, D = 64) beyond its own tensors: Q, K, V, O,
 * dO, dQ, dK, dV (S, D) and LSE (S) float32. */
static double peak_beyond_tensors(const char *impl, int64_t S)
{
	const struct workload *w = find(impl);
	struct case_params p = attention_params(impl, 1, 1, S, 64, 0, PASS_FORWARD_BACKWARD);
	struct mem_arena mem;
	struct wl_status st = {0};
	void *s = NULL;
	mem_init(&mem, 0);
	assert_int_equal(w->setup(&p, &mem, &s, &st), STATUS_OK);
	assert_int_equal(w->run(s, PHASE_FWD, &st), STATUS_OK);
	assert_int_equal(w->run(s, PHASE_BWD, &st), STATUS_OK);
	w->teardown(s);
	assert_int_equal(mem.live, 0);
	return (double)mem.peak - (8.0 * S * 64 + S) * sizeof(float);
}

static void test_naive_peak_memory_is_quadratic_and_flash_linear_at_seq_1024(void **state)
{
	(void)state;
	/* with 2 threads (flash holds per-thread copies of one head) */
	double naive = peak_beyond_tensors("naive", 1024), flash = peak_beyond_tensors("flash", 1024);
	double scores = 1024.0 * 1024 * sizeof(float);     /* one S x S float32 matrix */
	assert_true(naive > flash);
	assert_true(naive >= 2 * scores);                   /* P and dP */
	assert_true(flash < scores / 2);
	/* doubling S: the naive attention's extra memory grows about 4x, the flash one's about 2x */
	double naive2 = peak_beyond_tensors("naive", 2048);
	double flash2 = peak_beyond_tensors("flash", 2048);
	if (!(naive2 > 3.5 * naive && flash2 < 2.5 * flash))
		fail_msg("extra bytes at S = 1024 -> 2048: naive %.0f -> %.0f, flash %.0f -> %.0f",
			 naive, naive2, flash, flash2);
}

static void expect_workload_validates(const char *impl, struct case_params p)
{
	const struct workload *w = find(impl);
	struct mem_arena mem;
	struct wl_status st = {0};
	void *s = NULL;
	mem_init(&mem, 0);
	assert_int_equal(w->check(&p, &st), STATUS_OK);
	assert_int_equal(w->setup(&p, &mem, &s, &st), STATUS_OK);
	int rc = w->validate(s, &st);
	if (rc != STATUS_OK)
		fail_msg("%s validate: %s", impl, st.reason);
	assert_true(st.max_diff >= 0 && st.max_diff <= st.tolerance && st.tolerance > 0);
	/* run allocates nothing */
	int64_t live = mem.live;
	unsigned phases = pass_phases(p.pass);
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		if (phases & (1u << ph))
			assert_int_equal(w->run(s, (enum bd_phase)ph, &st), STATUS_OK);
	assert_int_equal(mem.live, live);
	w->teardown(s);
	assert_int_equal(mem.live, 0);
}

static void test_validate_returns_ok_on_full_check(void **state)
{
	(void)state;
	const char *impls[8];
	enum bd_pass passes[] = {PASS_FORWARD, PASS_BACKWARD, PASS_FORWARD_BACKWARD};
	for (int i = 0, n = cpu_attention_impls(impls, 8); i < n; i++)
		for (int j = 0; j < 3; j++)
			expect_workload_validates(impls[i], attention_params(impls[i], 2, 2, 100, 40, j & 1,
									 passes[j]));
}

static void test_validate_returns_ok_on_sampled_rows_and_reduced_backward(void **state)
{
	(void)state;
	/* 2·2·2048²·64·4 reference multiply-adds is over the full-check limit */
	const char *impls[8];
	for (int i = 0, n = cpu_attention_impls(impls, 8); i < n; i++)
		expect_workload_validates(impls[i], attention_params(impls[i], 2, 2, 2048, 64, i & 1,
								     PASS_FORWARD_BACKWARD));
}

static void test_validate_returns_ok_at_two_keys_over_many_heads(void **state)
{
	(void)state;
	/* with two keys dS of a row is (x, -x): over 200 heads some head's dQ or dK is nearly 0
	 * by chance, and float32 rounding noise of its terms must not fail a correct kernel */
	const char *impls[8];
	int64_t dims[] = {3, 12, 24, 48};
	for (int i = 0, n = cpu_attention_impls(impls, 8); i < n; i++)
		for (int causal = 0; causal < 2; causal++)
			for (size_t j = 0; j < sizeof(dims) / sizeof(dims[0]); j++)
				expect_workload_validates(impls[i], attention_params(impls[i], 50, 4, 2,
										     dims[j], causal,
										     PASS_FORWARD_BACKWARD));
}

/* A cpu backend whose attention backward drops the last row of dV in every (batch, head) but
 * the first: the kernel a head-indexing bug would make. It records each attention's shape at
 * create, since its state is the backend's. */
static struct dev_ops first_head_right_ops;
static const struct dev_ops *real_ops;
static struct {
	void *att;
	struct dev_attention_shape s;
} made[4];

static int record_create(struct dev *dev, void **att, const char *impl,
			 const struct dev_attention_shape *s)
{
	int rc = real_ops->attention_create(dev, att, impl, s);
	for (size_t i = 0; !rc && i < sizeof(made) / sizeof(made[0]); i++)
		if (!made[i].att || made[i].att == *att) {
			made[i].att = *att;
			made[i].s = *s;
			break;
		}
	return rc;
}

static int first_head_right_bwd(struct dev *dev, void *att, const void *q, const void *k,
				const void *v, const void *o, const float *lse, const void *d_o,
				void *dq, void *dk, void *dv)
{
	int rc = real_ops->attention_bwd(dev, att, q, k, v, o, lse, d_o, dq, dk, dv);
	for (size_t i = 0; !rc && i < sizeof(made) / sizeof(made[0]); i++)
		if (made[i].att == att) {
			const struct dev_attention_shape *s = &made[i].s;
			for (int64_t h = 1; h < s->b * s->h; h++)
				memset((float *)dv + ((h + 1) * s->t - 1) * s->dh, 0,
				       (size_t)s->dh * sizeof(float));
		}
	return rc;
}

static void test_validate_fails_a_backward_right_only_for_the_first_head(void **state)
{
	(void)state;
	const char *impls[8];
	for (int i = 0, n = cpu_attention_impls(impls, 8); i < n; i++)
		for (int causal = 0; causal < 2; causal++) {
			/* 2·2·1024²·64·4 reference multiply-adds: sampled rows and the reduced
			 * backward */
			struct case_params p = attention_params(impls[i], 2, 2, 1024, 64, causal,
								PASS_FORWARD_BACKWARD);
			const struct workload *w = find(impls[i]);
			struct mem_arena mem;
			struct wl_status st = {0};
			void *s = NULL;
			mem_init(&mem, 0);
			memset(made, 0, sizeof(made));
			assert_int_equal(w->setup(&p, &mem, &s, &st), STATUS_OK);
			struct wl_case *c = s;
			real_ops = c->dev.ops;
			first_head_right_ops = *real_ops;
			first_head_right_ops.attention_create = record_create;
			first_head_right_ops.attention_bwd = first_head_right_bwd;
			c->dev.ops = &first_head_right_ops;
			int rc = w->validate(s, &st);
			c->dev.ops = real_ops;
			w->teardown(s);
			if (rc != STATUS_ERROR || !strstr(st.reason, "dV"))
				fail_msg("%s causal=%d: a backward wrong past the first head validated "
					 "as %d (%s)", impls[i], causal, rc, st.reason);
			assert_int_equal(mem.live, 0);
		}
}

static void test_teardown_accepts_null(void **state)
{
	(void)state;
	find("naive")->teardown(NULL);
	attention_cpu_free(NULL);
}

int main(void)
{
	struct bd_error err = {0};
	if (onednn_gemm_supported(DTYPE_BFLOAT16, &err)) {
		printf("no native bfloat16 matmul: %s; the bfloat16 attention tests use the float32 "
		       "GEMM fallback\n", err.msg);
		onednn_allow_bf16_fallback(1);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_gradients_match_finite_differences),
		cmocka_unit_test(test_reference_gradients_match_finite_differences_causal),
		cmocka_unit_test(test_reference_causal_first_row_is_first_value_row),
		cmocka_unit_test(test_reference_rows_variant_matches_full_forward),
		cmocka_unit_test(test_comparison_detects_one_wrong_value),
		cmocka_unit_test(test_naive_matches_reference_odd_seq),
		cmocka_unit_test(test_naive_matches_reference_long_seq),
		cmocka_unit_test(test_naive_matches_reference_head_dims),
		cmocka_unit_test(test_naive_bfloat16_matches_reference_of_rounded_inputs),
		cmocka_unit_test(test_naive_bfloat16_rounds_the_products_inputs),
		cmocka_unit_test(test_naive_bfloat16_refused_with_reason_without_bfloat16_matmul),
		cmocka_unit_test(test_flash_computes_float32_whatever_math),
		cmocka_unit_test(test_flash_matches_reference_odd_seq),
		cmocka_unit_test(test_flash_matches_reference_causal_odd_seq),
		cmocka_unit_test(test_flash_matches_reference_head_dims_16_32_40_64_128),
		cmocka_unit_test(test_flash_matches_reference_head_dim_256_and_odd_8_72),
		cmocka_unit_test(test_flash_matches_reference_at_tile_edges),
		cmocka_unit_test(test_flash_matches_reference_head_dims_off_the_vector_width),
		cmocka_unit_test_setup_teardown(
			test_flash_backward_sums_dq_partials_when_threads_exceed_heads, use_4_threads,
			restore_threads),
		cmocka_unit_test(test_flash_lse_matches_reference_and_naive),
		cmocka_unit_test(test_registry_has_cpu_naive_and_flash),
		cmocka_unit_test(test_check_rejects_float16_bfloat16_and_train_step_with_reason),
		cmocka_unit_test(test_figures_count_flops_and_bytes),
		cmocka_unit_test(test_setup_under_tiny_mem_limit_returns_oom_with_bytes),
		cmocka_unit_test_setup_teardown(
			test_naive_peak_memory_is_quadratic_and_flash_linear_at_seq_1024, use_2_threads,
			restore_threads),
		cmocka_unit_test(test_validate_returns_ok_on_full_check),
		cmocka_unit_test(test_validate_returns_ok_on_sampled_rows_and_reduced_backward),
		cmocka_unit_test(test_validate_returns_ok_at_two_keys_over_many_heads),
		cmocka_unit_test(test_validate_fails_a_backward_right_only_for_the_first_head),
		cmocka_unit_test(test_teardown_accepts_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
