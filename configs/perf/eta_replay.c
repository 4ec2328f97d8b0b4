/* configs/perf/eta_replay.c: the runner's ETA (runner/progress.c, compiled in as it is) replayed
 * over the cases of a stored run: each case's work (FLOPs of every iteration, warm-up included)
 * and its own wall time (cases.elapsed_ns), in the order the run finished them; after each case
 * the ETA against what the cases after it really took. Built and fed by eta_replay.sh.
 *
 * stdin: one line per case, "WORK_FLOPS ELAPSED_NS KIND" (work 0: a case that did not run; KIND:
 * a number, equal for the cases of one suite, impl, device, dtype, as the runner's kinds).
 * stdout: one line per estimate, then the summary: the ratios while a minute or more was left,
 * and how many seconds off the estimates of the last minute were. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "progress.h"

int64_t now_ns(void)   /* progress.c's clock (runner/measure.c in the runner) */
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	size_t n = 0, cap = 64;
	struct progress_work *work = malloc(cap * sizeof(*work));
	double *ns = malloc(cap * sizeof(*ns));
	double w, t;
	unsigned long long kind;
	while (scanf("%lf %lf %llu", &w, &t, &kind) == 3) {
		if (n == cap) {
			cap *= 2;
			work = realloc(work, cap * sizeof(*work));
			ns = realloc(ns, cap * sizeof(*ns));
		}
		work[n] = (struct progress_work){w, -1, kind};
		ns[n++] = t;
	}
	struct progress pg;
	progress_init(&pg, n, work);
	/* the ratio is judged while at least a minute is left; in the last minute, the error in
	 * seconds (a 5 s wait predicted as 20 s is a ratio of 4 and no harm) */
	double elapsed = 0, lo = 0, hi = 0, tail_err = 0;
	int bad = 0, cnt = 0, tail = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		progress_observe(&pg, i, (int64_t)ns[i]);
		elapsed += ns[i];
		double truth = 0;
		for (size_t j = i + 1; j < n; j++)
			truth += ns[j];
		double eta = (double)progress_eta_ns(&pg, i, 1.0, (int64_t)elapsed);
		double r = truth > 0 ? eta / truth : 0;
		printf("case %3zu/%zu  elapsed %7.1f s  eta %7.1f s  truth %7.1f s  ratio %5.2f\n", i + 1,
		       n, elapsed / 1e9, eta / 1e9, truth / 1e9, r);
		if (truth < 60e9) {
			tail++;
			tail_err = fmax(tail_err, fabs(eta - truth) / 1e9);
			continue;
		}
		lo = cnt && lo < r ? lo : r;
		hi = cnt && hi > r ? hi : r;
		bad += r > 2 || r < 0.5;
		cnt++;
	}
	printf("%d estimates with a minute or more left: ratio %.2f to %.2f; %d outside 0.5-2x; "
	       "%d in the last minute: off by %.0f s at most\n", cnt, lo, hi, bad, tail, tail_err);
	progress_finish(&pg);
	free(work);
	free(ns);
	return 0;
}
