/* tests/test_sweep.c: sweep parsing, validation messages (file:line:col, key, valid choices) and
 * expansion (counts, order, defaults, case keys, canonical JSON, names). Fixtures: tests/sweeps/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sha256.h"
#include "sweep.h"
#include "workload.h"

/* ---- helpers -------------------------------------------------------------------------------- */

static struct sweep *parse_ok(const char *text)
{
	struct sweep *s = NULL;
	struct bd_error err;
	memset(&err, 0, sizeof(err));
	int rc = sweep_parse("t.yaml", text, &s, &err);
	if (rc)
		fail_msg("unexpected error %d at %d:%d: %s", rc, err.line, err.column, err.msg);
	assert_non_null(s);
	return s;
}

static struct sweep *expand_ok(const char *text, struct sweep_cases *cases)
{
	struct sweep *s = parse_ok(text);
	struct bd_error err;
	memset(&err, 0, sizeof(err));
	int rc = sweep_expand(s, cases, &err);
	if (rc)
		fail_msg("unexpected expand error %d at %d:%d: %s", rc, err.line, err.column, err.msg);
	return s;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("message \"%s\" does not contain \"%s\"", haystack, needle);
}

/* The parse fails with BD_EINVAL at line:column, *out stays NULL, and the message contains every
 * string given (NULL-terminated). */
/* printf into one of a few static buffers, so that a test can pass several to a check. */
static const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...)
{
	static char bufs[4][512];
	static int next;
	char *b = bufs[next++ % 4];
	va_list ap;
	va_start(ap, format);
	vsnprintf(b, sizeof(bufs[0]), format, ap);
	va_end(ap);
	return b;
}

/* The valid impls as the sweep lists them, from the backends' tables (kernels/impls.c): suite's,
 * or every suite's when suite is NULL; "naive, flash, sdpa". */
static const char *valid_impls(const char *suite)
{
	static char bufs[2][256];
	static int next;
	char *b = bufs[next++ % 2];
	b[0] = '\0';
	for (const char *const *su = workload_suites; *su; su++) {
		if (suite && strcmp(*su, suite))
			continue;
		for (const char *const *n = workload_impl_names(*su); *n; n++)
			snprintf(b + strlen(b), sizeof(bufs[0]) - strlen(b), "%s%s", b[0] ? ", " : "", *n);
	}
	return b;
}

static void check_parse_error(const char *text, int line, int column, ...)
{
	struct sweep *s = (struct sweep *)(uintptr_t)1;
	struct bd_error err;
	memset(&err, 0, sizeof(err));
	int rc = sweep_parse("bad.yaml", text, &s, &err);
	assert_int_equal(rc, BD_EINVAL);
	assert_null(s);
	assert_int_equal(err.code, BD_EINVAL);
	assert_string_equal(err.file, "bad.yaml");
	if (err.line != line || err.column != column)
		fail_msg("error at %d:%d, expected %d:%d: %s", err.line, err.column, line, column, err.msg);
	va_list ap;
	va_start(ap, column);
	for (const char *sub; (sub = va_arg(ap, const char *));)
		assert_contains(err.msg, sub);
	va_end(ap);
}

/* The parse succeeds but the expansion fails at line:column with these substrings. */
static void check_expand_error(const char *text, int line, int column, ...)
{
	struct sweep *s = parse_ok(text);
	struct sweep_cases cases = {(struct sweep_case *)(uintptr_t)1, 7};
	struct bd_error err;
	memset(&err, 0, sizeof(err));
	assert_int_equal(sweep_expand(s, &cases, &err), BD_EINVAL);
	assert_null(cases.items);
	assert_int_equal(cases.n, 0);
	if (err.line != line || err.column != column)
		fail_msg("error at %d:%d, expected %d:%d: %s", err.line, err.column, line, column, err.msg);
	va_list ap;
	va_start(ap, column);
	for (const char *sub; (sub = va_arg(ap, const char *));)
		assert_contains(err.msg, sub);
	va_end(ap);
	sweep_free(s);
}

static char *fixture_path(const char *name)
{
	const char *dir = getenv("BENCHDB_SOURCE_DIR");
	static char path[1024];
	snprintf(path, sizeof(path), "%s/tests/sweeps/%s", dir ? dir : ".", name);
	return path;
}

static struct sweep *load_fixture(const char *name, struct sweep_cases *cases)
{
	struct sweep *s = NULL;
	struct bd_error err;
	memset(&err, 0, sizeof(err));
	int rc = sweep_load(fixture_path(name), &s, &err);
	if (rc)
		fail_msg("%s: %d:%d: %s", name, err.line, err.column, err.msg);
	if (cases && (rc = sweep_expand(s, cases, &err)))
		fail_msg("%s: expand: %d:%d: %s", name, err.line, err.column, err.msg);
	return s;
}

static const char *attention_60 =
	"name: attn\n"
	"benchmarks:\n"
	"  - suite: attention\n"
	"    impl: [naive, flash, sdpa]\n"
	"    seq_len: [256, 1024, 4096, 8192, 16384]\n"
	"    head_dim: [16, 32, 64, 128]\n";

/* ---- good sweeps: counts, order, defaults --------------------------------------------------- */

static void test_sweep__axes_multiply_into_cases(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok(attention_60, &cases);
	assert_int_equal(s->nbenchmarks, 1);
	assert_int_equal(s->benchmarks[0].nsettings, 3);
	assert_true(s->benchmarks[0].settings[0].is_axis);
	assert_int_equal(cases.n, 60);
	for (size_t i = 0; i < cases.n; i++) {
		assert_int_equal(cases.items[i].index, i);
		assert_int_equal(cases.items[i].benchmark, 0);
	}
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__exclude_drops_exactly_the_matching_cases(void **state)
{
	(void)state;
	struct sweep_cases cases;
	/* dtype is not an axis: the default float32 matches, so every sdpa case goes (20 of 60). */
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - suite: attention\n"
				    "    impl: [naive, flash, sdpa]\n"
				    "    seq_len: [256, 1024, 4096, 8192, 16384]\n"
				    "    head_dim: [16, 32, 64, 128]\n"
				    "    exclude: [{impl: sdpa, dtype: float32}]\n", &cases);
	assert_int_equal(cases.n, 40);
	for (size_t i = 0; i < cases.n; i++)
		assert_string_not_equal(cases.items[i].params.impl, "sdpa");
	sweep_cases_free(&cases);
	sweep_free(s);

	/* A list value matches any of its values: naive and flash at 16384 (2 x 4) and every
	 * head_dim 128 case with seq_len 8192 (3). */
	s = expand_ok("benchmarks:\n"
		      "  - suite: attention\n"
		      "    impl: [naive, flash, sdpa]\n"
		      "    seq_len: [256, 1024, 4096, 8192, 16384]\n"
		      "    head_dim: [16, 32, 64, 128]\n"
		      "    exclude:\n"
		      "      - {impl: [naive, flash], seq_len: 16384}\n"
		      "      - seq_len: 8192\n"
		      "        head_dim: 128\n", &cases);
	assert_int_equal(cases.n, 60 - 8 - 3);
	for (size_t i = 0; i < cases.n; i++) {
		const struct case_params *p = &cases.items[i].params;
		assert_false(p->seq_len == 16384 && strcmp(p->impl, "sdpa"));
		assert_false(p->seq_len == 8192 && p->head_dim == 128);
		assert_int_equal(cases.items[i].index, i);
	}
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__first_axis_varies_slowest(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - suite: attention\n"
				    "    seq_len: [128, 256]\n"
				    "    impl: naive\n"
				    "    head_dim: [16, 32, 64]\n"
				    "  - suite: matmul\n"
				    "    size: [64, 128]\n", &cases);
	assert_int_equal(cases.n, 8);
	const int64_t seq[] = {128, 128, 128, 256, 256, 256};
	const int64_t dim[] = {16, 32, 64, 16, 32, 64};
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(cases.items[i].params.seq_len, seq[i]);
		assert_int_equal(cases.items[i].params.head_dim, dim[i]);
		assert_int_equal(cases.items[i].benchmark, 0);
	}
	assert_int_equal(cases.items[6].benchmark, 1);
	assert_int_equal(cases.items[6].params.m, 64);
	assert_int_equal(cases.items[7].params.k, 128);
	assert_int_equal(cases.items[7].index, 7);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__builtin_defaults_fill_unset_params(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - {suite: attention, impl: flash, seq_len: 64, head_dim: 32}\n"
				    "  - {suite: e2e, model: small, context_length: 256}\n"
				    "  - {suite: matmul, m: 8, n: 16, k: 32}\n", &cases);
	assert_int_equal(cases.n, 3);
	const struct case_params *a = &cases.items[0].params, *e = &cases.items[1].params,
				 *m = &cases.items[2].params;
	assert_int_equal(a->suite, SUITE_ATTENTION);
	assert_int_equal(a->device, DEVICE_CPU);
	assert_int_equal(a->dtype, DTYPE_FLOAT32);
	assert_int_equal(a->pass, PASS_FORWARD_BACKWARD);
	assert_int_equal(a->batch_size, 8);
	assert_int_equal(a->heads, 1);
	assert_int_equal(a->causal, 0);
	assert_int_equal(a->warmup, 2);
	assert_int_equal(a->iters, 10);
	assert_int_equal(a->seed, 0);
	assert_int_equal(a->mem_limit, 0);
	assert_int_equal(a->sync, 1);

	assert_string_equal(e->impl, "benchdb");
	assert_int_equal(e->pass, PASS_TRAIN_STEP);
	assert_int_equal(e->batch_size, 4);
	assert_string_equal(e->attention, "naive");
	assert_int_equal(e->context_length, 256);

	assert_string_equal(m->impl, "onednn");
	assert_int_equal(m->pass, PASS_FORWARD);
	assert_int_equal(m->m, 8);
	assert_int_equal(m->n, 16);
	assert_int_equal(m->k, 32);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__sweep_defaults_apply_and_benchmark_values_override_them(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("defaults: {warmup: 5, iters: 20, device: cuda, heads: 4, "
				    "mem_limit: 1GiB, sync: false}\n"
				    "benchmarks:\n"
				    "  - suite: attention\n"
				    "    impl: naive\n"
				    "    seq_len: 64\n"
				    "    head_dim: 16\n"
				    "    iters: 3\n"
				    "  - suite: e2e\n"
				    "    model: small\n"
				    "    context_length: 128\n", &cases);
	assert_int_equal(cases.n, 2);
	const struct case_params *a = &cases.items[0].params, *e = &cases.items[1].params;
	assert_int_equal(a->warmup, 5);
	assert_int_equal(a->iters, 3);             /* the benchmark's own value wins */
	assert_int_equal(a->device, DEVICE_CUDA);
	assert_int_equal(a->heads, 4);
	assert_int_equal(a->mem_limit, 1LL << 30);
	assert_int_equal(a->sync, 0);
	assert_int_equal(e->warmup, 5);
	assert_int_equal(e->iters, 20);
	assert_int_equal(e->device, DEVICE_CUDA);  /* heads: not an e2e key, silently not applied */
	/* defaults are merged into the benchmark's settings, after its own */
	assert_int_equal(s->benchmarks[1].nsettings, 2 + 5);
	assert_string_equal(s->benchmarks[1].settings[2].key, "warmup");
	assert_int_equal(s->benchmarks[1].settings[2].line, 1);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__default_axis_multiplies_every_benchmark(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("defaults:\n"
				    "  dtype: [float32, bfloat16]\n"
				    "benchmarks:\n"
				    "  - {suite: attention, impl: [naive, flash], seq_len: 64, head_dim: 16}\n"
				    "  - {suite: matmul, size: 32, dtype: float16}\n", &cases);
	assert_int_equal(cases.n, 4 + 1);
	/* the default axis comes after the benchmark's own, so it varies fastest */
	assert_string_equal(cases.items[0].params.impl, "naive");
	assert_int_equal(cases.items[0].params.dtype, DTYPE_FLOAT32);
	assert_int_equal(cases.items[1].params.dtype, DTYPE_BFLOAT16);
	assert_string_equal(cases.items[2].params.impl, "flash");
	assert_int_equal(cases.items[4].params.dtype, DTYPE_FLOAT16);
	sweep_cases_free(&cases);
	sweep_free(s);
}

/* A peer parameter's default axis takes its place in the defaults mapping like any other: the
 * later default varies faster. */
static void test_sweep__peer_parameter_defaults_keep_the_mapping_order(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("peers:\n"
				    "  p: {command: x, suite: attention, params: {opt: {values: [a, b]}}}\n"
				    "defaults:\n"
				    "  opt: [a, b]\n"
				    "  seed: [1, 2]\n"
				    "  impl: p\n"
				    "benchmarks:\n"
				    "  - {suite: attention, seq_len: 8, head_dim: 8}\n", &cases);
	assert_int_equal(cases.n, 4);
	const struct sweep_benchmark *b = &s->benchmarks[0];
	assert_string_equal(b->settings[2].key, "opt");
	assert_string_equal(b->settings[3].key, "seed");
	assert_string_equal(b->settings[4].key, "impl");
	static const char *const opt[] = {"a", "a", "b", "b"};
	for (size_t i = 0; i < cases.n; i++) {
		assert_int_equal(cases.items[i].npeer_params, 1);
		assert_string_equal(cases.items[i].peer_params[0].value, opt[i]);
		assert_int_equal(cases.items[i].params.seed, 1 + (int64_t)(i % 2));
	}
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__axes_mapping_equals_inline_lists(void **state)
{
	(void)state;
	struct sweep_cases a, b;
	struct sweep *sa = expand_ok("benchmarks:\n"
				     "  - suite: attention\n"
				     "    axes: {impl: [naive, flash], seq_len: [128, 256]}\n"
				     "    head_dim: 64\n", &a);
	struct sweep *sb = expand_ok("benchmarks:\n"
				     "  - suite: attention\n"
				     "    impl:\n"
				     "      - naive\n"
				     "      - flash\n"
				     "    seq_len: [128, 256]\n"
				     "    head_dim: 64\n", &b);
	assert_int_equal(a.n, 4);
	assert_int_equal(b.n, 4);
	for (size_t i = 0; i < a.n; i++) {
		assert_string_equal(a.items[i].key, b.items[i].key);
		assert_string_equal(a.items[i].params_json, b.items[i].params_json);
		assert_string_equal(a.items[i].name, b.items[i].name);
	}
	sweep_cases_free(&a);
	sweep_cases_free(&b);
	sweep_free(sa);
	sweep_free(sb);
}

static void test_sweep__design_example_expands_to_160_cases(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = load_fixture("design_example.yaml", &cases);
	assert_string_equal(s->name, "cs336-e2e");
	assert_int_equal(s->nmodels, 1);
	assert_string_equal(s->models[0].name, "mini");
	/* e2e: 5 models x 4 lengths x 2 dtypes x 3 passes; attention: 60 less the 20 sdpa */
	assert_int_equal(cases.n, 120 + 40);
	assert_string_equal(cases.items[0].name, "e2e small float32 fwd ctx128 B4 cuda");
	assert_int_equal(cases.items[0].params.warmup, 5);
	assert_string_equal(cases.items[119].params.model.name, "2.7B");
	assert_int_equal(cases.items[119].params.pass, PASS_TRAIN_STEP);
	assert_int_equal(cases.items[120].benchmark, 1);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__documented_example_expands_as_documented(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = load_fixture("format_example.yaml", &cases);
	size_t per_benchmark[3] = {0, 0, 0};
	for (size_t i = 0; i < cases.n; i++)
		per_benchmark[cases.items[i].benchmark]++;
	assert_int_equal(per_benchmark[0], 144);
	assert_int_equal(per_benchmark[1], 84);
	assert_int_equal(per_benchmark[2], 6);
	assert_int_equal(cases.n, 234);
	assert_string_equal(cases.items[0].params.model.name, "mini");
	assert_int_equal(cases.items[0].params.mem_limit, 70LL << 30);
	assert_int_equal(cases.items[cases.n - 1].params.device, DEVICE_CPU);
	sweep_cases_free(&cases);
	sweep_free(s);
}

/* ---- case keys, canonical JSON, names ------------------------------------------------------- */

static void test_sweep__keys_ignore_measurement_settings_across_files(void **state)
{
	(void)state;
	struct sweep_cases warm, cold;
	struct sweep *sw = load_fixture("attention_warm.yaml", &warm);
	struct sweep *sc = load_fixture("attention_cold.yaml", &cold);
	assert_int_equal(warm.n, 4);
	assert_int_equal(cold.n, 4);
	for (size_t i = 0; i < warm.n; i++) {
		assert_string_equal(warm.items[i].key, cold.items[i].key);
		assert_string_not_equal(warm.items[i].params_json, cold.items[i].params_json);
	}
	assert_int_equal(warm.items[0].params.iters, 50);
	assert_int_equal(cold.items[0].params.iters, 3);
	assert_int_equal(cold.items[0].params.seed, 7);
	sweep_cases_free(&warm);
	sweep_cases_free(&cold);
	sweep_free(sw);
	sweep_free(sc);
}

static void test_sweep__keys_differ_when_a_workload_param_differs(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - {suite: attention, impl: flash, seq_len: [128, 256], head_dim: 64}\n"
				    "  - {suite: attention, impl: flash, seq_len: 128, head_dim: 64, sync: false}\n",
				    &cases);
	assert_int_equal(cases.n, 3);
	assert_string_not_equal(cases.items[0].key, cases.items[1].key);
	assert_string_not_equal(cases.items[0].key, cases.items[2].key);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__key_format_per_suite(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - {suite: attention, impl: flash, seq_len: 256, head_dim: 64, causal: true}\n"
				    "  - {suite: e2e, model: small, context_length: 256, dtype: bfloat16}\n"
				    "  - {suite: matmul, m: 1, n: 2, k: 3, device: cuda, sync: false}\n", &cases);
	assert_int_equal(cases.n, 3);
	assert_string_equal(cases.items[0].key,
			    "suite=attention impl=flash device=cpu dtype=float32 pass=forward_backward "
			    "batch_size=8 heads=1 seq_len=256 head_dim=64 causal=true");
	assert_string_equal(cases.items[1].key,
			    "suite=e2e impl=benchdb device=cpu dtype=bfloat16 pass=train_step model=small "
			    "d_model=768 d_ff=3072 num_layers=12 num_heads=12 vocab_size=10000 "
			    "context_length=256 batch_size=4 attention=naive");
	assert_string_equal(cases.items[2].key,
			    "suite=matmul impl=onednn device=cuda dtype=float32 pass=forward m=1 n=2 k=3 "
			    "sync=false");
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__params_json_is_canonical_and_sorted(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - {suite: attention, impl: sdpa, seq_len: 256, head_dim: 64, "
				    "mem_limit: 512MiB, seed: 42}\n"
				    "  - {suite: e2e, model: medium, context_length: 128}\n"
				    "  - {suite: matmul, size: 16}\n", &cases);
	assert_string_equal(cases.items[0].params_json,
			    "{\"batch_size\":8,\"causal\":false,\"device\":\"cpu\",\"dtype\":\"float32\","
			    "\"head_dim\":64,\"heads\":1,\"impl\":\"sdpa\",\"iters\":10,\"mem_limit\":536870912,"
			    "\"pass\":\"forward_backward\",\"seed\":42,\"seq_len\":256,\"suite\":\"attention\","
			    "\"sync\":true,\"tf32\":false,\"warmup\":2}");
	assert_string_equal(cases.items[1].params_json,
			    "{\"attention\":\"naive\",\"batch_size\":4,\"context_length\":128,\"d_ff\":4096,"
			    "\"d_model\":1024,\"device\":\"cpu\",\"dtype\":\"float32\",\"impl\":\"benchdb\","
			    "\"iters\":10,\"mem_limit\":0,\"model\":\"medium\",\"num_heads\":16,"
			    "\"num_layers\":24,\"pass\":\"train_step\",\"seed\":0,\"suite\":\"e2e\","
			    "\"sync\":true,\"tf32\":false,\"vocab_size\":10000,\"warmup\":2}");
	assert_string_equal(cases.items[2].params_json,
			    "{\"device\":\"cpu\",\"dtype\":\"float32\",\"impl\":\"onednn\",\"iters\":10,"
			    "\"k\":16,\"m\":16,\"mem_limit\":0,\"n\":16,\"pass\":\"forward\",\"seed\":0,"
			    "\"suite\":\"matmul\",\"sync\":true,\"tf32\":false,\"warmup\":2}");
	/* keys strictly increasing */
	for (size_t c = 0; c < cases.n; c++) {
		const char *p = cases.items[c].params_json, *prev = NULL;
		size_t prev_len = 0;
		while ((p = strchr(p, '"'))) {
			const char *end = strchr(p + 1, '"');
			if (end[1] == ':') {
				size_t len = (size_t)(end - p - 1);
				if (prev) {
					int cmp = strncmp(prev, p + 1, len < prev_len ? len : prev_len);
					assert_true(cmp < 0 || (cmp == 0 && prev_len < len));
				}
				prev = p + 1;
				prev_len = len;
			}
			p = end + 1;
		}
	}
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__case_names_are_short_labels(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("models:\n"
				    "  mini: {d_model: 256, d_ff: 1024, num_layers: 4, num_heads: 4}\n"
				    "benchmarks:\n"
				    "  - {suite: attention, impl: flash, seq_len: 256, head_dim: 64, causal: true}\n"
				    "  - {suite: attention, impl: naive, seq_len: 8, head_dim: 4, pass: forward, "
				    "device: cuda, sync: false}\n"
				    "  - {suite: e2e, model: small, context_length: 256}\n"
				    "  - {suite: e2e, model: mini, context_length: 64, attention: flash, "
				    "vocab_size: 500, pass: forward}\n"
				    "  - {suite: matmul, size: 2048}\n", &cases);
	assert_string_equal(cases.items[0].name, "flash float32 fwd+bwd B8 H1 S256 D64 causal");
	assert_string_equal(cases.items[1].name, "naive float32 fwd B8 H1 S8 D4 cuda nosync");
	assert_string_equal(cases.items[2].name, "e2e small float32 train_step ctx256 B4");
	assert_string_equal(cases.items[3].name, "e2e mini float32 fwd ctx64 B4 attn=flash V500");
	assert_string_equal(cases.items[4].name, "matmul onednn float32 2048x2048x2048");
	sweep_cases_free(&cases);
	sweep_free(s);
}

/* ---- models --------------------------------------------------------------------------------- */

static void test_sweep__preset_models_fill_case_params(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - suite: e2e\n"
				    "    model: [small, medium, large, xl, 2.7B]\n"
				    "    context_length: 128\n", &cases);
	assert_int_equal(cases.n, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct model_config *m = &cases.items[i].params.model;
		assert_string_equal(m->name, model_presets[i].name);
		assert_int_equal(m->d_model, model_presets[i].d_model);
		assert_int_equal(m->d_ff, model_presets[i].d_ff);
		assert_int_equal(m->num_layers, model_presets[i].num_layers);
		assert_int_equal(m->num_heads, model_presets[i].num_heads);
		assert_int_equal(m->vocab_size, 10000);
	}
	assert_int_equal(cases.items[4].params.model.d_model, 2560);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__custom_models_and_vocab_override(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n"
				    "  - suite: e2e\n"
				    "    model: [mini, small]\n"
				    "    context_length: 64\n"
				    "  - suite: e2e\n"
				    "    model: tiny-2\n"
				    "    vocab_size: 32000\n"
				    "    context_length: 64\n"
				    "models:\n"
				    "  mini: {d_model: 256, d_ff: 1024, num_layers: 4, num_heads: 4, vocab_size: 5000}\n"
				    "  tiny-2:\n"
				    "    d_model: 64\n"
				    "    d_ff: 256\n"
				    "    num_layers: 2\n"
				    "    num_heads: 2\n", &cases);
	assert_int_equal(s->nmodels, 2);
	assert_int_equal(s->models[1].vocab_size, 10000);   /* default */
	assert_int_equal(cases.n, 3);
	const struct model_config *mini = &cases.items[0].params.model;
	assert_string_equal(mini->name, "mini");
	assert_int_equal(mini->d_model, 256);
	assert_int_equal(mini->vocab_size, 5000);
	const struct model_config *tiny = &cases.items[2].params.model;
	assert_string_equal(tiny->name, "tiny-2");
	assert_int_equal(tiny->num_heads, 2);
	assert_int_equal(tiny->vocab_size, 32000);
	assert_contains(cases.items[2].key, "model=tiny-2 d_model=64 d_ff=256 num_layers=2 num_heads=2 "
			"vocab_size=32000");
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__param_counts_of_all_presets_match_design(void **state)
{
	(void)state;
	const int64_t expected[] = {128625408LL, 423183360LL, 969411840LL, 1998235200LL, 3406809600LL};
	size_t n = 0;
	for (; model_presets[n].name[0]; n++)
		assert_int_equal(model_param_count(&model_presets[n]), expected[n]);
	assert_int_equal(n, 5);
	struct model_config mini = {"mini", 256, 1024, 4, 4, 10000};
	/* 4 (4*65536 + 3*262144 + 512) + 2*10000*256 + 256 */
	assert_int_equal(model_param_count(&mini), 4 * (262144 + 786432 + 512) + 5120000 + 256);
}

/* ---- matmul, byte sizes, metadata ----------------------------------------------------------- */

static void test_sweep__matmul_size_sets_m_n_k(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("defaults: {size: 99}\n"
				    "benchmarks:\n"
				    "  - {suite: matmul, size: [128, 256], dtype: [float32, bfloat16]}\n"
				    "  - {suite: matmul, m: 4, n: 5, k: 6}\n"
				    "  - {suite: matmul, exclude: [{size: 99, dtype: float16}], "
				    "dtype: [float16, float32]}\n",
				    &cases);
	assert_int_equal(cases.n, 4 + 1 + 1);
	assert_int_equal(cases.items[0].params.m, 128);
	assert_int_equal(cases.items[0].params.n, 128);
	assert_int_equal(cases.items[0].params.k, 128);
	assert_int_equal(cases.items[2].params.k, 256);
	assert_int_equal(cases.items[4].params.m, 4);   /* the defaults' size is not applied */
	assert_int_equal(cases.items[4].params.k, 6);
	assert_int_equal(cases.items[5].params.m, 99);
	assert_int_equal(cases.items[5].params.dtype, DTYPE_FLOAT32);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__parse_bytes_accepts_integers_and_units(void **state)
{
	(void)state;
	static const struct { const char *text; int64_t bytes; } good[] = {
		{"0", 0}, {"4096", 4096}, {"512MiB", 512LL << 20}, {"8GiB", 8LL << 30},
		{"2GB", 2000000000LL}, {"1.5GiB", 3LL << 29}, {"10B", 10}, {"1KB", 1000},
		{"3KiB", 3072}, {"7MB", 7000000}, {"1TB", 1000000000000LL}, {"2TiB", 2LL << 40},
		{"512 MiB", 512LL << 20}, {"1gib", 1LL << 30}, {"0.5KiB", 512}, {"0.3KiB", 307},
		{"9223372036854775807", INT64_MAX},
	};
	static const char *const bad[] = {
		"", "-1", "-5MiB", "abc", "1.5", "12XB", "1.5B", "MiB", "1..5GiB", ".5GiB", "5.GiB",
		"1e9", "9223372036854775808", "9000000TiB", "1.1234567GiB", "0x10", " 5", "5 MiB extra",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int64_t v = -1;
		if (parse_bytes(good[i].text, &v))
			fail_msg("parse_bytes(\"%s\") failed", good[i].text);
		if (v != good[i].bytes)
			fail_msg("parse_bytes(\"%s\") = %lld, expected %lld", good[i].text, (long long)v,
				 (long long)good[i].bytes);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v = -1;
		if (!parse_bytes(bad[i], &v))
			fail_msg("parse_bytes(\"%s\") accepted it as %lld", bad[i], (long long)v);
	}
}

static void test_sweep__stores_text_hash_and_name(void **state)
{
	(void)state;
	const char *text = "benchmarks: [{suite: matmul, size: 8}]\n";
	struct sweep *s = NULL;
	struct bd_error err;
	assert_int_equal(sweep_parse("configs/nightly.smoke.yaml", text, &s, &err), 0);
	assert_string_equal(s->path, "configs/nightly.smoke.yaml");
	assert_string_equal(s->text, text);
	assert_string_equal(s->name, "nightly.smoke");   /* basename without the extension */
	char hex[65];
	sha256_hex(text, strlen(text), hex);
	assert_string_equal(s->hash, hex);
	sweep_free(s);

	s = parse_ok("name: my sweep\nbenchmarks: [{suite: matmul, size: 8}]\n");
	assert_string_equal(s->name, "my sweep");
	sweep_free(s);
}

static void test_sweep__free_functions_accept_null(void **state)
{
	(void)state;
	sweep_free(NULL);
	sweep_cases_free(NULL);
	struct sweep_cases empty = {NULL, 0};
	sweep_cases_free(&empty);
}

static void test_sweep__missing_file_is_an_io_error_with_the_reason(void **state)
{
	(void)state;
	struct sweep *s = (struct sweep *)(uintptr_t)1;
	struct bd_error err;
	assert_int_equal(sweep_load("/nonexistent/sweep.yaml", &s, &err), BD_EIO);
	assert_null(s);
	assert_string_equal(err.file, "/nonexistent/sweep.yaml");
	assert_contains(err.msg, "no such file or directory");
}

/* ---- bad sweeps: one test per error class --------------------------------------------------- */

static void test_sweep__yaml_syntax_error_names_problem_and_position(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n"
			  "  - suite: attention\n"
			  "    impl: [naive, flash\n"
			  "    seq_len: 128\n",
			  4, 12, "yaml syntax error: ", "did not find expected ',' or ']'",
			  "(while parsing a flow sequence)", NULL);
	check_parse_error("name: x\n\tbenchmarks: []\n", 2, 1, "yaml syntax error: ",
			  "found a tab character that violates indentation", NULL);

	struct sweep *s = (struct sweep *)(uintptr_t)1;
	struct bd_error err;
	assert_int_equal(sweep_load(fixture_path("bad_syntax.yaml"), &s, &err), BD_EINVAL);
	assert_null(s);
	assert_string_equal(err.file, fixture_path("bad_syntax.yaml"));
	assert_int_equal(err.line, 5);
	assert_int_equal(err.column, 12);
	assert_contains(err.msg, "yaml syntax error");
}

static void test_sweep__unknown_top_level_key_lists_valid_keys(void **state)
{
	(void)state;
	check_parse_error("name: x\n"
			  "benchmark:\n"
			  "  - {suite: matmul, size: 8}\n",
			  2, 1, "unknown key 'benchmark' (valid: name, description, defaults, benchmarks, models, "
			  "peers)",
			  "did you mean 'benchmarks'?", NULL);
	check_parse_error("warmup: 3\nbenchmarks: [{suite: matmul, size: 8}]\n", 1, 1,
			  "unknown key 'warmup'", "parameters go under 'defaults' or a benchmark", NULL);
}

static void test_sweep__unknown_param_key_lists_suite_keys_and_suggests(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n"
			  "  - suite: attention\n"
			  "    impl: flash\n"
			  "    seq_len: 128\n"
			  "    head_size: 64\n",
			  5, 5,
			  "unknown key 'head_size' for suite attention (valid: impl, device, dtype, pass, "
			  "batch_size, heads, seq_len, head_dim, causal, warmup, iters, min_iters, max_iters, "
			  "max_time, target_rse, seed, mem_limit, sync, tf32, suite, axes, exclude)",
			  "did you mean 'head_dim'?", NULL);
	/* inside axes: only parameters are valid */
	check_parse_error("benchmarks:\n"
			  "  - suite: matmul\n"
			  "    axes: {size: [8], dtpye: [float32]}\n",
			  3, 23, "unknown key 'dtpye' for suite matmul (valid: impl, device, dtype, pass, m, n, k, "
			  "size, warmup, iters, min_iters, max_iters, max_time, target_rse, seed, mem_limit, "
			  "sync, tf32)", "did you mean 'dtype'?", NULL);
	/* a key of another suite says so */
	check_parse_error("benchmarks:\n"
			  "  - {suite: attention, impl: flash, seq_len: 8, head_dim: 8, model: small}\n",
			  2, 62, "unknown key 'model' for suite attention", "'model' is a key of suite e2e", NULL);
}

static void test_sweep__unknown_suite_lists_suites(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n"
			  "  - suite: atention\n",
			  2, 12, "unknown suite 'atention' (valid: attention, e2e, matmul)",
			  "did you mean 'attention'?", NULL);
	check_parse_error("benchmarks:\n"
			  "  - impl: flash\n",
			  2, 5, "benchmark 1 is missing required key 'suite' (valid: attention, e2e, matmul)", NULL);
}

static void test_sweep__unknown_impl_lists_impls_of_the_suite(void **state)
{
	(void)state;
	struct sweep *s = (struct sweep *)(uintptr_t)1;
	struct bd_error err;
	assert_int_equal(sweep_load(fixture_path("bad_unknown_impl.yaml"), &s, &err), BD_EINVAL);
	assert_null(s);
	assert_int_equal(err.line, 4);
	assert_int_equal(err.column, 19);
	assert_contains(err.msg, fmt("unknown impl 'flsh' for suite attention (valid: %s)",
				     valid_impls("attention")));
	assert_contains(err.msg, "did you mean 'flash'?");

	check_parse_error("benchmarks:\n  - {suite: e2e, impl: flash, model: small, context_length: 8}\n",
			  2, 24, "unknown impl 'flash' for suite e2e (valid: benchdb)", NULL);
}

static void test_sweep__unknown_dtype_device_pass_attention(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, dtype: [float32, bf16]}\n",
			  2, 47, "unknown dtype 'bf16' (valid: float32, float16, bfloat16)",
			  "did you mean 'bfloat16'?", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, device: gpu}\n",
			  2, 38, "unknown device 'gpu' (valid: cpu, cuda)", "did you mean 'cuda'?", NULL);
	check_parse_error("benchmarks:\n  - {suite: attention, impl: naive, seq_len: 8, head_dim: 8, "
			  "pass: train_step}\n",
			  2, 68, "pass 'train_step' is not supported by suite attention "
			  "(valid: forward, backward, forward_backward)", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, pass: backwrd}\n",
			  2, 36, "unknown pass 'backwrd' for suite matmul (valid: forward)", NULL);
	check_parse_error("benchmarks:\n  - {suite: e2e, model: small, context_length: 8, attention: fast}\n",
			  2, 62, "unknown attention 'fast'", fmt("(valid: %s)", valid_impls("attention")),
			  NULL);
}

static void test_sweep__unknown_model_lists_presets_and_user_models(void **state)
{
	(void)state;
	check_parse_error("models:\n"
			  "  mini: {d_model: 256, d_ff: 1024, num_layers: 4, num_heads: 4}\n"
			  "benchmarks:\n"
			  "  - suite: e2e\n"
			  "    model: [small, tiny]\n"
			  "    context_length: 8\n",
			  5, 20, "unknown model 'tiny' (valid: small, medium, large, xl, 2.7B, mini)", NULL);
	check_parse_error("benchmarks:\n"
			  "  - suite: e2e\n"
			  "    model: {d_model: 8}\n",
			  3, 12, "key 'model' expects a model name or a list of them, got a mapping",
			  "define models under the top-level key 'models'", NULL);
}

static void test_sweep__wrong_types_name_the_expected_type(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n  - {suite: attention, impl: flash, head_dim: 8, seq_len: abc}\n",
			  2, 59, "key 'seq_len' expects a positive integer, got 'abc'", NULL);
	check_parse_error("benchmarks:\n  - {suite: attention, impl: flash, head_dim: 8, seq_len: 4.5}\n",
			  2, 59, "key 'seq_len' expects a positive integer, got '4.5'", NULL);
	check_parse_error("benchmarks:\n  - {suite: attention, impl: flash, head_dim: 8, seq_len: -3}\n",
			  2, 59, "key 'seq_len' expects a positive integer, got '-3'", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, warmup: -1}\n",
			  2, 38, "key 'warmup' expects a non-negative integer, got '-1'", NULL);
	check_parse_error("benchmarks:\n  - {suite: attention, impl: flash, head_dim: 8, seq_len: 8, "
			  "causal: maybe}\n",
			  2, 70, "key 'causal' expects true or false, got 'maybe'", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, sync: yes}\n",
			  2, 36, "key 'sync' expects true or false, got 'yes'", NULL);
	check_parse_error("benchmarks:\n"
			  "  - suite: matmul\n"
			  "    size:\n"
			  "      small: 8\n",
			  4, 7, "key 'size' expects a positive integer or a list of them, got a mapping", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: [8, [16, 32]]}\n",
			  2, 31, "key 'size' expects a positive integer, got a list", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 99999999999999999999}\n",
			  2, 27, "key 'size' value 99999999999999999999 is too large", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, mem_limit: lots}\n",
			  2, 41, "key 'mem_limit' expects a byte size", "got 'lots'", NULL);
	check_parse_error("name: [a, b]\nbenchmarks: [{suite: matmul, size: 8}]\n",
			  1, 7, "key 'name' expects a string, got a list", NULL);
	check_parse_error("benchmarks:\n  - suite: matmul\n    size:\n", 3, 10,
			  "key 'size' has no value", NULL);
}

/* schemas/sweep-format.md "Limits": every user-given size is bounded at parse time, so no sum or
 * product the runner makes of them wraps (issue 15: iters 6148914691236517204 wrapped total*3 in
 * measure.c and overran the samples array). */
static void test_sweep__sizes_beyond_the_limits_are_errors(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, iters: 6148914691236517204}\n",
			  2, 37, "key 'iters' value 6148914691236517204 is too large (at most 1000000)",
			  NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, warmup: 9223372036854775807}\n",
			  2, 38, "key 'warmup' value 9223372036854775807 is too large", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 2147483648}\n", 2, 27,
			  "key 'size' value 2147483648 is too large (at most 2147483647)", NULL);
	check_parse_error("models:\n  big: {d_model: 4294967296, d_ff: 8, num_layers: 1, num_heads: 1}\n"
			  "benchmarks:\n  - {suite: e2e, model: big, context_length: 8}\n",
			  2, 18, "key 'd_model' of model 'big' must be >= 1 and at most 2147483647", NULL);
	/* each value within its limit, their product not */
	check_expand_error("benchmarks:\n  - {suite: attention, impl: naive, batch_size: 2147483647, "
			   "heads: 2147483647, seq_len: 2147483647, head_dim: 16}\n",
			   2, 5, "the case is too large: Q (batch_size x heads x seq_len x head_dim)",
			   NULL);
	check_expand_error("benchmarks:\n  - {suite: attention, impl: naive, seq_len: 2147483647, "
			   "head_dim: 1}\n",
			   2, 5, "the case is too large: the scores", NULL);
	check_expand_error("benchmarks:\n  - {suite: e2e, model: small, batch_size: 2147483647, "
			   "context_length: 2147483647}\n",
			   2, 5, "the case is too large: the activations", NULL);
	check_expand_error("benchmarks:\n  - {suite: matmul, m: 2147483647, n: 2147483647, k: 1}\n",
			   2, 5, "the case is too large: a matrix", NULL);
	/* every tensor within the limit, the layers' activations together not: the memory sums
	 * wrapped (runner list: "memory -4762926105419055100 B", no expect oom; the oom reason
	 * "needs -4762926105419055100 bytes") */
	check_expand_error("models:\n  huge: {d_model: 65536, d_ff: 65536, num_layers: 1000000, "
			   "num_heads: 512, vocab_size: 1000}\n"
			   "benchmarks:\n  - {suite: e2e, model: huge, context_length: 65536, "
			   "batch_size: 64, attention: flash}\n",
			   4, 5, "the case is too large: the model's memory", NULL);
	/* the limits themselves are accepted */
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n  - {suite: matmul, size: 8, warmup: 1000000, "
				    "iters: 1000000}\n", &cases);
	assert_int_equal(cases.items[0].params.iters, 1000000);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__empty_axis_is_an_error(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n"
			  "  - suite: attention\n"
			  "    impl: flash\n"
			  "    head_dim: 64\n"
			  "    seq_len: []\n",
			  5, 14, "key 'seq_len' has an empty list of values", NULL);
	check_parse_error("benchmarks:\n"
			  "  - suite: attention\n"
			  "    axes:\n"
			  "      impl: []\n",
			  4, 13, "key 'impl' has an empty list of values", NULL);
}

static void test_sweep__impossible_values_are_errors(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n  - {suite: e2e, model: small, context_length: 8, batch_size: 0}\n",
			  2, 63, "key 'batch_size' must be >= 1, got 0", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, m: 8, n: 0, k: 8}\n",
			  2, 30, "key 'n' must be >= 1, got 0", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, iters: 0}\n",
			  2, 37, "key 'iters' must be >= 1, got 0", NULL);
	check_parse_error("benchmarks:\n  - {suite: attention, impl: naive, seq_len: 8, head_dim: [8, 16, 8]}\n",
			  2, 67, "key 'head_dim' lists the value 8 twice (first at line 2, column 60)", NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: [1000, 1024], mem_limit: [1KiB, 1024]}\n",
			  2, 59, "key 'mem_limit' lists the value 1024 twice", NULL);
	/* a limit that rounds down to 0 bytes would be no limit at all */
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, mem_limit: 0.0004KB}\n",
			  2, 41, "key 'mem_limit' value 0.0004KB rounds down to 0 bytes, which means no "
			  "limit", NULL);
	struct sweep_cases cases;
	struct sweep *s = expand_ok("benchmarks:\n  - {suite: matmul, size: 8, mem_limit: 0.0KiB}\n",
				    &cases);
	assert_int_equal(cases.items[0].params.mem_limit, 0);   /* a zero written as zero */
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__model_heads_must_divide_d_model(void **state)
{
	(void)state;
	struct sweep *s = (struct sweep *)(uintptr_t)1;
	struct bd_error err;
	/* reported at the use of the model */
	assert_int_equal(sweep_load(fixture_path("bad_model_heads.yaml"), &s, &err), BD_EINVAL);
	assert_null(s);
	assert_int_equal(err.line, 5);
	assert_int_equal(err.column, 20);
	assert_contains(err.msg, "model 'mini' has num_heads 3 which does not divide d_model 256");

	/* an unused preset: at its num_heads */
	check_parse_error("models:\n"
			  "  odd: {d_model: 96, d_ff: 8, num_layers: 1, num_heads: 32}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  2, 57, "model 'odd' has head dimension d_model/num_heads = 3, which must be even", NULL);
}

static void test_sweep__model_definitions_are_checked(void **state)
{
	(void)state;
	check_parse_error("models:\n"
			  "  small: {d_model: 8, d_ff: 8, num_layers: 1, num_heads: 1}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  2, 3, "model name 'small' is a built-in preset", NULL);
	check_parse_error("models:\n"
			  "  mini: {d_model: 8, d_ff: 8, num_layers: 1}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  2, 9, "model 'mini' is missing required key 'num_heads'", NULL);
	check_parse_error("models:\n"
			  "  mini: {d_model: 8, d_ff: 8, layers: 1, num_heads: 2}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  2, 31, "unknown key 'layers' for model 'mini' (valid: d_model, d_ff, num_layers, "
			  "num_heads, vocab_size)", NULL);
	check_parse_error("models:\n"
			  "  mini: {d_model: 8, d_ff: x, num_layers: 1, num_heads: 2}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  2, 28, "key 'd_ff' of model 'mini' expects a positive integer, got 'x'", NULL);
	check_parse_error("models:\n"
			  "  my model: {d_model: 8, d_ff: 8, num_layers: 1, num_heads: 2}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  2, 3, "model name 'my model' may only contain", NULL);
	/* a quoted empty name: its cases would have 'model=' in their key */
	check_parse_error("models:\n"
			  "  \"\": {d_model: 8, d_ff: 8, num_layers: 1, num_heads: 2}\n"
			  "benchmarks: [{suite: e2e, model: \"\", context_length: 8}]\n",
			  2, 3, "a model name is empty", NULL);
	check_parse_error("peers:\n"
			  "  '': {command: x, suite: matmul}\n"
			  "benchmarks: [{suite: matmul, impl: '', size: 8}]\n",
			  2, 3, "a peer name is empty", NULL);
}

static void test_sweep__missing_required_key_names_benchmark_and_suite(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n"
			  "  - {suite: matmul, size: 8}\n"
			  "  - suite: attention\n"
			  "    impl: flash\n"
			  "    head_dim: 64\n",
			  3, 5, "benchmark 2 (suite attention) is missing required key 'seq_len'", NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: attention, seq_len: 8, head_dim: 8}\n",
			  2, 5, "benchmark 1 (suite attention) is missing required key 'impl'", NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: e2e, context_length: 8}\n",
			  2, 5, "benchmark 1 (suite e2e) is missing required key 'model'", NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: matmul, m: 8, k: 8}\n",
			  2, 5, "benchmark 1 (suite matmul) is missing required key 'n' (give m, n and k, or size)",
			  NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: matmul, m: 8, n: 8, k: 8, size: 8}\n",
			  2, 39, "key 'size' cannot be combined with 'm'", NULL);
}

static void test_sweep__benchmarks_must_be_a_non_empty_list_of_mappings(void **state)
{
	(void)state;
	check_parse_error("name: x\ndescription: nothing\n", 1, 1, "missing required key 'benchmarks'", NULL);
	check_parse_error("name: x\nbenchmarks: []\n", 2, 13, "key 'benchmarks' has an empty list", NULL);
	check_parse_error("name: x\nbenchmarks:\n", 2, 12, "key 'benchmarks' expects a list of benchmarks, "
			  "got no value", NULL);
	check_parse_error("benchmarks:\n  suite: matmul\n", 2, 3,
			  "key 'benchmarks' expects a list of benchmarks, got a mapping", NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: matmul, size: 8}\n"
			  "  - matmul\n",
			  3, 5, "benchmark 2 must be a mapping with a 'suite' key, got a single value", NULL);
	check_parse_error("- suite: matmul\n", 1, 1, "a sweep file must be a mapping", "got a list", NULL);
	check_parse_error("# nothing here\n", 1, 1, "the sweep file is empty", NULL);
	check_parse_error("benchmarks: [{suite: matmul, size: 8}]\n---\nbenchmarks: []\n", 3, 1,
			  "one yaml document", NULL);
}

static void test_sweep__exclude_keys_must_be_parameters_of_the_suite(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n"
			  "  - suite: attention\n"
			  "    impl: [naive, sdpa]\n"
			  "    seq_len: 8\n"
			  "    head_dim: 8\n"
			  "    exclude:\n"
			  "      - {impl: sdpa, model: small}\n",
			  7, 22, "exclude key 'model' is not a parameter of suite attention (valid: impl, device, "
			  "dtype, pass, batch_size, heads, seq_len, head_dim, causal, warmup, iters, min_iters, "
			  "max_iters, max_time, target_rse, seed, mem_limit, sync, tf32)", NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: attention, impl: naive, seq_len: 8, head_dim: 8, exclude: [{impl: sdp}]}\n",
			  2, 79, "unknown impl 'sdp' for suite attention", "did you mean 'sdpa'?", NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: attention, impl: naive, seq_len: 8, head_dim: 8, exclude: [{}]}\n",
			  2, 72, "an exclude entry is empty", NULL);
	check_parse_error("benchmarks:\n"
			  "  - {suite: attention, impl: naive, seq_len: 8, head_dim: 8, exclude: sdpa}\n",
			  2, 71, "key 'exclude' expects a list of mappings", NULL);
}

static void test_sweep__duplicate_keys_are_errors(void **state)
{
	(void)state;
	check_parse_error("name: a\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n"
			  "name: b\n",
			  3, 1, "duplicate key 'name' (first given at line 1, column 1)", NULL);
	check_parse_error("benchmarks:\n"
			  "  - suite: attention\n"
			  "    impl: flash\n"
			  "    seq_len: 8\n"
			  "    head_dim: 8\n"
			  "    seq_len: 16\n",
			  6, 5, "duplicate key 'seq_len' (first given at line 4, column 5)", NULL);
	check_parse_error("benchmarks:\n"
			  "  - suite: attention\n"
			  "    seq_len: 8\n"
			  "    axes: {impl: [naive], seq_len: [8, 16]}\n"
			  "    head_dim: 8\n",
			  4, 27, "duplicate key 'seq_len' (first given at line 3, column 5)", NULL);
	check_parse_error("models:\n"
			  "  mini: {d_model: 8, d_ff: 8, num_layers: 1, num_heads: 2, d_ff: 9}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  2, 60, "duplicate key 'd_ff'", NULL);
}

/* A merge key is refused where it is, not reported as the keys it would have brought. */
static void test_sweep__merge_keys_are_errors(void **state)
{
	(void)state;
	check_parse_error("benchmarks:\n"
			  "  - &b {suite: attention, impl: naive, seq_len: 8, head_dim: 8}\n"
			  "  - {<<: *b, seq_len: 16}\n",
			  3, 6, "merge keys ('<<') are not supported", NULL);
	check_parse_error("defaults: &d {warmup: 1}\n"
			  "benchmarks:\n"
			  "  - {suite: matmul, size: 8, <<: *d}\n",
			  3, 30, "merge keys ('<<') are not supported", NULL);
	/* a quoted '<<' is a key like any other */
	check_parse_error("benchmarks: [{suite: matmul, size: 8, '<<': 1}]\n", 1, 39,
			  "unknown key '<<' for suite matmul", NULL);
}

static void test_sweep__defaults_are_checked(void **state)
{
	(void)state;
	check_parse_error("defaults: {warmup: 1, iter: 5}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  1, 23, "unknown key 'iter' in defaults (valid: impl, device,", "did you mean 'iters'?",
			  NULL);
	check_parse_error("defaults: {impl: flsh}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  1, 18, fmt("unknown impl 'flsh' (valid: %s)", valid_impls(NULL)), NULL);
	/* valid for attention, not for the e2e benchmark it is applied to */
	check_parse_error("defaults:\n"
			  "  impl: flash\n"
			  "benchmarks:\n"
			  "  - {suite: attention, seq_len: 8, head_dim: 8}\n"
			  "  - {suite: e2e, model: small, context_length: 8}\n",
			  2, 9, "unknown impl 'flash' for suite e2e (valid: benchdb)",
			  "set in defaults, applied to benchmark 2", NULL);
	check_parse_error("defaults: {size: 8, m: 4}\nbenchmarks: [{suite: matmul}]\n",
			  1, 12, "key 'size' cannot be combined with 'm'", NULL);
}

static void test_sweep__every_case_excluded_is_an_expand_error(void **state)
{
	(void)state;
	check_expand_error("benchmarks:\n"
			   "  - {suite: matmul, size: 8}\n"
			   "  - suite: attention\n"
			   "    impl: [naive, flash]\n"
			   "    seq_len: 8\n"
			   "    head_dim: 8\n"
			   "    exclude: [{seq_len: 8}]\n",
			   3, 5, "benchmark 2 (suite attention): every case is excluded", NULL);
}

/* An exclude whose values no case takes together (a typo'd value within the valid set, a stale
 * entry) dropped nothing, silently: the case it was meant to drop ran. */
static void test_sweep__an_exclude_that_matches_no_case_is_an_expand_error(void **state)
{
	(void)state;
	const char *msg = "this exclude matches no case of benchmark 1 (suite attention): no case "
			  "takes all of its values together (see `runner list` without it), or "
			  "remove it";
	check_expand_error("benchmarks:\n"
			   "  - suite: attention\n"
			   "    impl: [naive, flash]\n"
			   "    seq_len: [64, 128]\n"
			   "    head_dim: 8\n"
			   "    exclude:\n"
			   "      - {impl: flash, seq_len: 64}\n"
			   "      - {impl: naive, seq_len: 256}\n",
			   8, 9, msg, NULL);
	/* the second of two on one line: named by its column (impl flash is valid, not an axis value) */
	check_expand_error("benchmarks:\n"
			   "  - suite: attention\n"
			   "    impl: naive\n"
			   "    seq_len: [64, 128]\n"
			   "    head_dim: [8, 16]\n"
			   "    exclude: [{seq_len: 64, head_dim: 8}, {impl: flash}]\n",
			   6, 43, msg, NULL);
	/* one list written once (an anchor) and given to two benchmarks is one entry: it must drop
	 * a case of one of them, not of each */
	struct sweep *sw = NULL;
	struct sweep_cases cases = {0};
	struct bd_error err;
	const char *shared = "benchmarks:\n"
			     "  - suite: attention\n"
			     "    impl: [naive, flash]\n"
			     "    seq_len: [64, 128]\n"
			     "    head_dim: 8\n"
			     "    exclude: &ex [{impl: naive, seq_len: 128}, {impl: flash, head_dim: 8}]\n"
			     "  - {suite: attention, impl: naive, seq_len: [64, 128], head_dim: 8, "
			     "exclude: *ex}\n";
	assert_int_equal(sweep_parse("shared.yaml", shared, &sw, &err), 0);
	assert_int_equal(sweep_expand(sw, &cases, &err), 0);
	assert_int_equal(cases.n, 2);   /* naive S64 in each */
	sweep_cases_free(&cases);
	sweep_free(sw);
}

/* A value of an exclude's list that drops no case, where its other values do: seq_len: [128, 265]
 * dropped the 128 cases and the 265 typo went unremarked (the 256 case it meant ran). Named at
 * its own line and column. */
static void test_sweep__an_exclude_value_that_drops_no_case_is_an_expand_error(void **state)
{
	(void)state;
	check_expand_error("benchmarks:\n"
			   "  - suite: attention\n"
			   "    impl: [naive, flash]\n"
			   "    seq_len: [128, 256]\n"
			   "    head_dim: 8\n"
			   "    exclude:\n"
			   "      - {impl: naive, seq_len: [128, 265]}\n",
			   7, 38, "exclude value '265' of 'seq_len' drops no case of benchmark 1 (suite "
			   "attention): no case has it together with the entry's other values", NULL);
	/* a value valid alone that no case has with the entry's other values: flash has no 256 */
	check_expand_error("benchmarks:\n"
			   "  - suite: attention\n"
			   "    impl: [naive, flash]\n"
			   "    seq_len: [128, 256]\n"
			   "    head_dim: 8\n"
			   "    exclude:\n"
			   "      - {impl: flash, seq_len: 256}\n"
			   "      - {impl: [naive, flash], seq_len: 128, head_dim: [8, 16]}\n",
			   8, 60, "exclude value '16' of 'head_dim' drops no case", NULL);
	/* every value used: the two entries drop 3 of 4 cases */
	struct sweep_cases cases;
	struct sweep *sw = expand_ok("benchmarks:\n"
				     "  - suite: attention\n"
				     "    impl: [naive, flash]\n"
				     "    seq_len: [128, 256]\n"
				     "    head_dim: 8\n"
				     "    exclude: [{impl: [naive, flash], seq_len: 128}, {impl: flash}]\n",
				     &cases);
	assert_int_equal(cases.n, 1);
	sweep_cases_free(&cases);
	sweep_free(sw);
	/* a value of an entry given to two benchmarks (an alias) must drop a case of one of them:
	 * 64 drops the first's naive S64, 128 only the second's */
	sw = expand_ok("benchmarks:\n"
		       "  - suite: attention\n"
		       "    impl: naive\n"
		       "    seq_len: [64, 32]\n"
		       "    head_dim: 8\n"
		       "    exclude: &ex [{seq_len: [64, 128]}]\n"
		       "  - {suite: attention, impl: naive, seq_len: [128, 32], head_dim: 8, "
		       "exclude: *ex}\n", &cases);
	assert_int_equal(cases.n, 2);   /* S32 in each */
	sweep_cases_free(&cases);
	sweep_free(sw);
}

/* ---- peers ---------------------------------------------------------------------------------- */

static void test_sweep__peer_parameters_are_axes_of_their_peers_cases_only(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("peers:\n"
				    "  tsdpa:\n"
				    "    command: sh t.sh\n"
				    "    suite: attention\n"
				    "    persistent: true\n"
				    "    check: required\n"
				    "    params:\n"
				    "      backend: {values: [auto, flash, math]}\n"
				    "      rank: {type: int, default: 0}\n"
				    "      compile: {type: bool, default: false}\n"
				    "defaults: {compile: true}\n"
				    "benchmarks:\n"
				    "  - suite: attention\n"
				    "    impl: [flash, tsdpa]\n"
				    "    backend: [auto, math]\n"
				    "    rank: [0, 08]\n"
				    "    seq_len: [16, 32]\n"
				    "    head_dim: 8\n"
				    "    exclude: [{backend: math, seq_len: 32}]\n",
				    &cases);
	const struct sweep_peer *peer = &s->peers[0];
	assert_true(peer->persistent);
	assert_true(peer->check_required);
	assert_false(peer->whole);   /* paced in its shape's rounds unless interleave: false */
	assert_int_equal(peer->nparams, 3);
	assert_string_equal(peer->params[0].def, "auto");   /* the first value */
	assert_int_equal(peer->params[1].type, PEER_PARAM_INT);
	assert_string_equal(peer->params[2].def, "false");
	/* flash: its 2 shapes once (backend and rank are not its own); tsdpa: 2 x 2 x 2 - 2 */
	assert_int_equal(cases.n, 2 + 6);
	assert_string_equal(cases.items[0].key, "suite=attention impl=flash device=cpu dtype=float32 "
			    "pass=forward_backward batch_size=8 heads=1 seq_len=16 head_dim=8 causal=false");
	assert_int_equal(cases.items[0].npeer_params, 0);
	assert_null(strstr(cases.items[1].params_json, "backend"));
	const struct sweep_case *c = &cases.items[2 + 2];   /* tsdpa auto, rank 8, S16 */
	assert_ptr_equal(c->peer, peer);
	assert_int_equal(c->npeer_params, 3);   /* by name: backend, compile, rank */
	assert_string_equal(c->peer_params[0].def->name, "backend");
	assert_string_equal(c->peer_params[1].value, "true");   /* from defaults */
	assert_string_equal(c->peer_params[2].value, "8");      /* 08, canonical */
	assert_string_equal(c->key, "suite=attention impl=tsdpa device=cpu dtype=float32 "
			    "pass=forward_backward batch_size=8 heads=1 seq_len=16 head_dim=8 causal=false "
			    "backend=auto compile=true rank=8");
	assert_string_equal(c->params_json,
			    "{\"backend\":\"auto\",\"batch_size\":8,\"causal\":false,\"compile\":true,"
			    "\"device\":\"cpu\",\"dtype\":\"float32\",\"head_dim\":8,\"heads\":1,"
			    "\"impl\":\"tsdpa\",\"iters\":10,\"mem_limit\":0,\"pass\":\"forward_backward\","
			    "\"rank\":8,\"seed\":0,\"seq_len\":16,\"suite\":\"attention\",\"sync\":true,"
			    "\"tf32\":false,\"warmup\":2}");
	assert_string_equal(c->name, "tsdpa float32 fwd+bwd B8 H1 S16 D8 compile=true rank=8");
	/* the exclude dropped backend=math at S32 only */
	for (size_t i = 2; i < cases.n; i++)
		assert_false(strstr(cases.items[i].key, "backend=math") &&
			     cases.items[i].params.seq_len == 32);
	sweep_cases_free(&cases);
	sweep_free(s);

	/* the same parameter name in two peers: each checked against its own values */
	check_parse_error("peers:\n"
			  "  a: {command: x, suite: attention, params: {backend: {values: [flash]}}}\n"
			  "  b: {command: x, suite: attention, params: {backend: {values: [math]}}}\n"
			  "benchmarks: [{suite: attention, impl: [a, b], backend: flash, seq_len: 8, "
			  "head_dim: 8}]\n",
			  4, 56, "value 'flash' of key 'backend' for peer b: not one of its values (valid: "
			  "math)", NULL);
}

/* An exclude's value of a peer parameter is checked like a built-in one's: a typo would match no
 * case, and the cases it was meant to drop would run. */
static void test_sweep__peer_parameter_excludes_are_checked(void **state)
{
	(void)state;
	const char *head = "peers:\n"
			   "  a: {command: x, suite: attention, params: {backend: {values: [flash, math]}, "
			   "rank: {type: int, default: 0}}}\n"
			   "  b: {command: x, suite: attention, params: {backend: {values: [auto]}}}\n"
			   "benchmarks:\n"
			   "  - {suite: attention, impl: [a, b], seq_len: 8, head_dim: 8,\n"
			   "     exclude: ";
	check_parse_error(fmt("%s{backend: mth}}\n", head), 6, 25, "exclude value 'mth' of key "
			  "'backend' is not a value of it for any peer of benchmark 1 (valid: a: flash, "
			  "math; b: auto)", NULL);
	check_parse_error(fmt("%s{rank: x1}}\n", head), 6, 22, "exclude value 'x1' of key 'rank'",
			  "a: an integer >= 0", NULL);
	check_parse_error(fmt("%s{rank: [1, 01]}}\n", head), 6, 26, "key 'rank' lists the value 1 "
			  "twice (first at line 6, column 23)", NULL);
	check_parse_error("peers:\n"
			  "  a: {command: x, suite: attention, params: {backend: {values: [flash]}}}\n"
			  "benchmarks:\n"
			  "  - {suite: attention, impl: naive, seq_len: 8, head_dim: 8, "
			  "exclude: {backend: flash}}\n",
			  4, 72, "exclude key 'backend' is a parameter of no peer that benchmark 1 "
			  "(suite attention) runs", NULL);
	/* a value of one of the benchmark's peers is fine, and drops that peer's cases */
	struct sweep_cases cases;
	struct sweep *s = expand_ok(fmt("%s{backend: flash}}\n", head), &cases);
	assert_int_equal(cases.n, 1);   /* a's case (backend flash, its default) is dropped */
	assert_string_equal(cases.items[0].params.impl, "b");
	sweep_cases_free(&cases);
	sweep_free(s);
	/* an int is compared as an int: 00 is a's rank 0 (b has no rank, so it stays) */
	s = expand_ok(fmt("%s{rank: 00}}\n", head), &cases);
	assert_int_equal(cases.n, 1);
	assert_string_equal(cases.items[0].params.impl, "b");
	sweep_cases_free(&cases);
	sweep_free(s);
	/* ... and a rank no case has, beside it, drops nothing: named */
	check_expand_error(fmt("%s{rank: [5, 00]}}\n", head), 6, 23, "exclude value '5' of 'rank' "
			   "drops no case of benchmark 1", NULL);
}

static void test_sweep__peers_become_impls_of_their_suite(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("peers:\n"
				    "  pytorch: {command: \"python3 ../peers/pytorch_e2e.py\", suite: e2e}\n"
				    "  fake: {command: sh fake.sh, suite: attention, timeout: 5}\n"
				    "benchmarks:\n"
				    "  - {suite: e2e, impl: [benchdb, pytorch], model: small, context_length: 128}\n"
				    "  - {suite: attention, impl: [naive, fake], seq_len: 64, head_dim: 16}\n",
				    &cases);
	assert_int_equal(s->npeers, 2);
	assert_string_equal(s->peers[0].name, "pytorch");
	assert_string_equal(s->peers[0].command, "python3 ../peers/pytorch_e2e.py");
	assert_string_equal(s->peers[0].suite, "e2e");
	assert_int_equal(s->peers[0].timeout_s, SWEEP_PEER_TIMEOUT_S);
	assert_int_equal(s->peers[0].line, 2);
	assert_int_equal(s->peers[0].column, 3);
	assert_int_equal(s->peers[1].timeout_s, 5);
	assert_int_equal(cases.n, 4);
	assert_null(cases.items[0].peer);
	assert_ptr_equal(cases.items[1].peer, &s->peers[0]);
	assert_null(cases.items[2].peer);
	assert_ptr_equal(cases.items[3].peer, &s->peers[1]);
	/* keys, JSON and names work as for any impl */
	assert_string_equal(cases.items[1].params.impl, "pytorch");
	assert_string_equal(cases.items[1].key,
			    "suite=e2e impl=pytorch device=cpu dtype=float32 pass=train_step model=small "
			    "d_model=768 d_ff=3072 num_layers=12 num_heads=12 vocab_size=10000 "
			    "context_length=128 batch_size=4 attention=naive");
	assert_non_null(strstr(cases.items[1].params_json, "\"impl\":\"pytorch\""));
	assert_string_equal(cases.items[0].name, "e2e small float32 train_step ctx128 B4");
	assert_string_equal(cases.items[1].name, "e2e pytorch small float32 train_step ctx128 B4");
	assert_string_equal(cases.items[3].name, "fake float32 fwd+bwd B8 H1 S64 D16");
	sweep_cases_free(&cases);
	sweep_free(s);

	/* a peer in defaults, exclude and axes; peers may come after benchmarks */
	s = expand_ok("defaults: {impl: fake}\n"
		      "benchmarks:\n"
		      "  - suite: attention\n"
		      "    axes: {impl: [fake, flash], seq_len: [8, 16]}\n"
		      "    head_dim: 8\n"
		      "    exclude: [{impl: fake, seq_len: 16}]\n"
		      "  - {suite: attention, seq_len: 8, head_dim: 8}\n"
		      "peers:\n"
		      "  fake: {suite: attention, command: ./fake}\n",
		      &cases);
	assert_int_equal(cases.n, 4);
	assert_string_equal(cases.items[0].params.impl, "fake");
	assert_non_null(cases.items[0].peer);
	assert_string_equal(cases.items[1].params.impl, "flash");
	assert_null(cases.items[1].peer);
	assert_string_equal(cases.items[3].params.impl, "fake");
	assert_non_null(cases.items[3].peer);
	sweep_cases_free(&cases);
	sweep_free(s);

	s = parse_ok("peers: {}\nbenchmarks: [{suite: matmul, size: 8}]\n");
	assert_int_equal(s->npeers, 0);
	sweep_free(s);
}

static void test_sweep__peer_entries_are_checked(void **state)
{
	(void)state;
	const char *bench = "benchmarks: [{suite: matmul, size: 8}]\n";
	char text[512];
#define PEER_ERROR(yaml, line, column, ...)                                                       \
	do {                                                                                      \
		snprintf(text, sizeof(text), "%s%s", yaml, bench);                               \
		check_parse_error(text, line, column, __VA_ARGS__, NULL);                          \
	} while (0)
	PEER_ERROR("peers: [pytorch]\n", 1, 8,
		   "key 'peers' expects a mapping of peer name to {command, suite, timeout, persistent, check, interleave, params}, got a list");
	PEER_ERROR("peers:\n  p: python3 x.py\n", 2, 6,
		   "peer 'p' expects a mapping with keys command, suite, timeout, persistent, check, interleave, params, got a single value");
	PEER_ERROR("peers:\n  p: {command: x, suite: e2e, comand: y}\n", 2, 31,
		   "unknown key 'comand' for peer 'p' (valid: command, suite, timeout, persistent, check, interleave, params)",
		   "did you mean 'command'?");
	PEER_ERROR("peers:\n  p: {suite: e2e}\n", 2, 6,
		   "peer 'p' is missing required key 'command' (the shell command that runs it)");
	PEER_ERROR("peers:\n  p: {command: x}\n", 2, 6,
		   "peer 'p' is missing required key 'suite' (valid: attention, e2e, matmul)");
	PEER_ERROR("peers:\n  p: {command: \"  \", suite: e2e}\n", 2, 16, "key 'command' of peer 'p' is empty");
	PEER_ERROR("peers:\n  p: {command: , suite: e2e}\n", 2, 16,
		   "key 'command' of peer 'p' expects a shell command, got no value");
	PEER_ERROR("peers:\n  p: {command: [a, b], suite: e2e}\n", 2, 16,
		   "key 'command' of peer 'p' expects a shell command, got a list");
	PEER_ERROR("peers:\n  p: {command: x, suite: e2d}\n", 2, 26,
		   "unknown suite 'e2d' for peer 'p' (valid: attention, e2e, matmul)", "did you mean 'e2e'?");
	PEER_ERROR("peers:\n  p: {command: x, suite: e2e, interleave: maybe}\n", 2, 43,
		   "key 'interleave' of peer 'p' expects true or false, got 'maybe'");
	PEER_ERROR("peers:\n  p: {command: x, suite: e2e, timeout: 1.5}\n", 2, 40,
		   "key 'timeout' of peer 'p' expects a positive integer (seconds), got '1.5'");
	PEER_ERROR("peers:\n  p: {command: x, suite: e2e, timeout: 0}\n", 2, 40,
		   "key 'timeout' of peer 'p' must be >= 1, got 0");
	PEER_ERROR("peers:\n  p: {command: x, suite: e2e, timeout: 99999999999}\n", 2, 40,
		   "key 'timeout' of peer 'p' value 99999999999 is too large (at most 9223372036 seconds)");
	/* names: not a built-in impl of any suite, a short identifier, not repeated */
	PEER_ERROR("peers:\n  flash: {command: x, suite: e2e}\n", 2, 3,
		   fmt("peer name 'flash' is a built-in impl (built-in: %s); choose another name",
		       valid_impls(NULL)));
	PEER_ERROR("peers:\n  py torch: {command: x, suite: e2e}\n", 2, 3,
		   "peer name 'py torch' may only contain letters, digits, '.', '_' and '-'");
	PEER_ERROR("peers:\n  a_peer_name_that_is_far_too_long_: {command: x, suite: e2e}\n", 2, 3,
		   "peer name 'a_peer_name_that_is_far_too_long_' is too long (at most 31 characters)");
	PEER_ERROR("peers:\n  p: {command: x, suite: e2e}\n  p: {command: y, suite: e2e}\n", 3, 3,
		   "duplicate key 'p' (first given at line 2, column 3)");
#undef PEER_ERROR
}

static void test_sweep__peer_impls_are_valid_only_in_their_suite(void **state)
{
	(void)state;
	/* the valid choices list the suite's peers; a typo of one is suggested */
	check_parse_error("peers:\n"
			  "  fake: {command: x, suite: attention}\n"
			  "benchmarks:\n"
			  "  - {suite: attention, impl: faek, seq_len: 8, head_dim: 8}\n",
			  4, 30, fmt("unknown impl 'faek' for suite attention (valid: %s, fake)",
				     valid_impls("attention")),
			  "did you mean 'fake'?", NULL);
	/* a peer of another suite says so */
	check_parse_error("peers:\n"
			  "  pytorch: {command: x, suite: e2e}\n"
			  "benchmarks:\n"
			  "  - {suite: attention, impl: [naive, pytorch], seq_len: 8, head_dim: 8}\n",
			  4, 38, fmt("unknown impl 'pytorch' for suite attention (valid: %s); 'pytorch' is a "
				     "peer of suite e2e", valid_impls("attention")), NULL);
	/* a default impl: any suite's peers are valid names, each benchmark checks its own */
	check_parse_error("peers:\n"
			  "  pytorch: {command: x, suite: e2e}\n"
			  "defaults: {impl: pytorc}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  3, 18, fmt("unknown impl 'pytorc' (valid: %s, pytorch)", valid_impls(NULL)),
			  "did you mean 'pytorch'?", NULL);
	check_parse_error("peers:\n"
			  "  pytorch: {command: x, suite: e2e}\n"
			  "defaults: {impl: pytorch}\n"
			  "benchmarks: [{suite: matmul, size: 8}]\n",
			  3, 18, "unknown impl 'pytorch' for suite matmul (valid: onednn, cublaslt)",
			  "set in defaults, applied to benchmark 1", NULL);
	/* a benchmark that uses a peer defined nowhere */
	check_parse_error("benchmarks:\n  - {suite: e2e, impl: pytorch, model: small, context_length: 8}\n",
			  2, 24, "unknown impl 'pytorch' for suite e2e (valid: benchdb)", NULL);
}

/* ---- iters: auto ------------------------------------------------------------------------------ */

static void test_sweep__iters_auto_with_its_stopping_rule(void **state)
{
	(void)state;
	struct sweep_cases cases;
	struct sweep *s = expand_ok("defaults: {iters: auto, target_rse: 0.0025, max_time: 30}\n"
				    "benchmarks:\n"
				    "  - {suite: matmul, size: 16, min_iters: 20, max_iters: 500}\n"
				    "  - {suite: matmul, size: 16, iters: 10}\n"
				    "  - {suite: matmul, size: 32, max_time: 1.5, target_rse: 5e-3}\n", &cases);
	assert_int_equal(cases.n, 3);
	const struct case_params *a = &cases.items[0].params, *c = &cases.items[2].params;
	assert_int_equal(a->iters, ITERS_AUTO);
	assert_int_equal(a->min_iters, 20);
	assert_int_equal(a->max_iters, 500);
	assert_true(a->max_time == 30 && a->target_rse == 0.0025);
	assert_int_equal(c->min_iters, 10);        /* built-in defaults */
	assert_int_equal(c->max_iters, 10000);
	assert_true(c->max_time == 1.5 && c->target_rse == 0.005);
	/* the stopping rule is in the params JSON of an auto case, and only there */
	assert_string_equal(cases.items[0].params_json,
			    "{\"device\":\"cpu\",\"dtype\":\"float32\",\"impl\":\"onednn\",\"iters\":\"auto\","
			    "\"k\":16,\"m\":16,\"max_iters\":500,\"max_time\":30,\"mem_limit\":0,"
			    "\"min_iters\":20,\"n\":16,\"pass\":\"forward\",\"seed\":0,\"suite\":\"matmul\","
			    "\"sync\":true,\"target_rse\":0.0025,\"tf32\":false,\"warmup\":2}");
	assert_string_equal(cases.items[1].params_json,
			    "{\"device\":\"cpu\",\"dtype\":\"float32\",\"impl\":\"onednn\",\"iters\":10,"
			    "\"k\":16,\"m\":16,\"mem_limit\":0,\"n\":16,\"pass\":\"forward\",\"seed\":0,"
			    "\"suite\":\"matmul\",\"sync\":true,\"tf32\":false,\"warmup\":2}");
	assert_non_null(strstr(cases.items[2].params_json, "\"max_time\":1.5,"));
	assert_non_null(strstr(cases.items[2].params_json, "\"target_rse\":0.005,"));
	/* the key names what is measured, not for how long: auto and 10 iterations compare */
	assert_string_equal(cases.items[0].key, cases.items[1].key);
	assert_string_equal(cases.items[0].name, cases.items[1].name);
	sweep_cases_free(&cases);
	sweep_free(s);

	/* iters as an axis of a count and auto */
	s = expand_ok("benchmarks: [{suite: matmul, size: 8, iters: [5, auto], max_time: 2}]\n", &cases);
	assert_int_equal(cases.n, 2);
	assert_int_equal(cases.items[0].params.iters, 5);
	assert_int_equal(cases.items[1].params.iters, ITERS_AUTO);
	assert_true(cases.items[1].params.max_time == 2);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void test_sweep__iters_auto_values_are_checked(void **state)
{
	(void)state;
	static const char *const head = "benchmarks:\n  - {suite: matmul, size: 8, iters: auto, ";
	check_parse_error(fmt("%starget_rse: 0}\n", head), 2, 55,
			  "key 'target_rse' must be > 0 and < 1, got 0", NULL);
	check_parse_error(fmt("%starget_rse: 1}\n", head), 2, 55,
			  "key 'target_rse' must be > 0 and < 1, got 1", NULL);
	check_parse_error(fmt("%starget_rse: 1.5}\n", head), 2, 55,
			  "key 'target_rse' must be > 0 and < 1, got 1.5", NULL);
	check_parse_error(fmt("%starget_rse: 0.5%%}\n", head), 2, 55,
			  "key 'target_rse' expects a number between 0 and 1 (a decimal number such as 0.5 or "
			  "5e-3), got '0.5%'", NULL);
	check_parse_error(fmt("%smax_time: 0}\n", head), 2, 53,
			  "key 'max_time' must be > 0 and at most 86400 seconds, got 0", NULL);
	check_parse_error(fmt("%smax_time: -1}\n", head), 2, 53,
			  "key 'max_time' expects a number of seconds", "got '-1'", NULL);
	check_parse_error(fmt("%smax_time: 1e400}\n", head), 2, 53,
			  "key 'max_time' must be > 0 and at most 86400 seconds, got 1e400", NULL);
	check_parse_error(fmt("%smax_time: nan}\n", head), 2, 53, "got 'nan'", NULL);
	check_parse_error(fmt("%smin_iters: 0}\n", head), 2, 54, "key 'min_iters' must be >= 1, got 0",
			  NULL);
	check_parse_error(fmt("%smax_iters: 1000001}\n", head), 2, 54,
			  "key 'max_iters' value 1000001 is too large (at most 1000000)", NULL);
	check_parse_error("benchmarks: [{suite: matmul, size: 8, iters: aut}]\n", 1, 46,
			  "key 'iters' expects a positive integer or auto, got 'aut'", NULL);
	check_parse_error("benchmarks: [{suite: matmul, size: 8, iters: 0}]\n", 1, 46,
			  "key 'iters' must be >= 1, got 0", NULL);
	/* min_iters beyond the cap: the value given, else the cap */
	check_expand_error(fmt("%smin_iters: 50, max_iters: 20}\n", head), 2, 54,
			   "min_iters 50 is more than max_iters 20", "min_iters <= max_iters <= 1000000",
			   NULL);
	check_expand_error(fmt("%smax_iters: 5}\n", head), 2, 54,
			   "min_iters 10 is more than max_iters 5", NULL);
	check_expand_error(fmt("%smin_iters: [5, 50], max_iters: 20}\n", head), 2, 58,
			   "min_iters 50 is more than max_iters 20", NULL);
}

static void test_sweep__stopping_keys_need_iters_auto(void **state)
{
	(void)state;
	static const char *const keys = "the keys of iters: auto: min_iters, max_iters, max_time, "
					"target_rse";
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, iters: 50, min_iters: 20}\n", 2, 41,
			  "key 'min_iters' applies only to iters: auto, and benchmark 1 has iters 50",
			  "set iters: auto, or drop 'min_iters'", keys, NULL);
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, target_rse: 0.01}\n", 2, 30,
			  "key 'target_rse' applies only to iters: auto, and benchmark 1 has iters 10 (the "
			  "default)", keys, NULL);
	/* in defaults: given to the benchmarks whose iters may be auto, and an error when none is */
	check_parse_error("defaults: {max_time: 5}\nbenchmarks: [{suite: matmul, size: 8}]\n", 1, 12,
			  "key 'max_time' in defaults applies only to iters: auto, and no benchmark has "
			  "iters: auto", keys, NULL);
	struct sweep_cases cases;
	struct sweep *s = expand_ok("defaults: {max_time: 5}\n"
				    "benchmarks:\n"
				    "  - {suite: matmul, size: 8, iters: 20}\n"
				    "  - {suite: matmul, size: 8, iters: auto}\n", &cases);
	assert_null(strstr(cases.items[0].params_json, "max_time"));
	assert_true(cases.items[1].params.max_time == 5);
	sweep_cases_free(&cases);
	sweep_free(s);
	/* an axis of them beside a fixed count would repeat the fixed-count cases */
	check_parse_error("benchmarks:\n  - {suite: matmul, size: 8, iters: [20, auto], "
			  "target_rse: [0.01, 0.02]}\n", 2, 49,
			  "key 'target_rse' is an axis, but benchmark 1's iters also has a fixed count", keys,
			  NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep__axes_multiply_into_cases),
		cmocka_unit_test(test_sweep__sizes_beyond_the_limits_are_errors),
		cmocka_unit_test(test_sweep__exclude_drops_exactly_the_matching_cases),
		cmocka_unit_test(test_sweep__first_axis_varies_slowest),
		cmocka_unit_test(test_sweep__builtin_defaults_fill_unset_params),
		cmocka_unit_test(test_sweep__sweep_defaults_apply_and_benchmark_values_override_them),
		cmocka_unit_test(test_sweep__default_axis_multiplies_every_benchmark),
		cmocka_unit_test(test_sweep__peer_parameter_defaults_keep_the_mapping_order),
		cmocka_unit_test(test_sweep__axes_mapping_equals_inline_lists),
		cmocka_unit_test(test_sweep__design_example_expands_to_160_cases),
		cmocka_unit_test(test_sweep__documented_example_expands_as_documented),
		cmocka_unit_test(test_sweep__keys_ignore_measurement_settings_across_files),
		cmocka_unit_test(test_sweep__keys_differ_when_a_workload_param_differs),
		cmocka_unit_test(test_sweep__key_format_per_suite),
		cmocka_unit_test(test_sweep__params_json_is_canonical_and_sorted),
		cmocka_unit_test(test_sweep__case_names_are_short_labels),
		cmocka_unit_test(test_sweep__preset_models_fill_case_params),
		cmocka_unit_test(test_sweep__custom_models_and_vocab_override),
		cmocka_unit_test(test_sweep__param_counts_of_all_presets_match_design),
		cmocka_unit_test(test_sweep__matmul_size_sets_m_n_k),
		cmocka_unit_test(test_sweep__parse_bytes_accepts_integers_and_units),
		cmocka_unit_test(test_sweep__stores_text_hash_and_name),
		cmocka_unit_test(test_sweep__free_functions_accept_null),
		cmocka_unit_test(test_sweep__missing_file_is_an_io_error_with_the_reason),
		cmocka_unit_test(test_sweep__yaml_syntax_error_names_problem_and_position),
		cmocka_unit_test(test_sweep__unknown_top_level_key_lists_valid_keys),
		cmocka_unit_test(test_sweep__unknown_param_key_lists_suite_keys_and_suggests),
		cmocka_unit_test(test_sweep__unknown_suite_lists_suites),
		cmocka_unit_test(test_sweep__unknown_impl_lists_impls_of_the_suite),
		cmocka_unit_test(test_sweep__unknown_dtype_device_pass_attention),
		cmocka_unit_test(test_sweep__unknown_model_lists_presets_and_user_models),
		cmocka_unit_test(test_sweep__wrong_types_name_the_expected_type),
		cmocka_unit_test(test_sweep__empty_axis_is_an_error),
		cmocka_unit_test(test_sweep__impossible_values_are_errors),
		cmocka_unit_test(test_sweep__model_heads_must_divide_d_model),
		cmocka_unit_test(test_sweep__model_definitions_are_checked),
		cmocka_unit_test(test_sweep__missing_required_key_names_benchmark_and_suite),
		cmocka_unit_test(test_sweep__benchmarks_must_be_a_non_empty_list_of_mappings),
		cmocka_unit_test(test_sweep__exclude_keys_must_be_parameters_of_the_suite),
		cmocka_unit_test(test_sweep__duplicate_keys_are_errors),
		cmocka_unit_test(test_sweep__merge_keys_are_errors),
		cmocka_unit_test(test_sweep__defaults_are_checked),
		cmocka_unit_test(test_sweep__every_case_excluded_is_an_expand_error),
		cmocka_unit_test(test_sweep__an_exclude_that_matches_no_case_is_an_expand_error),
		cmocka_unit_test(test_sweep__peer_parameter_excludes_are_checked),
		cmocka_unit_test(test_sweep__an_exclude_value_that_drops_no_case_is_an_expand_error),
		cmocka_unit_test(test_sweep__peers_become_impls_of_their_suite),
		cmocka_unit_test(test_sweep__peer_parameters_are_axes_of_their_peers_cases_only),
		cmocka_unit_test(test_sweep__peer_entries_are_checked),
		cmocka_unit_test(test_sweep__peer_impls_are_valid_only_in_their_suite),
		cmocka_unit_test(test_sweep__iters_auto_with_its_stopping_rule),
		cmocka_unit_test(test_sweep__iters_auto_values_are_checked),
		cmocka_unit_test(test_sweep__stopping_keys_need_iters_auto),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
