/* common/checked.h: arithmetic on sizes a user gave (sweep values, database columns) — every sum
 * and product that could leave int64 is checked, never wrapped — and the limits the sweep format
 * states for them (schemas/sweep-format.md, "Limits"; enforced when a sweep is parsed). */
#ifndef BENCHDB_CHECKED_H
#define BENCHDB_CHECKED_H

#include <stddef.h>
#include <stdint.h>

/* Iterations of one case: warm-up and measured, each (samples are indexed by int32). */
#define BD_MAX_WARMUP 1000000
#define BD_MAX_ITERS 1000000
/* iters: auto's max_time, seconds: a day of measuring one case is a typo (and it stays far from
 * int64 nanoseconds). */
#define BD_MAX_TIME_S 86400
/* Any one dimension: batch_size, heads, seq_len, head_dim, context_length, vocab_size, m, n, k,
 * and a model's d_model, d_ff, num_layers, num_heads. */
#define BD_MAX_DIM INT32_MAX
/* The bytes of any one tensor a case describes (its elements x 8): at most 2^62, so that sums of
 * a few of them still fit int64. */
#define BD_MAX_TENSOR_BYTES (INT64_C(1) << 62)

/* *out = a + b; returns 0, or -1 (and *out = INT64_MAX) when it does not fit int64. */
static inline int ck_add(int64_t a, int64_t b, int64_t *out)
{
	if (__builtin_add_overflow(a, b, out)) {
		*out = INT64_MAX;
		return -1;
	}
	return 0;
}

/* *out = a * b; returns 0, or -1 (and *out = INT64_MAX) when it does not fit int64. */
static inline int ck_mul(int64_t a, int64_t b, int64_t *out)
{
	if (__builtin_mul_overflow(a, b, out)) {
		*out = INT64_MAX;
		return -1;
	}
	return 0;
}

/* *out = the product of n factors; 0, or -1 (*out = INT64_MAX) when it does not fit int64. */
static inline int ck_product(const int64_t *factors, size_t n, int64_t *out)
{
	int64_t p = 1;
	for (size_t i = 0; i < n; i++)
		if (ck_mul(p, factors[i], &p)) {
			*out = INT64_MAX;
			return -1;
		}
	*out = p;
	return 0;
}

/* A count of elements as a size_t allocation count of elements of `size` bytes: 0 when it is
 * negative or the bytes do not fit size_t (callers treat 0 as "cannot allocate"). */
static inline size_t ck_alloc_count(int64_t count, size_t size)
{
	size_t bytes;
	if (count < 0 || __builtin_mul_overflow((size_t)count, size, &bytes))
		return 0;
	return (size_t)count;
}

#endif
