/* report/report.h: what the report commands share — the command handlers, opening the database
 * and selecting a run, reading a case's samples as per-phase series. */
#ifndef BENCHDB_REPORT_H
#define BENCHDB_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "render.h"
#include "stats.h"

#define REPORT_PROG "report"
#define BENCHDB_DEFAULT_DB "bench.db"

int cmd_table(int argc, char **argv);
int cmd_runs(int argc, char **argv);

/* Open db_path (not created) and resolve the run selector; prints the error and returns the exit
 * status on failure, -1 on success. */
int report_open(const char *db_path, const char *run_selector, struct db **db, int64_t *run_id);

/* The --format value as an enum report_format; prints the valid choices and returns -1 when
 * unknown. */
int report_format_arg(const char *format);

/* The measured (non-warm-up) iterations of one case, in nanoseconds, per phase; total[i] is the
 * sum of all phases of iteration i (fwd+bwd(+opt)) over iterations that have every phase. */
struct case_series {
	double *ns[DB_PHASES];
	size_t n[DB_PHASES];
	double *total;
	size_t ntotal;
	unsigned phases;   /* bit per phase that has samples */
};

int case_series_load(struct db *db, const struct case_row *c, struct case_series *s,
		     struct bd_error *err);
void case_series_free(struct case_series *s);

/* Value of a top-level key of a flat JSON object as text ("" if absent); strings unquoted.
 * Enough for our canonical params JSON. */
void json_field(const char *json, const char *key, char *out, size_t n);

#endif
