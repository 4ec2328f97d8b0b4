/* db/group.c: runs that belong together — the shards of one sweep. A group selected as a run
 * (`report --run GROUP`) stands for its members: db_group_resolve picks a representative run and
 * records the members in the connection's temporary table run_scope, which db_cases_list reads,
 * so every report command sees the whole group's cases as one run's, in sweep order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_internal.h"
#include "strbuf.h"
#include "xalloc.h"

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

int db_group_gap(struct db *db, int64_t rep, char **why, struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	struct strbuf sb = STRBUF_INIT, stopped = STRBUF_INIT;
	char *commit = NULL, *sweep = NULL;
	int64_t count = -1, members = 0, unsharded = 0, nstopped = 0;
	int counts_differ = 0, commits_differ = 0, sweeps_differ = 0;
	unsigned char *present = NULL;
	*why = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "SELECT r.shard_index, r.shard_count, r.status, r.git_commit, "
				    "r.sweep_hash FROM temp.run_scope s JOIN runs r ON r.id = s.member "
				    "WHERE s.rep = ?1 ORDER BY r.shard_index", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, rep);
	/* first pass: the slices the group was cut into (a stored count is untrusted: capped) */
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 3);
		const char *h = (const char *)sqlite3_column_text(st, 4);
		const char *status = (const char *)sqlite3_column_text(st, 2);
		if (members++ == 0) {
			commit = c ? xstrdup(c) : NULL;
			sweep = h ? xstrdup(h) : NULL;
		}
		commits_differ |= !db_text_same(commit, c);
		sweeps_differ |= !db_text_same(sweep, h);
		if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
			unsharded++;
		} else {
			int64_t n = sqlite3_column_int64(st, 1);
			counts_differ |= count >= 0 && n != count;
			count = count < 0 || n > count ? n : count;
		}
		if (status && strcmp(status, "complete")) {
			if (nstopped++ < 4) {
				if (sqlite3_column_type(st, 0) == SQLITE_NULL)
					sb_addf(&stopped, "; a run of the whole sweep %s", status);
				else
					sb_addf(&stopped, "; shard %lld %s", sqlite3_column_int64(st, 0),
						status);
			}
		}
		rc = SQLITE_OK;
	}
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	/* second pass: which slices 0..count-1 no member holds */
	if (rc == SQLITE_OK && count > 0 && count <= 100000) {
		present = xcalloc((size_t)count, 1);
		sqlite3_reset(st);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if (sqlite3_column_type(st, 0) != SQLITE_NULL &&
			    sqlite3_column_int64(st, 0) >= 0 && sqlite3_column_int64(st, 0) < count)
				present[sqlite3_column_int64(st, 0)] = 1;
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		rc = group_fail(db, err, "cannot read the group's shards");
		goto done;
	}
	if (count <= 0)   /* no shards: a group of whole runs (--repeat, --nodes): its latest run */
		goto done;
	int64_t missing = 0;
	for (int64_t i = 0; i < count && i <= 100000; i++)
		if (!present || !present[i]) {
			if (missing++ < 4)
				sb_addf(&sb, "%s%lld", missing > 1 ? ", " : "; shard ", (long long)i);
		}
	if (missing > 4)
		sb_addf(&sb, " and %lld more", (long long)(missing - 4));
	if (missing)
		sb_addf(&sb, " of %lld missing", (long long)count);
	sb_add(&sb, sb_str(&stopped));
	if (nstopped > 4)
		sb_addf(&sb, " and %lld more not complete", (long long)(nstopped - 4));
	if (counts_differ)
		sb_add(&sb, "; its shards were cut into different numbers of slices");
	if (unsharded)
		sb_add(&sb, "; a run of the whole sweep is in it too");
	if (commits_differ)
		sb_add(&sb, "; its shards are of different git commits");
	if (sweeps_differ)
		sb_add(&sb, "; its shards ran different sweeps");
	if (sb.len)
		*why = xstrdup(sb_str(&sb) + 2);   /* past the first "; " */
done:
	free(present);
	free(commit);
	free(sweep);
	sb_free(&sb);
	sb_free(&stopped);
	return rc;
}

int db_run_resolve_one(struct db *db, const char *selector, int64_t *run_id, struct bd_error *err)
{
	int rc = db_run_resolve(db, selector, run_id, err);
	if (rc)
		return rc;
	int64_t members = 0;
	sqlite3_stmt *st = NULL;
	int s = sqlite3_prepare_v2(db_sqlite(db),
				   "SELECT count(*) FROM temp.run_scope WHERE rep = ?1", -1, &st, NULL);
	if (s == SQLITE_OK)
		s = sqlite3_bind_int64(st, 1, *run_id);
	if (s == SQLITE_OK && (s = sqlite3_step(st)) == SQLITE_ROW) {
		members = sqlite3_column_int64(st, 0);
		s = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (s != SQLITE_OK)
		return group_fail(db, err, "cannot read the group's runs");
	if (members > 1)
		return bd_fail(err, BD_EINVAL, "'%s' is a group of %lld runs (its shards), not one run: "
			       "give the run id of the one you mean (report runs lists them)",
			       selector, (long long)members);
	/* a group of one run is that run: its own status, not the group's (db_run_get) */
	if (members == 1 && group_step(db_sqlite(db), "DELETE FROM temp.run_scope WHERE rep = ?2",
				       "", *run_id, NULL) != SQLITE_OK)
		return group_fail(db, err, "cannot read the group's runs");
	return 0;
}

int db_run_shard_alone(struct db *db, int64_t run_id, char **group, int *index, int *count,
		       struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	*group = NULL;
	*index = *count = 0;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "SELECT group_id, shard_index, shard_count FROM runs WHERE id = ?1 "
				    "AND shard_count IS NOT NULL AND group_id IS NOT NULL AND NOT EXISTS "
				    "(SELECT 1 FROM temp.run_scope WHERE rep = ?1)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK) {
		int s = sqlite3_step(st);
		if (s == SQLITE_ROW) {
			*group = xstrdup((const char *)sqlite3_column_text(st, 0));
			*index = (int)sqlite3_column_int64(st, 1);
			*count = (int)sqlite3_column_int64(st, 2);
		}
		rc = s == SQLITE_ROW || s == SQLITE_DONE ? SQLITE_OK : s;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : group_fail(db, err, "cannot read the run's shard");
}

int db_group_whole_runs(struct db *db, int64_t rep, int64_t *runs, struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	*runs = 0;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "SELECT count(*) FROM runs o JOIN runs r ON o.group_id = r.group_id "
				    "WHERE r.id = ?1 AND r.shard_count IS NULL AND o.shard_count IS NULL "
				    "AND EXISTS (SELECT 1 FROM temp.run_scope WHERE rep = ?1)",
				    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, rep);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*runs = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : group_fail(db, err, "cannot read the group's runs");
}
