/* db/db_readonly.h: the read-only open behind db_open(..., DB_READONLY, ...) (db_readonly.c).
 * Internal to db/. */
#ifndef BENCHDB_DB_READONLY_H
#define BENCHDB_DB_READONLY_H

#include <sqlite3.h>

#include "error.h"

/* Open an existing regular file that starts like an SQLite 3 database, read-only, creating no
 * file beside it. *out is the handle (the caller closes it). */
int db_readonly_open(const char *path, sqlite3 **out, struct bd_error *err);
/* Make an older schema (version < latest) read like the latest — the columns later migrations
 * added read as NULL. Fails with BD_EVERSION naming the upgrade command. (Temporary objects,
 * which live in the connection's memory, may still be made: the file cannot be written.) */
int db_readonly_shim(sqlite3 *h, const char *path, int version, struct bd_error *err);

#endif
