/* tests/test_model_memory.c: what `runner list` says about an e2e case without running it — the
 * parameter count of the presets (docs/design.md) through the workload's figures, and the memory estimate
 * (model_memory_estimate) against what model_create really allocates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "sweep.h"
#include "workload.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct workload *e2e_cpu(void)
{
	const struct workload *w = workload_find("e2e", "benchdb", DEVICE_CPU);
	assert_non_null(w);
	assert_non_null(w->estimate);
	return w;
}

static struct case_params e2e_case(const struct model_config *c, enum bd_dtype dtype,
				   enum bd_pass pass, int64_t ctx)
{
	struct case_params p = {0};
	p.suite = SUITE_E2E;
	snprintf(p.impl, sizeof(p.impl), "benchdb");
	snprintf(p.attention, sizeof(p.attention), "flash");
	p.device = DEVICE_CPU;
	p.dtype = dtype;
	p.pass = pass;
	p.model = *c;
	p.batch_size = 4;
	p.context_length = ctx;
	return p;
}

/* The sweep's presets, through the workload's figures (what `runner list` and `runner run`
 * read), against docs/design.md's table. */
static void test_model_memory__param_count_of_the_design_presets(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int64_t params;
	} design[] = {
		{"small", 128625408}, {"medium", 423183360}, {"large", 969411840},
		{"xl", 1998235200}, {"2.7B", 3406809600},
	};
	const struct workload *w = e2e_cpu();
	for (size_t i = 0; i < ARRAY_LEN(design); i++) {
		const struct model_config *c = model_presets;
		while (c->name[0] && strcmp(c->name, design[i].name))
			c++;
		assert_string_equal(c->name, design[i].name);
		struct case_params p = e2e_case(c, DTYPE_FLOAT32, PASS_TRAIN_STEP, 128);
		struct wl_figures f;
		w->figures(&p, &f);
		assert_int_equal(f.param_count, design[i].params);
		/* the estimate's float32 parameters are those, 4 bytes each; AdamW holds two more */
		struct wl_memory m;
		struct wl_status st;
		assert_int_equal(w->estimate(&p, &m, &st), STATUS_OK);
		assert_int_equal(m.params, 4 * design[i].params);
		assert_int_equal(m.grads, 4 * design[i].params);
		assert_int_equal(m.optim, 8 * design[i].params);
	}
}

/* The estimate counts what model_create allocates, category by category; the attention workspace
 * (the backend's) is the only difference. */
static void test_model_memory__estimate_is_what_model_create_allocates(void **state)
{
	(void)state;
	static const struct model_config tiny = {"tiny", 64, 144, 2, 4, 101};
	const enum bd_dtype dtypes[] = {DTYPE_FLOAT32, DTYPE_BFLOAT16};
	const enum model_mode modes[] = {MODEL_INFER, MODEL_GRAD, MODEL_TRAIN};
	for (size_t d = 0; d < ARRAY_LEN(dtypes); d++)
		for (size_t k = 0; k < ARRAY_LEN(modes); k++) {
			struct model_shape s = {.cfg = tiny, .batch = 2, .ctx = 16, .dtype = dtypes[d],
						.mode = modes[k]};
			snprintf(s.attention, sizeof(s.attention), "flash");
			struct model_memory est, got;
			struct bd_error err = {0};
			assert_int_equal(model_memory_estimate(&s, &est, &err), 0);

			struct mem_arena mem;
			struct dev dev;
			struct model *m = NULL;
			mem_init(&mem, 0);
			assert_int_equal(dev_open(&dev, DEVICE_CPU, &mem, &err), 0);
			if (model_create(&m, &dev, &s, 7, NULL))
				fail_msg("model_create: %s", dev.err.msg);
			model_memory(m, &got);
			assert_int_equal(est.params, got.params);
			assert_int_equal(est.grads, got.grads);
			assert_int_equal(est.optim, got.optim);
			assert_int_equal(est.workspace, got.workspace);
			assert_true(est.activations <= got.activations);
			int64_t attention = got.activations - est.activations;
			int64_t total = est.params + est.grads + est.optim + est.activations +
					est.workspace;
			/* everything the arena saw, less the attention workspace */
			assert_int_equal(total + attention, mem.live);
			model_free(m);
			dev_close(&dev);
		}
}

/* The naive attention keeps its score matrices, O(t²): the estimate counts them (before, it left
 * them out, and `runner list` said "run" for a case whose P alone was over its mem_limit).
 * Hand-computed: each attention instance (one per layer with a backward, one in a forward) holds
 * P (b, h, t, t) in the compute dtype, and a backward or a bfloat16 compute one float32
 * (b, h, t, t) more; and the estimate never exceeds what model_create takes on the CPU. */
static void test_model_memory__estimate_counts_naive_score_matrices(void **state)
{
	(void)state;
	static const struct model_config tiny = {"tiny", 64, 144, 2, 4, 101};
	static const struct {
		enum bd_dtype dtype;
		enum model_mode mode;
		int64_t batch, ctx, extra;
	} cases[] = {
		/* 2·4·16² = 2048 scores; 2 layers × 2048 × 4 + 2048 × 4 */
		{DTYPE_FLOAT32, MODEL_TRAIN, 2, 16, 2 * 2048 * 4 + 2048 * 4},
		/* 3·4·40² = 19200 scores; one instance × 19200 × 4, no backward */
		{DTYPE_FLOAT32, MODEL_INFER, 3, 40, 19200 * 4},
		/* 1·4·24² = 2304 scores; 2 layers × 2304 × 2 (bfloat16 P) + 2304 × 4 */
		{DTYPE_BFLOAT16, MODEL_GRAD, 1, 24, 2 * 2304 * 2 + 2304 * 4},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct model_shape s = {.cfg = tiny, .batch = cases[i].batch, .ctx = cases[i].ctx,
					.dtype = cases[i].dtype, .mode = cases[i].mode};
		struct model_memory flash, naive, got;
		struct bd_error err = {0};
		snprintf(s.attention, sizeof(s.attention), "flash");
		assert_int_equal(model_memory_estimate(&s, &flash, &err), 0);
		snprintf(s.attention, sizeof(s.attention), "naive");
		assert_int_equal(model_memory_estimate(&s, &naive, &err), 0);
		assert_int_equal(naive.activations - flash.activations, cases[i].extra);
		assert_int_equal(naive.params + naive.grads + naive.optim + naive.workspace,
				 flash.params + flash.grads + flash.optim + flash.workspace);
		struct mem_arena mem;
		struct dev dev;
		struct model *m = NULL;
		mem_init(&mem, 0);
		if (dev_open(&dev, DEVICE_CPU, &mem, &err))
			fail_msg("dev_open: %s", err.msg);
		int rc = model_create(&m, &dev, &s, 7, NULL);
		if (rc == BD_EUNSUPPORTED) {   /* bfloat16 naive: oneDNN's matmul, absent without
						* AVX-512 (an AVX2 host, or ONEDNN_MAX_CPU_ISA=AVX2):
						* the estimate is checked above, the allocation where it
						* can run */
			dev_close(&dev);
			continue;
		}
		if (rc)
			fail_msg("model_create: %s", dev.err.msg);
		model_memory(m, &got);
		assert_true(naive.activations <= got.activations);
		model_free(m);
		dev_close(&dev);
	}
}

static void test_model_memory__estimate_refuses_what_check_refuses(void **state)
{
	(void)state;
	static const struct model_config odd = {"odd", 64, 144, 2, 3, 101};   /* 3 does not divide 64 */
	struct case_params p = e2e_case(&odd, DTYPE_FLOAT32, PASS_FORWARD, 16);
	struct wl_memory m;
	struct wl_status st = {0};
	assert_int_equal(e2e_cpu()->estimate(&p, &m, &st), STATUS_UNSUPPORTED);
	assert_non_null(strstr(st.reason, "num_heads 3"));
	assert_int_equal(m.params, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_memory__param_count_of_the_design_presets),
		cmocka_unit_test(test_model_memory__estimate_is_what_model_create_allocates),
		cmocka_unit_test(test_model_memory__estimate_counts_naive_score_matrices),
		cmocka_unit_test(test_model_memory__estimate_refuses_what_check_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
