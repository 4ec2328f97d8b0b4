/* tests/test_cuda_attention.c (label gpu): attention on CUDA — naive, flash and cuDNN SDPA,
 * forward and backward, float32/float16/bfloat16, causal and not — against the float64 CPU
 * reference on random inputs with odd sizes (the workloads' own validation, which compares every
 * output element at these sizes), SDPA against flash on the same inputs, the float32 tensors of
 * the model computed in bfloat16, what cannot run reported as unsupported with a reason, naive's
 * O(S²) memory in the forward's peak, and the workloads through the runner's measurement loop
 * with device timing (the timing delay outside the window) and what ran (impl_info: cuDNN's
 * graph and engine; SDPA checked with the unified graphs where the linked cuDNN plans them and
 * with the composite ones alone). Exits 77 (skipped) where no CUDA GPU is usable.
 * Built a second time as test_cuda_attention_emu (BENCHDB_CUDA_EMU, label emu) against the
 * emulated CUDA device (tests/flashemu/README): naive and flash on every shape below, without
 * SDPA (no cuDNN there) and with the long and timed cases shortened (EMU_T below). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attention_check.h"
#include "bf16.h"
#include "cuda_info.h"
#include "measure.h"
#include "ops.h"
#include "rng.h"
#include "workload.h"

/* The emulated device (BENCHDB_CUDA_EMU) runs naive and flash only, and shorter sequences where
 * a test only needs a long one (memory, timing): EMU_T(t) is t on a GPU, t / 4 emulated. */
#ifdef BENCHDB_CUDA_EMU
#define EMU_IMPLS 2
#define EMU_T(t) ((t) / 4)
#else
#define EMU_IMPLS 3
#define EMU_T(t) (t)
#endif

static struct case_params params(const char *impl, enum bd_dtype dtype, int causal, int64_t b,
				 int64_t h, int64_t t, int64_t dh, enum bd_pass pass)
{
	struct case_params p = {.suite = SUITE_ATTENTION, .device = DEVICE_CUDA, .dtype = dtype,
				.pass = pass, .batch_size = b, .heads = h, .seq_len = t,
				.head_dim = dh, .causal = causal, .warmup = 1, .iters = 2, .seed = 11,
				.sync = 1};
	snprintf(p.impl, sizeof(p.impl), "%s", impl);
	return p;
}

/* check, setup and validate of one case; returns the status, reason in st */
static int validate(const struct case_params *p, struct wl_status *st, int64_t *peak_fwd)
{
	const struct workload *w = workload_find("attention", p->impl, DEVICE_CUDA);
	assert_non_null(w);
	struct mem_arena mem;
	mem_init(&mem, 0);
	void *state = NULL;
	int code = w->check(p, st);
	if (code == STATUS_OK)
		code = w->setup(p, &mem, &state, st);
	if (peak_fwd)
		*peak_fwd = mem.peak;
	if (code == STATUS_OK)
		code = w->validate(state, st);
	w->teardown(state);
	assert_int_equal(mem.live, 0);   /* every byte given back, whatever happened */
	return code;
}

static void expect_ok(const char *impl, enum bd_dtype dtype, int causal, int64_t b, int64_t h,
		      int64_t t, int64_t dh)
{
	struct case_params p = params(impl, dtype, causal, b, h, t, dh, PASS_FORWARD_BACKWARD);
	struct wl_status st = {0};
	int code = validate(&p, &st, NULL);
	if (code != STATUS_OK)
		fail_msg("%s %s causal=%d B%lld H%lld S%lld D%lld: status %d: %s", impl,
			 dtype_name(dtype), causal, (long long)b, (long long)h, (long long)t,
			 (long long)dh, code, st.reason);
	assert_true(st.max_diff >= 0 && st.max_diff <= st.tolerance);
}

/* Every shape is checked element by element (the reference is cheap at these sizes): t not a
 * multiple of any tile (37, 129, 200), head_dim 16 .. 128 including one that is not a multiple
 * of 16 (40), a tail shorter than a warp's rows (t = 5), a single query and key (t = 1). */
static const int64_t shapes[][4] = {
	{2, 3, 37, 16}, {1, 2, 129, 64}, {2, 1, 200, 128}, {1, 3, 5, 40}, {1, 1, 70, 32},
	{1, 2, 1, 64},
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static void all_shapes(const char *impl, enum bd_dtype dtype)
{
	for (size_t i = 0; i < NSHAPES; i++)
		for (int causal = 0; causal < 2; causal++)
			expect_ok(impl, dtype, causal, shapes[i][0], shapes[i][1], shapes[i][2],
				  shapes[i][3]);
}

static void test_cuda_attention__naive_matches_reference(void **state)
{
	(void)state;
	all_shapes("naive", DTYPE_FLOAT32);
	all_shapes("naive", DTYPE_FLOAT16);
	all_shapes("naive", DTYPE_BFLOAT16);
}

static void test_cuda_attention__flash_matches_reference(void **state)
{
	(void)state;
	all_shapes("flash", DTYPE_FLOAT32);
	all_shapes("flash", DTYPE_FLOAT16);
	all_shapes("flash", DTYPE_BFLOAT16);
}

static void test_cuda_attention__sdpa_matches_reference(void **state)
{
	(void)state;
#ifdef BENCHDB_CUDA_EMU
	skip();   /* cuDNN is not emulated */
#endif
	/* cuDNN takes head_dims that are multiples of 8 up to 128: every shape above is one. The
	 * graphs the linked cuDNN takes first (the unified node where it plans), then the
	 * composite ones alone (BENCHDB_SDPA_GRAPH). */
	const char *graphs[] = {"auto", "composite"};
	for (int g = 0; g < 2; g++) {
		setenv("BENCHDB_SDPA_GRAPH", graphs[g], 1);
		all_shapes("sdpa", DTYPE_FLOAT16);
		all_shapes("sdpa", DTYPE_BFLOAT16);
	}
	unsetenv("BENCHDB_SDPA_GRAPH");
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The graph part of impl_info for one direction ("fwd" or "bwd"): from its key to the end. */
static const char *graph_of(const char *info, const char *dir)
{
	char key[16];
	snprintf(key, sizeof(key), "\"%s\": {", dir);
	const char *at = strstr(info, key);
	if (!at)
		fail_msg("no %s graph in impl_info %s", dir, info);
	return at;
}

/* What cuDNN ran is stored with the case (cases.impl_info): each direction's graph and engine;
 * a composite non-causal forward on a cuDNN with the unified node (>= 9.13.1) says why the
 * unified one did not plan; BENCHDB_SDPA_GRAPH=composite gives the composite graphs. */
static void test_cuda_attention__sdpa_reports_its_graph_and_engine(void **state)
{
	(void)state;
#ifdef BENCHDB_CUDA_EMU
	skip();   /* cuDNN is not emulated */
#endif
	const struct workload *w = workload_find("attention", "sdpa", DEVICE_CUDA);
	for (int run = 0; run < 3; run++) {
		int causal = run == 1, composite = run == 2;
		struct case_params p = params("sdpa", DTYPE_BFLOAT16, causal, 1, 2, 256, 64,
					      PASS_FORWARD_BACKWARD);
		struct case_result res;
		if (composite)
			setenv("BENCHDB_SDPA_GRAPH", "composite", 1);
		measure_case(w, &p, &res, NULL, NULL);
		unsetenv("BENCHDB_SDPA_GRAPH");
		if (res.status != STATUS_OK)
			fail_msg("status %s: %s", status_name(res.status), res.reason);
		free(res.samples);
		printf("sdpa causal=%d%s: %s\n", causal, composite ? " (composite)" : "",
		       res.impl_info);
		const char *info = res.impl_info, *v = strstr(info, "\"cudnn\": \"");
		int major = 0, minor = 0, patch = 0;
		assert_non_null(v);
		assert_int_equal(sscanf(v + 10, "%d.%d.%d", &major, &minor, &patch), 3);
		const char *fwd = graph_of(info, "fwd"), *bwd = graph_of(info, "bwd");
		assert_non_null(strstr(fwd, "\"engine\": "));
		assert_non_null(strstr(bwd, "\"engine\": "));
		if (composite) {
			assert_true(starts(fwd, "\"fwd\": {\"graph\": \"composite"));
			assert_true(starts(bwd, "\"bwd\": {\"graph\": \"composite"));
		} else if (!causal && major * 10000 + minor * 100 + patch >= 91301 &&
			   !starts(fwd, "\"fwd\": {\"graph\": \"unified")) {
			/* the unified forward did not plan here: the case says why */
			const char *f = strstr(fwd, "\"fallback\": ");
			assert_true(f && f < bwd);
		}
	}
}

/* A case big enough for the sampled check at the case's shape plus the reduced backward. */
static void test_cuda_attention__sampled_validation_of_a_long_sequence(void **state)
{
	(void)state;
#ifdef BENCHDB_CUDA_EMU
	/* emulated: one head of 1025 keys, past the workload's element-by-element threshold */
	expect_ok("flash", DTYPE_BFLOAT16, 1, 1, 1, 1025, 64);
	expect_ok("naive", DTYPE_FLOAT32, 0, 1, 1, 1025, 32);
	return;
#endif
	expect_ok("flash", DTYPE_BFLOAT16, 1, 2, 4, 2049, 64);
	expect_ok("sdpa", DTYPE_BFLOAT16, 1, 2, 4, 2049, 64);
	expect_ok("naive", DTYPE_FLOAT32, 0, 1, 2, 2049, 128);
	expect_ok("flash", DTYPE_FLOAT32, 0, 1, 2, 2049, 128);
}

/* ---- the device ops directly ---------------------------------------------------------------- */

struct gpu {
	struct mem_arena mem;
	struct dev dev;
};

static void gpu_open(struct gpu *g)
{
	struct bd_error err = {0};
	mem_init(&g->mem, 0);
	if (dev_open(&g->dev, DEVICE_CUDA, &g->mem, &err))
		fail_msg("dev_open: %s", err.msg);
}

static void gpu_close(struct gpu *g)
{
	dev_close(&g->dev);
	assert_int_equal(g->mem.live, 0);
}

static void ok(struct dev *dev, int rc)
{
	if (rc)
		fail_msg("device op failed (%d): %s", rc, dev->err.msg);
}

static void *put(struct dev *dev, const void *host, size_t bytes)
{
	void *p = dev->ops->alloc(dev, bytes);
	if (!p)
		fail_msg("alloc %zu: %s", bytes, dev->err.msg);
	if (host)
		ok(dev, dev->ops->upload(dev, p, host, bytes));
	return p;
}

static float *randoms(uint64_t seed, int64_t n, enum bd_dtype dtype, uint16_t *enc)
{
	float *x = malloc((size_t)n * sizeof(float));
	assert_non_null(x);
	struct rng r;
	rng_init(&r, seed);
	rng_fill(&r, x, (size_t)n, -1.0f, 1.0f);
	for (int64_t i = 0; enc && i < n; i++) {
		enc[i] = dtype == DTYPE_BFLOAT16 ? bf16_from_float(x[i]) : f16_from_float(x[i]);
		x[i] = dtype == DTYPE_BFLOAT16 ? bf16_to_float(enc[i]) : f16_to_float(enc[i]);
	}
	return x;
}

/* forward and backward of impl on (b, h, t, dh) 16-bit tensors; outputs o, dq, dk, dv as floats */
static void run_16(const char *impl, enum bd_dtype dtype, int64_t b, int64_t h, int64_t t,
		   int64_t dh, int causal, float *out[4], float *lse)
{
	struct gpu g;
	gpu_open(&g);
	struct dev *dev = &g.dev;
	int64_t n = b * h * t * dh;
	size_t bytes = (size_t)n * 2;
	uint16_t *enc = malloc(bytes);
	assert_non_null(enc);
	void *in[4];
	for (int i = 0; i < 4; i++) {
		free(randoms(100 + (uint64_t)i, n, dtype, enc));
		in[i] = put(dev, enc, bytes);   /* q, k, v, dO */
	}
	void *o = put(dev, NULL, bytes), *dq = put(dev, NULL, bytes), *dk = put(dev, NULL, bytes);
	void *dv = put(dev, NULL, bytes);
	float *dlse = put(dev, NULL, (size_t)(b * h * t) * 4);
	struct dev_attention_shape s = {.b = b, .h = h, .t = t, .dh = dh, .causal = causal,
					.backward = 1, .io = dtype, .math = dtype};
	void *att = NULL;
	ok(dev, dev->ops->attention_create(dev, &att, impl, &s));
	ok(dev, dev->ops->attention_fwd(dev, att, in[0], in[1], in[2], o, dlse));
	ok(dev, dev->ops->attention_bwd(dev, att, in[0], in[1], in[2], o, dlse, in[3], dq, dk, dv));
	void *res[4] = {o, dq, dk, dv};
	for (int i = 0; i < 4; i++) {
		ok(dev, dev->ops->download(dev, enc, res[i], bytes));
		out[i] = malloc((size_t)n * sizeof(float));
		assert_non_null(out[i]);
		for (int64_t j = 0; j < n; j++)
			out[i][j] = dtype == DTYPE_BFLOAT16 ? bf16_to_float(enc[j]) : f16_to_float(enc[j]);
	}
	ok(dev, dev->ops->download(dev, lse, dlse, (size_t)(b * h * t) * 4));
	dev->ops->attention_free(dev, att);
	void *all[] = {in[0], in[1], in[2], in[3], o, dq, dk, dv, dlse};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		dev->ops->free(dev, all[i]);
	free(enc);
	gpu_close(&g);
}

/* max |x − y| / max |y| over n values */
static double rel_diff(const float *x, const float *y, int64_t n)
{
	double e = 0, s = 0;
	for (int64_t i = 0; i < n; i++) {
		e = fmax(e, fabs((double)x[i] - y[i]));
		s = fmax(s, fabs((double)y[i]));
	}
	return e / (s > 0 ? s : 1);
}

static void test_cuda_attention__sdpa_agrees_with_flash(void **state)
{
	(void)state;
#ifdef BENCHDB_CUDA_EMU
	skip();   /* cuDNN is not emulated */
#endif
	const int64_t b = 2, h = 4, t = 300, dh = 64, n = b * h * t * dh;
	enum bd_dtype dtypes[] = {DTYPE_BFLOAT16, DTYPE_FLOAT16};
	const char *names[] = {"O", "dQ", "dK", "dV"};
	for (int d = 0; d < 2; d++)
		for (int causal = 0; causal < 2; causal++) {
			float *f[4], *c[4];
			float *lf = malloc((size_t)(b * h * t) * 4), *lc = malloc((size_t)(b * h * t) * 4);
			run_16("flash", dtypes[d], b, h, t, dh, causal, f, lf);
			run_16("sdpa", dtypes[d], b, h, t, dh, causal, c, lc);
			/* two roundings of the 16-bit outputs apart, at most */
			double tol = 2 * attention_tol_for(dtypes[d]).abs;
			for (int i = 0; i < 4; i++) {
				double e = rel_diff(f[i], c[i], n);
				if (!(e <= tol))
					fail_msg("%s %s causal=%d: flash and sdpa differ by %.3g of max "
						 "(tolerance %.3g)", names[i], dtype_name(dtypes[d]),
						 causal, e, tol);
				free(f[i]);
				free(c[i]);
			}
			assert_true(rel_diff(lf, lc, b * h * t) <= 1e-4);
			free(lf);
			free(lc);
		}
}

/* The model's use: float32 tensors, bfloat16 compute; the result is the float64 reference's on
 * the float32 inputs within bfloat16's tolerance (the inputs' rounding included), after a second
 * backward as after the first (the model runs one per training step). */
static void test_cuda_attention__float32_tensors_computed_in_bfloat16(void **state)
{
	(void)state;
	const int64_t b = 1, h = 2, t = 77, dh = 32, n = b * h * t * dh;
	const char *impls[] = {"naive", "flash", "sdpa"};
	struct attention_dims d = {b, h, t, dh, 1};
	struct attention_tol tol = attention_tol_for(DTYPE_BFLOAT16);
	for (int i = 0; i < EMU_IMPLS; i++) {
		struct gpu g;
		gpu_open(&g);
		struct dev *dev = &g.dev;
		float *x[4], *y[4];
		void *dx[4], *dy[4];
		for (int j = 0; j < 4; j++) {
			x[j] = randoms(200 + (uint64_t)j, n, DTYPE_FLOAT32, NULL);   /* q k v dO */
			dx[j] = put(dev, x[j], (size_t)n * 4);
			dy[j] = put(dev, NULL, (size_t)n * 4);                        /* o dq dk dv */
			y[j] = malloc((size_t)n * 4);
		}
		float *lse = malloc((size_t)(b * h * t) * 4);
		float *dlse = put(dev, NULL, (size_t)(b * h * t) * 4);
		struct dev_attention_shape s = {.b = b, .h = h, .t = t, .dh = dh, .causal = 1,
						.backward = 1, .io = DTYPE_FLOAT32,
						.math = DTYPE_BFLOAT16};
		void *att = NULL;
		ok(dev, dev->ops->attention_create(dev, &att, impls[i], &s));
		ok(dev, dev->ops->attention_fwd(dev, att, dx[0], dx[1], dx[2], dy[0], dlse));
		/* twice: the gradients are overwritten, whatever a previous backward left behind */
		for (int rep = 0; rep < 2; rep++)
			ok(dev, dev->ops->attention_bwd(dev, att, dx[0], dx[1], dx[2], dy[0], dlse,
							dx[3], dy[1], dy[2], dy[3]));
		for (int j = 0; j < 4; j++)
			ok(dev, dev->ops->download(dev, y[j], dy[j], (size_t)n * 4));
		ok(dev, dev->ops->download(dev, lse, dlse, (size_t)(b * h * t) * 4));
		struct attention_check c;
		attention_check_init(&c);
		for (int64_t hd = 0; hd < b * h; hd++) {
			int64_t off = hd * t * dh;
			struct attention_head hx = {x[0] + off, x[1] + off, x[2] + off, y[0] + off,
						    lse + hd * t, x[3] + off, y[1] + off, y[2] + off,
						    y[3] + off};
			assert_int_equal(attention_check_head(&c, &d, &tol, hd, &hx, NULL), 0);
		}
		if (c.ratio > 1)
			fail_msg("%s: %s off by %.3g (bound %.3g) at %s", impls[i], c.stage, c.diff,
				 c.bound, c.where);
		dev->ops->attention_free(dev, att);
		for (int j = 0; j < 4; j++) {
			dev->ops->free(dev, dx[j]);
			dev->ops->free(dev, dy[j]);
			free(x[j]);
			free(y[j]);
		}
		dev->ops->free(dev, dlse);
		free(lse);
		gpu_close(&g);
	}
}

/* ---- what cannot run ------------------------------------------------------------------------- */

static void expect_unsupported(const char *impl, enum bd_dtype dtype, int64_t dh,
			       const char *needle)
{
	struct case_params p = params(impl, dtype, 0, 1, 1, 64, dh, PASS_FORWARD);
	struct wl_status st = {0};
	int code = validate(&p, &st, NULL);
	if (code != STATUS_UNSUPPORTED || !strstr(st.reason, needle))
		fail_msg("%s %s head_dim %lld: status %d, reason '%s' (wanted unsupported with '%s')",
			 impl, dtype_name(dtype), (long long)dh, code, st.reason, needle);
}

static void test_cuda_attention__unsupported_combinations_are_reported(void **state)
{
	(void)state;
	expect_unsupported("flash", DTYPE_BFLOAT16, 8, "head_dim");
	expect_unsupported("flash", DTYPE_FLOAT32, 256, "head_dim");
	/* float32 SDPA is cuDNN's call: where it builds no plan its own reason is stored (emulated:
	 * no cuDNN, and the reason says so); where it does (cuDNN 9.19 on an H100 runs the float32
	 * forward), the result is held to the float64 reference like any other case. */
	struct case_params fp = params("sdpa", DTYPE_FLOAT32, 0, 1, 1, 64, 64, PASS_FORWARD);
	struct wl_status fst = {0};
	int fcode = validate(&fp, &fst, NULL);
	if (fcode == STATUS_OK)
		assert_true(fst.max_diff >= 0 && fst.max_diff <= fst.tolerance);
	else if (fcode != STATUS_UNSUPPORTED || !strstr(fst.reason, "sdpa"))
		fail_msg("sdpa float32: status %d, reason '%s' (wanted ok and validated, or "
			 "unsupported with 'sdpa')", fcode, fst.reason);
	struct case_params p = params("flash", DTYPE_BFLOAT16, 0, 1, 1, 64, 64, PASS_FORWARD);
	p.tf32 = 1;
	struct wl_status st = {0};
	assert_int_equal(validate(&p, &st, NULL), STATUS_UNSUPPORTED);
	assert_non_null(strstr(st.reason, "tf32"));
	/* and the device is still usable afterwards */
	expect_ok("flash", DTYPE_BFLOAT16, 1, 1, 1, 64, 64);
}

/* flash on a GPU whose shared memory per block is smaller than a kernel's (99 KiB: compute
 * capability 8.6, 8.9, 12.x; emulated here with BENCHDB_EMU_SMEM_OPTIN): that shape is
 * `unsupported` with both sizes, not an "invalid argument" error at the first launch; the shapes
 * that fit still run. The kernels' needs (flash.cu's configurations): 16-bit forward 104448
 * bytes at head_dim 65..128, 36864 up to 64; 16-bit backward 157696 (65..128), 92160 (33..64);
 * float32 at most 74752. On a GPU the device's own limit decides. */
static void test_cuda_attention__flash_over_the_gpus_shared_memory_is_unsupported(void **state)
{
	(void)state;
#ifdef BENCHDB_CUDA_EMU
	setenv("BENCHDB_EMU_SMEM_OPTIN", "101376", 1);
#endif
	int optin = cuda_smem_per_block_optin();
	assert_true(optin > 0);
	const struct {
		enum bd_dtype dtype;
		int64_t dh;
		enum bd_pass pass;
		int64_t need;
	} cases[] = {
		{DTYPE_BFLOAT16, 128, PASS_FORWARD, 104448},
		{DTYPE_FLOAT16, 80, PASS_FORWARD_BACKWARD, 157696},
		{DTYPE_BFLOAT16, 64, PASS_FORWARD_BACKWARD, 92160},
		{DTYPE_FLOAT32, 128, PASS_FORWARD_BACKWARD, 74752},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct case_params p = params("flash", cases[i].dtype, 1, 1, 2, 67, cases[i].dh,
					      cases[i].pass);
		struct wl_status st = {0};
		int code = validate(&p, &st, NULL);
		if (cases[i].need > optin) {
			char want[96];
			snprintf(want, sizeof(want), "need %lld bytes of shared memory per block; this "
				 "GPU allows %d", (long long)cases[i].need, optin);
			if (code != STATUS_UNSUPPORTED || !strstr(st.reason, want))
				fail_msg("flash %s head_dim %lld: status %d, reason '%s' (wanted "
					 "unsupported with '%s')", dtype_name(cases[i].dtype),
					 (long long)cases[i].dh, code, st.reason, want);
		} else if (code != STATUS_OK || !(st.max_diff <= st.tolerance)) {
			fail_msg("flash %s head_dim %lld: status %d, reason '%s'",
				 dtype_name(cases[i].dtype), (long long)cases[i].dh, code, st.reason);
		}
	}
#ifdef BENCHDB_CUDA_EMU
	unsetenv("BENCHDB_EMU_SMEM_OPTIN");
#endif
}

/* naive holds P (b·h, t, t) from its forward: the peak after setup shows it; flash does not. */
static void test_cuda_attention__naive_memory_grows_with_the_square(void **state)
{
	(void)state;
	const int64_t b = 2, h = 2, t = EMU_T(1024), dh = 64;
	int64_t peak[2];
	const char *impls[] = {"naive", "flash"};
	for (int i = 0; i < 2; i++) {
		struct case_params p = params(impls[i], DTYPE_FLOAT32, 0, b, h, t, dh, PASS_FORWARD);
		struct wl_status st = {0};
		assert_int_equal(validate(&p, &st, &peak[i]), STATUS_OK);
	}
	/* both hold Q, K, V, O, LSE and the backend's cuBLASLt workspace; naive also P */
	int64_t p_bytes = b * h * t * t * 4;
	assert_true(peak[0] - peak[1] >= p_bytes);
	assert_true(peak[0] - peak[1] < p_bytes + p_bytes / 8);
}

/* Through the runner's measurement loop: validation, then event-timed fwd and bwd samples. */
static void test_cuda_attention__workloads_are_device_timed(void **state)
{
	(void)state;
	const char *impls[] = {"naive", "flash", "sdpa"};
	for (int i = 0; i < EMU_IMPLS; i++) {
		const struct workload *w = workload_find("attention", impls[i], DEVICE_CUDA);
		struct case_params p = params(impls[i], DTYPE_BFLOAT16, 1, 2, 4, EMU_T(512), 64,
					      PASS_FORWARD_BACKWARD);
		struct case_result res;
		measure_case(w, &p, &res, NULL, NULL);
		if (res.status != STATUS_OK)
			fail_msg("%s: status %s: %s", impls[i], status_name(res.status),
				 res.reason);
		assert_int_equal(res.nsamples, 3 * 2);   /* 3 iterations × fwd, bwd */
		for (size_t j = 0; j < res.nsamples; j++)
			assert_true(res.samples[j].ns > 0);
		/* what ran, as a JSON object (cases.impl_info) */
		if (res.impl_info[0] != '{' || !strstr(res.impl_info, "\"compute\": \"bfloat16\"") ||
		    res.impl_info[strlen(res.impl_info) - 1] != '}')
			fail_msg("%s: impl_info '%s'", impls[i], res.impl_info);
		assert_true(res.peak_fwd_bytes > 0 && res.peak_bytes >= res.peak_fwd_bytes);
		free(res.samples);
	}
}

/* Through the measurement loop with a fixed 300 ms timing delay before every start mark
 * (BENCHDB_CUDA_TIMING_DELAY_US): the loop still stores device time between the marks, and the
 * delay is outside it (each sample of this small case below 300 ms — a sample that held the
 * delay would be at least that, however slow the emulated device runs on a loaded machine —
 * while the case as a whole took at least one delay per sample). */
static void test_cuda_attention__device_time_excludes_the_timing_delay(void **state)
{
	(void)state;
	const int64_t delay_ns = 300000000;
	const struct workload *w = workload_find("attention", "flash", DEVICE_CUDA);
	struct case_params p = params("flash", DTYPE_BFLOAT16, 1, 1, 1, 32, 64,
				      PASS_FORWARD_BACKWARD);
	struct case_result res;
	setenv("BENCHDB_CUDA_TIMING_DELAY_US", "300000", 1);
	measure_case(w, &p, &res, NULL, NULL);
	unsetenv("BENCHDB_CUDA_TIMING_DELAY_US");
	if (res.status != STATUS_OK)
		fail_msg("status %s: %s", status_name(res.status), res.reason);
	assert_int_equal(res.nsamples, 3 * 2);
	for (size_t j = 0; j < res.nsamples; j++)
		if (res.samples[j].ns <= 0 || res.samples[j].ns >= delay_ns)
			fail_msg("sample %zu (iteration %d, phase %d): %lld ns, with a %lld ns delay "
				 "before each start mark", j, res.samples[j].iter, res.samples[j].phase,
				 (long long)res.samples[j].ns, (long long)delay_ns);
	assert_true(res.elapsed_ns >= (int64_t)res.nsamples * delay_ns);
	free(res.samples);
}

int main(void)
{
	char why[256];
	if (!cuda_available(why, sizeof(why))) {
		printf("skipped: %s\n", why);
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda_attention__naive_matches_reference),
		cmocka_unit_test(test_cuda_attention__flash_matches_reference),
		cmocka_unit_test(test_cuda_attention__sdpa_matches_reference),
		cmocka_unit_test(test_cuda_attention__sdpa_reports_its_graph_and_engine),
		cmocka_unit_test(test_cuda_attention__sampled_validation_of_a_long_sequence),
		cmocka_unit_test(test_cuda_attention__sdpa_agrees_with_flash),
		cmocka_unit_test(test_cuda_attention__float32_tensors_computed_in_bfloat16),
		cmocka_unit_test(test_cuda_attention__unsupported_combinations_are_reported),
		cmocka_unit_test(test_cuda_attention__flash_over_the_gpus_shared_memory_is_unsupported),
		cmocka_unit_test(test_cuda_attention__naive_memory_grows_with_the_square),
		cmocka_unit_test(test_cuda_attention__workloads_are_device_timed),
		cmocka_unit_test(test_cuda_attention__device_time_excludes_the_timing_delay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
