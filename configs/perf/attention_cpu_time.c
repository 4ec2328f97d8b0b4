/* configs/perf/attention_cpu_time.c: the CPU naive attention at the small model's shape (batch 4,
 * 12 heads, context 256, head_dim 64, causal), forward+backward 12 times (once per layer), in
 * float32 math and in bfloat16 math (issue 31: bfloat16 products through oneDNN, float32
 * softmax), the two alternating round by round in one process and timed in its CPU time and
 * wall time (docs/performance.md, "AVX-512 and AMX"). Run with OMP_WAIT_POLICY=passive; built by
 * configs/perf/attention_cpu_time.sh (a link to e2e_cpu_time.sh) against a build directory's
 * kernels.
 *
 *   attention_cpu_time [ROUNDS]   -> one line per round, then the medians and their ratio */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <omp.h>

#include "attention_cpu.h"
#include "dnnl_wrap.h"
#include "mem.h"
#include "rng.h"

enum { B = 4, H = 12, S = 256, D = 64, LAYERS = 12, MAX_ROUNDS = 100 };

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *x, int n)
{
	qsort(x, (size_t)n, sizeof(double), cmp);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 9;
	const struct attention_dims d = {B, H, S, D, 1};
	const size_t n = (size_t)B * H * S * D, rows = (size_t)B * H * S;
	const enum bd_dtype maths[2] = {DTYPE_FLOAT32, DTYPE_BFLOAT16};
	struct mem_arena mem;
	struct bd_error err = {0};
	struct attention_cpu *att[2] = {NULL, NULL};
	float *buf = malloc((8 * n + rows) * sizeof(float));   /* q k v o dO dq dk dv, lse */
	if (!buf) {
		fprintf(stderr, "attention_cpu_time: out of memory\n");
		return 1;
	}
	float *q = buf, *k = q + n, *v = k + n, *o = v + n, *d_o = o + n, *dq = d_o + n;
	float *dk = dq + n, *dv = dk + n, *lse = dv + n;
	struct rng r;
	rng_init(&r, 42);
	rng_fill(&r, buf, 5 * n, -1.0f, 1.0f);
	mem_init(&mem, 0);
	for (int m = 0; m < 2; m++)
		if (attention_cpu_create(&att[m], "naive", &d, maths[m], 1, &mem, &err)) {
			fprintf(stderr, "attention_cpu_time: %s\n", err.msg);
			return 1;
		}
	char ver[160];
	onednn_version(ver, sizeof(ver));
	/* the six products compute full (S, S) scores: 6 · 2·B·H·S²·D per forward+backward */
	double gflop = LAYERS * 6 * 2.0 * B * H * S * S * D * 1e-9;
	int threads = omp_get_max_threads();
	printf("# %s, %d threads; naive attention (B, H, S, D) = (%d, %d, %d, %d) causal, %d x "
	       "forward+backward per round (%.1f GFLOP of products)\n", ver, threads, B, H, S, D,
	       LAYERS, gflop);
	double cpu[2][MAX_ROUNDS], wall[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
	for (int i = -1; i < rounds; i++) {       /* round -1 warms up */
		double c[2], w[2];
		for (int j = 0; j < 2; j++) {
			int m = (i + j) & 1;             /* alternate which math goes first */
			double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
			for (int l = 0; l < LAYERS; l++)
				if (attention_cpu_forward(att[m], q, k, v, o, lse, &err) ||
				    attention_cpu_backward(att[m], q, k, v, o, lse, d_o, dq, dk, dv,
							   &err)) {
					fprintf(stderr, "attention_cpu_time: %s\n", err.msg);
					return 1;
				}
			c[m] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
			w[m] = clock_s(CLOCK_MONOTONIC) - w0;
		}
		printf("round %d float32 cpu %.1f ms wall %.1f ms, bfloat16 cpu %.1f ms wall %.1f ms, "
		       "cpu ratio %.2f\n", i, c[0] * 1e3, w[0] * 1e3, c[1] * 1e3, w[1] * 1e3,
		       c[0] / c[1]);
		if (i < 0)
			continue;
		for (int m = 0; m < 2; m++) {
			cpu[m][i] = c[m];
			wall[m][i] = w[m];
		}
		ratio[i] = c[0] / c[1];
	}
	for (int m = 0; m < 2; m++) {
		double c = median(cpu[m], rounds);
		printf("median %s cpu %.1f ms wall %.1f ms (%.0f GFLOP/s of products per CPU-second x "
		       "%d threads)\n", dtype_name(maths[m]), c * 1e3, median(wall[m], rounds) * 1e3,
		       gflop / c * threads, threads);
	}
	double lo = ratio[0], hi = ratio[0];
	for (int i = 1; i < rounds; i++) {
		lo = ratio[i] < lo ? ratio[i] : lo;
		hi = ratio[i] > hi ? ratio[i] : hi;
	}
	printf("float32 / bfloat16 cpu time, per round: median %.2f (%.2f-%.2f)\n",
	       median(ratio, rounds), lo, hi);
	attention_cpu_free(att[0]);
	attention_cpu_free(att[1]);
	free(buf);
	return 0;
}
