/* runner/progress.h: progress of a sweep on stderr — one updating line on a terminal, one plain
 * line per finished case otherwise. */
#ifndef BENCHDB_PROGRESS_H
#define BENCHDB_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "measure.h"

struct progress {
	int tty;
	size_t ncases;
	size_t index;        /* current case, 0-based */
	const char *name;
	int64_t start_ns;    /* of the sweep */
	int64_t last_draw_ns;
};

void progress_init(struct progress *pg, size_t ncases);
void progress_case_start(struct progress *pg, size_t index, const char *name);
/* measure_case's on_iteration callback; ctx is the struct progress. */
void progress_iteration(void *ctx, int64_t iter, int64_t total);
void progress_case_end(struct progress *pg, const struct case_result *res);
/* Clear the terminal line (before the final summary). */
void progress_finish(struct progress *pg);

#endif
