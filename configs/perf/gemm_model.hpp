// configs/perf/gemm_model.hpp: what the oneDNN GEMM experiments of configs/perf (gemm_threads.cpp,
// gemm_prepack.cpp) share: the small model's layer shapes (context 256, batch 4), the clock and
// the median.
#ifndef BENCHDB_PERF_GEMM_MODEL_HPP
#define BENCHDB_PERF_GEMM_MODEL_HPP

#include <dnnl.hpp>
#include <algorithm>
#include <chrono>
#include <vector>

static dnnl::engine eng(dnnl::engine::kind::cpu, 0);

static double now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

// the small model, context 256, batch 4: 1024 token rows; per linear layer (cols, k), W stored
// (cols, k) row-major
struct layer { const char *name; long cols, k; };
static const layer layers[] = {{"qkv", 2304, 768}, {"o", 768, 768}, {"w13", 6144, 768},
			       {"w2", 768, 3072}, {"head", 10000, 768}};
static const long rows = 1024;

#endif
