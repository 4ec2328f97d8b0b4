/* tests/test_ops.c: the CPU kernels of kernels/cpu/ops_cpu.h against float64 references written
 * here: every forward, every backward (each reference backward itself checked by central finite
 * differences of its reference forward), the accumulate-versus-overwrite contracts, the
 * bfloat16 variants against float32, and the AVX-512 BF16 conversions against the scalar
 * fallback, bit for bit. Sizes are odd (vector tails) and at least one is two vectors wide. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include "bf16.h"
#include "ops_cpu.h"
#include "rng.h"

/* float32 kernels against the float64 references, per element:
 *   |x − ref| <= KERNEL_TOL · (|ref| + max |ref|)
 * (max over the tensor). The kernels round each output a handful of times plus a d- or V-term
 * float32 sum (~(d/VL)·2^-24 of the terms' scale), and exp is simd.h's vexp2 (~1e-7 relative
 * plus 2^-24 of its argument); measured errors stay below 1e-6 of the scale, so 1e-5 leaves an
 * order of magnitude, and an off-by-one index or a sign error (errors of order 1) is far out. */
#define KERNEL_TOL 1e-5
/* A bfloat16 output against the float32 kernel on the same inputs: one rounding to 8
 * significant bits, at most 2^-8 of the value (the unit roundoff of round-to-nearest with 8
 * bits), plus KERNEL_TOL for float32 differences before the rounding. */
#define BF16_TOL (0x1p-8 + KERNEL_TOL)
/* Central differences of the float64 references with step FD_STEP: truncation ~FD_STEP^2 and
 * cancellation ~1e-16·|L|/FD_STEP, both far below 1e-8 here. */
#define FD_STEP 1e-5

/* ---- helpers -------------------------------------------------------------------------------- */

static float *floats(int64_t n)
{
	float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(*x));
	assert_non_null(x);
	return x;
}

static double *doubles(int64_t n)
{
	double *x = calloc((size_t)(n > 0 ? n : 1), sizeof(*x));
	assert_non_null(x);
	return x;
}

static uint16_t *halves(int64_t n)
{
	uint16_t *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(*x));
	assert_non_null(x);
	return x;
}

/* uniform in [lo, hi), redrawn while |x| < 1e-3 so that no input is (near) zero */
static float nonzero_uniform(struct rng *r, float lo, float hi)
{
	float x;
	do
		x = rng_uniform(r, lo, hi);
	while (fabsf(x) < 1e-3f);
	return x;
}

static float *random_floats(struct rng *r, int64_t n, float lo, float hi)
{
	float *x = floats(n);
	for (int64_t i = 0; i < n; i++)
		x[i] = nonzero_uniform(r, lo, hi);
	return x;
}

static double *to_doubles(const float *x, int64_t n)
{
	double *d = doubles(n);
	for (int64_t i = 0; i < n; i++)
		d[i] = x[i];
	return d;
}

/* max over i of |x − ref| / (KERNEL_TOL-free scale |ref| + max |ref|); NaN counts as infinite */
static double scaled_error(const float *x, const double *ref, int64_t n)
{
	double scale = 0, worst = 0;
	for (int64_t i = 0; i < n; i++)
		scale = fabs(ref[i]) > scale ? fabs(ref[i]) : scale;
	for (int64_t i = 0; i < n; i++) {
		double e = fabs(x[i] - ref[i]) / (fabs(ref[i]) + scale + 1e-30);
		if (isnan(x[i]))
			e = INFINITY;
		worst = e > worst ? e : worst;
	}
	return worst;
}

static void expect_close_tol(const char *what, const float *x, const double *ref, int64_t n,
			     double tol)
{
	double e = scaled_error(x, ref, n);
	if (!(e <= tol)) {
		int64_t at = 0;
		double worst = -1;
		for (int64_t i = 0; i < n; i++)
			if (!(fabs(x[i] - ref[i]) <= worst)) {
				worst = fabs(x[i] - ref[i]);
				at = i;
			}
		fail_msg("%s: error %.3g of the scale (allowed %.3g); worst at [%lld]: %.9g vs %.9g",
			 what, e, tol, (long long)at, (double)x[at], ref[at]);
	}
}

static void expect_close(const char *what, const float *x, const double *ref, int64_t n)
{
	expect_close_tol(what, x, ref, n, KERNEL_TOL);
}

/* ref_grad against central differences of loss(ctx) in each x[i] (x is read by loss) */
static void expect_gradient_matches_finite_differences(const char *what, double (*loss)(void *),
						       void *ctx, double *x,
						       const double *ref_grad, int64_t n)
{
	double largest = 0;
	for (int64_t i = 0; i < n; i++) {
		double keep = x[i];
		x[i] = keep + FD_STEP;
		double up = loss(ctx);
		x[i] = keep - FD_STEP;
		double down = loss(ctx);
		x[i] = keep;
		double fd = (up - down) / (2 * FD_STEP);
		if (fabs(fd - ref_grad[i]) > 1e-8 + 1e-6 * fabs(fd))
			fail_msg("reference %s[%lld] = %.12g but the central difference is %.12g", what,
				 (long long)i, ref_grad[i], fd);
		largest = fabs(fd) > largest ? fabs(fd) : largest;
	}
	assert_true(largest > 1e-2);    /* the comparison was not between zeros */
}

static double dot(const double *a, const double *b, int64_t n)
{
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

/* Tests that depend on the thread count set it here and get the old one back, also on failure.
 * 3 threads split 7 rows unevenly and give more than one partial. */
static int saved_threads;

static int use_3_threads(void **state)
{
	(void)state;
	saved_threads = omp_get_max_threads();
	omp_set_num_threads(3);
	return 0;
}

static int restore_threads(void **state)
{
	(void)state;
	omp_set_num_threads(saved_threads);
	return 0;
}

/* teardown of the tests that force the scalar bfloat16 path */
static int unforce_fallback(void **state)
{
	(void)state;
	cpu_ops_force_fallback(0);
	return 0;
}

static int kernel_avx512_bf16_expected(void)
{
#if defined(__AVX512BF16__) && defined(__AVX512F__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512bf16");
#else
	return 0;
#endif
}

static void test_compare__detects_one_wrong_value(void **state)
{
	(void)state;
	float x[4] = {0.5f, -0.25f, 1.0f, 0.125f};
	double ref[4] = {0.5, -0.25, 1.0, 0.125};
	assert_true(scaled_error(x, ref, 4) <= KERNEL_TOL);
	x[3] += 1e-4f;
	assert_false(scaled_error(x, ref, 4) <= KERNEL_TOL);
	x[3] = NAN;
	assert_false(scaled_error(x, ref, 4) <= KERNEL_TOL);
}

/* ---- conversion ----------------------------------------------------------------------------- */

/* Rounding cases around 1 (bfloat16 ulp 2^-7): ties to even down and up, just off the ties, and
 * the specials. */
static const float convert_cases[] = {
	1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-20f, 1.0f + 0x1p-8f - 0x1p-20f,
	-1.0f - 0x1p-8f, -0.0f, 0.0f, 65504.0f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN,
	0x1p-126f, -0x1.fffffep-1f,
};
#define N_CONVERT_CASES ((int64_t)(sizeof(convert_cases) / sizeof(convert_cases[0])))

static void expect_convert_matches_bf16_h(int force_fallback)
{
	cpu_ops_force_fallback(force_fallback);
	int64_t count = 2 * 4096 + 37;       /* several parallel blocks and a vector tail */
	struct rng r;
	rng_init(&r, 21);
	float *x = floats(count), *back = floats(count), *copy = floats(count);
	uint16_t *h = halves(count), *hcopy = halves(count);
	for (int64_t i = 0; i < count; i++) {
		/* random sign, mantissa and exponent over most of the normal range */
		float m = nonzero_uniform(&r, -2.0f, 2.0f);
		x[i] = ldexpf(m, (int)(rng_next(&r) % 200) - 100);
	}
	memcpy(x + 100, convert_cases, sizeof(convert_cases));
	memcpy(x + count - N_CONVERT_CASES, convert_cases, sizeof(convert_cases));
	cpu_convert(h, DTYPE_BFLOAT16, x, DTYPE_FLOAT32, (size_t)count);
	for (int64_t i = 0; i < count; i++)
		if (h[i] != bf16_from_float(x[i]))
			fail_msg("bfloat16(%a) = 0x%04x, bf16.h gives 0x%04x (%s path)", (double)x[i],
				 h[i], bf16_from_float(x[i]), cpu_ops_bf16_path());
	cpu_convert(back, DTYPE_FLOAT32, h, DTYPE_BFLOAT16, (size_t)count);
	for (int64_t i = 0; i < count; i++)
		assert_memory_equal(&back[i], &(float){bf16_to_float(h[i])}, sizeof(float));
	cpu_convert(copy, DTYPE_FLOAT32, x, DTYPE_FLOAT32, (size_t)count);
	assert_memory_equal(copy, x, (size_t)count * sizeof(float));
	cpu_convert(hcopy, DTYPE_BFLOAT16, h, DTYPE_BFLOAT16, (size_t)count);
	assert_memory_equal(hcopy, h, (size_t)count * sizeof(uint16_t));
	free(x), free(back), free(copy), free(h), free(hcopy);
}

static void test_convert__float32_to_bfloat16_rounds_like_bf16_h_on_both_paths(void **state)
{
	(void)state;
	expect_convert_matches_bf16_h(1);
	assert_string_equal(cpu_ops_bf16_path(), "scalar");
	expect_convert_matches_bf16_h(0);
	cpu_ops_force_fallback(0);
}

static void test_convert__denormals_round_on_scalar_path_and_flush_on_avx512(void **state)
{
	(void)state;
	float x[3] = {0x1p-130f, -0x1.8p-140f, 0x1.fffp-127f};
	uint16_t h[3];
	cpu_ops_force_fallback(1);
	cpu_convert(h, DTYPE_BFLOAT16, x, DTYPE_FLOAT32, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(h[i], bf16_from_float(x[i]));
	cpu_ops_force_fallback(0);
	cpu_convert(h, DTYPE_BFLOAT16, x, DTYPE_FLOAT32, 3);
	if (kernel_avx512_bf16_expected()) {
		/* VCVTNEPS2BF16 treats denormal inputs as zero, keeping the sign */
		assert_int_equal(h[0], 0x0000);
		assert_int_equal(h[1], 0x8000);
		assert_int_equal(h[2], 0x0000);
	} else {
		for (int i = 0; i < 3; i++)
			assert_int_equal(h[i], bf16_from_float(x[i]));
	}
}

static void test_bf16_path__names_the_path_in_effect(void **state)
{
	(void)state;
	cpu_ops_force_fallback(1);
	assert_string_equal(cpu_ops_bf16_path(), "scalar");
	cpu_ops_force_fallback(0);
	assert_string_equal(cpu_ops_bf16_path(),
			    kernel_avx512_bf16_expected() ? "avx512_bf16" : "scalar");
}

/* ---- embedding ------------------------------------------------------------------------------ */

static void ref_embedding_fwd(const int32_t *tokens, const double *table, double *out, int64_t n,
			      int64_t d)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < d; j++)
			out[i * d + j] = table[tokens[i] * d + j];
}

/* dtable += the rows of dout at their tokens */
static void ref_embedding_bwd(const int32_t *tokens, const double *dout, double *dtable, int64_t n,
			      int64_t d)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < d; j++)
			dtable[tokens[i] * d + j] += dout[i * d + j];
}

static void test_embedding__forward_copies_the_token_rows(void **state)
{
	(void)state;
	int64_t sizes[][3] = {{7, 37, 11}, {16, 100, 5}, {1, 3, 2}};   /* n, d, V */
	for (int s = 0; s < 3; s++) {
		int64_t n = sizes[s][0], d = sizes[s][1], V = sizes[s][2];
		struct rng r;
		rng_init(&r, 100 + s);
		float *table = random_floats(&r, V * d, -1, 1), *out = random_floats(&r, n * d, 5, 6);
		int32_t tokens[16];
		for (int64_t i = 0; i < n; i++)
			tokens[i] = (int32_t)(rng_next(&r) % (uint64_t)V);
		double *rt = to_doubles(table, V * d), *ref = doubles(n * d);
		cpu_embedding_fwd(tokens, table, out, n, d);
		ref_embedding_fwd(tokens, rt, ref, n, d);
		for (int64_t i = 0; i < n * d; i++)
			assert_true(out[i] == ref[i]);
		free(table), free(out), free(rt), free(ref);
	}
}

static void test_embedding__backward_adds_into_dtable_summing_repeated_tokens(void **state)
{
	(void)state;
	/* token 3 three times, token 1 twice, token 4 never */
	const int32_t tokens[7] = {3, 1, 3, 3, 0, 1, 5};
	int64_t n = 7, V = 6, dims[] = {37, 100, 5};
	for (int s = 0; s < 3; s++) {
		int64_t d = dims[s];
		struct rng r;
		rng_init(&r, 200 + s);
		float *dout = random_floats(&r, n * d, -1, 1);
		float *dtable = random_floats(&r, V * d, -1, 1), *again = floats(V * d);
		float *start = floats(V * d);
		memcpy(start, dtable, (size_t)(V * d) * sizeof(float));
		memcpy(again, dtable, (size_t)(V * d) * sizeof(float));
		double *ref = to_doubles(dtable, V * d), *rdout = to_doubles(dout, n * d);
		cpu_embedding_bwd(tokens, dout, dtable, n, d);
		ref_embedding_bwd(tokens, rdout, ref, n, d);
		expect_close("embedding dtable", dtable, ref, V * d);
		/* the row of the unused token 4 is untouched, bit for bit */
		assert_memory_equal(dtable + 4 * d, start + 4 * d, (size_t)d * sizeof(float));
		/* the same inputs give the same bits */
		cpu_embedding_bwd(tokens, dout, again, n, d);
		assert_memory_equal(again, dtable, (size_t)(V * d) * sizeof(float));
		free(dout), free(dtable), free(again), free(start), free(ref), free(rdout);
	}
}

struct embedding_problem {
	const int32_t *tokens;
	int64_t n, d;
	double *table, *grad_out, *out;
};

static double embedding_loss(void *ctx)
{
	struct embedding_problem *p = ctx;
	ref_embedding_fwd(p->tokens, p->table, p->out, p->n, p->d);
	return dot(p->out, p->grad_out, p->n * p->d);
}

static void test_embedding__reference_backward_matches_finite_differences(void **state)
{
	(void)state;
	const int32_t tokens[5] = {2, 0, 2, 3, 2};
	int64_t n = 5, d = 7, V = 4;
	struct rng r;
	rng_init(&r, 9);
	float *t = random_floats(&r, V * d, -1, 1), *g = random_floats(&r, n * d, -1, 1);
	struct embedding_problem p = {tokens, n, d, to_doubles(t, V * d), to_doubles(g, n * d),
				      doubles(n * d)};
	double *grad = doubles(V * d);
	ref_embedding_bwd(tokens, p.grad_out, grad, n, d);
	expect_gradient_matches_finite_differences("dtable", embedding_loss, &p, p.table, grad, V * d);
	free(t), free(g), free(p.table), free(p.grad_out), free(p.out), free(grad);
}

/* ---- RMSNorm -------------------------------------------------------------------------------- */

static void ref_rmsnorm_fwd(const double *x, const double *g, double *y, double *rstd, int64_t n,
			    int64_t d, double eps)
{
	for (int64_t i = 0; i < n; i++) {
		double ss = 0;
		for (int64_t j = 0; j < d; j++)
			ss += x[i * d + j] * x[i * d + j];
		double r = 1 / sqrt(ss / (double)d + eps);
		if (rstd)
			rstd[i] = r;
		for (int64_t j = 0; j < d; j++)
			y[i * d + j] = x[i * d + j] * r * g[j];
	}
}

/* dx = dL/dx (overwritten), dg = dL/dg */
static void ref_rmsnorm_bwd(const double *dy, const double *x, const double *g, double *dx,
			    double *dg, int64_t n, int64_t d, double eps)
{
	for (int64_t j = 0; j < d; j++)
		dg[j] = 0;
	for (int64_t i = 0; i < n; i++) {
		const double *xi = x + i * d, *dyi = dy + i * d;
		double ss = dot(xi, xi, d), r = 1 / sqrt(ss / (double)d + eps), s = 0;
		for (int64_t j = 0; j < d; j++)
			s += dyi[j] * g[j] * xi[j];
		for (int64_t j = 0; j < d; j++) {
			dx[i * d + j] = r * g[j] * dyi[j] - r * r * r * xi[j] * s / (double)d;
			dg[j] += dyi[j] * xi[j] * r;
		}
	}
}

/* (n, d, eps, x range): odd widths, one two vectors wide and more, one under a vector; small
 * inputs and a large eps so that where eps goes matters */
static const struct rmsnorm_size {
	int64_t n, d;
	float eps, x_range;
} rmsnorm_sizes[] = {
	{7, 37, 1e-5f, 2.0f}, {4, 768, 1e-5f, 1.0f}, {3, 5, 1e-5f, 1.0f},
	{5, 37, 1e-5f, 0.01f}, {2, 100, 0.5f, 1.0f},
};

static void test_rmsnorm__forward_matches_float64_reference(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(rmsnorm_sizes) / sizeof(rmsnorm_sizes[0]); s++) {
		const struct rmsnorm_size *z = &rmsnorm_sizes[s];
		int64_t n = z->n, d = z->d;
		struct rng r;
		rng_init(&r, 300 + s);
		float *x = random_floats(&r, n * d, -z->x_range, z->x_range);
		float *g = random_floats(&r, d, 0.5f, 1.5f), *y = random_floats(&r, n * d, 5, 6);
		float *rstd = random_floats(&r, n, 5, 6);
		double *rx = to_doubles(x, n * d), *rg = to_doubles(g, d);
		double *ry = doubles(n * d), *rrstd = doubles(n);
		cpu_rmsnorm_fwd(x, g, y, DTYPE_FLOAT32, rstd, n, d, z->eps);
		ref_rmsnorm_fwd(rx, rg, ry, rrstd, n, d, z->eps);
		expect_close("rmsnorm y", y, ry, n * d);
		expect_close("rmsnorm rstd", rstd, rrstd, n);
		free(x), free(g), free(y), free(rstd), free(rx), free(rg), free(ry), free(rrstd);
	}
}

/* The fused residual add and norm: x_out is x + y rounded once, h and rstd match the float64
 * norm of x + y, and a bfloat16 h is bit for bit cpu_rmsnorm_fwd's of x_out. */
static void test_rmsnorm__residual_forward_adds_then_matches_float64_reference(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(rmsnorm_sizes) / sizeof(rmsnorm_sizes[0]); s++) {
		const struct rmsnorm_size *z = &rmsnorm_sizes[s];
		int64_t n = z->n, d = z->d;
		struct rng r;
		rng_init(&r, 350 + s);
		float *x = random_floats(&r, n * d, -z->x_range, z->x_range);
		float *y = random_floats(&r, n * d, -z->x_range, z->x_range);
		float *g = random_floats(&r, d, 0.5f, 1.5f), *h = random_floats(&r, n * d, 5, 6);
		float *x_out = random_floats(&r, n * d, 5, 6), *rstd = random_floats(&r, n, 5, 6);
		float *rstd2 = random_floats(&r, n, 5, 6);
		uint16_t *h16 = calloc((size_t)(n * d), sizeof(*h16));
		uint16_t *want16 = calloc((size_t)(n * d), sizeof(*want16));
		double *rsum = doubles(n * d), *rg = to_doubles(g, d);
		double *rh = doubles(n * d), *rrstd = doubles(n);
		assert_non_null(h16);
		assert_non_null(want16);
		for (int64_t i = 0; i < n * d; i++)
			rsum[i] = (double)x[i] + (double)y[i];
		cpu_residual_rmsnorm_fwd(x, y, x_out, g, h, DTYPE_FLOAT32, rstd, n, d, z->eps);
		for (int64_t i = 0; i < n * d; i++)
			if (x_out[i] != x[i] + y[i])
				fail_msg("x_out[%lld] = %.9g, not x + y = %.9g", (long long)i,
					 (double)x_out[i], (double)(x[i] + y[i]));
		ref_rmsnorm_fwd(rsum, rg, rh, rrstd, n, d, z->eps);
		expect_close("residual rmsnorm h", h, rh, n * d);
		expect_close("residual rmsnorm rstd", rstd, rrstd, n);

		cpu_residual_rmsnorm_fwd(x, y, x_out, g, h16, DTYPE_BFLOAT16, rstd2, n, d, z->eps);
		cpu_rmsnorm_fwd(x_out, g, want16, DTYPE_BFLOAT16, rstd, n, d, z->eps);
		assert_memory_equal(h16, want16, (size_t)(n * d) * sizeof(*h16));
		assert_memory_equal(rstd2, rstd, (size_t)n * sizeof(*rstd));
		free(x), free(y), free(g), free(h), free(x_out), free(rstd), free(rstd2), free(h16);
		free(want16), free(rsum), free(rg), free(rh), free(rrstd);
	}
}

static void test_rmsnorm__backward_adds_to_dx_overwrites_dg_and_matches_reference(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(rmsnorm_sizes) / sizeof(rmsnorm_sizes[0]); s++) {
		const struct rmsnorm_size *z = &rmsnorm_sizes[s];
		int64_t n = z->n, d = z->d;
		struct rng r;
		rng_init(&r, 400 + s);
		float *x = random_floats(&r, n * d, -z->x_range, z->x_range);
		float *g = random_floats(&r, d, 0.5f, 1.5f), *dy = random_floats(&r, n * d, -1, 1);
		float *y = floats(n * d), *rstd = floats(n);
		cpu_rmsnorm_fwd(x, g, y, DTYPE_FLOAT32, rstd, n, d, z->eps);
		/* dx starts at values of the size of the gradient, dg at garbage */
		double *rx = to_doubles(x, n * d), *rg = to_doubles(g, d), *rdy = to_doubles(dy, n * d);
		double *rdx = doubles(n * d), *rdg = doubles(d);
		ref_rmsnorm_bwd(rdy, rx, rg, rdx, rdg, n, d, z->eps);
		double grad_scale = 0;
		for (int64_t i = 0; i < n * d; i++)
			grad_scale = fabs(rdx[i]) > grad_scale ? fabs(rdx[i]) : grad_scale;
		float *dx = random_floats(&r, n * d, -(float)grad_scale, (float)grad_scale);
		float *dg = random_floats(&r, d, 1e3f, 2e3f);
		for (int64_t i = 0; i < n * d; i++)
			rdx[i] += dx[i];
		float *work = floats((int64_t)cpu_rmsnorm_bwd_work(d));
		cpu_rmsnorm_bwd(dy, x, g, rstd, dx, dg, n, d, work);
		expect_close("rmsnorm dx (added to its old value)", dx, rdx, n * d);
		expect_close("rmsnorm dg", dg, rdg, d);
		free(x), free(g), free(dy), free(y), free(rstd), free(dx), free(dg), free(work);
		free(rx), free(rg), free(rdy), free(rdx), free(rdg);
	}
}

static void test_rmsnorm__backward_is_deterministic_for_a_thread_count(void **state)
{
	(void)state;
	int64_t n = 7, d = 37;
	struct rng r;
	rng_init(&r, 17);
	float *x = random_floats(&r, n * d, -1, 1), *g = random_floats(&r, d, 0.5f, 1.5f);
	float *dy = random_floats(&r, n * d, -1, 1), *y = floats(n * d), *rstd = floats(n);
	float *dx[2] = {floats(n * d), floats(n * d)}, *dg[2] = {floats(d), floats(d)};
	float *work = floats((int64_t)cpu_rmsnorm_bwd_work(d));
	assert_int_equal(cpu_rmsnorm_bwd_work(d), (size_t)(omp_get_max_threads() * d));
	cpu_rmsnorm_fwd(x, g, y, DTYPE_FLOAT32, rstd, n, d, 1e-5f);
	for (int k = 0; k < 2; k++) {
		memset(dx[k], 0, (size_t)(n * d) * sizeof(float));
		for (int64_t i = 0; i < (int64_t)cpu_rmsnorm_bwd_work(d); i++)
			work[i] = (float)(k * 1000 + i);     /* the kernel must not read old work */
		cpu_rmsnorm_bwd(dy, x, g, rstd, dx[k], dg[k], n, d, work);
	}
	assert_memory_equal(dx[0], dx[1], (size_t)(n * d) * sizeof(float));
	assert_memory_equal(dg[0], dg[1], (size_t)d * sizeof(float));
	free(x), free(g), free(dy), free(y), free(rstd), free(work);
	for (int k = 0; k < 2; k++)
		free(dx[k]), free(dg[k]);
}

struct rmsnorm_problem {
	int64_t n, d;
	double eps, *x, *g, *grad_out, *y;
};

static double rmsnorm_loss(void *ctx)
{
	struct rmsnorm_problem *p = ctx;
	ref_rmsnorm_fwd(p->x, p->g, p->y, NULL, p->n, p->d, p->eps);
	return dot(p->y, p->grad_out, p->n * p->d);
}

static void test_rmsnorm__reference_backward_matches_finite_differences(void **state)
{
	(void)state;
	int64_t n = 3, d = 7;
	struct rng r;
	rng_init(&r, 31);
	float *x = random_floats(&r, n * d, -1, 1), *g = random_floats(&r, d, 0.5f, 1.5f);
	float *go = random_floats(&r, n * d, -1, 1);
	struct rmsnorm_problem p = {n, d, 0.1, to_doubles(x, n * d), to_doubles(g, d),
				    to_doubles(go, n * d), doubles(n * d)};
	double *dx = doubles(n * d), *dg = doubles(d);
	ref_rmsnorm_bwd(p.grad_out, p.x, p.g, dx, dg, n, d, p.eps);
	expect_gradient_matches_finite_differences("rmsnorm dx", rmsnorm_loss, &p, p.x, dx, n * d);
	expect_gradient_matches_finite_differences("rmsnorm dg", rmsnorm_loss, &p, p.g, dg, d);
	free(x), free(g), free(go), free(p.x), free(p.g), free(p.grad_out), free(p.y);
	free(dx), free(dg);
}

/* ---- RoPE and heads ------------------------------------------------------------------------- */

static void test_rope__table_holds_cos_and_sin_of_position_times_frequency(void **state)
{
	(void)state;
	int64_t t = 9, dh = 14;
	double theta = 10000.0;
	float *table = floats(t * dh);
	cpu_rope_table(table, t, dh, theta);
	for (int64_t p = 0; p < t; p++)
		for (int64_t i = 0; i < dh / 2; i++) {
			double angle = (double)p / pow(theta, 2.0 * (double)i / (double)dh);
			float c = table[(p * dh / 2 + i) * 2], s = table[(p * dh / 2 + i) * 2 + 1];
			/* float32 rounding of values in [-1, 1] */
			assert_true(fabs(c - cos(angle)) <= 0x1p-24);
			assert_true(fabs(s - sin(angle)) <= 0x1p-24);
		}
	assert_true(table[0] == 1.0f && table[1] == 0.0f);               /* position 0 */
	assert_true(fabs(table[dh + 1] - sin(1.0)) <= 0x1p-24);           /* position 1, pair 0 */
	free(table);
}

/* The float64 split and merge; cs is the (t, dh) table, NULL for none. */
static void ref_split(const double *in, int64_t ld, double *out, const double *cs, int64_t b,
		      int64_t t, int64_t h, int64_t dh)
{
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t hh = 0; hh < h; hh++)
			for (int64_t ti = 0; ti < t; ti++) {
				const double *x = in + (bi * t + ti) * ld + hh * dh;
				double *o = out + ((bi * h + hh) * t + ti) * dh;
				for (int64_t k = 0; k < dh; k++)
					o[k] = x[k];
				if (cs)
					for (int64_t k = 0; k < dh; k += 2) {
						double c = cs[ti * dh + k], s = cs[ti * dh + k + 1];
						o[k] = x[k] * c - x[k + 1] * s;
						o[k + 1] = x[k] * s + x[k + 1] * c;
					}
			}
}

static void ref_merge(const double *in, double *out, int64_t ld, const double *cs, int64_t b,
		      int64_t t, int64_t h, int64_t dh)
{
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t hh = 0; hh < h; hh++)
			for (int64_t ti = 0; ti < t; ti++) {
				const double *x = in + ((bi * h + hh) * t + ti) * dh;
				double *o = out + (bi * t + ti) * ld + hh * dh;
				for (int64_t k = 0; k < dh; k++)
					o[k] = x[k];
				if (cs)
					for (int64_t k = 0; k < dh; k += 2) {
						double c = cs[ti * dh + k], s = cs[ti * dh + k + 1];
						o[k] = x[k] * c + x[k + 1] * s;
						o[k + 1] = -x[k] * s + x[k + 1] * c;
					}
			}
}

/* b, t, h, dh, ld: odd pair counts, heads wider than ROPE_CHUNK, spare columns */
static const int64_t heads_sizes[][5] = {
	{2, 5, 3, 6, 23}, {1, 7, 2, 38, 80}, {2, 3, 2, 300, 601}, {1, 1, 1, 2, 2},
};
#define N_HEADS_SIZES ((int)(sizeof(heads_sizes) / sizeof(heads_sizes[0])))

static void expect_split_matches_reference(enum bd_dtype dtype, int rope, const int64_t *z,
					   uint64_t seed)
{
	int64_t b = z[0], t = z[1], h = z[2], dh = z[3], ld = z[4], rows = b * t;
	struct rng r;
	rng_init(&r, seed);
	float *x = random_floats(&r, rows * ld, -1, 1);
	float *out = random_floats(&r, b * h * t * dh, 5, 6);
	uint16_t *xh = halves(rows * ld);
	for (int64_t i = 0; i < rows * ld; i++) {       /* the same values in both dtypes */
		xh[i] = bf16_from_float(x[i]);
		x[i] = bf16_to_float(xh[i]);
	}
	float *table = floats(t * dh);
	cpu_rope_table(table, t, dh, 10000.0);
	double *rx = to_doubles(x, rows * ld), *rt = to_doubles(table, t * dh);
	double *ref = doubles(b * h * t * dh);
	cpu_heads_split(dtype == DTYPE_FLOAT32 ? (void *)x : (void *)xh, dtype, ld, out,
			rope ? table : NULL, b, t, h, dh);
	ref_split(rx, ld, ref, rope ? rt : NULL, b, t, h, dh);
	expect_close(rope ? "heads split with rope" : "heads split", out, ref, b * h * t * dh);
	free(x), free(out), free(xh), free(table), free(rx), free(rt), free(ref);
}

static void test_heads__split_matches_reference_with_and_without_rope(void **state)
{
	(void)state;
	for (int s = 0; s < N_HEADS_SIZES; s++)
		for (int rope = 0; rope < 2; rope++) {
			expect_split_matches_reference(DTYPE_FLOAT32, rope, heads_sizes[s], 500 + s);
			expect_split_matches_reference(DTYPE_BFLOAT16, rope, heads_sizes[s], 500 + s);
		}
}

static void test_heads__merge_matches_reference_and_leaves_other_columns(void **state)
{
	(void)state;
	for (int s = 0; s < N_HEADS_SIZES; s++)
		for (int rope = 0; rope < 2; rope++) {
			const int64_t *z = heads_sizes[s];
			int64_t b = z[0], t = z[1], h = z[2], dh = z[3], ld = z[4], rows = b * t;
			int64_t count = b * h * t * dh;
			struct rng r;
			rng_init(&r, 600 + s);
			float *in = random_floats(&r, count, -1, 1);
			float *out = random_floats(&r, rows * ld, 5, 6), *before = floats(rows * ld);
			memcpy(before, out, (size_t)(rows * ld) * sizeof(float));
			float *table = floats(t * dh);
			cpu_rope_table(table, t, dh, 500.0);
			double *rin = to_doubles(in, count), *rt = to_doubles(table, t * dh);
			double *ref = to_doubles(out, rows * ld);
			cpu_heads_merge(in, out, DTYPE_FLOAT32, ld, rope ? table : NULL, b, t, h, dh);
			ref_merge(rin, ref, ld, rope ? rt : NULL, b, t, h, dh);
			expect_close(rope ? "heads merge with rope" : "heads merge", out, ref, rows * ld);
			for (int64_t i = 0; i < rows; i++)
				assert_memory_equal(out + i * ld + h * dh, before + i * ld + h * dh,
						    (size_t)(ld - h * dh) * sizeof(float));
			free(in), free(out), free(before), free(table), free(rin), free(rt), free(ref);
		}
}

static void test_heads__merge_of_split_is_identity_with_and_without_rope(void **state)
{
	(void)state;
	for (int s = 0; s < N_HEADS_SIZES; s++) {
		const int64_t *z = heads_sizes[s];
		int64_t b = z[0], t = z[1], h = z[2], dh = z[3], ld = z[4], rows = b * t;
		struct rng r;
		rng_init(&r, 700 + s);
		float *x = random_floats(&r, rows * ld, -1, 1), *y = floats(rows * ld);
		float *heads = floats(b * h * t * dh), *table = floats(t * dh);
		uint16_t *xh = halves(rows * ld), *yh = halves(rows * ld);
		for (int64_t i = 0; i < rows * ld; i++)
			xh[i] = bf16_from_float(x[i]);
		cpu_rope_table(table, t, dh, 10000.0);
		/* without rope: a transpose and back, bit for bit (also through bfloat16) */
		cpu_heads_split(x, DTYPE_FLOAT32, ld, heads, NULL, b, t, h, dh);
		for (int64_t i = 0; i < rows * ld; i++)
			y[i] = -1;
		for (int64_t i = 0; i < rows; i++)       /* the columns merge leaves alone */
			memcpy(y + i * ld + h * dh, x + i * ld + h * dh,
			       (size_t)(ld - h * dh) * sizeof(float));
		cpu_heads_merge(heads, y, DTYPE_FLOAT32, ld, NULL, b, t, h, dh);
		assert_memory_equal(y, x, (size_t)(rows * ld) * sizeof(float));
		memcpy(yh, xh, (size_t)(rows * ld) * sizeof(uint16_t));
		cpu_heads_split(xh, DTYPE_BFLOAT16, ld, heads, NULL, b, t, h, dh);
		for (int64_t i = 0; i < rows; i++)
			memset(yh + i * ld, 0xff, (size_t)(h * dh) * sizeof(uint16_t));
		cpu_heads_merge(heads, yh, DTYPE_BFLOAT16, ld, NULL, b, t, h, dh);
		assert_memory_equal(yh, xh, (size_t)(rows * ld) * sizeof(uint16_t));
		/* with rope: a rotation and its inverse, exact but for float32 rounding (a few 2^-24
		 * of the pair's size; the table's cos² + sin² is 1 within 2^-23) */
		double *rx = to_doubles(x, rows * ld);
		cpu_heads_split(x, DTYPE_FLOAT32, ld, heads, table, b, t, h, dh);
		memcpy(y, x, (size_t)(rows * ld) * sizeof(float));
		cpu_heads_merge(heads, y, DTYPE_FLOAT32, ld, table, b, t, h, dh);
		expect_close_tol("merge(split(x)) with rope", y, rx, rows * ld, 1e-6);
		free(x), free(y), free(heads), free(table), free(xh), free(yh), free(rx);
	}
}

struct heads_problem {
	int64_t b, t, h, dh, ld;
	const double *cs;
	double *in, *grad_out, *out;
	int merge;            /* the loss is through merge, else through split */
};

static double heads_loss(void *ctx)
{
	struct heads_problem *p = ctx;
	int64_t rows = p->b * p->t, count = p->b * p->h * p->t * p->dh;
	if (p->merge) {
		memset(p->out, 0, (size_t)(rows * p->ld) * sizeof(double));
		ref_merge(p->in, p->out, p->ld, p->cs, p->b, p->t, p->h, p->dh);
		return dot(p->out, p->grad_out, rows * p->ld);
	}
	ref_split(p->in, p->ld, p->out, p->cs, p->b, p->t, p->h, p->dh);
	return dot(p->out, p->grad_out, count);
}

/* The backward of split is merge and the backward of merge is split, with the same table:
 * the float64 ones against central differences, and the kernels against them. */
static void test_heads__each_is_the_backward_of_the_other_with_rope(void **state)
{
	(void)state;
	int64_t b = 2, t = 3, h = 2, dh = 6, ld = 15, rows = b * t, count = b * h * t * dh;
	struct rng r;
	rng_init(&r, 77);
	float *table = floats(t * dh);
	cpu_rope_table(table, t, dh, 100.0);
	double *cs = to_doubles(table, t * dh);
	for (int merge = 0; merge < 2; merge++) {
		int64_t in_n = merge ? count : rows * ld, out_n = merge ? rows * ld : count;
		float *x = random_floats(&r, in_n, -1, 1), *go = random_floats(&r, out_n, -1, 1);
		if (!merge)        /* split ignores columns past h·dh: so does its gradient */
			for (int64_t i = 0; i < rows; i++)
				for (int64_t j = h * dh; j < ld; j++)
					x[i * ld + j] = 0;
		else
			for (int64_t i = 0; i < rows; i++)
				for (int64_t j = h * dh; j < ld; j++)
					go[i * ld + j] = 0;
		struct heads_problem p = {b, t, h, dh, ld, cs, to_doubles(x, in_n),
					  to_doubles(go, out_n), doubles(out_n), merge};
		double *grad = doubles(in_n);
		float *kernel_grad = floats(in_n);
		if (merge) {
			ref_split(p.grad_out, ld, grad, cs, b, t, h, dh);
			cpu_heads_split(go, DTYPE_FLOAT32, ld, kernel_grad, table, b, t, h, dh);
		} else {
			ref_merge(p.grad_out, grad, ld, cs, b, t, h, dh);
			memset(kernel_grad, 0, (size_t)in_n * sizeof(float));
			cpu_heads_merge(go, kernel_grad, DTYPE_FLOAT32, ld, table, b, t, h, dh);
		}
		expect_gradient_matches_finite_differences(merge ? "merge backward" : "split backward",
							   heads_loss, &p, p.in, grad, in_n);
		expect_close(merge ? "split as merge's backward" : "merge as split's backward",
			     kernel_grad, grad, in_n);
		free(x), free(go), free(p.in), free(p.grad_out), free(p.out), free(grad);
		free(kernel_grad);
	}
	free(table), free(cs);
}

/* ---- SwiGLU --------------------------------------------------------------------------------- */

static double sigmoid(double a) { return 1 / (1 + exp(-a)); }

static void ref_swiglu_fwd(const double *u, double *out, int64_t n, int64_t f)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < f; j++) {
			double a = u[i * 2 * f + j], c = u[i * 2 * f + f + j];
			out[i * f + j] = a * sigmoid(a) * c;
		}
}

static void ref_swiglu_bwd(const double *u, const double *dout, double *du, int64_t n, int64_t f)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < f; j++) {
			double a = u[i * 2 * f + j], c = u[i * 2 * f + f + j], s = sigmoid(a);
			double g = dout[i * f + j];
			du[i * 2 * f + j] = g * c * s * (1 + a * (1 - s));
			du[i * 2 * f + f + j] = g * a * s;
		}
}

/* n, f: odd, over two vectors, under one; a in [-8, 8] reaches both sigmoid tails */
static const int64_t swiglu_sizes[][2] = {{7, 37}, {3, 100}, {4, 5}, {2, 3072}};
#define N_SWIGLU_SIZES ((int)(sizeof(swiglu_sizes) / sizeof(swiglu_sizes[0])))

static void test_swiglu__forward_matches_float64_reference(void **state)
{
	(void)state;
	for (int s = 0; s < N_SWIGLU_SIZES; s++) {
		int64_t n = swiglu_sizes[s][0], f = swiglu_sizes[s][1];
		struct rng r;
		rng_init(&r, 800 + s);
		float *u = random_floats(&r, n * 2 * f, -8, 8), *out = random_floats(&r, n * f, 5, 6);
		double *ru = to_doubles(u, n * 2 * f), *ref = doubles(n * f);
		cpu_swiglu_fwd(u, out, DTYPE_FLOAT32, n, f);
		ref_swiglu_fwd(ru, ref, n, f);
		expect_close("swiglu out", out, ref, n * f);
		free(u), free(out), free(ru), free(ref);
	}
}

static void test_swiglu__backward_overwrites_du_and_matches_reference(void **state)
{
	(void)state;
	for (int s = 0; s < N_SWIGLU_SIZES; s++) {
		int64_t n = swiglu_sizes[s][0], f = swiglu_sizes[s][1];
		struct rng r;
		rng_init(&r, 900 + s);
		float *u = random_floats(&r, n * 2 * f, -8, 8), *dout = random_floats(&r, n * f, -1, 1);
		float *du = random_floats(&r, n * 2 * f, 100, 200);     /* garbage to overwrite */
		double *ru = to_doubles(u, n * 2 * f), *rdout = to_doubles(dout, n * f);
		double *ref = doubles(n * 2 * f);
		cpu_swiglu_bwd(u, dout, du, DTYPE_FLOAT32, n, f);
		ref_swiglu_bwd(ru, rdout, ref, n, f);
		expect_close("swiglu du", du, ref, n * 2 * f);
		free(u), free(dout), free(du), free(ru), free(rdout), free(ref);
	}
}

struct swiglu_problem {
	int64_t n, f;
	double *u, *grad_out, *out;
};

static double swiglu_loss(void *ctx)
{
	struct swiglu_problem *p = ctx;
	ref_swiglu_fwd(p->u, p->out, p->n, p->f);
	return dot(p->out, p->grad_out, p->n * p->f);
}

static void test_swiglu__reference_backward_matches_finite_differences(void **state)
{
	(void)state;
	int64_t n = 3, f = 5;
	struct rng r;
	rng_init(&r, 41);
	float *u = random_floats(&r, n * 2 * f, -4, 4), *go = random_floats(&r, n * f, -1, 1);
	struct swiglu_problem p = {n, f, to_doubles(u, n * 2 * f), to_doubles(go, n * f),
				   doubles(n * f)};
	double *du = doubles(n * 2 * f);
	ref_swiglu_bwd(p.u, p.grad_out, du, n, f);
	expect_gradient_matches_finite_differences("swiglu du", swiglu_loss, &p, p.u, du, n * 2 * f);
	free(u), free(go), free(p.u), free(p.grad_out), free(p.out), free(du);
}

/* ---- softmax + cross-entropy ---------------------------------------------------------------- */

static double ref_xent_fwd(const double *logits, const int32_t *targets, double *lse, int64_t n,
			   int64_t V)
{
	double loss = 0;
	for (int64_t i = 0; i < n; i++) {
		const double *x = logits + i * V;
		double m = x[0], s = 0;
		for (int64_t j = 1; j < V; j++)
			m = x[j] > m ? x[j] : m;
		for (int64_t j = 0; j < V; j++)
			s += exp(x[j] - m);
		double l = m + log(s);
		if (lse)
			lse[i] = l;
		loss += l - x[targets[i]];
	}
	return loss / (double)n;
}

static void ref_xent_bwd(const double *logits, const int32_t *targets, double *dlogits, int64_t n,
			 int64_t V, double scale)
{
	double *lse = doubles(n);
	ref_xent_fwd(logits, targets, lse, n, V);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < V; j++)
			dlogits[i * V + j] = scale * (exp(logits[i * V + j] - lse[i]) -
						      (j == targets[i] ? 1.0 : 0.0));
	free(lse);
}

/* n, V; targets include the first and the last class */
static const int64_t xent_sizes[][2] = {{7, 37}, {5, 1000}, {3, 5}, {2, 10000}};
#define N_XENT_SIZES ((int)(sizeof(xent_sizes) / sizeof(xent_sizes[0])))

/* logits in [-8, 8], row 1 shifted by +100 (exp would overflow float32 without the max) */
static float *random_logits(struct rng *r, int32_t *targets, int64_t n, int64_t V)
{
	float *x = random_floats(r, n * V, -8, 8);
	for (int64_t j = 0; n > 1 && j < V; j++)
		x[V + j] += 100.0f;
	for (int64_t i = 0; i < n; i++)
		targets[i] = i == 0 ? 0 : i == 1 ? (int32_t)(V - 1) :
					       (int32_t)(rng_next(r) % (uint64_t)V);
	return x;
}

static void test_xent__forward_matches_float64_reference_with_large_logits(void **state)
{
	(void)state;
	for (int s = 0; s < N_XENT_SIZES; s++) {
		int64_t n = xent_sizes[s][0], V = xent_sizes[s][1];
		struct rng r;
		rng_init(&r, 1000 + s);
		int32_t targets[8];
		float *x = random_logits(&r, targets, n, V), *lse = random_floats(&r, n, 5, 6);
		double *rx = to_doubles(x, n * V), *rlse = doubles(n);
		double loss = cpu_xent_fwd(x, targets, lse, n, V);
		double ref = ref_xent_fwd(rx, targets, rlse, n, V);
		expect_close("xent lse", lse, rlse, n);
		if (!(fabs(loss - ref) <= KERNEL_TOL * fabs(ref)))
			fail_msg("xent loss %.9g, reference %.9g (n=%lld V=%lld)", loss, ref,
				 (long long)n, (long long)V);
		free(x), free(lse), free(rx), free(rlse);
	}
}

static void test_xent__backward_matches_reference_in_place_and_not(void **state)
{
	(void)state;
	for (int s = 0; s < N_XENT_SIZES; s++) {
		int64_t n = xent_sizes[s][0], V = xent_sizes[s][1];
		struct rng r;
		rng_init(&r, 1100 + s);
		int32_t targets[8];
		float *x = random_logits(&r, targets, n, V), *lse = floats(n);
		float *d = random_floats(&r, n * V, 100, 200);      /* garbage to overwrite */
		double *rx = to_doubles(x, n * V), *ref = doubles(n * V);
		float scale = 1.0f / (float)n;
		cpu_xent_fwd(x, targets, lse, n, V);
		ref_xent_bwd(rx, targets, ref, n, V, scale);
		cpu_xent_bwd(x, lse, targets, d, DTYPE_FLOAT32, n, V, scale);
		expect_close("xent dlogits", d, ref, n * V);
		cpu_xent_bwd(x, lse, targets, x, DTYPE_FLOAT32, n, V, scale);    /* in place */
		assert_memory_equal(x, d, (size_t)(n * V) * sizeof(float));
		free(x), free(lse), free(d), free(rx), free(ref);
	}
}

struct xent_problem {
	const int32_t *targets;
	int64_t n, V;
	double *logits;
};

static double xent_loss(void *ctx)
{
	struct xent_problem *p = ctx;
	return ref_xent_fwd(p->logits, p->targets, NULL, p->n, p->V);
}

static void test_xent__reference_backward_matches_finite_differences(void **state)
{
	(void)state;
	const int32_t targets[3] = {0, 6, 3};
	int64_t n = 3, V = 7;
	struct rng r;
	rng_init(&r, 51);
	float *x = random_floats(&r, n * V, -2, 2);
	struct xent_problem p = {targets, n, V, to_doubles(x, n * V)};
	double *grad = doubles(n * V);
	ref_xent_bwd(p.logits, targets, grad, n, V, 1.0 / (double)n);
	expect_gradient_matches_finite_differences("xent dlogits", xent_loss, &p, p.logits, grad,
						   n * V);
	free(x), free(p.logits), free(grad);
}

/* ---- AdamW ---------------------------------------------------------------------------------- */

static void ref_adamw(double *p, const double *g, double *m, double *v, int64_t count,
		      const struct adamw_params *hp, int64_t step)
{
	double b1 = hp->beta1, b2 = hp->beta2, lr = hp->lr;
	double bc1 = 1 - pow(b1, (double)step), bc2 = 1 - pow(b2, (double)step);
	for (int64_t i = 0; i < count; i++) {
		p[i] *= 1 - lr * hp->weight_decay;
		m[i] = b1 * m[i] + (1 - b1) * g[i];
		v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
		p[i] -= lr / bc1 * m[i] / (sqrt(v[i]) / sqrt(bc2) + hp->eps);
	}
}

static void test_adamw__two_steps_match_hand_computed_values(void **state)
{
	(void)state;
	/* lr 0.1, betas (0.9, 0.999), eps 1e-8, weight decay 0.01; three (p, g, m, v) starts, then
	 * a second gradient. By hand for the first, in exact decimals: p = 1·(1 − 0.001) = 0.999;
	 * m = 0.1·0.5 = 0.05; v = 0.001·0.25 = 0.00025; m̂ = 0.05/0.1 = 0.5 and sqrt(v̂) =
	 * sqrt(0.00025/0.001) = 0.5, so p = 0.999 − 0.1·0.5/(0.5 + 1e-8) = 0.899000002.
	 * The values below are the same steps in float64 on the float32 hyper-parameters (what the
	 * kernel is given: 0.999f is 0.99900001287..., so 1 − β2 is 1.3e-5 off 0.001 and v with
	 * it), from Python:
	 *   f32 = lambda x: struct.unpack('f', struct.pack('f', x))[0]
	 *   lr, b1, b2, eps, wd = map(f32, (0.1, 0.9, 0.999, 1e-8, 0.01))
	 *   p *= 1 - lr*wd; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g
	 *   p -= lr/(1-b1**t) * m/(math.sqrt(v)/math.sqrt(1-b2**t) + eps)
	 * The first p, 0.8990000005, is the hand value up to those parameter roundings. */
	const struct adamw_params hp = {0.1f, 0.9f, 0.999f, 1e-8f, 0.01f};
	const float start[3][4] = {{1.0f, 0.5f, 0, 0}, {-2.0f, -0.25f, 0, 0}, {0.5f, 2.0f, 0.1f, 0.04f}};
	const float g2[3] = {-0.5f, 0.75f, 1.0f};
	const double after1[3][3] = {
		{0.89900000051733442, 0.050000011920928955, 0.00024999678134918213},
		{-1.898000002524785, -0.025000005960464478, 6.2499195337295532e-05},
		{0.45576122770404687, 0.2900000466406345, 0.043959948123395431},
	};
	const double after2[3][3] = {
		{0.90336415971229456, -0.0050000023841860752, 0.00049974356913562445},
		{-1.9455209870271735, 0.052500013113021993, 0.00062492945498227037},
		{0.41522278550275599, 0.36100005890428905, 0.044915975866635656},
	};
	enum { COUNT = 19 };      /* a vector and a tail with AVX-512: both see each start */
	float p[COUNT], g[COUNT], m[COUNT], v[COUNT];
	uint16_t shadow[COUNT];
	for (int i = 0; i < COUNT; i++) {
		p[i] = start[i % 3][0], g[i] = start[i % 3][1];
		m[i] = start[i % 3][2], v[i] = start[i % 3][3];
	}
	for (int step = 1; step <= 2; step++) {
		cpu_adamw(p, g, m, v, shadow, COUNT, &hp, step);
		const double(*want)[3] = step == 1 ? after1 : after2;
		for (int i = 0; i < COUNT; i++) {
			const double *w = want[i % 3];
			/* float32 arithmetic on the float32 hyper-parameters: a few 2^-24 relative */
			if (!(fabs(p[i] - w[0]) <= 1e-6 * fabs(w[0]) && fabs(m[i] - w[1]) <= 1e-6 * fabs(w[1]) &&
			      fabs(v[i] - w[2]) <= 1e-6 * fabs(w[2])))
				fail_msg("step %d element %d: (p, m, v) = (%.9g, %.9g, %.9g), by hand "
					 "(%.9g, %.9g, %.9g)", step, i, (double)p[i], (double)m[i],
					 (double)v[i], w[0], w[1], w[2]);
			assert_int_equal(shadow[i], bf16_from_float(p[i]));
		}
		for (int i = 0; i < COUNT; i++)
			g[i] = g2[i % 3];
	}
}

static void expect_adamw_matches_float64_loop(int force_fallback)
{
	cpu_ops_force_fallback(force_fallback);
	const struct adamw_params hp = {1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
	int64_t count = 2 * 4096 + 37;
	struct rng r;
	rng_init(&r, 61);
	float *p = random_floats(&r, count, -1, 1), *m = floats(count), *v = floats(count);
	float *g = floats(count);
	uint16_t *shadow = halves(count);
	memset(m, 0, (size_t)count * sizeof(float));
	memset(v, 0, (size_t)count * sizeof(float));
	double *rp = to_doubles(p, count), *rm = doubles(count), *rv = doubles(count);
	double *rg = doubles(count);
	for (int64_t step = 1; step <= 10; step++) {
		for (int64_t i = 0; i < count; i++) {
			g[i] = nonzero_uniform(&r, -1, 1);
			rg[i] = g[i];
		}
		cpu_adamw(p, g, m, v, step % 2 ? shadow : NULL, (size_t)count, &hp, step);
		ref_adamw(rp, rg, rm, rv, count, &hp, step);
	}
	expect_close("adamw p after 10 steps", p, rp, count);
	expect_close("adamw m after 10 steps", m, rm, count);
	expect_close("adamw v after 10 steps", v, rv, count);
	/* the shadow is from the last step that asked for it, step 9: one more step with it */
	cpu_adamw(p, g, m, v, shadow, (size_t)count, &hp, 11);
	for (int64_t i = 0; i < count; i++)
		if (shadow[i] != bf16_from_float(p[i]))
			fail_msg("shadow[%lld] = 0x%04x but bfloat16(p) = 0x%04x (%s path)",
				 (long long)i, shadow[i], bf16_from_float(p[i]), cpu_ops_bf16_path());
	free(p), free(m), free(v), free(g), free(shadow), free(rp), free(rm), free(rv), free(rg);
}

static void test_adamw__ten_steps_match_float64_loop_and_shadow_is_bfloat16_of_p(void **state)
{
	(void)state;
	expect_adamw_matches_float64_loop(0);
	expect_adamw_matches_float64_loop(1);
}

/* ---- bfloat16 variants ---------------------------------------------------------------------- */

/* One input set for every kernel with a bfloat16 act buffer: act inputs hold bfloat16 values
 * (the same numbers in f32 and bf16), so that the float32 run sees what the bfloat16 run
 * sees. */
struct bf16_case {
	int64_t n, d, f, V, b, t, h, dh, ld, count;
	float *x, *g, *u, *dout, *logits, *heads, *act_rows, *table, *adam_g, *adam_p;
	uint16_t *u_h, *dout_h, *act_rows_h;
	int32_t targets[7];
};

/* Every output of a run; act buffers are 4 bytes an element, of which a bfloat16 run uses 2. */
struct bf16_outputs {
	void *rms_y, *merge, *merge_rope, *swiglu_out, *swiglu_du, *xent_d, *convert;
	float *split, *split_rope, *adam_p;
	uint16_t *shadow;
};

static void bf16_case_init(struct bf16_case *c)
{
	*c = (struct bf16_case){.n = 7, .d = 37, .f = 37, .V = 101, .b = 1, .t = 7, .h = 3,
				.dh = 12, .ld = 41, .count = 4096 + 37};
	struct rng r;
	rng_init(&r, 99);
	c->x = random_floats(&r, c->n * c->d, -2, 2);
	c->g = random_floats(&r, c->d, 0.5f, 1.5f);
	c->u = random_floats(&r, c->n * 2 * c->f, -6, 6);
	c->dout = random_floats(&r, c->n * c->f, -1, 1);
	c->logits = random_floats(&r, c->n * c->V, -4, 4);
	c->heads = random_floats(&r, c->b * c->h * c->t * c->dh, -1, 1);
	c->act_rows = random_floats(&r, c->n * c->ld, -1, 1);
	c->adam_g = random_floats(&r, c->count, -1, 1);
	c->adam_p = random_floats(&r, c->count, -1, 1);
	c->table = floats(c->t * c->dh);
	cpu_rope_table(c->table, c->t, c->dh, 10000.0);
	c->u_h = halves(c->n * 2 * c->f);
	c->dout_h = halves(c->n * c->f);
	c->act_rows_h = halves(c->n * c->ld);
	for (int64_t i = 0; i < c->n * 2 * c->f; i++)
		c->u[i] = bf16_to_float(c->u_h[i] = bf16_from_float(c->u[i]));
	for (int64_t i = 0; i < c->n * c->f; i++)
		c->dout[i] = bf16_to_float(c->dout_h[i] = bf16_from_float(c->dout[i]));
	for (int64_t i = 0; i < c->n * c->ld; i++)
		c->act_rows[i] = bf16_to_float(c->act_rows_h[i] = bf16_from_float(c->act_rows[i]));
	for (int i = 0; i < 7; i++)
		c->targets[i] = (int32_t)(rng_next(&r) % (uint64_t)c->V);
}

static void bf16_case_free(struct bf16_case *c)
{
	float *f[] = {c->x, c->g, c->u, c->dout, c->logits, c->heads, c->act_rows, c->table,
		      c->adam_g, c->adam_p};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		free(f[i]);
	free(c->u_h), free(c->dout_h), free(c->act_rows_h);
}

static void bf16_outputs_alloc(struct bf16_outputs *o, const struct bf16_case *c)
{
	o->rms_y = floats(c->n * c->d);
	o->merge = floats(c->n * c->ld);
	o->merge_rope = floats(c->n * c->ld);
	o->swiglu_out = floats(c->n * c->f);
	o->swiglu_du = floats(c->n * 2 * c->f);
	o->xent_d = floats(c->n * c->V);
	o->convert = floats(c->count);
	o->split = floats(c->b * c->h * c->t * c->dh);
	o->split_rope = floats(c->b * c->h * c->t * c->dh);
	o->adam_p = floats(c->count);
	o->shadow = halves(c->count);
	/* merge leaves the spare columns alone: the same bytes in every run */
	memset(o->merge, 0, (size_t)(c->n * c->ld) * sizeof(float));
	memset(o->merge_rope, 0, (size_t)(c->n * c->ld) * sizeof(float));
}

static void bf16_outputs_free(struct bf16_outputs *o)
{
	void *p[] = {o->rms_y, o->merge, o->merge_rope, o->swiglu_out, o->swiglu_du, o->xent_d,
		     o->convert, o->split, o->split_rope, o->adam_p, o->shadow};
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		free(p[i]);
}

/* Every kernel with act buffers of dtype; AdamW writes its shadow when dtype is bfloat16. */
static void bf16_case_run(const struct bf16_case *c, enum bd_dtype dtype, struct bf16_outputs *o)
{
	int bf = dtype == DTYPE_BFLOAT16;
	float *rstd = floats(c->n), *lse = floats(c->n), *m = floats(c->count), *v = floats(c->count);
	cpu_rmsnorm_fwd(c->x, c->g, o->rms_y, dtype, rstd, c->n, c->d, 1e-5f);
	cpu_heads_merge(c->heads, o->merge, dtype, c->ld, NULL, c->b, c->t, c->h, c->dh);
	cpu_heads_merge(c->heads, o->merge_rope, dtype, c->ld, c->table, c->b, c->t, c->h, c->dh);
	cpu_heads_split(bf ? (void *)c->act_rows_h : (void *)c->act_rows, dtype, c->ld, o->split,
			NULL, c->b, c->t, c->h, c->dh);
	cpu_heads_split(bf ? (void *)c->act_rows_h : (void *)c->act_rows, dtype, c->ld,
			o->split_rope, c->table, c->b, c->t, c->h, c->dh);
	cpu_swiglu_fwd(bf ? (void *)c->u_h : (void *)c->u, o->swiglu_out, dtype, c->n, c->f);
	cpu_swiglu_bwd(bf ? (void *)c->u_h : (void *)c->u, bf ? (void *)c->dout_h : (void *)c->dout,
		       o->swiglu_du, dtype, c->n, c->f);
	cpu_xent_fwd(c->logits, c->targets, lse, c->n, c->V);
	cpu_xent_bwd(c->logits, lse, c->targets, o->xent_d, dtype, c->n, c->V, 1.0f / (float)c->n);
	cpu_convert(o->convert, dtype, c->adam_p, DTYPE_FLOAT32, (size_t)c->count);
	const struct adamw_params hp = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f};
	memcpy(o->adam_p, c->adam_p, (size_t)c->count * sizeof(float));
	memset(m, 0, (size_t)c->count * sizeof(float));
	memset(v, 0, (size_t)c->count * sizeof(float));
	cpu_adamw(o->adam_p, c->adam_g, m, v, bf ? o->shadow : NULL, (size_t)c->count, &hp, 1);
	free(rstd), free(lse), free(m), free(v);
}

/* a bfloat16 output (count elements) as floats */
static float *widened(const void *h, int64_t count)
{
	float *x = floats(count);
	for (int64_t i = 0; i < count; i++)
		x[i] = bf16_to_float(((const uint16_t *)h)[i]);
	return x;
}

/* each act output of the bfloat16 run within one rounding (BF16_TOL relative) of the float32
 * run's; the float32 outputs of bfloat16 inputs equal to float32 rounding */
static void expect_bf16_outputs_near_float32(const struct bf16_case *c,
					     const struct bf16_outputs *bf,
					     const struct bf16_outputs *f32)
{
	struct {
		const char *what;
		const void *bf, *f32;
		int64_t count;
	} acts[] = {
		{"rmsnorm y", bf->rms_y, f32->rms_y, c->n * c->d},
		{"heads merge", bf->merge, f32->merge, c->n * c->ld},
		{"heads merge with rope", bf->merge_rope, f32->merge_rope, c->n * c->ld},
		{"swiglu out", bf->swiglu_out, f32->swiglu_out, c->n * c->f},
		{"swiglu du", bf->swiglu_du, f32->swiglu_du, c->n * 2 * c->f},
		{"xent dlogits", bf->xent_d, f32->xent_d, c->n * c->V},
		{"convert", bf->convert, f32->convert, c->count},
		{"adamw shadow", bf->shadow, f32->adam_p, c->count},
	};
	for (size_t k = 0; k < sizeof(acts) / sizeof(acts[0]); k++) {
		float *x = widened(acts[k].bf, acts[k].count);
		for (int64_t i = 0; i < acts[k].count; i++) {
			double want = ((const float *)acts[k].f32)[i];
			if (!(fabs(x[i] - want) <= BF16_TOL * fabs(want)))
				fail_msg("bfloat16 %s[%lld] = %.9g, float32 %.9g: more than one "
					 "rounding apart (%s path)", acts[k].what, (long long)i,
					 (double)x[i], want, cpu_ops_bf16_path());
		}
		free(x);
	}
	int64_t heads = c->b * c->h * c->t * c->dh;
	double *split = to_doubles(f32->split, heads), *rope = to_doubles(f32->split_rope, heads);
	expect_close("heads split of bfloat16", bf->split, split, heads);
	expect_close("heads split with rope of bfloat16", bf->split_rope, rope, heads);
	assert_memory_equal(bf->adam_p, f32->adam_p, (size_t)c->count * sizeof(float));
	free(split), free(rope);
}

static void test_bf16__outputs_are_float32_results_within_one_rounding(void **state)
{
	(void)state;
	struct bf16_case c;
	struct bf16_outputs f32, bf;
	bf16_case_init(&c);
	bf16_outputs_alloc(&f32, &c);
	bf16_outputs_alloc(&bf, &c);
	bf16_case_run(&c, DTYPE_FLOAT32, &f32);
	for (int forced = 0; forced < 2; forced++) {
		cpu_ops_force_fallback(forced);
		bf16_case_run(&c, DTYPE_BFLOAT16, &bf);
		expect_bf16_outputs_near_float32(&c, &bf, &f32);
	}
	cpu_ops_force_fallback(0);
	bf16_outputs_free(&f32);
	bf16_outputs_free(&bf);
	bf16_case_free(&c);
}

static void test_bf16__avx512_path_is_bit_identical_to_scalar_fallback(void **state)
{
	(void)state;
	struct bf16_case c;
	struct bf16_outputs avx, scalar, f32;
	bf16_case_init(&c);
	bf16_outputs_alloc(&avx, &c);
	bf16_outputs_alloc(&scalar, &c);
	bf16_outputs_alloc(&f32, &c);
	cpu_ops_force_fallback(1);
	assert_string_equal(cpu_ops_bf16_path(), "scalar");
	bf16_case_run(&c, DTYPE_BFLOAT16, &scalar);
	bf16_case_run(&c, DTYPE_FLOAT32, &f32);
	expect_bf16_outputs_near_float32(&c, &scalar, &f32);
	cpu_ops_force_fallback(0);
	if (strcmp(cpu_ops_bf16_path(), "avx512_bf16") != 0) {
		print_message("note: no AVX-512 BF16 path on this build or CPU (%s); checked the "
			      "scalar fallback only\n", cpu_ops_bf16_path());
	} else {
		bf16_case_run(&c, DTYPE_BFLOAT16, &avx);
		struct {
			const char *what;
			const void *a, *b;
			size_t bytes;
		} outs[] = {
			{"rmsnorm y", avx.rms_y, scalar.rms_y, 2 * (size_t)(c.n * c.d)},
			{"heads merge", avx.merge, scalar.merge, 2 * (size_t)(c.n * c.ld)},
			{"heads merge with rope", avx.merge_rope, scalar.merge_rope,
			 2 * (size_t)(c.n * c.ld)},
			{"swiglu out", avx.swiglu_out, scalar.swiglu_out, 2 * (size_t)(c.n * c.f)},
			{"swiglu du", avx.swiglu_du, scalar.swiglu_du, 2 * (size_t)(c.n * 2 * c.f)},
			{"xent dlogits", avx.xent_d, scalar.xent_d, 2 * (size_t)(c.n * c.V)},
			{"convert", avx.convert, scalar.convert, 2 * (size_t)c.count},
			{"adamw shadow", avx.shadow, scalar.shadow, 2 * (size_t)c.count},
		};
		for (size_t k = 0; k < sizeof(outs) / sizeof(outs[0]); k++)
			if (memcmp(outs[k].a, outs[k].b, outs[k].bytes) != 0)
				fail_msg("bfloat16 %s differs between the avx512_bf16 path and the "
					 "scalar fallback", outs[k].what);
	}
	bf16_outputs_free(&avx);
	bf16_outputs_free(&scalar);
	bf16_outputs_free(&f32);
	bf16_case_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare__detects_one_wrong_value),
		cmocka_unit_test_teardown(
			test_convert__float32_to_bfloat16_rounds_like_bf16_h_on_both_paths,
			unforce_fallback),
		cmocka_unit_test_teardown(
			test_convert__denormals_round_on_scalar_path_and_flush_on_avx512,
			unforce_fallback),
		cmocka_unit_test_teardown(test_bf16_path__names_the_path_in_effect, unforce_fallback),
		cmocka_unit_test(test_embedding__forward_copies_the_token_rows),
		cmocka_unit_test_setup_teardown(
			test_embedding__backward_adds_into_dtable_summing_repeated_tokens,
			use_3_threads, restore_threads),
		cmocka_unit_test(test_embedding__reference_backward_matches_finite_differences),
		cmocka_unit_test(test_rmsnorm__forward_matches_float64_reference),
		cmocka_unit_test(test_rmsnorm__residual_forward_adds_then_matches_float64_reference),
		cmocka_unit_test_setup_teardown(
			test_rmsnorm__backward_adds_to_dx_overwrites_dg_and_matches_reference,
			use_3_threads, restore_threads),
		cmocka_unit_test_setup_teardown(
			test_rmsnorm__backward_is_deterministic_for_a_thread_count, use_3_threads,
			restore_threads),
		cmocka_unit_test(test_rmsnorm__reference_backward_matches_finite_differences),
		cmocka_unit_test(test_rope__table_holds_cos_and_sin_of_position_times_frequency),
		cmocka_unit_test(test_heads__split_matches_reference_with_and_without_rope),
		cmocka_unit_test(test_heads__merge_matches_reference_and_leaves_other_columns),
		cmocka_unit_test(test_heads__merge_of_split_is_identity_with_and_without_rope),
		cmocka_unit_test(test_heads__each_is_the_backward_of_the_other_with_rope),
		cmocka_unit_test(test_swiglu__forward_matches_float64_reference),
		cmocka_unit_test(test_swiglu__backward_overwrites_du_and_matches_reference),
		cmocka_unit_test(test_swiglu__reference_backward_matches_finite_differences),
		cmocka_unit_test(test_xent__forward_matches_float64_reference_with_large_logits),
		cmocka_unit_test(test_xent__backward_matches_reference_in_place_and_not),
		cmocka_unit_test(test_xent__reference_backward_matches_finite_differences),
		cmocka_unit_test(test_adamw__two_steps_match_hand_computed_values),
		cmocka_unit_test_teardown(
			test_adamw__ten_steps_match_float64_loop_and_shadow_is_bfloat16_of_p,
			unforce_fallback),
		cmocka_unit_test_teardown(test_bf16__outputs_are_float32_results_within_one_rounding,
					  unforce_fallback),
		cmocka_unit_test_teardown(test_bf16__avx512_path_is_bit_identical_to_scalar_fallback,
					  unforce_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
