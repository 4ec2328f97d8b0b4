/* db/db_readonly.c: opening a database for reading only (report). docs/design.md, "The
 * database": report opens databases read-only and never changes a file — no journal-mode change, no
 * migration, no -wal/-shm left behind by the reader, and it works on a read-only file and
 * directory.
 *
 * SQLite's own read-only mode still creates <db>-wal and <db>-shm for a WAL database (owned by
 * the reader, which can lock the owner's runner out) and cannot open one in a read-only
 * directory. So: a WAL database with no -wal file (no writer has it open, nothing uncheckpointed)
 * is opened `immutable=1` — no locks, no side files; one with a -wal file (a runner is writing,
 * or was killed) is opened read-only through the existing side files, which is the only way to
 * see what the -wal holds. Where SQLite cannot do that (a read-only directory or medium), or
 * would have to create the -shm (a -wal copied without it), the file and its -wal are copied into
 * a private temporary directory, read there into memory, and the copies deleted at once. */
#include "db_readonly.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"

#define HEADER_MAGIC "SQLite format 3"

static int exists(const char *path, const char *suffix)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s%s", path, suffix);
	struct stat sb;
	int yes = lstat(sb_str(&p), &sb) == 0;
	sb_free(&p);
	return yes;
}

/* "file:" URI of path with immutable=1 (RFC 3986: everything but unreserved bytes and '/'
 * percent-encoded, so '?', '#' and '%' in a file name stay part of it). */
static void immutable_uri(const char *path, struct strbuf *uri)
{
	sb_add(uri, "file:");
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    strchr("/-._~", *s))
			sb_addf(uri, "%c", *s);
		else
			sb_addf(uri, "%%%02X", *s);
	}
	sb_add(uri, "?immutable=1");
}

/* Copy the file from to the new file to; a failure names what failed (errno kept). */
static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int rc = -1, in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
	if (in < 0 || (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		goto done;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto done;
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				if (w == 0)
					errno = EIO;
				goto done;
			}
			off += w;
		}
	}
	rc = 0;
done:;
	int saved = errno;
	if (out >= 0 && close(out) != 0 && !rc) {
		rc = -1;
		saved = errno;
	}
	if (in >= 0)
		close(in);
	errno = saved;
	return rc;
}

/* The WAL database at path (with its -wal) into an in-memory database *out, read through a copy of
 * both in a private temporary directory ($TMPDIR, else /tmp), deleted before this returns. */
static int read_through_copy(const char *path, sqlite3 **out, struct bd_error *err)
{
	const char *tmp = getenv("TMPDIR");
	struct strbuf dir = STRBUF_INIT, copy = STRBUF_INIT, side = STRBUF_INIT;
	sqlite3 *c = NULL, *m = NULL;
	sqlite3_backup *b = NULL;
	int rc = 0;
	*out = NULL;
	/* an interrupt waits until the copies are gone (a kill -9 would still leave them) */
	sigset_t stop, was;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &stop, &was);
	sb_addf(&dir, "%s/benchdb-read-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir.buf)) {
		rc = bd_fail_at(err, BD_EIO, path, 0, 0, "its -wal cannot be read in place (a read-only "
				"directory?) and no private copy can be made in '%s': %s",
				tmp && *tmp ? tmp : "/tmp", strerror(errno));
		sb_reset(&dir);
		goto done;
	}
	sb_addf(&copy, "%s/copy.db", sb_str(&dir));
	sb_addf(&side, "%s-wal", sb_str(&copy));
	struct strbuf wal = STRBUF_INIT;
	sb_addf(&wal, "%s-wal", path);
	int copied = !copy_file(path, sb_str(&copy)) && !copy_file(sb_str(&wal), sb_str(&side));
	int saved = errno;
	sb_free(&wal);
	if (!copied) {
		rc = bd_fail_at(err, BD_EIO, path, 0, 0, "its -wal cannot be read in place (a read-only "
				"directory?) and copying it to the temporary directory '%s' failed: %s",
				tmp && *tmp ? tmp : "/tmp", strerror(saved));
		goto done;
	}
	int s = sqlite3_open_v2(sb_str(&copy), &c, SQLITE_OPEN_READONLY, NULL);
	if (s == SQLITE_OK)
		s = sqlite3_open(":memory:", &m);
	if (s == SQLITE_OK && !(b = sqlite3_backup_init(m, "main", c, "main")))
		s = sqlite3_errcode(m);
	if (s == SQLITE_OK && (s = sqlite3_backup_step(b, -1)) == SQLITE_DONE)
		s = SQLITE_OK;
	if (b)
		sqlite3_backup_finish(b);
	if (s != SQLITE_OK) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0, "cannot read it through a copy: %s",
				sqlite3_errstr(s));
		goto done;
	}
	*out = m;
	m = NULL;
done:
	sqlite3_close(c);
	sqlite3_close(m);
	if (dir.len) {   /* the copy, its -wal and the -shm SQLite made beside them */
		unlink(sb_str(&side));
		memcpy(side.buf + side.len - 3, "shm", 3);   /* "-wal" -> "-shm" */
		unlink(sb_str(&side));
		unlink(sb_str(&copy));
		rmdir(sb_str(&dir));
	}
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	sb_free(&dir);
	sb_free(&copy);
	sb_free(&side);
	return rc;
}

int db_readonly_open(const char *path, sqlite3 **out, struct bd_error *err)
{
	int rc = 0, fd = -1;
	sqlite3 *h = NULL;
	struct strbuf uri = STRBUF_INIT;
	unsigned char header[100];
	*out = NULL;

	struct stat sb;
	if (stat(path, &sb) != 0) {
		if (errno == ENOENT)
			rc = bd_fail_at(err, BD_ENOTFOUND, path, 0, 0,
					"no such database (run `runner run SWEEP.yaml` first, or pass "
					"--db PATH)");
		else
			rc = bd_fail_at(err, BD_EDB, path, 0, 0, "cannot open database: %s",
					strerror(errno));
		goto done;
	}
	if (!S_ISREG(sb.st_mode)) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0, "not a benchdb database: not a regular file");
		goto done;
	}
	if (sb.st_size == 0) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0, "not a benchdb database: the file is empty");
		goto done;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0, "cannot open database: %s", strerror(errno));
		goto done;
	}
	ssize_t got = read(fd, header, sizeof(header));
	if (got < (ssize_t)sizeof(header) || memcmp(header, HEADER_MAGIC, sizeof(HEADER_MAGIC))) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0,
				"not a benchdb database: not an SQLite 3 file");
		goto done;
	}
	/* Bytes 18 and 19: file format read/write versions, 2 = WAL. */
	int wal = header[18] == 2 || header[19] == 2;
	int flags = SQLITE_OPEN_READONLY;
	if (wal && exists(path, "-wal") && !exists(path, "-shm")) {
		/* a -wal without its -shm (copied alone): SQLite would create the -shm beside it,
		 * where a writable directory lets it */
		rc = read_through_copy(path, &h, err);
		goto opened;
	}
	if (wal && !exists(path, "-wal")) {
		immutable_uri(path, &uri);
		flags |= SQLITE_OPEN_URI;
	} else {
		sb_add(&uri, path);
	}
	if (sqlite3_open_v2(sb_str(&uri), &h, flags, NULL) != SQLITE_OK) {
		rc = bd_fail_at(err, BD_EDB, path, 0, 0, "cannot open database: %s",
				h ? sqlite3_errmsg(h) : "out of memory");
		goto done;
	}
	sqlite3_extended_result_codes(h, 1);
	if (!(flags & SQLITE_OPEN_URI) && wal) {
		/* the -wal is read through the -shm, which SQLite may be unable to make here */
		int s = sqlite3_exec(h, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
		int primary = s & 0xff;
		if (primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY || primary == SQLITE_IOERR) {
			sqlite3_close(h);
			h = NULL;
			rc = read_through_copy(path, &h, err);
		}
	}
opened:
	if (rc)
		goto done;
	sqlite3_exec(h, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
	*out = h;
	h = NULL;
done:
	if (fd >= 0)
		close(fd);
	sqlite3_close(h);
	sb_free(&uri);
	return rc;
}

/* Columns that migrations after 001 added: an older file lacks them, and reading it shows them
 * as NULL (blank) through a temporary view of the same name. Temporary objects live in this
 * connection's memory and shadow main's for unqualified names; the file is not touched. */
static const struct added_column {
	const char *table, *column;
	int since;   /* schema version that added it */
} added_columns[] = {
	{"cases", "grad_bytes", 3},
	{"cases", "optim_bytes", 3},
	{"cases", "activation_bytes", 3},
	{"cases", "workspace_bytes", 3},
	{"cases", "param_count", 4},
	{"runs", "group_id", 5},
	{"runs", "shard_index", 5},
	{"runs", "shard_count", 5},
	{"cases", "gpu_temp_c", 6},
	{"cases", "gpu_sm_clock_mhz", 6},
	{"cases", "gpu_throttle", 6},
	{"runs", "host", 7},
	{"runs", "pid", 7},
	{"runs", "heartbeat_at", 7},
	{"cases", "impl_info", 8},
	{"cases", "stop_reason", 8},
	{"cases", "cpu_wait", 9},
	{"runs", "mem_limit", 11},
	{"runs", "mem_limit_source", 11},
	{"runs", "resumes", 11},
	{"cases", "rse", 12},
};

int db_readonly_shim(sqlite3 *h, const char *path, int version, struct bd_error *err)
{
	static const char *const tables[] = {"runs", "cases"};
	int rc = 0;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]) && !rc; t++) {
		struct strbuf sql = STRBUF_INIT;
		int extra = 0;
		sb_addf(&sql, "CREATE TEMP VIEW %s AS SELECT *", tables[t]);
		for (size_t i = 0; i < sizeof(added_columns) / sizeof(added_columns[0]); i++) {
			const struct added_column *a = &added_columns[i];
			if (strcmp(a->table, tables[t]) || a->since <= version)
				continue;
			sb_addf(&sql, ", NULL AS %s", a->column);
			extra++;
		}
		sb_addf(&sql, " FROM main.%s", tables[t]);
		char *msg = NULL;
		if (extra && sqlite3_exec(h, sb_str(&sql), NULL, NULL, &msg) != SQLITE_OK)
			rc = bd_fail_at(err, BD_EVERSION, path, 0, 0,
					"database schema version %d cannot be read as it is (%s); "
					"upgrade it with `runner migrate --db %s`",
					version, msg ? msg : "sqlite error", path);
		sqlite3_free(msg);
		sb_free(&sql);
	}
	return rc;
}
