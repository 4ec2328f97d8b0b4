/* runner/sweep_values.c: one scalar of a sweep checked and typed for its parameter and suite —
 * the closed choices (impls with the sweep's peers, devices, dtypes, the suite's passes, models
 * with the user's presets), integers, booleans, byte sizes — with messages that name the valid
 * choices and a did-you-mean; and the built-in model presets. */
#include "sweep_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "sweep_limits.h"
#include "workload.h"
#include "xalloc.h"

const struct model_config model_presets[] = {
	{"small", 768, 3072, 12, 12, 10000},
	{"medium", 1024, 4096, 24, 16, 10000},
	{"large", 1280, 5120, 36, 20, 10000},
	{"xl", 1600, 6400, 48, 25, 10000},
	{"2.7B", 2560, 10240, 32, 32, 10000},
	{"", 0, 0, 0, 0, 0},
};

int sweep_is_matmul_shape(const struct param_def *d)
{
	return d && (!strcmp(d->key, "m") || !strcmp(d->key, "n") || !strcmp(d->key, "k") ||
		     !strcmp(d->key, "size"));
}

/* sweep_internal.h */
void sweep_seen_init(struct sweep_seen *set, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	set->texts = xcalloc(cap, sizeof(*set->texts));
	set->index = xcalloc(cap, sizeof(*set->index));
	set->mask = cap - 1;
}

/* The slot of text in set, or the empty slot where it would go. */
static size_t seen_slot(const struct sweep_seen *set, const char *text)
{
	uint64_t h = 14695981039346656037ULL;   /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		h = (h ^ *c) * 1099511628211ULL;
	size_t at = (size_t)h & set->mask;
	while (set->texts[at] && strcmp(set->texts[at], text))
		at = (at + 1) & set->mask;
	return at;
}

/* sweep_internal.h */
long sweep_seen_add(struct sweep_seen *set, const char *text, size_t index)
{
	size_t at = seen_slot(set, text);
	if (set->texts[at])
		return (long)set->index[at];
	set->texts[at] = text;
	set->index[at] = index;
	return -1;
}

/* sweep_internal.h */
long sweep_seen_find(const struct sweep_seen *set, const char *text)
{
	size_t at = seen_slot(set, text);
	return set->texts[at] ? (long)set->index[at] : -1;
}

/* sweep_internal.h */
void sweep_seen_free(struct sweep_seen *set)
{
	free(set->texts);
	free(set->index);
	set->texts = NULL;
	set->index = NULL;
}

/* The row of a key a sweep may set (in some suite), or NULL. */
const struct param_def *sweep_param(const char *key)
{
	const struct param_def *d = param_find(key);
	return d && d->sweep ? d : NULL;
}

int sweep_is_param(const struct param_def *d, const char *key) { return d && !strcmp(d->key, key); }

/* The names of the passes suite accepts (every suite's when suite < 0), NULL-terminated. */
static void pass_choices(int suite, const char *out[PASS_COUNT + 1])
{
	unsigned mask = 0;
	for (int s = 0; s < SUITE_COUNT; s++)
		if (suite < 0 || s == suite)
			mask |= suite_passes((enum suite_id)s);
	size_t n = 0;
	for (int p = 0; p < PASS_COUNT; p++)
		if (mask & (1u << p))
			out[n++] = pass_name((enum bd_pass)p);
	out[n] = NULL;
}
/* The keys a sweep may set in the suites of mask, NULL-terminated, in param_defs order; keys has
 * room for param_count + 1. */
void sweep_param_keys(unsigned mask, const char **keys)
{
	size_t n = 0;
	for (size_t i = 0; i < param_count; i++)
		if (param_defs[i].sweep & mask)
			keys[n++] = param_defs[i].key;
	keys[n] = NULL;
}
int sweep_fail_at(const struct checker *ck, int line, int column, const char *fmt, ...)
{
	char msg[sizeof(((struct bd_error *)0)->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bd_fail_at(ck->err, BD_EINVAL, ck->path, line, column, "%s%s", msg,
			  ck->where ? ck->where : "");
}

/* "HEAD (valid: a, b, c); did you mean 'b'?" at v. */
int sweep_fail_choice(const struct checker *ck, const struct sweep_scalar *v, const char *head,
		       const char *const *names)
{
	struct strbuf sb = STRBUF_INIT;
	sb_add(&sb, head);
	sb_add(&sb, " (valid: ");
	sb_add_list(&sb, names);
	sb_addc(&sb, ')');
	const char *hint = suggest(v->text, names);
	if (hint)
		sb_addf(&sb, "; did you mean '%s'?", hint);
	int rc = sweep_fail_at(ck, v->line, v->column, "%s", sb_str(&sb));
	sb_free(&sb);
	return rc;
}
const char *sweep_kind_noun(enum value_kind k)
{
	switch (k) {
	case V_IMPL: return "an impl name";
	case V_DEVICE: return "a device name";
	case V_DTYPE: return "a dtype name";
	case V_PASS: return "a pass name";
	case V_MODEL: return "a model name";
	case V_ATTENTION: return "an attention impl name";
	case V_POSITIVE: return "a positive integer";
	case V_ITERS: return "a positive integer or auto";
	case V_SECONDS: return "a number of seconds";
	case V_FRACTION: return "a number between 0 and 1";
	case V_NONNEG: return "a non-negative integer";
	case V_BOOL: return "true or false";
	case V_BYTES: return "a byte size";
	case V_SUITE: return "a suite name";
	case V_DERIVED: break;
	}
	return "a value";
}

const struct model_config *sweep_model_find(const struct checker *ck, const char *name)
{
	for (size_t i = 0; model_presets[i].name[0]; i++)
		if (!strcmp(model_presets[i].name, name))
			return &model_presets[i];
	for (size_t i = 0; i < ck->nmodels; i++)
		if (!strcmp(ck->models[i].name, name))
			return &ck->models[i];
	return NULL;
}

/* 0 when the model can be built, else a message in msg. */
int sweep_model_check(const struct model_config *m, char *msg, size_t size)
{
	if (model_param_count(m) < 0) {
		snprintf(msg, size, "model '%s' is too large: its parameter count does not fit in 64 bits",
			 m->name);
		return -1;
	}
	if (m->d_model % m->num_heads) {
		snprintf(msg, size, "model '%s' has num_heads %" PRId64 " which does not divide d_model %" PRId64,
			 m->name, m->num_heads, m->d_model);
		return -1;
	}
	if ((m->d_model / m->num_heads) % 2) {
		snprintf(msg, size, "model '%s' has head dimension d_model/num_heads = %" PRId64
			 ", which must be even (rope rotates pairs of features)",
			 m->name, m->d_model / m->num_heads);
		return -1;
	}
	return 0;
}

/* NULL-terminated union of the impl names of every suite. */
void sweep_union_impls(const char *out[32])
{
	size_t n = 0;
	for (int s = 0; s < SUITE_COUNT; s++) {
		const char *const *names = workload_impl_names(suite_name((enum suite_id)s));
		for (size_t i = 0; names && names[i] && n < 31; i++) {
			int seen = 0;
			for (size_t j = 0; j < n; j++)
				seen |= !strcmp(out[j], names[i]);
			if (!seen)
				out[n++] = names[i];
		}
	}
	out[n] = NULL;
}

/* The impl names valid for suite (NULL: any suite): the built-in ones, then the sweep's peers of
 * that suite. malloc'd and NULL-terminated; the names are static or owned by the sweep. */
static const char **impl_choices(const struct checker *ck, const char *suite)
{
	const char *builtin[32];
	const char *const *names = builtin;
	if (suite)
		names = workload_impl_names(suite);
	else
		sweep_union_impls(builtin);
	size_t n = 0;
	while (names && names[n])
		n++;
	const char **all = xmalloc((n + ck->npeers + 1) * sizeof(*all));
	for (size_t i = 0; i < n; i++)
		all[i] = names[i];
	for (size_t i = 0; i < ck->npeers; i++)
		if (!suite || !strcmp(ck->peers[i].suite, suite))
			all[n++] = ck->peers[i].name;
	all[n] = NULL;
	return all;
}

static int value_parse_choice(const struct checker *ck, const struct param_def *p, int suite,
			      const struct sweep_scalar *v, struct value *out)
{
	const char *t = v->text;
	const char *names[32];
	char head[256];
	const char *for_suite = suite >= 0 ? suite_name((enum suite_id)suite) : NULL;
	int idx;

	switch (p->kind) {
	case V_DEVICE:   /* vocab.h's names */
	case V_DTYPE:
		if ((idx = p->kind == V_DEVICE ? device_parse(t) : dtype_parse(t)) < 0) {
			int n = p->kind == V_DEVICE ? DEVICE_COUNT : DTYPE_COUNT;
			for (idx = 0; idx < n; idx++)
				names[idx] = p->kind == V_DEVICE ? device_name((enum bd_device)idx) :
								  dtype_name((enum bd_dtype)idx);
			names[idx] = NULL;
			snprintf(head, sizeof(head), "unknown %s '%s'", p->key, t);
			return sweep_fail_choice(ck, v, head, names);
		}
		out->num = idx;
		break;
	case V_PASS: {
		const char *const *valid = names;
		pass_choices(suite, names);
		if (!name_in(valid, t)) {
			if (pass_parse(t) >= 0 && for_suite)
				snprintf(head, sizeof(head), "pass '%s' is not supported by suite %s", t, for_suite);
			else if (for_suite)
				snprintf(head, sizeof(head), "unknown pass '%s' for suite %s", t, for_suite);
			else
				snprintf(head, sizeof(head), "unknown pass '%s'", t);
			return sweep_fail_choice(ck, v, head, valid);
		}
		out->num = pass_parse(t);
		break;
	}
	case V_IMPL:
	case V_ATTENTION: {
		const char **choices = NULL;     /* impls: built-in and peers */
		const char *const *valid;
		if (p->kind == V_ATTENTION) {
			valid = workload_impl_names("attention");
		} else {
			valid = choices = impl_choices(ck, for_suite);
		}
		for (size_t i = 0; valid[i]; i++)
			if (!strcmp(valid[i], t))
				out->str = valid[i];
		if (!out->str) {
			const struct sweep_peer *other = NULL;
			for (size_t i = 0; p->kind == V_IMPL && i < ck->npeers; i++)
				if (!strcmp(ck->peers[i].name, t))
					other = &ck->peers[i];
			if (p->kind == V_ATTENTION)
				snprintf(head, sizeof(head), "unknown attention '%s' for the e2e model", t);
			else if (for_suite)
				snprintf(head, sizeof(head), "unknown impl '%s' for suite %s", t, for_suite);
			else
				snprintf(head, sizeof(head), "unknown impl '%s'", t);
			int rc;
			if (other) {   /* a peer of another suite: say so instead of guessing */
				struct strbuf sb = STRBUF_INIT;
				sb_addf(&sb, "%s (valid: ", head);
				sb_add_list(&sb, valid);
				sb_addf(&sb, "); '%s' is a peer of suite %s", t, other->suite);
				rc = sweep_fail_at(ck, v->line, v->column, "%s", sb_str(&sb));
				sb_free(&sb);
			} else {
				rc = sweep_fail_choice(ck, v, head, valid);
			}
			free(choices);
			return rc;
		}
		free(choices);
		break;
	}
	case V_MODEL: {
		const struct model_config *m = sweep_model_find(ck, t);
		if (!m) {
			const char **all = xmalloc((ck->nmodels + 8) * sizeof(*all));
			size_t n = 0;
			for (size_t i = 0; model_presets[i].name[0]; i++)
				all[n++] = model_presets[i].name;
			for (size_t i = 0; i < ck->nmodels; i++)
				all[n++] = ck->models[i].name;
			all[n] = NULL;
			snprintf(head, sizeof(head), "unknown model '%s'", t);
			int rc = sweep_fail_choice(ck, v, head, all);
			free(all);
			return rc;
		}
		char msg[256];
		if (sweep_model_check(m, msg, sizeof(msg)))
			return sweep_fail_at(ck, v->line, v->column, "%s", msg);
		out->str = m->name;
		break;
	}
	default:
		break;
	}
	snprintf(out->canon, sizeof(out->canon), "%s", t);
	return 0;
}

/* Check and type one scalar of key p for suite (-1: for any suite that has the key). */
int sweep_value_parse(const struct checker *ck, const struct param_def *p, int suite,
		       const struct sweep_scalar *v, struct value *out)
{
	const char *t = v->text;
	memset(out, 0, sizeof(*out));

	switch (p->kind) {
	case V_ITERS:
		if (!strcmp(t, "auto")) {
			out->num = ITERS_AUTO;
			snprintf(out->canon, sizeof(out->canon), "auto");
			return 0;
		}
		/* fall through */
	case V_POSITIVE:
	case V_NONNEG: {
		int rc = parse_digits(t, &out->num);
		if (rc == -1)
			return sweep_fail_at(ck, v->line, v->column, "key '%s' expects %s, got '%s'", p->key,
				       sweep_kind_noun(p->kind), t);
		if (rc == -2)
			return sweep_fail_at(ck, v->line, v->column, "key '%s' value %s is too large (at most %" PRId64 ")",
				       p->key, t, INT64_MAX);
		if (out->num > sweep_value_max(p->key))
			return sweep_fail_at(ck, v->line, v->column, "key '%s' value %s is too large (at most %" PRId64 ")",
				       p->key, t, sweep_value_max(p->key));
		if (p->kind != V_NONNEG && out->num < 1)
			return sweep_fail_at(ck, v->line, v->column, "key '%s' must be >= 1, got %" PRId64, p->key,
				       out->num);
		snprintf(out->canon, sizeof(out->canon), "%" PRId64, out->num);
		return 0;
	}
	case V_SECONDS:
	case V_FRACTION: {
		double x = 0;
		int rc = parse_decimal(t, &x);
		if (rc == -1)
			return sweep_fail_at(ck, v->line, v->column, "key '%s' expects %s (a decimal number "
					     "such as 0.5 or 5e-3), got '%s'", p->key, sweep_kind_noun(p->kind), t);
		if (p->kind == V_FRACTION && (x <= 0 || x >= 1))
			return sweep_fail_at(ck, v->line, v->column, "key '%s' must be > 0 and < 1, got %s",
					     p->key, t);
		if (p->kind == V_SECONDS && (rc == -2 || x <= 0 || x > BD_MAX_TIME_S))
			return sweep_fail_at(ck, v->line, v->column, "key '%s' must be > 0 and at most %d "
					     "seconds, got %s", p->key, BD_MAX_TIME_S, t);
		struct case_params scratch;
		memcpy((char *)&scratch + p->offset, &x, sizeof(x));
		param_format(&scratch, p, out->canon);   /* the canonical text of the number */
		return 0;
	}
	case V_BOOL:
		if (!strcmp(t, "true"))
			out->num = 1;
		else if (!strcmp(t, "false"))
			out->num = 0;
		else
			return sweep_fail_at(ck, v->line, v->column, "key '%s' expects true or false, got '%s'",
				       p->key, t);
		snprintf(out->canon, sizeof(out->canon), "%s", out->num ? "true" : "false");
		return 0;
	case V_BYTES:
		if (parse_bytes(t, &out->num))
			return sweep_fail_at(ck, v->line, v->column,
				       "key '%s' expects a byte size (an integer, or a number with B, KB, MB, GB, "
				       "TB, KiB, MiB, GiB or TiB, e.g. '512MiB'), got '%s'", p->key, t);
		if (!out->num && strpbrk(t, "123456789"))   /* rounded down to nothing: no limit */
			return sweep_fail_at(ck, v->line, v->column, "key '%s' value %s rounds down to 0 "
					     "bytes, which means no limit (give 0 for no limit, or at least 1B)",
					     p->key, t);
		snprintf(out->canon, sizeof(out->canon), "%" PRId64, out->num);
		return 0;
	default:
		return value_parse_choice(ck, p, suite, v, out);
	}
}
