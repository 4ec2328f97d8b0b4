/* db/db.h: the one layer that talks to SQLite. Open (WAL, foreign keys, busy timeout), migrate,
 * write one transaction per case, and named read queries. No SQL is ever built from user text:
 * every value is a bound parameter. */
#ifndef BENCHDB_DB_H
#define BENCHDB_DB_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "records.h"

/* What the name of an ok case without a check against a reference ends in, as read from the
 * database (struct case_row.name: every report shows it). */
#define DB_UNVALIDATED_MARK "[unvalidated]"

struct db;

/* The database `runner run` writes and `report` reads when --db is not given. */
#define BENCHDB_DEFAULT_DB "bench.db"

enum db_open_flags {
	DB_CREATE = 1,   /* create the file if missing (runner); otherwise a missing file is an error */
	DB_READONLY = 2, /* report: SQLITE_OPEN_READONLY, no journal-mode change, no migration, no file
			  * created or changed; an older schema reads its later columns as NULL */
};

/* The schema level this build writes (the highest schemas/NNN_*.sql). */
int db_schema_latest(void);
/* Open path, creating it if DB_CREATE, and migrate an older schema to the latest. A database from a
 * newer benchdb is refused with BD_EVERSION; a missing file without DB_CREATE is BD_ENOTFOUND. */
int db_open(const char *path, unsigned flags, struct db **out, struct bd_error *err);
/* Accepts NULL. */
void db_close(struct db *db);
/* The schema level of the open file (after migration). */
int db_schema_version(struct db *db);

/* Insert the system if its fingerprint is new; *id is its row id either way. */
int db_system_put(struct db *db, const struct sysinfo *si, int64_t *id, struct bd_error *err);
/* The fingerprint (sha256 hex) db_system_put deduplicates on. */
void db_system_fingerprint(const struct sysinfo *si, char out[65]);
/* Insert a run with status 'running'. */
int db_run_begin(struct db *db, int64_t system_id, const struct run_record *run, int64_t *run_id,
		 struct bd_error *err);
/* Set status ('complete', 'interrupted', 'failed') and ended_at = now. */
int db_run_end(struct db *db, int64_t run_id, const char *status, struct bd_error *err);
/* The case row and all its samples in one transaction: either all is stored or nothing. */
int db_case_put(struct db *db, int64_t run_id, const struct case_record *c,
		const struct sample *samples, size_t nsamples, struct bd_error *err);

/* Resolve a run selector: "latest", a row id, a uuid prefix (≥ 4 hex chars), a label, or a git
 * commit prefix (≥ 4 hex chars; the latest run of that commit). Ambiguity is an error. */
int db_run_resolve(struct db *db, const char *selector, int64_t *run_id, struct bd_error *err);
/* How many runs of the whole sweep (no shard: `--nodes`, `--repeat`) the group run_id stands for
 * holds (a group selected by db_run_resolve on this connection, which stands as its latest run);
 * 0 when run_id stands for no such group. */
int db_group_whole_runs(struct db *db, int64_t run_id, int64_t *runs, struct bd_error *err);
/* When run_id is a shard's run selected as a run (its id, its label, `latest`), not through its
 * group on this connection: *group (malloc'd), *index and *count; *group NULL otherwise. Such a
 * run is its slice of the sweep alone. */
int db_run_shard_alone(struct db *db, int64_t run_id, char **group, int *index, int *count,
		       struct bd_error *err);
/* db_run_resolve for a command that acts on one run (runner close, runner run --resume): a group
 * selector that stands for several runs (a group's shards) is refused, BD_EINVAL, not taken for
 * its latest run. */
int db_run_resolve_one(struct db *db, const char *selector, int64_t *run_id, struct bd_error *err);
/* Fill *out (free its strings with db_run_row_clear). */
int db_run_get(struct db *db, int64_t run_id, struct run_row *out, struct bd_error *err);
void db_run_row_clear(struct run_row *r);
/* What keeps the group run_id stands for (a group selected by db_run_resolve on this connection)
 * from being its whole sweep once: *why (malloc'd) names the missing shards, those not complete,
 * and shards of different slicings, commits or sweeps; NULL when run_id stands for no group of
 * shards, or for a whole one. db_run_get's status is this, for such a group. */
int db_group_gap(struct db *db, int64_t run_id, char **why, struct bd_error *err);
/* All runs, by id (the order they were stored in). */
int db_runs_list(struct db *db, struct run_row **rows, size_t *n, struct bd_error *err);
void db_run_rows_free(struct run_row *rows, size_t n);
/* The run of this id in runs[0..n-1] (db_runs_list's, by id), or NULL. */
const struct run_row *db_run_find(const struct run_row *runs, size_t n, int64_t id);
/* Two runs in time order: by started_at (ISO, so that text order is time order), then id; < 0,
 * 0, > 0. Ids follow the order runs were stored in, and `runner merge` stores a database's runs
 * after those already there, so a database merged out of order has ids out of time order. */
int db_run_time_cmp(const struct run_row *a, const struct run_row *b);
/* Whether two stored texts are equal (both NULL, or the same string). */
int db_text_same(const char *a, const char *b);
/* Whether runs a and b ran the same code on the same sweep: commit, uncommitted changes, sweep
 * hash (NULL a value of its own). */
int db_run_same_code(const struct run_row *a, const struct run_row *b);
/* Seconds since 1970 of a stored ISO 8601 UTC time ("2026-11-21T13:45:01.123Z", to the second);
 * NAN when it does not parse. */
double db_iso_seconds(const char *iso);
/* A run's sweep text (malloc'd) — for provenance in reports. */
int db_run_sweep_text(struct db *db, int64_t run_id, char **text, struct bd_error *err);
/* A system row by id. */
int db_system_get(struct db *db, int64_t system_id, struct sysinfo *out, struct bd_error *err);

/* Cases of a run in order; suite NULL for all. A run that stands for its group (a group selector
 * resolved by db_run_resolve on this connection: group.c) lists its members' cases too. */
int db_cases_list(struct db *db, int64_t run_id, const char *suite, struct case_row **rows,
		  size_t *n, struct bd_error *err);
/* The cases that run run_id itself stored, in order, whatever it stands for (the noise between
 * runs counts each run once, by itself). */
int db_run_own_cases(struct db *db, int64_t run_id, struct case_row **rows, size_t *n,
		     struct bd_error *err);
void db_case_rows_free(struct case_row *rows, size_t n);
/* All samples of a case, ordered by phase then iter (caller frees *samples). */
int db_samples_get(struct db *db, int64_t case_id, struct sample **samples, size_t *n,
		   struct bd_error *err);

/* What one db_merge did: added, skipped (already there, identical), refused. */
struct db_merge_counts {
	int64_t systems, runs, cases, samples;   /* added */
	int64_t runs_present;    /* runs the output already had (by uuid, same content) */
	int64_t cases_present;   /* their cases it already had, identical: skipped */
	int64_t runs_updated;    /* runs the output had unfinished that have ended since */
	int64_t runs_refused;    /* another run under a uuid the output has: kept out */
	char *refused;           /* "run UUID, ...: what differs" per refused run, a line each; NULL */
};
/* Import every run of the benchdb database at in_path — its systems, cases and samples — in one
 * transaction (db/merge.c). The input is read through a temporary copy migrated to this build's
 * schema, and never written. A run already present (same uuid) must be the same run: its cases
 * the output lacks are added, and its status if it has ended since; one whose identity or shared
 * cases differ (two copies of a database resumed apart) is refused with what differs and the rest
 * imported. BD_ENOTFOUND: no file; BD_EINVAL: not a benchdb database, or the output itself;
 * BD_EVERSION: from a newer benchdb; BD_EDB, BD_EIO: the import failed and nothing of this input
 * was stored; BD_EINTR: *stop was set (a signal) — nothing of this input stored, the temporary
 * copy removed. err names in_path. Free counts with db_merge_counts_clear (on failure too). */
int db_merge(struct db *db, const char *in_path, const volatile sig_atomic_t *stop,
	     struct db_merge_counts *counts, struct bd_error *err);
void db_merge_counts_clear(struct db_merge_counts *counts);

/* What the GPU did while a case ran (schemas/006_gpu_during_case.sql). */
struct case_gpu {
	int known;             /* 0: nothing was read (no GPU, no NVML, not a CUDA case) */
	double temp_c;         /* hottest, degrees C */
	int sm_clock_mhz;      /* lowest SM clock */
	char throttle[160];    /* throttle reasons seen, comma-separated; "" none */
};
/* Store g with the case (run_id, ord) (db/gpu.c); nothing when !g->known. */
int db_case_gpu_put(struct db *db, int64_t run_id, int64_t ord, const struct case_gpu *g,
		    struct bd_error *err);
/* Read case_id's figures into *g (known 0 when none were stored). */
int db_case_gpu_get(struct db *db, int64_t case_id, struct case_gpu *g, struct bd_error *err);

/* Current time as ISO 8601 UTC with milliseconds. */
void db_now(char out[32]);

/* The cases with case_key in every run (case_key NULL: every case of every run); suite NULL for
 * all. Grouped by case key, the groups in order of first appearance, and oldest run first within
 * a group (report history). Free with db_case_rows_free. */
int db_cases_by_key(struct db *db, const char *case_key, const char *suite, struct case_row **rows,
		    size_t *n, struct bd_error *err);

/* ---- liveness, resume and close (db_liveness.c; schemas/007_liveness.sql) ---------------- */

/* How long a writer waits, retrying with backoff, for another's lock (runner --busy-timeout). */
void db_set_busy_timeout(struct db *db, int ms);
/* on: from now on a lock wait ends at once when this process holds a stop signal (SIGINT,
 * SIGTERM, SIGHUP) pending — for `runner run` before its run stores anything, where giving up
 * loses nothing; off (the default): a wait runs its whole busy timeout, so that a finished case
 * is still stored after Ctrl-C. Turning it on clears db_busy_stopped. */
void db_busy_interruptible(int on);
/* Whether a lock wait ended on a stop signal since db_busy_interruptible was last called. */
int db_busy_stopped(void);
/* The one busy-wait policy: every database this process opens from now on waits up to seconds
 * for another process's lock, from its open on (reading the schema, migrating, every write).
 * BD_EINVAL outside 0..DB_BUSY_TIMEOUT_MAX_S. */
#define DB_BUSY_TIMEOUT_DEFAULT_S 3600
#define DB_BUSY_TIMEOUT_MAX_S (INT32_MAX / 1000)
int db_set_default_busy_timeout(long seconds);
/* This machine's host name, as runs record it. */
void db_this_host(char out[256]);
/* db_run_begin and db_run_liveness_set in one transaction: no run is ever stored without its
 * runner (a kill between the two left one that nothing could tell dead). */
int db_run_begin_live(struct db *db, int64_t system_id, const struct run_record *run,
		      int64_t *run_id, struct bd_error *err);
/* Record this process (host, pid) as the run's runner, with a heartbeat now. */
int db_run_liveness_set(struct db *db, int64_t run_id, struct bd_error *err);
/* Refresh the run's heartbeat; returns an SQLite code (a failure is not worth stopping for). */
int db_run_heartbeat(struct db *db, int64_t run_id);
enum run_liveness {
	RUN_LIVENESS_UNKNOWN,   /* running, but nothing tells (a run from before schema 7) */
	RUN_LIVENESS_ALIVE,     /* running, and its runner is */
	RUN_LIVENESS_DEAD,      /* running, and its runner is gone: abandoned */
	RUN_LIVENESS_ENDED,     /* not running */
};
/* Whether a run's runner is alive: same host, its pid is a runner; another host, a heartbeat
 * within 10 minutes. why (may be NULL) says on what grounds. */
int db_run_liveness(struct db *db, int64_t run_id, char *why, size_t n);
/* End a running run as 'interrupted' at its last heartbeat (runner close). */
int db_run_close(struct db *db, int64_t run_id, struct bd_error *err);
/* One write transaction (BEGIN IMMEDIATE, within the busy timeout) around a look at a run's
 * liveness and what is done on it — a resume taking it over, a close ending it — so that two
 * processes cannot both find it dead and both act (two resumes of one run both measured its
 * missing cases). db_run_takeover_end commits when commit is non-zero, else rolls back. */
int db_run_takeover_begin(struct db *db, struct bd_error *err);
int db_run_takeover_end(struct db *db, int commit, struct bd_error *err);
/* Set a run 'running' again with this process as its runner (runner run --resume). */
int db_run_reopen(struct db *db, int64_t run_id, struct bd_error *err);
/* stored[ord] = 1 for each case the run has stored (ords 0..n-1); *count of them, counts[status]
 * of them by status. */
int db_run_stored_ords(struct db *db, int64_t run_id, unsigned char *stored, size_t n,
		       size_t *count, size_t counts[STATUS_COUNT], struct bd_error *err);

/* ---- what a resume keeps (run_identity.c; schemas/011_run_identity.sql) --------------------- */

/* The values that make a run what it is beyond its sweep and build: a resume keeps them. */
struct run_identity {
	char *label, *group_id;          /* NULL: none */
	int shard_index, shard_count;    /* shard_count 0: not a shard */
	int64_t mem_limit;               /* bytes; 0: not recorded (stored before schema 11) */
	int mem_limit_all;               /* 1: every case (--mem-limit); 0: the default share */
	char *env;                       /* runs.env, the settings it ran under; read, never written */
};
/* Fill *out (free with db_run_identity_clear). */
int db_run_identity_get(struct db *db, int64_t run_id, struct run_identity *out,
			struct bd_error *err);
void db_run_identity_clear(struct run_identity *id);
/* Record a resume of the run: note appended as a line of runs.resumes; label, group and memory
 * limit set to id's (what --force accepted; the same values otherwise). The shard never changes. */
int db_run_resume_record(struct db *db, int64_t run_id, const struct run_identity *id,
			 const char *note, struct bd_error *err);

/* ---- the noise between runs (db/noise.c; schemas/010_run_noise.sql) ------------------------ */

/* 1 when the file has the noise tables (schema 10 or later). */
int db_noise_stored(struct db *db);
/* Bytes of a noise session's key with its NUL: a run's group id (`runner run --group` takes up to
 * 127 bytes; a key cut shorter made groups that differ only past the cut one session) or "run:"
 * and its uuid. */
#define DB_SESSION_MAX 128
/* A run with what places it in time and in a session. */
struct run_session {
	int64_t id, system_id;
	char uuid[40], group_id[DB_SESSION_MAX], started_at[32], status[16];
	char code[128];   /* what ran: git commit, +dirty, and the sweep's hash (db_run_code) */
	int folded;       /* already in noise_sessions */
};
/* "COMMIT[+dirty]/SWEEPHASH" ("?" for what is unknown): runs with equal codes ran the same code
 * on the same sweep, so their difference is noise, not a change. */
void db_run_code(const char *commit, int dirty, const char *sweep_hash, char out[128]);
/* The runs of system_id (0: every system), or only run_id (0: all), by started_at then id. */
int db_run_sessions(struct db *db, int64_t system_id, int64_t run_id, struct run_session **out,
		    size_t *n, struct bd_error *err);
/* One stored row of noise_sessions (strings valid during the callback only). */
struct noise_session_row {
	const char *case_key;
	char session[DB_SESSION_MAX], code[128], first_at[32], last_at[32];
	int64_t runs;
	double mean_log, ss_log;
};
/* Call row for every stored session of system_id and phase ("fwd", "bwd", "opt", "total"), by
 * case key then time; row returns 0 to go on, 1 to stop, -1 for out of memory (BD_ENOMEM). Nothing
 * when the file has no noise tables. */
int db_noise_sessions_list(struct db *db, int64_t system_id, const char *phase,
			   int (*row)(const struct noise_session_row *r, void *ctx), void *ctx,
			   struct bd_error *err);
/* One run's y for one case and series, as it is folded. */
struct noise_fold_entry {
	int64_t system_id;
	const char *case_key, *phase, *session, *code, *at;
	double y;
};
/* In one transaction: add every entry to its session's row and mark run_id folded; nothing when
 * it already is (*folded 0). BD_EVERSION without the noise tables. */
int db_noise_fold(struct db *db, int64_t run_id, const struct noise_fold_entry *entries, size_t n,
		  int *folded, struct bd_error *err);
/* Forget every fold (runner noise --rebuild). */
int db_noise_clear(struct db *db, struct bd_error *err);

#endif
