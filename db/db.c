/* db/db.c: SQLite access for benchdb — open, migrate, write, and the named read queries. */
#include "db.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_internal.h"
#include "db_readonly.h"
#include "db_untrusted.h"
#include "params.h"
#include "sha256.h"
#include "strbuf.h"
#include "xalloc.h"

extern const char *const schema_migrations[];
extern const int schema_migration_count;

struct db {
	sqlite3 *handle;
	char *path;
	int version;
	sqlite3_stmt *samples_stmt;   /* db_samples_get's query, prepared once (reports read thousands) */
	int busy_ms;                  /* how long a lock wait may last (busy_wait) */
	int64_t busy_since_ms;        /* when the current lock wait began */
};

/* Milliseconds a connection waits, retrying, for another process's lock — at open too — before
 * it gives up (db_set_default_busy_timeout; runner's --busy-timeout). */
static int busy_timeout_ms = DB_BUSY_TIMEOUT_DEFAULT_S * 1000;

int db_schema_latest(void) { return schema_migration_count; }

int db_schema_version(struct db *db) { return db->version; }

sqlite3 *db_sqlite(struct db *db) { return db->handle; }

const char *db_file(struct db *db) { return db->path; }

void db_set_busy_timeout(struct db *db, int ms) { db->busy_ms = ms; }

/* Lock waits a pending stop signal ends (db_busy_interruptible), and whether one did. */
static int busy_interruptible;
static volatile sig_atomic_t busy_stopped;

void db_busy_interruptible(int on)
{
	busy_interruptible = on;
	if (on)
		busy_stopped = 0;
}

int db_busy_stopped(void) { return busy_stopped; }

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A stop signal (interrupt, terminate, hang-up) that this process holds pending: `runner run`
 * blocks them from its start and takes them at its own points (measure_hold_signals), so while
 * it waits for a lock they are pending, not handled. */
static int stop_signal_pending(void)
{
	sigset_t set;
	if (!busy_interruptible || sigpending(&set))
		return 0;
	if (sigismember(&set, SIGINT) == 1 || sigismember(&set, SIGTERM) == 1 ||
	    sigismember(&set, SIGHUP) == 1)
		busy_stopped = 1;
	return busy_stopped;
}

/* SQLite's busy handler: wait for another process's lock, up to db->busy_ms from the wait's
 * first retry, in sleeps of 1 ms growing to 100 ms — and give up at once on a pending stop signal
 * where db_busy_interruptible allows it (before a run has stored anything: Ctrl-C while another
 * process held the lock was ignored for the whole busy timeout, an hour by default). */
static int busy_wait(void *arg, int count)
{
	struct db *db = arg;
	int64_t now = monotonic_ms();
	if (count == 0)
		db->busy_since_ms = now;
	if (stop_signal_pending())
		return 0;
	int64_t left = db->busy_since_ms + db->busy_ms - now;
	if (left <= 0)
		return 0;
	int64_t pause = count < 7 ? (int64_t)1 << count : 100;   /* 1, 2, 4 ... 64, then 100 ms */
	if (pause > 100)
		pause = 100;
	if (pause > left)
		pause = left;
	struct timespec ts = {(time_t)(pause / 1000), (long)(pause % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	return 1;
}

int db_set_default_busy_timeout(long seconds)
{
	if (seconds < 0 || seconds > DB_BUSY_TIMEOUT_MAX_S)
		return BD_EINVAL;
	busy_timeout_ms = (int)(seconds * 1000);
	return 0;
}

void db_now(char out[32])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* what failed, and why: SQLite's message, or rc's when SQLite saw no error (an allocation of
 * ours, a row that a trigger or constraint silently refused) — never "not an error". */
static int sql_fail(struct db *db, struct bd_error *err, const char *what, int rc)
{
	return bd_fail_at(err, BD_EDB, db->path, 0, 0, "%s: %s", what,
			  sqlite3_errcode(db->handle) != SQLITE_OK ? sqlite3_errmsg(db->handle)
				: sqlite3_errstr(rc != SQLITE_OK ? rc : SQLITE_ERROR));
}

static int exec(struct db *db, const char *sql, struct bd_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(db->handle, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = bd_fail_at(err, BD_EDB, db->path, 0, 0, "%s", msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

/* ---- sticky statement helpers (SQLite shell's shellPrepare/shellFinalize pattern) ---------- */

/* Each helper does nothing once *rc is set, so a chain reads straight down with one check. */
static sqlite3_stmt *prepare(struct db *db, int *rc, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (*rc == SQLITE_OK)
		*rc = sqlite3_prepare_v2(db->handle, sql, -1, &st, NULL);
	return st;
}

static void bind_text(sqlite3_stmt *st, int *rc, int i, const char *s)
{
	if (*rc != SQLITE_OK)
		return;
	*rc = (s && s[0]) ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static void bind_i64(sqlite3_stmt *st, int *rc, int i, int64_t v)
{
	if (*rc == SQLITE_OK)
		*rc = sqlite3_bind_int64(st, i, v);
}

/* v <= null_below is stored as NULL. */
static void bind_i64_or_null(sqlite3_stmt *st, int *rc, int i, int64_t v, int64_t null_below)
{
	if (*rc == SQLITE_OK)
		*rc = v <= null_below ? sqlite3_bind_null(st, i) : sqlite3_bind_int64(st, i, v);
}

static void bind_double_or_null(sqlite3_stmt *st, int *rc, int i, double v, int null_if_negative)
{
	if (*rc == SQLITE_OK)
		*rc = (null_if_negative && v < 0) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

/* Step a statement that returns no rows, then reset it for reuse. */
static void step_done(sqlite3_stmt *st, int *rc)
{
	if (*rc != SQLITE_OK)
		return;
	int s = sqlite3_step(st);
	*rc = s == SQLITE_DONE ? SQLITE_OK : s;
	sqlite3_reset(st);
}

static void finalize(sqlite3_stmt *st, int *rc)
{
	int f = sqlite3_finalize(st);
	if (*rc == SQLITE_OK)
		*rc = f;
}

static int ids_for(struct db *db, const char *sql, const char *arg, int64_t ids[2], int *n);

/* ---- open and migrate ----------------------------------------------------------------------- */

static int read_version(struct db *db, int *version, struct bd_error *err)
{
	int rc = SQLITE_OK;
	sqlite3_stmt *st = prepare(db, &rc, "PRAGMA user_version");
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*version = sqlite3_column_int(st, 0);
	finalize(st, &rc);
	return rc == SQLITE_OK ? 0 : sql_fail(db, err, "cannot read the schema version", rc);
}

/* Apply migrations version+1..latest, each with its user_version (the number in its file name; a
 * number no file has is skipped: db/embed_sql.cmake), all in one transaction: a step that fails,
 * or an interruption, leaves the file as it was, at the version an older benchdb still reads. */
static int migrate(struct db *db, struct bd_error *err)
{
	int rc = 0, target = 0, now = 0;
	if (db->version >= schema_migration_count)
		return 0;
	if ((rc = exec(db, "BEGIN IMMEDIATE", err)))
		return rc;
	/* Re-read inside the write lock: another process may have migrated meanwhile. */
	if ((rc = read_version(db, &now, err)))
		goto fail;
	for (int v = now; v < schema_migration_count; v++) {
		if (!schema_migrations[v])
			continue;
		target = v + 1;
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d;", v + 1);
		if ((rc = exec(db, schema_migrations[v], err)) || (rc = exec(db, pragma, err)))
			goto fail;
	}
	if ((rc = exec(db, "COMMIT", err)))
		goto fail;
	db->version = schema_migration_count;
	return 0;
fail:
	exec(db, "ROLLBACK", NULL);
	{
		char msg[sizeof(err->msg)];
		snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
		if (!target)   /* the lock or the version, before any step */
			return bd_fail_at(err, BD_EDB, db->path, 0, 0, "cannot migrate it: %s", msg);
		return bd_fail_at(err, BD_EDB, db->path, 0, 0, "migration to schema %d failed: %s; "
				  "the file is left at schema %d, as it was", target, msg, now);
	}
}

/* benchdb's tables with some of their columns: a file with a schema version must have them
 * before anything is changed in it (another application's SQLite file may set user_version too). */
static const struct {
	const char *table;
	const char *columns[4];
} benchdb_shape[] = {
	{"systems", {"fingerprint", "hostname", "first_seen", "cpu_model"}},
	{"runs", {"uuid", "system_id", "status", "sweep_hash"}},
	{"cases", {"run_id", "ord", "case_key", "status"}},
	{"samples", {"case_id", "phase", "iter", "ns"}},
};

/* 0 when the open file has benchdb's tables; else BD_EDB with what it lacks (or, for a file
 * SQLite cannot read, why), naming the file. */
static int check_benchdb_tables(struct db *db, struct bd_error *err)
{
	for (size_t t = 0; t < sizeof(benchdb_shape) / sizeof(benchdb_shape[0]); t++) {
		int rc = SQLITE_OK, found = 0;
		sqlite3_stmt *st = prepare(db, &rc,
			"SELECT count(*) FROM sqlite_master m, pragma_table_info(m.name, 'main') c "
			"WHERE m.type = 'table' AND m.name = ?1 AND c.name IN (?2, ?3, ?4, ?5)");
		bind_text(st, &rc, 1, benchdb_shape[t].table);
		for (int c = 0; c < 4; c++)
			bind_text(st, &rc, c + 2, benchdb_shape[t].columns[c]);
		if (rc == SQLITE_OK) {
			int s = sqlite3_step(st);
			if (s == SQLITE_ROW)
				found = sqlite3_column_int(st, 0) == 4;
			else
				rc = s;
		}
		finalize(st, &rc);
		if (rc != SQLITE_OK)
			return sql_fail(db, err, "cannot read its schema", rc);
		if (!found)
			return bd_fail_at(err, BD_EDB, db->path, 0, 0,
					  "not a benchdb database: schema version %d, but no benchdb "
					  "table '%s' (another application's SQLite file?); left as it was",
					  db->version, benchdb_shape[t].table);
	}
	return 0;
}

/* Why path cannot be opened for writing, when its modes or its file system say so: " (...)", or
 * "" (SQLite writes a journal, or the -wal and -shm files, beside the database, so its directory
 * must be writable too; `report` reads it through a private copy instead). */
static const char *unwritable_why(const char *path)
{
	static char why[256];
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return " (it is a directory)";
	if (access(path, W_OK) != 0) {
		snprintf(why, sizeof(why), " (the file is read-only: %s)", strerror(errno));
		return why;
	}
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';   /* "/x.db": "/" */
	int dir_ok = access(slash ? dir : ".", W_OK) == 0;
	snprintf(why, sizeof(why), " (its directory is read-only: %s; SQLite writes its journal, "
		 "-wal and -shm files beside the database)", strerror(errno));
	free(dir);
	return dir_ok ? "" : why;
}

/* WAL mode, foreign keys, NORMAL sync. Two processes that open a rollback-journal file at once
 * both hold a read lock and want the write lock to switch it: SQLite answers one of them BUSY at
 * once, without its busy handler (the other would deadlock), so retry that within the busy
 * timeout. */
static int set_wal_mode(struct db *db, struct bd_error *err)
{
	int waited_ms = 0, pause_ms = 5;
	for (;;) {
		int rc = sqlite3_exec(db->handle, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; "
					"PRAGMA synchronous = NORMAL;", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return 0;
		if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN)
			return bd_fail_at(err, BD_EDB, db->path, 0, 0, "cannot switch it to WAL mode: %s%s",
					  sqlite3_errmsg(db->handle), unwritable_why(db->path));
		if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= db->busy_ms || stop_signal_pending())
			return sql_fail(db, err, "cannot switch it to WAL mode", rc);
		struct timespec ts = {0, pause_ms * 1000000L};
		nanosleep(&ts, NULL);
		waited_ms += pause_ms;
		pause_ms = pause_ms < 100 ? 2 * pause_ms : 100;
	}
}

int db_open(const char *path, unsigned flags, struct db **out, struct bd_error *err)
{
	int rc = 0;
	struct db *db = xcalloc(1, sizeof(*db));
	*out = NULL;
	db->path = xstrdup(path);
	struct stat sb;
	/* SQLite takes "" for a private temporary database and ":memory:" for one in memory, both
	 * gone when closed: a run or a merge written there (`--db "$UNSET"`) would be lost whole */
	if (!*path || !strcmp(path, ":memory:")) {
		rc = bd_fail(err, BD_EINVAL, "database path '%s' names no file (SQLite would keep that "
			     "database only until the command ends): give a file's path", path);
		goto done;
	}
	if (flags & DB_READONLY) {
		if ((rc = db_readonly_open(path, &db->handle, err)))
			goto done;
	} else if (!(flags & DB_CREATE) && stat(path, &sb) != 0) {
		rc = bd_fail_at(err, BD_ENOTFOUND, path, 0, 0,
				"no such database (run `runner run SWEEP.yaml` first, or pass --db PATH)");
		goto done;
	}
	int oflags = SQLITE_OPEN_READWRITE | (flags & DB_CREATE ? SQLITE_OPEN_CREATE : 0);
	if (!db->handle && sqlite3_open_v2(path, &db->handle, oflags, NULL) != SQLITE_OK) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0, "cannot open database: %s",
				db->handle ? sqlite3_errmsg(db->handle) : "out of memory");
		goto done;
	}
	db->busy_ms = busy_timeout_ms;
	sqlite3_busy_handler(db->handle, busy_wait, db);
	sqlite3_extended_result_codes(db->handle, 1);
	/* A file that is not a database fails on its first read: say so plainly. */
	if ((rc = read_version(db, &db->version, err))) {
		int code = sqlite3_errcode(db->handle) & 0xff;
		if ((code == SQLITE_BUSY || code == SQLITE_LOCKED) && busy_stopped)
			rc = bd_fail_at(err, BD_EINTR, path, 0, 0, "stopped by a signal while waiting "
					"for another process's lock on it; nothing was written");
		else if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
			rc = bd_fail_at(err, BD_EDB, path, 0, 0, "cannot read it: another process has "
					"held its lock for the whole busy timeout (%d s; --busy-timeout)",
					busy_timeout_ms / 1000);
		else if (sqlite3_extended_errcode(db->handle) == SQLITE_READONLY_ROLLBACK)
			rc = bd_fail_at(err, BD_EDB, path, 0, 0, "a writer stopped in the middle of a "
					"transaction left its rollback journal (%s-journal), which only a "
					"writer may roll back: open it once with `runner migrate --db %s`, "
					"then read it", path, path);
		else if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT || (flags & DB_READONLY))
			rc = bd_fail_at(err, BD_EDB, path, 0, 0, "not a benchdb database: %s",
					sqlite3_errmsg(db->handle));
		else   /* a database it cannot open for writing is no foreign file: say why */
			rc = bd_fail_at(err, BD_EDB, path, 0, 0, "cannot open it for writing: %s%s",
					sqlite3_errmsg(db->handle), unwritable_why(path));
		goto done;
	}
	if (db->version < 0 || (db->version == 0 && (flags & DB_READONLY))) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0,
				"not a benchdb database: schema version %d%s", db->version,
				db->version == 0 ? " (no benchdb schema)" : "");
		goto done;
	}
	/* Version 0 is a new file; one that already has tables belongs to someone else. The version
	 * is read again with the count, in one snapshot: another runner that created the file
	 * meanwhile committed its tables together with their version, and is no foreign file. */
	if (db->version == 0) {
		int64_t objects = 0;
		int s = SQLITE_OK;
		sqlite3_stmt *st = prepare(db, &s, "SELECT (SELECT user_version FROM pragma_user_version), "
						   "(SELECT count(*) FROM sqlite_master)");
		if (s == SQLITE_OK) {
			int step = sqlite3_step(st);
			if (step == SQLITE_ROW) {
				db->version = sqlite3_column_int(st, 0);
				objects = sqlite3_column_int64(st, 1);
			} else if (step != SQLITE_DONE) {
				s = step;
			}
		}
		finalize(st, &s);
		if (s != SQLITE_OK) {
			rc = sql_fail(db, err, "cannot read the schema", s);
			goto done;
		}
		if (db->version == 0 && objects > 0) {
			rc = bd_fail_at(err, BD_EDB, path, 0, 0,
					"not a benchdb database: it holds %lld other objects and no benchdb "
					"schema version",
					(long long)objects);
			goto done;
		}
	}
	if (db->version > schema_migration_count) {
		rc = bd_fail_at(err, BD_EVERSION, path, 0, 0,
				"database schema version %d is newer than this benchdb supports (%d); "
				"use a newer benchdb",
				db->version, schema_migration_count);
		goto done;
	}
	/* identified before anything is changed: no WAL switch, no migration */
	if (db->version > 0 && (rc = check_benchdb_tables(db, err)))
		goto done;
	if (flags & DB_READONLY) {
		if ((rc = db_readonly_shim(db->handle, path, db->version, err)) ||
		    (rc = db_group_init(db, err)))
			goto done;
		*out = db;
		return 0;
	}
	if ((rc = set_wal_mode(db, err)))
		goto done;
	if ((rc = migrate(db, err)) || (rc = db_group_init(db, err)))
		goto done;
	*out = db;
	db = NULL;
done:
	db_close(db);
	return rc;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	sqlite3_finalize(db->samples_stmt);
	/* Move what the WAL holds into the file now (passive: never waits for another writer), so
	 * that a copy of the file alone — `cp` of a shard's database by runner slurm's script — has
	 * every stored case even if the close below cannot checkpoint (another connection of this
	 * process still open, a statement left unfinalized). */
	if (db->handle && !sqlite3_db_readonly(db->handle, "main"))
		sqlite3_wal_checkpoint_v2(db->handle, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	sqlite3_close(db->handle);
	free(db->path);
	free(db);
}

/* ---- writes ------------------------------------------------------------------------------- */

void db_system_fingerprint(const struct sysinfo *si, char out[65])
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s|%s|%s|%s|%s|%d|%d|%s|%lld|%s|%d|%lld|%d|%s|%s|%s|%s|%s|%s|%s|%s|%d|%d", si->hostname,
		si->os, si->kernel, si->arch, si->cpu_model, si->cpu_cores, si->cpu_threads,
		si->cpu_flags, (long long)si->mem_bytes, si->gpu_name, si->gpu_count,
		(long long)si->gpu_mem_bytes, si->gpu_sm_count, si->gpu_cc, si->driver_version,
		si->cuda_runtime, si->cudnn_version, si->cublas_version, si->blas, si->compiler,
		si->build_flags, si->gpu_clock_mhz, si->gpu_mem_clock_mhz);
	sha256_hex(sb_str(&sb), sb.len, out);
	sb_free(&sb);
}

int db_system_put(struct db *db, const struct sysinfo *si, int64_t *id, struct bd_error *err)
{
	char fp[65], now[32];
	db_system_fingerprint(si, fp);
	db_now(now);
	int rc = SQLITE_OK;
	sqlite3_stmt *ins = prepare(db, &rc,
		"INSERT OR IGNORE INTO systems (fingerprint, hostname, os, kernel, arch, cpu_model, "
		"cpu_cores, cpu_threads, cpu_flags, mem_bytes, gpu_name, gpu_count, gpu_mem_bytes, "
		"gpu_sm_count, gpu_cc, gpu_clock_mhz, gpu_mem_clock_mhz, driver_version, cuda_runtime, "
		"cudnn_version, cublas_version, blas, compiler, build_flags, first_seen) "
		"VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,"
		"?23,?24,?25)");
	bind_text(ins, &rc, 1, fp);
	bind_text(ins, &rc, 2, si->hostname[0] ? si->hostname : "unknown");
	bind_text(ins, &rc, 3, si->os);
	bind_text(ins, &rc, 4, si->kernel);
	bind_text(ins, &rc, 5, si->arch);
	bind_text(ins, &rc, 6, si->cpu_model);
	bind_i64_or_null(ins, &rc, 7, si->cpu_cores, 0);
	bind_i64_or_null(ins, &rc, 8, si->cpu_threads, 0);
	bind_text(ins, &rc, 9, si->cpu_flags);
	bind_i64_or_null(ins, &rc, 10, si->mem_bytes, 0);
	bind_text(ins, &rc, 11, si->gpu_name);
	bind_i64(ins, &rc, 12, si->gpu_count);
	bind_i64_or_null(ins, &rc, 13, si->gpu_mem_bytes, 0);
	bind_i64_or_null(ins, &rc, 14, si->gpu_sm_count, 0);
	bind_text(ins, &rc, 15, si->gpu_cc);
	bind_i64_or_null(ins, &rc, 16, si->gpu_clock_mhz, 0);
	bind_i64_or_null(ins, &rc, 17, si->gpu_mem_clock_mhz, 0);
	bind_text(ins, &rc, 18, si->driver_version);
	bind_text(ins, &rc, 19, si->cuda_runtime);
	bind_text(ins, &rc, 20, si->cudnn_version);
	bind_text(ins, &rc, 21, si->cublas_version);
	bind_text(ins, &rc, 22, si->blas);
	bind_text(ins, &rc, 23, si->compiler);
	bind_text(ins, &rc, 24, si->build_flags);
	bind_text(ins, &rc, 25, now);
	step_done(ins, &rc);
	finalize(ins, &rc);
	sqlite3_stmt *sel = prepare(db, &rc, "SELECT id FROM systems WHERE fingerprint = ?1");
	bind_text(sel, &rc, 1, fp);
	if (rc == SQLITE_OK) {
		if (sqlite3_step(sel) == SQLITE_ROW)
			*id = sqlite3_column_int64(sel, 0);
		else   /* the insert was ignored: a trigger or a constraint of this file */
			rc = SQLITE_CONSTRAINT;
	}
	finalize(sel, &rc);
	return rc == SQLITE_OK ? 0 : sql_fail(db, err, "cannot store system info", rc);
}

int db_run_begin(struct db *db, int64_t system_id, const struct run_record *run, int64_t *run_id,
		 struct bd_error *err)
{
	int rc = SQLITE_OK;
	sqlite3_stmt *st = prepare(db, &rc,
		"INSERT INTO runs (uuid, system_id, started_at, status, git_commit, git_dirty, git_branch, "
		"tool_version, command_line, sweep_path, sweep_name, sweep_text, sweep_hash, label, env) "
		"VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
	bind_text(st, &rc, 1, run->uuid);
	bind_i64(st, &rc, 2, system_id);
	bind_text(st, &rc, 3, run->started_at);
	bind_text(st, &rc, 4, run->git_commit);
	bind_i64_or_null(st, &rc, 5, run->git_dirty, -1);
	bind_text(st, &rc, 6, run->git_branch);
	bind_text(st, &rc, 7, run->tool_version);
	bind_text(st, &rc, 8, run->command_line);
	bind_text(st, &rc, 9, run->sweep_path);
	bind_text(st, &rc, 10, run->sweep_name);
	bind_text(st, &rc, 11, run->sweep_text);
	bind_text(st, &rc, 12, run->sweep_hash);
	bind_text(st, &rc, 13, run->label);
	bind_text(st, &rc, 14, run->env_json);
	step_done(st, &rc);
	finalize(st, &rc);
	if (rc != SQLITE_OK)
		return sql_fail(db, err, "cannot store the run", rc);
	*run_id = sqlite3_last_insert_rowid(db->handle);
	return db_run_set_group(db, *run_id, run, err);
}

int db_run_end(struct db *db, int64_t run_id, const char *status, struct bd_error *err)
{
	char now[32];
	db_now(now);
	int rc = SQLITE_OK;
	sqlite3_stmt *st = prepare(db, &rc, "UPDATE runs SET status = ?1, ended_at = ?2 WHERE id = ?3");
	bind_text(st, &rc, 1, status);
	bind_text(st, &rc, 2, now);
	bind_i64(st, &rc, 3, run_id);
	step_done(st, &rc);
	int primary = rc & 0xff;
	if (primary == SQLITE_IOERR || primary == SQLITE_FULL) {
		/* the -wal could not grow (a file-size limit, a full disk): move it into the file and
		 * write the run's end at its start, once */
		sqlite3_wal_checkpoint_v2(db->handle, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		rc = SQLITE_OK;
		step_done(st, &rc);
	}
	finalize(st, &rc);
	return rc == SQLITE_OK ? 0 : sql_fail(db, err, "cannot finish the run", rc);
}

/* The INSERT of one case into sql: the columns of struct case_record in db_case_put's binding
 * order, then the parameters' typed columns (common/params.h), whose names go to typed. Returns
 * how many typed columns. */
static size_t case_insert_sql(struct strbuf *sql, const char **typed)
{
	size_t ntyped = param_db_columns(typed, PARAM_MAX), n = 0;
	sb_add(sql, "INSERT INTO cases (run_id, ord, params, case_key, name, warmup, iters, status, "
	       "reason, max_diff, tolerance, mem_limit, param_bytes, peak_fwd_bytes, peak_bwd_bytes, "
	       "peak_bytes");
	n = 16;
	for (int p = 0; p < PHASE_COUNT; p++, n++)
		sb_addf(sql, ", flops_%s", phase_name((enum bd_phase)p));
	for (int p = 0; p < PHASE_COUNT; p++, n++)
		sb_addf(sql, ", bytes_%s", phase_name((enum bd_phase)p));
	sb_add(sql, ", started_at, elapsed_ns, grad_bytes, optim_bytes, activation_bytes, "
	       "workspace_bytes, param_count, impl_info, stop_reason, cpu_wait, rse");
	n += 11;
	for (size_t k = 0; k < ntyped; k++, n++)
		sb_addf(sql, ", %s", typed[k]);
	sb_add(sql, ") VALUES (");
	for (size_t k = 1; k <= n; k++)
		sb_addf(sql, "%s?%zu", k > 1 ? "," : "", k);
	sb_addc(sql, ')');
	return ntyped;
}

int db_case_put(struct db *db, int64_t run_id, const struct case_record *c,
		const struct sample *samples, size_t nsamples, struct bd_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < nsamples; i++)
		if (samples[i].phase < 0 || samples[i].phase >= PHASE_COUNT)
			return bd_fail_at(err, BD_EINVAL, db->path, 0, 0,
					  "cannot store case '%s': sample %zu has phase %d (not fwd, bwd or opt)",
					  c->name, i, (int)samples[i].phase);
	struct strbuf sql = STRBUF_INIT;
	const char *typed[PARAM_MAX];
	size_t ntyped = case_insert_sql(&sql, typed);
	if ((rc = exec(db, "BEGIN IMMEDIATE", err))) {
		sb_free(&sql);
		return rc;
	}
	rc = SQLITE_OK;
	sqlite3_stmt *st = prepare(db, &rc, sb_str(&sql));
	sb_free(&sql);
	int i = 1;   /* in case_insert_sql's order */
	bind_i64(st, &rc, i++, run_id);
	bind_i64(st, &rc, i++, c->ord);
	bind_text(st, &rc, i++, c->params_json);
	bind_text(st, &rc, i++, c->case_key);
	bind_text(st, &rc, i++, c->name);
	bind_i64(st, &rc, i++, c->warmup);
	bind_i64(st, &rc, i++, c->iters);
	bind_text(st, &rc, i++, status_name(c->status));
	bind_text(st, &rc, i++, c->reason);
	bind_double_or_null(st, &rc, i++, c->max_diff, 1);
	bind_double_or_null(st, &rc, i++, c->tolerance, 1);
	bind_i64_or_null(st, &rc, i++, c->mem_limit, 0);
	bind_i64_or_null(st, &rc, i++, c->param_bytes, -1);
	bind_i64_or_null(st, &rc, i++, c->peak_fwd_bytes, -1);
	bind_i64_or_null(st, &rc, i++, c->peak_bwd_bytes, -1);
	bind_i64_or_null(st, &rc, i++, c->peak_bytes, -1);
	for (int p = 0; p < PHASE_COUNT; p++)
		bind_double_or_null(st, &rc, i++, c->flops[p], 1);
	for (int p = 0; p < PHASE_COUNT; p++)
		bind_double_or_null(st, &rc, i++, c->bytes[p], 1);
	bind_text(st, &rc, i++, c->started_at);
	bind_i64(st, &rc, i++, c->elapsed_ns);
	const int64_t breakdown[] = {c->grad_bytes, c->optim_bytes, c->activation_bytes,
				     c->workspace_bytes};
	for (int k = 0; k < 4; k++)
		bind_i64_or_null(st, &rc, i++, breakdown[k] > 0 ? breakdown[k] : -1, -1);
	bind_i64_or_null(st, &rc, i++, c->param_count > 0 ? c->param_count : -1, -1);
	bind_text(st, &rc, i++, c->impl_info);   /* "" and NULL: NULL */
	bind_text(st, &rc, i++, c->stop_reason);
	bind_double_or_null(st, &rc, i++, c->cpu_wait, 1);
	bind_double_or_null(st, &rc, i++, c->rse > 0 && isfinite(c->rse) ? c->rse : -1, 1);
	for (size_t k = 0; k < ntyped; k++) {   /* the parameters' typed columns */
		char buf[64];
		int is_text;
		const char *v = c->params ? param_db_value(c->params, typed[k], buf, &is_text) : NULL;
		if (rc != SQLITE_OK)
			break;
		if (!v)
			rc = sqlite3_bind_null(st, i);
		else if (is_text)
			bind_text(st, &rc, i, v);
		else
			bind_i64(st, &rc, i, strtoll(v, NULL, 10));
		i++;
	}
	step_done(st, &rc);
	finalize(st, &rc);
	if (rc == SQLITE_OK && sqlite3_changes(db->handle) != 1)
		rc = SQLITE_CONSTRAINT;   /* ignored (a trigger of this file): its samples go nowhere */
	int64_t case_id = sqlite3_last_insert_rowid(db->handle);
	sqlite3_stmt *ins = prepare(db, &rc, "INSERT INTO samples (case_id, phase, iter, ns) "
					     "VALUES (?1, ?2, ?3, ?4)");
	for (size_t i = 0; i < nsamples && rc == SQLITE_OK; i++) {
		const struct sample *s = &samples[i];
		bind_i64(ins, &rc, 1, case_id);
		bind_text(ins, &rc, 2, phase_name(s->phase));
		bind_i64(ins, &rc, 3, s->iter);
		bind_i64(ins, &rc, 4, s->ns);
		step_done(ins, &rc);
	}
	finalize(ins, &rc);
	if (rc != SQLITE_OK) {
		int r = sql_fail(db, err, "cannot store the case", rc);
		exec(db, "ROLLBACK", NULL);
		return r;
	}
	if ((rc = sqlite3_exec(db->handle, "COMMIT", NULL, NULL, NULL)) != SQLITE_OK) {
		int r = sql_fail(db, err, "cannot store the case", rc);
		exec(db, "ROLLBACK", NULL);
		return r;
	}
	return 0;
}

/* ---- reads -------------------------------------------------------------------------------- */

/* Step st to its end, appending one element of `size` bytes per row to *items (read fills it).
 * Sticky like the helpers above: sets *rc on the first failure. */
static void collect(sqlite3_stmt *st, int *rc, void **items, size_t *count, size_t size,
		    void (*read)(sqlite3_stmt *st, void *item))
{
	size_t alloc = *count;
	while (*rc == SQLITE_OK) {
		int s = sqlite3_step(st);
		if (s == SQLITE_DONE)
			break;
		if (s != SQLITE_ROW) {
			*rc = s;
			break;
		}
		if (*count == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			*items = xrealloc(*items, alloc * size);
		}
		read(st, (char *)*items + (*count)++ * size);
	}
}

static char *col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}


/* cases.status is one of vocab.h's names (001_init.sql checks it); anything else reads as error. */
static enum bd_status col_status(sqlite3_stmt *st, int i)
{
	int s = status_parse((const char *)sqlite3_column_text(st, i));
	return s < 0 ? STATUS_ERROR : (enum bd_status)s;
}

static double col_double(sqlite3_stmt *st, int i, double if_null)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? if_null : sqlite3_column_double(st, i);
}

/* The cases of run r: its own, and when r stands for a group (group.c), its members'. */
#define RUN_SCOPE                                                                                \
	"(c.run_id = r.id OR c.run_id IN (SELECT member FROM temp.run_scope WHERE rep = r.id))"
#define RUN_COLUMNS                                                                              \
	"r.id, r.uuid, r.started_at, r.ended_at, r.status, r.git_commit, r.git_dirty, r.git_branch, " \
	"r.label, r.sweep_path, r.sweep_name, r.sweep_hash, r.command_line, r.tool_version, "        \
	"r.system_id, y.hostname, "                                                                  \
	"(SELECT count(*) FROM cases c WHERE " RUN_SCOPE "), "                                       \
	"(SELECT count(*) FROM cases c WHERE " RUN_SCOPE " AND c.status = 'ok'), "                  \
	"r.group_id, r.shard_index, r.shard_count "                                                  \
	"FROM runs r JOIN systems y ON y.id = r.system_id "

static void run_row_read(sqlite3_stmt *st, struct run_row *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->uuid = col_strdup(st, 1);
	r->started_at = col_strdup(st, 2);
	r->ended_at = col_strdup(st, 3);
	r->status = col_strdup(st, 4);
	r->git_commit = col_strdup(st, 5);
	r->git_dirty = (int)db_col_i64(st, 6, -1);
	r->git_branch = col_strdup(st, 7);
	r->label = col_strdup(st, 8);
	r->sweep_path = col_strdup(st, 9);
	r->sweep_name = col_strdup(st, 10);
	r->sweep_hash = col_strdup(st, 11);
	r->command_line = col_strdup(st, 12);
	r->tool_version = col_strdup(st, 13);
	r->system_id = sqlite3_column_int64(st, 14);
	r->hostname = col_strdup(st, 15);
	r->ncases = sqlite3_column_int64(st, 16);
	r->nok = sqlite3_column_int64(st, 17);
	r->group_id = col_strdup(st, 18);
	r->shard_index = db_col_i64(st, 19, 0);
	r->shard_count = db_col_i64(st, 20, 0);
}

static void run_row_read_any(sqlite3_stmt *st, void *item)
{
	run_row_read(st, item);
	db_run_row_untrusted(item);
}

void db_run_row_clear(struct run_row *r)
{
	free(r->uuid); free(r->started_at); free(r->ended_at); free(r->status);
	free(r->git_commit); free(r->git_branch); free(r->label); free(r->sweep_path);
	free(r->sweep_name); free(r->sweep_hash); free(r->command_line); free(r->tool_version);
	free(r->hostname); free(r->group_id);
}

void db_run_rows_free(struct run_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		db_run_row_clear(&rows[i]);
	free(rows);
}

static int cmp_run_id(const void *key, const void *elem)
{
	int64_t id = *(const int64_t *)key, have = ((const struct run_row *)elem)->id;
	return (id > have) - (id < have);
}

const struct run_row *db_run_find(const struct run_row *runs, size_t n, int64_t id)
{
	return runs ? bsearch(&id, runs, n, sizeof(*runs), cmp_run_id) : NULL;
}

int db_text_same(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

int db_run_same_code(const struct run_row *a, const struct run_row *b)
{
	return a->git_dirty == b->git_dirty && db_text_same(a->git_commit, b->git_commit) &&
	       db_text_same(a->sweep_hash, b->sweep_hash);
}

double db_iso_seconds(const char *iso)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
		return NAN;
	return (double)timegm(&tm);
}

int db_run_time_cmp(const struct run_row *a, const struct run_row *b)
{
	int c = strcmp(a->started_at ? a->started_at : "", b->started_at ? b->started_at : "");
	return c ? c : (a->id > b->id) - (a->id < b->id);
}

int db_runs_list(struct db *db, struct run_row **rows, size_t *n, struct bd_error *err)
{
	int rc = SQLITE_OK;
	struct run_row *out = NULL;
	size_t count = 0;
	sqlite3_stmt *st = prepare(db, &rc, "SELECT " RUN_COLUMNS "ORDER BY r.id");
	collect(st, &rc, (void **)&out, &count, sizeof(*out), run_row_read_any);
	finalize(st, &rc);
	if (rc != SQLITE_OK) {
		db_run_rows_free(out, count);
		return sql_fail(db, err, "cannot list runs", rc);
	}
	*rows = out;
	*n = count;
	return 0;
}

int db_run_get(struct db *db, int64_t run_id, struct run_row *out, struct bd_error *err)
{
	int rc = SQLITE_OK, found = 0;
	sqlite3_stmt *st = prepare(db, &rc, "SELECT " RUN_COLUMNS "WHERE r.id = ?1");
	bind_i64(st, &rc, 1, run_id);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		run_row_read_any(st, out);
		found = 1;
	}
	finalize(st, &rc);
	if (rc != SQLITE_OK)
		return sql_fail(db, err, "cannot read the run", rc);
	if (!found)
		return bd_fail(err, BD_ENOTFOUND, "no run with id %lld", (long long)run_id);
	/* a group of shards stands as complete only when it is its sweep once, every shard complete */
	char *gap = NULL;
	if ((rc = db_group_gap(db, run_id, &gap, err)))
		return rc;   /* *out filled: the caller's db_run_row_clear frees it */
	if (gap) {
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "not a whole group: %s", gap);
		free(out->status);
		out->status = xstrdup(sb_str(&sb));
		sb_free(&sb);
		free(gap);
	}
	return 0;
}

/* Collect the ids a query returns for one text parameter, or none when arg is NULL (at most 2:
 * enough to detect ambiguity). */
static int ids_for(struct db *db, const char *sql, const char *arg, int64_t ids[2], int *n)
{
	int rc = SQLITE_OK;
	*n = 0;
	sqlite3_stmt *st = prepare(db, &rc, sql);
	if (arg)
		bind_text(st, &rc, 1, arg);
	while (rc == SQLITE_OK && *n < 2 && sqlite3_step(st) == SQLITE_ROW)
		ids[(*n)++] = sqlite3_column_int64(st, 0);
	finalize(st, &rc);
	return rc;
}

static int is_hex(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("0123456789abcdefABCDEF-", *s))
			return 0;
	return 1;
}

int db_run_resolve(struct db *db, const char *sel, int64_t *run_id, struct bd_error *err)
{
	int64_t ids[2];
	int n = 0, rc = SQLITE_OK;
	if (!strcmp(sel, "latest")) {
		rc = ids_for(db, "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1", NULL,
			     ids, &n);
		if (rc == SQLITE_OK && n == 0)
			return bd_fail_at(err, BD_ENOTFOUND, db->path, 0, 0, "the database holds no runs");
		goto found;
	}
	char *end;
	long long v = strtoll(sel, &end, 10);
	if (*sel && !*end && v > 0) {
		rc = ids_for(db, "SELECT id FROM runs WHERE id = CAST(?1 AS INTEGER)", sel, ids, &n);
		if (rc != SQLITE_OK || n)
			goto found;
	}
	/* A label is matched exactly; the latest run carrying it wins. Latest is by start time (then
	 * id): `runner merge` stores a database's runs after those already there, so ids follow
	 * the order databases were merged in, not the order the runs were made. */
	rc = ids_for(db, "SELECT id FROM runs WHERE label = ?1 ORDER BY started_at DESC, id DESC LIMIT 1",
		     sel, ids, &n);
	if (rc != SQLITE_OK || n)
		goto found;
	/* A group id: its latest run stands for all of its shards (group.c) */
	if ((rc = db_group_resolve(db, sel, &ids[0], &n)) || n)
		goto found;
	if (strlen(sel) >= 4 && is_hex(sel)) {
		rc = ids_for(db, "SELECT id FROM runs WHERE uuid LIKE ?1 || '%' ESCAPE '\\'", sel, ids, &n);
		if (rc != SQLITE_OK || n)
			goto found;
		/* Commit prefix: several runs of one commit are not ambiguous; take the latest. */
		rc = ids_for(db,
			     "SELECT id FROM runs WHERE git_commit IN (SELECT DISTINCT git_commit FROM runs "
			     "WHERE git_commit LIKE ?1 || '%') ORDER BY started_at DESC, id DESC",
			     sel, ids, &n);
		if (rc == SQLITE_OK && n > 1) {
			int64_t commit_ids[2];
			int ncommits = 0;
			rc = ids_for(db, "SELECT count(DISTINCT git_commit) FROM runs WHERE git_commit "
					 "LIKE ?1 || '%'", sel, commit_ids, &ncommits);
			if (rc == SQLITE_OK && commit_ids[0] > 1)
				return bd_fail(err, BD_EINVAL,
					       "run selector '%s' matches several git commits; give more digits",
					       sel);
			n = 1;
		}
	}
found:
	if (rc != SQLITE_OK)
		return sql_fail(db, err, "cannot look up the run", rc);
	if (n == 0)
		return bd_fail_at(err, BD_ENOTFOUND, db->path, 0, 0,
				  "no run matches '%s' (give a run id, a uuid prefix, a label, a git commit "
				  "or 'latest'; see `report runs`)",
				  sel);
	if (n > 1)
		return bd_fail(err, BD_EINVAL, "run selector '%s' is ambiguous; give more characters", sel);
	*run_id = ids[0];
	return 0;
}

int db_run_sweep_text(struct db *db, int64_t run_id, char **text, struct bd_error *err)
{
	int rc = SQLITE_OK;
	*text = NULL;
	sqlite3_stmt *st = prepare(db, &rc, "SELECT sweep_text FROM runs WHERE id = ?1");
	bind_i64(st, &rc, 1, run_id);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*text = col_strdup(st, 0);
	finalize(st, &rc);
	return rc == SQLITE_OK ? 0 : sql_fail(db, err, "cannot read the sweep text", rc);
}

/* The columns struct case_row holds, in case_row_read's order (the one list both case queries
 * select; unqualified, so that it reads the only table of their FROM). */
#define CASE_ROW_COLUMNS                                                                          \
	"id, run_id, ord, suite, impl, device, dtype, pass, model, batch_size, heads, seq_len, "  \
	"head_dim, causal, params, case_key, name, warmup, iters, status, reason, max_diff, "     \
	"tolerance, mem_limit, param_bytes, peak_fwd_bytes, peak_bwd_bytes, peak_bytes, "         \
	"flops_fwd, flops_bwd, flops_opt, bytes_fwd, bytes_bwd, bytes_opt, elapsed_ns, "          \
	"grad_bytes, optim_bytes, activation_bytes, workspace_bytes, param_count, impl_info, "   \
	"stop_reason, cpu_wait, rse"

static void case_row_read(sqlite3_stmt *st, struct case_row *c)
{
	int i = 0;
	c->id = sqlite3_column_int64(st, i++);
	c->run_id = sqlite3_column_int64(st, i++);
	c->ord = sqlite3_column_int64(st, i++);
	c->suite = col_strdup(st, i++);
	c->impl = col_strdup(st, i++);
	c->device = col_strdup(st, i++);
	c->dtype = col_strdup(st, i++);
	c->pass = col_strdup(st, i++);
	c->model = col_strdup(st, i++);
	c->batch_size = db_col_i64(st, i++, 0);
	c->heads = db_col_i64(st, i++, 0);
	c->seq_len = db_col_i64(st, i++, 0);
	c->head_dim = db_col_i64(st, i++, 0);
	c->causal = (int)db_col_i64(st, i++, -1);
	c->params_json = col_strdup(st, i++);
	c->case_key = col_strdup(st, i++);
	c->name = col_strdup(st, i++);
	c->warmup = sqlite3_column_int64(st, i++);
	c->iters = sqlite3_column_int64(st, i++);
	c->status = col_status(st, i++);
	c->reason = col_strdup(st, i++);
	c->max_diff = col_double(st, i++, -1);
	c->tolerance = col_double(st, i++, -1);
	c->mem_limit = db_col_i64(st, i++, -1);
	c->param_bytes = db_col_i64(st, i++, -1);
	c->peak_fwd_bytes = db_col_i64(st, i++, -1);
	c->peak_bwd_bytes = db_col_i64(st, i++, -1);
	c->peak_bytes = db_col_i64(st, i++, -1);
	for (int p = 0; p < PHASE_COUNT; p++)
		c->flops[p] = col_double(st, i++, 0);
	for (int p = 0; p < PHASE_COUNT; p++)
		c->bytes[p] = col_double(st, i++, 0);
	c->elapsed_ns = db_col_i64(st, i++, 0);
	c->grad_bytes = db_col_i64(st, i++, -1);
	c->optim_bytes = db_col_i64(st, i++, -1);
	c->activation_bytes = db_col_i64(st, i++, -1);
	c->workspace_bytes = db_col_i64(st, i++, -1);
	c->param_count = db_col_i64(st, i++, -1);
	c->impl_info = col_strdup(st, i++);
	c->stop_reason = col_strdup(st, i++);
	c->cpu_wait = col_double(st, i++, -1);
	c->rse = col_double(st, i++, -1);
	/* an ok case that was not checked against a reference (a peer without `check` lines) says so
	 * wherever a report names it (schemas/peer-protocol.md, "Validation") */
	char *marked = NULL;
	if (c->status == STATUS_OK && c->max_diff < 0 && c->name &&
	    asprintf(&marked, "%s " DB_UNVALIDATED_MARK, c->name) >= 0) {
		free(c->name);
		c->name = marked;
	}
}

static void case_row_read_any(sqlite3_stmt *st, void *item)
{
	case_row_read(st, item);
	db_case_row_untrusted(item);
}

static void case_row_clear(struct case_row *c)
{
	free(c->suite); free(c->impl); free(c->device); free(c->dtype); free(c->pass);
	free(c->model); free(c->params_json); free(c->case_key); free(c->name);
	free(c->reason); free(c->impl_info); free(c->stop_reason);
}

void db_case_rows_free(struct case_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		case_row_clear(&rows[i]);
	free(rows);
}

/* The cases of run_id (with its group's members where scoped) of suite (NULL: all), by ord. */
static int cases_list(struct db *db, int64_t run_id, const char *suite, int scoped,
		      struct case_row **rows, size_t *n, struct bd_error *err)
{
	int rc = SQLITE_OK;
	struct case_row *out = NULL;
	size_t count = 0;
	sqlite3_stmt *st = prepare(db, &rc,
		"SELECT " CASE_ROW_COLUMNS " FROM cases WHERE (run_id = ?1 OR (?3 AND run_id IN "
		"(SELECT member FROM temp.run_scope WHERE rep = ?1))) AND (?2 IS NULL OR suite = ?2) "
		"ORDER BY ord");
	bind_i64(st, &rc, 1, run_id);
	bind_text(st, &rc, 2, suite);
	bind_i64(st, &rc, 3, scoped);
	collect(st, &rc, (void **)&out, &count, sizeof(*out), case_row_read_any);
	finalize(st, &rc);
	if (rc != SQLITE_OK) {
		db_case_rows_free(out, count);
		return sql_fail(db, err, "cannot list cases", rc);
	}
	*rows = out;
	*n = count;
	return 0;
}

int db_cases_list(struct db *db, int64_t run_id, const char *suite, struct case_row **rows,
		  size_t *n, struct bd_error *err)
{
	return cases_list(db, run_id, suite, 1, rows, n, err);
}

int db_run_own_cases(struct db *db, int64_t run_id, struct case_row **rows, size_t *n,
		     struct bd_error *err)
{
	return cases_list(db, run_id, NULL, 0, rows, n, err);
}

static void sample_read_any(sqlite3_stmt *st, void *item)
{
	struct sample *s = item;
	s->phase = sqlite3_column_int(st, 0);
	s->iter = sqlite3_column_int(st, 1);
	s->ns = sqlite3_column_int64(st, 2);
}

int db_samples_get(struct db *db, int64_t case_id, struct sample **samples, size_t *n,
		   struct bd_error *err)
{
	int rc = SQLITE_OK;
	struct sample *out = NULL;
	size_t count = 0;
	/* Phases in fwd, bwd, opt order regardless of their text's sort order. */
	if (!db->samples_stmt)
		db->samples_stmt = prepare(db, &rc,
			"SELECT CASE phase WHEN 'fwd' THEN 0 WHEN 'bwd' THEN 1 ELSE 2 END AS p, iter, ns "
			"FROM samples WHERE case_id = ?1 ORDER BY p, iter");
	sqlite3_stmt *st = db->samples_stmt;
	bind_i64(st, &rc, 1, case_id);
	collect(st, &rc, (void **)&out, &count, sizeof(*out), sample_read_any);
	if (st)
		sqlite3_reset(st);
	if (rc != SQLITE_OK) {
		free(out);
		return sql_fail(db, err, "cannot read samples", rc);
	}
	*samples = out;
	*n = count;
	return 0;
}

int db_cases_by_key(struct db *db, const char *case_key, const char *suite, struct case_row **rows,
		    size_t *n, struct bd_error *err)
{
	int rc = SQLITE_OK;
	struct case_row *out = NULL;
	size_t count = 0;
	/* A key's first case id orders the groups; cases_by_key (002_views.sql) serves both lookups. */
	sqlite3_stmt *st = prepare(db, &rc,
		"SELECT " CASE_ROW_COLUMNS " FROM cases c WHERE (?1 IS NULL OR c.case_key = ?1) AND (?2 IS NULL OR c.suite = ?2) "
		"ORDER BY (SELECT min(f.id) FROM cases f WHERE f.case_key = c.case_key), c.run_id, c.ord");
	bind_text(st, &rc, 1, case_key);
	bind_text(st, &rc, 2, suite);
	collect(st, &rc, (void **)&out, &count, sizeof(*out), case_row_read_any);
	finalize(st, &rc);
	if (rc != SQLITE_OK) {
		db_case_rows_free(out, count);
		return sql_fail(db, err, "cannot list the cases of a case key", rc);
	}
	*rows = out;
	*n = count;
	return 0;
}
