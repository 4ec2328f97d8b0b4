/* runner/sweep_models.c: a sweep's `models:` — user presets of the e2e transformer
 * (schemas/sweep-format.md, "Models"), each a name and its sizes, checked key by key. */
#include "sweep_loader.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>

#include "sweep_limits.h"
#include "xalloc.h"

/* sweep_loader.h */
int sweep_load_models(struct loader *L, const yaml_node_t *node)
{
	static const char *const fields[] = {"d_model", "d_ff", "num_layers", "num_heads", "vocab_size", NULL};
	struct sweep *s = L->s;
	int rc;

	if (node->type != YAML_MAPPING_NODE)
		return sweep_fail_node(L, node, "key 'models' expects a mapping of model name to {d_model, d_ff, "
				 "num_layers, num_heads, vocab_size}, got %s", node_kind(node));
	if ((rc = sweep_check_keys(L, node)))
		return rc;
	size_t n = node_pairs(node);
	s->models = xcalloc(n, sizeof(*s->models));
	L->model_heads = xcalloc(n, sizeof(*L->model_heads));

	FOR_PAIRS(pair, node) {
		yaml_node_t *k = node_get(L, pair->key), *spec = node_get(L, pair->value);
		const char *name = node_text(k);
		struct model_config *m = &s->models[s->nmodels];
		if (!*name)
			return sweep_fail_node(L, k, "a model name is empty (give it letters, digits, '.', "
					       "'_' or '-')");
		if (strlen(name) >= sizeof(m->name))
			return sweep_fail_node(L, k, "model name '%s' is too long (at most %zu characters)", name,
					 sizeof(m->name) - 1);
		for (const char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
				return sweep_fail_node(L, k, "model name '%s' may only contain letters, digits, '.', '_' "
						 "and '-'", name);
		for (size_t i = 0; model_presets[i].name[0]; i++)
			if (!strcmp(model_presets[i].name, name))
				return sweep_fail_node(L, k, "model name '%s' is a built-in preset (built-in: small, "
						 "medium, large, xl, 2.7B); choose another name", name);
		if (spec->type != YAML_MAPPING_NODE)
			return sweep_fail_node(L, spec, "model '%s' expects a mapping with keys d_model, d_ff, "
					 "num_layers, num_heads, vocab_size, got %s", name, node_kind(spec));
		if ((rc = sweep_check_keys(L, spec)))
			return rc;
		snprintf(m->name, sizeof(m->name), "%s", name);
		m->vocab_size = SWEEP_DEFAULT_VOCAB_SIZE;
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
				return sweep_fail_node(L, fk, "unknown key '%s' for model '%s' (valid: d_model, d_ff, "
						 "num_layers, num_heads, vocab_size)%s", fname, name, tail);
			}
			if (fv->type != YAML_SCALAR_NODE || node_is_null(fv))
				return sweep_fail_node(L, fv, "key '%s' of model '%s' expects a positive integer, got %s",
						 fname, name, node_kind(fv));
			int64_t v;
			int prc = parse_digits(node_text(fv), &v);
			if (prc == -1)
				return sweep_fail_node(L, fv, "key '%s' of model '%s' expects a positive integer, got '%s'",
						 fname, name, node_text(fv));
			if (prc == -2)
				return sweep_fail_node(L, fv, "key '%s' of model '%s' value %s is too large", fname, name,
						 node_text(fv));
			if (v < 1 || v > sweep_value_max(fname))
				return sweep_fail_node(L, fv, "key '%s' of model '%s' must be >= 1 and at most %" PRId64
						 ", got %" PRId64, fname, name, sweep_value_max(fname), v);
			*dest[f] = v;
			if (f == 3)
				L->model_heads[s->nmodels] = fv;
		}
		for (size_t f = 0; f < 4; f++)
			if (!*dest[f])
				return sweep_fail_node(L, spec, "model '%s' is missing required key '%s'", name, fields[f]);
		s->nmodels++;
	}
	L->ck.models = s->models;
	L->ck.nmodels = s->nmodels;
	return 0;
}
