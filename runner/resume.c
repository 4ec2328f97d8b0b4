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

static void shard_text(const struct run_identity *id, char *out, size_t n)
{
	if (id->shard_count > 0)
		snprintf(out, n, "shard %d/%d", id->shard_index, id->shard_count);
	else
		snprintf(out, n, "the whole sweep");
}

/* The differences between what the command line asked for and the run's own values into diff;
 * the values asked for replace the run's in *id (used only when force accepts them). */
static void identity_diff(struct run_identity *id, const struct run_resume_asked *a,
			  struct strbuf *diff)
{
	if (a->label && !same(a->label, id->label)) {
		sb_addf(diff, "%s--label '%s', the run's is %s%s%s", diff->len ? "; " : "", a->label,
			id->label ? "'" : "", id->label ? id->label : "none", id->label ? "'" : "");
		free(id->label);
		id->label = xstrdup(a->label);
	}
	if (a->group && !same(a->group, id->group_id)) {
		sb_addf(diff, "%s--group '%s', the run's is %s%s%s", diff->len ? "; " : "", a->group,
			id->group_id ? "'" : "", id->group_id ? id->group_id : "none",
			id->group_id ? "'" : "");
		free(id->group_id);
		id->group_id = xstrdup(a->group);
	}
	if (a->mem_limit > 0 && (a->mem_limit != id->mem_limit || !id->mem_limit_all)) {
		if (id->mem_limit > 0)
			sb_addf(diff, "%s--mem-limit %lld bytes, the run's cases had %lld%s", diff->len ? "; " : "",
				(long long)a->mem_limit, (long long)id->mem_limit,
				id->mem_limit_all ? "" : " (the default share, CPU cases without a "
							 "limit of their own)");
		else
			sb_addf(diff, "%s--mem-limit %lld bytes, the run recorded no limit (an older "
				"benchdb ran it)", diff->len ? "; " : "", (long long)a->mem_limit);
		id->mem_limit = a->mem_limit;
		id->mem_limit_all = 1;
	}
}

int run_resume_begin(struct db *db, const char *selector, const struct run_record *current,
		     int64_t system_id, size_t ncases, int force,
		     const struct run_resume_asked *asked, struct run_resume *out,
		     struct bd_error *err)
{
	struct run_row r = {0};
	struct strbuf diff = STRBUF_INIT, note = STRBUF_INIT;
	char why[300];
	int rc, locked = 0;
	memset(out, 0, sizeof(*out));
	if ((rc = db_run_resolve_one(db, selector, &out->run_id, err)))
		goto done;
	/* from the look at the run to its taking over, one transaction: another resume waits, then
	 * finds this process the run's live runner */
	if ((rc = db_run_takeover_begin(db, err)))
		goto done;
	locked = 1;
	if ((rc = db_run_get(db, out->run_id, &r, err)) ||
	    (rc = db_run_identity_get(db, out->run_id, &out->id, err)))
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
	if (asked->shard && (asked->shard->count != out->id.shard_count ||
			     (asked->shard->count && asked->shard->index != out->id.shard_index))) {
		char was[64];
		shard_text(&out->id, was, sizeof(was));
		rc = bd_fail(err, BD_EINVAL, "cannot resume run %lld as shard %d/%d: it runs %s, and a "
			     "run stores only the cases of its own shard (resume it without --shard, or "
			     "start a new run)", (long long)out->run_id, asked->shard->index,
			     asked->shard->count, was);
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
	/* thread counts, ISA caps, GEMM choices: cases measured under other settings are another
	 * measurement, even of the same code on the same machine */
	if (current->env_json && !same(out->id.env, current->env_json))
		sb_addf(&diff, "%sthe environment differs (the run's: %s, now: %s)", diff.len ? "; " : "",
			out->id.env ? out->id.env : "none", current->env_json);
	if (r.system_id != system_id)
		sb_addf(&diff, "%sthe machine or its build flags differ (system %lld, now %lld)",
			diff.len ? "; " : "", (long long)r.system_id, (long long)system_id);
	identity_diff(&out->id, asked, &diff);
	if (diff.len && !force) {
		rc = bd_fail(err, BD_EINVAL, "cannot resume run %lld: %s; pass --force to resume anyway",
			     (long long)out->run_id, sb_str(&diff));
		goto done;
	}
	out->stored = xcalloc(ncases, 1);
	char now[32];
	db_now(now);
	sb_addf(&note, "%s: %s", now, asked->command_line ? asked->command_line : "resumed");
	if (diff.len)
		sb_addf(&note, " (with --force: %s)", sb_str(&diff));
	if ((rc = db_run_stored_ords(db, out->run_id, out->stored, ncases, &out->nstored, out->counts,
				     err)) ||
	    (rc = db_run_reopen(db, out->run_id, err)) ||
	    (rc = db_run_resume_record(db, out->run_id, &out->id, sb_str(&note), err)))
		goto done;
done:
	if (locked) {
		int end = db_run_takeover_end(db, !rc, rc ? NULL : err);
		rc = rc ? rc : end;
	}
	if (rc)
		run_resume_free(out);
	db_run_row_clear(&r);
	sb_free(&diff);
	sb_free(&note);
	return rc;
}

void run_resume_free(struct run_resume *r)
{
	free(r->stored);
	r->stored = NULL;
	db_run_identity_clear(&r->id);
}
