/* common/params.c: the parameter table (params.h) and what is computed from it alone: defaults,
 * canonical text, case keys (built and parsed), the params JSON, legend labels, report columns.
 *
 * The rows are in the order sweep messages list keys ("valid: impl, device, ..."); the order of
 * a case key's tokens is key_rank's, and of a report table's columns column_rank's, so that both
 * stay what databases already hold. schemas/sweep-format.md documents the sweep keys, their
 * defaults and the case keys: change it with this table. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "values.h"
#include "xalloc.h"

/* ---- suites ---------------------------------------------------------------------------------- */

static const struct {
	const char *name;
	unsigned passes;   /* 1 << enum bd_pass */
} suites[SUITE_COUNT] = {
	[SUITE_ATTENTION] = {"attention", 1u << PASS_FORWARD | 1u << PASS_BACKWARD |
					  1u << PASS_FORWARD_BACKWARD},
	[SUITE_E2E] = {"e2e", 1u << PASS_FORWARD | 1u << PASS_FORWARD_BACKWARD | 1u << PASS_TRAIN_STEP},
	[SUITE_MATMUL] = {"matmul", 1u << PASS_FORWARD},
};

const char *suite_name(enum suite_id s) { return s < SUITE_COUNT ? suites[s].name : "?"; }
unsigned suite_passes(enum suite_id s) { return s < SUITE_COUNT ? suites[s].passes : 0; }

int suite_parse(const char *s)
{
	for (int i = 0; s && i < SUITE_COUNT; i++)
		if (!strcmp(suites[i].name, s))
			return i;
	return -1;
}

int suite_is(const char *name, enum suite_id s) { return name && !strcmp(name, suite_name(s)); }

/* ---- the table ------------------------------------------------------------------------------- */

#define AT(field, t) .type = t, .offset = offsetof(struct case_params, field), \
	.size = sizeof(((struct case_params *)0)->field)
#define ALL(text) {text, text, text}

/* One row per parameter (struct param_def in params.h says what each field means); a field left
 * out is 0 / NULL: no suites, no default, not a key token, no column. */
const struct param_def param_defs[] = {
	{.key = "suite", .kind = V_SUITE, .suites = S_ALL,
	 .defaults = {[SUITE_ATTENTION] = "attention", [SUITE_E2E] = "e2e",
		     [SUITE_MATMUL] = "matmul"},
	 AT(suite, PT_SUITE), .in_key = KEY_ALWAYS, .label = "", .db_column = "suite"},
	{.key = "impl", .kind = V_IMPL, .sweep = S_ALL, .required = S_ATT, .suites = S_ALL,
	 .defaults = {[SUITE_E2E] = "benchdb", [SUITE_MATMUL] = "onednn"}, AT(impl, PT_TEXT),
	 .in_key = KEY_ALWAYS, .key_rank = 10, .label = "", .column_rank = 20,
	 .column_suites = S_ALL, .db_column = "impl"},
	{.key = "device", .kind = V_DEVICE, .sweep = S_ALL, .suites = S_ALL, .defaults = ALL("cpu"),
	 AT(device, PT_DEVICE), .in_key = KEY_ALWAYS, .key_rank = 20, .label = "",
	 .column_rank = 40, .column_suites = S_ALL, .db_column = "device"},
	{.key = "dtype", .kind = V_DTYPE, .sweep = S_ALL, .suites = S_ALL,
	 .defaults = ALL("float32"), AT(dtype, PT_DTYPE), .in_key = KEY_ALWAYS, .key_rank = 30,
	 .label = "", .column_rank = 30, .column_suites = S_ALL, .db_column = "dtype"},
	{.key = "pass", .kind = V_PASS, .sweep = S_ALL, .suites = S_ALL,
	 .defaults = {[SUITE_ATTENTION] = "forward_backward", [SUITE_E2E] = "train_step",
		     [SUITE_MATMUL] = "forward"},
	 AT(pass, PT_PASS), .in_key = KEY_ALWAYS, .key_rank = 40, .label = "", .column_rank = 50,
	 .column_suites = S_ATT | S_E2E, .db_column = "pass"},
	{.key = "batch_size", .kind = V_POSITIVE, .sweep = S_ATT | S_E2E, .suites = S_ATT | S_E2E,
	 .defaults = {[SUITE_ATTENTION] = "8", [SUITE_E2E] = "4"}, AT(batch_size, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 120, .label = "B", .column_rank = 70,
	 .column_suites = S_ATT | S_E2E, .db_column = "batch_size"},
	{.key = "heads", .kind = V_POSITIVE, .sweep = S_ATT, .suites = S_ATT,
	 .defaults = {[SUITE_ATTENTION] = "1"}, AT(heads, PT_INT), .in_key = KEY_ALWAYS,
	 .key_rank = 130, .label = "H", .column_rank = 80, .column_suites = S_ATT,
	 .db_column = "heads"},
	{.key = "seq_len", .kind = V_POSITIVE, .sweep = S_ATT, .required = S_ATT, .suites = S_ATT,
	 AT(seq_len, PT_INT), .in_key = KEY_ALWAYS, .key_rank = 140, .label = "S",
	 .column_rank = 90, .column_suites = S_ATT, .db_column = "seq_len"},
	{.key = "head_dim", .kind = V_POSITIVE, .sweep = S_ATT, .required = S_ATT, .suites = S_ATT,
	 AT(head_dim, PT_INT), .in_key = KEY_ALWAYS, .key_rank = 150, .label = "D",
	 .column_rank = 100, .column_suites = S_ATT, .db_column = "head_dim"},
	{.key = "causal", .kind = V_BOOL, .sweep = S_ATT, .suites = S_ATT,
	 .defaults = {[SUITE_ATTENTION] = "false"}, AT(causal, PT_BOOL), .in_key = KEY_ALWAYS,
	 .key_rank = 160, .label = "causal", .label_off = "non-causal", .db_column = "causal"},
	{.key = "model", .kind = V_MODEL, .sweep = S_E2E, .required = S_E2E, .suites = S_E2E,
	 AT(model.name, PT_TEXT), .in_key = KEY_ALWAYS, .key_rank = 50, .label = "",
	 .column_rank = 10, .column_suites = S_E2E, .db_column = "model"},
	{.key = "context_length", .kind = V_POSITIVE, .sweep = S_E2E, .required = S_E2E,
	 .suites = S_E2E, AT(context_length, PT_INT), .in_key = KEY_ALWAYS, .key_rank = 110,
	 .label = "ctx", .column_rank = 60, .column_suites = S_E2E, .db_column = "seq_len"},
	{.key = "attention", .kind = V_ATTENTION, .sweep = S_E2E, .suites = S_E2E,
	 .defaults = {[SUITE_E2E] = "naive"}, AT(attention, PT_TEXT), .in_key = KEY_ALWAYS,
	 .key_rank = 170, .label = "attn=", .column_rank = 110, .column_suites = S_E2E},
	{.key = "vocab_size", .kind = V_POSITIVE, .sweep = S_E2E, .suites = S_E2E,
	 AT(model.vocab_size, PT_INT), .in_key = KEY_ALWAYS, .key_rank = 100, .label = "V"},
	{.key = "d_model", .kind = V_DERIVED, .suites = S_E2E, AT(model.d_model, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 60, .label = "d_model "},
	{.key = "d_ff", .kind = V_DERIVED, .suites = S_E2E, AT(model.d_ff, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 70, .label = "d_ff "},
	{.key = "num_layers", .kind = V_DERIVED, .suites = S_E2E, AT(model.num_layers, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 80, .label = "L"},
	{.key = "num_heads", .kind = V_DERIVED, .suites = S_E2E, AT(model.num_heads, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 90, .label = "heads ", .db_column = "heads"},
	{.key = "m", .kind = V_POSITIVE, .sweep = S_MM, .suites = S_MM, AT(m, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 180, .column_rank = 120, .column_suites = S_MM},
	{.key = "n", .kind = V_POSITIVE, .sweep = S_MM, .suites = S_MM, AT(n, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 190, .column_rank = 130, .column_suites = S_MM},
	{.key = "k", .kind = V_POSITIVE, .sweep = S_MM, .suites = S_MM, AT(k, PT_INT),
	 .in_key = KEY_ALWAYS, .key_rank = 200, .column_rank = 140, .column_suites = S_MM},
	{.key = "size", .kind = V_POSITIVE, .sweep = S_MM, .type = PT_NONE, .in_key = KEY_NO},
	{.key = "warmup", .kind = V_NONNEG, .sweep = S_ALL, .suites = S_ALL, .defaults = ALL("2"),
	 AT(warmup, PT_INT), .in_key = KEY_NO},
	{.key = "iters", .kind = V_ITERS, .sweep = S_ALL, .suites = S_ALL, .defaults = ALL("10"),
	 AT(iters, PT_ITERS), .in_key = KEY_NO},
	/* iters: auto's stopping rule: not in the key, which names what is measured, not for how
	 * long (schemas/sweep-format.md, "iters: auto") */
	{.key = "min_iters", .kind = V_POSITIVE, .sweep = S_ALL, .suites = S_ALL,
	 .defaults = ALL("10"), AT(min_iters, PT_INT), .in_key = KEY_NO, .auto_only = 1},
	{.key = "max_iters", .kind = V_POSITIVE, .sweep = S_ALL, .suites = S_ALL,
	 .defaults = ALL("10000"), AT(max_iters, PT_INT), .in_key = KEY_NO, .auto_only = 1},
	{.key = "max_time", .kind = V_SECONDS, .sweep = S_ALL, .suites = S_ALL,
	 .defaults = ALL("10"), AT(max_time, PT_REAL), .in_key = KEY_NO, .auto_only = 1},
	{.key = "target_rse", .kind = V_FRACTION, .sweep = S_ALL, .suites = S_ALL,
	 .defaults = ALL("0.005"), AT(target_rse, PT_REAL), .in_key = KEY_NO, .auto_only = 1},
	{.key = "seed", .kind = V_NONNEG, .sweep = S_ALL, .suites = S_ALL, .defaults = ALL("0"),
	 AT(seed, PT_INT), .in_key = KEY_NO},
	{.key = "mem_limit", .kind = V_BYTES, .sweep = S_ALL, .suites = S_ALL, .defaults = ALL("0"),
	 AT(mem_limit, PT_INT), .in_key = KEY_NO},
	{.key = "sync", .kind = V_BOOL, .sweep = S_ALL, .suites = S_ALL, .defaults = ALL("true"),
	 AT(sync, PT_BOOL), .in_key = KEY_UNLESS_DEFAULT, .key_rank = 220, .label = "sync",
	 .label_off = "no sync"},
	{.key = "tf32", .kind = V_BOOL, .sweep = S_ALL, .suites = S_ALL, .defaults = ALL("false"),
	 AT(tf32, PT_BOOL), .in_key = KEY_UNLESS_DEFAULT, .key_rank = 210},
};

const size_t param_count = sizeof(param_defs) / sizeof(param_defs[0]);
_Static_assert(sizeof(param_defs) / sizeof(param_defs[0]) <= PARAM_MAX, "raise PARAM_MAX");

const struct param_def *param_find(const char *key)
{
	for (size_t i = 0; key && i < param_count; i++)
		if (!strcmp(param_defs[i].key, key))
			return &param_defs[i];
	return NULL;
}

static const struct param_def *param_find_n(const char *name, size_t len)
{
	for (size_t i = 0; i < param_count; i++)
		if (strlen(param_defs[i].key) == len && !strncmp(param_defs[i].key, name, len))
			return &param_defs[i];
	return NULL;
}

void param_env_name(const struct param_def *d, char *out, size_t size)
{
	int n = snprintf(out, size, "BENCHDB_%s", d->key);
	for (int i = 0; i < n && (size_t)i < size; i++)
		out[i] = (char)toupper((unsigned char)out[i]);
}

int param_is_text(const struct param_def *d)
{
	return d->type == PT_TEXT || d->type == PT_DEVICE || d->type == PT_DTYPE || d->type == PT_PASS ||
	       d->type == PT_SUITE;
}

int param_applies(const struct case_params *p, const struct param_def *d)
{
	return (d->suites & SUITE_BIT(p->suite)) && (!d->auto_only || p->iters == ITERS_AUTO);
}

/* ---- values ---------------------------------------------------------------------------------- */

static const void *field(const struct case_params *p, const struct param_def *d)
{
	return (const char *)p + d->offset;
}

static int read_int(const struct case_params *p, const struct param_def *d)
{
	int v;
	memcpy(&v, field(p, d), sizeof(v));
	return v;
}

void param_format(const struct case_params *p, const struct param_def *d, char out[64])
{
	int64_t v;
	switch (d->type) {
	case PT_TEXT: snprintf(out, 64, "%.*s", (int)d->size, (const char *)field(p, d)); break;
	case PT_INT:
		memcpy(&v, field(p, d), sizeof(v));
		snprintf(out, 64, "%" PRId64, v);
		break;
	case PT_ITERS:
		memcpy(&v, field(p, d), sizeof(v));
		if (v == ITERS_AUTO)
			snprintf(out, 64, "auto");
		else
			snprintf(out, 64, "%" PRId64, v);
		break;
	case PT_REAL: {
		double x;
		memcpy(&x, field(p, d), sizeof(x));
		int digits = 1;   /* the fewest significant digits that read back the same */
		while (digits < 17 && (snprintf(out, 64, "%.*g", digits, x), strtod(out, NULL) != x))
			digits++;
		snprintf(out, 64, "%.*g", digits, x);
		/* without an exponent where it reads well: 100, not 1e+02; 0.00005, not 5e-05 */
		if (strchr(out, 'e') && x >= 1e-6 && x < 1e15) {
			int decimals = digits - 1 - (int)floor(log10(x));
			snprintf(out, 64, "%.*f", decimals > 0 ? decimals : 0, x);
		}
		break;
	}
	case PT_BOOL: snprintf(out, 64, "%s", read_int(p, d) ? "true" : "false"); break;
	case PT_DEVICE: snprintf(out, 64, "%s", device_name((enum bd_device)read_int(p, d))); break;
	case PT_DTYPE: snprintf(out, 64, "%s", dtype_name((enum bd_dtype)read_int(p, d))); break;
	case PT_PASS: snprintf(out, 64, "%s", pass_name((enum bd_pass)read_int(p, d))); break;
	case PT_SUITE: snprintf(out, 64, "%s", suite_name((enum suite_id)read_int(p, d))); break;
	default: out[0] = '\0'; break;
	}
}

int param_set(struct case_params *p, const struct param_def *d, const char *text,
	      struct bd_error *err)
{
	void *at = (char *)p + d->offset;
	int v = -1;
	switch (d->type) {
	case PT_TEXT:
		if (strlen(text) >= d->size)
			return bd_fail(err, BD_EINVAL, "%s '%s' is too long (at most %zu characters)",
				       d->key, text, d->size - 1);
		memcpy(at, text, strlen(text) + 1);
		return 0;
	case PT_ITERS:
		if (!strcmp(text, "auto")) {
			int64_t i64 = ITERS_AUTO;
			memcpy(at, &i64, sizeof(i64));
			return 0;
		}
		/* fall through */
	case PT_INT: {
		char *end = NULL;
		errno = 0;
		long long x = strtoll(text, &end, 10);
		if (*text < '0' || *text > '9' || *end || errno)
			return bd_fail(err, BD_EINVAL, "%s '%s' is not a non-negative integer%s", d->key, text,
				       d->type == PT_ITERS ? " or auto" : "");
		int64_t i64 = x;
		memcpy(at, &i64, sizeof(i64));
		return 0;
	}
	case PT_REAL: {
		double x;
		if (parse_decimal(text, &x))
			return bd_fail(err, BD_EINVAL, "%s '%s' is not a non-negative decimal number", d->key,
				       text);
		memcpy(at, &x, sizeof(x));
		return 0;
	}
	case PT_BOOL: v = !strcmp(text, "true") ? 1 : !strcmp(text, "false") ? 0 : -1; break;
	case PT_DEVICE: v = device_parse(text); break;
	case PT_DTYPE: v = dtype_parse(text); break;
	case PT_PASS: v = pass_parse(text); break;
	case PT_SUITE: v = suite_parse(text); break;
	default: return bd_fail(err, BD_EINVAL, "%s is not held in a case's parameters", d->key);
	}
	if (v < 0)
		return bd_fail(err, BD_EINVAL, "%s '%s' is not a %s", d->key, text,
			       d->type == PT_BOOL ? "boolean (true or false)" : d->type == PT_DEVICE ?
			       "device" : d->type == PT_DTYPE ? "dtype" : d->type == PT_PASS ? "pass" :
			       "suite");
	memcpy(at, &v, sizeof(v));
	return 0;
}

void case_params_defaults(struct case_params *p, enum suite_id suite)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < param_count && suite < SUITE_COUNT; i++)
		if (param_defs[i].defaults[suite])
			param_set(p, &param_defs[i], param_defs[i].defaults[suite], NULL);
}

/* ---- case keys ------------------------------------------------------------------------------- */

size_t case_key_rows(enum suite_id suite, const struct param_def **rows)
{
	size_t n = 0;
	for (size_t i = 0; i < param_count; i++) {
		const struct param_def *d = &param_defs[i];
		if (d->in_key == KEY_NO || !(d->suites & SUITE_BIT(suite)))
			continue;
		size_t j = n++;   /* insertion sort: a few dozen rows */
		for (; j > 0 && rows[j - 1]->key_rank > d->key_rank; j--)
			rows[j] = rows[j - 1];
		rows[j] = d;
	}
	return n;
}

char *case_key_build(const struct case_params *p)
{
	const struct param_def *rows[PARAM_MAX];
	enum suite_id suite = p->suite;
	size_t n = case_key_rows(suite, rows);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		char value[64];
		param_format(p, rows[i], value);
		if (rows[i]->in_key == KEY_UNLESS_DEFAULT && rows[i]->defaults[suite] &&
		    !strcmp(value, rows[i]->defaults[suite]))
			continue;
		sb_addf(&sb, "%s%s=%s", sb.len ? " " : "", rows[i]->key, value);
	}
	return sb_detach(&sb);
}

int key_token_is(const struct key_token *t, const char *name)
{
	return t->name_len == strlen(name) && !strncmp(t->name, name, t->name_len);
}

int case_key_split(const char *key, struct key_token *t, size_t max, size_t *n,
		   struct bd_error *err)
{
	*n = 0;
	for (const char *p = key; *p;) {
		size_t len = strcspn(p, " ");
		const char *eq = memchr(p, '=', len);
		if (!eq || eq == p)
			return bd_fail(err, BD_EINVAL, "case key token '%.*s' is not name=value", (int)len, p);
		if (*n == max)
			return bd_fail(err, BD_EINVAL, "case key has more than %zu tokens", max);
		struct key_token *k = &t[*n];
		*k = (struct key_token){p, eq + 1, (size_t)(eq - p), len - (size_t)(eq - p) - 1, NULL};
		k->def = param_find_n(k->name, k->name_len);
		for (size_t i = 0; i < *n; i++)
			if (t[i].name_len == k->name_len && !strncmp(t[i].name, k->name, k->name_len))
				return bd_fail(err, BD_EINVAL, "case key names '%.*s' twice", (int)k->name_len,
					       k->name);
		(*n)++;
		p += len;
		while (*p == ' ')
			p++;
	}
	return 0;
}

int case_key_parse(const char *key, struct case_params *p, struct bd_error *err)
{
	struct key_token t[CASE_KEY_MAX_TOKENS];
	size_t n;
	int rc = case_key_split(key, t, CASE_KEY_MAX_TOKENS, &n, err);
	if (rc)
		return rc;
	if (!n || !key_token_is(&t[0], "suite"))
		return bd_fail(err, BD_EINVAL, "case key '%s' does not start with suite=", key);
	char suite_text[64];
	snprintf(suite_text, sizeof(suite_text), "%.*s", (int)t[0].value_len, t[0].value);
	int suite = suite_parse(suite_text);
	if (suite < 0)
		return bd_fail(err, BD_EINVAL, "case key names an unknown suite '%s' (valid: attention, "
			       "e2e, matmul)", suite_text);
	case_params_defaults(p, (enum suite_id)suite);
	for (size_t i = 1; i < n; i++) {
		char value[256];
		if (!t[i].def || !(t[i].def->suites & SUITE_BIT(suite)) || t[i].def->in_key == KEY_NO)
			return bd_fail(err, BD_EINVAL, "case key token '%.*s' is not a key parameter of suite "
				       "%s", (int)(t[i].name_len + 1 + t[i].value_len), t[i].name, suite_text);
		if (t[i].value_len >= sizeof(value))
			return bd_fail(err, BD_EINVAL, "case key value of '%s' is too long", t[i].def->key);
		snprintf(value, sizeof(value), "%.*s", (int)t[i].value_len, t[i].value);
		if ((rc = param_set(p, t[i].def, value, err)))
			return rc;
	}
	const struct param_def *rows[PARAM_MAX];
	size_t nrows = case_key_rows((enum suite_id)suite, rows);
	for (size_t i = 0; i < nrows; i++) {
		size_t j = 0;
		while (j < n && t[j].def != rows[i])
			j++;
		if (j == n && rows[i]->in_key == KEY_ALWAYS)
			return bd_fail(err, BD_EINVAL, "case key '%s' lacks %s=", key, rows[i]->key);
	}
	return 0;
}

char *case_key_drop(const char *key, const char *name)
{
	struct key_token t[CASE_KEY_MAX_TOKENS];
	size_t n;
	if (case_key_split(key, t, CASE_KEY_MAX_TOKENS, &n, NULL))
		return xstrdup(key);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		if (!key_token_is(&t[i], name))
			sb_addf(&sb, "%s%.*s=%.*s", sb.len ? " " : "", (int)t[i].name_len, t[i].name,
				(int)t[i].value_len, t[i].value);
	return sb_detach(&sb);
}

/* ---- the params JSON ------------------------------------------------------------------------- */

static int def_key_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct param_def *const *)a)->key,
		      (*(const struct param_def *const *)b)->key);
}

char *case_params_json(const struct case_params *p)
{
	return case_params_json_with(p, NULL, 0);
}

char *case_params_json_with(const struct case_params *p, const struct json_member *extra,
			    size_t nextra)
{
	const struct param_def *rows[PARAM_MAX];
	size_t n = 0;
	for (size_t i = 0; i < param_count; i++)
		if (param_applies(p, &param_defs[i]))
			rows[n++] = &param_defs[i];
	qsort(rows, n, sizeof(rows[0]), def_key_cmp);
	struct strbuf sb = STRBUF_INIT;
	sb_addc(&sb, '{');
	for (size_t i = 0, x = 0; i < n || x < nextra;) {   /* both in key order: merged */
		char value[64];
		int text;
		const char *key;
		if (x < nextra && (i == n || strcmp(extra[x].key, rows[i]->key) < 0)) {
			key = extra[x].key;
			snprintf(value, sizeof(value), "%s", extra[x].value);
			text = extra[x++].is_text;
		} else {
			key = rows[i]->key;
			param_format(p, rows[i], value);
			text = param_is_text(rows[i]) || !strcmp(value, "auto");
			i++;
		}
		if (sb.len > 1)
			sb_addc(&sb, ',');
		sb_add_json_str(&sb, key);
		sb_addc(&sb, ':');
		if (text)
			sb_add_json_str(&sb, value);
		else
			sb_add(&sb, value);
	}
	sb_addc(&sb, '}');
	return sb_detach(&sb);
}

/* ---- labels and columns ---------------------------------------------------------------------- */

void key_token_label(struct strbuf *sb, const struct key_token *t)
{
	const struct param_def *d = t->def;
	int v = (int)t->value_len;
	if (sb->len)
		sb_addc(sb, ' ');
	if (d && d->label && d->type == PT_BOOL)
		sb_add(sb, t->value_len == 4 && !strncmp(t->value, "true", 4) ? d->label : d->label_off);
	else if (d && d->label)
		sb_addf(sb, "%s%.*s", d->label, v, t->value);
	else
		sb_addf(sb, "%.*s=%.*s", (int)t->name_len, t->name, v, t->value);
}

size_t param_columns(const char *suite, const char **keys, size_t max)
{
	int s = suite ? suite_parse(suite) : -1;
	size_t n = 0;
	for (size_t i = 0; i < param_count && max; i++) {
		const struct param_def *d = &param_defs[i];
		if (!d->column_rank || n + 1 == max)
			continue;
		if (s >= 0 ? !(d->column_suites & SUITE_BIT(s)) : d->suites != S_ALL)
			continue;
		size_t j = n++;
		for (; j > 0 && param_find(keys[j - 1])->column_rank > d->column_rank; j--)
			keys[j] = keys[j - 1];
		keys[j] = d->key;
	}
	if (max)
		keys[n] = NULL;
	return n;
}

size_t param_db_columns(const char **names, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < param_count; i++) {
		const char *col = param_defs[i].db_column;
		size_t j = 0;
		while (col && j < n && strcmp(names[j], col))
			j++;
		if (col && j == n && n < max)
			names[n++] = col;
	}
	return n;
}

const char *param_db_value(const struct case_params *p, const char *name, char out[64],
			   int *is_text)
{
	enum suite_id suite = p->suite;
	*is_text = 0;
	for (size_t i = 0; i < param_count; i++) {
		const struct param_def *d = &param_defs[i];
		if (!d->db_column || strcmp(d->db_column, name))
			continue;
		*is_text = param_is_text(d);
		if (!(d->suites & SUITE_BIT(suite)))
			continue;
		if (d->type == PT_BOOL)
			snprintf(out, 64, "%d", read_int(p, d));
		else
			param_format(p, d, out);
		return out;
	}
	/* Derived, not parameters: the e2e model's attention is causal, over heads of
	 * d_model / num_heads features. */
	if (suite == SUITE_E2E && !strcmp(name, "causal"))
		return strcpy(out, "1");
	if (suite == SUITE_E2E && !strcmp(name, "head_dim") && p->model.num_heads > 0) {
		snprintf(out, 64, "%" PRId64, p->model.d_model / p->model.num_heads);
		return out;
	}
	return NULL;
}

int64_t model_param_count(const struct model_config *m)
{
	int64_t d = m->d_model, sq, ff, layer, blocks, embed, total;
	if (__builtin_mul_overflow(d, d, &sq) || __builtin_mul_overflow(sq, 4, &sq) ||
	    __builtin_mul_overflow(d, m->d_ff, &ff) || __builtin_mul_overflow(ff, 3, &ff) ||
	    __builtin_add_overflow(sq, ff, &layer) || __builtin_add_overflow(layer, 2 * d, &layer) ||
	    __builtin_mul_overflow(layer, m->num_layers, &blocks) ||
	    __builtin_mul_overflow(m->vocab_size, d, &embed) || __builtin_mul_overflow(embed, 2, &embed) ||
	    __builtin_add_overflow(blocks, embed, &total) || __builtin_add_overflow(total, d, &total))
		return -1;
	return total;
}
