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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gemm_model.hpp"
using namespace dnnl;
using dt = memory::data_type;

static void run(matmul &p, stream &s, memory &a, memory &b, memory &c)
{
	p.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
	s.wait();
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 11, ok = 1;
	dt ab = dt::bf16;
	stream s(eng);
	double sum_plain = 0, sum_reorder = 0, sum_packed = 0;
	for (const layer &l : layers) {
		for (int dx = 0; dx < 2; dx++) {   // forward X W^T, then dX = dY W
			const char *what = dx ? "dX" : "fwd";
			long m = rows, n = dx ? l.k : l.cols, k = dx ? l.cols : l.k;
			memory::desc a({m, k}, ab, memory::dims{k, 1});
			memory::desc b_plain({k, n}, ab, dx ? memory::dims{n, 1} : memory::dims{1, k});
			memory::desc b_any({k, n}, ab, memory::format_tag::any);
			memory::desc c({m, n}, ab, memory::dims{n, 1});
			matmul::primitive_desc pd_plain(eng, a, b_plain, c), pd_packed(eng, a, b_any, c);
			// bfloat16 operands near 1.0 and 0.25, varied so that a wrong layout shows
			std::vector<uint16_t> A(m * k), B(k * n), C(m * n), C2(m * n);
			for (size_t i = 0; i < A.size(); i++)
				A[i] = (uint16_t)(0x3f80 + i % 7);
			for (size_t i = 0; i < B.size(); i++)
				B[i] = (uint16_t)(0x3e80 + i % 5);
			memory ma(a, eng, A.data()), mb(b_plain, eng, B.data()), mc(c, eng, C.data()),
				mc2(c, eng, C2.data()), mb_packed(pd_packed.weights_desc(), eng);
			reorder pack(mb, mb_packed);
			matmul plain(pd_plain), packed(pd_packed);
			std::vector<double> t_plain, t_reorder, t_packed;
			for (int r = 0; r < rounds + 2; r++) {   // 2 untimed
				double t0 = now();
				run(plain, s, ma, mb, mc);
				double t1 = now();
				pack.execute(s, mb, mb_packed);
				s.wait();
				double t2 = now();
				run(packed, s, ma, mb_packed, mc2);
				double t3 = now();
				if (r >= 2) {
					t_plain.push_back(t1 - t0);
					t_reorder.push_back(t2 - t1);
					t_packed.push_back(t3 - t2);
				}
			}
			if (C != C2) {
				fprintf(stderr, "gemm_prepack: %s %s: the results differ\n", l.name, what);
				ok = 0;
			}
			double tp = median(t_plain), tr = median(t_reorder), tk = median(t_packed);
			sum_plain += tp;
			sum_reorder += tr;
			sum_packed += tk;
			printf("%-4s %-3s %5ld x %5ld x %5ld  plain %.2f ms | reorder %.2f + packed %.2f = "
			       "%.2f ms | plain/(reorder+packed) %.2f, plain/packed %.2f  [%s | %s]\n",
			       l.name, what, m, n, k, tp * 1e3, tr * 1e3, tk * 1e3, (tr + tk) * 1e3,
			       tp / (tr + tk), tp / tk, pd_plain.impl_info_str(), pd_packed.impl_info_str());
		}
	}
	printf("sum: plain %.1f ms, reorder %.1f + packed %.1f = %.1f ms\n", sum_plain * 1e3,
	       sum_reorder * 1e3, sum_packed * 1e3, (sum_reorder + sum_packed) * 1e3);
	return ok ? 0 : 1;
}
