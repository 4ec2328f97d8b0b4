/* runner/precision.c: iters: auto's stopping rule (precision.h); the estimator is
 * common/median_rse.c. */
#include "precision.h"

const char *precision_stop(const struct case_params *p, int64_t n, int64_t measured_ns,
			   int64_t precise_since)
{
	int64_t hold = n / 5 > PRECISION_HOLD ? n / 5 : PRECISION_HOLD;
	if (n < p->min_iters)
		return NULL;
	if (precise_since > 0 && n - precise_since >= hold)
		return "precision";
	if ((double)measured_ns >= p->max_time * 1e9)
		return "max_time";
	if (n >= p->max_iters)
		return "max_iters";
	return NULL;
}
