// tests/flashemu/emu_launch.h: the launch syntax of the emulated device. emu_rewrite.cmake turns
// `kernel<<<grid, block, smem, stream>>>(args)` into
// `emu_launch("kernel", __PRETTY_FUNCTION__, grid, block, smem, stream).go(body)(args)`: the
// arguments are evaluated once, the configuration is checked as the CUDA runtime does (an error is
// what the next cudaGetLastError returns, and nothing runs), then every thread of the grid runs
// body(args...) on the emulator (cuda_emu.h) before the call returns.
#pragma once
#include "cuda_emu.h"

namespace emu {

// 0 when the configuration can launch on stream, else the launch error (recorded as the last
// error). emu_runtime.cpp.
cudaError_t launch_check(const char *name, dim3 grid, dim3 block, size_t smem,
			 cudaStream_t stream);
// Appends "what name" to the stream log while a test traces (emu_runtime.cpp, emu_trace_begin).
void trace(const char *what, const char *name);

struct launch_cfg {
	const char *name;
	std::string where;
	dim3 grid, block;
	size_t smem;
	cudaStream_t stream;

	template <typename F>
	auto go(F body) const
	{
		return [this, body](auto... args) {
			if (launch_check(where.c_str(), grid, block, smem, stream) != cudaSuccess)
				return;
			trace("launch", name);
			launch(where.c_str(), grid, block, smem, [&] { body(args...); });
		};
	}
};

}  // namespace emu

inline emu::launch_cfg emu_launch(const char *name, const char *launcher, dim3 grid, dim3 block,
				  size_t smem = 0, cudaStream_t stream = 0)
{
	return {name, std::string(name) + " (launched by " + launcher + ")", grid, block, smem,
		stream};
}

// the C++ overload of cuda_runtime.h that host compilers do not see
template <typename T>
inline cudaError_t cudaFuncSetAttribute(T *entry, enum cudaFuncAttribute attr, int value)
{
	return cudaFuncSetAttribute(reinterpret_cast<const void *>(entry), attr, value);
}

template <typename T>
inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *entry)
{
	return cudaFuncGetAttributes(attr, reinterpret_cast<const void *>(entry));
}
