/* kernels/cpu/ops_cpu.c: the elementwise and row-wise CPU kernels of the transformer (contract in
 * ops_cpu.h): embedding, RMSNorm, head split/merge with RoPE, SwiGLU, fused softmax +
 * cross-entropy, AdamW and dtype conversion.
 *
 * Every kernel is one pass over its rows (two over a row that stays in L1/L2: RMSNorm, softmax),
 * written with the vector types of simd.h and parallel over rows with a static OpenMP schedule.
 * Kernels with an exp per element (SwiGLU, softmax) can be bound by vexp2 rather than memory
 * where 512-bit FMAs run at half rate.
 * A row's vector tail (width not a multiple of VL) goes through the same vector code on a
 * padded copy of the last partial vector, so every element takes the same arithmetic.
 *
 * Activation dtypes. A row kernel is an ALWAYS_INLINE function of a compile-time enum act_mode
 * and is called through ACT_DISPATCH, once per row, so that each dtype gets its own loop with no
 * dtype test inside it. bfloat16 loads widen with a shift (exact). bfloat16 stores round to
 * nearest even, with VCVTNEPS2BF16 (ACT_BF16_AVX512) where the build targets AVX-512 BF16 and
 * the CPU has it, else with bf16.h's integer rounding done lane-wise on a vector
 * (ACT_BF16_SCALAR; named "scalar" for the path, though it is vectorized). The two give the same
 * bits for every float except denormals, which VCVTNEPS2BF16 flushes to (signed) zero whatever
 * MXCSR says; bf16.h rounds them like any other value. NaN stays a quiet NaN in both.
 */
#include "ops_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bf16.h"
#include "simd.h"
#include "simd_bf16.h"

#if defined(__AVX__) && VL == 8
#include <immintrin.h>        /* vsqrt */
#endif

/* elements per work item of the flat kernels (convert, AdamW): a multiple of VL */
#define FLAT_BLOCK 4096
/* floats of the stack buffer through which RoPE rows pass on their way to or from bfloat16 */
#define ROPE_CHUNK 256

/* ---- the bfloat16 path ---------------------------------------------------------------------- */

enum act_mode {
	ACT_F32,              /* float32 */
	ACT_BF16_AVX512,      /* bfloat16, stores with VCVTNEPS2BF16 */
	ACT_BF16_SCALAR,      /* bfloat16, stores with bf16.h's rounding */
};

static int fallback_forced;        /* cpu_ops_force_fallback; read and written atomically */

void cpu_ops_force_fallback(int on) { __atomic_store_n(&fallback_forced, on != 0, __ATOMIC_RELAXED); }

static int avx512_bf16_in_effect(void)
{
	return !__atomic_load_n(&fallback_forced, __ATOMIC_RELAXED) && simd_bf16_native();
}

const char *cpu_ops_bf16_path(void) { return avx512_bf16_in_effect() ? "avx512_bf16" : "scalar"; }

/* The mode for an act buffer of dtype t, decided once per kernel call. float16 is no act dtype
 * (ops_cpu.h): a caller passing it is a bug that would otherwise write out of bounds. */
static enum act_mode act_mode(enum bd_dtype t)
{
	if (t == DTYPE_FLOAT32)
		return ACT_F32;
	if (t == DTYPE_BFLOAT16)
		return avx512_bf16_in_effect() ? ACT_BF16_AVX512 : ACT_BF16_SCALAR;
	abort();
}

/* fn(MODE, ...) with MODE a constant in each branch: one copy of an ALWAYS_INLINE row kernel
 * per mode. */
#define ACT_DISPATCH(mode, fn, ...)                                                               \
	do {                                                                                      \
		switch (mode) {                                                                   \
		case ACT_F32:                                                                     \
			fn(ACT_F32, __VA_ARGS__);                                                 \
			break;                                                                    \
		case ACT_BF16_AVX512:                                                             \
			fn(ACT_BF16_AVX512, __VA_ARGS__);                                         \
			break;                                                                    \
		case ACT_BF16_SCALAR:                                                             \
			fn(ACT_BF16_SCALAR, __VA_ARGS__);                                         \
			break;                                                                    \
		}                                                                                 \
	} while (0)

/* Round to bfloat16, nearest even (simd_bf16.h). ACT_BF16_SCALAR is bf16_from_float lane by
 * lane. */
ALWAYS_INLINE vbf16 act_narrow(const enum act_mode mode, vfloat v)
{
	return bf16_narrow(mode == ACT_BF16_AVX512, v);
}

/* VL elements of an act buffer from element i on */
ALWAYS_INLINE vfloat vload_act(const enum act_mode mode, const void *base, int64_t i)
{
	if (mode == ACT_F32)
		return vload((const float *)base + i);
	vbf16 h;
	memcpy(&h, (const uint16_t *)base + i, sizeof(h));
	return bf16_widen(h);
}

ALWAYS_INLINE void vstore_act(const enum act_mode mode, void *base, int64_t i, vfloat v)
{
	if (mode == ACT_F32) {
		vstore((float *)base + i, v);
		return;
	}
	vbf16 h = act_narrow(mode, v);
	memcpy((uint16_t *)base + i, &h, sizeof(h));
}

/* The first count (< VL) elements from element i on; the other lanes hold fill. */
ALWAYS_INLINE vfloat vload_act_part(const enum act_mode mode, const void *base, int64_t i,
				    int64_t count, float fill)
{
	float lanes[VL];
	for (int k = 0; k < VL; k++)
		lanes[k] = fill;
	if (mode == ACT_F32)
		memcpy(lanes, (const float *)base + i, (size_t)count * sizeof(float));
	else
		for (int64_t k = 0; k < count; k++)
			lanes[k] = bf16_to_float(((const uint16_t *)base)[i + k]);
	return vload(lanes);
}

ALWAYS_INLINE void vstore_act_part(const enum act_mode mode, void *base, int64_t i, int64_t count,
				   vfloat v)
{
	if (mode == ACT_F32) {
		memcpy((float *)base + i, &v, (size_t)count * sizeof(float));
		return;
	}
	vbf16 h = act_narrow(mode, v);
	memcpy((uint16_t *)base + i, &h, (size_t)count * sizeof(uint16_t));
}

ALWAYS_INLINE vfloat vload_part(const float *p, int64_t count, float fill)
{
	return vload_act_part(ACT_F32, p, 0, count, fill);
}

/* ---- vector math ---------------------------------------------------------------------------- */

ALWAYS_INLINE vfloat vsqrt(vfloat x)
{
#if defined(SIMD_AVX512)
	return (vfloat)_mm512_sqrt_ps((__m512)x);
#elif VL == 8 && defined(__AVX__)
	return (vfloat)_mm256_sqrt_ps((__m256)x);
#else
	for (int k = 0; k < VL; k++)
		x[k] = sqrtf(x[k]);
	return x;
#endif
}

/* 1 / x for x in [1, 2]: with AVX-512 the 14-bit estimate and one Newton step (within 2 ulp;
 * half the cost of a 512-bit division on Zen 4, which SwiGLU is bound by along with vexp2) */
ALWAYS_INLINE vfloat vrecip_1_2(vfloat x)
{
#if defined(SIMD_AVX512)
	vfloat r = (vfloat)_mm512_rcp14_ps((__m512)x);
	return r * (2.0f - x * r);
#else
	return vbroadcast(1.0f) / x;
#endif
}

/* 1 / (1 + e^-a) from e^-|a| <= 1, which vexp2 covers; 0 or 1 past |a| ~ 88 */
ALWAYS_INLINE vfloat vsigmoid(vfloat a)
{
	vfloat minus_abs = (vfloat)((vint)a | INT32_MIN);     /* sign bit set */
	vfloat e = vexp2(minus_abs * LOG2E);
	vfloat r = vrecip_1_2(1.0f + e);
	return vselect(a >= 0, r, e * r);
}

/* ---- conversion ----------------------------------------------------------------------------- */

/* dst[0..count) = float(src[..]) */
static void widen_row(float *restrict dst, const uint16_t *restrict src, int64_t count)
{
	int64_t j = 0;
	for (; j + VL <= count; j += VL)
		vstore(dst + j, vload_act(ACT_BF16_SCALAR, src, j));
	for (; j < count; j++)
		dst[j] = bf16_to_float(src[j]);
}

ALWAYS_INLINE void narrow_row_t(const enum act_mode mode, uint16_t *restrict dst,
				const float *restrict src, int64_t count)
{
	int64_t j = 0;
	for (; j + VL <= count; j += VL)
		vstore_act(mode, dst, j, vload(src + j));
	if (j < count)
		vstore_act_part(mode, dst, j, count - j, vload_part(src + j, count - j, 0.0f));
}

/* dst[0..count) = bfloat16(src[..]) in mode (not ACT_F32) */
static void narrow_row(enum act_mode mode, uint16_t *dst, const float *src, int64_t count)
{
	if (mode == ACT_BF16_AVX512)
		narrow_row_t(ACT_BF16_AVX512, dst, src, count);
	else
		narrow_row_t(ACT_BF16_SCALAR, dst, src, count);
}


void cpu_convert(void *dst, enum bd_dtype dst_dtype, const void *src, enum bd_dtype src_dtype,
		 size_t count)
{
	enum act_mode dm = act_mode(dst_dtype), sm = act_mode(src_dtype);
	int64_t blocks = ((int64_t)count + FLAT_BLOCK - 1) / FLAT_BLOCK;
#pragma omp parallel for schedule(static)
	for (int64_t b = 0; b < blocks; b++) {
		int64_t i = b * FLAT_BLOCK;
		int64_t len = (int64_t)count - i < FLAT_BLOCK ? (int64_t)count - i : FLAT_BLOCK;
		if (dst_dtype == src_dtype)
			memcpy((char *)dst + i * dtype_size(dst_dtype),
			       (const char *)src + i * dtype_size(src_dtype),
			       (size_t)len * dtype_size(dst_dtype));
		else if (sm == ACT_F32)
			narrow_row(dm, (uint16_t *)dst + i, (const float *)src + i, len);
		else
			widen_row((float *)dst + i, (const uint16_t *)src + i, len);
	}
}

/* ---- embedding ------------------------------------------------------------------------------ */

void cpu_embedding_fwd(const int32_t *tokens, const float *table, float *out, int64_t n,
		       int64_t d)
{
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++)
		memcpy(out + i * d, table + (int64_t)tokens[i] * d, (size_t)d * sizeof(float));
}

/* Each work item owns a slice of the d columns (whole vectors, so no two threads share a cache
 * line when rows are 64-byte aligned) and adds the rows into it in row order: every element of
 * dtable is the same sum in the same order whatever the thread count. */
void cpu_embedding_bwd(const int32_t *tokens, const float *dout, float *dtable, int64_t n,
		       int64_t d)
{
	int64_t vecs = (d + VL - 1) / VL;
	int64_t slices = omp_get_max_threads();
	if (slices > vecs)
		slices = vecs;
#pragma omp parallel for schedule(static)
	for (int64_t s = 0; s < slices; s++) {
		int64_t c0 = s * vecs / slices * VL, c1 = (s + 1) * vecs / slices * VL;
		if (c1 > d)
			c1 = d;
		for (int64_t i = 0; i < n; i++) {
			float *restrict dst = dtable + (int64_t)tokens[i] * d;
			const float *restrict src = dout + i * d;
			for (int64_t j = c0; j < c1; j++)
				dst[j] += src[j];
		}
	}
}

/* ---- RMSNorm -------------------------------------------------------------------------------- */

/* y row = x row · rstd · g; returns rstd */
ALWAYS_INLINE float rmsnorm_fwd_row(const enum act_mode mode, const float *restrict x,
				    const float *restrict g, void *y, int64_t y_at, int64_t d,
				    float eps)
{
	vfloat ss[4] = {{0}, {0}, {0}, {0}};     /* four FMA chains: the row is short */
	int64_t j = 0;
	for (; j + 4 * VL <= d; j += 4 * VL)
#pragma GCC unroll 4
		for (int k = 0; k < 4; k++) {
			vfloat a = vload(x + j + k * VL);
			ss[k] += a * a;
		}
	for (; j + VL <= d; j += VL) {
		vfloat a = vload(x + j);
		ss[0] += a * a;
	}
	if (j < d) {
		vfloat a = vload_part(x + j, d - j, 0.0f);
		ss[1] += a * a;
	}
	float sum = hsum((ss[0] + ss[1]) + (ss[2] + ss[3]));
	float rstd = (float)(1.0 / sqrt((double)sum / (double)d + (double)eps));
	vfloat r = vbroadcast(rstd);
	for (j = 0; j + VL <= d; j += VL)
		vstore_act(mode, y, y_at + j, vload(x + j) * r * vload(g + j));
	if (j < d)
		vstore_act_part(mode, y, y_at + j, d - j,
				vload_part(x + j, d - j, 0.0f) * r * vload_part(g + j, d - j, 0.0f));
	return rstd;
}

#define RMSNORM_FWD_ROW(MODE, i) rstd[i] = rmsnorm_fwd_row(MODE, x + (i) * d, g, y, (i) * d, d, eps)

void cpu_rmsnorm_fwd(const float *x, const float *g, void *y, enum bd_dtype y_dtype, float *rstd,
		     int64_t n, int64_t d, float eps)
{
	enum act_mode mode = act_mode(y_dtype);
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++)
		ACT_DISPATCH(mode, RMSNORM_FWD_ROW, i);
}

/* x_out row = x row + y row (while they are in L1), then the norm of that row */
ALWAYS_INLINE float residual_rmsnorm_row(const enum act_mode mode, const float *restrict x,
					 const float *restrict y, float *restrict x_out,
					 const float *restrict g, void *h, int64_t h_at, int64_t d,
					 float eps)
{
	int64_t j = 0;
	for (; j + VL <= d; j += VL)
		vstore(x_out + j, vload(x + j) + vload(y + j));
	for (; j < d; j++)
		x_out[j] = x[j] + y[j];
	return rmsnorm_fwd_row(mode, x_out, g, h, h_at, d, eps);
}

#define RESIDUAL_RMSNORM_ROW(MODE, i)                                                              \
	rstd[i] = residual_rmsnorm_row(MODE, x + (i) * d, y + (i) * d, x_out + (i) * d, g, h, (i) * d, \
				       d, eps)

void cpu_residual_rmsnorm_fwd(const float *x, const float *y, float *x_out, const float *g,
			      void *h, enum bd_dtype h_dtype, float *rstd, int64_t n, int64_t d,
			      float eps)
{
	enum act_mode mode = act_mode(h_dtype);
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++)
		ACT_DISPATCH(mode, RESIDUAL_RMSNORM_ROW, i);
}

size_t cpu_rmsnorm_bwd_work(int64_t d) { return (size_t)omp_get_max_threads() * (size_t)d; }

/* With r = rstd and y = x·r·g: dx += r·g·dy − (r³/d)·(Σ dy·g·x)·x; dg_part += dy·x·r. */
static void rmsnorm_bwd_row(const float *restrict dy, const float *restrict x,
			    const float *restrict g, float r, float *restrict dx,
			    float *restrict dg_part, int64_t d)
{
	vfloat acc[4] = {{0}, {0}, {0}, {0}};
	int64_t j = 0;
	for (; j + 4 * VL <= d; j += 4 * VL)
#pragma GCC unroll 4
		for (int k = 0; k < 4; k++) {
			int64_t at = j + k * VL;
			acc[k] += vload(dy + at) * vload(g + at) * vload(x + at);
		}
	for (; j + VL <= d; j += VL)
		acc[0] += vload(dy + j) * vload(g + j) * vload(x + j);
	if (j < d)
		acc[1] += vload_part(dy + j, d - j, 0.0f) * vload_part(g + j, d - j, 0.0f) *
			  vload_part(x + j, d - j, 0.0f);
	double dot = hsum((acc[0] + acc[1]) + (acc[2] + acc[3]));
	vfloat rv = vbroadcast(r), coef = vbroadcast((float)((double)r * r * r * dot / (double)d));
	for (j = 0; j + VL <= d; j += VL) {
		vfloat dyv = vload(dy + j), xv = vload(x + j);
		vstore(dx + j, vload(dx + j) + rv * vload(g + j) * dyv - coef * xv);
		vstore(dg_part + j, vload(dg_part + j) + dyv * xv * rv);
	}
	if (j < d) {
		int64_t k = d - j;
		vfloat dyv = vload_part(dy + j, k, 0.0f), xv = vload_part(x + j, k, 0.0f);
		vstore_act_part(ACT_F32, dx + j, 0, k,
				vload_part(dx + j, k, 0.0f) + rv * vload_part(g + j, k, 0.0f) * dyv -
					coef * xv);
		vstore_act_part(ACT_F32, dg_part + j, 0, k, vload_part(dg_part + j, k, 0.0f) +
								 dyv * xv * rv);
	}
}

/* Thread t adds the dg terms of its static share of rows into work[t·d ...]; then dg is the sum
 * of the partials in thread order. work must be sized with the thread count in effect now. */
void cpu_rmsnorm_bwd(const float *dy, const float *x, const float *g, const float *rstd,
		     float *dx, float *dg, int64_t n, int64_t d, float *work)
{
	int64_t vecs = (d + VL - 1) / VL;
#pragma omp parallel
	{
		int threads = omp_get_num_threads();
		float *part = work + (size_t)omp_get_thread_num() * (size_t)d;
		memset(part, 0, (size_t)d * sizeof(float));
#pragma omp for schedule(static)
		for (int64_t i = 0; i < n; i++)
			rmsnorm_bwd_row(dy + i * d, x + i * d, g, rstd[i], dx + i * d, part, d);
#pragma omp for schedule(static)
		for (int64_t v = 0; v < vecs; v++) {
			int64_t j = v * VL, k = d - j < VL ? d - j : VL;
			vfloat sum = vload_part(work + j, k, 0.0f);
			for (int t = 1; t < threads; t++)
				sum += vload_part(work + (size_t)t * (size_t)d + (size_t)j, k, 0.0f);
			vstore_act_part(ACT_F32, dg + j, 0, k, sum);
		}
	}
}

/* ---- RoPE and heads ------------------------------------------------------------------------- */

void cpu_rope_table(float *table, int64_t t, int64_t dh, double theta)
{
	int64_t pairs = dh / 2;
#pragma omp parallel for schedule(static)
	for (int64_t p = 0; p < t; p++)
		for (int64_t i = 0; i < pairs; i++) {
			double angle = (double)p * pow(theta, -2.0 * (double)i / (double)dh);
			table[(p * pairs + i) * 2] = (float)cos(angle);
			table[(p * pairs + i) * 2 + 1] = (float)sin(angle);
		}
}

/* Rotate pairs (src[2i], src[2i+1]) by the angles whose (cos, sin) are cs[2i], cs[2i+1], or by
 * minus them when sign is -1. */
static void rope_pairs(float *restrict dst, const float *restrict src, const float *restrict cs,
		       int64_t pairs, float sign)
{
	for (int64_t i = 0; i < pairs; i++) {
		float x0 = src[2 * i], x1 = src[2 * i + 1];
		float c = cs[2 * i], s = sign * cs[2 * i + 1];
		dst[2 * i] = x0 * c - x1 * s;
		dst[2 * i + 1] = x0 * s + x1 * c;
	}
}

/* One (b·t) row of in, ti its position, to the h head rows it feeds. */
static void split_row(enum act_mode mode, const void *in, int64_t in_at, float *out,
		      int64_t head_stride, const float *cs, int64_t h, int64_t dh)
{
	for (int64_t hh = 0; hh < h; hh++) {
		float *dst = out + hh * head_stride;
		int64_t at = in_at + hh * dh;
		if (mode == ACT_F32 && !cs) {
			memcpy(dst, (const float *)in + at, (size_t)dh * sizeof(float));
		} else if (mode == ACT_F32) {
			rope_pairs(dst, (const float *)in + at, cs, dh / 2, 1.0f);
		} else if (!cs) {
			widen_row(dst, (const uint16_t *)in + at, dh);
		} else {
			float buf[ROPE_CHUNK];
			for (int64_t k = 0; k < dh; k += ROPE_CHUNK) {
				int64_t len = dh - k < ROPE_CHUNK ? dh - k : ROPE_CHUNK;
				widen_row(buf, (const uint16_t *)in + at + k, len);
				rope_pairs(dst + k, buf, cs + k, len / 2, 1.0f);
			}
		}
	}
}

void cpu_heads_split(const void *in, enum bd_dtype in_dtype, int64_t ld, float *out,
		     const float *rope_table, int64_t b, int64_t t, int64_t h, int64_t dh)
{
	enum act_mode mode = act_mode(in_dtype);
#pragma omp parallel for schedule(static)
	for (int64_t row = 0; row < b * t; row++) {
		int64_t bi = row / t, ti = row % t;
		split_row(mode, in, row * ld, out + (bi * h * t + ti) * dh, t * dh,
			  rope_table ? rope_table + ti * dh : NULL, h, dh);
	}
}

/* The h head rows at position ti to one (b·t) row of out. */
static void merge_row(enum act_mode mode, const float *in, int64_t head_stride, void *out,
		      int64_t out_at, const float *cs, int64_t h, int64_t dh)
{
	for (int64_t hh = 0; hh < h; hh++) {
		const float *src = in + hh * head_stride;
		int64_t at = out_at + hh * dh;
		if (mode == ACT_F32 && !cs) {
			memcpy((float *)out + at, src, (size_t)dh * sizeof(float));
		} else if (mode == ACT_F32) {
			rope_pairs((float *)out + at, src, cs, dh / 2, -1.0f);
		} else if (!cs) {
			narrow_row(mode, (uint16_t *)out + at, src, dh);
		} else {
			float buf[ROPE_CHUNK];
			for (int64_t k = 0; k < dh; k += ROPE_CHUNK) {
				int64_t len = dh - k < ROPE_CHUNK ? dh - k : ROPE_CHUNK;
				rope_pairs(buf, src + k, cs + k, len / 2, -1.0f);
				narrow_row(mode, (uint16_t *)out + at + k, buf, len);
			}
		}
	}
}

void cpu_heads_merge(const float *in, void *out, enum bd_dtype out_dtype, int64_t ld,
		     const float *rope_table, int64_t b, int64_t t, int64_t h, int64_t dh)
{
	enum act_mode mode = act_mode(out_dtype);
#pragma omp parallel for schedule(static)
	for (int64_t row = 0; row < b * t; row++) {
		int64_t bi = row / t, ti = row % t;
		merge_row(mode, in + (bi * h * t + ti) * dh, t * dh, out, row * ld,
			  rope_table ? rope_table + ti * dh : NULL, h, dh);
	}
}

/* ---- SwiGLU --------------------------------------------------------------------------------- */

/* out[o..o+f) = silu(u[a..a+f)) ⊙ u[a+f..a+2f) */
ALWAYS_INLINE void swiglu_fwd_row(const enum act_mode mode, const void *u, int64_t a_at,
				  void *out, int64_t o_at, int64_t f)
{
	int64_t c_at = a_at + f, j = 0;
	for (; j + VL <= f; j += VL) {
		vfloat a = vload_act(mode, u, a_at + j), c = vload_act(mode, u, c_at + j);
		vstore_act(mode, out, o_at + j, a * vsigmoid(a) * c);
	}
	if (j < f) {
		int64_t k = f - j;
		vfloat a = vload_act_part(mode, u, a_at + j, k, 0.0f);
		vfloat c = vload_act_part(mode, u, c_at + j, k, 0.0f);
		vstore_act_part(mode, out, o_at + j, k, a * vsigmoid(a) * c);
	}
}

#define SWIGLU_FWD_ROW(MODE, i) swiglu_fwd_row(MODE, u, (i) * 2 * f, out, (i) * f, f)

void cpu_swiglu_fwd(const void *u, void *out, enum bd_dtype dtype, int64_t n, int64_t f)
{
	enum act_mode mode = act_mode(dtype);
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++)
		ACT_DISPATCH(mode, SWIGLU_FWD_ROW, i);
}

/* With σ = sigmoid(a): da = dout·c·σ·(1 + a·(1 − σ)), dc = dout·a·σ. */
ALWAYS_INLINE void swiglu_bwd_vec(vfloat a, vfloat c, vfloat dout, vfloat *da, vfloat *dc)
{
	vfloat s = vsigmoid(a);
	*da = dout * c * s * (1.0f + a * (1.0f - s));
	*dc = dout * a * s;
}

ALWAYS_INLINE void swiglu_bwd_row(const enum act_mode mode, const void *u, const void *dout,
				  void *du, int64_t a_at, int64_t o_at, int64_t f)
{
	int64_t c_at = a_at + f, j = 0;
	vfloat da, dc;
	for (; j + VL <= f; j += VL) {
		swiglu_bwd_vec(vload_act(mode, u, a_at + j), vload_act(mode, u, c_at + j),
			       vload_act(mode, dout, o_at + j), &da, &dc);
		vstore_act(mode, du, a_at + j, da);
		vstore_act(mode, du, c_at + j, dc);
	}
	if (j < f) {
		int64_t k = f - j;
		swiglu_bwd_vec(vload_act_part(mode, u, a_at + j, k, 0.0f),
			       vload_act_part(mode, u, c_at + j, k, 0.0f),
			       vload_act_part(mode, dout, o_at + j, k, 0.0f), &da, &dc);
		vstore_act_part(mode, du, a_at + j, k, da);
		vstore_act_part(mode, du, c_at + j, k, dc);
	}
}

#define SWIGLU_BWD_ROW(MODE, i) swiglu_bwd_row(MODE, u, dout, du, (i) * 2 * f, (i) * f, f)

void cpu_swiglu_bwd(const void *u, const void *dout, void *du, enum bd_dtype dtype, int64_t n,
		    int64_t f)
{
	enum act_mode mode = act_mode(dtype);
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++)
		ACT_DISPATCH(mode, SWIGLU_BWD_ROW, i);
}

/* ---- softmax + cross-entropy ---------------------------------------------------------------- */

/* log Σ exp(x[0..V)), max-subtracted: one pass for the max, one for the sum (the row is in
 * cache by then). The sum pass, bound by exp, prefetches the row after (next, NULL for none)
 * into L2, so that the next max pass does not wait on memory. */
static float logsumexp_row(const float *restrict x, int64_t V, const float *next)
{
	vfloat m = vbroadcast(-INFINITY);
	int64_t j = 0;
	for (; j + VL <= V; j += VL)
		m = vmax(m, vload(x + j));
	if (j < V)
		m = vmax(m, vload_part(x + j, V - j, -INFINITY));
	float mx = hmax(m);
	vfloat mv = vbroadcast(mx), s0 = {0}, s1 = {0};
	for (j = 0; j + 2 * VL <= V; j += 2 * VL) {
		if (next) {
			__builtin_prefetch(next + j, 0, 2);
			__builtin_prefetch(next + j + VL, 0, 2);
		}
		s0 += vexp2((vload(x + j) - mv) * LOG2E);
		s1 += vexp2((vload(x + j + VL) - mv) * LOG2E);
	}
	for (; j + VL <= V; j += VL)
		s0 += vexp2((vload(x + j) - mv) * LOG2E);
	if (j < V)     /* padding -inf: exp gives 0 */
		s1 += vexp2((vload_part(x + j, V - j, -INFINITY) - mv) * LOG2E);
	return (float)((double)mx + log((double)hsum(s0 + s1)));
}

double cpu_xent_fwd(const float *logits, const int32_t *targets, float *lse, int64_t n,
		    int64_t V)
{
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++)
		lse[i] = logsumexp_row(logits + i * V, V, i + 1 < n ? logits + (i + 1) * V : NULL);
	/* in row order, so the loss is the same whatever the thread count */
	double sum = 0;
	for (int64_t i = 0; i < n; i++)
		sum += (double)lse[i] - (double)logits[i * V + targets[i]];
	return n > 0 ? sum / (double)n : 0.0;
}

/* out row = scale·(exp(x − lse) − onehot(target)); out may be x itself (ACT_F32) */
ALWAYS_INLINE void xent_bwd_row(const enum act_mode mode, const float *x, float lse,
				int32_t target, void *out, int64_t o_at, int64_t V, float scale)
{
	vfloat lv = vbroadcast(lse), sv = vbroadcast(scale), one = vbroadcast(1.0f), zero = {0};
	int64_t j = 0;
	for (; j + VL <= V; j += VL) {
		vfloat p = vexp2((vload(x + j) - lv) * LOG2E);
		vfloat hot = vselect(viota() == (int32_t)(target - j), one, zero);
		vstore_act(mode, out, o_at + j, (p - hot) * sv);
	}
	if (j < V) {
		vfloat p = vexp2((vload_part(x + j, V - j, 0.0f) - lv) * LOG2E);
		vfloat hot = vselect(viota() == (int32_t)(target - j), one, zero);
		vstore_act_part(mode, out, o_at + j, V - j, (p - hot) * sv);
	}
}

#define XENT_BWD_ROW(MODE, i)                                                                     \
	xent_bwd_row(MODE, logits + (i) * V, lse[i], targets[i], dlogits, (i) * V, V, scale)

void cpu_xent_bwd(const float *logits, const float *lse, const int32_t *targets, void *dlogits,
		  enum bd_dtype dtype, int64_t n, int64_t V, float scale)
{
	enum act_mode mode = act_mode(dtype);
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++)
		ACT_DISPATCH(mode, XENT_BWD_ROW, i);
}

/* ---- AdamW ---------------------------------------------------------------------------------- */

/* The per-step constants, in float64 then rounded once. */
struct adamw_step {
	vfloat decay, b1, one_minus_b1, b2, one_minus_b2, step_size, bc2_sqrt, eps;
};

ALWAYS_INLINE vfloat adamw_vec(const struct adamw_step *k, vfloat p, vfloat g, vfloat *m,
			       vfloat *v)
{
	p *= k->decay;
	*m = k->b1 * *m + k->one_minus_b1 * g;
	*v = k->b2 * *v + k->one_minus_b2 * (g * g);
	return p - k->step_size * *m / (vsqrt(*v) / k->bc2_sqrt + k->eps);
}

/* Elements [i, i + len) of one step; the bf16 shadow in mode (ACT_F32: none). */
ALWAYS_INLINE void adamw_block(const enum act_mode mode, const struct adamw_step *k, float *p,
			       const float *g, float *m, float *v, uint16_t *p_bf16, int64_t i,
			       int64_t len)
{
	int64_t j = i, end = i + len;
	for (; j + VL <= end; j += VL) {
		vfloat mv = vload(m + j), vv = vload(v + j);
		vfloat pv = adamw_vec(k, vload(p + j), vload(g + j), &mv, &vv);
		vstore(p + j, pv);
		vstore(m + j, mv);
		vstore(v + j, vv);
		if (mode != ACT_F32)
			vstore_act(mode, p_bf16, j, pv);
	}
	if (j < end) {
		int64_t c = end - j;
		vfloat mv = vload_part(m + j, c, 0.0f), vv = vload_part(v + j, c, 0.0f);
		vfloat pv = adamw_vec(k, vload_part(p + j, c, 0.0f), vload_part(g + j, c, 0.0f), &mv,
				      &vv);
		vstore_act_part(ACT_F32, p, j, c, pv);
		vstore_act_part(ACT_F32, m, j, c, mv);
		vstore_act_part(ACT_F32, v, j, c, vv);
		if (mode != ACT_F32)
			vstore_act_part(mode, p_bf16, j, c, pv);
	}
}

#define ADAMW_BLOCK(MODE, i, len) adamw_block(MODE, &k, p, g, m, v, p_bf16, i, len)

void cpu_adamw(float *p, const float *g, float *m, float *v, uint16_t *p_bf16, size_t count,
	       const struct adamw_params *hp, int64_t step)
{
	double bc1 = 1.0 - pow((double)hp->beta1, (double)step);
	double bc2 = 1.0 - pow((double)hp->beta2, (double)step);
	struct adamw_step k = {
		.decay = vbroadcast((float)(1.0 - (double)hp->lr * (double)hp->weight_decay)),
		.b1 = vbroadcast(hp->beta1),
		.one_minus_b1 = vbroadcast((float)(1.0 - (double)hp->beta1)),
		.b2 = vbroadcast(hp->beta2),
		.one_minus_b2 = vbroadcast((float)(1.0 - (double)hp->beta2)),
		.step_size = vbroadcast((float)((double)hp->lr / bc1)),
		.bc2_sqrt = vbroadcast((float)sqrt(bc2)),
		.eps = vbroadcast(hp->eps),
	};
	enum act_mode mode = p_bf16 ? act_mode(DTYPE_BFLOAT16) : ACT_F32;
	int64_t blocks = ((int64_t)count + FLAT_BLOCK - 1) / FLAT_BLOCK;
#pragma omp parallel for schedule(static)
	for (int64_t b = 0; b < blocks; b++) {
		int64_t i = b * FLAT_BLOCK;
		int64_t len = (int64_t)count - i < FLAT_BLOCK ? (int64_t)count - i : FLAT_BLOCK;
		ACT_DISPATCH(mode, ADAMW_BLOCK, i, len);
	}
}
