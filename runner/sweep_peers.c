/* runner/sweep_peers.c: a sweep's `peers:` — external implementations (schemas/sweep-format.md,
 * "Peers"; the protocol they speak: schemas/peer-protocol.md), each a name, a command, a suite and
 * a timeout, checked key by key. */
#include "sweep_loader.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>

#include "workload.h"
#include "xalloc.h"

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
		return sweep_fail_node(L, fk, "unknown key '%s' for peer '%s' (valid: command, suite, timeout)%s",
				 fname, name, tail);
	}
	if (fv->type != YAML_SCALAR_NODE || node_is_null(fv))
		return sweep_fail_node(L, fv, "key '%s' of peer '%s' expects %s, got %s", fname, name,
				 !strcmp(fname, "command") ? "a shell command" :
				 !strcmp(fname, "suite") ? "a suite name" : "a positive integer (seconds)",
				 node_kind(fv));
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
		return sweep_fail_node(L, node, "key 'peers' expects a mapping of peer name to {command, suite, "
				 "timeout}, got %s", node_kind(node));
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
			return sweep_fail_node(L, spec, "peer '%s' expects a mapping with keys command, suite, "
					 "timeout, got %s", name, node_kind(spec));
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
