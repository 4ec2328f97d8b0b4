/* runner/sweep.c: sweep files (format: schemas/sweep-format.md) -> validated struct sweep.
 *
 * sweep_parse() walks libyaml's document tree once and checks everything that does not depend on
 * a combination of values: keys, types, closed choices, empty axes, repeated values, duplicate
 * keys, required keys and models; one value at a time is checked by sweep_values.c, and
 * sweep_expand.c makes the cases. Positions stored in struct sweep are 1-based, like bd_error's.
 *
 * The parameters themselves — keys, suites, defaults, places in case_params, case-key tokens —
 * are one table, common/params.c, the single source for the documented tables in
 * schemas/sweep-format.md; change both together.
 */
#include "sweep_loader.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "sweep_limits.h"
#include "workload.h"
#include "xalloc.h"

/* ---- settings (owned by struct sweep) ------------------------------------------------------- */

static void setting_clear(struct sweep_setting *st)
{
	for (size_t i = 0; i < st->nvalues; i++)
		free(st->values[i].text);
	free(st->values);
	free(st->key);
	memset(st, 0, sizeof(*st));
}

static void setting_copy(struct sweep_setting *dst, const struct sweep_setting *src)
{
	*dst = *src;
	dst->key = xstrdup(src->key);
	dst->values = xcalloc(src->nvalues, sizeof(*dst->values));
	for (size_t i = 0; i < src->nvalues; i++) {
		dst->values[i] = src->values[i];
		dst->values[i].text = xstrdup(src->values[i].text);
	}
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
		for (size_t j = 0; j < s->peers[i].nparams; j++) {
			struct sweep_peer_param *d = &s->peers[i].params[j];
			for (size_t v = 0; v < d->nvalues; v++)
				free(d->values[v]);
			free(d->values);
			free(d->name);
			free(d->def);
		}
		free(s->peers[i].params);
	}
	free(s->peers);
	free(s->name);
	free(s->text);
	free(s->path);
	free(s);
}

/* ---- the YAML tree -------------------------------------------------------------------------- */

/* sweep_loader.h */
int sweep_fail_node(const struct loader *L, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[sizeof(((struct bd_error *)0)->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bd_fail_at(L->ck.err, BD_EINVAL, L->ck.path, node_line(n), node_column(n), "%s", msg);
}

/* sweep_loader.h */
int sweep_check_keys(const struct loader *L, const yaml_node_t *map)
{
	struct sweep_seen seen;
	int rc = 0;
	sweep_seen_init(&seen, node_pairs(map));
	FOR_PAIRS(pair, map) {
		yaml_node_t *k = node_get(L, pair->key);
		if (k->type != YAML_SCALAR_NODE || node_is_null(k)) {
			rc = sweep_fail_node(L, k, "a mapping key must be a name, got %s", node_kind(k));
			break;
		}
		if (strlen(node_text(k)) != k->data.scalar.length) {
			rc = sweep_fail_node(L, k, "a mapping key contains a nul character");
			break;
		}
		/* checked before any other key: a benchmark whose suite comes from the merge would
		 * otherwise be reported as missing it */
		if (k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !strcmp(node_text(k), "<<")) {
			rc = sweep_fail_node(L, k, "merge keys ('<<') are not supported; write the keys "
					     "out, or use an alias of a whole value (- *name)");
			break;
		}
		long first = sweep_seen_add(&seen, node_text(k), (size_t)(pair - map->data.mapping.pairs.start));
		if (first >= 0) {
			yaml_node_t *prev = node_get(L, map->data.mapping.pairs.start[first].key);
			rc = sweep_fail_node(L, k, "duplicate key '%s' (first given at line %d, column %d)",
					     node_text(k), node_line(prev), node_column(prev));
			break;
		}
	}
	sweep_seen_free(&seen);
	return rc;
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
		return sweep_fail_node(L, n, "key '%s' expects a string, got %s", key, node_kind(n));
	return 0;
}

/*
 * `key: value` or `key: [values]` of parameter id into *out, every value checked for suite (-1:
 * any suite). force_axis: the key was inside `axes:`. out is cleared by setting_clear on failure
 * too (the caller owns it).
 */
static int setting_load(struct loader *L, const yaml_node_t *key, yaml_node_t *val,
			const struct param_def *p, int suite, int force_axis, struct sweep_setting *out)
{
	char (*canon)[64] = NULL;
	struct sweep_seen seen = {NULL, NULL, 0};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->line = node_line(key);
	out->column = node_column(key);
	out->is_axis = force_axis;
	out->key = xstrdup(p->key);
	if (val->type == YAML_MAPPING_NODE) {
		rc = sweep_fail_node(L, val, "key '%s' expects %s or a list of them, got a mapping%s", p->key,
			       sweep_kind_noun(p->kind),
			       p->kind == V_MODEL ? " (define models under the top-level key 'models')" : "");
		goto done;
	}
	if (val->type == YAML_SCALAR_NODE && node_is_null(val)) {
		rc = sweep_fail_node(L, val, "key '%s' has no value", p->key);
		goto done;
	}
	size_t n = 1;
	yaml_node_item_t *items = NULL;
	if (val->type == YAML_SEQUENCE_NODE) {
		n = node_items(val);
		items = val->data.sequence.items.start;
		out->is_axis = 1;
		if (!n) {
			rc = sweep_fail_node(L, val, "key '%s' has an empty list of values", p->key);
			goto done;
		}
	}
	out->values = xcalloc(n, sizeof(*out->values));
	canon = xcalloc(n, sizeof(*canon));
	sweep_seen_init(&seen, n);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = items ? node_get(L, items[i]) : val;
		if (item->type != YAML_SCALAR_NODE) {
			rc = sweep_fail_node(L, item, "key '%s' expects %s, got %s", p->key, sweep_kind_noun(p->kind),
				       node_kind(item));
			goto done;
		}
		if (node_is_null(item)) {
			rc = sweep_fail_node(L, item, "key '%s' has an empty value in its list", p->key);
			goto done;
		}
		if (strlen(node_text(item)) != item->data.scalar.length) {
			rc = sweep_fail_node(L, item, "key '%s' has a value with a nul character", p->key);
			goto done;
		}
		struct sweep_scalar *sc = &out->values[out->nvalues];
		sc->text = xstrdup(node_text(item));
		sc->line = node_line(item);
		sc->column = node_column(item);
		out->nvalues++;
		struct value v;
		if ((rc = sweep_value_parse(&L->ck, p, suite, sc, &v)))
			goto done;
		memcpy(canon[i], v.canon, sizeof(v.canon));
		long j = sweep_seen_add(&seen, canon[i], i);
		if (j >= 0) {
			rc = sweep_fail_node(L, item, "key '%s' lists the value %s twice (first at line %d, column %d)",
				       p->key, v.canon, out->values[j].line, out->values[j].column);
			goto done;
		}
	}
done:
	sweep_seen_free(&seen);
	free(canon);
	return rc;
}

/* "unknown key 'x' for suite s (valid: ...)" with a did-you-mean, or a note when x belongs to
 * another suite. extra: structural keys also valid at this place (NULL-terminated) or NULL. */
static int fail_unknown_param(const struct loader *L, const yaml_node_t *key, int suite,
			      const char *const *extra)
{
	const char *valid[PARAM_MAX + 8];
	const char *t = node_text(key);
	sweep_param_keys(SUITE_BIT(suite), valid);
	size_t n = 0;
	while (valid[n])
		n++;
	for (size_t i = 0; extra && extra[i]; i++)
		valid[n++] = extra[i];
	valid[n] = NULL;

	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "unknown key '%s' for suite %s (valid: ", t, suite_name((enum suite_id)suite));
	sb_add_list(&sb, valid);
	sb_addc(&sb, ')');
	const char *hint = suggest(t, valid);
	const struct param_def *d = sweep_param(t);
	if (hint) {
		sb_addf(&sb, "; did you mean '%s'?", hint);
	} else if (d) {
		sb_addf(&sb, "; '%s' is a key of suite", t);
		for (int s = 0; s < SUITE_COUNT; s++)
			if (d->sweep & SUITE_BIT(s))
				sb_addf(&sb, " %s", suite_name((enum suite_id)s));
	}
	int rc = sweep_fail_node(L, key, "%s", sb_str(&sb));
	sb_free(&sb);
	return rc;
}

/* m, n, k and size in one mapping: size sets all three, so it stands alone. */
static int check_shape_conflict(const struct loader *L, const struct sweep_setting *st, size_t n)
{
	const struct sweep_setting *size = NULL, *dim = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(st[i].key, "size"))
			size = &st[i];
		else if (sweep_is_matmul_shape(sweep_param(st[i].key)))
			dim = dim ? dim : &st[i];
	}
	if (size && dim)
		return sweep_fail_at(&L->ck, size->line, size->column,
			       "key 'size' cannot be combined with '%s' (size sets m, n and k)", dim->key);
	return 0;
}

static int load_defaults(struct loader *L, const yaml_node_t *node)
{
	int rc;
	if (node->type != YAML_MAPPING_NODE)
		return sweep_fail_node(L, node, "key 'defaults' expects a mapping of parameter keys, got %s",
				 node_kind(node));
	if ((rc = sweep_check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	L->defaults = xcalloc(n, sizeof(*L->defaults));
	L->default_applied = xcalloc(n ? n : 1, 1);
	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key);
		const struct param_def *d = sweep_param(node_text(k));
		if (!d && sweep_peer_param_declared(L, node_text(k), -1)) {
			rc = sweep_peer_setting_load(L, k, node_get(L, pair->value), 0,
						     &L->defaults[L->ndefaults]);
			L->ndefaults++;
			if (rc)
				return rc;
			continue;
		}
		if (!d) {
			const char *valid[PARAM_MAX + 1];
			sweep_param_keys(S_ALL, valid);
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "unknown key '%s' in defaults (valid: ", node_text(k));
			sb_add_list(&sb, valid);
			sb_addc(&sb, ')');
			const char *hint = suggest(node_text(k), valid);
			if (hint)
				sb_addf(&sb, "; did you mean '%s'?", hint);
			rc = sweep_fail_node(L, k, "%s", sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
		rc = setting_load(L, k, node_get(L, pair->value), d, -1, 0, &L->defaults[L->ndefaults]);
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
		return sweep_fail_node(L, node, "an exclude entry expects a mapping of key: value, got %s",
				 node_kind(node));
	if ((rc = sweep_check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	if (!n)
		return sweep_fail_node(L, node, "an exclude entry is empty (it would drop every case)");
	ex->pairs = xcalloc(n, sizeof(*ex->pairs));
	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key);
		const struct param_def *d = sweep_param(node_text(k));
		if ((!d || !(d->sweep & SUITE_BIT(suite))) &&
		    sweep_peer_param_declared(L, node_text(k), suite)) {
			rc = sweep_peer_setting_load(L, k, node_get(L, pair->value), 0, &ex->pairs[ex->npairs]);
			ex->npairs++;
			if (rc)
				return rc;
			continue;
		}
		if (!d || !(d->sweep & SUITE_BIT(suite))) {
			const char *valid[PARAM_MAX + 1];
			sweep_param_keys(SUITE_BIT(suite), valid);
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "exclude key '%s' is not a parameter of suite %s (valid: ", node_text(k),
				suite_name((enum suite_id)suite));
			sb_add_list(&sb, valid);
			sb_addc(&sb, ')');
			const char *hint = suggest(node_text(k), valid);
			if (hint)
				sb_addf(&sb, "; did you mean '%s'?", hint);
			rc = sweep_fail_node(L, k, "%s", sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
		rc = setting_load(L, k, node_get(L, pair->value), d, suite, 0, &ex->pairs[ex->npairs]);
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
		return sweep_fail_node(L, node, "key 'exclude' expects a list of mappings of key: value, got %s",
				 node_kind(node));
	}
	if (!n)
		return 0;
	b->excludes = xcalloc(n, sizeof(*b->excludes));
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
int sweep_setting_index(const struct sweep_benchmark *b, const char *key)
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
	const struct param_def *d = sweep_param(t);
	int peer_param = (!d || !(d->sweep & SUITE_BIT(suite))) &&
			 sweep_peer_param_declared(L, t, suite);
	if ((!d || !(d->sweep & SUITE_BIT(suite))) && !peer_param)
		return fail_unknown_param(L, k, suite, in_axes ? NULL : structural);
	int at = sweep_setting_index(b, t);
	if (at >= 0)
		return sweep_fail_node(L, k, "duplicate key '%s' (first given at line %d, column %d)", t,
				 b->settings[at].line, b->settings[at].column);
	int rc = peer_param ? sweep_peer_setting_load(L, k, v, in_axes, &b->settings[b->nsettings])
			    : setting_load(L, k, v, d, suite, in_axes, &b->settings[b->nsettings]);
	b->nsettings++;
	return rc;
}

/* ---- iters: auto ---------------------------------------------------------------------------- */

/* Whether setting st has the value text. */
static int setting_has(const struct sweep_setting *st, const char *text)
{
	for (size_t i = 0; st && i < st->nvalues; i++)
		if (!strcmp(st->values[i].text, text))
			return 1;
	return 0;
}

/* The benchmark's iters: its own setting, else the one in defaults; NULL when neither has one. */
static const struct sweep_setting *iters_setting(const struct loader *L,
						 const struct sweep_benchmark *b)
{
	int at = sweep_setting_index(b, "iters");
	if (at >= 0)
		return &b->settings[at];
	for (size_t i = 0; i < L->ndefaults; i++)
		if (!strcmp(L->defaults[i].key, "iters"))
			return &L->defaults[i];
	return NULL;
}

/* The keys of iters: auto's stopping rule, ", "-separated: "min_iters, max_iters, ...". */
static void auto_keys(struct strbuf *sb)
{
	for (size_t i = 0, n = 0; i < param_count; i++)
		if (param_defs[i].auto_only)
			sb_addf(sb, "%s%s", n++ ? ", " : "", param_defs[i].key);
}

/* A stopping-rule key (auto_only) in a benchmark whose iters is never auto is a mistake (it would
 * do nothing); so is one given as an axis beside a fixed count of iters, whose cases it would
 * repeat once per value. The defaults give such keys only to benchmarks whose iters may be auto
 * (apply_defaults), so the first can only be the benchmark's own. */
static int check_auto_keys(struct loader *L, const struct sweep_benchmark *b, size_t number)
{
	const struct sweep_setting *iters = iters_setting(L, b);
	for (size_t i = 0; i < b->nsettings; i++) {
		const struct sweep_setting *st = &b->settings[i];
		const struct param_def *d = sweep_param(st->key);
		int has_count = iters && (iters->nvalues > 1 || !setting_has(iters, "auto"));
		if (st->peer_param || !d->auto_only || (setting_has(iters, "auto") && (st->nvalues == 1 || !has_count)))
			continue;
		struct strbuf sb = STRBUF_INIT;
		if (!setting_has(iters, "auto"))
			sb_addf(&sb, "key '%s' applies only to iters: auto, and benchmark %zu has iters %s "
				"(set iters: auto, or drop '%s'; the keys of iters: auto: ", st->key, number,
				iters ? iters->values[0].text : "10 (the default)", st->key);
		else
			sb_addf(&sb, "key '%s' is an axis, but benchmark %zu's iters also has a fixed count, "
				"whose cases would repeat once per value of '%s' (give iters: auto alone, or "
				"one value of '%s'; the keys of iters: auto: ", st->key, number, st->key, st->key);
		auto_keys(&sb);
		sb_addc(&sb, ')');
		int rc = sweep_fail_at(&L->ck, st->line, st->column, "%s", sb_str(&sb));
		sb_free(&sb);
		return rc;
	}
	return 0;
}

/* Copy each default that applies to this suite and that the benchmark does not set; values
 * are re-checked for the suite (a default impl must exist in it). A stopping-rule key of
 * iters: auto goes only to a benchmark whose iters may be auto. */
static int apply_defaults(struct loader *L, struct sweep_benchmark *b, int suite, size_t number)
{
	size_t first = b->nsettings;   /* the applied defaults start here */
	size_t *from = xcalloc(L->ndefaults + 1, sizeof(*from));   /* default index of each */
	int has_shape = 0;
	int may_be_auto = setting_has(iters_setting(L, b), "auto");
	for (size_t i = 0; i < b->nsettings; i++)
		has_shape |= sweep_is_matmul_shape(sweep_param(b->settings[i].key));
	char where[96];
	snprintf(where, sizeof(where), " (set in defaults, applied to benchmark %zu)", number);
	for (size_t i = 0; i < L->ndefaults; i++) {
		const struct sweep_setting *d = &L->defaults[i];
		const struct param_def *def = sweep_param(d->key);
		if (d->peer_param || !(def->sweep & SUITE_BIT(suite)) || sweep_setting_index(b, d->key) >= 0)
			continue;
		if ((has_shape && sweep_is_matmul_shape(def)) || (def->auto_only && !may_be_auto))
			continue;
		L->ck.where = where;
		for (size_t j = 0; j < d->nvalues; j++) {
			struct value v;
			int rc = sweep_value_parse(&L->ck, def, suite, &d->values[j], &v);
			if (rc) {
				L->ck.where = NULL;
				free(from);
				return rc;
			}
		}
		L->ck.where = NULL;
		from[b->nsettings - first] = i;
		setting_copy(&b->settings[b->nsettings++], d);
		L->default_applied[i] = 1;
	}
	/* a peer's parameters, once the impls (perhaps from defaults too) are known */
	for (size_t i = 0; i < L->ndefaults; i++) {
		const struct sweep_setting *d = &L->defaults[i];
		if (d->peer_param && sweep_setting_index(b, d->key) < 0 &&
		    sweep_peer_param_taken(L, b, d->key)) {
			from[b->nsettings - first] = i;
			setting_copy(&b->settings[b->nsettings++], d);
			L->default_applied[i] = 1;
		}
	}
	/* in the order of the defaults mapping, peer parameters among the others: that order is the
	 * product's (a later default varies faster) */
	for (size_t i = first + 1; i < b->nsettings; i++)
		for (size_t j = i; j > first && from[j - first - 1] > from[j - first]; j--) {
			struct sweep_setting t = b->settings[j];
			size_t f = from[j - first];
			b->settings[j] = b->settings[j - 1];
			b->settings[j - 1] = t;
			from[j - first] = from[j - first - 1];
			from[j - first - 1] = f;
		}
	free(from);
	return 0;
}

static int check_required(struct loader *L, const struct sweep_benchmark *b, int suite,
			  const yaml_node_t *node, size_t number)
{
	for (size_t i = 0; i < param_count; i++) {
		if ((param_defs[i].required & SUITE_BIT(suite)) && sweep_setting_index(b, param_defs[i].key) < 0)
			return sweep_fail_node(L, node, "benchmark %zu (suite %s) is missing required key '%s'",
					 number, suite_name((enum suite_id)suite), param_defs[i].key);
	}
	if (suite == SUITE_MATMUL && sweep_setting_index(b, "size") < 0) {
		static const char *const dims[] = {"m", "n", "k"};
		for (int i = 0; i < 3; i++)
			if (sweep_setting_index(b, dims[i]) < 0)
				return sweep_fail_node(L, node, "benchmark %zu (suite matmul) is missing required key "
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
		return sweep_fail_node(L, node, "benchmark %zu must be a mapping with a 'suite' key, got %s", number,
				 node_kind(node));
	if ((rc = sweep_check_keys(L, node)))
		return rc;

	yaml_node_t *suite_node = map_get(L, node, "suite");
	if (!suite_node) {
		struct strbuf sb = STRBUF_INIT;
		sb_add_list(&sb, workload_suites);
		rc = sweep_fail_node(L, node, "benchmark %zu is missing required key 'suite' (valid: %s)", number,
			       sb_str(&sb));
		sb_free(&sb);
		return rc;
	}
	if (suite_node->type != YAML_SCALAR_NODE || node_is_null(suite_node))
		return sweep_fail_node(L, suite_node, "key 'suite' expects a suite name, got %s",
				 node_kind(suite_node));
	const char *suite_text = node_text(suite_node);
	if (!name_in(workload_suites, suite_text)) {
		struct sweep_scalar v = {(char *)suite_text, node_line(suite_node), node_column(suite_node)};
		char head[128];
		snprintf(head, sizeof(head), "unknown suite '%s'", suite_text);
		return sweep_fail_choice(&L->ck, &v, head, workload_suites);
	}
	int suite = suite_parse(suite_text);
	if (suite < 0)
		return sweep_fail_node(L, suite_node, "suite '%s' has no sweep parameters defined "
				 "(common/params.c)", suite_text);
	b->suite = (enum suite_id)suite;

	size_t cap = node_pairs(node) + L->ndefaults;
	yaml_node_t *axes = map_get(L, node, "axes");
	if (axes && axes->type == YAML_MAPPING_NODE)
		cap += node_pairs(axes);
	b->settings = xcalloc(cap, sizeof(*b->settings));

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
				return sweep_fail_node(L, v, "key 'axes' expects a mapping of key: [values], got %s",
						 node_kind(v));
			if ((rc = sweep_check_keys(L, v)))
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
	if ((rc = apply_defaults(L, b, suite, number)) || (rc = check_auto_keys(L, b, number)))
		return rc;
	if ((rc = check_required(L, b, suite, node, number)) ||
	    (rc = sweep_peer_params_check(L, b, number)))
		return rc;

	size_t cases = 1;
	for (size_t i = 0; i < b->nsettings; i++) {
		cases *= b->settings[i].nvalues;
		if (cases > SWEEP_MAX_CASES)
			break;
	}
	*total += cases;
	if (cases > SWEEP_MAX_CASES || *total > SWEEP_MAX_CASES)
		return sweep_fail_node(L, node, "the sweep expands to more than %d cases (at benchmark %zu)",
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
		return sweep_fail_node(L, root, "a sweep file must be a mapping with keys name, description, "
				 "defaults, benchmarks, models, peers; got %s", node_kind(root));
	if ((rc = sweep_check_keys(L, root)))
		return rc;
	FOR_PAIRS(pair, root) {
		yaml_node_t *k = node_get(L, pair->key);
		if (name_in(top_keys, node_text(k)))
			continue;
		const char *hint = suggest(node_text(k), top_keys);
		char tail[64] = "";
		if (hint)
			snprintf(tail, sizeof(tail), "; did you mean '%s'?", hint);
		else if (sweep_param(node_text(k)))
			snprintf(tail, sizeof(tail), "; parameters go under 'defaults' or a benchmark");
		return sweep_fail_node(L, k, "unknown key '%s' (valid: name, description, defaults, benchmarks, "
				 "models, peers)%s", node_text(k), tail);
	}

	yaml_node_t *n;
	if ((n = map_get(L, root, "name"))) {
		if ((rc = load_string(L, "name", n)))
			return rc;
		if (!*node_text(n))
			return sweep_fail_node(L, n, "key 'name' is empty");
		/* the name is printed (runner list, progress, reports) and names jobs: no byte of it
		 * may move a terminal's cursor or end a line */
		for (const unsigned char *c = (const unsigned char *)node_text(n); *c; c++)
			if (*c < 0x20 || *c == 0x7f)
				return sweep_fail_node(L, n, "key 'name' contains the control character 0x%02x "
						       "(a name is one line of printable text)", *c);
		s->name = xstrdup(node_text(n));
	}
	if ((n = map_get(L, root, "description")) && (rc = load_string(L, "description", n)))
		return rc;
	if ((n = map_get(L, root, "models")) && (rc = sweep_load_models(L, n)))
		return rc;
	if ((n = map_get(L, root, "peers")) && (rc = sweep_load_peers(L, n)))
		return rc;
	if ((n = map_get(L, root, "defaults")) && (rc = load_defaults(L, n)))
		return rc;

	yaml_node_t *list = map_get(L, root, "benchmarks");
	if (!list)
		return sweep_fail_node(L, root, "missing required key 'benchmarks' (a list of benchmarks, each with "
				 "a 'suite')");
	if (list->type != YAML_SEQUENCE_NODE)
		return sweep_fail_node(L, list, "key 'benchmarks' expects a list of benchmarks, got %s",
				 node_kind(list));
	size_t count = node_items(list);
	if (!count)
		return sweep_fail_node(L, list, "key 'benchmarks' has an empty list (give at least one benchmark)");
	s->benchmarks = xcalloc(count, sizeof(*s->benchmarks));
	size_t total = 0;
	for (size_t i = 0; i < count; i++) {
		s->nbenchmarks++;
		rc = load_benchmark(L, node_get(L, list->data.sequence.items.start[i]), i, &total);
		if (rc)
			return rc;
	}

	/* A stopping-rule key in defaults that no benchmark took: no benchmark has iters: auto. */
	for (size_t i = 0; i < L->ndefaults; i++) {
		const struct sweep_setting *d = &L->defaults[i];
		if (d->peer_param || !sweep_param(d->key)->auto_only || L->default_applied[i])
			continue;
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "key '%s' in defaults applies only to iters: auto, and no benchmark has "
			"iters: auto (the keys of iters: auto: ", d->key);
		auto_keys(&sb);
		sb_addc(&sb, ')');
		rc = sweep_fail_at(&L->ck, d->line, d->column, "%s", sb_str(&sb));
		sb_free(&sb);
		return rc;
	}

	/* User presets no benchmark uses still have to be buildable. */
	for (size_t i = 0; i < s->nmodels; i++) {
		char msg[256];
		if (sweep_model_check(&s->models[i], msg, sizeof(msg)))
			return sweep_fail_node(L, L->model_heads[i], "%s", msg);
	}
	return 0;
}

/* ---- entry points --------------------------------------------------------------------------- */

static int yaml_fail(const char *path, const char *text, const yaml_parser_t *p, struct bd_error *err)
{
	if (p->error == YAML_MEMORY_ERROR)
		out_of_memory();
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
		return xstrdup("sweep");
	return xstrndup(base, n);
}

int sweep_parse(const char *path, const char *text, struct sweep **out, struct bd_error *err)
{
	struct sweep *s = NULL;
	struct loader L = {{0}, NULL, NULL, NULL, 0, NULL, NULL};
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
	s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(path);
	s->text = xstrdup(text);
	sha256_hex(text, strlen(text), s->hash);

	if (!yaml_parser_initialize(&parser))
		out_of_memory();
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
	if (!s->name)
		s->name = name_from_path(path);
done:
	for (size_t i = 0; i < L.ndefaults; i++)
		setting_clear(&L.defaults[i]);
	free(L.defaults);
	free(L.default_applied);
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
