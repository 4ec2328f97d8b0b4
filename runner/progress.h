/* runner/progress.h: progress of a sweep on stderr — one updating line on a terminal, one plain
 * line per finished case otherwise. */
#ifndef BENCHDB_PROGRESS_H
#define BENCHDB_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "measure.h"

/* What a case is expected to cost, for the ETA: FLOPs and bytes over all of its iterations
 * (warm-up included); 0 for a case that will not run here, < 0 when not known. */
struct progress_work {
	double flops, bytes;
	/* Cases of one kind (suite, device, dtype: case_work packs them; 0 for all when not known)
	 * run at one rate per unit of work; kinds differ (a bfloat16 case does 3x the FLOPs per
	 * second of a float32 one on AMX), and the ETA fits a scale per kind. */
	uint64_t kind;
};

/* What the ETA weighs the cases by: FLOPs when every case states them, else bytes when every
 * case states those, else one per case. */
enum progress_basis { PROGRESS_BY_FLOPS, PROGRESS_BY_BYTES, PROGRESS_BY_COUNT };

struct progress {
	int tty;
	size_t ncases;
	size_t index;        /* current case, 0-based */
	const char *name;
	int64_t start_ns;    /* of the sweep */
	int64_t last_draw_ns;
	int64_t last_end_ns; /* when the last case ended (or the sweep started) */
	enum progress_basis basis;
	double *work_before; /* ncases + 1: work of the cases before case i, in the basis' unit;
				NULL: one per case */
	size_t dropped_at;   /* 0: stderr takes the progress; else 1 + the case at which a write to
				it failed (a closed pipe: `runner run ... 2>&1 | head`), after which
				nothing more is written to it and the sweep goes on */
	/* The finished cases that ran, for the cost model t = fixed + scale x work^power:
	 * (work, ns) of each (ncases of room; NULL until progress_init). */
	double (*seen)[2];
	size_t *seen_case;   /* the case index of each seen point */
	size_t nfit;
	size_t *kind_of;     /* ncases: each case's kind, 0 .. nkinds - 1 */
	size_t nkinds;
	/* The finished cases that did not run (work 0: refused, predicted out of memory): their
	 * time, which a case left that will not run is expected to take on average. */
	double idle_ns;
	size_t nidle;
};

/* work: ncases entries (NULL: weigh by count). */
void progress_init(struct progress *pg, size_t ncases, const struct progress_work *work);
void progress_case_start(struct progress *pg, size_t index, const char *name);
/* measure_case's on_iteration callback; ctx is the struct progress. */
void progress_iteration(void *ctx, int64_t iter, int64_t total);
void progress_case_end(struct progress *pg, const struct case_result *res);
/* Clear the terminal line (before the final summary) and release what progress_init took; may
 * be called twice. */
void progress_finish(struct progress *pg);

/* Case index took ns (wall time, setup and storing included): one more point of the cost model.
 * progress_case_end calls it; a case that did not run (work 0) is not a point: its time is what
 * each case left that will not run is expected to take (their mean). */
void progress_observe(struct progress *pg, size_t index, int64_t ns);

/* Nanoseconds left when elapsed_ns have gone into the cases before index and fraction (0..1) of
 * case index. From PROGRESS_FIT_MIN observed cases on: the cost model — each case a fixed cost
 * (setup, validation) plus scale x work^power, power from 0.5 to 1 (a larger kernel or model
 * usually runs nearer the machine's peak, so cost grows more slowly than its FLOPs), fitted by
 * least squares on relative errors, trusted over the work the fitted cases span and half that
 * span again beyond (past that a case's cost grows at least as work^0.8), times its kind's
 * ratio to the model (the geometric mean over the kind's finished cases; 1 for a kind not seen
 * yet) — summed over the cases left that will run, plus the mean time of a case that did not run
 * for each case left that will not; before that, the
 * geometric mean of the elapsed time per unit of work done times the work left and the elapsed
 * time per case done times the cases left. -1 before any work. */
#define PROGRESS_FIT_MIN 3
int64_t progress_eta_ns(const struct progress *pg, size_t index, double fraction,
			int64_t elapsed_ns);

#endif
