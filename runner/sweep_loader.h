/* runner/sweep_loader.h: the YAML walk's state and node helpers, shared by sweep.c (the document),
 * sweep_models.c (`models:`) and sweep_peers.c (`peers:`). Not for use outside runner/sweep*.c. */
#ifndef BENCHDB_SWEEP_LOADER_H
#define BENCHDB_SWEEP_LOADER_H

#include <string.h>

#include <yaml.h>

#include "sweep_internal.h"

struct loader {
	struct checker ck;
	yaml_document_t *doc;
	struct sweep *s;
	struct sweep_setting *defaults;  /* `defaults:`, merged into each benchmark */
	size_t ndefaults;
	unsigned char *default_applied;  /* per default: given to some benchmark */
	yaml_node_t **model_heads;       /* num_heads value of each user preset, for its check */
};

#define FOR_PAIRS(pair, map) \
	for (yaml_node_pair_t *pair = (map)->data.mapping.pairs.start; pair < (map)->data.mapping.pairs.top; pair++)

static inline yaml_node_t *node_get(const struct loader *L, int id)
{
	return yaml_document_get_node(L->doc, id);
}

static inline int node_line(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }
static inline int node_column(const yaml_node_t *n) { return (int)n->start_mark.column + 1; }
static inline const char *node_text(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static inline size_t node_pairs(const yaml_node_t *n)
{
	return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}
static inline size_t node_items(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

/* `key:` with nothing after it, `~` or `null`. */
static inline int node_is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *t = node_text(n);
	return !*t || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "NULL");
}

static inline const char *node_kind(const yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (node_is_null(n))
		return "no value";
	return "a single value";
}

/* BD_EINVAL at node n: "file:line:col: message". */
int sweep_fail_node(const struct loader *L, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Every key of map is a name, and none is repeated (else BD_EINVAL at the key). */
int sweep_check_keys(const struct loader *L, const yaml_node_t *map);

/* `models:` (sweep_models.c): user presets into L->s->models, each checked (sweep_model_check)
 * after the benchmarks. */
int sweep_load_models(struct loader *L, const yaml_node_t *node);
/* `peers:` (sweep_peers.c): into L->s->peers; each name becomes an impl of its suite. */
int sweep_load_peers(struct loader *L, const yaml_node_t *node);

/* Peer parameters in benchmarks (sweep_peers.c). Whether some peer (of suite; -1: of any suite)
 * declares key. */
int sweep_peer_param_declared(const struct loader *L, const char *key, int suite);
/* `key: value` or `key: [values]` of a peer parameter into *out (peer_param set), the values
 * kept as written: they are checked by sweep_peer_params_check once the benchmark's impls are
 * known. The caller owns out (setting_clear) on failure too. */
int sweep_peer_setting_load(struct loader *L, const yaml_node_t *key, const yaml_node_t *val,
			    int force_axis, struct sweep_setting *out);
/* Whether a peer among b's impls declares key. */
int sweep_peer_param_taken(const struct loader *L, const struct sweep_benchmark *b, const char *key);
/* Every peer parameter b sets is declared by a peer among its impls, and each value is valid for
 * each such peer, and each value of an exclude's peer parameter is valid for one of them (else
 * BD_EINVAL at the value). number: b's 1-based number for messages. */
int sweep_peer_params_check(struct loader *L, const struct sweep_benchmark *b, size_t number);

#endif
