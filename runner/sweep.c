/* runner/sweep.c: sweep files (format: schemas/sweep-format.md) -> validated struct sweep -> cases.
 *
 * sweep_parse() walks libyaml's document tree once and checks everything that does not depend on
 * a combination of values: keys, types, closed choices, empty axes, repeated values, duplicate
 * keys, required keys and models. Positions stored in struct sweep are 1-based, like bd_error's.
 * sweep_expand() types each combination of axis values into struct case_params and builds the
 * case key, the canonical JSON and the label.
 *
 * The per-suite tables below (keys, defaults, passes) are the single source for the documented
 * tables in schemas/sweep-format.md; change both together.
 */
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "sha256.h"
#include "strbuf.h"
#include "sweep_limits.h"
#include "workload.h"

/* A sweep that expands beyond this is almost certainly a mistake (and would take forever). */
#define SWEEP_MAX_CASES 100000

const struct model_config model_presets[] = {
	{"small", 768, 3072, 12, 12, 10000},
	{"medium", 1024, 4096, 24, 16, 10000},
	{"large", 1280, 5120, 36, 20, 10000},
	{"xl", 1600, 6400, 48, 25, 10000},
	{"2.7B", 2560, 10240, 32, 32, 10000},
	{"", 0, 0, 0, 0, 0},
};

static const int64_t default_vocab_size = 10000;

/* ---- suites and their parameters ------------------------------------------------------------ */

enum suite_id { SUITE_ATTENTION, SUITE_E2E, SUITE_MATMUL, SUITE_COUNT };

#define S_ATT (1u << SUITE_ATTENTION)
#define S_E2E (1u << SUITE_E2E)
#define S_MM (1u << SUITE_MATMUL)
#define S_ALL (S_ATT | S_E2E | S_MM)

static const char *const suite_ids[SUITE_COUNT] = {"attention", "e2e", "matmul"};

/* Passes each suite accepts (NULL-terminated). */
static const char *const suite_passes[SUITE_COUNT][4] = {
	[SUITE_ATTENTION] = {"forward", "backward", "forward_backward", NULL},
	[SUITE_E2E] = {"forward", "forward_backward", "train_step", NULL},
	[SUITE_MATMUL] = {"forward", NULL},
};

/* Every parameter key, in the order used for "valid:" lists. */
enum param_id {
	P_IMPL, P_DEVICE, P_DTYPE, P_PASS, P_BATCH_SIZE,
	P_HEADS, P_SEQ_LEN, P_HEAD_DIM, P_CAUSAL,
	P_MODEL, P_CONTEXT_LENGTH, P_ATTENTION, P_VOCAB_SIZE,
	P_M, P_N, P_K, P_SIZE,
	P_WARMUP, P_ITERS, P_SEED, P_MEM_LIMIT, P_SYNC, P_TF32,
	P_COUNT
};

enum value_kind {
	V_IMPL,       /* workload_impl_names(suite) */
	V_DEVICE,     /* cpu, cuda */
	V_DTYPE,      /* float32, float16, bfloat16 */
	V_PASS,       /* suite_passes[suite] */
	V_MODEL,      /* a built-in preset or one from `models:` */
	V_ATTENTION,  /* the attention impl inside the e2e model */
	V_POSITIVE,   /* decimal integer >= 1 */
	V_NONNEG,     /* decimal integer >= 0 */
	V_BOOL,       /* true, false */
	V_BYTES,      /* parse_bytes */
};

struct param_def {
	const char *key;
	enum value_kind kind;
	unsigned suites;    /* S_* mask of the suites that have this key */
	unsigned required;  /* S_* mask of the suites where it must be given */
};

static const struct param_def param_defs[P_COUNT] = {
	[P_IMPL] = {"impl", V_IMPL, S_ALL, S_ATT},
	[P_DEVICE] = {"device", V_DEVICE, S_ALL, 0},
	[P_DTYPE] = {"dtype", V_DTYPE, S_ALL, 0},
	[P_PASS] = {"pass", V_PASS, S_ALL, 0},
	[P_BATCH_SIZE] = {"batch_size", V_POSITIVE, S_ATT | S_E2E, 0},
	[P_HEADS] = {"heads", V_POSITIVE, S_ATT, 0},
	[P_SEQ_LEN] = {"seq_len", V_POSITIVE, S_ATT, S_ATT},
	[P_HEAD_DIM] = {"head_dim", V_POSITIVE, S_ATT, S_ATT},
	[P_CAUSAL] = {"causal", V_BOOL, S_ATT, 0},
	[P_MODEL] = {"model", V_MODEL, S_E2E, S_E2E},
	[P_CONTEXT_LENGTH] = {"context_length", V_POSITIVE, S_E2E, S_E2E},
	[P_ATTENTION] = {"attention", V_ATTENTION, S_E2E, 0},
	[P_VOCAB_SIZE] = {"vocab_size", V_POSITIVE, S_E2E, 0},
	[P_M] = {"m", V_POSITIVE, S_MM, 0},         /* m, n, k or size: checked on their own */
	[P_N] = {"n", V_POSITIVE, S_MM, 0},
	[P_K] = {"k", V_POSITIVE, S_MM, 0},
	[P_SIZE] = {"size", V_POSITIVE, S_MM, 0},
	[P_WARMUP] = {"warmup", V_NONNEG, S_ALL, 0},
	[P_ITERS] = {"iters", V_POSITIVE, S_ALL, 0},
	[P_SEED] = {"seed", V_NONNEG, S_ALL, 0},
	[P_MEM_LIMIT] = {"mem_limit", V_BYTES, S_ALL, 0},
	[P_SYNC] = {"sync", V_BOOL, S_ALL, 0},
	[P_TF32] = {"tf32", V_BOOL, S_ALL, 0},
};

static int is_matmul_shape(enum param_id id)
{
	return id == P_M || id == P_N || id == P_K || id == P_SIZE;
}

/* Built-in defaults of a suite (schemas/sweep-format.md, "Parameters"). */
static void case_defaults(enum suite_id suite, struct case_params *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->suite, sizeof(p->suite), "%s", suite_ids[suite]);
	p->device = DEVICE_CPU;
	p->dtype = DTYPE_FLOAT32;
	p->warmup = 2;
	p->iters = 10;
	p->seed = 0;
	p->mem_limit = 0;
	p->sync = 1;
	switch (suite) {
	case SUITE_ATTENTION:   /* impl is required */
		p->pass = PASS_FORWARD_BACKWARD;
		p->batch_size = 8;
		p->heads = 1;
		break;
	case SUITE_E2E:
		snprintf(p->impl, sizeof(p->impl), "benchdb");
		p->pass = PASS_TRAIN_STEP;
		p->batch_size = 4;
		snprintf(p->attention, sizeof(p->attention), "naive");
		break;
	case SUITE_MATMUL:
		snprintf(p->impl, sizeof(p->impl), "onednn");
		p->pass = PASS_FORWARD;
		break;
	default:
		break;
	}
}

static int param_find(const char *key)
{
	for (int i = 0; i < P_COUNT; i++)
		if (!strcmp(param_defs[i].key, key))
			return i;
	return -1;
}

static int suite_find(const char *name)
{
	for (int i = 0; i < SUITE_COUNT; i++)
		if (!strcmp(suite_ids[i], name))
			return i;
	return -1;
}

static int name_in(const char *const *names, const char *s)
{
	for (size_t i = 0; names && names[i]; i++)
		if (!strcmp(names[i], s))
			return 1;
	return 0;
}

/* ---- messages: valid-choice lists and did-you-mean ------------------------------------------ */

static void sb_add_list(struct strbuf *sb, const char *const *names)
{
	for (size_t i = 0; names[i]; i++) {
		if (i)
			sb_add(sb, ", ");
		sb_add(sb, names[i]);
	}
}

/* Parameter keys of the suites in mask, NULL-terminated, in param_defs order. */
static void param_keys(unsigned mask, const char *keys[P_COUNT + 1])
{
	size_t n = 0;
	for (int i = 0; i < P_COUNT; i++)
		if (param_defs[i].suites & mask)
			keys[n++] = param_defs[i].key;
	keys[n] = NULL;
}

/* Optimal string alignment distance (a transposition costs 1), case-insensitive. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca != cb;
			size_t best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* Common spellings from other tools that edit distance does not catch. */
static const char *const aliases[][2] = {
	{"fp32", "float32"}, {"float", "float32"}, {"fp16", "float16"}, {"half", "float16"},
	{"bf16", "bfloat16"}, {"gpu", "cuda"}, {"fwd", "forward"}, {"bwd", "backward"},
	{"fwd+bwd", "forward_backward"}, {"fwd_bwd", "forward_backward"}, {"train", "train_step"},
	{"cudnn", "sdpa"}, {"benchmark", "benchmarks"}, {"axis", "axes"}, {"excludes", "exclude"},
};

/* The name in names that word is most likely a typo of, or NULL when none is close. */
static const char *suggest(const char *word, const char *const *names)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(word, aliases[i][0]) && name_in(names, aliases[i][1]))
			return aliases[i][1];
	const char *best = NULL;
	size_t best_d = SIZE_MAX, len = strlen(word);
	for (size_t i = 0; names[i]; i++) {
		size_t d = edit_distance(word, names[i]);
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	if (best && best_d <= 3 && 3 * best_d <= len)
		return best;
	return NULL;
}

/* ---- scalar values ------------------------------------------------------------------------- */

/* Where value errors go: the file, the error record, the user presets, and a suffix naming
 * where a value came from when it is not where it is used (defaults). */
struct checker {
	const char *path;
	struct bd_error *err;
	const struct model_config *models;
	size_t nmodels;
	const struct sweep_peer *peers;
	size_t npeers;
	const char *where;
};

static int fail_at(const struct checker *ck, int line, int column, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(const struct checker *ck, int line, int column, const char *fmt, ...)
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
static int fail_choice(const struct checker *ck, const struct sweep_scalar *v, const char *head,
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
	int rc = fail_at(ck, v->line, v->column, "%s", sb_str(&sb));
	sb_free(&sb);
	return rc;
}

int parse_digits(const char *s, int64_t *out)
{
	if (!*s)
		return -1;
	int64_t v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		int d = *s - '0';
		if (v > (INT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int parse_bytes(const char *s, int64_t *out)
{
	static const struct { const char *suffix; int64_t mult; } units[] = {
		{"", 1}, {"b", 1},
		{"kb", 1000LL}, {"mb", 1000000LL}, {"gb", 1000000000LL}, {"tb", 1000000000000LL},
		{"kib", 1LL << 10}, {"mib", 1LL << 20}, {"gib", 1LL << 30}, {"tib", 1LL << 40},
	};
	if (!s || !out)
		return BD_EINVAL;
	const char *p = s;
	int64_t whole = 0, frac = 0, frac_scale = 1;
	int ndigits = 0, nfrac = 0;
	for (; *p >= '0' && *p <= '9'; p++, ndigits++) {
		if (whole > (INT64_MAX - (*p - '0')) / 10)
			return BD_EINVAL;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++) {
			if (nfrac >= 6)     /* keeps frac * mult within int64 */
				return BD_EINVAL;
			frac = frac * 10 + (*p - '0');
			frac_scale *= 10;
		}
		if (!nfrac)
			return BD_EINVAL;
	}
	if (!ndigits)
		return BD_EINVAL;
	while (*p == ' ')
		p++;
	char suffix[4];
	size_t n = strlen(p);
	if (n > 3)
		return BD_EINVAL;
	for (size_t i = 0; i <= n; i++)
		suffix[i] = (char)tolower((unsigned char)p[i]);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(suffix, units[i].suffix))
			continue;
		int64_t mult = units[i].mult;
		if (nfrac && mult == 1)     /* a fraction of a byte */
			return BD_EINVAL;
		if (whole > INT64_MAX / mult)
			return BD_EINVAL;
		int64_t v = whole * mult;
		int64_t extra = frac * mult / frac_scale;  /* rounds down to whole bytes */
		if (v > INT64_MAX - extra)
			return BD_EINVAL;
		*out = v + extra;
		return 0;
	}
	return BD_EINVAL;
}

/* A typed scalar; canon is its canonical text (duplicates, excludes, keys, JSON). */
struct value {
	int64_t num;       /* integers, byte sizes, booleans (0/1), device/dtype/pass enums */
	const char *str;   /* impl/model/attention: a static or sweep-owned name */
	char canon[64];
};

static const char *kind_noun(enum value_kind k)
{
	switch (k) {
	case V_IMPL: return "an impl name";
	case V_DEVICE: return "a device name";
	case V_DTYPE: return "a dtype name";
	case V_PASS: return "a pass name";
	case V_MODEL: return "a model name";
	case V_ATTENTION: return "an attention impl name";
	case V_POSITIVE: return "a positive integer";
	case V_NONNEG: return "a non-negative integer";
	case V_BOOL: return "true or false";
	case V_BYTES: return "a byte size";
	}
	return "a value";
}

static const struct model_config *model_find(const struct checker *ck, const char *name)
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
static int model_check(const struct model_config *m, char *msg, size_t size)
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

/* NULL-terminated union of the impl (or pass) names of every suite. */
static void union_names(enum value_kind kind, const char *out[32])
{
	size_t n = 0;
	for (int s = 0; s < SUITE_COUNT; s++) {
		const char *const *names = kind == V_IMPL ? workload_impl_names(suite_ids[s]) :
							    suite_passes[s];
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
		union_names(V_IMPL, builtin);
	size_t n = 0;
	while (names && names[n])
		n++;
	const char **all = malloc((n + ck->npeers + 1) * sizeof(*all));
	if (!all)
		return NULL;
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
	const char *for_suite = suite >= 0 ? suite_ids[suite] : NULL;
	int idx;

	switch (p->kind) {
	case V_DEVICE:
		if ((idx = device_parse(t)) < 0) {
			static const char *const devices[] = {"cpu", "cuda", NULL};
			snprintf(head, sizeof(head), "unknown device '%s'", t);
			return fail_choice(ck, v, head, devices);
		}
		out->num = idx;
		break;
	case V_DTYPE:
		if ((idx = dtype_parse(t)) < 0) {
			static const char *const dtypes[] = {"float32", "float16", "bfloat16", NULL};
			snprintf(head, sizeof(head), "unknown dtype '%s'", t);
			return fail_choice(ck, v, head, dtypes);
		}
		out->num = idx;
		break;
	case V_PASS: {
		const char *const *valid = names;
		if (for_suite)
			valid = suite_passes[suite];
		else
			union_names(V_PASS, names);
		if (!name_in(valid, t)) {
			if (pass_parse(t) >= 0 && for_suite)
				snprintf(head, sizeof(head), "pass '%s' is not supported by suite %s", t, for_suite);
			else if (for_suite)
				snprintf(head, sizeof(head), "unknown pass '%s' for suite %s", t, for_suite);
			else
				snprintf(head, sizeof(head), "unknown pass '%s'", t);
			return fail_choice(ck, v, head, valid);
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
			if (!(choices = impl_choices(ck, for_suite)))
				return bd_fail(ck->err, BD_ENOMEM, "out of memory");
			valid = choices;
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
				rc = fail_at(ck, v->line, v->column, "%s", sb_str(&sb));
				sb_free(&sb);
			} else {
				rc = fail_choice(ck, v, head, valid);
			}
			free(choices);
			return rc;
		}
		free(choices);
		break;
	}
	case V_MODEL: {
		const struct model_config *m = model_find(ck, t);
		if (!m) {
			const char **all = malloc((ck->nmodels + 8) * sizeof(*all));
			if (!all)
				return bd_fail(ck->err, BD_ENOMEM, "out of memory");
			size_t n = 0;
			for (size_t i = 0; model_presets[i].name[0]; i++)
				all[n++] = model_presets[i].name;
			for (size_t i = 0; i < ck->nmodels; i++)
				all[n++] = ck->models[i].name;
			all[n] = NULL;
			snprintf(head, sizeof(head), "unknown model '%s'", t);
			int rc = fail_choice(ck, v, head, all);
			free(all);
			return rc;
		}
		char msg[256];
		if (model_check(m, msg, sizeof(msg)))
			return fail_at(ck, v->line, v->column, "%s", msg);
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
static int value_parse(const struct checker *ck, enum param_id id, int suite,
		       const struct sweep_scalar *v, struct value *out)
{
	const struct param_def *p = &param_defs[id];
	const char *t = v->text;
	memset(out, 0, sizeof(*out));

	switch (p->kind) {
	case V_POSITIVE:
	case V_NONNEG: {
		int rc = parse_digits(t, &out->num);
		if (rc == -1)
			return fail_at(ck, v->line, v->column, "key '%s' expects %s, got '%s'", p->key,
				       kind_noun(p->kind), t);
		if (rc == -2)
			return fail_at(ck, v->line, v->column, "key '%s' value %s is too large (at most %" PRId64 ")",
				       p->key, t, INT64_MAX);
		if (out->num > sweep_value_max(p->key))
			return fail_at(ck, v->line, v->column, "key '%s' value %s is too large (at most %" PRId64 ")",
				       p->key, t, sweep_value_max(p->key));
		if (p->kind == V_POSITIVE && out->num < 1)
			return fail_at(ck, v->line, v->column, "key '%s' must be >= 1, got %" PRId64, p->key,
				       out->num);
		snprintf(out->canon, sizeof(out->canon), "%" PRId64, out->num);
		return 0;
	}
	case V_BOOL:
		if (!strcmp(t, "true"))
			out->num = 1;
		else if (!strcmp(t, "false"))
			out->num = 0;
		else
			return fail_at(ck, v->line, v->column, "key '%s' expects true or false, got '%s'",
				       p->key, t);
		snprintf(out->canon, sizeof(out->canon), "%s", out->num ? "true" : "false");
		return 0;
	case V_BYTES:
		if (parse_bytes(t, &out->num))
			return fail_at(ck, v->line, v->column,
				       "key '%s' expects a byte size (an integer, or a number with B, KB, MB, GB, "
				       "TB, KiB, MiB, GiB or TiB, e.g. '512MiB'), got '%s'", p->key, t);
		snprintf(out->canon, sizeof(out->canon), "%" PRId64, out->num);
		return 0;
	default:
		return value_parse_choice(ck, p, suite, v, out);
	}
}

/* ---- settings (owned by struct sweep) ------------------------------------------------------- */

static void setting_clear(struct sweep_setting *st)
{
	for (size_t i = 0; i < st->nvalues; i++)
		free(st->values[i].text);
	free(st->values);
	free(st->key);
	memset(st, 0, sizeof(*st));
}

static int setting_copy(struct sweep_setting *dst, const struct sweep_setting *src)
{
	*dst = *src;
	dst->key = NULL;
	dst->values = NULL;
	dst->nvalues = 0;
	if (!(dst->key = strdup(src->key)))
		return BD_ENOMEM;
	if (!(dst->values = calloc(src->nvalues, sizeof(*dst->values))))
		return BD_ENOMEM;
	for (size_t i = 0; i < src->nvalues; i++) {
		dst->values[i] = src->values[i];
		if (!(dst->values[i].text = strdup(src->values[i].text)))
			return BD_ENOMEM;
		dst->nvalues++;
	}
	return 0;
}

static void benchmark_clear(struct sweep_benchmark *b)
{
	for (size_t i = 0; i < b->nsettings; i++)
		setting_clear(&b->settings[i]);
	free(b->settings);
	for (size_t i = 0; i < b->nexcludes; i++) {
		for (size_t j = 0; j < b->excludes[i].npairs; j++)
			setting_clear(&b->excludes[i].pairs[j]);
		free(b->excludes[i].pairs);
	}
	free(b->excludes);
	free(b->suite);
}

void sweep_free(struct sweep *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nbenchmarks; i++)
		benchmark_clear(&s->benchmarks[i]);
	free(s->benchmarks);
	free(s->models);
	for (size_t i = 0; i < s->npeers; i++) {
		free(s->peers[i].name);
		free(s->peers[i].command);
		free(s->peers[i].suite);
	}
	free(s->peers);
	free(s->name);
	free(s->text);
	free(s->path);
	free(s);
}

/* ---- the YAML tree -------------------------------------------------------------------------- */

struct loader {
	struct checker ck;
	yaml_document_t *doc;
	struct sweep *s;
	struct sweep_setting *defaults;  /* `defaults:`, merged into each benchmark */
	size_t ndefaults;
	yaml_node_t **model_heads;       /* num_heads value of each user preset, for its check */
};

#define FOR_PAIRS(pair, map) \
	for (yaml_node_pair_t *pair = (map)->data.mapping.pairs.start; pair < (map)->data.mapping.pairs.top; pair++)

static yaml_node_t *node_get(const struct loader *L, int id)
{
	return yaml_document_get_node(L->doc, id);
}

static int node_line(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }
static int node_column(const yaml_node_t *n) { return (int)n->start_mark.column + 1; }
static const char *node_text(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static size_t node_pairs(const yaml_node_t *n)
{
	return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}
static size_t node_items(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

/* `key:` with nothing after it, `~` or `null`. */
static int node_is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *t = node_text(n);
	return !*t || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "NULL");
}

static const char *node_kind(const yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (node_is_null(n))
		return "no value";
	return "a single value";
}

static int fail_node(const struct loader *L, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_node(const struct loader *L, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[sizeof(((struct bd_error *)0)->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bd_fail_at(L->ck.err, BD_EINVAL, L->ck.path, node_line(n), node_column(n), "%s", msg);
}

static int fail_nomem(const struct loader *L)
{
	return bd_fail(L->ck.err, BD_ENOMEM, "out of memory");
}

/* Every key of map is a name, and none is repeated. */
static int check_keys(const struct loader *L, const yaml_node_t *map)
{
	FOR_PAIRS(pair, map) {
		yaml_node_t *k = node_get(L, pair->key);
		if (k->type != YAML_SCALAR_NODE || node_is_null(k))
			return fail_node(L, k, "a mapping key must be a name, got %s", node_kind(k));
		if (strlen(node_text(k)) != k->data.scalar.length)
			return fail_node(L, k, "a mapping key contains a nul character");
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
			yaml_node_t *prev = node_get(L, q->key);
			if (!strcmp(node_text(prev), node_text(k)))
				return fail_node(L, k, "duplicate key '%s' (first given at line %d, column %d)",
						 node_text(k), node_line(prev), node_column(prev));
		}
	}
	return 0;
}

/* The value of key in map (a mapping whose keys passed check_keys), or NULL. */
static yaml_node_t *map_get(const struct loader *L, const yaml_node_t *map, const char *key)
{
	FOR_PAIRS(pair, map)
		if (!strcmp(node_text(node_get(L, pair->key)), key))
			return node_get(L, pair->value);
	return NULL;
}

/* A scalar that is a plain string (name, description). */
static int load_string(const struct loader *L, const char *key, const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || node_is_null(n))
		return fail_node(L, n, "key '%s' expects a string, got %s", key, node_kind(n));
	return 0;
}

/*
 * `key: value` or `key: [values]` of parameter id into *out, every value checked for suite (-1:
 * any suite). force_axis: the key was inside `axes:`. out is cleared by setting_clear on failure
 * too (the caller owns it).
 */
static int setting_load(struct loader *L, const yaml_node_t *key, yaml_node_t *val,
			enum param_id id, int suite, int force_axis, struct sweep_setting *out)
{
	const struct param_def *p = &param_defs[id];
	char (*canon)[64] = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->line = node_line(key);
	out->column = node_column(key);
	out->is_axis = force_axis;
	if (!(out->key = strdup(p->key))) {
		rc = fail_nomem(L);
		goto done;
	}
	if (val->type == YAML_MAPPING_NODE) {
		rc = fail_node(L, val, "key '%s' expects %s or a list of them, got a mapping%s", p->key,
			       kind_noun(p->kind),
			       p->kind == V_MODEL ? " (define models under the top-level key 'models')" : "");
		goto done;
	}
	if (val->type == YAML_SCALAR_NODE && node_is_null(val)) {
		rc = fail_node(L, val, "key '%s' has no value", p->key);
		goto done;
	}
	size_t n = 1;
	yaml_node_item_t *items = NULL;
	if (val->type == YAML_SEQUENCE_NODE) {
		n = node_items(val);
		items = val->data.sequence.items.start;
		out->is_axis = 1;
		if (!n) {
			rc = fail_node(L, val, "key '%s' has an empty list of values", p->key);
			goto done;
		}
	}
	out->values = calloc(n, sizeof(*out->values));
	canon = calloc(n, sizeof(*canon));
	if (!out->values || !canon) {
		rc = fail_nomem(L);
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = items ? node_get(L, items[i]) : val;
		if (item->type != YAML_SCALAR_NODE) {
			rc = fail_node(L, item, "key '%s' expects %s, got %s", p->key, kind_noun(p->kind),
				       node_kind(item));
			goto done;
		}
		if (node_is_null(item)) {
			rc = fail_node(L, item, "key '%s' has an empty value in its list", p->key);
			goto done;
		}
		if (strlen(node_text(item)) != item->data.scalar.length) {
			rc = fail_node(L, item, "key '%s' has a value with a nul character", p->key);
			goto done;
		}
		struct sweep_scalar *sc = &out->values[out->nvalues];
		if (!(sc->text = strdup(node_text(item)))) {
			rc = fail_nomem(L);
			goto done;
		}
		sc->line = node_line(item);
		sc->column = node_column(item);
		out->nvalues++;
		struct value v;
		if ((rc = value_parse(&L->ck, id, suite, sc, &v)))
			goto done;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(canon[j], v.canon))
				continue;
			rc = fail_node(L, item, "key '%s' lists the value %s twice (first at line %d, column %d)",
				       p->key, v.canon, out->values[j].line, out->values[j].column);
			goto done;
		}
		memcpy(canon[i], v.canon, sizeof(v.canon));
	}
done:
	free(canon);
	return rc;
}

/* "unknown key 'x' for suite s (valid: ...)" with a did-you-mean, or a note when x belongs to
 * another suite. extra: structural keys also valid at this place (NULL-terminated) or NULL. */
static int fail_unknown_param(const struct loader *L, const yaml_node_t *key, int suite,
			      const char *const *extra)
{
	const char *valid[P_COUNT + 8];
	const char *t = node_text(key);
	param_keys(1u << suite, valid);
	size_t n = 0;
	while (valid[n])
		n++;
	for (size_t i = 0; extra && extra[i]; i++)
		valid[n++] = extra[i];
	valid[n] = NULL;

	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "unknown key '%s' for suite %s (valid: ", t, suite_ids[suite]);
	sb_add_list(&sb, valid);
	sb_addc(&sb, ')');
	const char *hint = suggest(t, valid);
	int id = param_find(t);
	if (hint) {
		sb_addf(&sb, "; did you mean '%s'?", hint);
	} else if (id >= 0) {
		sb_addf(&sb, "; '%s' is a key of suite", t);
		for (int s = 0; s < SUITE_COUNT; s++)
			if (param_defs[id].suites & (1u << s))
				sb_addf(&sb, " %s", suite_ids[s]);
	}
	int rc = fail_node(L, key, "%s", sb_str(&sb));
	sb_free(&sb);
	return rc;
}

static int load_models(struct loader *L, const yaml_node_t *node)
{
	static const char *const fields[] = {"d_model", "d_ff", "num_layers", "num_heads", "vocab_size", NULL};
	struct sweep *s = L->s;
	int rc;

	if (node->type != YAML_MAPPING_NODE)
		return fail_node(L, node, "key 'models' expects a mapping of model name to {d_model, d_ff, "
				 "num_layers, num_heads, vocab_size}, got %s", node_kind(node));
	if ((rc = check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	s->models = calloc(n ? n : 1, sizeof(*s->models));
	L->model_heads = calloc(n ? n : 1, sizeof(*L->model_heads));
	if (!s->models || !L->model_heads)
		return fail_nomem(L);

	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key), *spec = node_get(L, pair->value);
		const char *name = node_text(k);
		struct model_config *m = &s->models[s->nmodels];
		if (strlen(name) >= sizeof(m->name))
			return fail_node(L, k, "model name '%s' is too long (at most %zu characters)", name,
					 sizeof(m->name) - 1);
		for (const char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
				return fail_node(L, k, "model name '%s' may only contain letters, digits, '.', '_' "
						 "and '-'", name);
		for (size_t i = 0; model_presets[i].name[0]; i++)
			if (!strcmp(model_presets[i].name, name))
				return fail_node(L, k, "model name '%s' is a built-in preset (built-in: small, "
						 "medium, large, xl, 2.7B); choose another name", name);
		if (spec->type != YAML_MAPPING_NODE)
			return fail_node(L, spec, "model '%s' expects a mapping with keys d_model, d_ff, "
					 "num_layers, num_heads, vocab_size, got %s", name, node_kind(spec));
		if ((rc = check_keys(L, spec)))
			return rc;
		snprintf(m->name, sizeof(m->name), "%s", name);
		m->vocab_size = default_vocab_size;
		int64_t *dest[] = {&m->d_model, &m->d_ff, &m->num_layers, &m->num_heads, &m->vocab_size};
		FOR_PAIRS(field, spec) {
			yaml_node_t *fk = node_get(L, field->key), *fv = node_get(L, field->value);
			const char *fname = node_text(fk);
			size_t f = 0;
			while (fields[f] && strcmp(fields[f], fname))
				f++;
			if (!fields[f]) {
				const char *hint = suggest(fname, fields);
				char tail[64] = "";
				if (hint)
					snprintf(tail, sizeof(tail), "; did you mean '%s'?", hint);
				return fail_node(L, fk, "unknown key '%s' for model '%s' (valid: d_model, d_ff, "
						 "num_layers, num_heads, vocab_size)%s", fname, name, tail);
			}
			if (fv->type != YAML_SCALAR_NODE || node_is_null(fv))
				return fail_node(L, fv, "key '%s' of model '%s' expects a positive integer, got %s",
						 fname, name, node_kind(fv));
			int64_t v;
			int prc = parse_digits(node_text(fv), &v);
			if (prc == -1)
				return fail_node(L, fv, "key '%s' of model '%s' expects a positive integer, got '%s'",
						 fname, name, node_text(fv));
			if (prc == -2)
				return fail_node(L, fv, "key '%s' of model '%s' value %s is too large", fname, name,
						 node_text(fv));
			if (v < 1 || v > sweep_value_max(fname))
				return fail_node(L, fv, "key '%s' of model '%s' must be >= 1 and at most %" PRId64
						 ", got %" PRId64, fname, name, sweep_value_max(fname), v);
			*dest[f] = v;
			if (f == 3)
				L->model_heads[s->nmodels] = fv;
		}
		for (size_t f = 0; f < 4; f++)
			if (!*dest[f])
				return fail_node(L, spec, "model '%s' is missing required key '%s'", name, fields[f]);
		s->nmodels++;
	}
	L->ck.models = s->models;
	L->ck.nmodels = s->nmodels;
	return 0;
}

/* One field of a peer entry: command, suite or timeout. */
static int load_peer_field(struct loader *L, struct sweep_peer *peer, const yaml_node_t *fk,
			   const yaml_node_t *fv)
{
	static const char *const fields[] = {"command", "suite", "timeout", NULL};
	const char *fname = node_text(fk), *name = peer->name;
	if (!name_in(fields, fname)) {
		const char *hint = suggest(fname, fields);
		char tail[64] = "";
		if (hint)
			snprintf(tail, sizeof(tail), "; did you mean '%s'?", hint);
		return fail_node(L, fk, "unknown key '%s' for peer '%s' (valid: command, suite, timeout)%s",
				 fname, name, tail);
	}
	if (fv->type != YAML_SCALAR_NODE || node_is_null(fv))
		return fail_node(L, fv, "key '%s' of peer '%s' expects %s, got %s", fname, name,
				 !strcmp(fname, "command") ? "a shell command" :
				 !strcmp(fname, "suite") ? "a suite name" : "a positive integer (seconds)",
				 node_kind(fv));
	const char *t = node_text(fv);
	if (strlen(t) != fv->data.scalar.length)
		return fail_node(L, fv, "key '%s' of peer '%s' has a value with a nul character", fname,
				 name);
	if (!strcmp(fname, "command")) {
		const char *c = t;
		while (isspace((unsigned char)*c))
			c++;
		if (!*c)
			return fail_node(L, fv, "key 'command' of peer '%s' is empty", name);
		if (!(peer->command = strdup(t)))
			return fail_nomem(L);
	} else if (!strcmp(fname, "suite")) {
		if (!name_in(workload_suites, t) || suite_find(t) < 0) {
			struct sweep_scalar v = {(char *)t, node_line(fv), node_column(fv)};
			char head[160];
			snprintf(head, sizeof(head), "unknown suite '%s' for peer '%s'", t, name);
			return fail_choice(&L->ck, &v, head, workload_suites);
		}
		if (!(peer->suite = strdup(t)))
			return fail_nomem(L);
	} else {
		int64_t v = 0;
		int rc = parse_digits(t, &v);
		if (rc == -1)
			return fail_node(L, fv, "key 'timeout' of peer '%s' expects a positive integer "
					 "(seconds), got '%s'", name, t);
		if (rc == -2 || v > INT64_MAX / 1000000000)
			return fail_node(L, fv, "key 'timeout' of peer '%s' value %s is too large (at most %"
					 PRId64 " seconds)", name, t, INT64_MAX / 1000000000);
		if (v < 1)
			return fail_node(L, fv, "key 'timeout' of peer '%s' must be >= 1, got %" PRId64, name, v);
		peer->timeout_s = v;
	}
	return 0;
}

/* `peers:` name -> {command, suite, timeout}. Each name becomes an impl of its suite. */
static int load_peers(struct loader *L, const yaml_node_t *node)
{
	struct sweep *s = L->s;
	int rc;

	if (node->type != YAML_MAPPING_NODE)
		return fail_node(L, node, "key 'peers' expects a mapping of peer name to {command, suite, "
				 "timeout}, got %s", node_kind(node));
	if ((rc = check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	if (!(s->peers = calloc(n ? n : 1, sizeof(*s->peers))))
		return fail_nomem(L);
	const char *builtin[32];
	union_names(V_IMPL, builtin);

	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key), *spec = node_get(L, pair->value);
		const char *name = node_text(k);
		struct sweep_peer *peer = &s->peers[s->npeers];
		if (strlen(name) >= sizeof(((struct case_params *)0)->impl))
			return fail_node(L, k, "peer name '%s' is too long (at most %zu characters)", name,
					 sizeof(((struct case_params *)0)->impl) - 1);
		for (const char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
				return fail_node(L, k, "peer name '%s' may only contain letters, digits, '.', '_' "
						 "and '-'", name);
		if (name_in(builtin, name)) {
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "peer name '%s' is a built-in impl (built-in: ", name);
			sb_add_list(&sb, builtin);
			sb_add(&sb, "); choose another name");
			rc = fail_node(L, k, "%s", sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
		if (spec->type != YAML_MAPPING_NODE)
			return fail_node(L, spec, "peer '%s' expects a mapping with keys command, suite, "
					 "timeout, got %s", name, node_kind(spec));
		if ((rc = check_keys(L, spec)))
			return rc;
		if (!(peer->name = strdup(name)))
			return fail_nomem(L);
		s->npeers++;
		peer->timeout_s = SWEEP_PEER_TIMEOUT_S;
		peer->line = node_line(k);
		peer->column = node_column(k);
		FOR_PAIRS(field, spec)
			if ((rc = load_peer_field(L, peer, node_get(L, field->key), node_get(L, field->value))))
				return rc;
		if (!peer->command)
			return fail_node(L, spec, "peer '%s' is missing required key 'command' (the shell "
					 "command that runs it)", name);
		if (!peer->suite) {
			struct strbuf sb = STRBUF_INIT;
			sb_add_list(&sb, workload_suites);
			rc = fail_node(L, spec, "peer '%s' is missing required key 'suite' (valid: %s)", name,
				       sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
	}
	L->ck.peers = s->peers;
	L->ck.npeers = s->npeers;
	return 0;
}

/* m, n, k and size in one mapping: size sets all three, so it stands alone. */
static int check_shape_conflict(const struct loader *L, const struct sweep_setting *st, size_t n)
{
	const struct sweep_setting *size = NULL, *dim = NULL;
	for (size_t i = 0; i < n; i++) {
		int id = param_find(st[i].key);
		if (id == P_SIZE)
			size = &st[i];
		else if (id == P_M || id == P_N || id == P_K)
			dim = dim ? dim : &st[i];
	}
	if (size && dim)
		return fail_at(&L->ck, size->line, size->column,
			       "key 'size' cannot be combined with '%s' (size sets m, n and k)", dim->key);
	return 0;
}

static int load_defaults(struct loader *L, const yaml_node_t *node)
{
	int rc;
	if (node->type != YAML_MAPPING_NODE)
		return fail_node(L, node, "key 'defaults' expects a mapping of parameter keys, got %s",
				 node_kind(node));
	if ((rc = check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	if (!(L->defaults = calloc(n ? n : 1, sizeof(*L->defaults))))
		return fail_nomem(L);
	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key);
		int id = param_find(node_text(k));
		if (id < 0) {
			const char *valid[P_COUNT + 1];
			param_keys(S_ALL, valid);
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "unknown key '%s' in defaults (valid: ", node_text(k));
			sb_add_list(&sb, valid);
			sb_addc(&sb, ')');
			const char *hint = suggest(node_text(k), valid);
			if (hint)
				sb_addf(&sb, "; did you mean '%s'?", hint);
			rc = fail_node(L, k, "%s", sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
		rc = setting_load(L, k, node_get(L, pair->value), (enum param_id)id, -1, 0,
				  &L->defaults[L->ndefaults]);
		L->ndefaults++;
		if (rc)
			return rc;
	}
	return check_shape_conflict(L, L->defaults, L->ndefaults);
}

static int load_exclude_entry(struct loader *L, const yaml_node_t *node, int suite,
			      struct sweep_exclude *ex)
{
	int rc;
	ex->line = node_line(node);
	ex->column = node_column(node);
	if (node->type != YAML_MAPPING_NODE)
		return fail_node(L, node, "an exclude entry expects a mapping of key: value, got %s",
				 node_kind(node));
	if ((rc = check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	if (!n)
		return fail_node(L, node, "an exclude entry is empty (it would drop every case)");
	if (!(ex->pairs = calloc(n, sizeof(*ex->pairs))))
		return fail_nomem(L);
	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key);
		int id = param_find(node_text(k));
		if (id < 0 || !(param_defs[id].suites & (1u << suite))) {
			const char *valid[P_COUNT + 1];
			param_keys(1u << suite, valid);
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "exclude key '%s' is not a parameter of suite %s (valid: ", node_text(k),
				suite_ids[suite]);
			sb_add_list(&sb, valid);
			sb_addc(&sb, ')');
			const char *hint = suggest(node_text(k), valid);
			if (hint)
				sb_addf(&sb, "; did you mean '%s'?", hint);
			rc = fail_node(L, k, "%s", sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
		rc = setting_load(L, k, node_get(L, pair->value), (enum param_id)id, suite, 0,
				  &ex->pairs[ex->npairs]);
		ex->npairs++;
		if (rc)
			return rc;
	}
	return 0;
}

static int load_excludes(struct loader *L, yaml_node_t *node, int suite, struct sweep_benchmark *b)
{
	int rc;
	size_t n = 1;
	yaml_node_item_t *items = NULL;
	if (node->type == YAML_SEQUENCE_NODE) {
		n = node_items(node);
		items = node->data.sequence.items.start;
	} else if (node->type != YAML_MAPPING_NODE) {
		return fail_node(L, node, "key 'exclude' expects a list of mappings of key: value, got %s",
				 node_kind(node));
	}
	if (!n)
		return 0;
	if (!(b->excludes = calloc(n, sizeof(*b->excludes))))
		return fail_nomem(L);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *entry = items ? node_get(L, items[i]) : node;
		rc = load_exclude_entry(L, entry, suite, &b->excludes[b->nexcludes]);
		b->nexcludes++;
		if (rc)
			return rc;
	}
	return 0;
}

/* Position of setting key in b, or -1. */
static int benchmark_setting(const struct sweep_benchmark *b, const char *key)
{
	for (size_t i = 0; i < b->nsettings; i++)
		if (!strcmp(b->settings[i].key, key))
			return (int)i;
	return -1;
}

/* One parameter given in the benchmark itself (inline or in axes). */
static int load_param(struct loader *L, struct sweep_benchmark *b, int suite, const yaml_node_t *k,
		      yaml_node_t *v, int in_axes)
{
	static const char *const structural[] = {"suite", "axes", "exclude", NULL};
	const char *t = node_text(k);
	int id = param_find(t);
	if (id < 0 || !(param_defs[id].suites & (1u << suite)))
		return fail_unknown_param(L, k, suite, in_axes ? NULL : structural);
	int at = benchmark_setting(b, t);
	if (at >= 0)
		return fail_node(L, k, "duplicate key '%s' (first given at line %d, column %d)", t,
				 b->settings[at].line, b->settings[at].column);
	int rc = setting_load(L, k, v, (enum param_id)id, suite, in_axes, &b->settings[b->nsettings]);
	b->nsettings++;
	return rc;
}

/* Copy each default that applies to this suite and that the benchmark does not set; values
 * are re-checked for the suite (a default impl must exist in it). */
static int apply_defaults(struct loader *L, struct sweep_benchmark *b, int suite, size_t number)
{
	int has_shape = 0;
	for (size_t i = 0; i < b->nsettings; i++)
		has_shape |= is_matmul_shape((enum param_id)param_find(b->settings[i].key));
	char where[96];
	snprintf(where, sizeof(where), " (set in defaults, applied to benchmark %zu)", number);
	for (size_t i = 0; i < L->ndefaults; i++) {
		const struct sweep_setting *d = &L->defaults[i];
		int id = param_find(d->key);
		if (!(param_defs[id].suites & (1u << suite)) || benchmark_setting(b, d->key) >= 0)
			continue;
		if (has_shape && is_matmul_shape((enum param_id)id))
			continue;
		L->ck.where = where;
		for (size_t j = 0; j < d->nvalues; j++) {
			struct value v;
			int rc = value_parse(&L->ck, (enum param_id)id, suite, &d->values[j], &v);
			if (rc) {
				L->ck.where = NULL;
				return rc;
			}
		}
		L->ck.where = NULL;
		if (setting_copy(&b->settings[b->nsettings++], d))
			return fail_nomem(L);
	}
	return 0;
}

static int check_required(struct loader *L, const struct sweep_benchmark *b, int suite,
			  const yaml_node_t *node, size_t number)
{
	for (int i = 0; i < P_COUNT; i++) {
		if ((param_defs[i].required & (1u << suite)) && benchmark_setting(b, param_defs[i].key) < 0)
			return fail_node(L, node, "benchmark %zu (suite %s) is missing required key '%s'",
					 number, suite_ids[suite], param_defs[i].key);
	}
	if (suite == SUITE_MATMUL && benchmark_setting(b, "size") < 0) {
		static const char *const dims[] = {"m", "n", "k"};
		for (int i = 0; i < 3; i++)
			if (benchmark_setting(b, dims[i]) < 0)
				return fail_node(L, node, "benchmark %zu (suite matmul) is missing required key "
						 "'%s' (give m, n and k, or size)", number, dims[i]);
	}
	return 0;
}

static int load_benchmark(struct loader *L, yaml_node_t *node, size_t index, size_t *total)
{
	struct sweep_benchmark *b = &L->s->benchmarks[index];
	size_t number = index + 1;
	int rc;

	b->line = node_line(node);
	b->column = node_column(node);
	if (node->type != YAML_MAPPING_NODE)
		return fail_node(L, node, "benchmark %zu must be a mapping with a 'suite' key, got %s", number,
				 node_kind(node));
	if ((rc = check_keys(L, node)))
		return rc;

	yaml_node_t *suite_node = map_get(L, node, "suite");
	if (!suite_node) {
		struct strbuf sb = STRBUF_INIT;
		sb_add_list(&sb, workload_suites);
		rc = fail_node(L, node, "benchmark %zu is missing required key 'suite' (valid: %s)", number,
			       sb_str(&sb));
		sb_free(&sb);
		return rc;
	}
	if (suite_node->type != YAML_SCALAR_NODE || node_is_null(suite_node))
		return fail_node(L, suite_node, "key 'suite' expects a suite name, got %s",
				 node_kind(suite_node));
	const char *suite_name = node_text(suite_node);
	if (!name_in(workload_suites, suite_name)) {
		struct sweep_scalar v = {(char *)suite_name, node_line(suite_node), node_column(suite_node)};
		char head[128];
		snprintf(head, sizeof(head), "unknown suite '%s'", suite_name);
		return fail_choice(&L->ck, &v, head, workload_suites);
	}
	int suite = suite_find(suite_name);
	if (suite < 0)
		return fail_node(L, suite_node, "suite '%s' has no sweep parameters defined "
				 "(runner/sweep.c)", suite_name);
	if (!(b->suite = strdup(suite_name)))
		return fail_nomem(L);

	size_t cap = node_pairs(node) + L->ndefaults;
	yaml_node_t *axes = map_get(L, node, "axes");
	if (axes && axes->type == YAML_MAPPING_NODE)
		cap += node_pairs(axes);
	if (!(b->settings = calloc(cap ? cap : 1, sizeof(*b->settings))))
		return fail_nomem(L);

	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key), *v = node_get(L, pair->value);
		const char *t = node_text(k);
		if (!strcmp(t, "suite"))
			continue;
		if (!strcmp(t, "exclude")) {
			if ((rc = load_excludes(L, v, suite, b)))
				return rc;
			continue;
		}
		if (!strcmp(t, "axes")) {
			if (v->type != YAML_MAPPING_NODE)
				return fail_node(L, v, "key 'axes' expects a mapping of key: [values], got %s",
						 node_kind(v));
			if ((rc = check_keys(L, v)))
				return rc;
			FOR_PAIRS(ap, v)
				if ((rc = load_param(L, b, suite, node_get(L, ap->key), node_get(L, ap->value), 1)))
					return rc;
			continue;
		}
		if ((rc = load_param(L, b, suite, k, v, 0)))
			return rc;
	}
	if ((rc = check_shape_conflict(L, b->settings, b->nsettings)))
		return rc;
	if ((rc = apply_defaults(L, b, suite, number)))
		return rc;
	if ((rc = check_required(L, b, suite, node, number)))
		return rc;

	size_t cases = 1;
	for (size_t i = 0; i < b->nsettings; i++) {
		cases *= b->settings[i].nvalues;
		if (cases > SWEEP_MAX_CASES)
			break;
	}
	*total += cases;
	if (cases > SWEEP_MAX_CASES || *total > SWEEP_MAX_CASES)
		return fail_node(L, node, "the sweep expands to more than %d cases (at benchmark %zu)",
				 SWEEP_MAX_CASES, number);
	return 0;
}

static int load_sweep(struct loader *L, yaml_node_t *root)
{
	static const char *const top_keys[] = {"name", "description", "defaults", "benchmarks", "models",
					       "peers", NULL};
	struct sweep *s = L->s;
	int rc;

	if (root->type != YAML_MAPPING_NODE)
		return fail_node(L, root, "a sweep file must be a mapping with keys name, description, "
				 "defaults, benchmarks, models, peers; got %s", node_kind(root));
	if ((rc = check_keys(L, root)))
		return rc;
	FOR_PAIRS(pair, root) {
		yaml_node_t *k = node_get(L, pair->key);
		if (name_in(top_keys, node_text(k)))
			continue;
		const char *hint = suggest(node_text(k), top_keys);
		char tail[64] = "";
		if (hint)
			snprintf(tail, sizeof(tail), "; did you mean '%s'?", hint);
		else if (param_find(node_text(k)) >= 0)
			snprintf(tail, sizeof(tail), "; parameters go under 'defaults' or a benchmark");
		return fail_node(L, k, "unknown key '%s' (valid: name, description, defaults, benchmarks, "
				 "models, peers)%s", node_text(k), tail);
	}

	yaml_node_t *n;
	if ((n = map_get(L, root, "name"))) {
		if ((rc = load_string(L, "name", n)))
			return rc;
		if (!*node_text(n))
			return fail_node(L, n, "key 'name' is empty");
		if (!(s->name = strdup(node_text(n))))
			return fail_nomem(L);
	}
	if ((n = map_get(L, root, "description")) && (rc = load_string(L, "description", n)))
		return rc;
	if ((n = map_get(L, root, "models")) && (rc = load_models(L, n)))
		return rc;
	if ((n = map_get(L, root, "peers")) && (rc = load_peers(L, n)))
		return rc;
	if ((n = map_get(L, root, "defaults")) && (rc = load_defaults(L, n)))
		return rc;

	yaml_node_t *list = map_get(L, root, "benchmarks");
	if (!list)
		return fail_node(L, root, "missing required key 'benchmarks' (a list of benchmarks, each with "
				 "a 'suite')");
	if (list->type != YAML_SEQUENCE_NODE)
		return fail_node(L, list, "key 'benchmarks' expects a list of benchmarks, got %s",
				 node_kind(list));
	size_t count = node_items(list);
	if (!count)
		return fail_node(L, list, "key 'benchmarks' has an empty list (give at least one benchmark)");
	if (!(s->benchmarks = calloc(count, sizeof(*s->benchmarks))))
		return fail_nomem(L);
	size_t total = 0;
	for (size_t i = 0; i < count; i++) {
		s->nbenchmarks++;
		rc = load_benchmark(L, node_get(L, list->data.sequence.items.start[i]), i, &total);
		if (rc)
			return rc;
	}

	/* User presets no benchmark uses still have to be buildable. */
	for (size_t i = 0; i < s->nmodels; i++) {
		char msg[256];
		if (model_check(&s->models[i], msg, sizeof(msg)))
			return fail_node(L, L->model_heads[i], "%s", msg);
	}
	return 0;
}

/* ---- entry points --------------------------------------------------------------------------- */

static int yaml_fail(const char *path, const char *text, const yaml_parser_t *p, struct bd_error *err)
{
	if (p->error == YAML_MEMORY_ERROR)
		return bd_fail(err, BD_ENOMEM, "out of memory while parsing yaml");
	if (p->error == YAML_READER_ERROR) {
		int line = 1, column = 1;
		for (size_t i = 0; i < p->problem_offset && text[i]; i++) {
			if (text[i] == '\n') {
				line++;
				column = 1;
			} else {
				column++;
			}
		}
		if (p->problem_value != -1)
			return bd_fail_at(err, BD_EINVAL, path, line, column, "yaml reader error: %s #x%02x",
					  p->problem, p->problem_value);
		return bd_fail_at(err, BD_EINVAL, path, line, column, "yaml reader error: %s", p->problem);
	}
	int line = (int)p->problem_mark.line + 1, column = (int)p->problem_mark.column + 1;
	if (p->context)
		return bd_fail_at(err, BD_EINVAL, path, line, column, "yaml syntax error: %s (%s)",
				  p->problem ? p->problem : "?", p->context);
	return bd_fail_at(err, BD_EINVAL, path, line, column, "yaml syntax error: %s",
			  p->problem ? p->problem : "?");
}

/* The basename of path without its extension; "sweep" when that is empty. */
static char *name_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	if (!n)
		return strdup("sweep");
	return strndup(base, n);
}

int sweep_parse(const char *path, const char *text, struct sweep **out, struct bd_error *err)
{
	struct sweep *s = NULL;
	struct loader L = {{0}, NULL, NULL, NULL, 0, NULL};
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	int parser_ready = 0, doc_ready = 0, extra_ready = 0;
	int rc = 0;

	if (out)
		*out = NULL;
	if (!path)
		path = "";
	if (!text || !out) {
		rc = bd_fail(err, BD_EINVAL, "sweep_parse: no text or no output");
		goto done;
	}
	if ((rc = sweep_text_depth_check(path, text, err)))
		goto done;
	if (!(s = calloc(1, sizeof(*s))) || !(s->path = strdup(path)) || !(s->text = strdup(text))) {
		rc = bd_fail(err, BD_ENOMEM, "out of memory");
		goto done;
	}
	sha256_hex(text, strlen(text), s->hash);

	if (!yaml_parser_initialize(&parser)) {
		rc = bd_fail(err, BD_ENOMEM, "out of memory");
		goto done;
	}
	parser_ready = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&parser, &doc)) {   /* libyaml frees doc on failure */
		rc = yaml_fail(path, text, &parser, err);
		goto done;
	}
	doc_ready = 1;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		rc = bd_fail_at(err, BD_EINVAL, path, 1, 1,
				"the sweep file is empty (expected a mapping with a 'benchmarks' list)");
		goto done;
	}
	if (!yaml_parser_load(&parser, &extra)) {
		rc = yaml_fail(path, text, &parser, err);
		goto done;
	}
	extra_ready = 1;
	yaml_node_t *second = yaml_document_get_root_node(&extra);
	if (second) {
		rc = bd_fail_at(err, BD_EINVAL, path, (int)second->start_mark.line + 1,
				(int)second->start_mark.column + 1,
				"a sweep file holds one yaml document; a second one starts here");
		goto done;
	}

	L.ck.path = path;
	L.ck.err = err;
	L.doc = &doc;
	L.s = s;
	if ((rc = load_sweep(&L, root)))
		goto done;
	if (!s->name && !(s->name = name_from_path(path))) {
		rc = bd_fail(err, BD_ENOMEM, "out of memory");
		goto done;
	}
done:
	for (size_t i = 0; i < L.ndefaults; i++)
		setting_clear(&L.defaults[i]);
	free(L.defaults);
	free(L.model_heads);
	if (extra_ready)
		yaml_document_delete(&extra);
	if (doc_ready)
		yaml_document_delete(&doc);
	if (parser_ready)
		yaml_parser_delete(&parser);
	if (rc) {
		sweep_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int sweep_load(const char *path, struct sweep **out, struct bd_error *err)
{
	size_t len = 0;
	if (out)
		*out = NULL;
	char *text = NULL;
	int rc = sweep_file_read(path, &text, &len, err);
	if (rc)
		return rc;
	size_t nul = strlen(text);
	if (nul != len) {
		int line = 1, column = 1;
		for (size_t i = 0; i < nul; i++) {
			if (text[i] == '\n') {
				line++;
				column = 1;
			} else {
				column++;
			}
		}
		rc = bd_fail_at(err, BD_EINVAL, path, line, column, "the sweep file contains a nul byte");
	} else {
		rc = sweep_parse(path, text, out, err);
	}
	free(text);
	return rc;
}

/* ---- expansion ------------------------------------------------------------------------------ */

/* -1 when the count does not fit in int64 (only absurd user presets get there). */
/* What a case gets from its settings before model and shape are resolved. */
struct case_draft {
	struct case_params p;
	const char *model;     /* model name, resolved after all settings */
	int64_t vocab_size;    /* override, 0 if none */
	int64_t size;          /* matmul m = n = k, 0 if none */
};

static void draft_set(struct case_draft *c, enum param_id id, const struct value *v)
{
	struct case_params *p = &c->p;
	switch (id) {
	case P_IMPL: snprintf(p->impl, sizeof(p->impl), "%s", v->str); break;
	case P_DEVICE: p->device = (enum bd_device)v->num; break;
	case P_DTYPE: p->dtype = (enum bd_dtype)v->num; break;
	case P_PASS: p->pass = (enum bd_pass)v->num; break;
	case P_BATCH_SIZE: p->batch_size = v->num; break;
	case P_HEADS: p->heads = v->num; break;
	case P_SEQ_LEN: p->seq_len = v->num; break;
	case P_HEAD_DIM: p->head_dim = v->num; break;
	case P_CAUSAL: p->causal = (int)v->num; break;
	case P_MODEL: c->model = v->str; break;
	case P_CONTEXT_LENGTH: p->context_length = v->num; break;
	case P_ATTENTION: snprintf(p->attention, sizeof(p->attention), "%s", v->str); break;
	case P_VOCAB_SIZE: c->vocab_size = v->num; break;
	case P_M: p->m = v->num; break;
	case P_N: p->n = v->num; break;
	case P_K: p->k = v->num; break;
	case P_SIZE: c->size = v->num; break;
	case P_WARMUP: p->warmup = v->num; break;
	case P_ITERS: p->iters = v->num; break;
	case P_SEED: p->seed = (uint64_t)v->num; break;
	case P_MEM_LIMIT: p->mem_limit = v->num; break;
	case P_SYNC: p->sync = (int)v->num; break;
	case P_TF32: p->tf32 = (int)v->num; break;
	default: break;
	}
}

/* The case's value of a parameter as canonical text (the form value_parse gives). */
static void param_canon(const struct case_params *p, enum param_id id, char out[64])
{
	int64_t num = 0;
	const char *str = NULL;
	switch (id) {
	case P_IMPL: str = p->impl; break;
	case P_DEVICE: str = device_name(p->device); break;
	case P_DTYPE: str = dtype_name(p->dtype); break;
	case P_PASS: str = pass_name(p->pass); break;
	case P_BATCH_SIZE: num = p->batch_size; break;
	case P_HEADS: num = p->heads; break;
	case P_SEQ_LEN: num = p->seq_len; break;
	case P_HEAD_DIM: num = p->head_dim; break;
	case P_CAUSAL: str = p->causal ? "true" : "false"; break;
	case P_MODEL: str = p->model.name; break;
	case P_CONTEXT_LENGTH: num = p->context_length; break;
	case P_ATTENTION: str = p->attention; break;
	case P_VOCAB_SIZE: num = p->model.vocab_size; break;
	case P_M: num = p->m; break;
	case P_N: num = p->n; break;
	case P_K: num = p->k; break;
	case P_SIZE: if (p->m != p->n || p->m != p->k) str = ""; else num = p->m; break;
	case P_WARMUP: num = p->warmup; break;
	case P_ITERS: num = p->iters; break;
	case P_SEED: num = (int64_t)p->seed; break;
	case P_MEM_LIMIT: num = p->mem_limit; break;
	case P_SYNC: str = p->sync ? "true" : "false"; break;
	case P_TF32: str = p->tf32 ? "true" : "false"; break;
	default: str = ""; break;
	}
	if (str)
		snprintf(out, 64, "%s", str);
	else
		snprintf(out, 64, "%" PRId64, num);
}

static int case_excluded(const struct checker *ck, const struct sweep_benchmark *b, int suite,
			 const struct case_params *p, int *excluded)
{
	*excluded = 0;
	for (size_t e = 0; e < b->nexcludes; e++) {
		int all = 1;
		for (size_t i = 0; i < b->excludes[e].npairs && all; i++) {
			const struct sweep_setting *pair = &b->excludes[e].pairs[i];
			int id = param_find(pair->key);
			if (id < 0)
				return fail_at(ck, pair->line, pair->column, "unknown exclude key '%s'", pair->key);
			char have[64];
			param_canon(p, (enum param_id)id, have);
			int any = 0;
			for (size_t j = 0; j < pair->nvalues && !any; j++) {
				struct value v;
				int rc = value_parse(ck, (enum param_id)id, suite, &pair->values[j], &v);
				if (rc)
					return rc;
				any = !strcmp(have, v.canon);
			}
			all = any;
		}
		if (all) {
			*excluded = 1;
			return 0;
		}
	}
	return 0;
}

static const char *pass_label(enum bd_pass p)
{
	switch (p) {
	case PASS_FORWARD: return "fwd";
	case PASS_BACKWARD: return "bwd";
	case PASS_FORWARD_BACKWARD: return "fwd+bwd";
	case PASS_TRAIN_STEP: return "train_step";
	default: return "?";
	}
}

/* Canonical case key (schemas/sweep-format.md, "Case keys"). */
static char *case_key(int suite, const struct case_params *p)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "suite=%s impl=%s device=%s dtype=%s pass=%s", p->suite, p->impl,
		device_name(p->device), dtype_name(p->dtype), pass_name(p->pass));
	switch (suite) {
	case SUITE_ATTENTION:
		sb_addf(&sb, " batch_size=%" PRId64 " heads=%" PRId64 " seq_len=%" PRId64 " head_dim=%" PRId64
			" causal=%s", p->batch_size, p->heads, p->seq_len, p->head_dim,
			p->causal ? "true" : "false");
		break;
	case SUITE_E2E:
		sb_addf(&sb, " model=%s d_model=%" PRId64 " d_ff=%" PRId64 " num_layers=%" PRId64
			" num_heads=%" PRId64 " vocab_size=%" PRId64 " context_length=%" PRId64
			" batch_size=%" PRId64 " attention=%s", p->model.name, p->model.d_model, p->model.d_ff,
			p->model.num_layers, p->model.num_heads, p->model.vocab_size, p->context_length,
			p->batch_size, p->attention);
		break;
	case SUITE_MATMUL:
		sb_addf(&sb, " m=%" PRId64 " n=%" PRId64 " k=%" PRId64, p->m, p->n, p->k);
		break;
	default:
		break;
	}
	if (p->tf32)
		sb_add(&sb, " tf32=true");
	if (!p->sync)
		sb_add(&sb, " sync=false");
	return sb_detach(&sb);
}

/* Short label (schemas/sweep-format.md, "Case names"). */
static char *case_name(int suite, const struct case_params *p, int vocab_overridden,
		       int warmup_varies)
{
	struct strbuf sb = STRBUF_INIT;
	switch (suite) {
	case SUITE_ATTENTION:
		sb_addf(&sb, "%s %s %s B%" PRId64 " H%" PRId64 " S%" PRId64 " D%" PRId64, p->impl,
			dtype_name(p->dtype), pass_label(p->pass), p->batch_size, p->heads, p->seq_len,
			p->head_dim);
		if (p->causal)
			sb_add(&sb, " causal");
		break;
	case SUITE_E2E:   /* the impl only when it is not the default (a peer, say) */
		sb_add(&sb, "e2e ");
		if (strcmp(p->impl, "benchdb"))
			sb_addf(&sb, "%s ", p->impl);
		sb_addf(&sb, "%s %s %s ctx%" PRId64 " B%" PRId64, p->model.name, dtype_name(p->dtype),
			pass_label(p->pass), p->context_length, p->batch_size);
		if (strcmp(p->attention, "naive"))
			sb_addf(&sb, " attn=%s", p->attention);
		if (vocab_overridden)
			sb_addf(&sb, " V%" PRId64, p->model.vocab_size);
		break;
	case SUITE_MATMUL:
		sb_addf(&sb, "matmul %s %s %" PRId64 "x%" PRId64 "x%" PRId64, p->impl, dtype_name(p->dtype),
			p->m, p->n, p->k);
		break;
	default:
		break;
	}
	if (p->device != DEVICE_CPU)
		sb_addf(&sb, " %s", device_name(p->device));
	if (p->tf32)
		sb_add(&sb, " tf32");
	if (!p->sync)
		sb_add(&sb, " nosync");
	/* the key leaves warm-up out; the name tells cases of a warm-up axis apart */
	if (warmup_varies)
		sb_addf(&sb, " warmup%" PRId64, p->warmup);
	return sb_detach(&sb);
}

struct json_field {
	const char *key;
	const char *str;   /* a JSON string when set */
	char raw[64];      /* else a number or true/false */
};

static int json_field_cmp(const void *a, const void *b)
{
	return strcmp(((const struct json_field *)a)->key, ((const struct json_field *)b)->key);
}

/* Canonical JSON of every parameter of the case, keys sorted, no spaces. */
static char *case_json(int suite, const struct case_params *p)
{
	struct json_field f[P_COUNT + 8];
	size_t n = 0;
	f[n++] = (struct json_field){"suite", p->suite, ""};
	for (int i = 0; i < P_COUNT; i++) {
		if (!(param_defs[i].suites & (1u << suite)) || i == P_SIZE)
			continue;
		struct json_field *x = &f[n++];
		x->key = param_defs[i].key;
		x->str = NULL;
		switch (param_defs[i].kind) {
		case V_IMPL: x->str = p->impl; break;
		case V_DEVICE: x->str = device_name(p->device); break;
		case V_DTYPE: x->str = dtype_name(p->dtype); break;
		case V_PASS: x->str = pass_name(p->pass); break;
		case V_MODEL: x->str = p->model.name; break;
		case V_ATTENTION: x->str = p->attention; break;
		default: param_canon(p, (enum param_id)i, x->raw); break;
		}
	}
	if (suite == SUITE_E2E) {
		const char *keys[] = {"d_model", "d_ff", "num_layers", "num_heads"};
		const int64_t vals[] = {p->model.d_model, p->model.d_ff, p->model.num_layers,
					p->model.num_heads};
		for (int i = 0; i < 4; i++) {
			f[n].key = keys[i];
			f[n].str = NULL;
			snprintf(f[n].raw, sizeof(f[n].raw), "%" PRId64, vals[i]);
			n++;
		}
	}
	qsort(f, n, sizeof(f[0]), json_field_cmp);
	struct strbuf sb = STRBUF_INIT;
	sb_addc(&sb, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_addc(&sb, ',');
		sb_add_json_str(&sb, f[i].key);
		sb_addc(&sb, ':');
		if (f[i].str)
			sb_add_json_str(&sb, f[i].str);
		else
			sb_add(&sb, f[i].raw);
	}
	sb_addc(&sb, '}');
	return sb_detach(&sb);
}

static void case_clear(struct sweep_case *c)
{
	free(c->key);
	free(c->params_json);
	free(c->name);
}

void sweep_cases_free(struct sweep_cases *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		case_clear(&c->items[i]);
	free(c->items);
	c->items = NULL;
	c->n = 0;
}

/* Type one combination (pos[i]: the value index of setting i) into d. */
static int draft_build(const struct checker *ck, const struct sweep_benchmark *b, int suite,
		       const size_t *pos, struct case_draft *d)
{
	int rc;
	memset(d, 0, sizeof(*d));
	case_defaults((enum suite_id)suite, &d->p);
	const struct sweep_setting *model_setting = NULL;
	const struct sweep_scalar *vocab_value = NULL;
	for (size_t i = 0; i < b->nsettings; i++) {
		const struct sweep_setting *st = &b->settings[i];
		int id = param_find(st->key);
		if (id < 0 || !(param_defs[id].suites & (1u << suite)))
			return fail_at(ck, st->line, st->column, "unknown key '%s' for suite %s", st->key,
				       suite_ids[suite]);
		struct value v;
		if ((rc = value_parse(ck, (enum param_id)id, suite, &st->values[pos[i]], &v)))
			return rc;
		if (id == P_MODEL)
			model_setting = st;
		if (id == P_VOCAB_SIZE)
			vocab_value = &st->values[pos[i]];
		draft_set(d, (enum param_id)id, &v);
	}
	if (d->size)
		d->p.m = d->p.n = d->p.k = d->size;
	if (suite == SUITE_E2E) {
		const struct model_config *m = d->model ? model_find(ck, d->model) : NULL;
		if (!m)
			return fail_at(ck, model_setting ? model_setting->line : b->line,
				       model_setting ? model_setting->column : b->column,
				       "benchmark (suite e2e) has no known model");
		d->p.model = *m;
		if (d->vocab_size) {
			char msg[256];
			d->p.model.vocab_size = d->vocab_size;
			if (model_check(&d->p.model, msg, sizeof(msg)))
				return fail_at(ck, vocab_value->line, vocab_value->column,
					       "%s (with vocab_size %" PRId64 ")", msg, d->vocab_size);
		}
	}
	if (!d->p.impl[0])
		return fail_at(ck, b->line, b->column, "benchmark (suite %s) has no impl", suite_ids[suite]);
	char too_large[256];
	if (sweep_case_sizes_check(&d->p, too_large, sizeof(too_large)))
		return fail_at(ck, b->line, b->column, "%s", too_large);
	return 0;
}

static int expand_benchmark(const struct checker *ck, const struct sweep *s, size_t index,
			    struct sweep_cases *out, size_t *cap)
{
	const struct sweep_benchmark *b = &s->benchmarks[index];
	size_t *pos = NULL;
	size_t kept = 0;
	int rc = 0;

	int suite = suite_find(b->suite ? b->suite : "");
	if (suite < 0) {
		rc = fail_at(ck, b->line, b->column, "unknown suite '%s'", b->suite ? b->suite : "");
		goto done;
	}
	if (!(pos = calloc(b->nsettings + 1, sizeof(*pos)))) {
		rc = bd_fail(ck->err, BD_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < b->nsettings; i++) {
		if (!b->settings[i].nvalues) {
			rc = fail_at(ck, b->settings[i].line, b->settings[i].column,
				     "key '%s' has an empty list of values", b->settings[i].key);
			goto done;
		}
	}
	for (;;) {
		struct case_draft d;
		int excluded;
		if ((rc = draft_build(ck, b, suite, pos, &d)))
			goto done;
		if ((rc = case_excluded(ck, b, suite, &d.p, &excluded)))
			goto done;
		if (!excluded) {
			if (out->n == *cap) {
				size_t want = *cap ? *cap * 2 : 16;
				struct sweep_case *items = realloc(out->items, want * sizeof(*items));
				if (!items) {
					rc = bd_fail(ck->err, BD_ENOMEM, "out of memory");
					goto done;
				}
				out->items = items;
				*cap = want;
			}
			struct sweep_case *c = &out->items[out->n++];
			c->index = out->n - 1;
			c->benchmark = index;
			c->params = d.p;
			c->key = case_key(suite, &d.p);
			c->params_json = case_json(suite, &d.p);
			int w = benchmark_setting(b, "warmup");
			c->name = case_name(suite, &d.p, d.vocab_size && d.model &&
					    d.vocab_size != model_find(ck, d.model)->vocab_size,
					    w >= 0 && b->settings[w].nvalues > 1);
			c->peer = NULL;
			for (size_t j = 0; j < s->npeers; j++)
				if (!strcmp(s->peers[j].name, d.p.impl) && !strcmp(s->peers[j].suite, b->suite))
					c->peer = &s->peers[j];
			kept++;
		}
		/* odometer: the last setting varies fastest */
		size_t i = b->nsettings;
		while (i > 0) {
			i--;
			if (++pos[i] < b->settings[i].nvalues)
				break;
			pos[i] = 0;
			if (i == 0) {
				i = SIZE_MAX;
				break;
			}
		}
		if (i == SIZE_MAX || b->nsettings == 0)
			break;
	}
	if (!kept)
		rc = fail_at(ck, b->line, b->column, "benchmark %zu (suite %s): every case is excluded",
			     index + 1, suite_ids[suite]);
done:
	free(pos);
	return rc;
}

int sweep_expand(const struct sweep *s, struct sweep_cases *out, struct bd_error *err)
{
	struct checker ck = {s ? s->path : "", err, s ? s->models : NULL, s ? s->nmodels : 0,
			     s ? s->peers : NULL, s ? s->npeers : 0, NULL};
	size_t cap = 0;
	int rc = 0;

	if (!out)
		return bd_fail(err, BD_EINVAL, "sweep_expand: no output");
	out->items = NULL;
	out->n = 0;
	if (!s) {
		rc = bd_fail(err, BD_EINVAL, "sweep_expand: no sweep");
		goto done;
	}
	for (size_t i = 0; i < s->nbenchmarks; i++)
		if ((rc = expand_benchmark(&ck, s, i, out, &cap)))
			goto done;
done:
	if (rc)
		sweep_cases_free(out);
	return rc;
}
