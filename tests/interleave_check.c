/* tests/interleave_check.c: does measuring two implementations in alternating rounds make their
 * comparison within one run robust to drift? (docs/performance.md, "Interleaving")
 *
 *   interleave_check SWEEP.yaml [--rounds R] [--pairs P]
 *
 * The sweep must expand to exactly two cases (e.g. naive and flash at one shape, fixed iters).
 * P times (default 20), alternately in each mode, the two are measured as `runner run` measures
 * them: one after the other ("sequential": A's warm-up and iterations, then B's, the order
 * swapped every other pair), or in R rounds ("interleaved": each case's warm-up and first
 * iters/R iterations, then the next case's, ..., the order reversed every other round; both
 * states set up before the first round). Each pair gives the log of the ratio of the two medians
 * (the speedup `report --compare` shows); printed: per mode its mean and its standard deviation
 * over the pairs, the run-to-run spread of the comparison, which drift between the two cases'
 * measurements inflates; and the cases' mean cpu_wait. Nothing is stored.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "sweep.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of res's measured iterations (phases summed). */
static double median_of(const struct case_result *res, int64_t warmup)
{
	size_t n = (size_t)res->iters;
	double *t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return NAN;
	for (size_t i = 0; i < res->nsamples; i++)
		if (res->samples[i].iter >= warmup && (size_t)(res->samples[i].iter - warmup) < n)
			t[res->samples[i].iter - warmup] += (double)res->samples[i].ns;
	qsort(t, n, sizeof(*t), cmp_d);
	double m = n ? (t[(n - 1) / 2] + t[n / 2]) / 2 : NAN;
	free(t);
	return m;
}

/* Measure cases c[0], c[1] in `rounds` rounds (1: sequential), first = which goes first. The
 * log ratio of medians c[0] / c[1], or NAN on a failure; waits[k] their cpu_wait. */
static double measure_pair(const struct sweep_case *c, int rounds, int first, double waits[2])
{
	struct case_result res[2];
	const struct workload *w[2];
	double out = NAN;
	for (int k = 0; k < 2; k++)
		w[k] = workload_find(suite_name(c[k].params.suite), c[k].params.impl, c[k].params.device);
	if (rounds <= 1) {
		for (int j = 0; j < 2; j++) {
			int k = j ^ first;
			measure_case(w[k], &c[k].params, &res[k], NULL, NULL);
		}
	} else {   /* as runner run interleaves them */
		const struct workload *ws[2] = {w[first], w[!first]};
		const struct case_params *ps[2] = {&c[first].params, &c[!first].params};
		struct case_result r2[2];
		measure_interleaved(ws, ps, r2, 2, rounds, NULL, NULL);
		res[first] = r2[0];
		res[!first] = r2[1];
	}
	if (res[0].status == STATUS_OK && res[1].status == STATUS_OK)
		out = log(median_of(&res[0], c[0].params.warmup) / median_of(&res[1], c[1].params.warmup));
	for (int k = 0; k < 2; k++) {
		waits[k] = res[k].cpu_wait;
		free(res[k].samples);
	}
	return out;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int rounds = 5, pairs = 20;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
			pairs = atoi(argv[++i]);
		else
			path = argv[i];
	}
	struct sweep *sweep = NULL;
	struct sweep_cases cases = {0};
	struct bd_error err;
	if (!path || rounds < 2 || pairs < 2) {
		fprintf(stderr, "usage: interleave_check SWEEP.yaml [--rounds R >= 2] [--pairs P >= 2]\n");
		return 2;
	}
	if (sweep_load(path, &sweep, &err) || sweep_expand(sweep, &cases, &err)) {
		bd_error_print("interleave_check", &err);
		return 2;
	}
	if (cases.n != 2 || cases.items[0].params.iters < rounds) {
		fprintf(stderr, "interleave_check: the sweep must expand to two cases with fixed iters >= "
				"rounds (it has %zu)\n", cases.n);
		return 2;
	}
	measure_hold_signals();
	double sum[2] = {0}, sum2[2] = {0}, wait[2] = {0};
	int n[2] = {0};
	printf("%s vs %s, %d rounds, %d pairs per mode\n", cases.items[0].name, cases.items[1].name,
	       rounds, pairs);
	for (int p = 0; p < 2 * pairs; p++) {
		int mode = p % 2;   /* 0 sequential, 1 interleaved: alternating, so drift hits both */
		double w[2], lr = measure_pair(cases.items, mode ? rounds : 1, (p / 2) % 2, w);
		if (isnan(lr))
			continue;
		sum[mode] += lr;
		sum2[mode] += lr * lr;
		wait[mode] += (w[0] + w[1]) / 2;
		n[mode]++;
		printf("pair %2d %-11s ratio %.4f  cpu_wait %.2f %.2f\n", p / 2,
		       mode ? "interleaved" : "sequential", exp(lr), w[0], w[1]);
		fflush(stdout);
	}
	for (int mode = 0; mode < 2; mode++) {
		double mean = n[mode] ? sum[mode] / n[mode] : NAN;
		double sd = n[mode] > 1 ? sqrt(fmax(0, (sum2[mode] - n[mode] * mean * mean) / (n[mode] - 1)))
					: NAN;
		printf("%-11s: %d pairs, ratio %.4f (geometric mean), sd of the log ratio %.2f%%, "
		       "mean cpu_wait %.2f\n",
		       mode ? "interleaved" : "sequential", n[mode], exp(mean), 100 * sd,
		       n[mode] ? wait[mode] / n[mode] : NAN);
	}
	sweep_cases_free(&cases);
	sweep_free(sweep);
	return 0;
}
