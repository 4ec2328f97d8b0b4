/* runner/liveness.h: a run says it is alive (runs.heartbeat_at, schemas/007_liveness.sql) between
 * iterations and after each case, so that `report runs` can tell a dead run from a going one. */
#ifndef BENCHDB_LIVENESS_H
#define BENCHDB_LIVENESS_H

#include <stdint.h>

#include "db.h"
#include "progress.h"

struct run_heartbeat {
	struct progress *pg;   /* drawn on every iteration */
	struct db *db;
	int64_t run_id;
	int64_t last_ns;       /* CLOCK_MONOTONIC of the last heartbeat written */
};

/* measure_case's on_iteration callback (ctx: struct run_heartbeat): the progress line, and a
 * heartbeat when the last is 30 s old. Between iterations, never inside a timed phase. */
void run_heartbeat_iteration(void *ctx, int64_t iter, int64_t total);
/* A heartbeat now (after a stored case). */
void run_heartbeat_now(struct run_heartbeat *hb);

#endif
