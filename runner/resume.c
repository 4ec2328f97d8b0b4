/* runner/resume.c: taking over a run that did not complete (resume.h). */
#include "resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "xalloc.h"

static int same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

int run_resume_begin(struct db *db, const char *selector, const struct run_record *current,
		     int64_t system_id, size_t ncases, int force, struct run_resume *out,
		     struct bd_error *err)
{
	struct run_row r = {0};
	struct strbuf diff = STRBUF_INIT;
	char why[300];
	int rc;
	memset(out, 0, sizeof(*out));
	if ((rc = db_run_resolve(db, selector, &out->run_id, err)) ||
	    (rc = db_run_get(db, out->run_id, &r, err)))
		goto done;
	snprintf(out->uuid, sizeof(out->uuid), "%s", r.uuid ? r.uuid : "");
	if (!strcmp(r.status, "complete")) {
		rc = bd_fail(err, BD_EINVAL, "run %lld is complete: nothing to resume",
			     (long long)out->run_id);
		goto done;
	}
	if (db_run_liveness(db, out->run_id, why, sizeof(why)) == RUN_LIVENESS_ALIVE && !force) {
		rc = bd_fail(err, BD_EINVAL, "run %lld is still running (%s); pass --force to resume it "
			     "anyway", (long long)out->run_id, why);
		goto done;
	}
	if (!same(r.sweep_hash, current->sweep_hash))
		sb_addf(&diff, "%sthe sweep text differs from the run's (sha256 %.12s, now %.12s)",
			diff.len ? "; " : "", r.sweep_hash ? r.sweep_hash : "none", current->sweep_hash);
	if (!same(r.git_commit, current->git_commit) || r.git_dirty != current->git_dirty)
		sb_addf(&diff, "%sthe build differs (run: git %.12s%s, now %.12s%s)", diff.len ? "; " : "",
			r.git_commit ? r.git_commit : "unknown", r.git_dirty == 1 ? "+dirty" : "",
			current->git_commit ? current->git_commit : "unknown",
			current->git_dirty == 1 ? "+dirty" : "");
	if (!same(r.tool_version, current->tool_version))
		sb_addf(&diff, "%sbenchdb %s ran it, this is %s", diff.len ? "; " : "", r.tool_version,
			current->tool_version);
	if (r.system_id != system_id)
		sb_addf(&diff, "%sthe machine or its build flags differ (system %lld, now %lld)",
			diff.len ? "; " : "", (long long)r.system_id, (long long)system_id);
	if (diff.len && !force) {
		rc = bd_fail(err, BD_EINVAL, "cannot resume run %lld: %s; pass --force to resume anyway",
			     (long long)out->run_id, sb_str(&diff));
		goto done;
	}
	out->stored = xcalloc(ncases, 1);
	if ((rc = db_run_stored_ords(db, out->run_id, out->stored, ncases, &out->nstored, err)) ||
	    (rc = db_run_reopen(db, out->run_id, err)))
		goto done;
done:
	if (rc)
		run_resume_free(out);
	db_run_row_clear(&r);
	sb_free(&diff);
	return rc;
}

void run_resume_free(struct run_resume *r)
{
	free(r->stored);
	r->stored = NULL;
}
