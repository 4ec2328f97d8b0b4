/* tests/test_db.c: the SQLite layer (db/) and the schema (schemas/): open, migrate, refuse, write
 * one transaction per case, read back every field, the documented views, and run selectors.
 * Each test works on its own bench.db in a fresh directory under /tmp. Raw sqlite3 is used only to
 * build old files and to look at what db/ left on disk. Needs BENCHDB_SOURCE_DIR (set by CTest). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "params.h"
#include "strbuf.h"

struct fixture {
	char dir[64];
	char path[128];   /* dir/bench.db, not created by setup */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/benchdb-test-db-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/bench.db", fx->dir);
	*state = fx;
	return 0;
}

static void close_all_dbs(void);

static int teardown(void **state)
{
	struct fixture *fx = *state;
	close_all_dbs();
	DIR *d = opendir(fx->dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* ---- helpers -------------------------------------------------------------------------------- */

/* Databases the running test has open, so that teardown closes them when an assertion fails. */
static struct db *open_dbs[4];

static struct db *track(struct db *db)
{
	for (size_t i = 0; i < sizeof(open_dbs) / sizeof(open_dbs[0]); i++)
		if (!open_dbs[i]) {
			open_dbs[i] = db;
			return db;
		}
	fail_msg("a test opened more than 4 databases");
	return db;
}

static void close_db(struct db *db)
{
	for (size_t i = 0; i < sizeof(open_dbs) / sizeof(open_dbs[0]); i++)
		if (open_dbs[i] == db)
			open_dbs[i] = NULL;
	db_close(db);
}

static void close_all_dbs(void)
{
	for (size_t i = 0; i < sizeof(open_dbs) / sizeof(open_dbs[0]); i++) {
		db_close(open_dbs[i]);
		open_dbs[i] = NULL;
	}
}

static int file_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* A whole file, malloc'd. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_addn(&sb, buf, n);
	fclose(f);
	return sb_detach(&sb);
}

/* The text of schemas/<name> in the source tree. */
static char *schema_text(const char *name)
{
	const char *src = getenv("BENCHDB_SOURCE_DIR");
	if (!src || !*src)
		fail_msg("BENCHDB_SOURCE_DIR is not set (run this test through ctest)");
	char path[1024];
	snprintf(path, sizeof(path), "%s/schemas/%s", src, name);
	return read_text(path);
}

static sqlite3 *raw_open(const char *path)
{
	sqlite3 *h = NULL;
	int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK)
		fail_msg("sqlite3_open_v2(%s): %s", path, h ? sqlite3_errmsg(h) : "out of memory");
	sqlite3_busy_timeout(h, 5000);
	return h;
}

static void raw_exec(sqlite3 *h, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("sql failed: %s\n  in: %.300s", msg ? msg : "?", sql);
}

/* The first column of the first row of sql, as an integer (fails the test if there is no row). */
static int64_t raw_int(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(h), sql);
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("no row from: %s (%s)", sql, sqlite3_errmsg(h));
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static double raw_double(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(h), sql);
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("no row from: %s (%s)", sql, sqlite3_errmsg(h));
	double v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The first column of the first row, malloc'd ("" for no row, "(null)" for NULL). */
static char *raw_text(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("prepare failed: %s\n  in: %s", sqlite3_errmsg(h), sql);
	char *out;
	if (sqlite3_step(st) != SQLITE_ROW)
		out = strdup("");
	else if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		out = strdup("(null)");
	else
		out = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}

static int64_t path_int(const char *path, const char *sql)
{
	sqlite3 *h = raw_open(path);
	int64_t v = raw_int(h, sql);
	sqlite3_close(h);
	return v;
}

/* Does msg contain the decimal number n as a whole token (not part of a longer number)? */
static int mentions_number(const char *msg, long n)
{
	char num[32];
	snprintf(num, sizeof(num), "%ld", n);
	size_t len = strlen(num);
	for (const char *p = strstr(msg, num); p; p = strstr(p + 1, num)) {
		int digit_before = p > msg && p[-1] >= '0' && p[-1] <= '9';
		int digit_after = p[len] >= '0' && p[len] <= '9';
		if (!digit_before && !digit_after)
			return 1;
	}
	return 0;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!haystack || !strstr(haystack, needle))
		fail_msg("expected \"%s\" in \"%s\"", needle, haystack ? haystack : "(null)");
}

static void assert_close(double got, double want)
{
	double tol = 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g", got, want);
}

static struct db *open_new(const char *path)
{
	struct db *db = NULL;
	struct bd_error err = {0};
	int rc = db_open(path, DB_CREATE, &db, &err);
	if (rc)
		fail_msg("db_open(%s) = %d: %s", path, rc, err.msg);
	return track(db);
}

static void sysinfo_fill(struct sysinfo *si)
{
	memset(si, 0, sizeof(*si));
	snprintf(si->hostname, sizeof(si->hostname), "bench-01");
	snprintf(si->os, sizeof(si->os), "Debian GNU/Linux 12 (bookworm)");
	snprintf(si->kernel, sizeof(si->kernel), "Linux 6.1.0-18-amd64");
	snprintf(si->arch, sizeof(si->arch), "x86_64");
	snprintf(si->cpu_model, sizeof(si->cpu_model), "AMD EPYC 9654 96-Core Processor");
	si->cpu_cores = 16;
	si->cpu_threads = 32;
	snprintf(si->cpu_flags, sizeof(si->cpu_flags), "avx2 avx512f avx512_bf16");
	si->mem_bytes = 137438953472;
	snprintf(si->gpu_name, sizeof(si->gpu_name), "NVIDIA H100 80GB HBM3");
	si->gpu_count = 1;
	si->gpu_mem_bytes = 85520809984;
	si->gpu_sm_count = 132;
	snprintf(si->gpu_cc, sizeof(si->gpu_cc), "9.0");
	si->gpu_clock_mhz = 1980;
	si->gpu_mem_clock_mhz = 2619;
	snprintf(si->driver_version, sizeof(si->driver_version), "550.54.15");
	snprintf(si->cuda_runtime, sizeof(si->cuda_runtime), "12.4");
	snprintf(si->cudnn_version, sizeof(si->cudnn_version), "9.1.0");
	snprintf(si->cublas_version, sizeof(si->cublas_version), "12.4.5");
	snprintf(si->blas, sizeof(si->blas), "oneDNN 3.4.1");
	snprintf(si->compiler, sizeof(si->compiler), "GNU 12.2.0");
	snprintf(si->build_flags, sizeof(si->build_flags), "-O2 -g -march=native");
}

static int64_t put_system(struct db *db)
{
	struct sysinfo si;
	sysinfo_fill(&si);
	int64_t id = 0;
	struct bd_error err = {0};
	if (db_system_put(db, &si, &id, &err))
		fail_msg("db_system_put: %s", err.msg);
	return id;
}

static void run_record_fill(struct run_record *r, const char *uuid, const char *label,
			    const char *commit)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->uuid, sizeof(r->uuid), "%s", uuid);
	snprintf(r->started_at, sizeof(r->started_at), "2026-01-02T03:04:05.678Z");
	r->git_commit = commit;
	r->git_dirty = 0;
	r->git_branch = "main";
	r->tool_version = "0.1.0";
	r->command_line = "runner run sweeps/attention.yaml";
	r->sweep_path = "sweeps/attention.yaml";
	r->sweep_name = "attention";
	r->sweep_text = "name: attention\naxes: {seq_len: [128, 256]}\n";
	r->sweep_hash = "5d41402abc4b2a76b9719d911017c592";
	r->label = label;
	r->env_json = "{\"OMP_NUM_THREADS\":\"2\"}";
}

static int64_t begin_run(struct db *db, int64_t system_id, const char *uuid, const char *label,
			 const char *commit)
{
	struct run_record r;
	run_record_fill(&r, uuid, label, commit);
	int64_t id = 0;
	struct bd_error err = {0};
	if (db_run_begin(db, system_id, &r, &id, &err))
		fail_msg("db_run_begin: %s", err.msg);
	return id;
}

/* A validated attention case with every optional field set. */
/* The parameters of a case record, from its case key (kept here: records point to them). */
static const struct case_params *params_of_key(const char *key)
{
	static struct {
		const char *key;
		struct case_params p;
	} known[8];
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (known[i].key && !strcmp(known[i].key, key))
			return &known[i].p;
		if (!known[i].key) {
			struct bd_error err = {0};
			if (case_key_parse(key, &known[i].p, &err))
				fail_msg("%s: %s", key, err.msg);
			known[i].key = key;
			return &known[i].p;
		}
	}
	fail_msg("params_of_key: more than 8 keys");
	return NULL;
}

#define FLASH_KEY "suite=attention impl=flash device=cuda dtype=bfloat16 pass=forward_backward " \
		  "batch_size=8 heads=16 seq_len=1024 head_dim=64 causal=false"

static void case_record_fill(struct case_record *c, int64_t ord, const char *key)
{
	memset(c, 0, sizeof(*c));
	c->ord = ord;
	c->params = params_of_key(FLASH_KEY);   /* causal 0 is a value, not "not applicable" */
	c->params_json = "{\"batch_size\":8,\"causal\":false,\"head_dim\":64,\"heads\":16,\"seq_len\":1024}";
	c->case_key = key;
	c->name = "flash bf16 B8 H16 T1024 D64";
	c->warmup = 2;
	c->iters = 4;
	c->status = STATUS_OK;
	c->reason = NULL;
	c->max_diff = 0.0078125;
	c->tolerance = 0.02;
	c->mem_limit = 1073741824;
	c->param_bytes = 0;   /* 0 is a value: no parameters */
	c->param_count = 128625408;
	c->peak_fwd_bytes = 50331648;
	c->peak_bwd_bytes = 83886080;
	c->peak_bytes = 100663296;
	c->flops[0] = 4.294967296e9;
	c->flops[1] = 1.073741824e10;
	c->flops[2] = 0;
	c->bytes[0] = 2.5165824e7;
	c->bytes[1] = 5.0331648e7;
	c->bytes[2] = 0;
	snprintf(c->started_at, sizeof(c->started_at), "2026-01-02T03:04:06.000Z");
	c->elapsed_ns = 1234567890;
	c->impl_info = "{\"graph\": \"sdpa_fwd\", \"engine\": 3}";
	c->stop_reason = "precision";
	c->cpu_wait = 0.125;
	c->rse = 0.0042;
}

static void put_case(struct db *db, int64_t run_id, const struct case_record *c,
		     const struct sample *s, size_t n)
{
	struct bd_error err = {0};
	if (db_case_put(db, run_id, c, s, n, &err))
		fail_msg("db_case_put(ord %lld): %s", (long long)c->ord, err.msg);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- open ----------------------------------------------------------------------------------- */

static void test_db__create_makes_a_latest_schema_file_in_wal_mode(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(db_schema_latest(), 12);   /* 001_init, 002_views, 003_memory_breakdown,
						       004_param_count, 005_shards, 006_gpu_during_case,
						       007_liveness, 008_case_detail, 009_cpu_wait,
						       010_run_noise, 011_run_identity,
						       012_case_rse */
	assert_false(file_exists(fx->path));

	struct db *db = open_new(fx->path);
	assert_true(file_exists(fx->path));
	assert_int_equal(db_schema_version(db), db_schema_latest());

	sqlite3 *h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "PRAGMA user_version"), db_schema_latest());
	char *mode = raw_text(h, "PRAGMA journal_mode");
	assert_string_equal(mode, "wal");
	free(mode);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name "
				    "IN ('systems', 'runs', 'cases', 'samples')"), 4);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name "
				    "IN ('sample_view', 'case_stats', 'run_view')"), 3);
	sqlite3_close(h);
	close_db(db);

	/* Reopening an up-to-date file changes nothing. */
	struct bd_error err = {0};
	assert_int_equal(db_open(fx->path, 0, &db, &err), 0);
	track(db);
	assert_int_equal(db_schema_version(db), db_schema_latest());
	close_db(db);
	assert_int_equal(path_int(fx->path, "PRAGMA user_version"), db_schema_latest());
}

static void test_db__connection_enforces_foreign_keys(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	struct case_record c;
	case_record_fill(&c, 0, "k0");
	struct sample s = {.iter = 0, .phase = 0, .ns = 100};
	struct bd_error err = {0};
	/* No run 42: only a connection with foreign_keys = ON refuses this. */
	int rc = db_case_put(db, 42, &c, &s, 1, &err);
	assert_int_equal(rc, BD_EDB);
	assert_contains(err.msg, "FOREIGN KEY");
	close_db(db);
	assert_int_equal(path_int(fx->path, "SELECT count(*) FROM cases"), 0);
	assert_int_equal(path_int(fx->path, "SELECT count(*) FROM samples"), 0);
}

static void test_db__deleting_a_run_cascades_to_its_cases_and_samples(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t sys = put_system(db);
	int64_t keep = begin_run(db, sys, "aaaa0000-0000-4000-8000-000000000001", NULL, NULL);
	int64_t gone = begin_run(db, sys, "aaaa0000-0000-4000-8000-000000000002", NULL, NULL);
	struct case_record c;
	struct sample s[2] = {{0, 0, 10}, {1, 0, 20}};
	case_record_fill(&c, 0, "k0");
	put_case(db, keep, &c, s, 2);
	put_case(db, gone, &c, s, 2);
	close_db(db);

	sqlite3 *h = raw_open(fx->path);
	raw_exec(h, "PRAGMA foreign_keys = ON");
	char sql[128];
	snprintf(sql, sizeof(sql), "DELETE FROM runs WHERE id = %lld", (long long)gone);
	raw_exec(h, sql);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM cases"), 1);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM samples"), 2);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM cases WHERE run_id = %lld", (long long)keep);
	assert_int_equal(raw_int(h, sql), 1);
	/* A system that runs still point to cannot go. */
	assert_int_not_equal(sqlite3_exec(h, "DELETE FROM systems", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

static void test_db__two_connections_to_one_file_both_write(void **state)
{
	struct fixture *fx = *state;
	struct db *a = open_new(fx->path);
	struct db *b = NULL;
	struct bd_error err = {0};
	assert_int_equal(db_open(fx->path, 0, &b, &err), 0);
	track(b);

	int64_t sys_a = put_system(a);
	int64_t sys_b = put_system(b);
	assert_int_equal(sys_a, sys_b);
	int64_t run_a = begin_run(a, sys_a, "bbbb0000-0000-4000-8000-00000000000a", "a", NULL);
	int64_t run_b = begin_run(b, sys_b, "bbbb0000-0000-4000-8000-00000000000b", "b", NULL);
	struct case_record c;
	struct sample s = {0, 0, 100};
	for (int i = 0; i < 3; i++) {
		case_record_fill(&c, i, "k");
		put_case(a, run_a, &c, &s, 1);
		put_case(b, run_b, &c, &s, 1);
	}
	/* Each connection sees what the other wrote. */
	struct run_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(db_runs_list(a, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].ncases, 3);
	assert_int_equal(rows[1].ncases, 3);
	db_run_rows_free(rows, n);
	close_db(a);
	close_db(b);
}

/* Another runner that creates the same new file at the worst moment: after this open read the
 * version (0, an empty file) and before it looks at the file's tables. The hook is an SQLite
 * auto extension, so it is on the connection db_open makes; it fires once. */
static const char *racing_path;
static int racing_fired;

static int create_before_the_schema_look(unsigned type, void *ctx, void *stmt, void *x)
{
	(void)type, (void)ctx, (void)x;
	const char *sql = sqlite3_sql(stmt);
	if (racing_fired || !sql || !strstr(sql, "sqlite_master"))
		return 0;
	racing_fired = 1;
	struct db *other = NULL;
	struct bd_error err = {0};
	if (db_open(racing_path, DB_CREATE, &other, &err) == 0)
		db_close(other);
	return 0;
}

static int trace_each_connection(sqlite3 *h, const char **msg, const void *api)
{
	(void)msg, (void)api;
	sqlite3_trace_v2(h, SQLITE_TRACE_STMT, create_before_the_schema_look, NULL);
	return SQLITE_OK;
}

static void test_db__open_of_a_new_file_another_runner_creates_meanwhile_succeeds(void **state)
{
	struct fixture *fx = *state;
	racing_path = fx->path;
	racing_fired = 0;
	sqlite3_auto_extension((void (*)(void))trace_each_connection);
	struct db *db = NULL;
	struct bd_error err = {0};
	int rc = db_open(fx->path, DB_CREATE, &db, &err);
	sqlite3_cancel_auto_extension((void (*)(void))trace_each_connection);
	assert_true(racing_fired);
	if (rc)
		fail_msg("the open beside another runner's creation failed: %s", err.msg);
	track(db);
	assert_int_equal(db_schema_version(db), db_schema_latest());
	close_db(db);
}

struct lock_holder {
	const char *path;
	int ready_fd;   /* one byte is written here once the write lock is held (or failed) */
	int hold_ms;
	int rc;         /* of BEGIN IMMEDIATE */
};

/* Another writer: take the write lock, hold it hold_ms, commit. */
static void *hold_write_lock(void *arg)
{
	struct lock_holder *lh = arg;
	sqlite3 *h = NULL;
	lh->rc = sqlite3_open_v2(lh->path, &h, SQLITE_OPEN_READWRITE, NULL);
	if (lh->rc == SQLITE_OK)
		lh->rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (write(lh->ready_fd, "x", 1) != 1)
		lh->rc = SQLITE_IOERR;
	if (lh->rc == SQLITE_OK) {
		sleep_ms(lh->hold_ms);
		lh->rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	}
	sqlite3_close(h);
	return NULL;
}

static void test_db__write_waits_for_another_writer_instead_of_failing_busy(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t run = begin_run(db, put_system(db), "cccc0000-0000-4000-8000-000000000001", NULL, NULL);

	int fds[2];
	assert_int_equal(pipe(fds), 0);
	struct lock_holder lh = {.path = fx->path, .ready_fd = fds[1], .hold_ms = 400};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, hold_write_lock, &lh), 0);
	char byte;
	assert_int_equal(read(fds[0], &byte, 1), 1);

	struct case_record c;
	case_record_fill(&c, 0, "k0");
	struct sample s = {0, 0, 100};
	struct bd_error err = {0};
	double t0 = now_ms();
	int rc = db_case_put(db, run, &c, &s, 1, &err);
	double waited = now_ms() - t0;
	pthread_join(t, NULL);
	close(fds[0]);
	close(fds[1]);

	assert_int_equal(lh.rc, SQLITE_OK);   /* the other writer really held the lock */
	if (rc)
		fail_msg("db_case_put gave up while another writer held the lock: %s", err.msg);
	assert_true(waited >= 200);            /* it waited for the lock, it did not skip it */
	struct case_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(db_cases_list(db, run, NULL, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	db_case_rows_free(rows, n);
	close_db(db);
}

static void test_db__open_without_create_on_a_missing_file_is_not_found(void **state)
{
	struct fixture *fx = *state;
	struct db *db = (struct db *)&db;   /* must be reset to NULL */
	struct bd_error err = {0};
	int rc = db_open(fx->path, 0, &db, &err);
	assert_int_equal(rc, BD_ENOTFOUND);
	assert_int_equal(err.code, BD_ENOTFOUND);
	assert_null(db);
	assert_string_equal(err.file, fx->path);
	assert_contains(err.msg, "runner run");
	assert_false(file_exists(fx->path));   /* nothing was created */
}

static void test_db__open_of_a_text_file_fails_with_a_clear_message(void **state)
{
	struct fixture *fx = *state;
	const char *text = "this is a sweep file, not a database\nsuite: attention\n";
	write_text(fx->path, text);
	for (unsigned flags = 0; flags <= DB_CREATE; flags += DB_CREATE) {
		struct db *db = (struct db *)&db;
		struct bd_error err = {0};
		int rc = db_open(fx->path, flags, &db, &err);
		assert_int_equal(rc, BD_EDB);
		assert_null(db);
		assert_string_equal(err.file, fx->path);
		assert_contains(err.msg, "not a");
		assert_contains(err.msg, "database");
	}
	char *after = read_text(fx->path);
	assert_string_equal(after, text);   /* left as it was */
	free(after);
}

/* ---- migrate and refuse --------------------------------------------------------------------- */

/* A file as benchdb schema 1 wrote it: 001_init.sql, user_version 1, rows in plain SQL. */
static void make_version_1_file(const char *path)
{
	char *init = schema_text("001_init.sql");
	sqlite3 *h = raw_open(path);
	raw_exec(h, "BEGIN");
	raw_exec(h, init);
	raw_exec(h, "PRAGMA user_version = 1");
	raw_exec(h,
		 "INSERT INTO systems (id, fingerprint, hostname, gpu_count, first_seen) "
		 "VALUES (1, 'fp-old', 'oldhost', 0, '2025-01-01T00:00:00.000Z');"
		 "INSERT INTO runs (id, uuid, system_id, started_at, ended_at, status, git_commit, "
		 "git_dirty, git_branch, tool_version, command_line, label) VALUES (1, "
		 "'0123abcd-0000-4000-8000-000000000001', 1, '2025-01-01T00:00:00.000Z', "
		 "'2025-01-01T00:10:00.000Z', 'complete', 'abcdef0123456789', 1, 'main', '0.0.9', "
		 "'runner run old.yaml', 'old');"
		 "INSERT INTO cases (id, run_id, ord, suite, impl, device, dtype, pass, seq_len, params, "
		 "case_key, name, warmup, iters, status, reason) VALUES "
		 "(1, 1, 0, 'attention', 'naive', 'cpu', 'f32', 'fwd+bwd', 128, '{\"seq_len\":128}', "
		 "'attn-naive-128', 'naive T128', 1, 3, 'ok', NULL), "
		 "(2, 1, 1, 'attention', 'naive', 'cpu', 'f32', 'fwd+bwd', 65536, '{\"seq_len\":65536}', "
		 "'attn-naive-65536', 'naive T65536', 1, 3, 'oom', 'needs 64 GiB');"
		 "INSERT INTO samples (case_id, phase, iter, ns) VALUES "
		 "(1, 'fwd', 0, 5000), (1, 'fwd', 1, 100), (1, 'fwd', 2, 200), (1, 'fwd', 3, 300), "
		 "(1, 'bwd', 0, 9000), (1, 'bwd', 1, 400), (1, 'bwd', 2, 400), (1, 'bwd', 3, 400);");
	raw_exec(h, "COMMIT");
	sqlite3_close(h);
	free(init);
}

static void test_db__open_migrates_a_version_1_file_and_keeps_its_rows(void **state)
{
	struct fixture *fx = *state;
	make_version_1_file(fx->path);
	assert_int_equal(path_int(fx->path, "PRAGMA user_version"), 1);

	struct db *db = NULL;
	struct bd_error err = {0};
	if (db_open(fx->path, 0, &db, &err))
		fail_msg("db_open of a version 1 file: %s", err.msg);
	track(db);
	assert_int_equal(db_schema_version(db), db_schema_latest());

	struct run_row *runs = NULL;
	size_t nruns = 0;
	assert_int_equal(db_runs_list(db, &runs, &nruns, &err), 0);
	assert_int_equal(nruns, 1);
	assert_int_equal(runs[0].id, 1);
	assert_string_equal(runs[0].uuid, "0123abcd-0000-4000-8000-000000000001");
	assert_string_equal(runs[0].status, "complete");
	assert_string_equal(runs[0].ended_at, "2025-01-01T00:10:00.000Z");
	assert_string_equal(runs[0].git_commit, "abcdef0123456789");
	assert_int_equal(runs[0].git_dirty, 1);
	assert_string_equal(runs[0].label, "old");
	assert_string_equal(runs[0].hostname, "oldhost");
	assert_int_equal(runs[0].ncases, 2);
	assert_int_equal(runs[0].nok, 1);
	db_run_rows_free(runs, nruns);

	struct case_row *cases = NULL;
	size_t ncases = 0;
	assert_int_equal(db_cases_list(db, 1, NULL, &cases, &ncases, &err), 0);
	assert_int_equal(ncases, 2);
	assert_string_equal(cases[0].case_key, "attn-naive-128");
	assert_int_equal(cases[0].seq_len, 128);
	assert_int_equal(cases[0].batch_size, 0);   /* NULL in the old row */
	assert_int_equal(cases[0].causal, -1);
	assert_int_equal(cases[0].param_count, -1);   /* a column of schema 4: NULL */
	assert_null(cases[0].impl_info);              /* and of schema 8 */
	assert_null(cases[0].stop_reason);
	assert_true(cases[0].cpu_wait == -1);
	assert_true(cases[0].rse == -1);              /* and of schema 12 */
	assert_int_equal(cases[1].status, STATUS_OOM);
	assert_string_equal(cases[1].reason, "needs 64 GiB");
	db_case_rows_free(cases, ncases);

	struct sample *s = NULL;
	size_t ns = 0;
	assert_int_equal(db_samples_get(db, 1, &s, &ns, &err), 0);
	const struct sample want[] = {{0, 0, 5000}, {1, 0, 100}, {2, 0, 200}, {3, 0, 300},
				      {0, 1, 9000}, {1, 1, 400}, {2, 1, 400}, {3, 1, 400}};
	assert_int_equal(ns, 8);
	for (size_t i = 0; i < ns; i++) {
		assert_int_equal(s[i].phase, want[i].phase);
		assert_int_equal(s[i].iter, want[i].iter);
		assert_int_equal(s[i].ns, want[i].ns);
	}
	free(s);

	/* The migrated file takes new writes. */
	struct case_record c;
	case_record_fill(&c, 2, "attn-flash-128");
	struct sample one = {0, 0, 77};
	put_case(db, 1, &c, &one, 1);
	close_db(db);

	/* The views from 002 answer over the old rows. */
	sqlite3 *h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "PRAGMA user_version"), db_schema_latest());
	char *mode = raw_text(h, "PRAGMA journal_mode");
	assert_string_equal(mode, "wal");
	free(mode);
	assert_int_equal(raw_int(h, "SELECT n FROM case_stats WHERE case_id = 1 AND phase = 'fwd'"), 3);
	assert_close(raw_double(h, "SELECT mean_ns FROM case_stats WHERE case_id = 1 AND phase = 'fwd'"),
		     200);
	assert_close(raw_double(h, "SELECT std_ns FROM case_stats WHERE case_id = 1 AND phase = 'fwd'"),
		     100);
	assert_int_equal(raw_int(h, "SELECT min_ns FROM case_stats WHERE case_id = 1 AND phase = 'fwd'"),
			 100);
	assert_int_equal(raw_int(h, "SELECT max_ns FROM case_stats WHERE case_id = 1 AND phase = 'fwd'"),
			 300);
	assert_close(raw_double(h, "SELECT mean_ns FROM case_stats WHERE case_id = 1 AND phase = 'bwd'"),
		     400);
	assert_close(raw_double(h, "SELECT std_ns FROM case_stats WHERE case_id = 1 AND phase = 'bwd'"),
		     0);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM case_stats WHERE case_id = 2"), 0);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sample_view WHERE case_id = 1 AND is_warmup"),
			 2);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sample_view WHERE run_id = 1"), 9);
	assert_int_equal(raw_int(h, "SELECT cases FROM run_view WHERE id = 1"), 3);
	assert_int_equal(raw_int(h, "SELECT ok FROM run_view WHERE id = 1"), 2);
	assert_int_equal(raw_int(h, "SELECT not_ok FROM run_view WHERE id = 1"), 1);
	char *host = raw_text(h, "SELECT hostname FROM run_view WHERE id = 1");
	assert_string_equal(host, "oldhost");
	free(host);
	sqlite3_close(h);
}

static void test_db__open_refuses_a_newer_file_and_leaves_it_unchanged(void **state)
{
	struct fixture *fx = *state;
	int newer = db_schema_latest() + 1;
	sqlite3 *h = raw_open(fx->path);
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", newer);
	raw_exec(h, "CREATE TABLE from_the_future (x)");
	raw_exec(h, sql);
	sqlite3_close(h);

	for (unsigned flags = 0; flags <= DB_CREATE; flags += DB_CREATE) {
		struct db *db = (struct db *)&db;
		struct bd_error err = {0};
		int rc = db_open(fx->path, flags, &db, &err);
		assert_int_equal(rc, BD_EVERSION);
		assert_null(db);
		assert_string_equal(err.file, fx->path);
		if (!mentions_number(err.msg, newer) || !mentions_number(err.msg, db_schema_latest()))
			fail_msg("message should name versions %d and %d: %s", newer, db_schema_latest(),
				 err.msg);
	}

	h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "PRAGMA user_version"), newer);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sqlite_master"), 1);
	char *mode = raw_text(h, "PRAGMA journal_mode");
	assert_string_equal(mode, "delete");   /* not switched to WAL either */
	free(mode);
	sqlite3_close(h);
}

static void test_db__failed_migration_is_rolled_back_and_keeps_the_file_at_its_version(void **state)
{
	struct fixture *fx = *state;
	make_version_1_file(fx->path);
	/* Something already called case_stats: 002_views.sql cannot create its view. */
	sqlite3 *h = raw_open(fx->path);
	raw_exec(h, "CREATE TABLE case_stats (x)");
	sqlite3_close(h);

	struct db *db = (struct db *)&db;   /* must be reset to NULL */
	struct bd_error err = {0};
	assert_int_equal(db_open(fx->path, 0, &db, &err), BD_EDB);
	assert_null(db);
	assert_string_equal(err.file, fx->path);
	assert_contains(err.msg, "schema 2");
	assert_contains(err.msg, "case_stats");   /* SQLite's reason is kept */

	h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "PRAGMA user_version"), 1);
	/* 002 is all or nothing: its first statement (an index) was rolled back too. */
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sqlite_master WHERE name IN "
				    "('cases_by_key', 'runs_by_commit', 'sample_view', 'run_view')"), 0);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM samples"), 8);
	sqlite3_close(h);
}

static void test_db__migration_failing_at_a_later_step_leaves_the_file_as_it_was(void **state)
{
	struct fixture *fx = *state;
	make_version_1_file(fx->path);
	/* A column that 009_cpu_wait.sql adds is there already: 002 to 008 apply, 009 fails. */
	sqlite3 *h = raw_open(fx->path);
	raw_exec(h, "ALTER TABLE cases ADD COLUMN cpu_wait REAL");
	sqlite3_close(h);

	struct db *db = (struct db *)&db;
	struct bd_error err = {0};
	assert_int_equal(db_open(fx->path, 0, &db, &err), BD_EDB);
	assert_null(db);
	assert_contains(err.msg, "schema 9");
	assert_contains(err.msg, "cpu_wait");

	/* version 1 still, as the benchdb that made it reads it: no step of 002 to 008 stayed (each
	 * used to commit alone, leaving a file at 8 that neither that benchdb nor this one opens) */
	h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "PRAGMA user_version"), 1);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sqlite_master WHERE name IN "
				    "('cases_by_key', 'run_view', 'runs_by_group')"), 0);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM pragma_table_info('cases') WHERE name IN "
				    "('grad_bytes', 'param_count', 'impl_info')"), 0);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM samples"), 8);
	sqlite3_close(h);
}

static void test_db__migration_failing_at_its_second_step_names_schema_2(void **state)
{
	struct fixture *fx = *state;
	/* A schema-1 file with an object that only 002 trips on: 002 fails and is rolled back. */
	sqlite3 *h = raw_open(fx->path);
	char *init = schema_text("001_init.sql");
	raw_exec(h, init);
	free(init);
	raw_exec(h, "CREATE TABLE run_view (x); PRAGMA user_version = 1");
	sqlite3_close(h);

	struct db *db = (struct db *)&db;
	struct bd_error err = {0};
	assert_int_equal(db_open(fx->path, 0, &db, &err), BD_EDB);
	assert_null(db);
	assert_contains(err.msg, "run_view");
	assert_contains(err.msg, "schema 2");
	assert_int_equal(path_int(fx->path, "PRAGMA user_version"), 1);   /* 002 rolled back */
}

static void test_db__open_refuses_a_foreign_sqlite_file_and_leaves_it_unchanged(void **state)
{
	struct fixture *fx = *state;
	sqlite3 *h = raw_open(fx->path);
	raw_exec(h, "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)");
	sqlite3_close(h);

	struct db *db = (struct db *)&db;
	struct bd_error err = {0};
	assert_int_equal(db_open(fx->path, DB_CREATE, &db, &err), BD_EDB);
	assert_null(db);
	assert_contains(err.msg, "not a benchdb database");
	assert_int_equal(path_int(fx->path, "SELECT count(*) FROM sqlite_master"), 1);
}

/* ---- systems and runs ----------------------------------------------------------------------- */

static void test_db__system_put_of_the_same_info_gives_the_same_id(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t first = put_system(db);
	int64_t second = put_system(db);
	assert_true(first > 0);
	assert_int_equal(first, second);

	/* Every field is stored and read back. */
	struct sysinfo want, got;
	sysinfo_fill(&want);
	struct bd_error err = {0};
	assert_int_equal(db_system_get(db, first, &got, &err), 0);
	assert_memory_equal(&got, &want, sizeof(want));
	assert_int_equal(db_system_get(db, first + 100, &got, &err), BD_ENOTFOUND);
	close_db(db);
	assert_int_equal(path_int(fx->path, "SELECT count(*) FROM systems"), 1);
}

/* Change one field of a filled sysinfo (which = 0..22, in struct order). */
static const char *sysinfo_change(struct sysinfo *si, int which)
{
#define TEXT(f) memset(si->f, 0, sizeof(si->f)); snprintf(si->f, sizeof(si->f), "changed"); return #f
#define NUM(f) si->f += 1; return #f
	switch (which) {
	case 0: TEXT(hostname);
	case 1: TEXT(os);
	case 2: TEXT(kernel);
	case 3: TEXT(arch);
	case 4: TEXT(cpu_model);
	case 5: NUM(cpu_cores);
	case 6: NUM(cpu_threads);
	case 7: TEXT(cpu_flags);
	case 8: NUM(mem_bytes);
	case 9: TEXT(gpu_name);
	case 10: NUM(gpu_count);
	case 11: NUM(gpu_mem_bytes);
	case 12: NUM(gpu_sm_count);
	case 13: TEXT(gpu_cc);
	case 14: TEXT(driver_version);
	case 15: TEXT(cuda_runtime);
	case 16: TEXT(cudnn_version);
	case 17: TEXT(cublas_version);
	case 18: TEXT(blas);
	case 19: TEXT(compiler);
	case 20: TEXT(build_flags);
	case 21: NUM(gpu_clock_mhz);
	case 22: NUM(gpu_mem_clock_mhz);
	}
#undef TEXT
#undef NUM
	return NULL;
}

/* ids[i] = the id db_system_put gives the base sysinfo with field `first + i` changed. */
static void put_changed_systems(struct db *db, int first, int count, int64_t base)
{
	for (int i = 0; i < count; i++) {
		struct sysinfo si;
		sysinfo_fill(&si);
		const char *field = sysinfo_change(&si, first + i);
		assert_non_null(field);
		int64_t id = 0;
		struct bd_error err = {0};
		assert_int_equal(db_system_put(db, &si, &id, &err), 0);
		if (id == base)
			fail_msg("changing %s gave the same system id: it is not in the fingerprint", field);
		/* The new row holds the changed value. */
		struct sysinfo got;
		assert_int_equal(db_system_get(db, id, &got, &err), 0);
		assert_memory_equal(&got, &si, sizeof(si));
	}
}

static void test_db__system_put_with_any_changed_field_gives_a_new_id(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t base = put_system(db);
	put_changed_systems(db, 0, 21, base);
	close_db(db);
	assert_int_equal(path_int(fx->path, "SELECT count(*) FROM systems"), 22);
}

/* The schema says the fingerprint covers every column of systems; the clocks are columns. */
static void test_db__system_put_with_changed_gpu_clocks_gives_a_new_id(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t base = put_system(db);
	put_changed_systems(db, 21, 2, base);
	close_db(db);
}

static void test_db__run_begin_and_end_set_status_and_times(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t sys = put_system(db);
	int64_t id = begin_run(db, sys, "dddd0000-0000-4000-8000-000000000001", "nightly",
			       "0123456789abcdef0123456789abcdef01234567");
	struct run_row r = {0};
	struct bd_error err = {0};
	assert_int_equal(db_run_get(db, id, &r, &err), 0);
	assert_int_equal(r.id, id);
	assert_string_equal(r.uuid, "dddd0000-0000-4000-8000-000000000001");
	assert_string_equal(r.status, "running");
	assert_string_equal(r.started_at, "2026-01-02T03:04:05.678Z");
	assert_null(r.ended_at);
	assert_string_equal(r.git_commit, "0123456789abcdef0123456789abcdef01234567");
	assert_int_equal(r.git_dirty, 0);
	assert_string_equal(r.git_branch, "main");
	assert_string_equal(r.label, "nightly");
	assert_string_equal(r.sweep_path, "sweeps/attention.yaml");
	assert_string_equal(r.sweep_name, "attention");
	assert_string_equal(r.sweep_hash, "5d41402abc4b2a76b9719d911017c592");
	assert_string_equal(r.command_line, "runner run sweeps/attention.yaml");
	assert_string_equal(r.tool_version, "0.1.0");
	assert_int_equal(r.system_id, sys);
	assert_string_equal(r.hostname, "bench-01");
	assert_int_equal(r.ncases, 0);
	db_run_row_clear(&r);

	char *text = NULL;
	assert_int_equal(db_run_sweep_text(db, id, &text, &err), 0);
	assert_string_equal(text, "name: attention\naxes: {seq_len: [128, 256]}\n");
	free(text);

	/* Unknown git state and no label are NULL, read back as -1 and NULL. */
	struct run_record rec;
	run_record_fill(&rec, "dddd0000-0000-4000-8000-000000000002", NULL, NULL);
	rec.git_dirty = -1;
	int64_t id2 = 0;
	assert_int_equal(db_run_begin(db, sys, &rec, &id2, &err), 0);
	assert_int_equal(db_run_get(db, id2, &r, &err), 0);
	assert_int_equal(r.git_dirty, -1);
	assert_null(r.git_commit);
	assert_null(r.label);
	db_run_row_clear(&r);

	char before[32];
	db_now(before);
	assert_int_equal(db_run_end(db, id, "complete", &err), 0);
	assert_int_equal(db_run_end(db, id2, "interrupted", &err), 0);
	assert_int_equal(db_run_get(db, id, &r, &err), 0);
	assert_string_equal(r.status, "complete");
	assert_non_null(r.ended_at);
	assert_int_equal(strlen(r.ended_at), strlen("2026-01-02T03:04:05.678Z"));
	assert_true(strcmp(r.ended_at, before) >= 0);   /* ISO 8601 UTC sorts as time */
	db_run_row_clear(&r);
	assert_int_equal(db_run_get(db, id2, &r, &err), 0);
	assert_string_equal(r.status, "interrupted");
	db_run_row_clear(&r);

	/* A status outside the four is refused, and the run keeps its status. */
	assert_int_equal(db_run_end(db, id, "finished", &err), BD_EDB);
	assert_int_equal(db_run_get(db, id, &r, &err), 0);
	assert_string_equal(r.status, "complete");
	db_run_row_clear(&r);
	assert_int_equal(db_run_get(db, id + 100, &r, &err), BD_ENOTFOUND);
	close_db(db);
}

/* ---- cases and samples ---------------------------------------------------------------------- */

static void test_db__case_round_trip_keeps_every_field(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t run = begin_run(db, put_system(db), "eeee0000-0000-4000-8000-000000000001", NULL, NULL);

	struct case_record full;
	case_record_fill(&full, 0, "attention/flash/bf16/B8/H16/T1024/D64/noncausal");

	/* Everything that may be "not applicable" or "unknown", as the runner writes it. */
	struct case_record bare;
	case_record_fill(&bare, 1, "matmul/cpu/f32");
	bare.params = params_of_key("suite=matmul impl=naive device=cpu dtype=float32 pass=forward "
				    "m=8 n=8 k=8");
	bare.params_json = "{}";
	bare.name = "naive f32";
	bare.warmup = 0;
	bare.iters = 0;
	bare.status = STATUS_UNSUPPORTED;
	bare.reason = "naive has no bf16 kernel";
	bare.max_diff = -1;
	bare.tolerance = -1;
	bare.mem_limit = 0;
	bare.param_bytes = bare.peak_fwd_bytes = bare.peak_bwd_bytes = bare.peak_bytes = -1;
	bare.param_count = 0;
	for (int p = 0; p < PHASE_COUNT; p++)
		bare.flops[p] = bare.bytes[p] = 0;
	bare.started_at[0] = '\0';
	bare.elapsed_ns = 0;
	bare.impl_info = "";   /* "" and NULL are stored as NULL */
	bare.stop_reason = NULL;
	bare.cpu_wait = -1;
	bare.rse = INFINITY;   /* unknown: NULL */

	/* Causal 1 is stored as 1. */
	struct case_record causal;
	case_record_fill(&causal, 2, "attention/flash/bf16/B8/H16/T1024/D64/causal");
	causal.params = params_of_key("suite=attention impl=flash device=cuda dtype=bfloat16 "
				      "pass=forward_backward batch_size=8 heads=16 seq_len=1024 "
				      "head_dim=64 causal=true");

	/* e2e: the model's attention shape fills heads, seq_len, head_dim and causal. */
	struct case_record e2e;
	case_record_fill(&e2e, 3, "e2e/small");
	e2e.params = params_of_key("suite=e2e impl=benchdb device=cpu dtype=float32 pass=train_step "
				   "model=small d_model=768 d_ff=3072 num_layers=12 num_heads=12 "
				   "vocab_size=10000 context_length=128 batch_size=4 attention=naive");

	put_case(db, run, &full, NULL, 0);
	put_case(db, run, &bare, NULL, 0);
	put_case(db, run, &causal, NULL, 0);
	put_case(db, run, &e2e, NULL, 0);

	struct case_row *rows = NULL;
	size_t n = 0;
	struct bd_error err = {0};
	assert_int_equal(db_cases_list(db, run, NULL, &rows, &n, &err), 0);
	assert_int_equal(n, 4);

	const struct case_row *c = &rows[0];
	assert_true(c->id > 0);
	assert_int_equal(c->run_id, run);
	assert_int_equal(c->ord, 0);
	assert_string_equal(c->suite, "attention");
	assert_string_equal(c->impl, "flash");
	assert_string_equal(c->device, "cuda");
	assert_string_equal(c->dtype, "bfloat16");
	assert_string_equal(c->pass, "forward_backward");
	assert_null(c->model);
	assert_int_equal(c->batch_size, 8);
	assert_int_equal(c->heads, 16);
	assert_int_equal(c->seq_len, 1024);
	assert_int_equal(c->head_dim, 64);
	assert_int_equal(c->causal, 0);
	assert_string_equal(c->params_json, full.params_json);
	assert_string_equal(c->case_key, full.case_key);
	assert_string_equal(c->name, full.name);
	assert_int_equal(c->warmup, 2);
	assert_int_equal(c->iters, 4);
	assert_int_equal(c->status, STATUS_OK);
	assert_null(c->reason);
	assert_true(c->max_diff == 0.0078125);
	assert_true(c->tolerance == 0.02);
	assert_int_equal(c->mem_limit, 1073741824);
	assert_int_equal(c->param_bytes, 0);
	assert_int_equal(c->param_count, 128625408);
	assert_int_equal(c->peak_fwd_bytes, 50331648);
	assert_int_equal(c->peak_bwd_bytes, 83886080);
	assert_int_equal(c->peak_bytes, 100663296);
	for (int p = 0; p < PHASE_COUNT; p++) {
		assert_true(c->flops[p] == full.flops[p]);
		assert_true(c->bytes[p] == full.bytes[p]);
	}
	assert_int_equal(c->elapsed_ns, 1234567890);
	assert_string_equal(c->impl_info, full.impl_info);
	assert_string_equal(c->stop_reason, "precision");
	assert_true(c->cpu_wait == 0.125);
	assert_true(c->rse == 0.0042);

	c = &rows[1];
	assert_int_equal(c->ord, 1);
	assert_string_equal(c->suite, "matmul");
	assert_null(c->model);
	assert_int_equal(c->batch_size, 0);
	assert_int_equal(c->heads, 0);
	assert_int_equal(c->seq_len, 0);
	assert_int_equal(c->head_dim, 0);
	assert_int_equal(c->causal, -1);
	assert_string_equal(c->params_json, "{}");
	assert_int_equal(c->warmup, 0);
	assert_int_equal(c->iters, 0);
	assert_int_equal(c->status, STATUS_UNSUPPORTED);
	assert_string_equal(c->reason, "naive has no bf16 kernel");
	assert_true(c->max_diff == -1);
	assert_true(c->tolerance == -1);
	assert_int_equal(c->mem_limit, -1);   /* 0 = none is written as NULL, read as -1 */
	assert_int_equal(c->param_bytes, -1);
	assert_int_equal(c->param_count, -1);   /* 0 = none is written as NULL */
	assert_null(c->impl_info);
	assert_null(c->stop_reason);
	assert_true(c->cpu_wait == -1);
	assert_true(c->rse == -1);
	assert_int_equal(c->peak_fwd_bytes, -1);
	assert_int_equal(c->peak_bwd_bytes, -1);
	assert_int_equal(c->peak_bytes, -1);
	for (int p = 0; p < PHASE_COUNT; p++) {
		assert_true(c->flops[p] == 0);
		assert_true(c->bytes[p] == 0);
	}
	assert_int_equal(c->elapsed_ns, 0);

	assert_int_equal(rows[2].causal, 1);
	c = &rows[3];
	assert_string_equal(c->suite, "e2e");
	assert_string_equal(c->impl, "benchdb");
	assert_string_equal(c->model, "small");
	assert_int_equal(c->batch_size, 4);
	assert_int_equal(c->heads, 12);
	assert_int_equal(c->seq_len, 128);
	assert_int_equal(c->head_dim, 64);
	assert_int_equal(c->causal, 1);
	db_case_rows_free(rows, n);

	/* The suite filter. */
	assert_int_equal(db_cases_list(db, run, "matmul", &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].case_key, "matmul/cpu/f32");
	db_case_rows_free(rows, n);
	assert_int_equal(db_cases_list(db, run, "conv", &rows, &n, &err), 0);
	assert_int_equal(n, 0);
	db_case_rows_free(rows, n);
	close_db(db);

	/* What the sqlite3 shell sees: NULL for "not applicable", not 0 or -1. */
	sqlite3 *h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM cases WHERE ord = 1 AND batch_size IS NULL "
				    "AND causal IS NULL AND model IS NULL AND max_diff IS NULL AND "
				    "mem_limit IS NULL AND peak_bytes IS NULL AND started_at IS NULL"), 1);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM cases WHERE ord = 0 AND causal = 0 AND "
				    "param_bytes = 0"), 1);
	sqlite3_close(h);
}

/* Samples of a case with warmup 2, iters 4, in an order unlike the stored one. */
static const struct sample round_trip_samples[] = {
	{5, 1, 2500}, {0, 0, 9000}, {1, 0, 8000}, {2, 0, 1000}, {3, 0, 1200}, {4, 0, 1400},
	{5, 0, 1800}, {0, 1, 7000}, {1, 1, 6000}, {2, 1, 2000}, {3, 1, 2000}, {4, 1, 2500},
	{1, 2, 50},   {0, 2, 60},   {3, 2, 30},   {2, 2, 40},   {5, 2, 10},   {4, 2, 20},
};
enum { NROUND = sizeof(round_trip_samples) / sizeof(round_trip_samples[0]) };

static void test_db__case_round_trip_keeps_every_sample(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t run = begin_run(db, put_system(db), "ffff0000-0000-4000-8000-000000000001", NULL, NULL);
	struct case_record c;
	case_record_fill(&c, 0, "k0");
	put_case(db, run, &c, round_trip_samples, NROUND);

	struct case_row *rows = NULL;
	size_t n = 0;
	struct bd_error err = {0};
	assert_int_equal(db_cases_list(db, run, NULL, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	int64_t case_id = rows[0].id;
	db_case_rows_free(rows, n);

	struct sample *s = NULL;
	assert_int_equal(db_samples_get(db, case_id, &s, &n, &err), 0);
	assert_int_equal(n, NROUND);
	/* fwd, bwd, opt (not alphabetical), then iter; each sample once with its ns. */
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s[i].phase, (int)(i / 6));
		assert_int_equal(s[i].iter, (int)(i % 6));
		int found = 0;
		for (size_t j = 0; j < NROUND; j++)
			if (round_trip_samples[j].phase == s[i].phase &&
			    round_trip_samples[j].iter == s[i].iter) {
				assert_int_equal(s[i].ns, round_trip_samples[j].ns);
				found = 1;
			}
		assert_true(found);
	}
	free(s);

	/* A case without samples reads back as none. */
	case_record_fill(&c, 1, "k1");
	put_case(db, run, &c, NULL, 0);
	assert_int_equal(db_cases_list(db, run, NULL, &rows, &n, &err), 0);
	case_id = rows[1].id;
	db_case_rows_free(rows, n);
	s = NULL;
	assert_int_equal(db_samples_get(db, case_id, &s, &n, &err), 0);
	assert_int_equal(n, 0);
	free(s);
	close_db(db);
}

static void test_db__case_stats_excludes_warmup_iterations(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t run = begin_run(db, put_system(db), "ffff0000-0000-4000-8000-000000000002", NULL, NULL);
	struct case_record c;
	case_record_fill(&c, 0, "k0");   /* warmup 2 */
	put_case(db, run, &c, round_trip_samples, NROUND);
	/* Another case with other numbers must not leak into the first one's statistics. */
	case_record_fill(&c, 1, "k1");
	c.warmup = 0;
	struct sample other[] = {{0, 0, 1000000}, {1, 0, 3000000}};
	put_case(db, run, &c, other, 2);
	close_db(db);

	/* Measured iterations 2..5:
	 * fwd  1000 1200 1400 1800: mean 1350, sample var (122500+22500+2500+202500)/3
	 * bwd  2000 2000 2500 2500: mean 2250, sample var 4*62500/3
	 * opt    40   30   20   10: mean 25,   sample var (225+25+25+225)/3 */
	struct {
		const char *phase;
		double mean, std;
		int64_t min, max;
	} want[] = {
		{"fwd", 1350, sqrt(350000.0 / 3), 1000, 1800},
		{"bwd", 2250, sqrt(250000.0 / 3), 2000, 2500},
		{"opt", 25, sqrt(500.0 / 3), 10, 40},
	};
	sqlite3 *h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM case_stats"), 4);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char sql[256];
#define STAT(col) (snprintf(sql, sizeof(sql), "SELECT " col " FROM case_stats c JOIN cases k ON " \
				"k.id = c.case_id WHERE k.ord = 0 AND c.phase = '%s'", want[i].phase), sql)
		assert_int_equal(raw_int(h, STAT("n")), 4);
		assert_close(raw_double(h, STAT("mean_ns")), want[i].mean);
		assert_close(raw_double(h, STAT("std_ns")), want[i].std);
		assert_int_equal(raw_int(h, STAT("min_ns")), want[i].min);
		assert_int_equal(raw_int(h, STAT("max_ns")), want[i].max);
		char *key = raw_text(h, STAT("c.case_key"));
		assert_string_equal(key, "k0");
		free(key);
#undef STAT
	}
	assert_close(raw_double(h, "SELECT std_ns FROM case_stats WHERE case_key = 'k1'"),
		     sqrt(2e12));
	/* sample_view marks the warm-up iterations of every phase. */
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sample_view WHERE case_key = 'k0' AND "
				    "is_warmup"), 6);
	assert_int_equal(raw_int(h, "SELECT max(iter) FROM sample_view WHERE case_key = 'k0' AND "
				    "is_warmup"), 1);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM sample_view WHERE case_key = 'k1' AND "
				    "is_warmup"), 0);
	sqlite3_close(h);
}

static void test_db__case_put_that_fails_stores_no_case_and_no_samples(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t run = begin_run(db, put_system(db), "abab0000-0000-4000-8000-000000000001", NULL, NULL);
	struct case_record c;
	case_record_fill(&c, 0, "k0");
	struct sample good[] = {{0, 0, 10}, {1, 0, 11}, {2, 0, 12}};
	put_case(db, run, &c, good, 3);

	/* An invalid phase after two valid samples. */
	case_record_fill(&c, 1, "k1");
	struct sample bad_phase[] = {{0, 0, 10}, {1, 1, 11}, {2, 7, 12}};
	struct bd_error err = {0};
	assert_int_not_equal(db_case_put(db, run, &c, bad_phase, 3, &err), 0);
	assert_true(err.code < 0);
	assert_true(err.msg[0] != '\0');

	/* A duplicate (phase, iter): SQLite itself fails after the case row is in. */
	case_record_fill(&c, 2, "k2");
	struct sample duplicate[] = {{0, 0, 10}, {1, 0, 11}, {1, 0, 12}};
	assert_int_equal(db_case_put(db, run, &c, duplicate, 3, &err), BD_EDB);

	/* A case that violates the schema (status outside the five) stores nothing either. */
	case_record_fill(&c, 3, "k3");
	c.status = STATUS_COUNT;   /* status_name gives "?" */
	assert_int_equal(db_case_put(db, run, &c, good, 3, &err), BD_EDB);

	struct case_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(db_cases_list(db, run, NULL, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].case_key, "k0");
	db_case_rows_free(rows, n);

	/* No transaction was left open: the next case goes in and is visible to others. */
	case_record_fill(&c, 1, "k1");
	put_case(db, run, &c, good, 3);
	sqlite3 *h = raw_open(fx->path);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM cases"), 2);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM samples"), 6);
	assert_int_equal(raw_int(h, "SELECT count(*) FROM cases WHERE case_key IN ('k2', 'k3')"), 0);
	sqlite3_close(h);
	close_db(db);
}

static void test_db__case_put_with_a_bad_phase_says_why(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t run = begin_run(db, put_system(db), "abab0000-0000-4000-8000-000000000002", NULL, NULL);
	struct case_record c;
	case_record_fill(&c, 0, "k0");
	struct sample bad_phase[] = {{0, 0, 10}, {1, 7, 11}};
	struct bd_error err = {0};
	assert_int_not_equal(db_case_put(db, run, &c, bad_phase, 2, &err), 0);
	assert_contains(err.msg, "phase");
	assert_true(mentions_number(err.msg, 7));
	close_db(db);
}

/* ---- run selectors -------------------------------------------------------------------------- */

/* Runs 1..5:
 *   1 label baseline  commit c0ffee00..  uuid 11111111-..
 *   2 label baseline  commit c0ffee00..  uuid 22222222-..   (same commit as 1)
 *   3 label tuned     commit deadbeef01  uuid 33331111-..
 *   4 no label        commit deadbeef02  uuid 33332222-..   (commit shares "deadbeef" with 3)
 *   5 no label        no commit          uuid 44440000-.. */
static struct db *open_with_runs(const char *path)
{
	struct db *db = open_new(path);
	int64_t sys = put_system(db);
	const char *c0ffee = "c0ffee00112233445566778899aabbccddeeff00";
	assert_int_equal(begin_run(db, sys, "11111111-1111-4111-8111-111111111111", "baseline", c0ffee), 1);
	assert_int_equal(begin_run(db, sys, "22222222-2222-4222-8222-222222222222", "baseline", c0ffee), 2);
	assert_int_equal(begin_run(db, sys, "33331111-3333-4333-8333-333333333333", "tuned",
				   "deadbeef01000000000000000000000000000000"), 3);
	assert_int_equal(begin_run(db, sys, "33332222-3333-4333-8333-333333333333", NULL,
				   "deadbeef02000000000000000000000000000000"), 4);
	assert_int_equal(begin_run(db, sys, "44440000-4444-4444-8444-444444444444", NULL, NULL), 5);
	return db;
}

static int64_t resolve_ok(struct db *db, const char *sel)
{
	int64_t id = -1;
	struct bd_error err = {0};
	int rc = db_run_resolve(db, sel, &id, &err);
	if (rc)
		fail_msg("db_run_resolve('%s') = %d: %s", sel, rc, err.msg);
	return id;
}

static void test_db__run_resolve_finds_latest_id_uuid_label_and_commit(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_with_runs(fx->path);
	assert_int_equal(resolve_ok(db, "latest"), 5);
	assert_int_equal(resolve_ok(db, "1"), 1);
	assert_int_equal(resolve_ok(db, "3"), 3);
	/* uuid prefixes, also ones made only of digits that are no run id */
	assert_int_equal(resolve_ok(db, "2222"), 2);
	assert_int_equal(resolve_ok(db, "333322"), 4);
	assert_int_equal(resolve_ok(db, "44440000-4444"), 5);
	assert_int_equal(resolve_ok(db, "11111111-1111-4111-8111-111111111111"), 1);
	/* labels match exactly; the latest run of a label wins */
	assert_int_equal(resolve_ok(db, "baseline"), 2);
	assert_int_equal(resolve_ok(db, "tuned"), 3);
	/* commit prefixes; the latest run of the commit wins */
	assert_int_equal(resolve_ok(db, "c0ffee"), 2);
	assert_int_equal(resolve_ok(db, "c0ffee00112233445566778899aabbccddeeff00"), 2);
	assert_int_equal(resolve_ok(db, "deadbeef01"), 3);
	assert_int_equal(resolve_ok(db, "deadbeef02"), 4);

	/* "latest" follows new runs. */
	int64_t six = begin_run(db, 1, "55550000-5555-4555-8555-555555555555", "baseline", NULL);
	assert_int_equal(resolve_ok(db, "latest"), six);
	assert_int_equal(resolve_ok(db, "baseline"), six);
	close_db(db);
}

static void test_db__run_resolve_refuses_a_prefix_of_several_commits_or_uuids(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_with_runs(fx->path);
	int64_t id = -1;
	struct bd_error err = {0};
	assert_int_equal(db_run_resolve(db, "deadbeef", &id, &err), BD_EINVAL);
	assert_contains(err.msg, "several git commits");
	assert_contains(err.msg, "deadbeef");
	assert_int_equal(id, -1);

	memset(&err, 0, sizeof(err));
	assert_int_equal(db_run_resolve(db, "3333", &id, &err), BD_EINVAL);
	assert_contains(err.msg, "ambiguous");
	assert_contains(err.msg, "3333");
	assert_int_equal(id, -1);
	close_db(db);
}

static void test_db__run_resolve_of_an_unknown_selector_lists_the_kinds(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_with_runs(fx->path);
	const char *unknown[] = {"nosuchrun", "99", "base", "Baseline", "c0ffee01", "abc", "0", "-1", ""};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		int64_t id = -1;
		struct bd_error err = {0};
		int rc = db_run_resolve(db, unknown[i], &id, &err);
		if (rc != BD_ENOTFOUND)
			fail_msg("db_run_resolve('%s') = %d (id %lld), want BD_ENOTFOUND", unknown[i], rc,
				 (long long)id);
		assert_int_equal(id, -1);
		assert_contains(err.msg, unknown[i]);
		assert_contains(err.msg, "run id");
		assert_contains(err.msg, "uuid");
		assert_contains(err.msg, "label");
		assert_contains(err.msg, "git commit");
		assert_contains(err.msg, "latest");
	}
	close_db(db);
}

static void test_db__run_resolve_latest_in_an_empty_database_is_not_found(void **state)
{
	struct fixture *fx = *state;
	struct db *db = open_new(fx->path);
	int64_t id = -1;
	struct bd_error err = {0};
	assert_int_equal(db_run_resolve(db, "latest", &id, &err), BD_ENOTFOUND);
	assert_int_equal(id, -1);
	assert_contains(err.msg, "no runs");
	assert_int_equal(db_run_resolve(db, "1", &id, &err), BD_ENOTFOUND);
	close_db(db);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_db__create_makes_a_latest_schema_file_in_wal_mode),
		T(test_db__connection_enforces_foreign_keys),
		T(test_db__deleting_a_run_cascades_to_its_cases_and_samples),
		T(test_db__two_connections_to_one_file_both_write),
		T(test_db__open_of_a_new_file_another_runner_creates_meanwhile_succeeds),
		T(test_db__write_waits_for_another_writer_instead_of_failing_busy),
		T(test_db__open_without_create_on_a_missing_file_is_not_found),
		T(test_db__open_of_a_text_file_fails_with_a_clear_message),
		T(test_db__open_migrates_a_version_1_file_and_keeps_its_rows),
		T(test_db__open_refuses_a_newer_file_and_leaves_it_unchanged),
		T(test_db__failed_migration_is_rolled_back_and_keeps_the_file_at_its_version),
		T(test_db__migration_failing_at_its_second_step_names_schema_2),
		T(test_db__migration_failing_at_a_later_step_leaves_the_file_as_it_was),
		T(test_db__open_refuses_a_foreign_sqlite_file_and_leaves_it_unchanged),
		T(test_db__system_put_of_the_same_info_gives_the_same_id),
		T(test_db__system_put_with_any_changed_field_gives_a_new_id),
		T(test_db__system_put_with_changed_gpu_clocks_gives_a_new_id),
		T(test_db__run_begin_and_end_set_status_and_times),
		T(test_db__case_round_trip_keeps_every_field),
		T(test_db__case_round_trip_keeps_every_sample),
		T(test_db__case_stats_excludes_warmup_iterations),
		T(test_db__case_put_that_fails_stores_no_case_and_no_samples),
		T(test_db__case_put_with_a_bad_phase_says_why),
		T(test_db__run_resolve_finds_latest_id_uuid_label_and_commit),
		T(test_db__run_resolve_refuses_a_prefix_of_several_commits_or_uuids),
		T(test_db__run_resolve_of_an_unknown_selector_lists_the_kinds),
		T(test_db__run_resolve_latest_in_an_empty_database_is_not_found),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
