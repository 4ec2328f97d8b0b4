/* db/db_untrusted.h: re-establish what the schema promises on a row read from an untrusted file
 * (db_untrusted.c). Internal to db/. */
#ifndef BENCHDB_DB_UNTRUSTED_H
#define BENCHDB_DB_UNTRUSTED_H

#include "records.h"

void db_run_row_untrusted(struct run_row *r);
void db_case_row_untrusted(struct case_row *c);

#endif
