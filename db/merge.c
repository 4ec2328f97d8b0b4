/* db/merge.c: `runner merge` — import the runs of other benchdb databases (one per node or per
 * shard) into one. Runs keep their uuid, so importing a run twice changes nothing; systems are
 * matched by fingerprint; a case is matched by (run, ord) and a sample by (case, phase, iter), so
 * an input that has grown since it was last merged (a run that was still going) adds only what is
 * new. The input is never written: it is copied with SQLite's backup API, the copy is migrated to
 * this build's schema by db_open, attached, and deleted afterwards. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_internal.h"
#include "strbuf.h"

static int merge_fail(sqlite3 *h, struct bd_error *err, const char *path, const char *what)
{
	return bd_fail_at(err, BD_EDB, path, 0, 0, "%s: %s", what, sqlite3_errmsg(h));
}

/* The first column of the first row of sql (an integer), or fallback. */
static int64_t query_i64(sqlite3 *h, const char *sql, int64_t fallback)
{
	sqlite3_stmt *st = NULL;
	int64_t v = fallback;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Check that in_path is a benchdb database this build can read, and copy it to copy_path
 * (a new file). BD_EINVAL: not benchdb's; BD_EVERSION: newer than this build. */
static int copy_input(const char *in_path, const char *copy_path, struct bd_error *err)
{
	sqlite3 *in = NULL, *copy = NULL;
	sqlite3_backup *b = NULL;
	int rc = 0;
	if (sqlite3_open_v2(in_path, &in, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		rc = bd_fail_at(err, BD_EINVAL, in_path, 0, 0, "cannot open: %s",
				in ? sqlite3_errmsg(in) : "out of memory");
		goto done;
	}
	sqlite3_busy_timeout(in, 10000);
	int64_t version = query_i64(in, "PRAGMA user_version", -1);
	int64_t tables = query_i64(in, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
				       "name IN ('systems', 'runs', 'cases', 'samples')", -1);
	if (version < 0) {
		rc = bd_fail_at(err, BD_EINVAL, in_path, 0, 0, "not a benchdb database: %s",
				sqlite3_errmsg(in));
		goto done;
	}
	if (version == 0 || tables != 4) {
		rc = bd_fail_at(err, BD_EINVAL, in_path, 0, 0,
				"not a benchdb database (no benchdb schema version or tables)");
		goto done;
	}
	if (version > db_schema_latest()) {
		rc = bd_fail_at(err, BD_EVERSION, in_path, 0, 0,
				"database schema version %lld is newer than this benchdb supports (%d); "
				"merge with a newer benchdb", (long long)version, db_schema_latest());
		goto done;
	}
	if (sqlite3_open_v2(copy_path, &copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
		    SQLITE_OK ||
	    !(b = sqlite3_backup_init(copy, "main", in, "main"))) {
		rc = merge_fail(copy, err, copy_path, "cannot copy the input");
		goto done;
	}
	int s = sqlite3_backup_step(b, -1);
	if (s != SQLITE_DONE)
		rc = bd_fail_at(err, BD_EDB, in_path, 0, 0, "cannot copy the input: %s",
				sqlite3_errstr(s));
done:
	if (b)
		sqlite3_backup_finish(b);
	sqlite3_close(copy);
	sqlite3_close(in);
	return rc;
}

/* The columns of main's table, but id, as "a, b, c" (prefix before each name) into sb; the
 * column named swap is written as swap_expr instead. */
static int column_list(sqlite3 *h, const char *table, const char *prefix, const char *swap,
		       const char *swap_expr, struct strbuf *sb)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	int n = 0;
	snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s', 'main')", table);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (!name || !strcmp(name, "id"))
			continue;
		if (n++)
			sb_add(sb, ", ");
		if (swap && !strcmp(name, swap))
			sb_add(sb, swap_expr);
		else
			sb_addf(sb, "%s\"%s\"", prefix, name);
	}
	sqlite3_finalize(st);
	return n ? 0 : -1;
}

/* INSERT OR IGNORE INTO main.table (its columns) SELECT (the same, one swapped) FROM src.table. */
static int import_table(sqlite3 *h, const char *table, const char *swap, const char *swap_expr,
			int64_t *added)
{
	struct strbuf into = STRBUF_INIT, from = STRBUF_INIT, sql = STRBUF_INIT;
	int rc = SQLITE_ERROR;
	if (column_list(h, table, "", NULL, NULL, &into) ||
	    column_list(h, table, "x.", swap, swap_expr, &from))
		goto done;
	sb_addf(&sql, "INSERT OR IGNORE INTO main.%s (%s) SELECT %s FROM src.%s x ORDER BY x.id", table,
		sb_str(&into), sb_str(&from), table);
	rc = sqlite3_exec(h, sb_str(&sql), NULL, NULL, NULL);
	*added = sqlite3_changes(h);
done:
	sb_free(&into);
	sb_free(&from);
	sb_free(&sql);
	return rc;
}

static int exec_changes(sqlite3 *h, const char *sql, int64_t *changes)
{
	int rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
	if (changes)
		*changes = sqlite3_changes(h);
	return rc;
}

/* The import itself, into main from the attached src, inside one transaction. */
static int import_all(sqlite3 *h, struct db_merge_counts *n)
{
	/* parents first; a child's reference to its parent is mapped through the parent's stable
	 * key (fingerprint, uuid) */
	const struct {
		const char *table, *parent_column, *parent_id;
		int64_t *added;
	} tables[] = {
		{"systems", NULL, NULL, &n->systems},
		{"runs", "system_id",
		 "(SELECT m.id FROM main.systems m JOIN src.systems s ON s.fingerprint = m.fingerprint "
		 "WHERE s.id = x.system_id)", &n->runs},
		{"cases", "run_id",
		 "(SELECT m.id FROM main.runs m JOIN src.runs s ON s.uuid = m.uuid WHERE s.id = x.run_id)",
		 &n->cases},
	};
	int rc = SQLITE_OK;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]) && rc == SQLITE_OK; i++)
		rc = import_table(h, tables[i].table, tables[i].parent_column, tables[i].parent_id,
				  tables[i].added);
	if (rc == SQLITE_OK)
		rc = exec_changes(h,
			"INSERT OR IGNORE INTO main.samples (case_id, phase, iter, ns) "
			"SELECT mc.id, s.phase, s.iter, s.ns FROM src.samples s "
			"JOIN src.cases sc ON sc.id = s.case_id JOIN src.runs sr ON sr.id = sc.run_id "
			"JOIN main.runs mr ON mr.uuid = sr.uuid "
			"JOIN main.cases mc ON mc.run_id = mr.id AND mc.ord = sc.ord",
			&n->samples);
	/* a run that was still going when an earlier merge took it has finished since */
	if (rc == SQLITE_OK)
		rc = exec_changes(h,
			"UPDATE main.runs SET status = s.status, ended_at = s.ended_at FROM src.runs s "
			"WHERE s.uuid = main.runs.uuid AND main.runs.status = 'running' "
			"AND s.status <> 'running'", NULL);
	if (rc == SQLITE_OK)
		n->runs_present = query_i64(h, "SELECT count(*) FROM src.runs", 0) - n->runs;
	return rc;
}

static void remove_copy(const char *path)
{
	char side[PATH_MAX + 8];
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

int db_merge(struct db *db, const char *in_path, struct db_merge_counts *counts,
	     struct bd_error *err)
{
	sqlite3 *h = db_sqlite(db);
	char copy_path[PATH_MAX] = "";
	struct db *copy = NULL;
	sqlite3_stmt *attach = NULL;
	int rc = 0, attached = 0, fd;
	struct stat in_stat, out_stat;
	memset(counts, 0, sizeof(*counts));
	if (stat(in_path, &in_stat) != 0)
		return bd_fail_at(err, BD_ENOTFOUND, in_path, 0, 0, "no such file");
	const char *out_path = sqlite3_db_filename(h, "main");
	if (out_path && stat(out_path, &out_stat) == 0 && out_stat.st_dev == in_stat.st_dev &&
	    out_stat.st_ino == in_stat.st_ino)
		return bd_fail_at(err, BD_EINVAL, in_path, 0, 0, "is the output database itself");
	const char *tmp = getenv("TMPDIR");
	snprintf(copy_path, sizeof(copy_path), "%s/benchdb-merge-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(copy_path)) < 0) {
		copy_path[0] = '\0';
		rc = bd_fail_at(err, BD_EIO, copy_path, 0, 0, "cannot create a temporary copy");
		goto done;
	}
	close(fd);
	if ((rc = copy_input(in_path, copy_path, err)))
		goto done;
	/* migrate the copy to this build's schema */
	if ((rc = db_open(copy_path, 0, &copy, err))) {
		char msg[sizeof(err->msg)];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		rc = bd_fail_at(err, rc, in_path, 0, 0, "cannot bring it to this schema: %s", msg);
		goto done;
	}
	db_close(copy);
	copy = NULL;
	int s = sqlite3_prepare_v2(h, "ATTACH DATABASE ?1 AS src", -1, &attach, NULL);
	if (s == SQLITE_OK)
		s = sqlite3_bind_text(attach, 1, copy_path, -1, SQLITE_TRANSIENT);
	if (s == SQLITE_OK)
		s = sqlite3_step(attach) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	if (s != SQLITE_OK) {
		rc = merge_fail(h, err, in_path, "cannot attach the input");
		goto done;
	}
	attached = 1;
	if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = merge_fail(h, err, in_path, "cannot lock the output");
		goto done;
	}
	if (import_all(h, counts) != SQLITE_OK) {
		rc = merge_fail(h, err, in_path, "cannot import");
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
		memset(counts, 0, sizeof(*counts));
		goto done;
	}
	if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = merge_fail(h, err, in_path, "cannot commit the import");
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	}
done:
	sqlite3_finalize(attach);
	if (attached)
		sqlite3_exec(h, "DETACH DATABASE src", NULL, NULL, NULL);
	db_close(copy);
	if (copy_path[0])
		remove_copy(copy_path);
	return rc;
}
