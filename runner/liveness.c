/* runner/liveness.c: the runner's heartbeat (liveness.h). */
#include "liveness.h"

#include "measure.h"

/* Nanoseconds between heartbeats written between iterations. */
#define HEARTBEAT_EVERY_NS (INT64_C(30) * 1000000000)

void run_heartbeat_now(struct run_heartbeat *hb)
{
	/* a failure (a busy file) is not worth stopping for: the next one will do */
	db_run_heartbeat(hb->db, hb->run_id);
	hb->last_ns = now_ns();
}

void run_heartbeat_iteration(void *ctx, int64_t iter, int64_t total)
{
	struct run_heartbeat *hb = ctx;
	progress_iteration(hb->pg, iter, total);
	if (now_ns() - hb->last_ns >= HEARTBEAT_EVERY_NS)
		run_heartbeat_now(hb);
}
