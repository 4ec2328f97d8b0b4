/* db/gpu.c: the GPU figures recorded while a case ran (temperature, SM clock, throttle reasons),
 * stored beside the case after db_case_put and read back by `report nodes`. */
#include <stdio.h>
#include <string.h>

#include "db_internal.h"

int db_case_gpu_put(struct db *db, int64_t run_id, int64_t ord, const struct case_gpu *g,
		    struct bd_error *err)
{
	if (!g->known)
		return 0;
	sqlite3 *h = db_sqlite(db);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h,
		"UPDATE cases SET gpu_temp_c = ?1, gpu_sm_clock_mhz = ?2, gpu_throttle = ?3 "
		"WHERE run_id = ?4 AND ord = ?5", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = g->temp_c > 0 ? sqlite3_bind_double(st, 1, g->temp_c) : sqlite3_bind_null(st, 1);
	if (rc == SQLITE_OK)
		rc = g->sm_clock_mhz > 0 ? sqlite3_bind_int(st, 2, g->sm_clock_mhz)
					 : sqlite3_bind_null(st, 2);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, g->throttle, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 4, run_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 5, ord);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : bd_fail_at(err, BD_EDB, db_file(db), 0, 0,
						  "cannot store the case's GPU figures: %s",
						  sqlite3_errmsg(h));
}

int db_case_gpu_get(struct db *db, int64_t case_id, struct case_gpu *g, struct bd_error *err)
{
	sqlite3 *h = db_sqlite(db);
	sqlite3_stmt *st = NULL;
	memset(g, 0, sizeof(*g));
	int rc = sqlite3_prepare_v2(h,
		"SELECT gpu_temp_c, gpu_sm_clock_mhz, gpu_throttle FROM cases WHERE id = ?1", -1, &st,
		NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, case_id);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 2);
		g->known = sqlite3_column_type(st, 0) != SQLITE_NULL ||
			   sqlite3_column_type(st, 1) != SQLITE_NULL || t;
		g->temp_c = sqlite3_column_double(st, 0);
		g->sm_clock_mhz = sqlite3_column_int(st, 1);
		snprintf(g->throttle, sizeof(g->throttle), "%s", t ? (const char *)t : "");
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : bd_fail_at(err, BD_EDB, db_file(db), 0, 0,
						  "cannot read the case's GPU figures: %s",
						  sqlite3_errmsg(h));
}
