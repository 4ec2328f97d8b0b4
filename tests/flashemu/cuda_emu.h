// tests/flashemu/cuda_emu.h: the CPU warp emulator's core, shared by flashemu (emu.cpp) and the
// emulated CUDA device of the tests (emu_runtime.cpp; tests/CMakeLists.txt, label emu).
//
// Every CUDA thread is a fiber (its own stack; a register switch on x86-64, else ucontext). A launch runs its blocks one after another, in grid
// order or in a shuffled order (every other launch); inside a block the scheduler either resumes
// every unfinished thread in a fresh random order each round, or runs one warp alone until it
// reaches __syncthreads or ends ("solo", every other block), so that a missing barrier reads stale
// or NaN shared memory. Warp collectives (shuffles, and emu_prims.h's ldmatrix and mma.sync)
// exchange values through per-warp slots between warp barriers; __syncthreads is a block barrier
// that every thread of the block must reach (a deadlock is reported). Shared memory, static
// (__shared__ variables, linked into the section emu_shared) and dynamic, is filled with 0xff
// bytes (NaN in every float type) before every block. Atomics are plain read-modify-writes: the
// fibers are never preempted inside one.
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <ucontext.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#include <vector>
#include <functional>
#include <algorithm>
#include <random>
#include <type_traits>
#include <string>
#include <map>

// The emulated device is an sm_90: kernels take their sm_90 paths (e.g. atomicAdd(float2 *))
// where they test this, so that the emulator runs the code the H100 runs.
#define CUDA_EMU_SM90 1

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// Static shared memory: one copy per process (blocks run one at a time), in a section of its
// own so that every block starts with it poisoned.
#define __shared__ static __attribute__((section("emu_shared"), aligned(16)))

extern "C" {
extern unsigned char __start_emu_shared[] __attribute__((weak));
extern unsigned char __stop_emu_shared[] __attribute__((weak));
}

namespace emu {

struct dim { unsigned x, y, z; };
// a queued cp.async: size bytes (its cp-size) from src, or zeros where bytes is 0
struct pending_copy { unsigned char *dst; const unsigned char *src; int bytes, size; };

// Switching between fibers: on x86-64 a six-register stack switch (swapcontext's signal-mask
// system calls would triple the run time); elsewhere ucontext.
#if defined(__x86_64__)
extern "C" void emu_switch(void **save_sp, void *to_sp);
asm(".pushsection .text.emu_switch,\"axG\",@progbits,emu_switch,comdat\n"
    ".weak emu_switch\n"
    ".type emu_switch, @function\n"
    "emu_switch:\n"
    "\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
    "\tmovq %rsp, (%rdi)\n"
    "\tmovq %rsi, %rsp\n"
    "\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
    "\tret\n"
    ".size emu_switch, .-emu_switch\n"
    ".popsection\n");
struct context { void *sp = nullptr; };
#else
struct context { ucontext_t uc; };
#endif

struct fiber {
	context ctx;
	bool done = false;
	bool at_block_bar = false;
	dim tid;
	int lane = 0, warp = 0;
	std::vector<pending_copy> pending;
};

struct warp_slots {
	int count = 0, gen = 0;
	int lanes = 32;   // threads of the block in this warp (the last one may be partial)
	uint64_t v[32];   // shuffles
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
inline context sched_ctx;
inline long progress = 0;
inline int bar_count = 0, bar_gen = 0;
inline unsigned nthreads = 0;
inline unsigned char *smem = nullptr;
inline size_t smem_size = 0;
inline dim block_idx, block_dim, grid_dim;
inline std::function<void()> kernel_body;
inline const char *kernel_name = "kernel";
inline int copy_at_issue = 0;   // 1: cp.async lands at issue, 0: at wait
inline std::vector<region> globals;   // buffers cp.async may read (device allocations)
inline std::mt19937 rng(1);
inline long collective_ops = 0, mma_ops = 0, launches = 0, threads_run = 0;
inline std::map<std::string, long> launched;   // launches per kernel (and launcher)

// At exit, when BENCHDB_EMU_COVERAGE names a file: one line per kernel launched, "count<TAB>
// kernel (launched by ...)" (tests/CMakeLists.txt checks that every __global__ ran).
inline void write_coverage()
{
	const char *path = getenv("BENCHDB_EMU_COVERAGE");
	FILE *f = path && *path ? fopen(path, "w") : nullptr;
	if (!f)
		return;
	for (auto &kv : launched)
		fprintf(f, "%ld\t%s\n", kv.second, kv.first.c_str());
	fclose(f);
}

[[noreturn]] inline void fail(const char *what)
{
	fprintf(stderr, "EMU FAILURE: %s (kernel %s, block (%u,%u,%u) thread (%u,%u,%u))\n", what,
		kernel_name, block_idx.x, block_idx.y, block_idx.z, cur ? cur->tid.x : 0u,
		cur ? cur->tid.y : 0u, cur ? cur->tid.z : 0u);
	abort();
}

// A fault inside a kernel (a guard page of a device allocation): which kernel, block and thread.
inline void on_fault(int sig, siginfo_t *si, void *)
{
	char msg[512];
	int n = snprintf(msg, sizeof msg, "EMU FAILURE: %s at address %p in %s (block (%u,%u,%u) "
			 "thread (%u,%u,%u)): an access outside every device allocation\n",
			 sig == SIGSEGV ? "SIGSEGV" : "SIGBUS", si->si_addr,
			 cur ? kernel_name : "host code", block_idx.x, block_idx.y, block_idx.z,
			 cur ? cur->tid.x : 0u, cur ? cur->tid.y : 0u, cur ? cur->tid.z : 0u);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		_exit(134);
	signal(SIGABRT, SIG_DFL);
	abort();
}

inline void install_fault_handler()
{
	static bool done = false;
	if (done)
		return;
	done = true;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, nullptr);
	sigaction(SIGBUS, &sa, nullptr);
	atexit(write_coverage);
	if (const char *seed = getenv("BENCHDB_EMU_SEED"))   // other schedules than the default
		rng.seed((unsigned)strtoul(seed, nullptr, 10));
}

inline void switch_to(context &save, context &to)
{
#if defined(__x86_64__)
	emu_switch(&save.sp, to.sp);
#else
	swapcontext(&save.uc, &to.uc);
#endif
}

inline void yield() { switch_to(cur->ctx, sched_ctx); }

// Warp barrier; the last lane to arrive runs done() before releasing the others.
template <typename F>
inline void warp_bar(F done)
{
	warp_slots &w = warps[cur->warp];
	int gen = w.gen;
	if (++w.count == w.lanes) {
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
	if (++bar_count == (int)nthreads) {
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

inline void check_global(const void *p, size_t bytes, size_t align = 16)
{
	const unsigned char *c = (const unsigned char *)p;
	if ((uintptr_t)c % align)
		fail(align == 16 ? "cp.async source not 16-byte aligned"
				 : "cp.async source not aligned to its size");
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
	switch_to(cur->ctx, sched_ctx);
	abort();   // a finished fiber is never resumed
}

// f's context at the start of fiber_main on stack [stack, stack + kStack)
inline void fiber_start(fiber &f, char *stack)
{
#if defined(__x86_64__)
	uintptr_t top = ((uintptr_t)stack + kStack) & ~(uintptr_t)15;
	void **sp = (void **)top;
	*--sp = nullptr;                     // fiber_main's return address: never used
	*--sp = (void *)&fiber_main;         // emu_switch returns here
	for (int i = 0; i < 6; i++)
		*--sp = nullptr;             // rbp rbx r12 r13 r14 r15
	f.ctx.sp = sp;
#else
	getcontext(&f.ctx.uc);
	f.ctx.uc.uc_stack.ss_sp = stack;
	f.ctx.uc.uc_stack.ss_size = kStack;
	f.ctx.uc.uc_link = nullptr;
	makecontext(&f.ctx.uc, fiber_main, 0);
#endif
}

// Runs the block's fibers to completion (see the file comment for the two schedules).
inline void run_block()
{
	const unsigned threads = nthreads, nwarps = (threads + 31) / 32;
	fibers.clear();
	fibers.resize(threads);
	warps.assign(nwarps, warp_slots());
	for (unsigned w = 0; w < nwarps; w++)
		warps[w].lanes = (int)std::min(32u, threads - 32 * w);
	bar_count = bar_gen = 0;
	for (unsigned i = 0; i < threads; i++) {
		fiber &f = fibers[i];
		f.tid = {i % block_dim.x, i / block_dim.x % block_dim.y,
			 i / (block_dim.x * block_dim.y)};
		f.lane = i % 32;
		f.warp = i / 32;
		while (stacks.size() <= i)
			stacks.push_back((char *)malloc(kStack));
		fiber_start(f, stacks[i]);
	}
	threads_run += threads;
	std::vector<unsigned> order(threads);
	for (unsigned i = 0; i < threads; i++)
		order[i] = i;
	auto resume = [](fiber &f) {
		cur = &f;
		switch_to(sched_ctx, f.ctx);
		cur = nullptr;
	};
	const bool solo = rng() % 2 == 0;
	std::vector<unsigned> warp_order(nwarps);
	for (unsigned w = 0; w < nwarps; w++)
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
					for (int l = 0; l < warps[w].lanes; l++) {
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
			fail("deadlock: threads wait at different barriers (or some have exited)");
	}
	for (auto &f : fibers)
		if (!f.pending.empty())
			fail("cp.async never waited for");
}

// Runs grid × block threads of body with smem_bytes of dynamic shared memory; the caller has
// checked the configuration. Blocks run in grid order, or shuffled on every other launch.
inline void launch(const char *name, dim3 grid, dim3 block, size_t smem_bytes,
		   std::function<void()> body)
{
	install_fault_handler();
	std::vector<unsigned char> buf(smem_bytes + 16, 0xff);
	smem = buf.data();
	smem_size = smem_bytes;
	kernel_body = std::move(body);
	kernel_name = name;
	launched[name]++;
	grid_dim = {grid.x, grid.y, grid.z};
	block_dim = {block.x, block.y, block.z};
	nthreads = block.x * block.y * block.z;
	const size_t nblocks = (size_t)grid.x * grid.y * grid.z;
	std::vector<size_t> order(nblocks);
	for (size_t b = 0; b < nblocks; b++)
		order[b] = b;
	if (launches++ % 2)
		std::shuffle(order.begin(), order.end(), rng);
	const size_t static_bytes =
		__start_emu_shared ? (size_t)(__stop_emu_shared - __start_emu_shared) : 0;
	for (size_t b : order) {
		memset(buf.data(), 0xff, buf.size());
		if (static_bytes)
			memset(__start_emu_shared, 0xff, static_bytes);
		block_idx = {(unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y),
			     (unsigned)(b / ((size_t)grid.x * grid.y))};
		run_block();
	}
	smem = nullptr;
	kernel_name = "kernel";
}

// flashemu's form: a 1-D grid of 1-D blocks
inline void launch(unsigned grid, unsigned threads, size_t smem_bytes, std::function<void()> body)
{
	if (threads % 32)
		fail("block size not a multiple of 32");
	launch("kernel", dim3(grid), dim3(threads), smem_bytes, std::move(body));
}

// value of lane src of the calling thread's warp, after every lane of the warp has offered v
template <typename T>
inline T exchange(unsigned mask, T v, int (*src_of)(int lane, int arg, int width), int arg,
		  int width)
{
	static_assert(sizeof(T) <= 8, "shuffles move 4 or 8 bytes");
	warp_slots &w = warps[cur->warp];
	const uint32_t full = w.lanes == 32 ? 0xffffffffu : (1u << w.lanes) - 1;
	if (mask != full)
		fail(mask == 0xffffffffu ? "full shuffle mask in a partial warp"
					 : "partial shuffle mask (not emulated)");
	if (width <= 0 || width > 32 || (width & (width - 1)))
		fail("shuffle width not a power of two up to 32");
	memcpy(&w.v[cur->lane], &v, sizeof(T));
	warp_bar();
	int src = src_of(cur->lane, arg, width);
	if (src >= w.lanes)
		fail("shuffle from a lane outside the block");
	T r;
	memcpy(&r, &w.v[src], sizeof(T));
	warp_bar();
	collective_ops++;
	return r;
}

}  // namespace emu

#define threadIdx (emu::cur->tid)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)

inline void __syncthreads() { emu::block_bar(); }

// CUDA's shuffle rules: xor and down/up stay inside the width-lane segment (an out-of-segment
// source gives the caller's own value, as the hardware does).
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T v, int lanemask, int width = 32)
{
	return emu::exchange<T>(mask, v, [](int l, int a, int wd) {
		int s = l ^ a;
		return s / wd == l / wd ? s : l;
	}, lanemask, width);
}

template <typename T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
	return emu::exchange<T>(mask, v, [](int l, int a, int wd) {
		return l % wd + a < wd ? l + a : l;
	}, (int)delta, width);
}

template <typename T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
	return emu::exchange<T>(mask, v, [](int l, int a, int wd) {
		return l % wd >= a ? l - a : l;
	}, (int)delta, width);
}

template <typename T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
	return emu::exchange<T>(mask, v, [](int l, int a, int wd) {
		return l / wd * wd + (a % wd + wd) % wd;
	}, src, width);
}

inline float atomicAdd(float *p, float v)
{
	float old = *p;
	*p = old + v;
	return old;
}

// sm_90's vector reduction (RED.E.ADD.F32x2): both halves in one read-modify-write. The PTX ISA
// (red.global.v2.f32.add, sm_90) requires an 8-byte aligned address: checked, as the GPU faults.
inline float2 atomicAdd(float2 *p, float2 v)
{
	if ((uintptr_t)p % 8) {
		fprintf(stderr, "emu: atomicAdd(float2 *) at %p, not 8-byte aligned\n", (void *)p);
		abort();
	}
	float2 old = *p;
	p->x = old.x + v.x;
	p->y = old.y + v.y;
	return old;
}

// The SM's cycle counter as a 1 GHz clock of host time (emu_runtime.cpp reports a clock rate of
// 1,000,000 kHz to match): a spin on it (kernels.cu timing_delay) lasts its nanoseconds on the
// host. __nanosleep sleeps the host thread.
inline long long clock64()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

inline void __nanosleep(unsigned ns)
{
	struct timespec t = {0, (long)(ns < 1000000u ? ns : 1000000u)};
	nanosleep(&t, nullptr);
}

inline double atomicAdd(double *p, double v)
{
	double old = *p;
	*p = old + v;
	return old;
}
