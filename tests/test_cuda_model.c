/* tests/test_cuda_model.c (label gpu): the transformer (kernels/model) on the CUDA backend
 * against the CPU backend and the float64 reference on a tiny configuration: loss and every
 * gradient tensor (float32, TF32 and bfloat16), the forward-only model, the AdamW step, an out-of-
 * memory case that frees everything, flash and cuDNN SDPA as the model's attention, and the
 * e2e workload through the runner's measurement loop
 * with device timing and with sync: false. Exits 77 (skipped) where no CUDA GPU is usable.
 * Built a second time as test_cuda_model_emu (BENCHDB_CUDA_EMU, label emu) against the emulated
 * CUDA device (tests/flashemu/README): everything above but SDPA. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_info.h"
#include "measure.h"
#include "model.h"
#include "workload.h"

/* Odd sizes: ctx 13 is not a multiple of any tile, d_ff 72 not of a vector, vocab 101 prime.
 * The attention tests swap in head_dim 16 (the least flash and cuDNN take) and their impl. */
static const struct model_config tiny8 = {
	.name = "tiny", .d_model = 32, .d_ff = 72, .num_layers = 2, .num_heads = 4, .vocab_size = 101};
static const struct model_config tiny16 = {
	.name = "tiny16", .d_model = 64, .d_ff = 72, .num_layers = 2, .num_heads = 4,
	.vocab_size = 101};
static struct model_config tiny;
static char attention[16] = "naive";

static int setup_tiny(void **state)
{
	(void)state;
	tiny = tiny8;
	snprintf(attention, sizeof(attention), "naive");
	return 0;
}
#define B 2
#define T 13

/* Against the float64 reference, per tensor, max |g − ref| ≤ TOL · max |ref|: the CPU backend
 * measures 5e-7 (float32) and 8e-3 (bfloat16) here (test_model.c); TF32 rounds each GEMM input
 * to 10 mantissa bits, 8× finer than bfloat16. */
#define TOL_F32 1e-4
#define TOL_TF32 1e-2
#define TOL_BF16 4e-2

struct run {
	struct mem_arena mem;
	struct dev dev;
	struct model *m;
};

static int run_open(struct run *r, enum bd_device device, enum bd_dtype dtype, int tf32,
		    enum model_mode mode, const float *params, int64_t limit)
{
	struct model_shape s = {.cfg = tiny, .batch = B, .ctx = T, .dtype = dtype, .mode = mode};
	snprintf(s.attention, sizeof(s.attention), "%s", attention);
	mem_init(&r->mem, limit);
	struct bd_error err = {0};
	if (dev_open(&r->dev, device, &r->mem, &err))
		fail_msg("dev_open: %s", err.msg);
	r->dev.tf32 = tf32;
	r->m = NULL;
	return model_create(&r->m, &r->dev, &s, 7, params);
}

static void run_close(struct run *r)
{
	model_free(r->m);
	dev_close(&r->dev);
	assert_int_equal(r->mem.live, 0);   /* every byte given back */
}

static void params_of(float *p)
{
	struct model_tensor t[64];
	int n = model_tensors(&tiny, t, 64);
	model_init_params(&tiny, 7, p);
	for (int i = 0; i < n; i++)
		if (strstr(t[i].name, "norm"))
			for (int64_t j = 0; j < t[i].count; j++)
				p[t[i].offset + j] = 1.0f + 0.5f * sinf((float)(3 * j + i));
}

/* the largest per-tensor error relative to the tensor's scale (the validation's comparison: a NaN
 * is an infinite error); its tensor's name into worst */
static double worst_error(const float *g, const double *ref, char worst[48])
{
	return model_grad_error(&tiny, g, ref, worst, 48);
}

/* loss and gradients of one backend on the tiny model into *loss and g; 0, or the error code
 * with the backend's message in why */
static int loss_and_grads(enum bd_device device, enum bd_dtype dtype, int tf32, const float *p,
			  float *g, double *loss, char *why, size_t why_size)
{
	struct run r;
	*loss = 0;
	int rc = run_open(&r, device, dtype, tf32, MODEL_GRAD, p, 0);
	if (!rc && !(rc = model_forward(r.m)) && !(rc = model_backward(r.m)) &&
	    !(rc = model_loss(r.m, loss)))
		rc = model_grads(r.m, g);
	if (rc)
		snprintf(why, why_size, "%s: %s", device_name(device), r.dev.err.msg);
	run_close(&r);
	return rc;
}

static void check_model(enum bd_dtype dtype, int tf32, double tol)
{
	int64_t P = model_param_count(&tiny), n = B * T;
	float *p = malloc((size_t)P * 4), *g_cuda = malloc((size_t)P * 4), *g_cpu = malloc((size_t)P * 4);
	double *pd = malloc((size_t)P * 8), *gref = malloc((size_t)P * 8);
	int32_t tok[2 * B * T];
	params_of(p);
	for (int64_t i = 0; i < P; i++)
		pd[i] = p[i];
	model_init_tokens(&tiny, n, 7, tok, tok + n);
	double loss_ref;
	model_ref_loss_grad(&tiny, B, T, tok, tok + n, pd, &loss_ref, gref);
	double loss_cuda, loss_cpu;
	char why[1200];
	if (loss_and_grads(DEVICE_CUDA, dtype, tf32, p, g_cuda, &loss_cuda, why, sizeof(why)))
		fail_msg("%s", why);
	/* the cpu computes attention in float32 whatever the impl: naive stands in for sdpa */
	char impl[16];
	snprintf(impl, sizeof(impl), "%s", attention);
	if (!strcmp(attention, "sdpa"))
		snprintf(attention, sizeof(attention), "naive");
	/* the cpu is shown beside the reference, not checked (test_model.c holds it): a cpu that
	 * cannot run the case (no bfloat16 matmul) is named and the cuda check goes on */
	int cpu_rc = loss_and_grads(DEVICE_CPU, dtype, 0, p, g_cpu, &loss_cpu, why, sizeof(why));
	snprintf(attention, sizeof(attention), "%s", impl);
	char worst[48] = "", worst_cpu[48] = "";
	double err = worst_error(g_cuda, gref, worst);
	double err_cpu = cpu_rc ? NAN : worst_error(g_cpu, gref, worst_cpu);
	print_message("%s %s%s: loss cuda %.8f cpu %.8f ref %.8f; worst gradient error cuda %.3g (%s), "
		      "cpu %.3g (%s)\n", attention, dtype_name(dtype), tf32 ? " tf32" : "", loss_cuda, loss_cpu,
		      loss_ref, err, worst, err_cpu, worst_cpu);
	if (cpu_rc)
		print_message("(no cpu figures: %s)\n", why);
	if (!(fabs(loss_cuda - loss_ref) <= tol * loss_ref))
		fail_msg("cuda loss %.9g vs reference %.9g", loss_cuda, loss_ref);
	if (!(err <= tol))
		fail_msg("cuda gradient of %s off by %g of its scale (tolerance %g)", worst, err, tol);
	free(p), free(g_cuda), free(g_cpu), free(pd), free(gref);
}

static void test_cuda_model__float32_matches_reference(void **state)
{
	(void)state;
	check_model(DTYPE_FLOAT32, 0, TOL_F32);
}

static void test_cuda_model__tf32_close_to_reference(void **state)
{
	(void)state;
	check_model(DTYPE_FLOAT32, 1, TOL_TF32);
}

static void test_cuda_model__bfloat16_close_to_reference(void **state)
{
	(void)state;
	check_model(DTYPE_BFLOAT16, 0, TOL_BF16);
}

/* The attention impl selected per case: flash and cuDNN SDPA inside the model (computing in
 * bfloat16 in bf16 cases, float32 otherwise) give the reference's loss and gradients. */
static void test_cuda_model__flash_and_sdpa_attention_inside_the_model(void **state)
{
	(void)state;
	tiny = tiny16;
	snprintf(attention, sizeof(attention), "flash");
	check_model(DTYPE_FLOAT32, 0, TOL_F32);
	check_model(DTYPE_BFLOAT16, 0, TOL_BF16);
#ifndef BENCHDB_CUDA_EMU   /* the emulated device has no cuDNN */
	snprintf(attention, sizeof(attention), "sdpa");
	check_model(DTYPE_BFLOAT16, 0, TOL_BF16);
#endif
	snprintf(attention, sizeof(attention), "naive");
	check_model(DTYPE_BFLOAT16, 0, TOL_BF16);
}

static void test_cuda_model__forward_only_and_adamw_step_match_the_cpu(void **state)
{
	(void)state;
	int64_t P = model_param_count(&tiny);
	float *p = malloc((size_t)P * 4), *after[2];
	double loss_infer[2], loss_after[2];
	params_of(p);
	enum bd_device devs[2] = {DEVICE_CPU, DEVICE_CUDA};
	for (int i = 0; i < 2; i++) {
		struct run r;
		if (run_open(&r, devs[i], DTYPE_FLOAT32, 0, MODEL_INFER, p, 0))
			fail_msg("%s", r.dev.err.msg);
		assert_int_equal(model_forward(r.m), 0);
		assert_int_equal(model_loss(r.m, &loss_infer[i]), 0);
		run_close(&r);
		if (run_open(&r, devs[i], DTYPE_FLOAT32, 0, MODEL_TRAIN, p, 0))
			fail_msg("%s", r.dev.err.msg);
		for (int step = 0; step < 3; step++)
			if (model_forward(r.m) || model_backward(r.m) || model_step(r.m))
				fail_msg("%s", r.dev.err.msg);
		assert_int_equal(model_forward(r.m), 0);
		assert_int_equal(model_loss(r.m, &loss_after[i]), 0);
		after[i] = malloc((size_t)P * 4);
		assert_int_equal(model_params(r.m, after[i]), 0);
		run_close(&r);
	}
	assert_true(fabs(loss_infer[1] - loss_infer[0]) <= 1e-5 * loss_infer[0]);
	assert_true(loss_after[1] < loss_infer[1]);   /* three steps on one batch lower the loss */
	assert_true(fabs(loss_after[1] - loss_after[0]) <= 1e-4 * loss_after[0]);
	/* Adam's step is about lr·sign(g): where a gradient is within float32 noise of zero the two
	 * backends may step apart by up to 2·lr per step. Elsewhere they agree to float32 noise. */
	double worst = 0;
	int64_t apart = 0;
	for (int64_t i = 0; i < P; i++) {
		double e = fabs(after[1][i] - after[0][i]);
		worst = fmax(worst, e);
		apart += e > 1e-5;
	}
	print_message("after 3 steps: %lld of %lld weights differ by more than 1e-5 (worst %.3g)\n",
		      (long long)apart, (long long)P, worst);
	assert_true(worst <= 3 * 2 * 1e-3 + 1e-5);
	assert_true(apart <= P / 1000);
	free(p), free(after[0]), free(after[1]);
}

static void test_cuda_model__memory_limit_is_oom_and_frees_everything(void **state)
{
	(void)state;
	struct run r;
	/* room for the cuBLASLt workspace and a little more: the parameters do not fit */
	int rc = run_open(&r, DEVICE_CUDA, DTYPE_FLOAT32, 0, MODEL_TRAIN, NULL, (32 << 20) + 4096);
	assert_int_equal(rc, BD_ENOMEM);
	assert_non_null(strstr(r.dev.err.msg, "memory limit"));
	run_close(&r);
}

/* The e2e workload through measure_case: validation on the GPU, then device-timed samples. */
static void measure(int sync, enum bd_dtype dtype, struct case_result *res)
{
	const struct workload *w = workload_find("e2e", "benchdb", DEVICE_CUDA);
	assert_non_null(w);
	struct case_params p = {.suite = SUITE_E2E, .impl = "benchdb", .device = DEVICE_CUDA,
				.dtype = dtype, .pass = PASS_TRAIN_STEP, .batch_size = 2, .model = tiny,
				.context_length = 16, .attention = "naive", .warmup = 1, .iters = 3,
				.seed = 3, .sync = sync};
	measure_case(w, &p, res, NULL, NULL);
	if (res->status != STATUS_OK)
		fail_msg("status %s: %s", status_name(res->status), res->reason);
}

static void test_cuda_model__e2e_workload_is_device_timed(void **state)
{
	(void)state;
	enum bd_dtype dtypes[] = {DTYPE_FLOAT32, DTYPE_BFLOAT16};
	for (int d = 0; d < 2; d++)
		for (int sync = 1; sync >= 0; sync--) {
			struct case_result res;
			measure(sync, dtypes[d], &res);
			assert_int_equal(res.nsamples, 4 * 3);   /* 4 iterations × fwd, bwd, opt */
			for (size_t i = 0; i < res.nsamples; i++)
				assert_true(res.samples[i].ns > 0);
			assert_true(res.max_diff >= 0 && res.max_diff <= res.tolerance);
			assert_true(res.peak_bytes > 0 && res.peak_fwd_bytes > 0);
			free(res.samples);
		}
}

int main(void)
{
	char why[256];
	if (!cuda_available(why, sizeof(why))) {
		printf("skipped: %s\n", why);
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cuda_model__float32_matches_reference, setup_tiny),
		cmocka_unit_test_setup(test_cuda_model__tf32_close_to_reference, setup_tiny),
		cmocka_unit_test_setup(test_cuda_model__bfloat16_close_to_reference, setup_tiny),
		cmocka_unit_test_setup(test_cuda_model__flash_and_sdpa_attention_inside_the_model,
				       setup_tiny),
		cmocka_unit_test_setup(test_cuda_model__forward_only_and_adamw_step_match_the_cpu,
				       setup_tiny),
		cmocka_unit_test_setup(test_cuda_model__memory_limit_is_oom_and_frees_everything,
				       setup_tiny),
		cmocka_unit_test_setup(test_cuda_model__e2e_workload_is_device_timed, setup_tiny),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
