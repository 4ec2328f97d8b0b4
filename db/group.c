/* db/group.c: runs that belong together — the shards of one sweep. A group selected as a run
 * (`report --run GROUP`) stands for its members: db_group_resolve picks a representative run and
 * records the members in the connection's temporary table run_scope, which db_cases_list reads,
 * so every report command sees the whole group's cases as one run's, in sweep order. */
#include <stdio.h>

#include "db_internal.h"

static int group_fail(struct db *db, struct bd_error *err, const char *what)
{
	return bd_fail_at(err, BD_EDB, db_file(db), 0, 0, "%s: %s", what, sqlite3_errmsg(db_sqlite(db)));
}

int db_run_set_group(struct db *db, int64_t run_id, const struct run_record *run,
		     struct bd_error *err)
{
	if (!run->group_id)
		return 0;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "UPDATE runs SET group_id = ?1, shard_index = ?2, shard_count = ?3 "
				    "WHERE id = ?4", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, run->group_id, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = run->shard_count > 0 ? sqlite3_bind_int(st, 2, run->shard_index)
					  : sqlite3_bind_null(st, 2);
	if (rc == SQLITE_OK)
		rc = run->shard_count > 0 ? sqlite3_bind_int(st, 3, run->shard_count)
					  : sqlite3_bind_null(st, 3);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 4, run_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : group_fail(db, err, "cannot store the run's group");
}

int db_group_init(struct db *db, struct bd_error *err)
{
	if (sqlite3_exec(db_sqlite(db),
			 "CREATE TEMP TABLE IF NOT EXISTS run_scope (rep INTEGER NOT NULL, "
			 "member INTEGER NOT NULL)", NULL, NULL, NULL) != SQLITE_OK)
		return group_fail(db, err, "cannot prepare run groups");
	return 0;
}

/* Prepare sql, bind group as ?1 and rep as ?2, step it once; the first column of a row into
 * *value (when not NULL and the row's value is not NULL). */
static int group_step(sqlite3 *h, const char *sql, const char *group, int64_t rep, int64_t *value)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, group, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK && sqlite3_bind_parameter_count(st) > 1)
		rc = sqlite3_bind_int64(st, 2, rep);
	if (rc == SQLITE_OK) {
		int s = sqlite3_step(st);
		if (s == SQLITE_ROW && value && sqlite3_column_type(st, 0) != SQLITE_NULL)
			*value = sqlite3_column_int64(st, 0);
		rc = s == SQLITE_ROW || s == SQLITE_DONE ? SQLITE_OK : s;
	}
	sqlite3_finalize(st);
	return rc;
}

int db_group_resolve(struct db *db, const char *group, int64_t *rep, int *found)
{
	sqlite3 *h = db_sqlite(db);
	int64_t latest = 0;
	*found = 0;
	/* latest by start time, then id (db_run_time_cmp): a database merged out of order has its
	 * ids out of time order, and an older run of a slice merged after a newer one stood for it */
	int rc = group_step(h, "SELECT id FROM runs WHERE group_id = ?1 "
			    "ORDER BY started_at DESC, id DESC LIMIT 1", group, 0, &latest);
	if (rc == SQLITE_OK && latest > 0)
		rc = group_step(h, "DELETE FROM temp.run_scope WHERE rep = ?2", group,
				latest, NULL);
	/* the members: the latest run of each slice (a shard run again replaces the earlier one) */
	if (rc == SQLITE_OK && latest > 0)
		rc = group_step(h,
			"INSERT INTO temp.run_scope (rep, member) SELECT ?2, id FROM runs r "
			"WHERE group_id = ?1 AND id = (SELECT o.id FROM runs o "
			"WHERE o.group_id = r.group_id AND o.shard_index IS r.shard_index "
			"ORDER BY o.started_at DESC, o.id DESC LIMIT 1)",
			group, latest, NULL);
	if (rc != SQLITE_OK)
		return BD_EDB;
	*rep = latest;
	*found = latest > 0;
	return 0;
}
