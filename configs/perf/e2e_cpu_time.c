/* configs/perf/e2e_cpu_time.c: benchdb's small model (d 768, f 3072, 12 layers, 12 heads, vocab
 * 10000; context 256, batch 4, naive attention), forward+backward, timed per iteration in wall
 * time and in the process's CPU time (docs/performance.md, "AVX-512 and AMX": how the builds
 * and libraries were compared on a shared machine). Run with OMP_WAIT_POLICY=passive, so that a
 * thread waiting at a barrier sleeps instead of spinning: the CPU time is then the work done,
 * and a thread descheduled by other processes costs none. Built by configs/perf/e2e_cpu_time.sh
 * against a build directory's kernels (so: its oneDNN).
 *
 *   e2e_cpu_time float32|bfloat16 [ITERS]   -> one line per iteration, then the medians */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include "dnnl_wrap.h"
#include "mem.h"
#include "model.h"
#include "ops.h"

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long minor_faults(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_minflt;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int bf16 = argc > 1 && !strcmp(argv[1], "bfloat16");
	int iters = argc > 2 ? atoi(argv[2]) : 4;
	if (iters < 1 || iters > 100)
		iters = 4;
	struct model_shape s = {.cfg = {.name = "small", .d_model = 768, .d_ff = 3072,
					.num_layers = 12, .num_heads = 12, .vocab_size = 10000},
				.batch = 4, .ctx = 256, .mode = MODEL_GRAD,
				.dtype = bf16 ? DTYPE_BFLOAT16 : DTYPE_FLOAT32};
	snprintf(s.attention, sizeof(s.attention), "naive");
	struct mem_arena mem;
	mem_init(&mem, 0);
	struct dev dev;
	struct bd_error err = {0};
	struct model *m = NULL;
	if (dev_open(&dev, DEVICE_CPU, &mem, &err) || model_create(&m, &dev, &s, 42, NULL)) {
		fprintf(stderr, "e2e_cpu_time: %s%s\n", err.msg, dev.err.msg);
		return 1;
	}
	char ver[160];
	onednn_version(ver, sizeof(ver));
	printf("# %s, %s, 1 warm-up + %d iterations of forward+backward\n", ver,
	       bf16 ? "bfloat16" : "float32", iters);
	double wall[100], cpu[100];
	for (int i = -1; i < iters; i++) {
		long f0 = minor_faults();
		double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		if (model_forward(m) || model_backward(m)) {
			fprintf(stderr, "e2e_cpu_time: %s\n", dev.err.msg);
			return 1;
		}
		double w = clock_s(CLOCK_MONOTONIC) - w0, c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		printf("iter %d wall %.1f ms cpu %.1f ms page faults %ld\n", i, w * 1e3, c * 1e3,
		       minor_faults() - f0);
		if (i >= 0) {
			wall[i] = w;
			cpu[i] = c;
		}
	}
	qsort(wall, (size_t)iters, sizeof(double), cmp);
	qsort(cpu, (size_t)iters, sizeof(double), cmp);
	printf("median wall %.1f ms cpu %.1f ms\n", wall[iters / 2] * 1e3, cpu[iters / 2] * 1e3);
	model_free(m);
	dev_close(&dev);
	return 0;
}
