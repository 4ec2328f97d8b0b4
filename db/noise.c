/* db/noise.c: the stored summaries of the noise between runs (schemas/010_run_noise.sql) — the
 * runs and sessions of a system, which runs are folded, the sessions' rows, and the fold itself
 * (report/noise.c decides what goes in). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_internal.h"

static int fail(struct db *db, struct bd_error *err, const char *what)
{
	return bd_fail(err, BD_EDB, "%s: %s", what, sqlite3_errmsg(db_sqlite(db)));
}

/* Step st: 1 with a row to read; 0 when done, or when it failed (*rc set) or had failed before. */
static int next_row(sqlite3_stmt *st, int *rc)
{
	if (*rc != SQLITE_OK)
		return 0;
	int s = sqlite3_step(st);
	if (s == SQLITE_ROW)
		return 1;
	if (s != SQLITE_DONE)
		*rc = s;
	return 0;
}

static void copy_text(sqlite3_stmt *st, int col, char *out, size_t n)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	snprintf(out, n, "%s", t ? (const char *)t : "");
}

void db_run_code(const char *commit, int dirty, const char *sweep_hash, char out[128])
{
	snprintf(out, 128, "%.48s%s/%.64s", commit && commit[0] ? commit : "?",
		 dirty == 1 ? "+dirty" : "", sweep_hash && sweep_hash[0] ? sweep_hash : "?");
}

int db_noise_stored(struct db *db)
{
	sqlite3_stmt *st = NULL;
	int found = 0;
	if (sqlite3_prepare_v2(db_sqlite(db),
			       "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
			       "('noise_sessions', 'noise_runs')",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		found = sqlite3_column_int(st, 0) == 2;
	sqlite3_finalize(st);
	return found;
}

int db_run_sessions(struct db *db, int64_t system_id, int64_t run_id, struct run_session **out,
		    size_t *n, struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	struct run_session *rows = NULL;
	size_t count = 0, cap = 0;
	*out = NULL;
	*n = 0;
	int stored = db_noise_stored(db);
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "SELECT r.id, r.system_id, r.uuid, r.group_id, r.started_at, r.status, %s, "
		 "r.git_commit, r.git_dirty, r.sweep_hash "
		 "FROM runs r WHERE (?1 = 0 OR r.system_id = ?1) AND (?2 = 0 OR r.id = ?2) "
		 "ORDER BY r.started_at, r.id",
		 stored ? "r.id IN (SELECT run_id FROM noise_runs)" : "0");
	int rc = sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, system_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, run_id);
	while (next_row(st, &rc)) {
		if (count == cap) {
			cap = cap ? 2 * cap : 64;
			struct run_session *grown = realloc(rows, cap * sizeof(*rows));
			if (!grown) {
				free(rows);
				sqlite3_finalize(st);
				return bd_fail(err, BD_ENOMEM, "out of memory");
			}
			rows = grown;
		}
		struct run_session *r = &rows[count++];
		memset(r, 0, sizeof(*r));
		r->id = sqlite3_column_int64(st, 0);
		r->system_id = sqlite3_column_int64(st, 1);
		copy_text(st, 2, r->uuid, sizeof(r->uuid));
		copy_text(st, 3, r->group_id, sizeof(r->group_id));
		copy_text(st, 4, r->started_at, sizeof(r->started_at));
		copy_text(st, 5, r->status, sizeof(r->status));
		r->folded = sqlite3_column_int(st, 6);
		db_run_code((const char *)sqlite3_column_text(st, 7),
			    sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 8),
			    (const char *)sqlite3_column_text(st, 9), r->code);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		free(rows);
		return fail(db, err, "cannot list the runs' sessions");
	}
	*out = rows;
	*n = count;
	return 0;
}

int db_noise_sessions_list(struct db *db, int64_t system_id, const char *phase,
			   int (*row)(const struct noise_session_row *r, void *ctx), void *ctx,
			   struct bd_error *err)
{
	if (!db_noise_stored(db))
		return 0;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
		"SELECT case_key, session, runs, mean_log, ss_log, first_at, last_at, code FROM noise_sessions "
		"WHERE system_id = ?1 AND phase = ?2 ORDER BY case_key, first_at, session",
		-1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, system_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, phase, -1, SQLITE_STATIC);
	int stop = 0;
	while (!stop && next_row(st, &rc)) {
		struct noise_session_row r;
		const unsigned char *key = sqlite3_column_text(st, 0);
		r.case_key = key ? (const char *)key : "";
		copy_text(st, 1, r.session, sizeof(r.session));
		r.runs = sqlite3_column_int64(st, 2);
		r.mean_log = sqlite3_column_double(st, 3);
		r.ss_log = sqlite3_column_double(st, 4);
		copy_text(st, 5, r.first_at, sizeof(r.first_at));
		copy_text(st, 6, r.last_at, sizeof(r.last_at));
		copy_text(st, 7, r.code, sizeof(r.code));
		stop = row(&r, ctx);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return fail(db, err, "cannot read the stored noise sessions");
	return stop < 0 ? bd_fail(err, BD_ENOMEM, "out of memory") : 0;
}

int db_noise_fold(struct db *db, int64_t run_id, const struct noise_fold_entry *entries, size_t n,
		  int *folded, struct bd_error *err)
{
	sqlite3 *h = db_sqlite(db);
	sqlite3_stmt *seen = NULL, *get = NULL, *put = NULL, *mark = NULL;
	*folded = 0;
	if (!db_noise_stored(db))
		return bd_fail(err, BD_EVERSION, "the database has no noise tables (schema 10): "
						 "upgrade it with `runner migrate`");
	if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return fail(db, err, "cannot fold the run into the noise sessions");
	int rc = sqlite3_prepare_v2(h, "SELECT 1 FROM noise_runs WHERE run_id = ?1", -1, &seen, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(h,
			"SELECT runs, mean_log, ss_log, first_at, last_at FROM noise_sessions WHERE "
			"system_id = ?1 AND case_key = ?2 AND phase = ?3 AND session = ?4", -1, &get, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(h,
			"INSERT OR REPLACE INTO noise_sessions (system_id, case_key, phase, session, runs, "
			"mean_log, ss_log, first_at, last_at, code) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
			"?9, ?10)",
			-1, &put, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(h, "INSERT INTO noise_runs (run_id) VALUES (?1)", -1, &mark, NULL);
	int already = 0;
	if (rc == SQLITE_OK && (rc = sqlite3_bind_int64(seen, 1, run_id)) == SQLITE_OK)
		already = sqlite3_step(seen) == SQLITE_ROW;
	for (size_t i = 0; i < n && rc == SQLITE_OK && !already; i++) {
		const struct noise_fold_entry *e = &entries[i];
		/* Welford: one more run into the session's count, mean and sum of squares */
		int64_t runs = 0;
		double mean = 0, ss = 0;
		char first[32], last[32];
		snprintf(first, sizeof(first), "%s", e->at);
		snprintf(last, sizeof(last), "%s", e->at);
		sqlite3_reset(get);
		sqlite3_bind_int64(get, 1, e->system_id);
		sqlite3_bind_text(get, 2, e->case_key, -1, SQLITE_STATIC);
		sqlite3_bind_text(get, 3, e->phase, -1, SQLITE_STATIC);
		sqlite3_bind_text(get, 4, e->session, -1, SQLITE_STATIC);
		int s = sqlite3_step(get);
		if (s == SQLITE_ROW) {
			runs = sqlite3_column_int64(get, 0);
			mean = sqlite3_column_double(get, 1);
			ss = sqlite3_column_double(get, 2);
			copy_text(get, 3, first, sizeof(first));
			copy_text(get, 4, last, sizeof(last));
			if (strcmp(e->at, first) < 0)
				snprintf(first, sizeof(first), "%s", e->at);
			if (strcmp(e->at, last) > 0)
				snprintf(last, sizeof(last), "%s", e->at);
		} else if (s != SQLITE_DONE) {
			rc = s;
			break;
		}
		runs++;
		double delta = e->y - mean;
		mean += delta / (double)runs;
		ss += delta * (e->y - mean);
		sqlite3_reset(put);
		sqlite3_bind_int64(put, 1, e->system_id);
		sqlite3_bind_text(put, 2, e->case_key, -1, SQLITE_STATIC);
		sqlite3_bind_text(put, 3, e->phase, -1, SQLITE_STATIC);
		sqlite3_bind_text(put, 4, e->session, -1, SQLITE_STATIC);
		sqlite3_bind_int64(put, 5, runs);
		sqlite3_bind_double(put, 6, mean);
		sqlite3_bind_double(put, 7, ss);
		sqlite3_bind_text(put, 8, first, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(put, 9, last, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(put, 10, e->code, -1, SQLITE_STATIC);
		s = sqlite3_step(put);
		rc = s == SQLITE_DONE ? SQLITE_OK : s;
	}
	if (rc == SQLITE_OK && !already) {
		sqlite3_bind_int64(mark, 1, run_id);
		int s = sqlite3_step(mark);
		rc = s == SQLITE_DONE ? SQLITE_OK : s;
	}
	sqlite3_finalize(seen);
	sqlite3_finalize(get);
	sqlite3_finalize(put);
	sqlite3_finalize(mark);
	if (rc != SQLITE_OK) {
		int out = fail(db, err, "cannot fold the run into the noise sessions");
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
		return out;
	}
	if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		int out = fail(db, err, "cannot fold the run into the noise sessions");
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
		return out;
	}
	*folded = !already;
	return 0;
}

int db_noise_clear(struct db *db, struct bd_error *err)
{
	if (!db_noise_stored(db))
		return 0;
	if (sqlite3_exec(db_sqlite(db), "BEGIN IMMEDIATE; DELETE FROM noise_sessions; "
					"DELETE FROM noise_runs; COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		int out = fail(db, err, "cannot clear the noise sessions");
		sqlite3_exec(db_sqlite(db), "ROLLBACK", NULL, NULL, NULL);
		return out;
	}
	return 0;
}
