/* tests/test_cuda_ops.c (label gpu): every op of the CUDA backend (kernels/cuda/) against the CPU
 * backend on the same random inputs — the CPU kernels are themselves held to float64
 * references and finite differences in test_ops.c — and the GEMMs against a float64 GEMM written
 * here; plus the backend's allocator accounting, its out-of-memory path and its event timers
 * (the work between two marks, the timing delay before a start mark outside the window).
 * Exits 77 (skipped) where no CUDA GPU is usable; sizes are odd so that every tail is taken.
 * Built a second time as test_cuda_ops_emu (BENCHDB_CUDA_EMU, label emu) against the emulated
 * CUDA device (tests/flashemu/README), unchanged. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bf16.h"
#include "cuda_info.h"
#include "ops.h"
#include "ops_cpu.h"
#include "rng.h"

/* CUDA against the CPU, per element: |x − ref| <= TOL · (|ref| + max |ref|). Both are float32
 * kernels with different summation orders and exp implementations (2 ulp CUDA expf vs simd.h's
 * vexp2), so a few 1e-7 of the scale apart; an indexing or sign bug is of order 1. */
#define TOL 1e-5
/* a bfloat16 output: one rounding (2^-8) on top of the float32 difference */
#define BF16_TOL (0x1p-8 + TOL)
/* TF32 GEMM inputs keep 10 of float32's 23 mantissa bits: each product is off by ~2^-10, and
 * k random-sign terms of it sum to ~sqrt(k)·2^-11 of the scale */
#define TF32_TOL 4e-3

static struct dev cpu, gpu;
static struct mem_arena cpu_mem, gpu_mem;

static int setup(void **state)
{
	(void)state;
	mem_init(&cpu_mem, 0);
	mem_init(&gpu_mem, 0);
	struct bd_error err = {0};
	if (dev_open(&cpu, DEVICE_CPU, &cpu_mem, &err) || dev_open(&gpu, DEVICE_CUDA, &gpu_mem, &err)) {
		fprintf(stderr, "dev_open: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dev_close(&gpu);
	dev_close(&cpu);
	return 0;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static void *host(size_t bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);
	assert_non_null(p);
	return p;
}

static float *random_floats(uint64_t seed, int64_t n, float lo, float hi)
{
	struct rng r;
	rng_init(&r, seed);
	float *x = host((size_t)n * sizeof(float));
	for (int64_t i = 0; i < n; i++) {
		do
			x[i] = rng_uniform(&r, lo, hi);
		while (fabsf(x[i]) < 1e-3f);
	}
	return x;
}

static uint16_t *to_bf16(const float *x, int64_t n)
{
	uint16_t *h = host((size_t)n * sizeof(uint16_t));
	for (int64_t i = 0; i < n; i++)
		h[i] = bf16_from_float(x[i]);
	return h;
}

/* A device buffer of bytes, holding src (or zeros when src is NULL). */
static void *put(struct dev *d, const void *src, size_t bytes)
{
	void *p = d->ops->alloc(d, bytes);
	if (!p)
		fail_msg("%s alloc of %zu bytes: %s", d->ops->name, bytes, d->err.msg);
	if (src)
		assert_int_equal(d->ops->upload(d, p, src, bytes), 0);
	return p;
}

static void get(struct dev *d, void *dst, const void *p, size_t bytes)
{
	if (d->ops->sync(d) || d->ops->download(d, dst, p, bytes))
		fail_msg("%s: %s", d->ops->name, d->err.msg);
}

static void ok(struct dev *d, int rc)
{
	if (rc)
		fail_msg("%s op failed: %s", d->ops->name, d->err.msg);
}

/* float32 or bfloat16 values of an act buffer's host copy, as floats */
static float value(const void *x, enum bd_dtype t, int64_t i)
{
	return t == DTYPE_BFLOAT16 ? bf16_to_float(((const uint16_t *)x)[i]) : ((const float *)x)[i];
}

static size_t act_size(enum bd_dtype t) { return t == DTYPE_BFLOAT16 ? 2 : 4; }

static void close_enough(const char *what, const void *got, const void *ref, enum bd_dtype t,
			 int64_t n, double tol)
{
	double scale = 0;
	for (int64_t i = 0; i < n; i++)
		scale = fmax(scale, fabs(value(ref, t, i)));
	double worst = 0;
	int64_t at = 0;
	for (int64_t i = 0; i < n; i++) {
		double g = value(got, t, i), r = value(ref, t, i);
		double den = fabs(r) + scale;   /* 0 only when every reference value is */
		double e = den > 0 ? fabs(g - r) / den : fabs(g - r);
		if (!(e <= worst) || isnan(g)) {
			worst = isnan(g) ? INFINITY : e;
			at = i;
		}
	}
	if (!(worst <= tol))
		fail_msg("%s: element %lld is %.9g, cpu %.9g (relative error %.3g > %.3g)", what,
			 (long long)at, (double)value(got, t, at), (double)value(ref, t, at), worst, tol);
}

/* ---- GEMM ----------------------------------------------------------------------------------- */

struct gemm_case {
	struct dev_gemm g;
	int64_t a_elems, b_elems, c_elems;
	int offset;   /* elements the operands start past an allocation: cuBLASLt alignment */
};

/* float64 row-major GEMM with the dev_gemm conventions (ops.h) */
static void ref_gemm(const struct dev_gemm *g0, const float *a, const float *b, double *c)
{
	struct dev_gemm g = *g0;
	int64_t batch = g.batch ? g.batch : 1;
	int64_t lda = g.lda ? g.lda : g.trans_a ? g.m : g.k, ldb = g.ldb ? g.ldb : g.trans_b ? g.k : g.n;
	int64_t ldc = g.ldc ? g.ldc : g.n;
	/* between batch entries: stored rows × row stride (ops.h, dnnl_wrap.c) */
	int64_t sa = g.stride_a ? g.stride_a : lda * (g.trans_a ? g.k : g.m);
	int64_t sb = g.stride_b ? g.stride_b : ldb * (g.trans_b ? g.n : g.k);
	int64_t sc = g.stride_c ? g.stride_c : ldc * g.m;
	double alpha = g.alpha != 0 ? g.alpha : 1;
	for (int64_t e = 0; e < batch; e++)
		for (int64_t i = 0; i < g.m; i++)
			for (int64_t j = 0; j < g.n; j++) {
				double s = 0;
				for (int64_t k = 0; k < g.k; k++) {
					double x = g.trans_a ? a[e * sa + k * lda + i] : a[e * sa + i * lda + k];
					double y = g.trans_b ? b[e * sb + j * ldb + k] : b[e * sb + k * ldb + j];
					s += x * y;
				}
				double *out = &c[e * sc + i * ldc + j];
				*out = alpha * s + g.beta * *out;
			}
}

static void check_gemm(const struct gemm_case *gc, int tf32, uint64_t seed)
{
	const struct dev_gemm *g = &gc->g;
	float *a = random_floats(seed, gc->a_elems, -1, 1);
	float *b = random_floats(seed + 1, gc->b_elems, -1, 1);
	float *c0 = random_floats(seed + 2, gc->c_elems, -1, 1);
	enum bd_dtype ab = g->ab_dtype, ct = g->c_dtype;
	/* the reference sees the operands as the GEMM does: rounded to bfloat16 when they are */
	uint16_t *a16 = to_bf16(a, gc->a_elems), *b16 = to_bf16(b, gc->b_elems);
	uint16_t *c16 = to_bf16(c0, gc->c_elems);
	if (ab == DTYPE_BFLOAT16)
		for (int64_t i = 0; i < gc->a_elems || i < gc->b_elems; i++) {
			if (i < gc->a_elems)
				a[i] = bf16_to_float(a16[i]);
			if (i < gc->b_elems)
				b[i] = bf16_to_float(b16[i]);
		}
	double *ref = host((size_t)gc->c_elems * sizeof(double));
	for (int64_t i = 0; i < gc->c_elems; i++)
		ref[i] = ct == DTYPE_BFLOAT16 ? bf16_to_float(c16[i]) : c0[i];
	ref_gemm(g, a, b, ref);

	size_t es = act_size(ab), cs = act_size(ct), off = (size_t)gc->offset;
	char *da = put(&gpu, NULL, (gc->a_elems + off) * es);
	char *db = put(&gpu, NULL, (gc->b_elems + off) * es);
	char *dc = put(&gpu, NULL, (gc->c_elems + off) * cs);
	assert_int_equal(gpu.ops->upload(&gpu, da + off * es, ab == DTYPE_BFLOAT16 ? (void *)a16 : a,
					 (size_t)gc->a_elems * es), 0);
	assert_int_equal(gpu.ops->upload(&gpu, db + off * es, ab == DTYPE_BFLOAT16 ? (void *)b16 : b,
					 (size_t)gc->b_elems * es), 0);
	assert_int_equal(gpu.ops->upload(&gpu, dc + off * cs, ct == DTYPE_BFLOAT16 ? (void *)c16 : c0,
					 (size_t)gc->c_elems * cs), 0);
	gpu.tf32 = tf32;
	ok(&gpu, gpu.ops->gemm(&gpu, g, da + off * es, db + off * es, dc + off * cs));
	gpu.tf32 = 0;
	void *got = host((size_t)gc->c_elems * cs);
	get(&gpu, got, dc + off * cs, (size_t)gc->c_elems * cs);

	float *reff = host((size_t)gc->c_elems * sizeof(float));
	for (int64_t i = 0; i < gc->c_elems; i++)
		reff[i] = (float)ref[i];
	void *refc = reff;
	uint16_t *ref16 = NULL;
	if (ct == DTYPE_BFLOAT16)
		refc = ref16 = to_bf16(reff, gc->c_elems);
	char what[160];
	snprintf(what, sizeof(what), "gemm %lldx%lldx%lld batch %lld ta %d tb %d %s->%s%s beta %g",
		 (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch, g->trans_a,
		 g->trans_b, dtype_name(ab), dtype_name(ct), tf32 ? " tf32" : "", (double)g->beta);
	double tol = tf32 ? TF32_TOL : ab == DTYPE_BFLOAT16 || ct == DTYPE_BFLOAT16 ? BF16_TOL : TOL;
	close_enough(what, got, refc, ct, gc->c_elems, tol);
	gpu.ops->free(&gpu, da);
	gpu.ops->free(&gpu, db);
	gpu.ops->free(&gpu, dc);
	free(a), free(b), free(c0), free(a16), free(b16), free(c16), free(ref), free(got), free(reff);
	free(ref16);
}

static void test_cuda__gemm_layouts_dtypes_and_tf32(void **state)
{
	(void)state;
	const int64_t m = 37, n = 29, k = 53;
	const struct gemm_case cases[] = {
		{{.m = m, .n = n, .k = k, .ab_dtype = DTYPE_FLOAT32, .c_dtype = DTYPE_FLOAT32},
		 m * k, k * n, m * n, 0},
		{{.m = m, .n = n, .k = k, .trans_a = 1, .ab_dtype = DTYPE_FLOAT32,
		  .c_dtype = DTYPE_FLOAT32}, m * k, k * n, m * n, 1},
		{{.m = m, .n = n, .k = k, .trans_b = 1, .alpha = 0.5f, .beta = 1,
		  .ab_dtype = DTYPE_FLOAT32, .c_dtype = DTYPE_FLOAT32}, m * k, k * n, m * n, 3},
		/* row strides wider than the rows (the model's column slices of the QKV buffer) */
		{{.m = m, .n = n, .k = k, .lda = 3 * k, .ldc = 2 * n, .ab_dtype = DTYPE_FLOAT32,
		  .c_dtype = DTYPE_FLOAT32}, m * 3 * k, k * n, m * 2 * n, 0},
		/* batched with padded rows and default strides (stored rows × ld) */
		{{.batch = 2, .m = m, .n = n, .k = k, .trans_a = 1, .lda = m + 3, .ldc = n + 5,
		  .ab_dtype = DTYPE_FLOAT32, .c_dtype = DTYPE_FLOAT32}, 2 * k * (m + 3), 2 * k * n,
		 2 * m * (n + 5), 0},
		/* batched, as the naive attention's score GEMMs */
		{{.batch = 3, .m = m, .n = m, .k = 16, .trans_b = 1, .alpha = 0.25f,
		  .ab_dtype = DTYPE_FLOAT32, .c_dtype = DTYPE_FLOAT32}, 3 * m * 16, 3 * m * 16,
		 3 * m * m, 0},
		{{.m = m, .n = n, .k = k, .trans_b = 1, .ab_dtype = DTYPE_BFLOAT16,
		  .c_dtype = DTYPE_FLOAT32}, m * k, k * n, m * n, 0},
		{{.m = m, .n = n, .k = k, .trans_a = 1, .ab_dtype = DTYPE_BFLOAT16,
		  .c_dtype = DTYPE_FLOAT32, .beta = 1}, m * k, k * n, m * n, 8},
		{{.m = 64, .n = 48, .k = 96, .trans_b = 1, .ab_dtype = DTYPE_BFLOAT16,
		  .c_dtype = DTYPE_BFLOAT16}, 64 * 96, 96 * 48, 64 * 48, 0},
		{{.m = m, .n = n, .k = k, .ab_dtype = DTYPE_BFLOAT16, .c_dtype = DTYPE_BFLOAT16}, m * k,
		 k * n, m * n, 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_gemm(&cases[i], 0, 100 + i);
	/* the same GEMM on operands 4 bytes past a 256-byte boundary: a plan (cuBLASLt algorithm)
	 * chosen for the first call's alignment must not be reused */
	struct gemm_case shifted = cases[0];
	shifted.offset = 1;
	check_gemm(&shifted, 0, 150);
	/* TF32 on float32 inputs: close to float64 at TF32's precision */
	check_gemm(&cases[0], 1, 200);
	check_gemm(&cases[2], 1, 201);
}

/* ---- elementwise and row ops ---------------------------------------------------------------- */

static void test_cuda__convert_rounds_like_the_cpu(void **state)
{
	(void)state;
	const int64_t n = 1001;
	float *x = random_floats(1, n, -3, 3);
	uint16_t want[1001], got16[1001];
	float back[1001], back_cpu[1001];
	cpu.ops->convert(&cpu, want, DTYPE_BFLOAT16, x, DTYPE_FLOAT32, (size_t)n);
	float *dx = put(&gpu, x, n * sizeof(float));
	uint16_t *dh = put(&gpu, NULL, n * sizeof(uint16_t));
	float *dy = put(&gpu, NULL, n * sizeof(float));
	ok(&gpu, gpu.ops->convert(&gpu, dh, DTYPE_BFLOAT16, dx, DTYPE_FLOAT32, (size_t)n));
	ok(&gpu, gpu.ops->convert(&gpu, dy, DTYPE_FLOAT32, dh, DTYPE_BFLOAT16, (size_t)n));
	get(&gpu, got16, dh, sizeof(got16));
	get(&gpu, back, dy, sizeof(back));
	cpu.ops->convert(&cpu, back_cpu, DTYPE_FLOAT32, want, DTYPE_BFLOAT16, (size_t)n);
	assert_memory_equal(got16, want, sizeof(want));   /* round to nearest even, bit for bit */
	assert_memory_equal(back, back_cpu, sizeof(back));
	gpu.ops->free(&gpu, dx), gpu.ops->free(&gpu, dh), gpu.ops->free(&gpu, dy);
	free(x);
}

static void test_cuda__embedding_forward_and_backward(void **state)
{
	(void)state;
	const int64_t V = 37, d = 45, n = 101;
	int32_t tok[101];
	for (int64_t i = 0; i < n; i++)
		tok[i] = (int32_t)((i * 7 + 3) % V);   /* repeats: the backward sums them */
	float *table = random_floats(2, V * d, -1, 1), *dout = random_floats(3, n * d, -1, 1);
	float *out[2], *dtab[2];
	struct dev *devs[2] = {&cpu, &gpu};
	for (int i = 0; i < 2; i++) {
		struct dev *dv = devs[i];
		int32_t *dt = put(dv, tok, sizeof(tok));
		float *dtable = put(dv, table, (size_t)(V * d) * 4), *dy = put(dv, dout, (size_t)(n * d) * 4);
		float *o = put(dv, NULL, (size_t)(n * d) * 4), *g = put(dv, table, (size_t)(V * d) * 4);
		ok(dv, dv->ops->embedding_fwd(dv, dt, dtable, o, n, d));
		ok(dv, dv->ops->embedding_bwd(dv, dt, dy, g, n, d));   /* += onto the table's values */
		out[i] = host((size_t)(n * d) * 4);
		dtab[i] = host((size_t)(V * d) * 4);
		get(dv, out[i], o, (size_t)(n * d) * 4);
		get(dv, dtab[i], g, (size_t)(V * d) * 4);
		dv->ops->free(dv, dt), dv->ops->free(dv, dtable), dv->ops->free(dv, dy);
		dv->ops->free(dv, o), dv->ops->free(dv, g);
	}
	assert_memory_equal(out[1], out[0], (size_t)(n * d) * 4);
	close_enough("embedding_bwd", dtab[1], dtab[0], DTYPE_FLOAT32, V * d, TOL);
	free(out[0]), free(out[1]), free(dtab[0]), free(dtab[1]), free(table), free(dout);
}

static void check_rmsnorm(enum bd_dtype yt, int64_t n, int64_t d)
{
	float *x = random_floats(4, n * d, -2, 2), *g = random_floats(5, d, 0.5f, 1.5f);
	float *dy = random_floats(6, n * d, -1, 1), *dx0 = random_floats(7, n * d, -1, 1);
	void *y[2];
	float *rstd[2], *dx[2], *dg[2];
	struct dev *devs[2] = {&cpu, &gpu};
	size_t ys = act_size(yt);
	for (int i = 0; i < 2; i++) {
		struct dev *dv = devs[i];
		float *px = put(dv, x, (size_t)(n * d) * 4), *pg = put(dv, g, (size_t)d * 4);
		void *py = put(dv, NULL, (size_t)(n * d) * ys);
		float *pr = put(dv, NULL, (size_t)n * 4), *pdy = put(dv, dy, (size_t)(n * d) * 4);
		float *pdx = put(dv, dx0, (size_t)(n * d) * 4), *pdg = put(dv, NULL, (size_t)d * 4);
		ok(dv, dv->ops->rmsnorm_fwd(dv, px, pg, py, yt, pr, n, d, 1e-5f));
		ok(dv, dv->ops->rmsnorm_bwd(dv, pdy, px, pg, pr, pdx, pdg, n, d));
		y[i] = host((size_t)(n * d) * ys);
		rstd[i] = host((size_t)n * 4);
		dx[i] = host((size_t)(n * d) * 4);
		dg[i] = host((size_t)d * 4);
		get(dv, y[i], py, (size_t)(n * d) * ys);
		get(dv, rstd[i], pr, (size_t)n * 4);
		get(dv, dx[i], pdx, (size_t)(n * d) * 4);
		get(dv, dg[i], pdg, (size_t)d * 4);
		void *bufs[] = {px, pg, py, pr, pdy, pdx, pdg};
		for (size_t j = 0; j < 7; j++)
			dv->ops->free(dv, bufs[j]);
	}
	close_enough("rmsnorm_fwd y", y[1], y[0], yt, n * d, yt == DTYPE_BFLOAT16 ? BF16_TOL : TOL);
	close_enough("rmsnorm_fwd rstd", rstd[1], rstd[0], DTYPE_FLOAT32, n, TOL);
	close_enough("rmsnorm_bwd dx (+=)", dx[1], dx[0], DTYPE_FLOAT32, n * d, TOL);
	/* dg sums n rows: float32 sums in different orders, ~sqrt(n)·2^-24 apart */
	close_enough("rmsnorm_bwd dg", dg[1], dg[0], DTYPE_FLOAT32, d, TOL);
	for (int i = 0; i < 2; i++)
		free(y[i]), free(rstd[i]), free(dx[i]), free(dg[i]);
	free(x), free(g), free(dy), free(dx0);
}

static void test_cuda__rmsnorm_forward_and_backward(void **state)
{
	(void)state;
	check_rmsnorm(DTYPE_FLOAT32, 37, 45);
	check_rmsnorm(DTYPE_BFLOAT16, 37, 45);
	check_rmsnorm(DTYPE_FLOAT32, 300, 1031);   /* several row chunks, columns past a block */
}

static void check_heads(enum bd_dtype t, int rope, int64_t T)
{
	const int64_t b = 2, h = 3, dh = 10, ld = 3 * h * dh;   /* a column slice of QKV */
	float *in = random_floats(8, b * T * ld, -1, 1);
	void *in_act = in;
	uint16_t *in16 = NULL;
	if (t == DTYPE_BFLOAT16)
		in_act = in16 = to_bf16(in, b * T * ld);
	float *table = host((size_t)(T * dh) * 4);
	cpu_rope_table(table, T, dh, 10000.0);
	float *heads[2];
	void *merged[2];
	size_t es = act_size(t);
	struct dev *devs[2] = {&cpu, &gpu};
	for (int i = 0; i < 2; i++) {
		struct dev *dv = devs[i];
		void *pin = put(dv, in_act, (size_t)(b * T * ld) * es);
		float *pr = put(dv, table, (size_t)(T * dh) * 4);
		float *ph = put(dv, NULL, (size_t)(b * h * T * dh) * 4);
		void *pm = put(dv, in_act, (size_t)(b * T * ld) * es);   /* columns outside stay */
		const float *rt = rope ? pr : NULL;
		/* the middle third (K's columns) of each row */
		ok(dv, dv->ops->heads_split(dv, (char *)pin + (size_t)(h * dh) * es, t, ld, ph, rt, b, T,
					    h, dh));
		ok(dv, dv->ops->heads_merge(dv, ph, (char *)pm + (size_t)(h * dh) * es, t, ld, rt, b, T,
					    h, dh));
		heads[i] = host((size_t)(b * h * T * dh) * 4);
		merged[i] = host((size_t)(b * T * ld) * es);
		get(dv, heads[i], ph, (size_t)(b * h * T * dh) * 4);
		get(dv, merged[i], pm, (size_t)(b * T * ld) * es);
		dv->ops->free(dv, pin), dv->ops->free(dv, pr), dv->ops->free(dv, ph);
		dv->ops->free(dv, pm);
	}
	char what[64];
	snprintf(what, sizeof(what), "heads_split %s%s", dtype_name(t), rope ? " rope" : "");
	close_enough(what, heads[1], heads[0], DTYPE_FLOAT32, b * h * T * dh, TOL);
	snprintf(what, sizeof(what), "heads_merge %s%s", dtype_name(t), rope ? " rope" : "");
	close_enough(what, merged[1], merged[0], t, b * T * ld, t == DTYPE_BFLOAT16 ? BF16_TOL : TOL);
	for (int i = 0; i < 2; i++)
		free(heads[i]), free(merged[i]);
	free(in), free(in16), free(table);
}

static void test_cuda__heads_split_and_merge_with_rope(void **state)
{
	(void)state;
	for (int rope = 0; rope < 2; rope++) {
		check_heads(DTYPE_FLOAT32, rope, 13);
		check_heads(DTYPE_BFLOAT16, rope, 13);
	}
}

static void check_swiglu(enum bd_dtype t, int64_t n, int64_t f)
{
	float *u = random_floats(9, n * 2 * f, -4, 4), *dout = random_floats(10, n * f, -1, 1);
	void *ua = u, *da = dout;
	uint16_t *u16 = NULL, *d16 = NULL;
	if (t == DTYPE_BFLOAT16) {
		ua = u16 = to_bf16(u, n * 2 * f);
		da = d16 = to_bf16(dout, n * f);
	}
	size_t es = act_size(t);
	void *out[2], *du[2];
	struct dev *devs[2] = {&cpu, &gpu};
	for (int i = 0; i < 2; i++) {
		struct dev *dv = devs[i];
		void *pu = put(dv, ua, (size_t)(n * 2 * f) * es), *pd = put(dv, da, (size_t)(n * f) * es);
		void *po = put(dv, NULL, (size_t)(n * f) * es), *pdu = put(dv, NULL, (size_t)(n * 2 * f) * es);
		ok(dv, dv->ops->swiglu_fwd(dv, pu, po, t, n, f));
		ok(dv, dv->ops->swiglu_bwd(dv, pu, pd, pdu, t, n, f));
		out[i] = host((size_t)(n * f) * es);
		du[i] = host((size_t)(n * 2 * f) * es);
		get(dv, out[i], po, (size_t)(n * f) * es);
		get(dv, du[i], pdu, (size_t)(n * 2 * f) * es);
		dv->ops->free(dv, pu), dv->ops->free(dv, pd), dv->ops->free(dv, po);
		dv->ops->free(dv, pdu);
	}
	double tol = t == DTYPE_BFLOAT16 ? BF16_TOL : TOL;
	close_enough("swiglu_fwd", out[1], out[0], t, n * f, tol);
	close_enough("swiglu_bwd", du[1], du[0], t, n * 2 * f, tol);
	for (int i = 0; i < 2; i++)
		free(out[i]), free(du[i]);
	free(u), free(dout), free(u16), free(d16);
}

static void test_cuda__swiglu_forward_and_backward(void **state)
{
	(void)state;
	check_swiglu(DTYPE_FLOAT32, 37, 53);
	check_swiglu(DTYPE_BFLOAT16, 37, 53);
}

/* hot: one logit of each row at 120, far above the rest (at varying columns), so that a row max
 * that misses it overflows exp in float32 */
static void check_xent(enum bd_dtype t, int64_t n, int64_t V, int hot)
{
	float *logits = random_floats(11, n * V, -5, 5);
	int32_t tgt[37];
	assert_true(n <= 37);
	for (int64_t i = 0; hot && i < n; i++)
		logits[i * V + (i * 37 + 1) % V] = 120;
	for (int64_t i = 0; i < n; i++)
		tgt[i] = (int32_t)((i * 613 + 5) % V);
	float loss[2], *lse[2];
	void *dl[2];
	size_t es = act_size(t);
	struct dev *devs[2] = {&cpu, &gpu};
	for (int i = 0; i < 2; i++) {
		struct dev *dv = devs[i];
		float *pl = put(dv, logits, (size_t)(n * V) * 4), *plse = put(dv, NULL, (size_t)n * 4);
		float *ploss = put(dv, NULL, 4);
		int32_t *pt = put(dv, tgt, (size_t)n * sizeof(int32_t));
		/* float32: in place, as the model does */
		void *pd = t == DTYPE_FLOAT32 ? (void *)pl : put(dv, NULL, (size_t)(n * V) * es);
		ok(dv, dv->ops->xent_fwd(dv, pl, pt, plse, ploss, n, V));
		ok(dv, dv->ops->xent_bwd(dv, pl, plse, pt, pd, t, n, V, 1.0f / (float)n));
		lse[i] = host((size_t)n * 4);
		dl[i] = host((size_t)(n * V) * es);
		get(dv, &loss[i], ploss, 4);
		get(dv, lse[i], plse, (size_t)n * 4);
		get(dv, dl[i], pd, (size_t)(n * V) * es);
		if (pd != pl)
			dv->ops->free(dv, pd);
		dv->ops->free(dv, pl), dv->ops->free(dv, plse), dv->ops->free(dv, ploss);
		dv->ops->free(dv, pt);
	}
	close_enough("xent_fwd loss", &loss[1], &loss[0], DTYPE_FLOAT32, 1, TOL);
	close_enough("xent_fwd lse", lse[1], lse[0], DTYPE_FLOAT32, n, TOL);
	close_enough("xent_bwd", dl[1], dl[0], t, n * V, t == DTYPE_BFLOAT16 ? BF16_TOL : TOL);
	for (int i = 0; i < 2; i++)
		free(lse[i]), free(dl[i]);
	free(logits);
}

static void test_cuda__softmax_cross_entropy_forward_and_backward(void **state)
{
	(void)state;
	check_xent(DTYPE_FLOAT32, 37, 1999, 0);
	check_xent(DTYPE_BFLOAT16, 37, 1999, 0);
	check_xent(DTYPE_FLOAT32, 37, 1999, 1);
}

static void check_adamw(int shadow, int64_t n)
{
	float *p0 = random_floats(12, n, -1, 1), *g = random_floats(13, n, -1, 1);
	float *m0 = random_floats(14, n, -0.1f, 0.1f), *v0 = random_floats(15, n, 0.001f, 0.01f);
	const struct adamw_params hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
					.weight_decay = 0.01f};
	float *p[2], *m[2], *v[2];
	uint16_t *s[2];
	struct dev *devs[2] = {&cpu, &gpu};
	for (int i = 0; i < 2; i++) {
		struct dev *dv = devs[i];
		float *pp = put(dv, p0, (size_t)n * 4), *pg = put(dv, g, (size_t)n * 4);
		float *pm = put(dv, m0, (size_t)n * 4), *pv = put(dv, v0, (size_t)n * 4);
		uint16_t *ps = shadow ? put(dv, NULL, (size_t)n * 2) : NULL;
		ok(dv, dv->ops->adamw(dv, pp, pg, pm, pv, ps, (size_t)n, &hp, 3));
		p[i] = host((size_t)n * 4), m[i] = host((size_t)n * 4), v[i] = host((size_t)n * 4);
		s[i] = host((size_t)n * 2);
		get(dv, p[i], pp, (size_t)n * 4);
		get(dv, m[i], pm, (size_t)n * 4);
		get(dv, v[i], pv, (size_t)n * 4);
		if (ps)
			get(dv, s[i], ps, (size_t)n * 2);
		dv->ops->free(dv, pp), dv->ops->free(dv, pg), dv->ops->free(dv, pm);
		dv->ops->free(dv, pv), dv->ops->free(dv, ps);
	}
	close_enough("adamw p", p[1], p[0], DTYPE_FLOAT32, n, TOL);
	close_enough("adamw m", m[1], m[0], DTYPE_FLOAT32, n, TOL);
	close_enough("adamw v", v[1], v[0], DTYPE_FLOAT32, n, TOL);
	if (shadow)
		close_enough("adamw bf16 shadow", s[1], s[0], DTYPE_BFLOAT16, n, BF16_TOL);
	for (int i = 0; i < 2; i++)
		free(p[i]), free(m[i]), free(v[i]), free(s[i]);
	free(p0), free(g), free(m0), free(v0);
}

static void test_cuda__adamw_with_and_without_the_bf16_shadow(void **state)
{
	(void)state;
	check_adamw(0, 10007);
	check_adamw(1, 10007);
}

static void check_attention(int causal, int64_t b, int64_t h, int64_t t, int64_t dh)
{
	int64_t e = b * h * t * dh;
	float *q = random_floats(16, e, -1, 1), *k = random_floats(17, e, -1, 1);
	float *v = random_floats(18, e, -1, 1), *d_o = random_floats(19, e, -1, 1);
	struct dev_attention_shape s = {.b = b, .h = h, .t = t, .dh = dh, .causal = causal,
					.backward = 1};
	float *out[2][5], *lse[2];   /* o, dq, dk, dv */
	struct dev *devs[2] = {&cpu, &gpu};
	for (int i = 0; i < 2; i++) {
		struct dev *dv = devs[i];
		void *att = NULL;
		ok(dv, dv->ops->attention_create(dv, &att, "naive", &s));
		float *pq = put(dv, q, (size_t)e * 4), *pk = put(dv, k, (size_t)e * 4);
		float *pv = put(dv, v, (size_t)e * 4), *pdo = put(dv, d_o, (size_t)e * 4);
		float *po = put(dv, NULL, (size_t)e * 4), *plse = put(dv, NULL, (size_t)(b * h * t) * 4);
		float *pdq = put(dv, NULL, (size_t)e * 4), *pdk = put(dv, NULL, (size_t)e * 4);
		float *pdv = put(dv, NULL, (size_t)e * 4);
		ok(dv, dv->ops->attention_fwd(dv, att, pq, pk, pv, po, plse));
		ok(dv, dv->ops->attention_bwd(dv, att, pq, pk, pv, po, plse, pdo, pdq, pdk, pdv));
		float *bufs[] = {po, pdq, pdk, pdv};
		for (int j = 0; j < 4; j++) {
			out[i][j] = host((size_t)e * 4);
			get(dv, out[i][j], bufs[j], (size_t)e * 4);
		}
		lse[i] = host((size_t)(b * h * t) * 4);
		get(dv, lse[i], plse, (size_t)(b * h * t) * 4);
		void *all[] = {pq, pk, pv, pdo, po, plse, pdq, pdk, pdv};
		for (int j = 0; j < 9; j++)
			dv->ops->free(dv, all[j]);
		dv->ops->attention_free(dv, att);
	}
	const char *names[] = {"attention o", "attention dq", "attention dk", "attention dv"};
	for (int j = 0; j < 4; j++)
		close_enough(names[j], out[1][j], out[0][j], DTYPE_FLOAT32, e, TOL);
	close_enough("attention lse", lse[1], lse[0], DTYPE_FLOAT32, b * h * t, TOL);
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 4; j++)
			free(out[i][j]);
		free(lse[i]);
	}
	free(q), free(k), free(v), free(d_o);
}

static void test_cuda__naive_attention_forward_and_backward(void **state)
{
	(void)state;
	check_attention(1, 2, 3, 37, 16);
	check_attention(0, 2, 3, 37, 16);
	check_attention(1, 1, 2, 129, 64);
}

/* The smallest shapes: one-element rows (d = 1, V = 1, f = 1), one row, one token, two queries:
 * every block-level reduction and grid-stride loop with a single element or a single block. */
static void test_cuda__one_element_rows_and_single_rows(void **state)
{
	(void)state;
	check_rmsnorm(DTYPE_FLOAT32, 1, 1);
	check_rmsnorm(DTYPE_BFLOAT16, 3, 1);
	check_heads(DTYPE_FLOAT32, 1, 1);
	check_swiglu(DTYPE_FLOAT32, 1, 1);
	check_swiglu(DTYPE_BFLOAT16, 3, 1);
	check_xent(DTYPE_FLOAT32, 1, 1, 0);
	check_xent(DTYPE_BFLOAT16, 5, 1, 0);
	check_xent(DTYPE_FLOAT32, 1, 3, 1);
	check_adamw(1, 1);
	/* a causal first query sees one key (its dQ is exactly 0; t = 1 would leave the test only
	 * rounding noise to compare); head_dim 8 */
	check_attention(1, 1, 1, 2, 16);
	check_attention(0, 1, 2, 3, 8);
}

static void test_cuda__unknown_attention_impl_is_unsupported_with_a_reason(void **state)
{
	(void)state;
	struct dev_attention_shape s = {.b = 1, .h = 1, .t = 8, .dh = 16, .causal = 1};
	void *att = NULL;
	assert_int_equal(gpu.ops->attention_create(&gpu, &att, "bogus", &s), BD_EUNSUPPORTED);
	assert_non_null(strstr(gpu.err.msg, "naive, flash, sdpa"));
	assert_null(att);
}

/* ---- memory, timers ------------------------------------------------------------------------- */

static void test_cuda__allocator_counts_exact_bytes_and_the_limit(void **state)
{
	(void)state;
	struct mem_arena mem;
	mem_init(&mem, 0);
	struct dev d;
	struct bd_error err = {0};
	assert_int_equal(dev_open(&d, DEVICE_CUDA, &mem, &err), 0);
	int64_t base = mem.live;   /* the cuBLASLt workspace */
	assert_true(base > 0);
	void *a = d.ops->alloc(&d, 1000), *b = d.ops->alloc(&d, 12345);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(mem.live, base + 1000 + 12345);
	d.ops->free(&d, a);
	assert_int_equal(mem.live, base + 12345);
	assert_int_equal(mem.peak, base + 1000 + 12345);
	/* a limit refuses with the bytes requested */
	mem.limit = mem.live + 4096;
	assert_null(d.ops->alloc(&d, 8192));
	assert_int_equal(mem.failed, 8192);
	assert_non_null(strstr(d.err.msg, "8192"));
	d.ops->free(&d, b);
	dev_close(&d);
	assert_int_equal(mem.live, 0);
}

static void test_cuda__gpu_out_of_memory_is_enomem_and_the_device_goes_on(void **state)
{
	(void)state;
	struct mem_arena mem;
	mem_init(&mem, 0);
	struct dev d;
	struct bd_error err = {0};
	assert_int_equal(dev_open(&d, DEVICE_CUDA, &mem, &err), 0);
	int64_t live = mem.live;
	size_t huge = (size_t)1 << 50;   /* a petabyte: no GPU has it */
	assert_null(d.ops->alloc(&d, huge));
	assert_non_null(strstr(d.err.msg, "cudaMalloc"));
	assert_int_equal(mem.live, live);
	assert_int_equal(mem.failed, (int64_t)huge);
	/* the context is still usable: allocate, compute, read back */
	float x[5] = {1, 2, 3, 4, 5}, y[5] = {0};
	float *p = d.ops->alloc(&d, sizeof(x));
	assert_non_null(p);
	ok(&d, d.ops->upload(&d, p, x, sizeof(x)));
	ok(&d, d.ops->download(&d, y, p, sizeof(y)));
	assert_memory_equal(x, y, sizeof(x));
	d.ops->free(&d, p);
	dev_close(&d);
}

/* A GPU this build has no code for (a 7.x GPU; emulated with BENCHDB_EMU_NO_KERNEL_IMAGE) is
 * unsupported with the reason, for the backend's open and a case's device check alike, not an
 * error at the first launch of every case. */
static void test_cuda__a_gpu_without_code_in_this_build_is_unsupported(void **state)
{
	(void)state;
#ifndef BENCHDB_CUDA_EMU
	skip();   /* a real GPU that got this far runs the build's code */
#else
	struct mem_arena mem;
	mem_init(&mem, 0);
	struct dev d;
	struct bd_error err = {0}, aerr = {0};
	setenv("BENCHDB_EMU_NO_KERNEL_IMAGE", "1", 1);
	int rc = dev_open(&d, DEVICE_CUDA, &mem, &err);
	int arc = dev_backend(DEVICE_CUDA)->available(&aerr);
	unsetenv("BENCHDB_EMU_NO_KERNEL_IMAGE");
	if (rc != BD_EUNSUPPORTED || !strstr(err.msg, "compute capability 9.0") ||
	    !strstr(err.msg, "cudaErrorNoKernelImageForDevice"))
		fail_msg("dev_open: rc %d, '%s' (wanted unsupported naming the compute capability "
			 "and CUDA's error)", rc, err.msg);
	assert_int_equal(arc, BD_EUNSUPPORTED);
	assert_string_equal(aerr.msg, err.msg);
	assert_int_equal(mem.live, 0);
	/* and the device is usable again once the code is there */
	assert_int_equal(dev_open(&d, DEVICE_CUDA, &mem, &err), 0);
	dev_close(&d);
#endif
}

static void test_cuda__events_time_the_work_between_marks(void **state)
{
	(void)state;
	const int64_t n = 1 << 22;
	float *a = put(&gpu, NULL, (size_t)n * 4), *b = put(&gpu, NULL, (size_t)n * 4);
	int64_t ns = -1, ns_empty = -1;
	ok(&gpu, gpu.ops->mark(&gpu, 0));
	for (int i = 0; i < 50; i++)
		ok(&gpu, gpu.ops->copy(&gpu, b, a, (size_t)n * 4));
	ok(&gpu, gpu.ops->mark(&gpu, 1));
	ok(&gpu, gpu.ops->mark(&gpu, 2));
	ok(&gpu, gpu.ops->elapsed(&gpu, 0, 1, &ns));
	ok(&gpu, gpu.ops->elapsed(&gpu, 1, 2, &ns_empty));
	/* 50 copies of 16 MiB move 1.6 GiB: more than 20 µs on any GPU, less than a minute */
	assert_true(ns > 20000 && ns < 60000000000LL);
	assert_true(ns_empty >= 0 && ns_empty < ns);
	assert_int_equal(gpu.ops->elapsed(&gpu, 0, DEV_TIMER_SLOTS, &ns), BD_EINVAL);
	gpu.ops->free(&gpu, a);
	gpu.ops->free(&gpu, b);
}

#ifdef BENCHDB_CUDA_EMU
/* the emulated runtime's stream log (tests/flashemu/emu_runtime.cpp) */
void emu_trace_begin(void);
const char *emu_trace_end(void);
#endif

/* A start mark (even slot) enqueues the timing delay, then its event; an end mark is the event
 * alone. Checked in the emulated runtime's log of what the stream holds, in order. */
static void test_cuda__a_start_event_is_queued_behind_the_timing_delay(void **state)
{
	(void)state;
#ifndef BENCHDB_CUDA_EMU
	skip();   /* the stream's order is read from the emulated device's log */
#else
	static const char head[] = "launch timing_delay\nrecord\nlaunch convert", tail[] = "\nrecord\n";
	float *a = put(&gpu, NULL, 4096), *b = put(&gpu, NULL, 4096);
	emu_trace_begin();
	ok(&gpu, gpu.ops->mark(&gpu, 2));
	ok(&gpu, gpu.ops->convert(&gpu, b, DTYPE_BFLOAT16, a, DTYPE_FLOAT32, 512));
	ok(&gpu, gpu.ops->mark(&gpu, 3));
	const char *log = emu_trace_end();
	size_t n = strlen(log);
	if (strncmp(log, head, sizeof(head) - 1) || n < sizeof(tail) - 1 ||
	    strcmp(log + n - (sizeof(tail) - 1), tail))
		fail_msg("stream log:\n%s(wanted the delay, the start event, the work, the end event)",
			 log);
	gpu.ops->free(&gpu, a);
	gpu.ops->free(&gpu, b);
#endif
}

/* The delay is on the device and outside the window it precedes: with a fixed 200 ms delay
 * (BENCHDB_CUDA_TIMING_DELAY_US), a small copy between marks 0 and 1 times far below it, and
 * the empty span from mark 1 to mark 2 (the delay of mark 2 alone) at least it. */
static void test_cuda__the_timing_delay_is_outside_the_window(void **state)
{
	(void)state;
	const int64_t delay_ns = 200000000;
	struct mem_arena mem;
	mem_init(&mem, 0);
	struct dev d;
	struct bd_error err = {0};
	setenv("BENCHDB_CUDA_TIMING_DELAY_US", "200000", 1);
	int rc = dev_open(&d, DEVICE_CUDA, &mem, &err);
	unsetenv("BENCHDB_CUDA_TIMING_DELAY_US");
	if (rc)
		fail_msg("dev_open: %s", err.msg);
	float *a = put(&d, NULL, 4096), *b = put(&d, NULL, 4096);
	int64_t window = -1, between = -1;
	ok(&d, d.ops->mark(&d, 0));
	ok(&d, d.ops->copy(&d, b, a, 4096));
	ok(&d, d.ops->mark(&d, 1));
	ok(&d, d.ops->mark(&d, 2));
	ok(&d, d.ops->mark(&d, 3));
	ok(&d, d.ops->elapsed(&d, 0, 1, &window));
	ok(&d, d.ops->elapsed(&d, 1, 2, &between));
	if (window >= delay_ns / 4 || between < delay_ns * 9 / 10)
		fail_msg("copy window %lld ns, delay span %lld ns (the delay is %lld ns)",
			 (long long)window, (long long)between, (long long)delay_ns);
	d.ops->free(&d, a);
	d.ops->free(&d, b);
	dev_close(&d);
	/* a value that is not whole microseconds is refused, naming the variable */
	setenv("BENCHDB_CUDA_TIMING_DELAY_US", "5ms", 1);
	rc = dev_open(&d, DEVICE_CUDA, &mem, &err);
	unsetenv("BENCHDB_CUDA_TIMING_DELAY_US");
	assert_int_equal(rc, BD_EINVAL);
	assert_non_null(strstr(err.msg, "BENCHDB_CUDA_TIMING_DELAY_US"));
	assert_int_equal(mem.live, 0);
}

int main(void)
{
	char why[256];
	if (!cuda_available(why, sizeof(why))) {
		printf("skipped: %s\n", why);
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda__gemm_layouts_dtypes_and_tf32),
		cmocka_unit_test(test_cuda__convert_rounds_like_the_cpu),
		cmocka_unit_test(test_cuda__embedding_forward_and_backward),
		cmocka_unit_test(test_cuda__rmsnorm_forward_and_backward),
		cmocka_unit_test(test_cuda__heads_split_and_merge_with_rope),
		cmocka_unit_test(test_cuda__swiglu_forward_and_backward),
		cmocka_unit_test(test_cuda__softmax_cross_entropy_forward_and_backward),
		cmocka_unit_test(test_cuda__adamw_with_and_without_the_bf16_shadow),
		cmocka_unit_test(test_cuda__naive_attention_forward_and_backward),
		cmocka_unit_test(test_cuda__one_element_rows_and_single_rows),
		cmocka_unit_test(test_cuda__unknown_attention_impl_is_unsupported_with_a_reason),
		cmocka_unit_test(test_cuda__allocator_counts_exact_bytes_and_the_limit),
		cmocka_unit_test(test_cuda__gpu_out_of_memory_is_enomem_and_the_device_goes_on),
		cmocka_unit_test(test_cuda__a_gpu_without_code_in_this_build_is_unsupported),
		cmocka_unit_test(test_cuda__events_time_the_work_between_marks),
		cmocka_unit_test(test_cuda__a_start_event_is_queued_behind_the_timing_delay),
		cmocka_unit_test(test_cuda__the_timing_delay_is_outside_the_window),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
