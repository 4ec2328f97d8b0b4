// Host emulation of the CUDA/PTX features flash.cu's kernels use: every CUDA thread is a fiber
// (ucontext); warp-collective ops (ldmatrix, mma.sync, shfl) exchange through per-warp slots
// between warp barriers; __syncthreads is a block barrier; cp.async copies are queued per thread
// and land at cp.async.wait_group (or at issue, mode 1); shared memory starts as NaN bytes.
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#include <vector>
#include <functional>
#include <algorithm>
#include <random>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

namespace emu {

struct dim { unsigned x, y, z; };
struct pending_copy { unsigned char *dst; const unsigned char *src; int bytes; };

struct fiber {
	ucontext_t ctx;
	bool done = false;
	bool at_block_bar = false;
	dim tid;
	int lane = 0, warp = 0;
	std::vector<pending_copy> pending;
};

struct warp_slots {
	int count = 0, gen = 0;
	float f[32];
	const unsigned char *ptr[32];
	uint32_t a[32][4], b[32][2];
	float c[32][4], d[32][4];
	int dtype = 0;   // 1 half, 2 bf16
	uint32_t r[32][4];
};

struct region { const unsigned char *lo, *hi; };

inline std::vector<fiber> fibers;
inline std::vector<char *> stacks;   // one per thread slot, reused by every block
constexpr size_t kStack = 1 << 18;
inline std::vector<warp_slots> warps;
inline fiber *cur = nullptr;
inline ucontext_t sched_ctx;
inline long progress = 0;
inline int bar_count = 0, bar_gen = 0;
inline unsigned char *smem = nullptr;
inline size_t smem_size = 0;
inline dim block_idx, block_dim, grid_dim;
inline std::function<void()> kernel_body;
inline int copy_at_issue = 0;   // 1: cp.async lands at issue, 0: at wait
inline std::vector<region> globals;   // buffers cp.async may read
inline std::mt19937 rng(1);
inline long collective_ops = 0, mma_ops = 0;

[[noreturn]] inline void fail(const char *what)
{
	fprintf(stderr, "EMU FAILURE: %s (block %u thread %u)\n", what, block_idx.x,
		cur ? cur->tid.x : 0u);
	abort();
}

inline void yield() { swapcontext(&cur->ctx, &sched_ctx); }

// Warp barrier; the last lane to arrive runs done() before releasing the others.
template <typename F>
inline void warp_bar(F done)
{
	warp_slots &w = warps[cur->warp];
	int gen = w.gen;
	if (++w.count == 32) {
		done();
		w.count = 0;
		w.gen++;
		progress++;
	} else {
		while (w.gen == gen)
			yield();
	}
}
inline void warp_bar() { warp_bar([] {}); }

inline void block_bar()
{
	int gen = bar_gen;
	if (++bar_count == (int)block_dim.x) {
		bar_count = 0;
		bar_gen++;
		progress++;
		for (auto &f : fibers)
			f.at_block_bar = false;   // released, even before they run again
	} else {
		cur->at_block_bar = true;
		while (bar_gen == gen)
			yield();
		cur->at_block_bar = false;
	}
}

inline void check_smem(const void *p, size_t bytes, size_t align, const char *what)
{
	const unsigned char *c = (const unsigned char *)p;
	if (c < smem || c + bytes > smem + smem_size)
		fail(what);
	if ((uintptr_t)(c - smem) % align)
		fail("misaligned shared access");
}

inline void check_global(const void *p, size_t bytes)
{
	const unsigned char *c = (const unsigned char *)p;
	if ((uintptr_t)c % 16)
		fail("cp.async source not 16-byte aligned");
	for (auto &r : globals)
		if (c >= r.lo && c + bytes <= r.hi)
			return;
	fail("cp.async source outside every global buffer");
}

inline void fiber_main()
{
	kernel_body();
	cur->done = true;
	progress++;
	swapcontext(&cur->ctx, &sched_ctx);
}

// Runs the block's fibers to completion, resuming them in a fresh random order every round.
inline void run_block(unsigned threads)
{
	fibers.clear();
	fibers.resize(threads);
	warps.assign(threads / 32, warp_slots());
	bar_count = bar_gen = 0;
	for (unsigned i = 0; i < threads; i++) {
		fiber &f = fibers[i];
		f.tid = {i, 0, 0};
		f.lane = i % 32;
		f.warp = i / 32;
		while (stacks.size() <= i)
			stacks.push_back((char *)malloc(kStack));
		getcontext(&f.ctx);
		f.ctx.uc_stack.ss_sp = stacks[i];
		f.ctx.uc_stack.ss_size = kStack;
		f.ctx.uc_link = nullptr;
		makecontext(&f.ctx, fiber_main, 0);
	}
	std::vector<unsigned> order(threads);
	for (unsigned i = 0; i < threads; i++)
		order[i] = i;
	// Every other block runs "solo": one warp at a time (random order) until it reaches
	// __syncthreads or ends, so a missing block barrier reads stale or NaN shared memory.
	// Otherwise rounds resume every thread in a random order.
	auto resume = [](fiber &f) {
		cur = &f;
		swapcontext(&sched_ctx, &f.ctx);
		cur = nullptr;
	};
	const bool solo = rng() % 2 == 0;
	std::vector<unsigned> warp_order(threads / 32);
	for (unsigned w = 0; w < threads / 32; w++)
		warp_order[w] = w;
	int idle_rounds = 0;
	for (;;) {
		long before = progress;
		bool all_done = true;
		if (solo) {
			std::shuffle(warp_order.begin(), warp_order.end(), rng);
			for (unsigned w : warp_order) {
				int stuck = 0;
				for (;;) {
					bool runnable = false;
					long b0 = progress;
					for (unsigned l = 0; l < 32; l++) {
						fiber &f = fibers[w * 32 + l];
						if (f.done || f.at_block_bar)
							continue;
						runnable = true;
						resume(f);
					}
					if (!runnable)
						break;
					stuck = progress == b0 ? stuck + 1 : 0;
					if (stuck > 2)
						fail("deadlock: lanes of a warp wait at different barriers");
				}
			}
			for (auto &f : fibers)
				all_done = all_done && f.done;
			if (!all_done) {   // all at __syncthreads: one more round releases them
				for (auto &f : fibers)
					if (!f.done)
						resume(f);
			}
		} else {
			std::shuffle(order.begin(), order.end(), rng);
			for (unsigned i : order) {
				fiber &f = fibers[i];
				if (f.done)
					continue;
				all_done = false;
				resume(f);
			}
		}
		if (all_done)
			break;
		idle_rounds = progress == before ? idle_rounds + 1 : 0;
		if (idle_rounds > 2)
			fail("deadlock: threads wait at different barriers");
	}
	for (auto &f : fibers)
		if (!f.pending.empty())
			fail("cp.async never waited for");
}

// Launches grid × threads with dynamic shared memory smem_bytes (NaN-filled for every block).
inline void launch(unsigned grid, unsigned threads, size_t smem_bytes, std::function<void()> body)
{
	if (threads % 32)
		fail("block size not a multiple of 32");
	std::vector<unsigned char> buf(smem_bytes + 16, 0xff);
	smem = buf.data();
	smem_size = smem_bytes;
	kernel_body = body;
	grid_dim = {grid, 1, 1};
	block_dim = {threads, 1, 1};
	for (unsigned b = 0; b < grid; b++) {
		memset(buf.data(), 0xff, buf.size());
		block_idx = {b, 0, 0};
		run_block(threads);
	}
	smem = nullptr;
}

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

#define threadIdx (emu::cur->tid)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)

inline void __syncthreads() { emu::block_bar(); }

inline float __shfl_xor_sync(unsigned mask, float v, int lanemask)
{
	if (mask != 0xffffffffu)
		emu::fail("partial shfl mask");
	emu::warp_slots &w = emu::warps[emu::cur->warp];
	w.f[emu::cur->lane] = v;
	emu::warp_bar();
	float r = w.f[emu::cur->lane ^ lanemask];
	emu::warp_bar();
	emu::collective_ops++;
	return r;
}

inline float atomicAdd(float *p, float v)
{
	float old = *p;
	*p = old + v;
	return old;
}

// ---- the replacements of flash.cu's "PTX primitives" section ---------------------------------

inline unsigned char *dyn_smem() { return emu::smem; }

inline void cp_async16(void *dst, const void *src, int src_bytes)
{
	emu::check_smem(dst, 16, 16, "cp.async destination outside shared memory");
	if (src_bytes != 0 && src_bytes != 16)
		emu::fail("cp.async partial size");
	if (src_bytes)
		emu::check_global(src, 16);
	emu::pending_copy c{(unsigned char *)dst, (const unsigned char *)src, src_bytes};
	if (emu::copy_at_issue) {
		if (c.bytes)
			memcpy(c.dst, c.src, 16);
		else
			memset(c.dst, 0, 16);
	} else {
		emu::cur->pending.push_back(c);
	}
}

inline void cp_async_commit() {}

inline void cp_async_wait_all()
{
	for (auto &c : emu::cur->pending) {
		if (c.bytes)
			memcpy(c.dst, c.src, 16);
		else
			memset(c.dst, 0, 16);
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
