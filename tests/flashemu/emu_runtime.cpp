// tests/flashemu/emu_runtime.cpp: the emulated CUDA device's runtime: the cudart entry points
// kernels/cuda/ calls, as host operations with the runtime's semantics and error checks, for the
// test-only build of the CUDA backend (tests/CMakeLists.txt, label emu; never a product binary).
//
//  - One device ("benchdb emulated CUDA device", 16 GiB). cudaMalloc maps each buffer between
//    PROT_NONE pages, 256-byte aligned with its end against the upper guard page (the < 256 bytes
//    of rounding and the space below the start hold canary bytes, checked at cudaFree and at every
//    synchronize), and fills it with 0xff (NaN in every float type): an access past either end
//    faults, a read before any write reads NaN. Requests beyond the free memory are
//    cudaErrorMemoryAllocation.
//  - Copies and memsets check that every device range lies inside one live allocation
//    (cudaErrorInvalidValue otherwise) and run at once; a kernel runs to completion at its launch
//    (emu_launch.h), so streams, events and synchronizes need no queue: they check their handles
//    and record host time.
//  - A stream log for the tests: between emu_trace_begin() and emu_trace_end(), every kernel
//    launch, event record, copy and memset appends a line ("launch timing_delay", "record",
//    "memcpy", "memset"), in the order the stream would run them.
//  - Dynamic shared memory: over 48 KiB only after cudaFuncSetAttribute raised the limit, and
//    never over the device's opt-in (sm_90's 227 KiB, or BENCHDB_EMU_SMEM_OPTIN bytes: a GPU
//    with less, as compute capability 8.6's 99 KiB), which cudaDeviceGetAttribute
//    (cudaDevAttrMaxSharedMemoryPerBlockOptin) reports.
//  - Errors: every failing call sets the last error (cudaGetLastError returns and clears it); a
//    fault inside a kernel ends the process with the kernel, block and thread (cuda_emu.h).
#include "emu_launch.h"

#include <stdlib.h>
#include <time.h>

#include <map>
#include <set>

namespace {

constexpr size_t kDeviceMem = (size_t)16 << 30;
constexpr size_t kPage = 4096;
constexpr size_t kSmemDefault = 48 * 1024, kSmemOptinMax = 232448;   // sm_90
constexpr unsigned char kCanary = 0xff;

struct allocation {
	unsigned char *map;
	size_t map_bytes;
	unsigned char *p;
	size_t bytes, rounded;
};

std::map<uintptr_t, allocation> allocs;   // by start address
size_t used;
cudaError_t last_error = cudaSuccess;
std::set<cudaStream_t> streams;
struct event { bool recorded; double ms; };
std::set<event *> events;
int smem_optin = (int)kSmemDefault;
bool tracing;
std::string trace_log;

cudaError_t set_error(cudaError_t e)
{
	last_error = e;
	return e;
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The device's opt-in limit of dynamic shared memory per block: sm_90's, or
// BENCHDB_EMU_SMEM_OPTIN bytes (a test emulating a GPU with less: 101376 on compute capability
// 8.6, 8.9 and 12.x), read at every use so that a test can change it.
size_t smem_optin_max()
{
	const char *v = getenv("BENCHDB_EMU_SMEM_OPTIN");
	long long n = v && *v ? atoll(v) : 0;
	return n >= (long long)kSmemDefault && n <= (long long)kSmemOptinMax ? (size_t)n
									     : kSmemOptinMax;
}

// the allocation holding [p, p + bytes), or NULL
const allocation *find(const void *p, size_t bytes)
{
	uintptr_t a = (uintptr_t)p;
	auto it = allocs.upper_bound(a);
	if (it == allocs.begin())
		return nullptr;
	--it;
	const allocation &al = it->second;
	if (a + bytes < a || a + bytes > (uintptr_t)al.p + al.bytes)
		return nullptr;
	return &al;
}

void check_canaries(const allocation &a)
{
	for (unsigned char *c = a.map + kPage; c < a.p; c++)
		if (*c != kCanary) {
			fprintf(stderr, "EMU FAILURE: a write %zd bytes before the device allocation %p "
				"(%zu bytes)\n", a.p - c, (void *)a.p, a.bytes);
			abort();
		}
	for (unsigned char *c = a.p + a.bytes; c < a.p + a.rounded; c++)
		if (*c != kCanary) {
			fprintf(stderr, "EMU FAILURE: a write %zd bytes past the end of the device "
				"allocation %p (%zu bytes)\n", c - (a.p + a.bytes), (void *)a.p, a.bytes);
			abort();
		}
}

void check_all_canaries()
{
	for (auto &kv : allocs)
		check_canaries(kv.second);
}

bool stream_ok(cudaStream_t s)
{
	return s == nullptr || s == cudaStreamPerThread || s == cudaStreamLegacy || streams.count(s);
}

double now_ms()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

}  // namespace

namespace emu {

cudaError_t launch_check(const char *name, dim3 grid, dim3 block, size_t smem,
			 cudaStream_t stream)
{
	if (!stream_ok(stream))
		return set_error(cudaErrorInvalidResourceHandle);
	const char *no_image = getenv("BENCHDB_EMU_NO_KERNEL_IMAGE");
	if (no_image && *no_image)
		return set_error(cudaErrorNoKernelImageForDevice);
	unsigned long threads = (unsigned long)block.x * block.y * block.z;
	if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 ||
	    grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
		fprintf(stderr, "emu: %s: invalid configuration grid (%u,%u,%u) block (%u,%u,%u)\n",
			name, grid.x, grid.y, grid.z, block.x, block.y, block.z);
		return set_error(cudaErrorInvalidConfiguration);
	}
	if (smem > kSmemDefault && (smem > smem_optin_max() || (int)smem > smem_optin)) {
		fprintf(stderr, "emu: %s: %zu bytes of dynamic shared memory %s\n", name, smem,
			smem > smem_optin_max() ? "over the device's opt-in maximum"
						: "without the opt-in");
		return set_error(cudaErrorInvalidValue);
	}
	return cudaSuccess;
}

void trace(const char *what, const char *name)
{
	if (!tracing)
		return;
	trace_log += what;
	if (name && *name) {
		trace_log += ' ';
		trace_log += name;
	}
	trace_log += '\n';
}

}  // namespace emu

// Start (clear) and end the stream log; the text stays valid until the next emu_trace_begin.
extern "C" void emu_trace_begin(void)
{
	trace_log.clear();
	tracing = true;
}

extern "C" const char *emu_trace_end(void)
{
	tracing = false;
	return trace_log.c_str();
}

// ---- device, errors ---------------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int *count)
{
	if (!count)
		return set_error(cudaErrorInvalidValue);
	*count = 1;
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
	return device == 0 ? cudaSuccess : set_error(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDevice(int *device)
{
	if (!device)
		return set_error(cudaErrorInvalidValue);
	*device = 0;   // the one emulated device
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
	if (!v)
		return set_error(cudaErrorInvalidValue);
	*v = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
	if (!v)
		return set_error(cudaErrorInvalidValue);
	*v = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	if (!prop)
		return set_error(cudaErrorInvalidValue);
	if (device != 0)
		return set_error(cudaErrorInvalidDevice);
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "benchdb emulated CUDA device (CPU, tests only)");
	prop->totalGlobalMem = kDeviceMem;
	prop->multiProcessorCount = 1;
	prop->major = 9;
	prop->minor = 0;
	prop->warpSize = 32;
	prop->maxThreadsPerBlock = 1024;
	prop->sharedMemPerBlock = kSmemDefault;
	prop->sharedMemPerBlockOptin = smem_optin_max();
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	if (!value)
		return set_error(cudaErrorInvalidValue);
	if (device != 0)
		return set_error(cudaErrorInvalidDevice);
	// the SM clock of cuda_emu.h's clock64 (1 GHz), the shared memory opt-in, compute capability
	// 9.0 (as cudaGetDeviceProperties); the rest: unknown on the emulated device
	*value = attr == cudaDevAttrClockRate			    ? 1000000
		 : attr == cudaDevAttrMaxSharedMemoryPerBlockOptin ? (int)smem_optin_max()
		 : attr == cudaDevAttrComputeCapabilityMajor	    ? 9
								    : 0;
	return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;
	last_error = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

static const struct { cudaError_t e; const char *name, *text; } error_names[] = {
	{cudaSuccess, "cudaSuccess", "no error"},
	{cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
	{cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
	{cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
	 "invalid configuration argument"},
	{cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
	{cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle",
	 "invalid resource handle"},
	{cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction",
	 "invalid device function"},
	{cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
	{cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice",
	 "no kernel image is available for execution on the device"},
};

const char *cudaGetErrorName(cudaError_t e)
{
	for (auto &n : error_names)
		if (n.e == e)
			return n.name;
	return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e)
{
	for (auto &n : error_names)
		if (n.e == e)
			return n.text;
	return "unknown error";
}

// A kernel's attributes: its dynamic shared memory opt-in; BENCHDB_EMU_NO_KERNEL_IMAGE set
// emulates a GPU the binary has no code for (cudaErrorNoKernelImageForDevice, as on a 7.x GPU,
// here and at every launch).
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
	if (!attr || !func)
		return set_error(cudaErrorInvalidDeviceFunction);
	const char *v = getenv("BENCHDB_EMU_NO_KERNEL_IMAGE");
	if (v && *v)
		return set_error(cudaErrorNoKernelImageForDevice);
	memset(attr, 0, sizeof(*attr));
	attr->maxThreadsPerBlock = 1024;
	attr->maxDynamicSharedSizeBytes = smem_optin;
	return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
	if (!func)
		return set_error(cudaErrorInvalidDeviceFunction);
	if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
		if (value < 0 || (size_t)value > smem_optin_max())
			return set_error(cudaErrorInvalidValue);
		smem_optin = std::max(smem_optin, value);   // per process, not per kernel
	}
	return cudaSuccess;
}

// ---- memory -------------------------------------------------------------------------------

cudaError_t cudaMalloc(void **p, size_t bytes)
{
	if (!p)
		return set_error(cudaErrorInvalidValue);
	*p = nullptr;
	if (bytes == 0)
		return cudaSuccess;
	if (bytes > kDeviceMem - used)
		return set_error(cudaErrorMemoryAllocation);
	allocation a;
	a.bytes = bytes;
	a.rounded = round_up(bytes, 256);
	size_t body = round_up(a.rounded, kPage);
	a.map_bytes = body + 2 * kPage;
	void *m = mmap(nullptr, a.map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return set_error(cudaErrorMemoryAllocation);
	a.map = (unsigned char *)m;
	mprotect(a.map, kPage, PROT_NONE);
	mprotect(a.map + kPage + body, kPage, PROT_NONE);
	a.p = a.map + kPage + body - a.rounded;
	memset(a.map + kPage, kCanary, body);
	allocs[(uintptr_t)a.p] = a;
	emu::globals.push_back({a.p, a.p + a.bytes});
	used += bytes;
	*p = a.p;
	return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
	if (!p)
		return cudaSuccess;
	auto it = allocs.find((uintptr_t)p);
	if (it == allocs.end())
		return set_error(cudaErrorInvalidValue);
	allocation a = it->second;
	check_canaries(a);
	allocs.erase(it);
	for (size_t i = 0; i < emu::globals.size(); i++)
		if (emu::globals[i].lo == a.p) {
			emu::globals.erase(emu::globals.begin() + (long)i);
			break;
		}
	used -= a.bytes;
	munmap(a.map, a.map_bytes);
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
	if (!free_b || !total_b)
		return set_error(cudaErrorInvalidValue);
	*free_b = kDeviceMem - used;
	*total_b = kDeviceMem;
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	if (!stream_ok(stream))
		return set_error(cudaErrorInvalidResourceHandle);
	if (bytes == 0)
		return cudaSuccess;
	if (!dst || !src)
		return set_error(cudaErrorInvalidValue);
	bool dst_dev = find(dst, bytes), src_dev = find(src, bytes);
	bool want_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
	bool want_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
	if (kind == cudaMemcpyDefault) {
		want_dst = dst_dev;
		want_src = src_dev;
	} else if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost &&
		   kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyHostToHost) {
		return set_error(cudaErrorInvalidMemcpyDirection);
	}
	if ((want_dst && !dst_dev) || (want_src && !src_dev)) {
		fprintf(stderr, "emu: cudaMemcpyAsync of %zu bytes %p -> %p: a device range outside "
			"every allocation\n", bytes, src, dst);
		return set_error(cudaErrorInvalidValue);
	}
	const unsigned char *s = (const unsigned char *)src;
	unsigned char *d = (unsigned char *)dst;
	if (d != s && d < s + bytes && s < d + bytes) {
		fprintf(stderr, "emu: cudaMemcpyAsync between overlapping ranges\n");
		return set_error(cudaErrorInvalidValue);
	}
	if (d != s)
		memcpy(d, s, bytes);
	emu::trace("memcpy", nullptr);
	return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream)
{
	if (!stream_ok(stream))
		return set_error(cudaErrorInvalidResourceHandle);
	if (bytes == 0)
		return cudaSuccess;
	if (!find(p, bytes)) {
		fprintf(stderr, "emu: cudaMemsetAsync of %zu bytes at %p: outside every allocation\n",
			bytes, p);
		return set_error(cudaErrorInvalidValue);
	}
	memset(p, value, bytes);
	emu::trace("memset", nullptr);
	return cudaSuccess;
}

// ---- streams, events ------------------------------------------------------------------------

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
	if (!s || (flags & ~1u))
		return set_error(cudaErrorInvalidValue);
	*s = (cudaStream_t)malloc(1);
	streams.insert(*s);
	return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	if (!streams.count(s))
		return set_error(cudaErrorInvalidResourceHandle);
	streams.erase(s);
	free(s);
	return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	if (!stream_ok(s))
		return set_error(cudaErrorInvalidResourceHandle);
	check_all_canaries();
	return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
	check_all_canaries();
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	if (!e)
		return set_error(cudaErrorInvalidValue);
	event *ev = new event{false, 0};
	events.insert(ev);
	*e = (cudaEvent_t)ev;
	return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	event *ev = (event *)e;
	if (!events.count(ev))
		return set_error(cudaErrorInvalidResourceHandle);
	events.erase(ev);
	delete ev;
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	event *ev = (event *)e;
	if (!events.count(ev) || !stream_ok(s))
		return set_error(cudaErrorInvalidResourceHandle);
	ev->recorded = true;
	ev->ms = now_ms();
	emu::trace("record", nullptr);
	return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	if (!events.count((event *)e))
		return set_error(cudaErrorInvalidResourceHandle);
	check_all_canaries();
	return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	event *a = (event *)start, *b = (event *)end;
	if (!ms)
		return set_error(cudaErrorInvalidValue);
	if (!events.count(a) || !events.count(b))
		return set_error(cudaErrorInvalidResourceHandle);
	if (!a->recorded || !b->recorded)
		return set_error(cudaErrorInvalidResourceHandle);   // as the runtime: never recorded
	*ms = (float)(b->ms - a->ms);
	return cudaSuccess;
}

// ---- the device allocations, for emu_cublaslt.cpp ---------------------------------------------

namespace emu {

// bytes from p to the end of its device allocation (0 when p is not in one)
size_t device_bytes_from(const void *p)
{
	const allocation *a = find(p, 1);
	return a ? (size_t)(a->p + a->bytes - (const unsigned char *)p) : 0;
}

bool stream_valid(cudaStream_t s) { return stream_ok(s); }

}  // namespace emu
