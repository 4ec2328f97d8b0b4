/* kernels/ref/matmul_common.h: the matmul workload's (kernels/workloads/matmul.c) checks, figures,
 * inputs and validation of C(m, n) = A(m, k) B(k, n) with A and B float32 or bfloat16 and C
 * float32, apart from the device code. */
#ifndef BENCHDB_MATMUL_COMMON_H
#define BENCHDB_MATMUL_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "workload.h"

/* STATUS_OK, or STATUS_UNSUPPORTED when the pass or shape is not a matmul's (the impl's row in
 * impls.c says which dtypes it takes). */
int matmul_check_shape(const struct case_params *p, struct wl_status *st);
void matmul_figures(const struct case_params *p, struct wl_figures *f);
/* n values uniform in [-1, 1), as float32 or bfloat16 (uint16_t) per t. */
void matmul_fill(void *x, enum bd_dtype t, int64_t n, struct rng *r);
/* Validation: MATMUL_VALIDATE_ENTRIES random entries of c (host copies of A, B and C, packed)
 * against a float64 dot product of the same inputs, each within tol · Σ_k |a_ik·b_kj| (float32
 * rounding of a k-term sum in any order; bfloat16 products are exact in float32). Sets
 * st->max_diff and st->tolerance to the worst entry's difference and bound. */
#define MATMUL_VALIDATE_ENTRIES 256
int matmul_check_entries(const struct case_params *p, const void *a, const void *b,
			 const float *c, double tol, struct wl_status *st);

#endif
