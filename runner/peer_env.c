/* runner/peer_env.c: a peer case's parameters as the environment of the peer's command
 * (schemas/peer-protocol.md, "Environment"): the runner's own environment without the BENCHDB_*
 * names the runner sets, then every parameter of the case's suite as BENCHDB_<KEY>. */
#include "peer_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_rule.h"

extern char **environ;

/* The variables the runner sets besides the parameters' own (param_env_name of every row). */
static const char *const env_extra[] = {
	"BENCHDB_PEER_PROTOCOL", "BENCHDB_PEER_PROTOCOL_MAX", "BENCHDB_PEER_MODE", "BENCHDB_PARAMS",
	"BENCHDB_PHASES", "BENCHDB_CHECK_ATOL", "BENCHDB_CHECK_RTOL",
	"BENCHDB_PACED",   /* a paced case's member of its case line (peer.c), never inherited */
	NULL,
};

/* Whether the environment entry var ("NAME=VALUE") is one the runner sets, for any suite;
 * inherited ones of these names are dropped. */
static int env_is_ours(const char *var)
{
	size_t klen = strcspn(var, "=");
	for (size_t i = 0; env_extra[i]; i++)
		if (strlen(env_extra[i]) == klen && !strncmp(env_extra[i], var, klen))
			return 1;
	for (size_t i = 0; i < param_count; i++) {
		char name[64];
		param_env_name(&param_defs[i], name, sizeof(name));
		if (param_defs[i].suites && strlen(name) == klen && !strncmp(name, var, klen))
			return 1;
	}
	return 0;
}

static void env_put(struct peer_env *e, char *var)
{
	if (!var) {
		e->failed = 1;
		return;
	}
	if (e->n + 2 > e->cap) {
		size_t want = e->cap ? e->cap * 2 : 64;
		char **vars = realloc(e->vars, want * sizeof(*vars));
		if (!vars) {
			free(var);
			e->failed = 1;
			return;
		}
		e->vars = vars;
		e->cap = want;
	}
	e->vars[e->n++] = var;
	e->vars[e->n] = NULL;
}

static void env_setf(struct peer_env *e, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void env_setf(struct peer_env *e, const char *name, const char *fmt, ...)
{
	char *value = NULL, *var = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&value, fmt, ap);
	va_end(ap);
	if (n < 0 || asprintf(&var, "%s=%s", name, value) < 0)
		var = NULL;
	if (n >= 0)
		free(value);
	env_put(e, var);
}

/* "BENCHDB_" + a peer parameter's name in capitals. */
static void peer_param_env_name(const char *param, char *out, size_t size)
{
	size_t n = (size_t)snprintf(out, size, "BENCHDB_%s", param);
	for (size_t i = 8; i < n && i < size; i++)
		out[i] = (char)toupper((unsigned char)out[i]);
}

/* Whether var ("NAME=VALUE") is the variable of one of peer's parameters (inherited: dropped,
 * the case's value replaces it). */
static int is_peer_param(const struct sweep_peer *peer, const char *var)
{
	size_t klen = strcspn(var, "=");
	for (size_t i = 0; peer && i < peer->nparams; i++) {
		char name[64];
		peer_param_env_name(peer->params[i].name, name, sizeof(name));
		if (strlen(name) == klen && !strncmp(name, var, klen))
			return 1;
	}
	return 0;
}

/* x in the fewest significant digits that read back as x ("2e-05", "0.0001"). */
static const char *shortest(double x, char *buf, size_t size)
{
	for (int digits = 1; digits <= 17; digits++) {
		snprintf(buf, size, "%.*g", digits, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return buf;
}

/* peer_internal.h */
void peer_env_free(struct peer_env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->vars[i]);
	free(e->vars);
}

/* peer_internal.h */
int peer_env_build(const struct sweep_case *c, const struct sweep_peer *peer, int persistent,
		   int with_environ, struct peer_env *e)
{
	for (char **v = environ; with_environ && v && *v; v++)
		if (!env_is_ours(*v) && !is_peer_param(peer, *v))
			env_put(e, strdup(*v));
	env_setf(e, "BENCHDB_PEER_PROTOCOL", "%d", persistent ? 2 : PEER_PROTOCOL_VERSION);
	env_setf(e, "BENCHDB_PEER_PROTOCOL_MAX", "%d", PEER_PROTOCOL_MAX);
	env_setf(e, "BENCHDB_PEER_MODE", "%s", persistent ? "persistent" : "case");
	if (!c)
		return e->failed ? BD_ENOMEM : 0;
	const struct case_params *p = &c->params;
	char phases[32], atol[32], rtol[32];
	peer_phase_list(pass_phases(p->pass), " ", phases, sizeof(phases));   /* for shell loops */
	struct check_rule rule = check_rule_for(p);
	env_setf(e, "BENCHDB_PARAMS", "%s", c->params_json);
	env_setf(e, "BENCHDB_PHASES", "%s", phases);
	env_setf(e, "BENCHDB_CHECK_ATOL", "%s", shortest(rule.atol, atol, sizeof(atol)));
	env_setf(e, "BENCHDB_CHECK_RTOL", "%s", shortest(rule.rtol, rtol, sizeof(rtol)));
	for (size_t i = 0; i < param_count; i++) {
		const struct param_def *d = &param_defs[i];
		char name[64], value[64];
		if (!param_applies(p, d))
			continue;
		param_env_name(d, name, sizeof(name));
		param_format(p, d, value);
		env_setf(e, name, "%s", value);
	}
	for (size_t i = 0; i < c->npeer_params; i++) {
		char name[64];
		peer_param_env_name(c->peer_params[i].def->name, name, sizeof(name));
		env_setf(e, name, "%s", c->peer_params[i].value);
	}
	return e->failed ? BD_ENOMEM : 0;
}
