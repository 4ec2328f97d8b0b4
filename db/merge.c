/* db/merge.c: `runner merge` — import the runs of other benchdb databases (one per node or per
 * shard) into one. Runs keep their uuid, so importing a run twice changes nothing; systems are
 * matched by fingerprint; a case is matched by (run, ord), so an input that has grown since it
 * was last merged (a run that was still going) adds only its new cases, each with all of its
 * samples. A uuid is not trusted alone: a run of the input whose uuid the output holds must be
 * the same run — same sweep, start, machine, shard, group, label, one record of resumes extending
 * the other, and every case both hold with the same key, status, iterations and samples — or it
 * is refused with what differs (two copies of one database, each resumed, hold two runs under one
 * uuid). The input is never written: it is copied with SQLite's backup API, the copy is checked
 * (PRAGMA integrity_check and foreign_key_check: a damaged input is refused whole), migrated to
 * this build's schema by db_open, attached, and deleted afterwards. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
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

/* SQLite's progress callback: a non-zero return interrupts the statement (an import stopped by a
 * signal rolls back). */
static int stop_requested(void *stop)
{
	return *(const volatile sig_atomic_t *)stop != 0;
}

/* A row of the tables the merge imports whose parent is missing (a run without its system, a case
 * without its run, samples without their case: foreign keys off while the file was edited) would
 * be dropped by the import — a run's system id mapped to NULL — and the rest merged with exit
 * 0: such an input is refused. */
static int check_references(sqlite3 *copy, const char *in_path, struct bd_error *err)
{
	static const char *const tables[] = {"runs", "cases", "samples"};
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		sqlite3_stmt *st = NULL;
		char sql[64];
		int rc = 0;
		snprintf(sql, sizeof(sql), "PRAGMA foreign_key_check(%s)", tables[t]);
		int s = sqlite3_prepare_v2(copy, sql, -1, &st, NULL);
		if (s == SQLITE_OK && (s = sqlite3_step(st)) == SQLITE_ROW) {
			const char *parent = (const char *)sqlite3_column_text(st, 2);
			if (sqlite3_column_type(st, 1) == SQLITE_NULL)
				rc = bd_fail_at(err, BD_EDB, in_path, 0, 0, "damaged: a row of %s refers "
						"to a %s row it does not hold; nothing of it merged",
						tables[t], parent ? parent : "?");
			else
				rc = bd_fail_at(err, BD_EDB, in_path, 0, 0, "damaged: %s row %lld refers "
						"to a %s row it does not hold; nothing of it merged",
						tables[t], (long long)sqlite3_column_int64(st, 1),
						parent ? parent : "?");
		} else if ((s & 0xff) == SQLITE_INTERRUPT) {
			rc = bd_fail_at(err, BD_EINTR, in_path, 0, 0, "interrupted while checking it");
		} else if (s != SQLITE_DONE) {
			rc = bd_fail_at(err, BD_EDB, in_path, 0, 0, "damaged: cannot check its %s: %s",
					tables[t], sqlite3_errmsg(copy));
		}
		sqlite3_finalize(st);
		if (rc)
			return rc;
	}
	return 0;
}

/* The copy's pages, checked before anything is read from them: a damaged input (a torn page, a
 * row its constraints forbid, an index that lost rows) would otherwise give an import that looks
 * whole and is not — rows SQLite cannot reach are skipped, a case whose status a CHECK refuses is
 * ignored with its samples — and exit 0. */
static int check_copy(sqlite3 *copy, const char *in_path, const volatile sig_atomic_t *stop,
		      struct bd_error *err)
{
	sqlite3_stmt *st = NULL;
	char first[256] = "", why[256] = "";
	sqlite3_progress_handler(copy, 1000, stop_requested, (void *)stop);
	int s = sqlite3_prepare_v2(copy, "PRAGMA integrity_check(1)", -1, &st, NULL);
	if (s == SQLITE_OK && (s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 0);
		snprintf(first, sizeof(first), "%s", text ? text : "");
		s = SQLITE_OK;
	}
	if (s != SQLITE_OK)
		snprintf(why, sizeof(why), "%s", sqlite3_errmsg(copy));
	sqlite3_finalize(st);
	sqlite3_progress_handler(copy, 0, NULL, NULL);
	if (*stop)
		return bd_fail_at(err, BD_EINTR, in_path, 0, 0, "interrupted while checking it");
	if (s != SQLITE_OK)
		return bd_fail_at(err, BD_EDB, in_path, 0, 0, "damaged: %s; nothing of it merged", why);
	if (strcmp(first, "ok")) {
		for (char *c = first; *c; c++)   /* one line: SQLite's report may span several */
			if (*c == '\n' || *c == '\r' || *c == '\t')
				*c = ' ';
		return bd_fail_at(err, BD_EDB, in_path, 0, 0, "damaged (PRAGMA integrity_check: %s); "
				  "nothing of it merged", first);
	}
	sqlite3_progress_handler(copy, 1000, stop_requested, (void *)stop);
	int rc = check_references(copy, in_path, err);
	sqlite3_progress_handler(copy, 0, NULL, NULL);
	return rc;
}

/* Check that in_path is a benchdb database this build can read, and copy it to copy_path (a new
 * file). It is read as report reads (db_open DB_READONLY): never written, a read-only file or
 * medium is fine, and a file that is not a benchdb database, or not a regular file (a FIFO
 * would block the open), is refused by name. */
static int copy_input(const char *in_path, const char *copy_path, const char *tmpdir,
		      const volatile sig_atomic_t *stop, struct bd_error *err)
{
	struct db *in = NULL;
	sqlite3 *copy = NULL;
	sqlite3_backup *b = NULL;
	int rc = db_open(in_path, DB_READONLY, &in, err);
	if (rc)
		return rc == BD_ENOTFOUND || rc == BD_EVERSION ? rc : BD_EINVAL;
	if (sqlite3_open_v2(copy_path, &copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
		    SQLITE_OK ||
	    !(b = sqlite3_backup_init(copy, "main", db_sqlite(in), "main"))) {
		rc = merge_fail(copy, err, copy_path, "cannot copy the input");
		goto done;
	}
	int s;
	do   /* a few pages at a time, so that an interrupt is seen */
		s = sqlite3_backup_step(b, 256);
	while ((s == SQLITE_OK || s == SQLITE_BUSY || s == SQLITE_LOCKED) && !*stop);
	sqlite3_backup_finish(b);   /* the copy is complete (or abandoned) before it is read */
	b = NULL;
	if (*stop)
		rc = bd_fail_at(err, BD_EINTR, in_path, 0, 0, "interrupted while copying it");
	else if (s != SQLITE_DONE)
		rc = bd_fail_at(err, BD_EIO, in_path, 0, 0, "cannot copy it into the temporary "
				"directory '%s': %s (free space there, or point TMPDIR elsewhere)",
				tmpdir, sqlite3_errstr(s));
	else
		rc = check_copy(copy, in_path, stop, err);
done:
	if (b)
		sqlite3_backup_finish(b);
	sqlite3_close(copy);
	db_close(in);
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

/* INSERT OR IGNORE INTO main.table (its columns) SELECT (the same, one swapped) FROM src.table x
 * WHERE where. */
static int import_table(sqlite3 *h, const char *table, const char *swap, const char *swap_expr,
			const char *where, int64_t *added)
{
	struct strbuf into = STRBUF_INIT, from = STRBUF_INIT, sql = STRBUF_INIT;
	int rc = SQLITE_ERROR;
	if (column_list(h, table, "", NULL, NULL, &into) ||
	    column_list(h, table, "x.", swap, swap_expr, &from))
		goto done;
	sb_addf(&sql, "INSERT OR IGNORE INTO main.%s (%s) SELECT %s FROM src.%s x WHERE %s ORDER BY x.id",
		table, sb_str(&into), sb_str(&from), table, where);
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

/* Append why to the refusal of run uuid (temp.merge_refused). */
static int refuse(sqlite3 *h, const char *uuid, const char *why)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h,
		"INSERT INTO temp.merge_refused (uuid, why) VALUES (?1, ?2) ON CONFLICT (uuid) DO "
		"UPDATE SET why = why || '; ' || excluded.why", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, uuid, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, why, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(h);
	sqlite3_finalize(st);
	return rc;
}

/* Runs of the input whose uuid the output already holds, but which are not the same run: their
 * identity (sweep, start, machine, shard, group, label) or a case both hold (key, status,
 * iterations, samples) differs — two copies of one database resumed apart, say. Each goes into
 * temp.merge_refused with what differs; the rest of the input is imported. */
static int find_conflicts(sqlite3 *h)
{
	static const char *const run_fields[] = {
		"the sweep text", "the start time", "the machine", "the shard", "the group", "the label",
		"the build", "the resumes"};
	sqlite3_stmt *st = NULL;
	struct strbuf why = STRBUF_INIT;
	char uuid[40] = "";
	int rc = sqlite3_prepare_v2(h,
		"SELECT s.uuid, s.sweep_hash IS NOT m.sweep_hash, s.started_at IS NOT m.started_at, "
		"ss.fingerprint IS NOT ms.fingerprint, "
		"s.shard_index IS NOT m.shard_index OR s.shard_count IS NOT m.shard_count, "
		"s.group_id IS NOT m.group_id, s.label IS NOT m.label, "
		"s.git_commit IS NOT m.git_commit OR s.git_dirty IS NOT m.git_dirty, "
		/* one record of resumes extends the other (a line each), or the two copies were
		 * resumed apart: their cases are two continuations, even where none overlaps; and
		 * the copy with the shorter record holds no case the other lacks, or it went on
		 * after the other was resumed (a runner still going when its database was copied
		 * and resumed elsewhere) */
		"NOT (coalesce(s.resumes, '') = coalesce(m.resumes, '') OR s.resumes IS NULL "
		"OR m.resumes IS NULL "
		"OR substr(m.resumes, 1, length(s.resumes) + 1) = s.resumes || char(10) "
		"OR substr(s.resumes, 1, length(m.resumes) + 1) = m.resumes || char(10)) "
		"OR (length(coalesce(s.resumes, '')) < length(coalesce(m.resumes, '')) AND EXISTS "
		"(SELECT 1 FROM src.cases sc WHERE sc.run_id = s.id AND NOT EXISTS (SELECT 1 FROM "
		"main.cases mc WHERE mc.run_id = m.id AND mc.ord = sc.ord))) "
		"OR (length(coalesce(m.resumes, '')) < length(coalesce(s.resumes, '')) AND EXISTS "
		"(SELECT 1 FROM main.cases mc WHERE mc.run_id = m.id AND NOT EXISTS (SELECT 1 FROM "
		"src.cases sc WHERE sc.run_id = s.id AND sc.ord = mc.ord))) "
		"FROM src.runs s JOIN main.runs m ON m.uuid = s.uuid "
		"LEFT JOIN src.systems ss ON ss.id = s.system_id "
		"LEFT JOIN main.systems ms ON ms.id = m.system_id", -1, &st, NULL);
	while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		sb_reset(&why);
		for (int f = 0; f < (int)(sizeof(run_fields) / sizeof(run_fields[0])); f++)
			if (sqlite3_column_int(st, f + 1))
				sb_addf(&why, "%s%s", why.len ? ", " : "", run_fields[f]);
		if (why.len) {
			sb_add(&why, " differ");
			rc = refuse(h, (const char *)sqlite3_column_text(st, 0), sb_str(&why));
		}
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_finalize(st);
	else
		sqlite3_finalize(st);
	st = NULL;
	/* the cases both hold: the same benchmark, with the same samples */
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(h,
			"SELECT sr.uuid, sc.ord, sc.name, sc.case_key IS NOT mc.case_key, "
			"sc.status IS NOT mc.status, sc.warmup IS NOT mc.warmup OR sc.iters IS NOT mc.iters, "
			"(SELECT count(*) FROM src.samples WHERE case_id = sc.id), "
			"(SELECT count(*) FROM main.samples WHERE case_id = mc.id), "
			"EXISTS (SELECT phase, iter, ns FROM src.samples WHERE case_id = sc.id EXCEPT "
			"SELECT phase, iter, ns FROM main.samples WHERE case_id = mc.id) AS times "
			"FROM src.cases sc JOIN src.runs sr ON sr.id = sc.run_id "
			"JOIN main.runs mr ON mr.uuid = sr.uuid "
			"JOIN main.cases mc ON mc.run_id = mr.id AND mc.ord = sc.ord "
			"WHERE sc.case_key IS NOT mc.case_key OR sc.status IS NOT mc.status "
			"OR sc.warmup IS NOT mc.warmup OR sc.iters IS NOT mc.iters OR times "
			"OR (SELECT count(*) FROM src.samples WHERE case_id = sc.id) <> "
			"(SELECT count(*) FROM main.samples WHERE case_id = mc.id) "
			"ORDER BY sr.uuid, sc.ord", -1, &st, NULL);
	int shown = 0, more = 0;
	sb_reset(&why);
	for (;;) {
		int s = rc == SQLITE_OK ? sqlite3_step(st) : SQLITE_DONE;
		const char *u = s == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		if (uuid[0] && (!u || strcmp(u, uuid))) {   /* the previous run's cases are done */
			if (more)
				sb_addf(&why, " and %d more case%s", more, more > 1 ? "s" : "");
			if (rc == SQLITE_OK)
				rc = refuse(h, uuid, sb_str(&why));
			sb_reset(&why);
			shown = more = 0;
			uuid[0] = '\0';
		}
		if (s != SQLITE_ROW || rc != SQLITE_OK) {
			if (s != SQLITE_DONE && rc == SQLITE_OK)
				rc = s;
			break;
		}
		snprintf(uuid, sizeof(uuid), "%s", u ? u : "");
		if (shown == 3) {
			more++;
			continue;
		}
		const char *name = (const char *)sqlite3_column_text(st, 2);
		sb_addf(&why, "%scase %lld (%s): ", shown++ ? "; " : "", sqlite3_column_int64(st, 1),
			name ? name : "?");
		if (sqlite3_column_int(st, 3))
			sb_add(&why, "another benchmark");
		else if (sqlite3_column_int(st, 4))
			sb_add(&why, "another status");
		else if (sqlite3_column_int(st, 5))
			sb_add(&why, "other iteration counts");
		else if (sqlite3_column_int64(st, 6) != sqlite3_column_int64(st, 7))
			sb_addf(&why, "%lld samples in the input, %lld in the output",
				sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7));
		else
			sb_add(&why, "other times");
	}
	sqlite3_finalize(st);
	sb_free(&why);
	return rc;
}

/* The refusals into n->refused ("uuid: why" lines) and their count. */
static void list_refusals(sqlite3 *h, struct db_merge_counts *n)
{
	sqlite3_stmt *st = NULL;
	struct strbuf sb = STRBUF_INIT;
	if (sqlite3_prepare_v2(h, "SELECT uuid, why FROM temp.merge_refused ORDER BY uuid", -1, &st,
			       NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW) {
			n->runs_refused++;
			sb_addf(&sb, "%srun %s, a different run under a uuid the output holds: %s",
				sb.len ? "\n" : "", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
		}
	sqlite3_finalize(st);
	n->refused = sb.len ? sb_detach(&sb) : NULL;
	sb_free(&sb);
}

/* The import itself, into main from the attached src, inside one transaction. */
static int import_all(sqlite3 *h, struct db_merge_counts *n)
{
	/* what is not refused: runs, their systems, their cases */
	static const char *const keep_run =
		"x.uuid NOT IN (SELECT uuid FROM temp.merge_refused)";
	static const char *const keep_system =
		"x.id IN (SELECT system_id FROM src.runs WHERE uuid NOT IN "
		"(SELECT uuid FROM temp.merge_refused))";
	static const char *const keep_case =
		"x.id IN (SELECT case_id FROM temp.merge_new_cases)";
	int rc = exec_changes(h,
		"CREATE TEMP TABLE IF NOT EXISTS merge_refused (uuid TEXT PRIMARY KEY, why TEXT); "
		"CREATE TEMP TABLE IF NOT EXISTS merge_new_cases (case_id INTEGER PRIMARY KEY); "
		"DELETE FROM temp.merge_refused; DELETE FROM temp.merge_new_cases", NULL);
	if (rc == SQLITE_OK)
		rc = find_conflicts(h);
	/* the input's cases the output lacks, of runs not refused: only these bring samples (a
	 * stored case has all of its samples: a case is written in one transaction) */
	if (rc == SQLITE_OK)
		rc = exec_changes(h,
			"INSERT INTO temp.merge_new_cases (case_id) SELECT sc.id FROM src.cases sc "
			"JOIN src.runs sr ON sr.id = sc.run_id "
			"WHERE sr.uuid NOT IN (SELECT uuid FROM temp.merge_refused) AND NOT EXISTS "
			"(SELECT 1 FROM main.cases mc JOIN main.runs mr ON mr.id = mc.run_id "
			"WHERE mr.uuid = sr.uuid AND mc.ord = sc.ord)", NULL);
	if (rc == SQLITE_OK)
		n->cases_present = query_i64(h,
			"SELECT count(*) FROM src.cases sc JOIN src.runs sr ON sr.id = sc.run_id "
			"WHERE sr.uuid NOT IN (SELECT uuid FROM temp.merge_refused) "
			"AND sc.id NOT IN (SELECT case_id FROM temp.merge_new_cases)", 0);
	/* parents first; a child's reference to its parent is mapped through the parent's stable
	 * key (fingerprint, uuid) */
	const struct {
		const char *table, *parent_column, *parent_id, *where;
		int64_t *added;
	} tables[] = {
		{"systems", NULL, NULL, keep_system, &n->systems},
		{"runs", "system_id",
		 "(SELECT m.id FROM main.systems m JOIN src.systems s ON s.fingerprint = m.fingerprint "
		 "WHERE s.id = x.system_id)", keep_run, &n->runs},
		{"cases", "run_id",
		 "(SELECT m.id FROM main.runs m JOIN src.runs s ON s.uuid = m.uuid WHERE s.id = x.run_id)",
		 keep_case, &n->cases},
	};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]) && rc == SQLITE_OK; i++)
		rc = import_table(h, tables[i].table, tables[i].parent_column, tables[i].parent_id,
				  tables[i].where, tables[i].added);
	if (rc == SQLITE_OK)
		rc = exec_changes(h,
			"INSERT INTO main.samples (case_id, phase, iter, ns) "
			"SELECT mc.id, s.phase, s.iter, s.ns FROM temp.merge_new_cases nc "
			"JOIN src.samples s ON s.case_id = nc.case_id "
			"JOIN src.cases sc ON sc.id = nc.case_id JOIN src.runs sr ON sr.id = sc.run_id "
			"JOIN main.runs mr ON mr.uuid = sr.uuid "
			"JOIN main.cases mc ON mc.run_id = mr.id AND mc.ord = sc.ord",
			&n->samples);
	/* a run that was going (or was interrupted and then resumed) when an earlier merge took it
	 * has ended since */
	if (rc == SQLITE_OK)
		rc = exec_changes(h,
			"UPDATE main.runs SET status = s.status, ended_at = s.ended_at, "
			"resumes = s.resumes FROM src.runs s "
			"WHERE s.uuid = main.runs.uuid AND s.status <> 'running' "
			"AND main.runs.status <> 'complete' "
			"AND s.uuid NOT IN (SELECT uuid FROM temp.merge_refused) "
			"AND (main.runs.status = 'running' OR s.ended_at > main.runs.ended_at)",
			&n->runs_updated);
	/* the record of resumes follows the cases: an input whose run was resumed since (its
	 * record extends the output's) brings that resume's cases, whether or not the run has
	 * ended, and its record with them */
	if (rc == SQLITE_OK)
		rc = exec_changes(h,
			"UPDATE main.runs SET resumes = s.resumes FROM src.runs s "
			"WHERE s.uuid = main.runs.uuid "
			"AND s.uuid NOT IN (SELECT uuid FROM temp.merge_refused) "
			"AND length(coalesce(s.resumes, '')) > length(coalesce(main.runs.resumes, ''))",
			NULL);
	if (rc == SQLITE_OK) {
		list_refusals(h, n);
		n->runs_present = query_i64(h, "SELECT count(*) FROM src.runs", 0) - n->runs -
				  n->runs_refused;
	}
	return rc;
}

/* The temporary copy and every side file SQLite may have left beside it (a copy that failed
 * half-way keeps its rollback journal). */
static void remove_copy(const char *path)
{
	static const char *const sides[] = {"-wal", "-shm", "-journal"};
	char side[PATH_MAX + 16];
	unlink(path);
	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", path, sides[i]);
		unlink(side);
	}
}

int db_merge(struct db *db, const char *in_path, const volatile sig_atomic_t *stop,
	     struct db_merge_counts *counts, struct bd_error *err)
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
	tmp = tmp && *tmp ? tmp : "/tmp";
	snprintf(copy_path, sizeof(copy_path), "%s/benchdb-merge-XXXXXX", tmp);
	if ((fd = mkstemp(copy_path)) < 0) {
		copy_path[0] = '\0';
		rc = bd_fail_at(err, BD_EIO, in_path, 0, 0, "cannot make its temporary copy in '%s': %s "
				"(point TMPDIR at a writable directory)", tmp, strerror(errno));
		goto done;
	}
	close(fd);
	if ((rc = copy_input(in_path, copy_path, tmp, stop, err)))
		goto done;
	/* migrate the copy to this build's schema */
	if ((rc = db_open(copy_path, 0, &copy, err))) {
		char msg[sizeof(err->msg)];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		rc = bd_fail_at(err, rc, in_path, 0, 0, "cannot bring its copy in '%s' to this schema: "
				"%s", tmp, msg);
		goto done;
	}
	db_close(copy);
	copy = NULL;
	if (*stop) {
		rc = bd_fail_at(err, BD_EINTR, in_path, 0, 0, "interrupted before its import");
		goto done;
	}
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
	sqlite3_progress_handler(h, 1000, stop_requested, (void *)stop);
	s = import_all(h, counts);
	sqlite3_progress_handler(h, 0, NULL, NULL);
	if (s != SQLITE_OK || *stop) {
		rc = *stop ? bd_fail_at(err, BD_EINTR, in_path, 0, 0, "interrupted: nothing of it stored")
			   : merge_fail(h, err, in_path, "cannot import");
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
		db_merge_counts_clear(counts);
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

void db_merge_counts_clear(struct db_merge_counts *counts)
{
	free(counts->refused);
	memset(counts, 0, sizeof(*counts));
}
