/* tests/test_params.c: common/params.h — the parameter table's case keys: built, parsed back
 * (key -> parse -> key on every key parameter of every suite), the malformed keys refused with a
 * message that quotes the problem; the params JSON, legend labels and report columns read from
 * the same rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "params.h"
#include "strbuf.h"

/* A value of d other than its default in suite (and other than zero), in canonical text. */
static void other_value(const struct param_def *d, enum suite_id suite, int salt, char out[64])
{
	const char *def = d->defaults[suite] ? d->defaults[suite] : "";
	switch (d->type) {
	case PT_TEXT: snprintf(out, 64, "x%d", salt); break;
	case PT_INT: snprintf(out, 64, "%d", 100 + salt); break;
	case PT_BOOL: snprintf(out, 64, "%s", strcmp(def, "true") ? "true" : "false"); break;
	case PT_DEVICE: snprintf(out, 64, "%s", strcmp(def, "cuda") ? "cuda" : "cpu"); break;
	case PT_DTYPE: snprintf(out, 64, "%s", strcmp(def, "bfloat16") ? "bfloat16" : "float16"); break;
	case PT_PASS: snprintf(out, 64, "%s", strcmp(def, "backward") ? "backward" : "forward"); break;
	default: out[0] = '\0'; break;
	}
}

/* Every key parameter of every suite, set away from its default, comes back from the key. */
static void test_params__key_parse_key_round_trip_on_every_parameter(void **state)
{
	(void)state;
	for (int s = 0; s < SUITE_COUNT; s++) {
		struct case_params p, back;
		struct bd_error err = {0};
		case_params_defaults(&p, (enum suite_id)s);
		int salt = 0;
		for (size_t i = 0; i < param_count; i++) {
			const struct param_def *d = &param_defs[i];
			char v[64];
			if (!(d->suites & SUITE_BIT(s)) || d->in_key == KEY_NO || !strcmp(d->key, "suite"))
				continue;
			other_value(d, (enum suite_id)s, salt++, v);
			assert_int_equal(param_set(&p, d, v, &err), 0);
		}
		char *key = case_key_build(&p);
		assert_non_null(key);
		if (case_key_parse(key, &back, &err))
			fail_msg("%s: %s", key, err.msg);
		for (size_t i = 0; i < param_count; i++) {
			const struct param_def *d = &param_defs[i];
			char want[64], have[64];
			if (!(d->suites & SUITE_BIT(s)) || d->in_key == KEY_NO)
				continue;
			param_format(&p, d, want);
			param_format(&back, d, have);
			assert_string_equal(have, want);
			char token[128];   /* every key parameter is in the key, non-defaults included */
			snprintf(token, sizeof(token), "%s=%s", d->key, want);
			if (!strstr(key, token))
				fail_msg("'%s' lacks %s", key, token);
		}
		char *again = case_key_build(&back);
		assert_string_equal(again, key);
		free(again);
		free(key);
	}
}

/* The keys databases already hold: the token order is key_rank's, not the table's. */
static void test_params__keys_are_the_stored_ones(void **state)
{
	(void)state;
	struct case_params p;
	struct bd_error err = {0};
	static const char *const keys[] = {
		"suite=attention impl=flash device=cpu dtype=float32 pass=forward_backward batch_size=8 "
		"heads=1 seq_len=128 head_dim=64 causal=false",
		"suite=e2e impl=benchdb device=cuda dtype=bfloat16 pass=train_step model=small d_model=768 "
		"d_ff=3072 num_layers=12 num_heads=12 vocab_size=10000 context_length=128 batch_size=4 "
		"attention=naive tf32=true",
		"suite=matmul impl=onednn device=cpu dtype=float32 pass=forward m=8 n=4 k=2 sync=false",
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (case_key_parse(keys[i], &p, &err))
			fail_msg("%s: %s", keys[i], err.msg);
		char *key = case_key_build(&p);
		assert_string_equal(key, keys[i]);
		free(key);
	}
	case_key_parse(keys[1], &p, &err);
	assert_string_equal(p.model.name, "small");
	assert_int_equal(p.model.d_ff, 3072);
	assert_int_equal(p.context_length, 128);
	assert_int_equal(p.tf32, 1);
	assert_int_equal(p.sync, 1);   /* not in the key: the default */
	assert_int_equal(p.dtype, DTYPE_BFLOAT16);
}

static void expect_bad_key(const char *key, const char *says)
{
	struct case_params p;
	struct bd_error err = {0};
	assert_int_equal(case_key_parse(key, &p, &err), BD_EINVAL);
	if (!strstr(err.msg, says))
		fail_msg("key '%s': message '%s' does not say '%s'", key, err.msg, says);
}

static void test_params__bad_keys_are_refused_with_the_reason(void **state)
{
	(void)state;
	const char *base = "suite=matmul impl=onednn device=cpu dtype=float32 pass=forward m=8 n=4";
	char key[256];
	expect_bad_key("", "does not start with suite=");
	expect_bad_key("impl=flash suite=attention", "does not start with suite=");
	expect_bad_key("suite=conv impl=x", "unknown suite 'conv'");
	snprintf(key, sizeof(key), "%s k", base);
	expect_bad_key(key, "token 'k' is not name=value");
	snprintf(key, sizeof(key), "%s =2", base);
	expect_bad_key(key, "token '=2' is not name=value");
	snprintf(key, sizeof(key), "%s k=2 m=9", base);
	expect_bad_key(key, "names 'm' twice");
	snprintf(key, sizeof(key), "%s k=2 flux=3", base);
	expect_bad_key(key, "'flux=3' is not a key parameter of suite matmul");
	snprintf(key, sizeof(key), "%s k=2 seq_len=3", base);
	expect_bad_key(key, "'seq_len=3' is not a key parameter of suite matmul");
	snprintf(key, sizeof(key), "%s k=2 warmup=3", base);   /* warm-up is never in a key */
	expect_bad_key(key, "'warmup=3' is not a key parameter");
	snprintf(key, sizeof(key), "%s k=two", base);
	expect_bad_key(key, "k 'two' is not a non-negative integer");
	snprintf(key, sizeof(key), "%s k=2 sync=maybe", base);
	expect_bad_key(key, "sync 'maybe' is not a boolean");
	expect_bad_key("suite=matmul impl=onednn device=tpu dtype=float32 pass=forward m=1 n=1 k=1",
		       "device 'tpu' is not a device");
	expect_bad_key(base, "lacks k=");
	struct key_token t[4];
	size_t n;
	struct bd_error err = {0};
	assert_int_equal(case_key_split("a=1 b=2 c=3 d=4 e=5", t, 4, &n, &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "more than 4 tokens"));
}

/* Tokens this build does not know (a newer database's) still split; only parse refuses them. */
static void test_params__split_keeps_unknown_tokens(void **state)
{
	(void)state;
	struct key_token t[CASE_KEY_MAX_TOKENS];
	size_t n = 0;
	assert_int_equal(case_key_split("suite=attention  flux=3 seq_len=8", t, CASE_KEY_MAX_TOKENS, &n,
					NULL), 0);
	assert_int_equal(n, 3);
	assert_null(t[1].def);
	assert_true(key_token_is(&t[1], "flux"));
	assert_int_equal(t[1].value_len, 1);
	assert_ptr_equal(t[2].def, param_find("seq_len"));
	char *dropped = case_key_drop("suite=attention flux=3 seq_len=8", "flux");
	assert_string_equal(dropped, "suite=attention seq_len=8");
	free(dropped);
}

static void test_params__json_has_every_parameter_of_the_suite(void **state)
{
	(void)state;
	struct case_params p;
	case_params_defaults(&p, SUITE_MATMUL);
	p.m = p.n = p.k = 8;
	char *json = case_params_json(&p);
	assert_string_equal(json, "{\"device\":\"cpu\",\"dtype\":\"float32\",\"impl\":\"onednn\","
			    "\"iters\":10,\"k\":8,\"m\":8,\"mem_limit\":0,\"n\":8,\"pass\":\"forward\","
			    "\"seed\":0,\"suite\":\"matmul\",\"sync\":true,\"tf32\":false,\"warmup\":2}");
	free(json);
}

static void test_params__labels_and_columns(void **state)
{
	(void)state;
	struct key_token t[CASE_KEY_MAX_TOKENS];
	size_t n = 0;
	assert_int_equal(case_key_split("impl=flash seq_len=1024 causal=false attention=sdpa tf32=true "
					"num_heads=12 flux=1", t, CASE_KEY_MAX_TOKENS, &n, NULL), 0);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		key_token_label(&sb, &t[i]);
	assert_string_equal(sb_str(&sb), "flash S1024 non-causal attn=sdpa tf32=true heads 12 flux=1");
	sb_free(&sb);

	const char *cols[9];
	param_columns("attention", cols, 9);
	static const char *const att[] = {"impl", "dtype", "device", "pass", "batch_size", "heads",
					  "seq_len", "head_dim", NULL};
	for (size_t i = 0; i < 9; i++)
		if (att[i] || cols[i])
			assert_string_equal(cols[i], att[i]);
	assert_int_equal(param_columns("e2e", cols, 9), 8);
	assert_string_equal(cols[0], "model");
	assert_string_equal(cols[5], "context_length");
	assert_string_equal(cols[7], "attention");
	assert_int_equal(param_columns("matmul", cols, 9), 6);
	assert_string_equal(cols[3], "m");
	assert_int_equal(param_columns(NULL, cols, 9), 4);
	assert_string_equal(cols[3], "pass");
}

/* What a new row must get right: defaults of its type, a place inside case_params, a key rank
 * no other key parameter of its suites has, a default wherever it joins keys only away from it,
 * and names (keys, environment variables) no other row has. */
static void test_params__every_row_is_consistent(void **state)
{
	(void)state;
	for (size_t i = 0; i < param_count; i++) {
		const struct param_def *d = &param_defs[i];
		struct bd_error err = {0};
		if (d->type != PT_NONE)
			assert_true(d->offset + d->size <= sizeof(struct case_params));
		for (int s = 0; s < SUITE_COUNT; s++) {
			struct case_params p;
			char back[64];
			if (!(d->suites & SUITE_BIT(s)))
				continue;
			if (d->in_key == KEY_UNLESS_DEFAULT && !d->defaults[s])
				fail_msg("%s: joins %s keys unless default, but has no default", d->key,
					 suite_name((enum suite_id)s));
			if (!d->defaults[s])
				continue;
			case_params_defaults(&p, (enum suite_id)s);
			if (param_set(&p, d, d->defaults[s], &err))
				fail_msg("%s: default '%s': %s", d->key, d->defaults[s], err.msg);
			param_format(&p, d, back);
			assert_string_equal(back, d->defaults[s]);
		}
		for (size_t j = 0; j < i; j++) {
			const struct param_def *o = &param_defs[j];
			char a[64], b[64];
			assert_string_not_equal(o->key, d->key);
			param_env_name(o, a, sizeof(a));
			param_env_name(d, b, sizeof(b));
			assert_string_not_equal(a, b);
			if (d->in_key != KEY_NO && o->in_key != KEY_NO && (d->suites & o->suites))
				if (d->key_rank == o->key_rank)
					fail_msg("%s and %s share key rank %d", o->key, d->key, d->key_rank);
		}
	}
}

/* iters is a count or auto; the stopping rule's numbers are written in the fewest digits that
 * read back, without an exponent where plain digits read well; the rule is a parameter of a case
 * only when its iters is auto. */
static void test_params__iters_auto_and_its_numbers(void **state)
{
	(void)state;
	struct case_params p;
	struct bd_error err = {0};
	char out[64];
	const struct param_def *iters = param_find("iters"), *rse = param_find("target_rse");
	case_params_defaults(&p, SUITE_MATMUL);
	assert_int_equal(param_set(&p, iters, "auto", &err), 0);
	assert_int_equal(p.iters, ITERS_AUTO);
	param_format(&p, iters, out);
	assert_string_equal(out, "auto");
	assert_int_equal(param_set(&p, iters, "auto2", &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "iters 'auto2' is not a non-negative integer or auto"));
	static const char *const numbers[][2] = {
		{"0.005", "0.005"}, {"5e-3", "0.005"}, {"0.1", "0.1"}, {"100", "100"}, {"1e2", "100"},
		{".25", "0.25"}, {"0.00005", "0.00005"}, {"1e-9", "1e-09"},
		{"0.333333333333333315", "0.3333333333333333"}};
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		assert_int_equal(param_set(&p, rse, numbers[i][0], &err), 0);
		param_format(&p, rse, out);
		assert_string_equal(out, numbers[i][1]);
	}
	assert_int_equal(param_set(&p, rse, "-1", &err), BD_EINVAL);
	assert_int_equal(param_set(&p, rse, "0x1p3", &err), BD_EINVAL);
	assert_int_equal(param_set(&p, rse, "inf", &err), BD_EINVAL);

	case_params_defaults(&p, SUITE_MATMUL);
	p.m = p.n = p.k = 8;
	assert_false(param_applies(&p, rse));
	assert_true(param_applies(&p, iters));
	char *fixed = case_params_json(&p);
	assert_null(strstr(fixed, "rse"));
	p.iters = ITERS_AUTO;
	assert_true(param_applies(&p, rse));
	char *json = case_params_json(&p);
	assert_string_equal(json, "{\"device\":\"cpu\",\"dtype\":\"float32\",\"impl\":\"onednn\","
			    "\"iters\":\"auto\",\"k\":8,\"m\":8,\"max_iters\":10000,\"max_time\":10,"
			    "\"mem_limit\":0,\"min_iters\":10,\"n\":8,\"pass\":\"forward\",\"seed\":0,"
			    "\"suite\":\"matmul\",\"sync\":true,\"target_rse\":0.005,\"tf32\":false,"
			    "\"warmup\":2}");
	/* and the key is the fixed-count case's */
	char *key = case_key_build(&p);
	p.iters = 10;
	char *key_fixed = case_key_build(&p);
	assert_string_equal(key, key_fixed);
	free(fixed);
	free(json);
	free(key);
	free(key_fixed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params__key_parse_key_round_trip_on_every_parameter),
		cmocka_unit_test(test_params__keys_are_the_stored_ones),
		cmocka_unit_test(test_params__bad_keys_are_refused_with_the_reason),
		cmocka_unit_test(test_params__split_keeps_unknown_tokens),
		cmocka_unit_test(test_params__json_has_every_parameter_of_the_suite),
		cmocka_unit_test(test_params__labels_and_columns),
		cmocka_unit_test(test_params__every_row_is_consistent),
		cmocka_unit_test(test_params__iters_auto_and_its_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
