/* runner/sweep_expand.c: struct sweep -> cases. Each combination of axis values is typed into
 * struct case_params (the table's defaults, then the settings; models and matmul's size resolved
 * last), dropped when an exclude matches it, and given its case key and params JSON
 * (common/params.c) and its short name. */
#include "sweep_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "sweep_limits.h"
#include "xalloc.h"

/* -1 when the count does not fit in int64 (only absurd user presets get there). */
/* What a case gets from its settings before model and shape are resolved. */
struct case_draft {
	struct case_params p;
	const char *model;     /* model name, resolved after all settings */
	int64_t vocab_size;    /* override, 0 if none */
	int64_t size;          /* matmul m = n = k, 0 if none */
};

/* Set one parameter of the draft from its typed value: model, vocab_size and size wait for the
 * model and the shape to be resolved (draft_build); the others go where the table says. */
static void draft_set(struct case_draft *c, const struct param_def *d, const struct value *v)
{
	if (sweep_is_param(d, "model"))
		c->model = v->str;
	else if (sweep_is_param(d, "vocab_size"))
		c->vocab_size = v->num;
	else if (sweep_is_param(d, "size"))
		c->size = v->num;
	else
		param_set(&c->p, d, v->canon, NULL);   /* canon is a value of d's type */
}

/* The case's value of a parameter as canonical text (the form value_parse gives). */
static void param_canon(const struct case_params *p, const struct param_def *d, char out[64])
{
	if (sweep_is_param(d, "size") && (p->m != p->n || p->m != p->k))
		out[0] = '\0';
	else if (sweep_is_param(d, "size"))
		snprintf(out, 64, "%" PRId64, p->m);
	else
		param_format(p, d, out);
}

/* The value of peer parameter key in case c, or NULL when c's peer does not declare it. */
static const char *peer_param_of(const struct sweep_case *c, const char *key)
{
	for (size_t i = 0; i < c->npeer_params; i++)
		if (!strcmp(c->peer_params[i].def->name, key))
			return c->peer_params[i].value;
	return NULL;
}

/* One exclude pair's values, typed once for the whole benchmark: a set of their canonical texts
 * (a peer parameter's: as written, and those that are integers as integers, for a peer that
 * types it int), so that matching a case is a lookup, not a parse of every value. */
struct pair_values {
	char (*canon)[64];
	struct sweep_seen set;
	char (*ints)[64];
	struct sweep_seen int_set;
};

static void pair_values_free(struct pair_values *v)
{
	free(v->canon);
	free(v->ints);
	sweep_seen_free(&v->set);
	sweep_seen_free(&v->int_set);
}

static int pair_values_build(const struct checker *ck, int suite, const struct sweep_setting *pair,
			     struct pair_values *out)
{
	memset(out, 0, sizeof(*out));
	out->canon = xcalloc(pair->nvalues, sizeof(*out->canon));
	sweep_seen_init(&out->set, pair->nvalues);
	if (pair->peer_param) {
		out->ints = xcalloc(pair->nvalues, sizeof(*out->ints));
		sweep_seen_init(&out->int_set, pair->nvalues);
	}
	const struct param_def *d = pair->peer_param ? NULL : sweep_param(pair->key);
	if (!pair->peer_param && !d)
		return sweep_fail_at(ck, pair->line, pair->column, "unknown exclude key '%s'", pair->key);
	for (size_t j = 0; j < pair->nvalues; j++) {
		if (pair->peer_param) {
			int64_t n;
			snprintf(out->canon[j], sizeof(out->canon[j]), "%s", pair->values[j].text);
			if (!parse_digits(pair->values[j].text, &n)) {
				snprintf(out->ints[j], sizeof(out->ints[j]), "%" PRId64, n);
				sweep_seen_add(&out->int_set, out->ints[j], j);
			}
		} else {
			struct value v;
			int rc = sweep_value_parse(ck, d, suite, &pair->values[j], &v);
			if (rc)
				return rc;
			memcpy(out->canon[j], v.canon, sizeof(v.canon));
		}
		sweep_seen_add(&out->set, out->canon[j], j);
	}
	return 0;
}

/* The index of the value of pair (a peer parameter's exclude) that case c has, or -1: c does not
 * have the parameter, or has it at none of pair's values. */
static long peer_pair_match(const struct sweep_setting *pair, const struct pair_values *values,
			    const struct sweep_case *c)
{
	const char *have = peer_param_of(c, pair->key);
	const struct sweep_peer_param *d = sweep_peer_param_find(c->peer, pair->key);
	if (!have || !d)
		return -1;
	/* have is canonical for d: an int's digits; otherwise the value as written */
	return sweep_seen_find(d->type == PEER_PARAM_INT ? &values->int_set : &values->set, have);
}

/* The index of the value of an exclude's pair that case c (its params p) has, or -1. */
static long pair_hit(const struct sweep_setting *pair, const struct pair_values *values,
		     const struct case_params *p, const struct sweep_case *c)
{
	if (pair->peer_param)
		return peer_pair_match(pair, values, c);
	char have[64];
	param_canon(p, sweep_param(pair->key), have);
	return sweep_seen_find(&values->set, have);
}

/* The values of every pair of every exclude of b, one after another (a value's flag in
 * value_used, in this order). */
static size_t exclude_values_count(const struct sweep_benchmark *b)
{
	size_t n = 0;
	for (size_t e = 0; e < b->nexcludes; e++)
		for (size_t i = 0; i < b->excludes[e].npairs; i++)
			n += b->excludes[e].pairs[i].nvalues;
	return n;
}

/* values: the typed values of each pair of each exclude of b, in order; matched[e] is set for
 * every exclude that matches the case (an exclude that matches no case is refused), and
 * value_used for the value of each of its pairs that the case has (a value of a list that drops
 * no case is refused too). */
static int case_excluded(const struct sweep_benchmark *b, const struct pair_values *values,
			 const struct case_params *p, const struct sweep_case *c, int *excluded,
			 unsigned char *matched, unsigned char *value_used)
{
	*excluded = 0;
	for (size_t e = 0, at = 0, vat = 0; e < b->nexcludes; e++) {
		const struct sweep_exclude *x = &b->excludes[e];
		int all = 1;
		for (size_t i = 0; i < x->npairs && all; i++)
			all = pair_hit(&x->pairs[i], &values[at + i], p, c) >= 0;
		if (all) {
			*excluded = 1;
			matched[e] = 1;
			for (size_t i = 0, v = vat; i < x->npairs; v += x->pairs[i].nvalues, i++)
				value_used[v + (size_t)pair_hit(&x->pairs[i], &values[at + i], p, c)] = 1;
		}
		at += x->npairs;
		for (size_t i = 0; i < x->npairs; i++)
			vat += x->pairs[i].nvalues;
	}
	return 0;
}

/* A value equal to another of its list (1KiB and 1024) was found as that one: used alike. */
static void value_used_share(const struct sweep_benchmark *b, const struct pair_values *values,
			     unsigned char *value_used)
{
	for (size_t e = 0, at = 0, vat = 0; e < b->nexcludes; e++)
		for (size_t i = 0; i < b->excludes[e].npairs; i++, at++) {
			const struct pair_values *pv = &values[at];
			size_t n = b->excludes[e].pairs[i].nvalues;
			for (size_t j = 0; j < n; j++) {
				long k = sweep_seen_find(&pv->set, pv->canon[j]),
				     m = pv->ints && pv->ints[j][0] ? sweep_seen_find(&pv->int_set, pv->ints[j])
								      : -1;
				value_used[vat + j] |= (k >= 0 && value_used[vat + (size_t)k]) ||
						       (m >= 0 && value_used[vat + (size_t)m]);
			}
			vat += n;
		}
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
	/* the parameters a key has only away from their default (tf32, sync, and those added
	 * later), in key order: tf32 and nosync as they always were, the others by their label */
	const struct param_def *rows[PARAM_MAX];
	size_t nrows = case_key_rows((enum suite_id)suite, rows);
	for (size_t i = 0; i < nrows; i++) {
		const char *def = rows[i]->defaults[suite];
		char v[64];
		param_format(p, rows[i], v);
		if (rows[i]->in_key != KEY_UNLESS_DEFAULT || (def && !strcmp(v, def)))
			continue;
		if (sweep_is_param(rows[i], "tf32")) {
			sb_add(&sb, " tf32");
		} else if (sweep_is_param(rows[i], "sync")) {
			sb_add(&sb, " nosync");
		} else {
			struct key_token t = {rows[i]->key, v, strlen(rows[i]->key), strlen(v), rows[i]};
			key_token_label(&sb, &t);
		}
	}
	/* the key leaves warm-up out; the name tells cases of a warm-up axis apart */
	if (warmup_varies)
		sb_addf(&sb, " warmup%" PRId64, p->warmup);
	return sb_detach(&sb);
}

static void case_clear(struct sweep_case *c)
{
	free(c->key);
	free(c->params_json);
	free(c->name);
	free(c->peer_params);
}

/* c's peer and the value of every parameter it declares (the setting's at pos, else the
 * default), sorted by name. 0, or 1 when the combination repeats another: it sets a peer
 * parameter that c's impl does not take to a value but the first (that axis does not apply). */
static int peer_params_build(const struct sweep *s, const struct sweep_benchmark *b,
			     const size_t *pos, struct sweep_case *c)
{
	c->peer = NULL;
	c->peer_params = NULL;
	c->npeer_params = 0;
	for (size_t j = 0; j < s->npeers; j++)
		if (!strcmp(s->peers[j].name, c->params.impl) && suite_is(s->peers[j].suite, b->suite))
			c->peer = &s->peers[j];
	for (size_t i = 0; i < b->nsettings; i++)
		if (b->settings[i].peer_param && pos[i] &&
		    !sweep_peer_param_find(c->peer, b->settings[i].key))
			return 1;
	if (!c->peer || !c->peer->nparams)
		return 0;
	c->peer_params = xcalloc(c->peer->nparams, sizeof(*c->peer_params));
	for (size_t k = 0; k < c->peer->nparams; k++) {
		const struct sweep_peer_param *d = &c->peer->params[k];
		struct case_peer_param *v = &c->peer_params[c->npeer_params++];
		int at = sweep_setting_index(b, d->name);
		char why[128];
		v->def = d;
		if (at < 0 || sweep_peer_param_value(d, b->settings[at].values[pos[at]].text, v->value,
						     why, sizeof(why)))
			snprintf(v->value, sizeof(v->value), "%s", d->def);   /* (checked at load) */
		for (size_t m = c->npeer_params - 1; m > 0 &&   /* insertion sort by name */
		     strcmp(c->peer_params[m - 1].def->name, c->peer_params[m].def->name) > 0; m--) {
			struct case_peer_param t = c->peer_params[m];
			c->peer_params[m] = c->peer_params[m - 1];
			c->peer_params[m - 1] = t;
		}
	}
	return 0;
}

/* c's key, params JSON and name with its peer parameters: `name=value` tokens after the
 * built-in ones, members of the JSON in key order, and away from its default ` name=value` at
 * the end of the name. */
static void peer_params_apply(struct sweep_case *c)
{
	if (!c->npeer_params)
		return;
	struct json_member *m = xcalloc(c->npeer_params, sizeof(*m));
	struct strbuf key = STRBUF_INIT, name = STRBUF_INIT;
	sb_add(&key, c->key);
	sb_add(&name, c->name);
	for (size_t i = 0; i < c->npeer_params; i++) {
		const struct case_peer_param *v = &c->peer_params[i];
		sb_addf(&key, " %s=%s", v->def->name, v->value);
		if (strcmp(v->value, v->def->def))
			sb_addf(&name, " %s=%s", v->def->name, v->value);
		m[i] = (struct json_member){v->def->name, v->value,
					    v->def->type == PEER_PARAM_CHOICE ||
					    v->def->type == PEER_PARAM_TEXT};
	}
	free(c->key);
	free(c->name);
	free(c->params_json);
	c->key = sb_detach(&key);
	c->name = sb_detach(&name);
	c->params_json = case_params_json_with(&c->params, m, c->npeer_params);
	free(m);
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
	case_params_defaults(&d->p, (enum suite_id)suite);
	const struct sweep_setting *model_setting = NULL;
	const struct sweep_scalar *vocab_value = NULL;
	for (size_t i = 0; i < b->nsettings; i++) {
		const struct sweep_setting *st = &b->settings[i];
		const struct param_def *def = sweep_param(st->key);
		if (st->peer_param)
			continue;   /* peer_params_build, once the case's peer is known */
		if (!def || !(def->sweep & SUITE_BIT(suite)))
			return sweep_fail_at(ck, st->line, st->column, "unknown key '%s' for suite %s", st->key,
				       suite_name((enum suite_id)suite));
		struct value v;
		if ((rc = sweep_value_parse(ck, def, suite, &st->values[pos[i]], &v)))
			return rc;
		if (sweep_is_param(def, "model"))
			model_setting = st;
		if (sweep_is_param(def, "vocab_size"))
			vocab_value = &st->values[pos[i]];
		draft_set(d, def, &v);
	}
	if (d->size)
		d->p.m = d->p.n = d->p.k = d->size;
	if (suite == SUITE_E2E) {
		const struct model_config *m = d->model ? sweep_model_find(ck, d->model) : NULL;
		if (!m)
			return sweep_fail_at(ck, model_setting ? model_setting->line : b->line,
				       model_setting ? model_setting->column : b->column,
				       "benchmark (suite e2e) has no known model");
		d->p.model = *m;
		if (d->vocab_size) {
			char msg[256];
			d->p.model.vocab_size = d->vocab_size;
			if (sweep_model_check(&d->p.model, msg, sizeof(msg)))
				return sweep_fail_at(ck, vocab_value->line, vocab_value->column,
					       "%s (with vocab_size %" PRId64 ")", msg, d->vocab_size);
		}
	}
	if (!d->p.impl[0])
		return sweep_fail_at(ck, b->line, b->column, "benchmark (suite %s) has no impl",
			       suite_name((enum suite_id)suite));
	if (d->p.iters == ITERS_AUTO && d->p.min_iters > d->p.max_iters) {
		/* at the value given: min_iters, else max_iters (the other is its default) */
		int at = sweep_setting_index(b, "min_iters");
		if (at < 0)
			at = sweep_setting_index(b, "max_iters");
		const struct sweep_scalar *v = at >= 0 ? &b->settings[at].values[pos[at]] : NULL;
		return sweep_fail_at(ck, v ? v->line : b->line, v ? v->column : b->column,
			       "min_iters %" PRId64 " is more than max_iters %" PRId64 " (the cap on "
			       "measured iterations of iters: auto; valid: min_iters <= max_iters <= %d)",
			       d->p.min_iters, d->p.max_iters, BD_MAX_ITERS);
	}
	char too_large[256];
	if (sweep_case_sizes_check(&d->p, too_large, sizeof(too_large)))
		return sweep_fail_at(ck, b->line, b->column, "%s", too_large);
	return 0;
}

/* matched: one flag per exclude of the benchmark, set for each that drops a case; value_used: one
 * per value of each of their pairs (exclude_values_count), set for each a dropped case has. */
static int expand_benchmark(const struct checker *ck, const struct sweep *s, size_t index,
			    struct sweep_cases *out, size_t *cap, unsigned char *matched,
			    unsigned char *value_used)
{
	const struct sweep_benchmark *b = &s->benchmarks[index];
	size_t *pos = NULL;
	size_t kept = 0;
	int rc = 0;

	enum suite_id suite = b->suite;
	size_t npairs = 0;
	for (size_t e = 0; e < b->nexcludes; e++)
		npairs += b->excludes[e].npairs;
	struct pair_values *values = xcalloc(npairs + 1, sizeof(*values));
	size_t nvalues = 0;
	for (size_t e = 0; e < b->nexcludes; e++)
		for (size_t i = 0; i < b->excludes[e].npairs; i++)
			if ((rc = pair_values_build(ck, suite, &b->excludes[e].pairs[i], &values[nvalues++])))
				goto done;
	pos = xcalloc(b->nsettings + 1, sizeof(*pos));
	for (size_t i = 0; i < b->nsettings; i++) {
		if (!b->settings[i].nvalues) {
			rc = sweep_fail_at(ck, b->settings[i].line, b->settings[i].column,
				     "key '%s' has an empty list of values", b->settings[i].key);
			goto done;
		}
	}
	for (;;) {
		struct case_draft d;
		struct sweep_case draft_case = {0};
		int excluded = 0;
		if ((rc = draft_build(ck, b, suite, pos, &d)))
			goto done;
		draft_case.params = d.p;
		int repeats = peer_params_build(s, b, pos, &draft_case);
		if (!repeats)
			case_excluded(b, values, &d.p, &draft_case, &excluded, matched, value_used);
		if (repeats || excluded)
			free(draft_case.peer_params);
		if (!repeats && !excluded) {
			if (out->n == *cap) {
				size_t want = *cap ? *cap * 2 : 16;
				out->items = xrealloc(out->items, want * sizeof(*out->items));
				*cap = want;
			}
			struct sweep_case *c = &out->items[out->n++];
			c->index = out->n - 1;
			c->benchmark = index;
			c->params = d.p;
			c->key = case_key_build(&d.p);
			c->params_json = case_params_json(&d.p);
			int w = sweep_setting_index(b, "warmup");
			c->name = case_name(suite, &d.p, d.vocab_size && d.model &&
					    d.vocab_size != sweep_model_find(ck, d.model)->vocab_size,
					    w >= 0 && b->settings[w].nvalues > 1);
			c->peer = draft_case.peer;
			c->peer_params = draft_case.peer_params;
			c->npeer_params = draft_case.npeer_params;
			peer_params_apply(c);
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
		rc = sweep_fail_at(ck, b->line, b->column, "benchmark %zu (suite %s): every case is excluded",
			     index + 1, suite_name((enum suite_id)suite));
	value_used_share(b, values, value_used);
done:
	for (size_t i = 0; i < nvalues; i++)
		pair_values_free(&values[i]);
	free(values);
	free(pos);
	return rc;
}

/* An exclude that drops no case is a typo'd value or a stale entry: the case it was meant to drop
 * would run. One written once and given to several benchmarks (a YAML alias, defaults) is one
 * entry, at one place in the file: it must drop a case of one of them. */
static int excludes_unmatched_check(const struct checker *ck, const struct sweep *s,
				    const unsigned char *matched)
{
	for (size_t i = 0, at = 0; i < s->nbenchmarks; at += s->benchmarks[i].nexcludes, i++)
		for (size_t e = 0; e < s->benchmarks[i].nexcludes; e++) {
			const struct sweep_exclude *x = &s->benchmarks[i].excludes[e];
			int used = matched[at + e];
			for (size_t j = 0, at2 = 0; j < s->nbenchmarks && !used;
			     at2 += s->benchmarks[j].nexcludes, j++)
				for (size_t f = 0; f < s->benchmarks[j].nexcludes && !used; f++)
					used = matched[at2 + f] &&
					       s->benchmarks[j].excludes[f].line == x->line &&
					       s->benchmarks[j].excludes[f].column == x->column;
			if (!used)
				return sweep_fail_at(ck, x->line, x->column,
						     "this exclude matches no case of benchmark %zu "
						     "(suite %s): no case takes all of its values "
						     "together (see `runner list` without it), or "
						     "remove it", i + 1,
						     suite_name((enum suite_id)s->benchmarks[i].suite));
		}
	return 0;
}

/* One value of an exclude's pair, in value_used's order: every benchmark's excludes, their
 * pairs, their values. */
struct exclude_value {
	const struct sweep_scalar *v;
	const char *key;
	size_t benchmark;
};

static void exclude_values_list(const struct sweep *s, struct exclude_value *out)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nbenchmarks; i++)
		for (size_t e = 0; e < s->benchmarks[i].nexcludes; e++)
			for (size_t p = 0; p < s->benchmarks[i].excludes[e].npairs; p++) {
				const struct sweep_setting *pair = &s->benchmarks[i].excludes[e].pairs[p];
				for (size_t j = 0; j < pair->nvalues; j++)
					out[n++] = (struct exclude_value){&pair->values[j], pair->key, i};
			}
}

/* A value of an exclude's list that drops no case, where the entry drops others: a typo'd value
 * (seq_len: [128, 265]) whose case would run. The same value given to several benchmarks (an
 * alias: one place in the file) must drop a case of one of them. */
static int exclude_values_unused_check(const struct checker *ck, const struct sweep *s,
				       const unsigned char *value_used, size_t nvalues)
{
	struct exclude_value *all = xcalloc(nvalues + 1, sizeof(*all));
	int rc = 0;
	exclude_values_list(s, all);
	for (size_t i = 0; i < nvalues && !rc; i++) {
		const struct sweep_scalar *v = all[i].v;
		int used = value_used[i];
		for (size_t j = 0; j < nvalues && !used; j++)
			used = value_used[j] && all[j].v->line == v->line && all[j].v->column == v->column;
		if (!used)
			rc = sweep_fail_at(ck, v->line, v->column,
					   "exclude value '%s' of '%s' drops no case of benchmark %zu "
					   "(suite %s): no case has it together with the entry's other "
					   "values (see `runner list` without it), or remove it",
					   v->text, all[i].key, all[i].benchmark + 1,
					   suite_name((enum suite_id)s->benchmarks[all[i].benchmark].suite));
	}
	free(all);
	return rc;
}

int sweep_expand(const struct sweep *s, struct sweep_cases *out, struct bd_error *err)
{
	struct checker ck = {s ? s->path : "", err, s ? s->models : NULL, s ? s->nmodels : 0,
			     s ? s->peers : NULL, s ? s->npeers : 0, NULL};
	size_t cap = 0;
	unsigned char *matched = NULL;   /* per exclude of every benchmark, in order: it dropped a case */
	unsigned char *value_used = NULL;   /* per value of their pairs: a dropped case has it */
	int rc = 0;

	if (!out)
		return bd_fail(err, BD_EINVAL, "sweep_expand: no output");
	out->items = NULL;
	out->n = 0;
	if (!s) {
		rc = bd_fail(err, BD_EINVAL, "sweep_expand: no sweep");
		goto done;
	}
	size_t nexcludes = 0;
	for (size_t i = 0; i < s->nbenchmarks; i++)
		nexcludes += s->benchmarks[i].nexcludes;
	size_t nvalues = 0;
	for (size_t i = 0; i < s->nbenchmarks; i++)
		nvalues += exclude_values_count(&s->benchmarks[i]);
	matched = xcalloc(nexcludes + 1, 1);
	value_used = xcalloc(nvalues + 1, 1);
	for (size_t i = 0, at = 0, vat = 0; i < s->nbenchmarks; i++) {
		if ((rc = expand_benchmark(&ck, s, i, out, &cap, matched + at, value_used + vat)))
			goto done;
		at += s->benchmarks[i].nexcludes;
		vat += exclude_values_count(&s->benchmarks[i]);
	}
	if ((rc = excludes_unmatched_check(&ck, s, matched)) ||
	    (rc = exclude_values_unused_check(&ck, s, value_used, nvalues)))
		goto done;
done:
	free(matched);
	free(value_used);
	if (rc)
		sweep_cases_free(out);
	return rc;
}
