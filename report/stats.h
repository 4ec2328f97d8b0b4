/* report/stats.h: descriptive statistics over stored samples. */
#ifndef BENCHDB_STATS_H
#define BENCHDB_STATS_H

#include <stddef.h>

struct summary {
	size_t n;
	double mean, std;   /* std: sample standard deviation (n - 1); 0 when n < 2 */
	double median, min, max;
	double cv;          /* std / mean; 0 when mean is 0 */
};

/* Summarise x[0..n-1] (x is not modified). n == 0 gives a zeroed summary. */
void summarize(const double *x, size_t n, struct summary *s);
/* Median of x[0..n-1]; sorts x in place. */
double median_inplace(double *x, size_t n);

#endif
