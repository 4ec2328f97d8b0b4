/* db/run_identity.c: what a resumed run keeps (schemas/011_run_identity.sql) — its shard, group,
 * label and memory limit — and the record of each resume. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_internal.h"
#include "xalloc.h"

static int fail(struct db *db, struct bd_error *err, const char *what)
{
	return bd_fail_at(err, BD_EDB, db_file(db), 0, 0, "%s: %s", what,
			  sqlite3_errmsg(db_sqlite(db)));
}

static char *column_dup(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);
	return s ? xstrdup(s) : NULL;
}

int db_run_set_limits(struct db *db, int64_t run_id, const struct run_record *run,
		      struct bd_error *err)
{
	if (run->mem_limit <= 0)
		return 0;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "UPDATE runs SET mem_limit = ?2, mem_limit_source = ?3 WHERE id = ?1",
				    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, run->mem_limit);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, run->mem_limit_all ? "option" : "default", -1,
				       SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db_sqlite(db));
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : fail(db, err, "cannot store the run's memory limit");
}

int db_run_identity_get(struct db *db, int64_t run_id, struct run_identity *out,
			struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	memset(out, 0, sizeof(*out));
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "SELECT label, group_id, shard_index, shard_count, mem_limit, "
				    "mem_limit_source, env FROM runs WHERE id = ?1", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK) {
		int s = sqlite3_step(st);
		if (s == SQLITE_ROW) {
			out->label = column_dup(st, 0);
			out->group_id = column_dup(st, 1);
			int64_t count = sqlite3_column_int64(st, 3);
			if (sqlite3_column_type(st, 3) != SQLITE_NULL && count > 0 && count <= 1 << 20) {
				out->shard_count = (int)count;
				out->shard_index = (int)sqlite3_column_int64(st, 2);
			}
			out->mem_limit = sqlite3_column_int64(st, 4) > 0 ? sqlite3_column_int64(st, 4) : 0;
			const char *source = (const char *)sqlite3_column_text(st, 5);
			out->mem_limit_all = source && !strcmp(source, "option");
			out->env = column_dup(st, 6);
		} else {
			rc = s == SQLITE_DONE ? SQLITE_NOTFOUND : s;
		}
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_NOTFOUND)
		return bd_fail_at(err, BD_ENOTFOUND, db_file(db), 0, 0, "no run %lld", (long long)run_id);
	return rc == SQLITE_OK ? 0 : fail(db, err, "cannot read the run");
}

void db_run_identity_clear(struct run_identity *id)
{
	free(id->label);
	free(id->group_id);
	free(id->env);
	memset(id, 0, sizeof(*id));
}

int db_run_resume_record(struct db *db, int64_t run_id, const struct run_identity *id,
			 const char *note, struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "UPDATE runs SET resumes = coalesce(resumes || char(10), '') || ?2, "
				    "label = ?3, group_id = ?4, mem_limit = coalesce(?5, mem_limit), "
				    "mem_limit_source = coalesce(?6, mem_limit_source) WHERE id = ?1",
				    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, note, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = id->label ? sqlite3_bind_text(st, 3, id->label, -1, SQLITE_TRANSIENT)
			       : sqlite3_bind_null(st, 3);
	if (rc == SQLITE_OK)
		rc = id->group_id ? sqlite3_bind_text(st, 4, id->group_id, -1, SQLITE_TRANSIENT)
				  : sqlite3_bind_null(st, 4);
	if (rc == SQLITE_OK)
		rc = id->mem_limit > 0 ? sqlite3_bind_int64(st, 5, id->mem_limit)
				       : sqlite3_bind_null(st, 5);
	if (rc == SQLITE_OK)
		rc = id->mem_limit > 0 ? sqlite3_bind_text(st, 6, id->mem_limit_all ? "option"
									: "default", -1, SQLITE_STATIC)
				       : sqlite3_bind_null(st, 6);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db_sqlite(db));
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : fail(db, err, "cannot record the resume");
}
