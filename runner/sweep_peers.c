/* runner/sweep_peers.c: a sweep's `peers:` — external implementations (schemas/sweep-format.md,
 * "Peers"; the protocol they speak: schemas/peer-protocol.md), each a name, a command, a suite and
 * a timeout, checked key by key. */
#include "sweep_loader.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>

#include "workload.h"
#include "xalloc.h"

/* ---- peer parameters ------------------------------------------------------------------------- */

/* Names a peer parameter may not have besides the built-in parameters' keys: structural keys,
 * and names whose BENCHDB_ variable the runner sets itself (peer_env.c). */
static const char *const reserved_names[] = {"suite", "axes", "exclude", "params", "phases", NULL};

/* A value of letters, digits, '_', '.', '+' and '-', shorter than size. */
static int is_value_name(const char *s, size_t size) { return is_word(s, "_.+-", size); }

/* sweep_internal.h */
int sweep_peer_param_value(const struct sweep_peer_param *d, const char *text, char out[64],
			   char *why, size_t n)
{
	int64_t v;
	switch (d->type) {
	case PEER_PARAM_CHOICE:
		for (size_t i = 0; i < d->nvalues; i++)
			if (!strcmp(d->values[i], text)) {
				snprintf(out, 64, "%s", text);
				return 0;
			}
		snprintf(why, n, "not one of its values");
		return -1;
	case PEER_PARAM_BOOL:
		if (strcmp(text, "true") && strcmp(text, "false")) {
			snprintf(why, n, "expects true or false");
			return -1;
		}
		snprintf(out, 64, "%s", text);
		return 0;
	case PEER_PARAM_INT:
		if (parse_digits(text, &v)) {
			snprintf(why, n, "expects an integer >= 0");
			return -1;
		}
		snprintf(out, 64, "%" PRId64, v);
		return 0;
	default:
		if (!is_value_name(text, 64)) {
			snprintf(why, n, "expects a name of at most 63 letters, digits, '_', '.', '+' and "
				 "'-'");
			return -1;
		}
		snprintf(out, 64, "%s", text);
		return 0;
	}
}

/* sweep_internal.h */
const struct sweep_peer_param *sweep_peer_param_find(const struct sweep_peer *peer,
						     const char *name)
{
	for (size_t i = 0; peer && i < peer->nparams; i++)
		if (!strcmp(peer->params[i].name, name))
			return &peer->params[i];
	return NULL;
}

/* "true", "auto", ...: the scalar text of node v, or NULL (after failing) when v is not one. */
static const char *param_scalar(struct loader *L, const yaml_node_t *v, const char *what,
				const char *pname, const char *peer)
{
	if (v->type != YAML_SCALAR_NODE || node_is_null(v)) {
		sweep_fail_node(L, v, "%s of parameter '%s' of peer '%s' expects a single value, got %s",
				what, pname, peer, node_kind(v));
		return NULL;
	}
	if (strlen(node_text(v)) != v->data.scalar.length) {
		sweep_fail_node(L, v, "%s of parameter '%s' of peer '%s' has a nul character", what, pname,
				peer);
		return NULL;
	}
	return node_text(v);
}

/* One parameter, `name: {values: [...], default: V}` or `name: {type: T, default: V}`. */
static int load_peer_param(struct loader *L, const struct sweep_peer *peer, const yaml_node_t *k,
			   const yaml_node_t *spec, struct sweep_peer_param *d)
{
	static const char *const fields[] = {"values", "type", "default", NULL};
	static const char *const types[] = {"bool", "int", "text", NULL};
	const char *name = node_text(k);
	int rc;
	size_t n = strlen(name);
	d->line = node_line(k);
	d->column = node_column(k);
	int ok = n > 0 && n < 32 && islower((unsigned char)name[0]);
	for (size_t i = 0; ok && i < n; i++)
		ok = islower((unsigned char)name[i]) || isdigit((unsigned char)name[i]) || name[i] == '_';
	if (!ok)
		return sweep_fail_node(L, k, "parameter name '%s' of peer '%s' must be lowercase letters, "
				       "digits and '_', starting with a letter, at most 31", name,
				       peer->name);
	if (param_find(name) || name_in(reserved_names, name) || !strncmp(name, "peer_", 5) ||
	    !strncmp(name, "check_", 6))
		return sweep_fail_node(L, k, "parameter name '%s' of peer '%s' is taken (%s); choose "
				       "another", name, peer->name,
				       param_find(name) ? "a built-in parameter" :
				       name_in(reserved_names, name) ? "a key of the sweep or a variable of the "
				       "runner" : "names starting with peer_ and check_ are the runner's");
	if (spec->type != YAML_MAPPING_NODE)
		return sweep_fail_node(L, spec, "parameter '%s' of peer '%s' expects a mapping {values: "
				       "[...], default: V} or {type: bool|int|text, default: V}, got %s",
				       name, peer->name, node_kind(spec));
	if ((rc = sweep_check_keys(L, spec)))
		return rc;
	d->name = xstrdup(name);
	const yaml_node_t *values = NULL, *type = NULL, *def = NULL;
	FOR_PAIRS(pair, spec) {
		const yaml_node_t *fk = node_get(L, pair->key), *fv = node_get(L, pair->value);
		const char *f = node_text(fk);
		if (!name_in(fields, f)) {
			const char *hint = suggest(f, fields);
			return sweep_fail_node(L, fk, "unknown key '%s' for parameter '%s' of peer '%s' "
					       "(valid: values, type, default)%s%s%s", f, name, peer->name,
					       hint ? "; did you mean '" : "", hint ? hint : "",
					       hint ? "'?" : "");
		}
		*(!strcmp(f, "values") ? &values : !strcmp(f, "type") ? &type : &def) = fv;
	}
	if (!values == !type)
		return sweep_fail_node(L, spec, "parameter '%s' of peer '%s' needs either 'values' (a "
				       "list of names) or 'type' (bool, int or text)", name, peer->name);
	if (values) {
		d->type = PEER_PARAM_CHOICE;
		if (values->type != YAML_SEQUENCE_NODE || !node_items(values))
			return sweep_fail_node(L, values, "'values' of parameter '%s' of peer '%s' expects a "
					       "non-empty list of names, got %s", name, peer->name,
					       values->type == YAML_SEQUENCE_NODE ? "an empty list" :
					       node_kind(values));
		d->values = xcalloc(node_items(values) + 1, sizeof(*d->values));   /* NULL-ended */
		struct sweep_seen seen;
		sweep_seen_init(&seen, node_items(values));
		for (size_t i = 0; i < node_items(values); i++) {
			const yaml_node_t *item = node_get(L, values->data.sequence.items.start[i]);
			const char *t = param_scalar(L, item, "a value", name, peer->name);
			if (!t) {
				sweep_seen_free(&seen);
				return BD_EINVAL;
			}
			if (!is_value_name(t, 64)) {
				sweep_seen_free(&seen);
				return sweep_fail_node(L, item, "value '%s' of parameter '%s' of peer '%s' must "
						       "be a name of at most 63 letters, digits, '_', '.', '+' "
						       "and '-'", t, name, peer->name);
			}
			d->values[d->nvalues++] = xstrdup(t);
			if (sweep_seen_add(&seen, d->values[d->nvalues - 1], i) >= 0) {
				sweep_seen_free(&seen);
				return sweep_fail_node(L, item, "parameter '%s' of peer '%s' lists the "
						       "value %s twice", name, peer->name, t);
			}
		}
		sweep_seen_free(&seen);
	} else {
		const char *t = param_scalar(L, type, "'type'", name, peer->name);
		if (!t)
			return BD_EINVAL;
		if (!name_in(types, t)) {
			struct sweep_scalar v = {(char *)t, node_line(type), node_column(type)};
			char head[160];
			snprintf(head, sizeof(head), "unknown type '%s' of parameter '%s' of peer '%s'", t,
				 name, peer->name);
			return sweep_fail_choice(&L->ck, &v, head, types);
		}
		d->type = !strcmp(t, "bool") ? PEER_PARAM_BOOL : !strcmp(t, "int") ? PEER_PARAM_INT
										 : PEER_PARAM_TEXT;
		if (!def)
			return sweep_fail_node(L, spec, "parameter '%s' of peer '%s' needs a 'default'", name,
					       peer->name);
	}
	char canon[64], why[128];
	const char *t = def ? param_scalar(L, def, "'default'", name, peer->name) : d->values[0];
	if (!t)
		return BD_EINVAL;
	if (sweep_peer_param_value(d, t, canon, why, sizeof(why)))
		return sweep_fail_node(L, def, "default '%s' of parameter '%s' of peer '%s' %s", t, name,
				       peer->name, why);
	d->def = xstrdup(canon);
	return 0;
}

static int load_peer_params(struct loader *L, struct sweep_peer *peer, const yaml_node_t *node)
{
	int rc;
	if (node->type != YAML_MAPPING_NODE)
		return sweep_fail_node(L, node, "key 'params' of peer '%s' expects a mapping of parameter "
				       "name to {values: [...]} or {type: bool|int|text, default: V}, got %s",
				       peer->name, node_kind(node));
	if ((rc = sweep_check_keys(L, node)))
		return rc;
	peer->params = xcalloc(node_pairs(node) ? node_pairs(node) : 1, sizeof(*peer->params));
	FOR_PAIRS(pair, node) {
		struct sweep_peer_param *d = &peer->params[peer->nparams++];
		if ((rc = load_peer_param(L, peer, node_get(L, pair->key), node_get(L, pair->value), d)))
			return rc;
	}
	return 0;
}

/* ---- a peer ----------------------------------------------------------------------------------- */

/* The keys of a peer entry, as messages list them. */
#define PEER_KEYS "command, suite, timeout, persistent, check, interleave, params"

/* One field of a peer entry: one of PEER_KEYS. */
static int load_peer_field(struct loader *L, struct sweep_peer *peer, const yaml_node_t *fk,
			   const yaml_node_t *fv)
{
	static const char *const fields[] = {"command", "suite", "timeout", "persistent", "check",
					     "interleave", "params", NULL};
	const char *fname = node_text(fk), *name = peer->name;
	if (!name_in(fields, fname)) {
		const char *hint = suggest(fname, fields);
		char tail[64] = "";
		if (hint)
			snprintf(tail, sizeof(tail), "; did you mean '%s'?", hint);
		return sweep_fail_node(L, fk, "unknown key '%s' for peer '%s' (valid: " PEER_KEYS ")%s",
				       fname, name, tail);
	}
	if (!strcmp(fname, "params"))
		return load_peer_params(L, peer, fv);
	if (fv->type != YAML_SCALAR_NODE || node_is_null(fv))
		return sweep_fail_node(L, fv, "key '%s' of peer '%s' expects %s, got %s", fname, name,
				 !strcmp(fname, "command") ? "a shell command" :
				 !strcmp(fname, "suite") ? "a suite name" :
				 !strcmp(fname, "persistent") ? "true, false or keep" :
				 !strcmp(fname, "check") ? "required or optional" :
				 !strcmp(fname, "interleave") ? "true or false" :
				 "a positive integer (seconds)", node_kind(fv));
	const char *t = node_text(fv);
	if (strlen(t) != fv->data.scalar.length)
		return sweep_fail_node(L, fv, "key '%s' of peer '%s' has a value with a nul character", fname,
				 name);
	if (!strcmp(fname, "command")) {
		const char *c = t;
		while (isspace((unsigned char)*c))
			c++;
		if (!*c)
			return sweep_fail_node(L, fv, "key 'command' of peer '%s' is empty", name);
		peer->command = xstrdup(t);
	} else if (!strcmp(fname, "suite")) {
		if (!name_in(workload_suites, t) || suite_parse(t) < 0) {
			struct sweep_scalar v = {(char *)t, node_line(fv), node_column(fv)};
			char head[160];
			snprintf(head, sizeof(head), "unknown suite '%s' for peer '%s'", t, name);
			return sweep_fail_choice(&L->ck, &v, head, workload_suites);
		}
		peer->suite = xstrdup(t);
	} else if (!strcmp(fname, "persistent")) {
		if (strcmp(t, "true") && strcmp(t, "false") && strcmp(t, "keep"))
			return sweep_fail_node(L, fv, "key 'persistent' of peer '%s' expects true, false "
					       "or keep, got '%s'", name, t);
		peer->persistent = !strcmp(t, "true") ? PEER_PERSISTENT :
				   !strcmp(t, "keep") ? PEER_KEPT : 0;
	} else if (!strcmp(fname, "check")) {
		if (strcmp(t, "required") && strcmp(t, "optional"))
			return sweep_fail_node(L, fv, "key 'check' of peer '%s' expects required or "
					       "optional, got '%s'", name, t);
		peer->check_required = !strcmp(t, "required");
	} else if (!strcmp(fname, "interleave")) {
		if (strcmp(t, "true") && strcmp(t, "false"))
			return sweep_fail_node(L, fv, "key 'interleave' of peer '%s' expects true or false, "
					       "got '%s'", name, t);
		peer->whole = !strcmp(t, "false");
	} else {
		int64_t v = 0;
		int rc = parse_digits(t, &v);
		if (rc == -1)
			return sweep_fail_node(L, fv, "key 'timeout' of peer '%s' expects a positive integer "
					 "(seconds), got '%s'", name, t);
		if (rc == -2 || v > INT64_MAX / 1000000000)
			return sweep_fail_node(L, fv, "key 'timeout' of peer '%s' value %s is too large (at most %"
					 PRId64 " seconds)", name, t, INT64_MAX / 1000000000);
		if (v < 1)
			return sweep_fail_node(L, fv, "key 'timeout' of peer '%s' must be >= 1, got %" PRId64, name, v);
		peer->timeout_s = v;
	}
	return 0;
}

/* sweep_loader.h: `peers:` name -> {command, suite, timeout}. */
int sweep_load_peers(struct loader *L, const yaml_node_t *node)
{
	struct sweep *s = L->s;
	int rc;

	if (node->type != YAML_MAPPING_NODE)
		return sweep_fail_node(L, node, "key 'peers' expects a mapping of peer name to {" PEER_KEYS
				       "}, got %s", node_kind(node));
	if ((rc = sweep_check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	s->peers = xcalloc(n, sizeof(*s->peers));
	const char *builtin[32];
	sweep_union_impls(builtin);

	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key), *spec = node_get(L, pair->value);
		const char *name = node_text(k);
		struct sweep_peer *peer = &s->peers[s->npeers];
		if (!*name)
			return sweep_fail_node(L, k, "a peer name is empty (give it letters, digits, '.', "
					       "'_' or '-')");
		if (strlen(name) >= sizeof(((struct case_params *)0)->impl))
			return sweep_fail_node(L, k, "peer name '%s' is too long (at most %zu characters)", name,
					 sizeof(((struct case_params *)0)->impl) - 1);
		for (const char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
				return sweep_fail_node(L, k, "peer name '%s' may only contain letters, digits, '.', '_' "
						 "and '-'", name);
		if (name_in(builtin, name)) {
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "peer name '%s' is a built-in impl (built-in: ", name);
			sb_add_list(&sb, builtin);
			sb_add(&sb, "); choose another name");
			rc = sweep_fail_node(L, k, "%s", sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
		if (spec->type != YAML_MAPPING_NODE)
			return sweep_fail_node(L, spec, "peer '%s' expects a mapping with keys " PEER_KEYS
					       ", got %s", name, node_kind(spec));
		if ((rc = sweep_check_keys(L, spec)))
			return rc;
		peer->name = xstrdup(name);
		s->npeers++;
		peer->timeout_s = SWEEP_PEER_TIMEOUT_S;
		peer->line = node_line(k);
		peer->column = node_column(k);
		FOR_PAIRS(field, spec)
			if ((rc = load_peer_field(L, peer, node_get(L, field->key), node_get(L, field->value))))
				return rc;
		if (!peer->command)
			return sweep_fail_node(L, spec, "peer '%s' is missing required key 'command' (the shell "
					 "command that runs it)", name);
		if (!peer->suite) {
			struct strbuf sb = STRBUF_INIT;
			sb_add_list(&sb, workload_suites);
			rc = sweep_fail_node(L, spec, "peer '%s' is missing required key 'suite' (valid: %s)", name,
				       sb_str(&sb));
			sb_free(&sb);
			return rc;
		}
	}
	L->ck.peers = s->peers;
	L->ck.npeers = s->npeers;
	return 0;
}

/* ---- peer parameters in benchmarks ------------------------------------------------------------ */

/* sweep_loader.h */
int sweep_peer_param_declared(const struct loader *L, const char *key, int suite)
{
	for (size_t i = 0; i < L->s->npeers; i++) {
		const struct sweep_peer *peer = &L->s->peers[i];
		if ((suite < 0 || suite_parse(peer->suite) == suite) && sweep_peer_param_find(peer, key))
			return 1;
	}
	return 0;
}

/* sweep_loader.h */
int sweep_peer_setting_load(struct loader *L, const yaml_node_t *key, const yaml_node_t *val,
			    int force_axis, struct sweep_setting *out)
{
	const char *name = node_text(key);
	memset(out, 0, sizeof(*out));
	out->line = node_line(key);
	out->column = node_column(key);
	out->is_axis = force_axis;
	out->peer_param = 1;
	out->key = xstrdup(name);
	size_t n = 1;
	const yaml_node_item_t *items = NULL;
	if (val->type == YAML_MAPPING_NODE || (val->type == YAML_SCALAR_NODE && node_is_null(val)))
		return sweep_fail_node(L, val, "key '%s' (a peer parameter) expects a value or a list of "
				       "them, got %s", name, node_kind(val));
	if (val->type == YAML_SEQUENCE_NODE) {
		n = node_items(val);
		items = val->data.sequence.items.start;
		out->is_axis = 1;
		if (!n)
			return sweep_fail_node(L, val, "key '%s' has an empty list of values", name);
	}
	out->values = xcalloc(n, sizeof(*out->values));
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *item = items ? node_get(L, items[i]) : val;
		if (item->type != YAML_SCALAR_NODE || node_is_null(item) ||
		    strlen(node_text(item)) != item->data.scalar.length)
			return sweep_fail_node(L, item, "key '%s' expects a single value in its list, got %s",
					       name, item->type == YAML_SCALAR_NODE && !node_is_null(item)
					       ? "a nul character" : node_kind(item));
		struct sweep_scalar *sc = &out->values[out->nvalues++];
		sc->text = xstrdup(node_text(item));
		sc->line = node_line(item);
		sc->column = node_column(item);
	}
	return 0;
}

/* The peers among the values of b's impl setting that declare key, into peers (room for
 * L->s->npeers); returns how many. */
static size_t declaring_peers(const struct loader *L, const struct sweep_benchmark *b,
			      const char *key, const struct sweep_peer **peers)
{
	int at = sweep_setting_index(b, "impl");
	size_t n = 0;
	for (size_t v = 0; at >= 0 && v < b->settings[at].nvalues; v++)
		for (size_t i = 0; i < L->s->npeers; i++)
			if (!strcmp(L->s->peers[i].name, b->settings[at].values[v].text) &&
			    suite_is(L->s->peers[i].suite, b->suite) &&
			    sweep_peer_param_find(&L->s->peers[i], key))
				peers[n++] = &L->s->peers[i];
	return n;
}

/* sweep_loader.h */
int sweep_peer_param_taken(const struct loader *L, const struct sweep_benchmark *b, const char *key)
{
	const struct sweep_peer **peers = xcalloc(L->s->npeers + 1, sizeof(*peers));
	size_t n = declaring_peers(L, b, key, peers);
	free(peers);
	return n > 0;
}

/* sweep_loader.h */
/* Value v of st (canonical text canon) into seen: 0, or the error naming its first place when
 * the setting lists it twice. */
static int value_twice(struct loader *L, struct sweep_seen *seen, const struct sweep_setting *st,
		       size_t v, const char *canon)
{
	long w = sweep_seen_add(seen, canon, v);
	if (w < 0)
		return 0;
	return sweep_fail_at(&L->ck, st->values[v].line, st->values[v].column, "key '%s' lists the "
			     "value %s twice (first at line %d, column %d)", st->key, canon,
			     st->values[w].line, st->values[w].column);
}

int sweep_peer_params_check(struct loader *L, const struct sweep_benchmark *b, size_t number)
{
	const struct sweep_peer **peers = xcalloc(L->s->npeers + 1, sizeof(*peers));
	int rc = 0;
	for (size_t i = 0; i < b->nsettings && !rc; i++) {
		const struct sweep_setting *st = &b->settings[i];
		if (!st->peer_param)
			continue;
		size_t np = declaring_peers(L, b, st->key, peers);
		if (!np) {
			struct strbuf sb = STRBUF_INIT;
			for (size_t p = 0; p < L->s->npeers; p++)
				if (sweep_peer_param_find(&L->s->peers[p], st->key))
					sb_addf(&sb, "%s%s", sb.len ? ", " : "", L->s->peers[p].name);
			rc = sweep_fail_at(&L->ck, st->line, st->column, "key '%s' is a parameter of peer %s, "
					   "which benchmark %zu (suite %s) does not run (add it to 'impl')",
					   st->key, sb_str(&sb), number, suite_name(b->suite));
			sb_free(&sb);
			break;
		}
		for (size_t p = 0; p < np && !rc; p++) {
			const struct sweep_peer_param *d = sweep_peer_param_find(peers[p], st->key);
			char (*canon)[64] = xcalloc(st->nvalues, sizeof(*canon));
			struct sweep_seen seen;
			sweep_seen_init(&seen, st->nvalues);
			for (size_t v = 0; v < st->nvalues && !rc; v++) {
				const struct sweep_scalar *sc = &st->values[v];
				char why[128];
				if (sweep_peer_param_value(d, sc->text, canon[v], why, sizeof(why))) {
					struct strbuf sb = STRBUF_INIT;
					if (d->type == PEER_PARAM_CHOICE) {
						sb_add(&sb, " (valid: ");
						sb_add_list(&sb, (const char *const *)d->values);
						sb_addc(&sb, ')');
					}
					rc = sweep_fail_at(&L->ck, sc->line, sc->column, "value '%s' of key '%s' "
							   "for peer %s: %s%s", sc->text, st->key,
							   peers[p]->name, why, sb_str(&sb));
					sb_free(&sb);
					break;
				}
				rc = value_twice(L, &seen, st, v, canon[v]);
			}
			sweep_seen_free(&seen);
			free(canon);
		}
	}
	/* an exclude's peer parameter: each value one that some peer of b taking the key accepts
	 * (a typo would match no case, and the exclusion would silently do nothing) */
	for (size_t e = 0; e < b->nexcludes && !rc; e++) {
		for (size_t i = 0; i < b->excludes[e].npairs && !rc; i++) {
			const struct sweep_setting *st = &b->excludes[e].pairs[i];
			if (!st->peer_param)
				continue;
			size_t np = declaring_peers(L, b, st->key, peers);
			if (!np) {
				rc = sweep_fail_at(&L->ck, st->line, st->column, "exclude key '%s' is a "
						   "parameter of no peer that benchmark %zu (suite %s) runs "
						   "(add the peer to 'impl')", st->key, number,
						   suite_name(b->suite));
				break;
			}
			char (*canon)[64] = xcalloc(st->nvalues, sizeof(*canon));
			struct sweep_seen seen;
			sweep_seen_init(&seen, st->nvalues);
			for (size_t v = 0; v < st->nvalues && !rc; v++) {
				const struct sweep_scalar *sc = &st->values[v];
				char why[128] = "";
				size_t p = 0;
				while (p < np && sweep_peer_param_value(sweep_peer_param_find(peers[p], st->key),
									sc->text, canon[v], why, sizeof(why)))
					p++;
				if (p == np) {
					struct strbuf sb = STRBUF_INIT;
					for (p = 0; p < np; p++) {
						const struct sweep_peer_param *d =
							sweep_peer_param_find(peers[p], st->key);
						sb_addf(&sb, "%s%s", p ? "; " : "", peers[p]->name);
						if (d->type == PEER_PARAM_CHOICE) {
							sb_add(&sb, ": ");
							sb_add_list(&sb, (const char *const *)d->values);
						} else {
							sb_addf(&sb, ": %s", d->type == PEER_PARAM_BOOL ? "true or false" :
							       d->type == PEER_PARAM_INT ? "an integer >= 0" : "a name");
						}
					}
					rc = sweep_fail_at(&L->ck, sc->line, sc->column, "exclude value '%s' of key "
							   "'%s' is not a value of it for any peer of benchmark %zu "
							   "(valid: %s)", sc->text, st->key, number, sb_str(&sb));
					sb_free(&sb);
					break;
				}
				rc = value_twice(L, &seen, st, v, canon[v]);
			}
			sweep_seen_free(&seen);
			free(canon);
		}
	}
	free(peers);
	return rc;
}
