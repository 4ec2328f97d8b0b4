/* tests/window_check.c: does iters: auto keep its word on real long runs?
 *
 *   window_check DB [--target RSE] [--max-time S] [--estimator both|sign|blocks]
 *
 * For every ok case of every run in DB (long runs of many iterations: configs/perf/drift_cpu.yaml),
 * the measured iterations (phases summed, in order) are cut into the windows iters: auto would
 * have measured one after the other: from each window's start the stopping rule of
 * runner/precision.c runs on the estimator (common/median_rse.h; --estimator sign: its
 * within-series part alone, the estimator before drift was accounted for), with estimates on
 * measure.c's schedule and a budget of --max-time seconds of measured time per window (default
 * 3, as configs/perf/auto_cpu.yaml). Printed per case: the windows, how many stopped for
 * precision, the standard deviation of the log medians of those that did, against the target
 * (the promise: within 1.5x), and the case's cpu_wait (above 5% a real run would not have
 * stopped for precision at all: runner/precision.h). The last line counts the cases whose
 * precision windows spread within 1.5x the target, of those with two or more. Method and figures:
 * docs/performance.md, "iters: auto".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "db.h"
#include "log_median.h"
#include "median_rse.h"
#include "params.h"
#include "precision.h"

static double (*estimate)(const int64_t *, size_t, int64_t *) = median_rse;

/* Where the rule stops on x[0..n) and why (*why), or 0 when it does not within n. */
static int64_t window_end(const int64_t *x, int64_t n, const struct case_params *p,
			  int64_t *scratch, const char **why)
{
	int64_t since = 0, checked = 0, measured = 0;
	for (int64_t k = 1; k <= n; k++) {
		measured += x[k - 1];
		if (k >= p->min_iters && (k < 200 || k - checked >= checked / 50)) {
			double rse = estimate(x, (size_t)k, scratch);
			since = rse > p->target_rse ? 0 : since ? since : k;
			checked = k;
		}
		if ((*why = precision_stop(p, k, measured, since)))
			return k;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct case_params p = {.min_iters = 10, .max_iters = BD_MAX_ITERS, .max_time = 3,
				.target_rse = 0.005};
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--target") && i + 1 < argc)
			p.target_rse = atof(argv[++i]);
		else if (!strcmp(argv[i], "--max-time") && i + 1 < argc)
			p.max_time = atof(argv[++i]);
		else if (!strcmp(argv[i], "--estimator") && i + 1 < argc) {
			const char *e = argv[++i];
			estimate = !strcmp(e, "sign") ? median_rse_sign :
				   !strcmp(e, "blocks") ? median_rse_blocks : median_rse;
		} else if (!path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path) {
		fprintf(stderr, "usage: window_check DB [--target RSE] [--max-time S] "
				"[--estimator both|sign|blocks]\n");
		return 2;
	}
	struct db *db = NULL;
	struct bd_error err;
	struct run_row *runs = NULL;
	size_t nruns = 0;
	int cases = 0, within = 0, status = 0;
	if (db_open(path, DB_READONLY, &db, &err) || db_runs_list(db, &runs, &nruns, &err)) {
		fprintf(stderr, "window_check: %s\n", err.msg);
		db_close(db);
		return 1;
	}
	printf("target %.3g%%, budget %.3g s per window\n", 100 * p.target_rse, p.max_time);
	for (size_t r = 0; r < nruns && !status; r++) {
		struct case_row *rows = NULL;
		size_t nrows = 0;
		if (db_cases_list(db, runs[r].id, NULL, &rows, &nrows, &err)) {
			fprintf(stderr, "window_check: %s\n", err.msg);
			status = 1;
			break;
		}
		for (size_t c = 0; c < nrows && !status; c++) {
			if (rows[c].status != STATUS_OK || rows[c].iters < 20)
				continue;
			struct sample *s = NULL;
			size_t ns = 0;
			if (db_samples_get(db, rows[c].id, &s, &ns, &err)) {
				fprintf(stderr, "window_check: %s\n", err.msg);
				status = 1;
				break;
			}
			int64_t n = rows[c].iters, w0 = rows[c].warmup;
			int64_t *x = calloc((size_t)(2 * n), sizeof(*x)), *scratch = x + n;
			if (!x) {
				fprintf(stderr, "window_check: out of memory\n");
				free(s);
				status = 1;
				break;
			}
			for (size_t i = 0; i < ns; i++)
				if (s[i].iter >= w0 && s[i].iter - w0 < n)
					x[s[i].iter - w0] += s[i].ns;
			free(s);
			int64_t from = 0, len;
			int windows = 0, precise = 0;
			double sum = 0, sum2 = 0;
			const char *why = NULL;
			while (from < n && (len = window_end(x + from, n - from, &p, scratch, &why)) > 0) {
				windows++;
				if (!strcmp(why, "precision")) {
					double m = log_median(x + from, len, scratch);
					sum += m;
					sum2 += m * m;
					precise++;
				}
				from += len;
			}
			double sd = NAN;
			if (precise >= 2) {
				double mean = sum / precise;
				sd = sqrt(fmax(0, (sum2 - precise * mean * mean) / (precise - 1)));
				cases++;
				within += sd <= 1.5 * p.target_rse;
			}
			printf("run %lld %-44s %7lld iters, %3d windows, %3d precise: sd %6.2f%% = %6.2fx "
			       "target; cpu_wait %.2f\n",
			       (long long)runs[r].id, rows[c].name, (long long)n, windows, precise,
			       100 * sd, sd / p.target_rse, rows[c].cpu_wait);
			free(x);
		}
		db_case_rows_free(rows, nrows);
	}
	printf("%d of %d cases with two or more precision windows kept them within 1.5x the target\n",
	       within, cases);
	db_run_rows_free(runs, nruns);
	db_close(db);
	return status;
}
