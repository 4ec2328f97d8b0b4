/* db/db_internal.h: what the files of db/ beside db.c need of an open database. Internal to
 * db/. */
#ifndef BENCHDB_DB_INTERNAL_H
#define BENCHDB_DB_INTERNAL_H

#include <sqlite3.h>

struct db;

sqlite3 *db_sqlite(struct db *db);
const char *db_file(struct db *db);

#endif
