/* kernels/cpu/simd.h: the small vector toolkit of the CPU kernels, in GCC/Clang vector
 * extensions so that one source builds for any x86-64 level (and other ISAs): vfloat is one
 * register of the target: 16 floats with AVX-512, 8 with AVX, 4 otherwise.
 *
 * Files that include this are built with -ffp-contract=fast (kernels/CMakeLists.txt), so that
 * a += b * c on vfloat becomes one FMA.
 */
#ifndef BENCHDB_SIMD_H
#define BENCHDB_SIMD_H

#include <stdint.h>
#include <string.h>

/* floats per vector: the widest register the target has. BENCHDB_SIMD_VL (4, 8 or 16) forces a
 * width with the generic code only, so that a machine without AVX-512 can run the kernels'
 * 16-float tiling (tests; slow, never a release build). */
#if defined(BENCHDB_SIMD_VL)
#define VL BENCHDB_SIMD_VL
#elif defined(__AVX512F__)
#include <immintrin.h>        /* max and horizontal reductions only; the rest is generic */
#define VL 16
#define SIMD_AVX512 1
#elif defined(__AVX__)
#define VL 8
#else
#define VL 4
#endif

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

typedef float vfloat __attribute__((vector_size(VL * sizeof(float))));
typedef int32_t vint __attribute__((vector_size(VL * sizeof(int32_t))));

/* unaligned load and store */
ALWAYS_INLINE vfloat vload(const float *p)
{
	vfloat v;
	memcpy(&v, p, sizeof(v));
	return v;
}

ALWAYS_INLINE void vstore(float *p, vfloat v) { memcpy(p, &v, sizeof(v)); }

/* written out: (vfloat){0} + x would cost an add, since x + 0 is not x for x = -0 */
ALWAYS_INLINE vfloat vbroadcast(float x)
{
#if VL == 16
	return (vfloat){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
#elif VL == 8
	return (vfloat){x, x, x, x, x, x, x, x};
#else
	return (vfloat){x, x, x, x};
#endif
}

/* a where mask, else b; mask lanes are all ones or all zeros, as vector comparisons give */
ALWAYS_INLINE vfloat vselect(vint mask, vfloat a, vfloat b)
{
	return (vfloat)((mask & (vint)a) | (~mask & (vint)b));
}

ALWAYS_INLINE vfloat vmax(vfloat a, vfloat b)
{
#if defined(SIMD_AVX512)
	return (vfloat)_mm512_max_ps((__m512)a, (__m512)b);
#else
	return vselect(a > b, a, b);
#endif
}

/* 0, 1, ..., VL - 1 */
ALWAYS_INLINE vint viota(void)
{
#if VL == 16
	return (vint){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#elif VL == 8
	return (vint){0, 1, 2, 3, 4, 5, 6, 7};
#else
	return (vint){0, 1, 2, 3};
#endif
}

/* horizontal max and sum: a shuffle tree with AVX-512, else lane by lane */
ALWAYS_INLINE float hmax(vfloat v)
{
#if defined(SIMD_AVX512)
	return _mm512_reduce_max_ps((__m512)v);
#else
	float m = v[0];
	for (int i = 1; i < VL; i++)
		m = v[i] > m ? v[i] : m;
	return m;
#endif
}

ALWAYS_INLINE float hsum(vfloat v)
{
#if defined(SIMD_AVX512)
	return _mm512_reduce_add_ps((__m512)v);
#else
	float s = 0;
	for (int i = 0; i < VL; i++)
		s += v[i];
	return s;
#endif
}

/* 2^x for x <= 0 (x < -127 gives 0, -inf included; x slightly above 0 is fine). Rounds x to the
 * nearest integer n by adding 1.5·2^23 (whose low mantissa bits then hold n) and evaluates 2^f,
 * f in [-0.5, 0.5], by its Taylor polynomial of degree 7 (truncation error < 1e-8 relative,
 * below float rounding). */
ALWAYS_INLINE vfloat vexp2(vfloat x)
{
	const vfloat lo = vbroadcast(-127.0f), shifter = vbroadcast(12582912.0f);
	x = vselect(x < lo, lo, x);
	vfloat t = x + shifter;
	vfloat f = x - (t - shifter);
	vint e = ((vint)t - 0x4b400000 + 127) << 23;    /* 2^n as float bits; n = -127 gives 0 */
	vfloat p = vbroadcast(1.5252733804e-5f);       /* ln2^7 / 7! */
	p = p * f + 1.5403530393e-4f;                   /* ln2^6 / 6! */
	p = p * f + 1.3333558146e-3f;                   /* ln2^5 / 5! */
	p = p * f + 9.6181291076e-3f;                   /* ln2^4 / 4! */
	p = p * f + 5.5504108665e-2f;                   /* ln2^3 / 3! */
	p = p * f + 2.4022650696e-1f;                   /* ln2^2 / 2! */
	p = p * f + 6.9314718056e-1f;                   /* ln2 */
	p = p * f + 1.0f;
	return p * (vfloat)e;
}

#endif
