// configs/perf/gemm_prepack.cpp: does handing oneDNN the weights already packed pay in the small
// model's bfloat16 products? For each layer's forward (X W^T) and dX (dY W), 1024 token rows,
// oneDNN's matmul on the plain row-major weights against the same matmul created with the weights
// in the layout it picks (format `any`) fed by an explicit reorder, in rounds, wall clock, median
// (docs/performance.md, "2026-11-27"). The weights change every step, so the fair comparison is
// plain against reorder + packed; packed alone is what a reorder fused into another pass (the
// optimizer's bfloat16 copy) could at best give. Each pair's results must be equal.
//
//   g++ -O2 -fopenmp -I.deps/onednn/include configs/perf/gemm_prepack.cpp
//       .deps/onednn/lib/libdnnl.so.3 -Wl,-rpath,$PWD/.deps/onednn/lib -o /tmp/gemm_prepack
//   (one command line)
//   OMP_NUM_THREADS=2 /tmp/gemm_prepack [ROUNDS]
#include <dnnl.hpp>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
using namespace dnnl;
using dt = memory::data_type;
using tag = memory::format_tag;
static engine eng(engine::kind::cpu, 0);
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
struct layer { const char *name; long cols, k; };
static const layer layers[] = {{"qkv", 2304, 768}, {"o", 768, 768}, {"w13", 6144, 768}, {"w2", 768, 3072}, {"head", 10000, 768}};
int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 11;
	dt ab = dt::bf16;
	stream s(eng);
	double sa = 0, sb = 0, sc = 0;
	int ok = 1;
	for (const layer &l : layers) {
		for (int which = 0; which < 2; which++) {   // 0: fwd x W^T, 1: dX = dY W
			long m = 1024, n = which ? l.k : l.cols, k = which ? l.cols : l.k;
			int tb = which ? 0 : 1;   // W stored (cols, k) row-major
			memory::desc a({m, k}, ab, memory::dims{k, 1});
			memory::desc bplain({k, n}, ab, tb ? memory::dims{1, k} : memory::dims{n, 1});
			memory::desc bany({k, n}, ab, tag::any);
			memory::desc c({m, n}, ab, memory::dims{n, 1});
			matmul::primitive_desc pp(eng, a, bplain, c), pk(eng, a, bany, c);
			std::vector<uint16_t> A(m * k, 0x3f80), B(k * n, 0x3f00), C(m * n), C2(m * n);
			for (size_t i = 0; i < A.size(); i++) A[i] = 0x3f80 + (i % 7);
			for (size_t i = 0; i < B.size(); i++) B[i] = 0x3e80 + (i % 5);
			memory ma(a, eng, A.data()), mb(bplain, eng, B.data()), mc(c, eng, C.data()), mc2(c, eng, C2.data());
			memory mbk(pk.weights_desc(), eng);
			reorder ro(mb, mbk);
			matmul plain(pp), packed(pk);
			std::vector<double> va, vb, vc;
			for (int r = 0; r < rounds + 2; r++) {
				double t0 = now();
				plain.execute(s, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}}); s.wait();
				double t1 = now();
				ro.execute(s, mb, mbk); s.wait();
				double t2 = now();
				packed.execute(s, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mbk}, {DNNL_ARG_DST, mc2}}); s.wait();
				double t3 = now();
				if (r >= 2) { va.push_back(t1 - t0); vb.push_back(t2 - t1); vc.push_back(t3 - t2); }
			}
			if (C != C2) { fprintf(stderr, "gemm_prepack: %s %s: the results differ\n", l.name, which ? "dX" : "fwd"); ok = 0; }
			double ta = median(va), tr = median(vb), tp = median(vc);
			sa += ta; sb += tr; sc += tp;
			printf("%-4s %-3s %5ld x %5ld x %5ld plain %.2f ms | reorder %.2f + packed %.2f = %.2f ms | ratio plain/(r+p) %.2f plain/p %.2f  [%s | %s]\n",
			       l.name, which ? "dX" : "fwd", m, n, k, ta * 1e3, tr * 1e3, tp * 1e3, (tr + tp) * 1e3, ta / (tr + tp), ta / tp,
			       pp.impl_info_str(), pk.impl_info_str());
		}
	}
	printf("sum: plain %.1f ms, reorder %.1f + packed %.1f = %.1f ms\n", sa * 1e3, sb * 1e3, sc * 1e3, (sb + sc) * 1e3);
	return ok ? 0 : 1;
}
