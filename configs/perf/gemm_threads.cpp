// configs/perf/gemm_threads.cpp: two ways to share the model's GEMMs between the 2 threads other
// than oneDNN's own split, each against oneDNN's (one primitive, OpenMP threads), in interleaved
// rounds, wall clock, median (docs/performance.md, "The same day, 22:30-23:45"):
//
//   split: each product cut in two along n, one single-threaded primitive per thread
//   pair:  a layer's dW and dX at once, one single-threaded primitive per thread
//
// Build against a oneDNN 3.x (e.g. scripts/get_onednn.sh's .deps/onednn) and run:
//   g++ -O2 -fopenmp -I.deps/onednn/include configs/perf/gemm_threads.cpp
//       .deps/onednn/lib/libdnnl.so.3 -Wl,-rpath,$PWD/.deps/onednn/lib -o /tmp/gemm_threads
//   (one command line)
//   OMP_NUM_THREADS=2 /tmp/gemm_threads split|pair bfloat16|float32 [ROUNDS]
// float32 takes oneDNN's gemm:jit, as benchdb does (kernels/cpu/dnnl_wrap.c); the operands are
// constants (the rates do not depend on the values), and each mode checks that its result
// equals oneDNN's own split's.
#include <omp.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gemm_model.hpp"
using namespace dnnl;
using dt = memory::data_type;

// C(m, n) = op(A) op(B), row-major; A stored (m, k) or, ta, (k, m); B (k, n) or, tb, (n, k);
// C's rows ldc apart
static matmul::primitive_desc desc(long m, long n, long k, int ta, int tb, long lda, long ldb,
				   long ldc, dt ab)
{
	memory::desc a({m, k}, ab, ta ? memory::dims{1, lda} : memory::dims{lda, 1});
	memory::desc b({k, n}, ab, tb ? memory::dims{1, ldb} : memory::dims{ldb, 1});
	memory::desc c({m, n}, dt::f32, memory::dims{ldc, 1});
	matmul::primitive_desc p(eng, a, b, c);
	if (ab == dt::f32)   // benchdb's choice for float32
		while (std::string(p.impl_info_str()).rfind("gemm:jit", 0) != 0 && p.next_impl())
			;
	return p;
}

struct gemm {
	matmul prim;
	memory a, b, c;
	void run(stream &s)
	{
		prim.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
		s.wait();
	}
};

// a gemm on A, B, C (C's first column at c) with the threads oneDNN sees now
static gemm make(long m, long n, long k, int ta, int tb, long lda, long ldb, long ldc, dt ab,
		 void *a, void *b, float *c)
{
	auto p = desc(m, n, k, ta, tb, lda, ldb, ldc, ab);
	return {matmul(p), memory(p.src_desc(), eng, a), memory(p.weights_desc(), eng, b),
		memory(p.dst_desc(), eng, c)};
}

// operands of constant value (1.5 and 0.5 in either dtype)
static std::vector<char> operand(size_t n, dt ab, float v)
{
	std::vector<char> x(n * (ab == dt::bf16 ? 2 : 4));
	for (size_t i = 0; i < n; i++) {
		uint32_t bits;
		memcpy(&bits, &v, 4);
		if (ab == dt::bf16) {
			uint16_t h = (uint16_t)(bits >> 16);
			memcpy(&x[2 * i], &h, 2);
		} else {
			memcpy(&x[4 * i], &bits, 4);
		}
	}
	return x;
}

// Time a (oneDNN's split) against b (the other way), `rounds` interleaved rounds after 2
// untimed, every other round b first; medians into *ta, *tb.
template <class A, class B> static void race(A fa, B fb, int rounds, double *ta, double *tb)
{
	std::vector<double> va, vb;
	for (int r = 0; r < rounds + 2; r++)
		for (int w = 0; w < 2; w++) {
			int second = (r + w) & 1;
			double t0 = now();
			if (second)
				fb();
			else
				fa();
			double t = now() - t0;
			if (r >= 2)
				(second ? vb : va).push_back(t);
		}
	*ta = median(va);
	*tb = median(vb);
}

static int same(const std::vector<float> &x, const std::vector<float> &y, const char *what)
{
	if (x == y)
		return 1;
	fprintf(stderr, "gemm_threads: %s: the results differ\n", what);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "split") && strcmp(argv[1], "pair")) ||
	    (strcmp(argv[2], "bfloat16") && strcmp(argv[2], "float32"))) {
		fprintf(stderr, "usage: gemm_threads split|pair bfloat16|float32 [ROUNDS]\n");
		return 2;
	}
	int split = !strcmp(argv[1], "split"), rounds = argc > 3 ? atoi(argv[3]) : 15, ok = 1;
	dt ab = !strcmp(argv[2], "bfloat16") ? dt::bf16 : dt::f32;
	double sum_a = 0, sum_b = 0;
	stream s(eng), s0(eng), s1(eng);
	for (const layer &l : layers) {
		// the layer's products: forward y = x W^T, dX = dY W, dW = dY^T X
		struct { const char *what; long m, n, k; int ta, tb; } prods[] = {
			{"fwd", rows, l.cols, l.k, 0, 1}, {"dX", rows, l.k, l.cols, 0, 0},
			{"dW", l.cols, l.k, rows, 1, 0}};
		if (split) {
			for (auto &q : prods) {
				long lda = q.ta ? q.m : q.k, ldb = q.tb ? q.k : q.n;
				auto A = operand(q.m * q.k, ab, 1.5f), B = operand(q.k * q.n, ab, 0.5f);
				std::vector<float> C(q.m * q.n), C2(q.m * q.n);
				long n0 = (q.n / 2 + 31) / 32 * 32, n1 = q.n - n0;
				size_t es = ab == dt::bf16 ? 2 : 4, b1 = (q.tb ? n0 * q.k : n0) * es;
				omp_set_num_threads(2);
				gemm whole = make(q.m, q.n, q.k, q.ta, q.tb, lda, ldb, q.n, ab, A.data(),
						  B.data(), C.data());
				omp_set_num_threads(1);
				gemm h0 = make(q.m, n0, q.k, q.ta, q.tb, lda, ldb, q.n, ab, A.data(),
					       B.data(), C2.data());
				gemm h1 = make(q.m, n1, q.k, q.ta, q.tb, lda, ldb, q.n, ab, A.data(),
					       B.data() + b1, C2.data() + n0);
				omp_set_num_threads(2);
				double ta, tb;
				race([&] { whole.run(s); },
				     [&] {
#pragma omp parallel num_threads(2)
					     (omp_get_thread_num() ? h1 : h0).run(omp_get_thread_num() ? s1 : s0);
				     },
				     rounds, &ta, &tb);
				ok &= same(C, C2, q.what);
				sum_a += ta;
				sum_b += tb;
				double gf = 2.0 * q.m * q.n * q.k / 1e9;
				printf("%-4s %-3s %5ld x %5ld x %5ld  oneDNN %7.1f GFLOP/s  split in n %7.1f  "
				       "ratio %.2f\n", l.name, q.what, q.m, q.n, q.k, gf / ta, gf / tb, ta / tb);
			}
		} else {
			auto &dx = prods[1], &dw = prods[2];
			auto dY = operand(rows * l.cols, ab, 1.5f), W = operand(l.cols * l.k, ab, 0.5f),
			     X = operand(rows * l.k, ab, 0.5f);
			std::vector<float> DX(rows * l.k), DW(l.cols * l.k), DX2(DX.size()), DW2(DW.size());
			omp_set_num_threads(2);
			gemm gx = make(dx.m, dx.n, dx.k, 0, 0, dx.k, dx.n, dx.n, ab, dY.data(), W.data(),
				       DX.data());
			gemm gw = make(dw.m, dw.n, dw.k, 1, 0, dw.m, dw.n, dw.n, ab, dY.data(), X.data(),
				       DW.data());
			omp_set_num_threads(1);
			gemm px = make(dx.m, dx.n, dx.k, 0, 0, dx.k, dx.n, dx.n, ab, dY.data(), W.data(),
				       DX2.data());
			gemm pw = make(dw.m, dw.n, dw.k, 1, 0, dw.m, dw.n, dw.n, ab, dY.data(), X.data(),
				       DW2.data());
			omp_set_num_threads(2);
			double ta, tb;
			race([&] { gx.run(s); gw.run(s); },
			     [&] {
#pragma omp parallel num_threads(2)
				     (omp_get_thread_num() ? pw : px).run(omp_get_thread_num() ? s1 : s0);
			     },
			     rounds, &ta, &tb);
			ok &= same(DX, DX2, "dX") & same(DW, DW2, "dW");
			sum_a += ta;
			sum_b += tb;
			double gf = 4.0 * rows * l.cols * l.k / 1e9;
			printf("%-4s dX+dW  oneDNN one after the other %7.1f GFLOP/s  at once %7.1f  "
			       "ratio %.2f\n", l.name, gf / ta, gf / tb, ta / tb);
		}
	}
	printf("sum of the medians: oneDNN %.1f ms, %s %.1f ms: ratio %.3f\n", sum_a * 1e3,
	       split ? "split in n" : "at once", sum_b * 1e3, sum_a / sum_b);
	return ok ? 0 : 1;
}
