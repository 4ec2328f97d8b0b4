/* runner/resume.h: `runner run SWEEP.yaml --resume RUN` — continue a run that did not complete
 * (resume.c). */
#ifndef BENCHDB_RESUME_H
#define BENCHDB_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "shard.h"
#include "sweep.h"

/* What the resumed run is and what it already holds. */
struct run_resume {
	int64_t run_id;
	char uuid[40];
	struct run_identity id;   /* the run's shard, group, label and memory limit, as resumed */
	unsigned char *stored;    /* ncases flags: 1 = case (by ord) already stored */
	size_t nstored;
	size_t counts[STATUS_COUNT];   /* the stored cases by status */
};

/* What the resuming command line asked for; NULL / 0 where it did not say (the run's is kept). */
struct run_resume_asked {
	const struct shard *shard;
	const char *label, *group;
	int64_t mem_limit;   /* --mem-limit bytes, or 0 */
	const char *command_line;
};

/* Take over run `selector` for this sweep: refused when it is complete, when its runner is alive,
 * when asked for another shard than the run's (even with force: a run stores only its own
 * slice), or (unless force) when the sweep text, the build, the machine, the environment
 * (runs.env: thread counts, ISA caps, ...), the label, the group or the memory limit differ from
 * the run's (the message says which). On success the run is
 * 'running' again with this process as its runner, out->id holds what the rest of it must run
 * with, and the resume is recorded in runs.resumes (what force accepted, too). The look at the
 * run and its taking over are one write transaction: of two resumes at once, the second finds
 * the first alive.
 * current: this process's run record (git, version, sweep hash, env); system_id: this machine's. */
int run_resume_begin(struct db *db, const char *selector, const struct run_record *current,
		     int64_t system_id, size_t ncases, int force,
		     const struct run_resume_asked *asked, struct run_resume *out,
		     struct bd_error *err);
void run_resume_free(struct run_resume *r);

#endif
