/* runner/sweep_limits.h: the sweep format's limits on user-given sizes (sweep_limits.c). */
#ifndef BENCHDB_SWEEP_LIMITS_H
#define BENCHDB_SWEEP_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

/* The largest value an integer key (a parameter or a model field) may take; INT64_MAX for a key
 * with no limit of its own. */
int64_t sweep_value_max(const char *key);
/* 0, or -1 with msg filled when a tensor the case describes would exceed BD_MAX_TENSOR_BYTES. */
int sweep_case_sizes_check(const struct case_params *p, char *msg, size_t size);

#endif
