/* db/db_untrusted.c: every row read from a database is untrusted (a hand-edited, damaged or
 * hostile file). What the schema promises but SQLite cannot enforce everywhere (a table made
 * without its constraints, `PRAGMA ignore_check_constraints`, a foreign tool) is re-established
 * here, so that the rest of the program can rely on it: required text is never NULL (a blank is
 * shown), counts are in range. Called on each row as it is read. */
#include "db_untrusted.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "xalloc.h"

static void text_required(char **s)
{
	if (!*s)
		*s = xstrdup("");
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void db_run_row_untrusted(struct run_row *r)
{
	char **required[] = {&r->uuid, &r->started_at, &r->status, &r->tool_version,
			     &r->command_line, &r->hostname};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		text_required(required[i]);
	r->git_dirty = (int)clamp(r->git_dirty, -1, 1);
	r->ncases = clamp(r->ncases, 0, INT64_MAX);
	r->nok = clamp(r->nok, 0, r->ncases);
	if (r->shard_count < 1 || r->shard_index < 0 || r->shard_index >= r->shard_count)
		r->shard_count = r->shard_index = 0;   /* not a shard this can show */
}

void db_case_row_untrusted(struct case_row *c)
{
	char **required[] = {&c->suite, &c->impl, &c->device, &c->dtype, &c->pass,
			     &c->params_json, &c->case_key, &c->name};
	/* status: an unknown name already reads as STATUS_ERROR (db.c, col_status) */
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		text_required(required[i]);
	/* warm-up and measured iterations index sample arrays: the sweep format's limits */
	c->warmup = clamp(c->warmup, 0, BD_MAX_WARMUP);
	c->iters = clamp(c->iters, 0, BD_MAX_ITERS);
	c->causal = (int)clamp(c->causal, -1, 1);
	int64_t *sizes[] = {&c->batch_size, &c->heads, &c->seq_len, &c->head_dim};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		*sizes[i] = clamp(*sizes[i], 0, BD_MAX_DIM);
	/* a relative error: finite and >= 0, or -1 unknown */
	if (!(c->rse >= 0) || isinf(c->rse))
		c->rse = -1;
	/* a share: [0, 1], or -1 unknown */
	if (!(c->cpu_wait >= 0))
		c->cpu_wait = -1;
	else if (c->cpu_wait > 1)
		c->cpu_wait = 1;
}
