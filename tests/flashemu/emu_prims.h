// tests/flashemu/emu_prims.h: the replacements of flash.cu's "PTX primitives" section on the
// emulator (cuda_emu.h): ldmatrix.x4(.trans) and mma.sync.m16n8k16 as warp collectives (fragment
// layouts per the PTX ISA), cp.async copies (16 and 8 bytes) queued per thread that land at
// cp.async.wait_group (or at issue, copy_at_issue), ex2.approx as exp2f, and the dynamic shared
// memory.
#pragma once
#include "cuda_emu.h"

namespace emu {

inline float half_bits(uint16_t h, int dtype)
{
	if (dtype == 1) {
		__half x;
		memcpy(&x, &h, 2);
		return __half2float(x);
	}
	__nv_bfloat16 x;
	memcpy(&x, &h, 2);
	return __bfloat162float(x);
}

// mma.m16n8k16.row.col, fragments per the PTX ISA ("Matrix Fragments for mma.m16n8k16 with
// floating point type"): g = lane >> 2, t = lane % 4;
//   A a_i: row g for i in {0,1,4,5}, g + 8 otherwise; col 2t + (i & 1), + 8 for i >= 4
//   B b_i: row 2t + (i & 1), + 8 for i >= 2; col g
//   C c_i: row g for i < 2, g + 8 otherwise; col 2t + (i & 1)
// a_2j, a_2j+1 are the low, high halves of register j (likewise b).
inline void mma_compute(warp_slots &w)
{
	double A[16][16], B[16][8];
	int seenA[16][16] = {}, seenB[16][8] = {};
	for (int l = 0; l < 32; l++) {
		int g = l >> 2, t = l & 3;
		for (int i = 0; i < 8; i++) {
			uint16_t h = (uint16_t)(w.a[l][i / 2] >> (16 * (i & 1)));
			int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
			int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
			A[row][col] = half_bits(h, w.dtype);
			seenA[row][col]++;
		}
		for (int i = 0; i < 4; i++) {
			uint16_t h = (uint16_t)(w.b[l][i / 2] >> (16 * (i & 1)));
			int row = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
			B[row][g] = half_bits(h, w.dtype);
			seenB[row][g]++;
		}
	}
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++)
			if (seenA[r][c] != 1)
				fail("A fragment coverage");
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 8; c++)
			if (seenB[r][c] != 1)
				fail("B fragment coverage");
	for (int l = 0; l < 32; l++) {
		int g = l >> 2, t = l & 3;
		for (int i = 0; i < 4; i++) {
			int row = i < 2 ? g : g + 8, col = 2 * t + (i & 1);
			double s = w.c[l][i];
			for (int k = 0; k < 16; k++)
				s += A[row][k] * B[k][col];
			w.d[l][i] = (float)s;
		}
	}
	mma_ops++;
}

// ldmatrix.m8n8.x4(.trans).b16: lanes 8i..8i+7 address rows 0..7 of matrix i; register i of
// lane l holds matrix i's row l/4, columns 2(l%4), 2(l%4)+1 (trans: column l/4, rows 2(l%4),
// 2(l%4)+1), lower column (row) in the low half.
inline void ldsm(uint32_t r[4], const void *src, bool trans)
{
	check_smem(src, 16, 16, "ldmatrix row outside shared memory");
	warp_slots &w = warps[cur->warp];
	w.ptr[cur->lane] = (const unsigned char *)src;
	warp_bar([&w, trans] {
		for (int l = 0; l < 32; l++)
			for (int m = 0; m < 4; m++) {
				uint16_t lo, hi;
				if (!trans) {
					const unsigned char *row = w.ptr[8 * m + l / 4];
					memcpy(&lo, row + 2 * (2 * (l % 4)), 2);
					memcpy(&hi, row + 2 * (2 * (l % 4) + 1), 2);
				} else {
					memcpy(&lo, w.ptr[8 * m + 2 * (l % 4)] + 2 * (l / 4), 2);
					memcpy(&hi, w.ptr[8 * m + 2 * (l % 4) + 1] + 2 * (l / 4), 2);
				}
				w.r[l][m] = lo | (uint32_t)hi << 16;
			}
	});
	for (int m = 0; m < 4; m++)
		r[m] = w.r[cur->lane][m];
	warp_bar();
	collective_ops++;
}

}  // namespace emu

// ---- the replacements of flash.cu's "PTX primitives" section ---------------------------------

inline unsigned char *dyn_smem() { return emu::smem; }

// cp.async.{cg,ca}.shared.global [dst], [src], size, src_bytes (size 16, or 8 with .ca): dst and
// src aligned to size, src_bytes 0 (zero fill, nothing read) or size (partial copies are not
// used here and are refused).
inline void cp_async_n(void *dst, const void *src, int src_bytes, int size)
{
	emu::check_smem(dst, size, size, "cp.async destination outside shared memory");
	if (src_bytes != 0 && src_bytes != size)
		emu::fail("cp.async partial size");
	if (src_bytes)
		emu::check_global(src, size, size);
	emu::pending_copy c{(unsigned char *)dst, (const unsigned char *)src, src_bytes, size};
	if (emu::copy_at_issue) {
		if (c.bytes)
			memcpy(c.dst, c.src, c.size);
		else
			memset(c.dst, 0, c.size);
	} else {
		emu::cur->pending.push_back(c);
	}
}

inline void cp_async16(void *dst, const void *src, int src_bytes)
{
	cp_async_n(dst, src, src_bytes, 16);
}

inline void cp_async8(void *dst, const void *src, int src_bytes)
{
	cp_async_n(dst, src, src_bytes, 8);
}

inline void cp_async_commit() {}

inline void cp_async_wait_all()
{
	for (auto &c : emu::cur->pending) {
		if (c.bytes)
			memcpy(c.dst, c.src, c.size);
		else
			memset(c.dst, 0, c.size);
	}
	emu::cur->pending.clear();
}

inline void ldsm_x4(uint32_t r[4], const void *src) { emu::ldsm(r, src, false); }
inline void ldsm_x4_t(uint32_t r[4], const void *src) { emu::ldsm(r, src, true); }

inline float fast_exp2(float x) { return exp2f(x); }

template <typename T>
inline void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	emu::warp_slots &w = emu::warps[emu::cur->warp];
	int l = emu::cur->lane;
	for (int i = 0; i < 4; i++) {
		w.a[l][i] = a[i];
		w.c[l][i] = c[i];
	}
	w.b[l][0] = b0;
	w.b[l][1] = b1;
	w.dtype = sizeof(T) == 2 && std::is_same<T, __half>::value ? 1 : 2;
	emu::warp_bar([&w] { emu::mma_compute(w); });
	for (int i = 0; i < 4; i++)
		c[i] = w.d[l][i];
	emu::warp_bar();
	emu::collective_ops++;
}
