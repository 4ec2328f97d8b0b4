/* kernels/cpu/simd_bf16.h: bfloat16 on simd.h's vectors, for the CPU kernels that read or write
 * bfloat16 (ops_cpu.c, attention_cpu.c).
 *
 * A bfloat16 is the top half of a float32 (kernels/ref/bf16.h): widening is a shift (exact);
 * narrowing rounds to nearest even, with VCVTNEPS2BF16 where the build targets AVX-512 BF16 and
 * the CPU has it (simd_bf16_native()), else with integer arithmetic lane by lane. The two give
 * the same bits for every float but denormals, which VCVTNEPS2BF16 flushes to (signed) zero.
 */
#ifndef BENCHDB_SIMD_BF16_H
#define BENCHDB_SIMD_BF16_H

#include "simd.h"

#if VL == 16 && defined(__AVX512BF16__) && !defined(BENCHDB_SIMD_VL)
#define HAVE_AVX512_BF16 1
#else
#define HAVE_AVX512_BF16 0
#endif

typedef uint32_t vuint __attribute__((vector_size(VL * sizeof(uint32_t))));
typedef uint16_t vbf16 __attribute__((vector_size(VL * sizeof(uint16_t))));

/* 1 when the build targets AVX-512 BF16 and this CPU executes it (asked once per file), else 0. */
static inline int simd_bf16_native(void)
{
#if HAVE_AVX512_BF16
	static int has = -1;
	int h = __atomic_load_n(&has, __ATOMIC_RELAXED);
	if (h < 0) {
		__builtin_cpu_init();
		h = __builtin_cpu_supports("avx512bf16") ? 1 : 0;
		__atomic_store_n(&has, h, __ATOMIC_RELAXED);
	}
	return h;
#else
	return 0;
#endif
}

/* exact: a bfloat16 is the top half of a float32 */
ALWAYS_INLINE vfloat bf16_widen(vbf16 h)
{
	return (vfloat)(__builtin_convertvector(h, vuint) << 16);
}

/* v rounded to bfloat16, nearest even (NaN stays a quiet NaN); native: with VCVTNEPS2BF16 (only
 * where simd_bf16_native(); it flushes denormals to zero). */
ALWAYS_INLINE vbf16 bf16_narrow(int native, vfloat v)
{
#if HAVE_AVX512_BF16
	if (native) {
		__m256bh h = _mm512_cvtneps_pbh((__m512)v);
		vbf16 r;
		memcpy(&r, &h, sizeof(r));
		return r;
	}
#else
	(void)native;
#endif
	vuint u = (vuint)v, hi = u >> 16;
	vuint rounded = (u + 0x7fffu + (hi & 1u)) >> 16;
	vuint nan = (vuint)((u & 0x7fffffffu) > 0x7f800000u);
	return __builtin_convertvector((rounded & ~nan) | ((hi | 0x40u) & nan), vbf16);
}

#endif
