/* configs/perf/noise_aa_level.c: the A/A level of a one-sided t test on the noise model (report/noise.h): one case, no history, N one-run sessions a side, 4% run to run; docs/performance.md, "The noise model".
 *   gcc -O2 -I report -I common -I db -I build -o /tmp/aa configs/perf/noise_aa_level.c build/report/libbenchdb_report.a build/db/libbenchdb.a build/common/libbenchdb_common.a -lm -lsqlite3 -lyaml
 *   for n in 2 3 4 6 12; do /tmp/aa 20000 $n; done */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "report.h"
#include "stats.h"
static double normal(void) {
	double u1 = (rand() + 1.0) / (RAND_MAX + 2.0), u2 = (rand() + 1.0) / (RAND_MAX + 2.0);
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}
int main(int argc, char **argv) {
	int trials = atoi(argv[1]), nside = atoi(argv[2]);
	srand(12345);
	const struct noise_assumed assumed = NOISE_ASSUMED_DEFAULT;
	int rej01 = 0, rej05 = 0, n = 0;
	for (int t = 0; t < trials; t++) {
		struct noise_data d = {0};
		const char *bs[16], *cs[16];
		char names[32][8];
		double mb = 0, mc = 0;
		for (int s = 0; s < nside; s++) {
			snprintf(names[s], 8, "b%d", s); snprintf(names[16 + s], 8, "c%d", s);
			char at[8], at2[8];
			snprintf(at, 8, "%02d", s); snprintf(at2, 8, "%02d", 50 + s);
			double yb = 0.04 * normal(), yc = 0.04 * normal();
			noise_data_add_run(&d, "k", 1, names[s], "", at, yb);
			noise_data_add_run(&d, "k", 2, names[16 + s], "", at2, yc);
			bs[s] = names[s]; cs[s] = names[16 + s];
			mb += yb / nside; mc += yc / nside;
		}
		struct noise_model m;
		noise_model_fit(&d, &assumed, &m);
		struct noise_side b = {bs, (size_t)nside}, c = {cs, (size_t)nside};
		double var, df;
		noise_diff_var(&m, 0, &b, &c, 0, 0, &var, &df);
		double tt = (mc - mb) / sqrt(var);
		double p = student_t_sf(tt, df);   /* one-sided: candidate slower */
		rej01 += p < 0.01; rej05 += p < 0.05; n++;
		noise_model_free(&m); noise_data_free(&d);
	}
	printf("nside %d: one-sided p<0.01 %.4f, p<0.05 %.4f (%d trials)\n", nside, (double)rej01 / n, (double)rej05 / n, n);
}
