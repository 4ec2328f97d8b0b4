/* db/db_liveness.c: whether a run's runner is still alive (schemas/007_liveness.sql), and the
 * writes that resume and close a run. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "db_internal.h"

/* A run on another host is taken for dead when its heartbeat is older than this. */
#define HEARTBEAT_STALE_S 600

static int fail(struct db *db, struct bd_error *err, const char *what)
{
	return bd_fail_at(err, BD_EDB, db_file(db), 0, 0, "%s: %s", what,
			  sqlite3_errmsg(db_sqlite(db)));
}

/* Run one statement with an optional integer and text parameter; returns SQLITE_OK or its code. */
static int exec_run(struct db *db, const char *sql, int64_t run_id, const char *text)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK && text)
		rc = sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db_sqlite(db));
	sqlite3_finalize(st);
	return rc;
}

void db_this_host(char out[256])
{
	if (gethostname(out, 256) != 0)
		snprintf(out, 256, "unknown");
	out[255] = '\0';
}

int db_run_liveness_set(struct db *db, int64_t run_id, struct bd_error *err)
{
	char host[256], now[32];
	db_this_host(host);
	db_now(now);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db),
				    "UPDATE runs SET host = ?2, pid = ?3, heartbeat_at = ?4 WHERE id = ?1",
				    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, host, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, (int64_t)getpid());
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 4, now, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db_sqlite(db));
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : fail(db, err, "cannot record the runner");
}

int db_run_begin_live(struct db *db, int64_t system_id, const struct run_record *run,
		      int64_t *run_id, struct bd_error *err)
{
	if (sqlite3_exec(db_sqlite(db), "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return fail(db, err, "cannot store the run");
	int rc = db_run_begin(db, system_id, run, run_id, err);
	if (!rc)
		rc = db_run_liveness_set(db, *run_id, err);
	if (!rc)
		rc = db_run_set_limits(db, *run_id, run, err);
	if (!rc && sqlite3_exec(db_sqlite(db), "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = fail(db, err, "cannot store the run");
	if (rc)
		sqlite3_exec(db_sqlite(db), "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int db_run_heartbeat(struct db *db, int64_t run_id)
{
	char now[32];
	db_now(now);
	return exec_run(db, "UPDATE runs SET heartbeat_at = ?2 WHERE id = ?1", run_id, now);
}

/* Seconds since an ISO 8601 UTC time ("2026-11-21T13:45:01.123Z"), negative for a time ahead of
 * this host's clock; -INFINITY when it does not parse. */
static double age_s(const char *iso)
{
	double at = db_iso_seconds(iso);
	return isnan(at) ? -INFINITY : difftime(time(NULL), (time_t)at);
}

/* A process pid on this host that is a runner (a pid reused by another program is not; nor is
 * this process: a container with a fixed host name starts its runner with the same pid each
 * time, so a resume or close there met its own pid and took itself for the run's runner). */
static int runner_alive(int64_t pid)
{
	if (pid <= 0 || pid > INT32_MAX || pid == (int64_t)getpid() ||
	    (kill((pid_t)pid, 0) != 0 && errno != EPERM))
		return 0;
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%lld/comm", (long long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;   /* no /proc: the pid exists, take it for alive */
	int ok = fgets(comm, sizeof(comm), f) != NULL;
	fclose(f);
	return !ok || !strncmp(comm, "runner", 6);
}

int db_run_liveness(struct db *db, int64_t run_id, char *why, size_t n)
{
	int live = RUN_LIVENESS_UNKNOWN;
	sqlite3_stmt *st = NULL;
	if (why && n)
		why[0] = '\0';
	if (sqlite3_prepare_v2(db_sqlite(db),
			       "SELECT status, host, pid, heartbeat_at FROM runs WHERE id = ?1", -1,
			       &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 1, run_id) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		goto done;
	const char *status = (const char *)sqlite3_column_text(st, 0);
	const char *host = (const char *)sqlite3_column_text(st, 1);
	int64_t pid = sqlite3_column_int64(st, 2);
	const char *beat = (const char *)sqlite3_column_text(st, 3);
	if (!status || strcmp(status, "running")) {
		live = RUN_LIVENESS_ENDED;
		goto done;
	}
	if (!host)
		goto done;   /* stored before schema 7: cannot tell */
	char here[256];
	db_this_host(here);
	if (!strcmp(host, here)) {
		live = runner_alive(pid) ? RUN_LIVENESS_ALIVE : RUN_LIVENESS_DEAD;
		if (why && live == RUN_LIVENESS_DEAD)
			snprintf(why, n, "its runner (pid %lld on %s) is gone", (long long)pid, host);
		else if (why)
			snprintf(why, n, "its runner (pid %lld on %s) is alive", (long long)pid, host);
	} else if (!beat || age_s(beat) < -HEARTBEAT_STALE_S) {
		/* unreadable, or further ahead than any clock of a cluster should be */
		if (why)
			snprintf(why, n, "its runner on %s left no heartbeat this host can use (%s)",
				 host, beat ? beat : "none");
	} else {
		/* a heartbeat a little in the future: that host's clock is ahead of this one's, and
		 * the runner beat just now */
		double age = age_s(beat);
		live = age > HEARTBEAT_STALE_S ? RUN_LIVENESS_DEAD : RUN_LIVENESS_ALIVE;
		if (why && age < 0)
			snprintf(why, n, "its runner on %s said it was alive at %s, %.0f s ahead of this "
				 "host's clock", host, beat, -age);
		else if (why)
			snprintf(why, n, "its runner on %s last said it was alive %.0f s ago", host, age);
	}
done:
	sqlite3_finalize(st);
	return live;
}

int db_run_close(struct db *db, int64_t run_id, struct bd_error *err)
{
	char now[32];
	db_now(now);
	int rc = exec_run(db,
			  "UPDATE runs SET status = 'interrupted', ended_at = coalesce(heartbeat_at, ?2) "
			  "WHERE id = ?1 AND status = 'running'",
			  run_id, now);
	return rc == SQLITE_OK ? 0 : fail(db, err, "cannot close the run");
}

int db_run_takeover_begin(struct db *db, struct bd_error *err)
{
	if (sqlite3_exec(db_sqlite(db), "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return fail(db, err, "cannot lock the database to take the run over");
	return 0;
}

int db_run_takeover_end(struct db *db, int commit, struct bd_error *err)
{
	if (commit && sqlite3_exec(db_sqlite(db), "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		int rc = fail(db, err, "cannot commit taking the run over");
		sqlite3_exec(db_sqlite(db), "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if (!commit)
		sqlite3_exec(db_sqlite(db), "ROLLBACK", NULL, NULL, NULL);
	return 0;
}

int db_run_reopen(struct db *db, int64_t run_id, struct bd_error *err)
{
	int rc = exec_run(db, "UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?1",
			  run_id, NULL);
	if (rc != SQLITE_OK)
		return fail(db, err, "cannot reopen the run");
	return db_run_liveness_set(db, run_id, err);
}

int db_run_stored_ords(struct db *db, int64_t run_id, unsigned char *stored, size_t n,
		       size_t *count, size_t counts[STATUS_COUNT], struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db_sqlite(db), "SELECT ord, status FROM cases WHERE run_id = ?1",
				    -1, &st, NULL);
	*count = 0;
	memset(stored, 0, n);
	memset(counts, 0, STATUS_COUNT * sizeof(*counts));
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	while (rc == SQLITE_OK) {
		int s = sqlite3_step(st);
		if (s == SQLITE_DONE)
			break;
		if (s != SQLITE_ROW) {
			rc = s;
			break;
		}
		int64_t ord = sqlite3_column_int64(st, 0);
		int status = status_parse((const char *)sqlite3_column_text(st, 1));
		if (ord >= 0 && (uint64_t)ord < n && !stored[ord]) {
			stored[ord] = 1;
			(*count)++;
			counts[status < 0 ? STATUS_ERROR : status]++;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : fail(db, err, "cannot read the run's stored cases");
}
