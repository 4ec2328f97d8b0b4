/* kernels/ref/bf16.h: bfloat16 <-> float conversion (bfloat16 stored as uint16_t: the top half of
 * a float32). float -> bfloat16 rounds to nearest, ties to even, and keeps NaN a NaN. Also IEEE
 * float16 <-> float (the compiler's _Float16: correctly rounded). */
#ifndef BENCHDB_BF16_H
#define BENCHDB_BF16_H

#include <stdint.h>
#include <string.h>

static inline uint16_t bf16_from_float(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static inline float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float x;
	memcpy(&x, &u, sizeof(x));
	return x;
}

static inline uint16_t f16_from_float(float x)
{
	_Float16 h = (_Float16)x;
	uint16_t u;
	memcpy(&u, &h, sizeof(u));
	return u;
}

static inline float f16_to_float(uint16_t u)
{
	_Float16 h;
	memcpy(&h, &u, sizeof(h));
	return (float)h;
}

#endif
