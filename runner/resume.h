/* runner/resume.h: `runner run SWEEP.yaml --resume RUN` — continue a run that did not complete
 * (resume.c). */
#ifndef BENCHDB_RESUME_H
#define BENCHDB_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "sweep.h"

/* What the resumed run is and what it already holds. */
struct run_resume {
	int64_t run_id;
	char uuid[40];
	unsigned char *stored;   /* ncases flags: 1 = case (by ord) already stored */
	size_t nstored;
};

/* Take over run `selector` for this sweep: refused when it is complete, when its runner is alive,
 * or (unless force) when the sweep text, the build or the machine differ from the run's (the
 * message says which). On success the run is 'running' again with this process as its runner.
 * current: this process's run record (git, version, sweep hash); system_id: this machine's. */
int run_resume_begin(struct db *db, const char *selector, const struct run_record *current,
		     int64_t system_id, size_t ncases, int force, struct run_resume *out,
		     struct bd_error *err);
void run_resume_free(struct run_resume *r);

#endif
