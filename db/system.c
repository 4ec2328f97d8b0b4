/* db/system.c: a stored machine read back (db_system_get), apart from db.c's writers. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db_internal.h"

static void copy_col(sqlite3_stmt *st, int i, char *dst, size_t n)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	snprintf(dst, n, "%s", s ? (const char *)s : "");
}

int db_system_get(struct db *db, int64_t system_id, struct sysinfo *si, struct bd_error *err)
{
	int found = 0;
	memset(si, 0, sizeof(*si));
	sqlite3 *h = db_sqlite(db);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h,
		"SELECT hostname, os, kernel, arch, cpu_model, cpu_cores, cpu_threads, cpu_flags, "
		"mem_bytes, gpu_name, gpu_count, gpu_mem_bytes, gpu_sm_count, gpu_cc, gpu_clock_mhz, "
		"gpu_mem_clock_mhz, driver_version, cuda_runtime, cudnn_version, cublas_version, blas, "
		"compiler, build_flags FROM systems WHERE id = ?1", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, system_id);
	int step = rc == SQLITE_OK ? sqlite3_step(st) : rc;
	if (step == SQLITE_ROW) {
		found = 1;
		copy_col(st, 0, si->hostname, sizeof(si->hostname));
		copy_col(st, 1, si->os, sizeof(si->os));
		copy_col(st, 2, si->kernel, sizeof(si->kernel));
		copy_col(st, 3, si->arch, sizeof(si->arch));
		copy_col(st, 4, si->cpu_model, sizeof(si->cpu_model));
		si->cpu_cores = (int)db_col_i64(st, 5, 0);
		si->cpu_threads = (int)db_col_i64(st, 6, 0);
		copy_col(st, 7, si->cpu_flags, sizeof(si->cpu_flags));
		si->mem_bytes = db_col_i64(st, 8, 0);
		copy_col(st, 9, si->gpu_name, sizeof(si->gpu_name));
		si->gpu_count = (int)db_col_i64(st, 10, 0);
		si->gpu_mem_bytes = db_col_i64(st, 11, 0);
		si->gpu_sm_count = (int)db_col_i64(st, 12, 0);
		copy_col(st, 13, si->gpu_cc, sizeof(si->gpu_cc));
		si->gpu_clock_mhz = (int)db_col_i64(st, 14, 0);
		si->gpu_mem_clock_mhz = (int)db_col_i64(st, 15, 0);
		copy_col(st, 16, si->driver_version, sizeof(si->driver_version));
		copy_col(st, 17, si->cuda_runtime, sizeof(si->cuda_runtime));
		copy_col(st, 18, si->cudnn_version, sizeof(si->cudnn_version));
		copy_col(st, 19, si->cublas_version, sizeof(si->cublas_version));
		copy_col(st, 20, si->blas, sizeof(si->blas));
		copy_col(st, 21, si->compiler, sizeof(si->compiler));
		copy_col(st, 22, si->build_flags, sizeof(si->build_flags));
	}
	else if (step != SQLITE_DONE && rc == SQLITE_OK)
		rc = step;
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return bd_fail_at(err, BD_EDB, db_file(db), 0, 0, "cannot read the system: %s",
				  sqlite3_errcode(h) != SQLITE_OK ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
	return found ? 0 : bd_fail(err, BD_ENOTFOUND, "no system with id %lld", (long long)system_id);
}

