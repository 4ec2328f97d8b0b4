/* db/db_internal.h: what the db layer's files share beside db.h — the SQLite handle of an open
 * database and the functions db.c calls in its siblings (group.c, merge.c). Never included
 * outside db/. */
#ifndef BENCHDB_DB_INTERNAL_H
#define BENCHDB_DB_INTERNAL_H

#include <sqlite3.h>

#include "db.h"

/* Column i of st's row as an integer, or if_null where it is NULL (db.c, system.c). */
static inline int64_t db_col_i64(sqlite3_stmt *st, int i, int64_t if_null)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? if_null : sqlite3_column_int64(st, i);
}

/* The connection of db (owned by db). */
sqlite3 *db_sqlite(struct db *db);
/* The path db was opened with. */
const char *db_file(struct db *db);

/* Store run's group and shard (group.c); nothing when run->group_id is NULL. */
int db_run_set_group(struct db *db, int64_t run_id, const struct run_record *run,
		     struct bd_error *err);

/* Store run's memory limit (run_identity.c); nothing when run->mem_limit is 0. */
int db_run_set_limits(struct db *db, int64_t run_id, const struct run_record *run,
		      struct bd_error *err);

/* Create the connection's temporary table of group members (at open). */
int db_group_init(struct db *db, struct bd_error *err);
/* When group names a group of runs: *found = 1, *rep = its latest run, and the members (the
 * latest run of each shard) recorded as rep's scope, which db_cases_list lists together.
 * *found = 0 when no run has that group. BD_EDB on a SQLite failure. */
int db_group_resolve(struct db *db, const char *group, int64_t *rep, int *found);

#endif
