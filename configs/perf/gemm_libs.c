/* configs/perf/gemm_libs.c: the transformer's GEMMs (small model, context 256, batch 4: every
 * shape and layout the model's forward, backward and attention run) through oneDNN 2.x and 3.x
 * and MKL in one process, interleaved call by call (docs/performance.md, "The GEMM library").
 * Built and run by configs/perf/gemm_libs.sh, which says what it needs:
 *
 *   gemm_libs WRAP_A.so WRAP_B.so float32|bfloat16 REPS [ROLE-SUBSTRING]
 *
 * WRAP_*.so are kernels/cpu/dnnl_wrap.c built against two oneDNN versions (dlopen'ed
 * RTLD_LOCAL, so both libdnnl live side by side); each is run twice where the two differ: with
 * oneDNN's first implementation ("first", onednn_prefer_impl("")) and with the wrapper's own
 * choice (the one runner uses before its tuning), or with GEMM_LIBS_PREFER=PREFIX the first
 * implementation whose name starts with PREFIX (e.g. gemm:jit, the bfloat16 products' tuning
 * contender) in place of the wrapper's choice. MKL is cblas_sgemm / cblas_gemm_bf16bf16f32
 * (batches: cblas_sgemm_batch_strided, or a loop in bfloat16). C is float32. One untimed call of each,
 * then REPS rounds, each calling every contender once, in orders that put every contender
 * right after every other equally often within the rounds (call_order; a multiple of 2 x
 * contenders for REPS balances it exactly), each round after an untimed call of the first
 * contender (a spacer: the call before a round's first is then always the same, where the
 * previous round's last would again favour some).
 *
 * Time: CLOCK_MONOTONIC, or with GEMM_LIBS_CLOCK=cpu the process's CPU time (run with
 * OMP_WAIT_POLICY=passive so that waiting threads sleep): on a shared machine a thread that is
 * descheduled then costs no time, so rates of products run seconds apart stay comparable. The
 * CPU rate is GFLOP per CPU-second times the thread count. Per contender: best and median. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mkl.h>
#include <omp.h>

#include "dnnl_wrap.h"

/* The i-th call of round r among n contenders: the rows of a Williams design, in which every
 * contender comes right after every other equally often (for odd n over 2n rounds: the n
 * rows, then the same rows reversed). A plain rotation (i + r) % n put A after MKL in two
 * rounds of three and B after A: with the slow MKL product before it, a contender ran
 * about 2% slower, and oneDNN 3.2 read 2% faster than itself (docs/performance.md,
 * "The GEMM library"). */
static int call_order(int r, int i, int n)
{
	int row = r % (n % 2 ? 2 * n : n);
	if (row >= n) {                 /* odd n: the rows again, each reversed */
		row -= n;
		i = n - 1 - i;
	}
	int base = i == 0 ? 0 : i % 2 ? (i + 1) / 2 : n - i / 2;
	return (base + row) % n;
}

struct shape {
	const char *role;
	int64_t batch, m, n, k;
	int ta, tb;
};

/* n = 1024 token rows, d = 768, f = 3072 (W1|W3: 6144), V = 10000, 48 heads of 256 x 64 */
static const struct shape shapes[] = {
	{"fwd qkv   X W^T", 1, 1024, 2304, 768, 0, 1},
	{"fwd o     X W^T", 1, 1024, 768, 768, 0, 1},
	{"fwd w13   X W^T", 1, 1024, 6144, 768, 0, 1},
	{"fwd w2    X W^T", 1, 1024, 768, 3072, 0, 1},
	{"fwd head  X W^T", 1, 1024, 10000, 768, 0, 1},
	{"dX qkv    dY W", 1, 1024, 768, 2304, 0, 0},
	{"dX o      dY W", 1, 1024, 768, 768, 0, 0},
	{"dX w13    dY W", 1, 1024, 768, 6144, 0, 0},
	{"dX w2     dY W", 1, 1024, 3072, 768, 0, 0},
	{"dX head   dY W", 1, 1024, 768, 10000, 0, 0},
	{"dW qkv    dY^T X", 1, 2304, 768, 1024, 1, 0},
	{"dW o      dY^T X", 1, 768, 768, 1024, 1, 0},
	{"dW w13    dY^T X", 1, 6144, 768, 1024, 1, 0},
	{"dW w2     dY^T X", 1, 768, 3072, 1024, 1, 0},
	{"dW head   dY^T X", 1, 10000, 768, 1024, 1, 0},
	{"att QK^T", 48, 256, 256, 64, 0, 1},
	{"att PV", 48, 256, 64, 256, 0, 0},
	{"att P^T dO", 48, 256, 64, 256, 1, 0},
	{"att dO V^T", 48, 256, 256, 64, 0, 1},
	{"att dS K", 48, 256, 64, 256, 0, 0},
	{"att dS^T Q", 48, 256, 64, 256, 1, 0},
	{"matmul 2048", 1, 2048, 2048, 2048, 0, 0},
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

struct wrap {
	char version[160];
	int (*create)(struct onednn_gemm **, const struct onednn_gemm_desc *, struct mem_arena *,
		      struct bd_error *);
	int (*execute)(struct onednn_gemm *, const void *, const void *, void *, struct bd_error *);
	void (*release)(struct onednn_gemm *);
	const char *(*impl)(const struct onednn_gemm *);
	void (*prefer)(const char *);
};

static int load(struct wrap *w, const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*version)(char *, size_t) = h ? (int (*)(char *, size_t))dlsym(h, "onednn_version") : NULL;
	if (!h || !version) {
		fprintf(stderr, "gemm_libs: %s: %s\n", path, h ? "no onednn_version" : dlerror());
		return -1;
	}
	version(w->version, sizeof(w->version));
	*(void **)&w->create = dlsym(h, "onednn_gemm_create");
	*(void **)&w->execute = dlsym(h, "onednn_gemm_execute");
	*(void **)&w->release = dlsym(h, "onednn_gemm_free");
	*(void **)&w->impl = dlsym(h, "onednn_gemm_impl");
	*(void **)&w->prefer = dlsym(h, "onednn_prefer_impl");
	return w->create && w->execute && w->release && w->impl && w->prefer ? 0 : -1;
}

static clockid_t clk = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec t;
	clock_gettime(clk, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void mkl_gemm(const struct shape *sh, int bf16, const void *a, const void *b, float *c)
{
	CBLAS_TRANSPOSE ta = sh->ta ? CblasTrans : CblasNoTrans, tb = sh->tb ? CblasTrans : CblasNoTrans;
	MKL_INT lda = sh->ta ? sh->m : sh->k, ldb = sh->tb ? sh->k : sh->n;
	if (!bf16) {
		cblas_sgemm_batch_strided(CblasRowMajor, ta, tb, sh->m, sh->n, sh->k, 1.0f, a, lda,
					  sh->m * sh->k, b, ldb, sh->k * sh->n, 0.0f, c, sh->n,
					  sh->m * sh->n, sh->batch);
		return;
	}
	for (int64_t e = 0; e < sh->batch; e++)
		cblas_gemm_bf16bf16f32(CblasRowMajor, ta, tb, sh->m, sh->n, sh->k, 1.0f,
				       (const MKL_BF16 *)a + e * sh->m * sh->k, lda,
				       (const MKL_BF16 *)b + e * sh->k * sh->n, ldb, 0.0f,
				       c + e * sh->m * sh->n, sh->n);
}

enum { MAXC = 5, MAXR = 500 };

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: gemm_libs WRAP_A.so WRAP_B.so float32|bfloat16 REPS [ROLE]\n");
		return 2;
	}
	if (getenv("GEMM_LIBS_CLOCK") && !strcmp(getenv("GEMM_LIBS_CLOCK"), "cpu"))
		clk = CLOCK_PROCESS_CPUTIME_ID;
	int bf16 = !strcmp(argv[3], "bfloat16");
	int reps = atoi(argv[4]);
	reps = reps < 1 ? 1 : reps > MAXR ? MAXR : reps;
	const char *only = argc > 5 ? argv[5] : NULL;
	struct wrap w[2];
	if (load(&w[0], argv[1]) || load(&w[1], argv[2]))
		return 1;
	MKLVersion mv;
	mkl_get_version(&mv);
	int threads = omp_get_max_threads();
	double scale = clk == CLOCK_MONOTONIC ? 1.0 : threads;
	printf("# A: %s\n# B: %s\n# MKL %d.%d.%d (%s)\n# %s, %d threads, %d rounds, %s; GFLOP/s "
	       "best / median\n", w[0].version, w[1].version, mv.MajorVersion, mv.MinorVersion,
	       mv.UpdateVersion, mv.Processor, bf16 ? "bfloat16" : "float32", threads, reps,
	       clk == CLOCK_MONOTONIC ? "wall clock" : "process CPU time x threads");
	size_t es = bf16 ? 2 : 4;
	static double t[MAXC][MAXR];
	for (size_t s = 0; s < NSHAPES; s++) {
		const struct shape *sh = &shapes[s];
		if (only && !strstr(sh->role, only))
			continue;
		size_t na = (size_t)(sh->batch * sh->m * sh->k), nb = (size_t)(sh->batch * sh->k * sh->n);
		size_t nc = (size_t)(sh->batch * sh->m * sh->n);
		void *a = aligned_alloc(64, (na * es + 63) / 64 * 64);
		void *b = aligned_alloc(64, (nb * es + 63) / 64 * 64);
		float *c = aligned_alloc(64, (nc * 4 + 63) / 64 * 64);
		if (!a || !b || !c)
			return 1;
		for (size_t i = 0; i < na; i++)
			bf16 ? (void)(((uint16_t *)a)[i] = (uint16_t)(0x3f80 ^ (i & 7)))
			     : (void)(((float *)a)[i] = 1.0f / (float)(1 + i % 7));
		for (size_t i = 0; i < nb; i++)
			bf16 ? (void)(((uint16_t *)b)[i] = (uint16_t)(0x3f00 ^ (i & 3)))
			     : (void)(((float *)b)[i] = 1.0f / (float)(1 + i % 5));
		memset(c, 0, nc * 4);
		struct onednn_gemm_desc d = {.batch = sh->batch, .m = sh->m, .n = sh->n, .k = sh->k,
					     .trans_a = sh->ta, .trans_b = sh->tb,
					     .ab_dtype = bf16 ? DTYPE_BFLOAT16 : DTYPE_FLOAT32,
					     .c_dtype = DTYPE_FLOAT32};
		/* contenders: A first, A's choice, B first, B's choice (each only when it differs
		 * from the one before), MKL */
		struct { const char *lib, *impl; struct wrap *w; struct onednn_gemm *g; } c_[MAXC];
		int nc_ = 0;
		for (int l = 0; l < 2; l++)
			for (int first = 1; first >= 0; first--) {
				struct bd_error err = {0};
				struct onednn_gemm *g = NULL;
				w[l].prefer(first ? "" : getenv("GEMM_LIBS_PREFER"));
				if (w[l].create(&g, &d, NULL, &err)) {
					fprintf(stderr, "gemm_libs: %s: %s\n", sh->role, err.msg);
					return 1;
				}
				if (!first && !strcmp(w[l].impl(g), c_[nc_ - 1].impl)) {
					w[l].release(g);
					continue;
				}
				c_[nc_].lib = l ? "B" : "A";
				c_[nc_].impl = w[l].impl(g);
				c_[nc_].w = &w[l];
				c_[nc_++].g = g;
			}
		c_[nc_].lib = "MKL";
		c_[nc_].impl = bf16 ? "cblas_gemm_bf16bf16f32" : "cblas_sgemm";
		c_[nc_++].w = NULL;
		for (int r = -1; r < reps; r++) {
			struct bd_error spacer_err = {0};
			c_[0].w->execute(c_[0].g, a, b, c, &spacer_err);
			for (int i = 0; i < nc_; i++) {
				int k = call_order(r < 0 ? 0 : r, i, nc_);
				struct bd_error err = {0};
				double t0 = now();
				if (c_[k].w)
					c_[k].w->execute(c_[k].g, a, b, c, &err);
				else
					mkl_gemm(sh, bf16, a, b, c);
				if (r >= 0)
					t[k][r] = now() - t0;
			}
		}
		double flop = 2.0 * (double)(sh->batch * sh->m * sh->n * sh->k);
		printf("%-17s %2lld x %5lld x %5lld x %5lld", sh->role, (long long)sh->batch,
		       (long long)sh->m, (long long)sh->n, (long long)sh->k);
		for (int k = 0; k < nc_; k++) {
			qsort(t[k], (size_t)reps, sizeof(double), cmp);
			printf(" | %s %s %.0f / %.0f", c_[k].lib, c_[k].impl,
			       flop / t[k][0] * 1e-9 * scale, flop / t[k][reps / 2] * 1e-9 * scale);
		}
		printf("\n");
		fflush(stdout);
		for (int k = 0; k < nc_; k++)
			if (c_[k].w)
				c_[k].w->release(c_[k].g);
		free(a);
		free(b);
		free(c);
	}
	return 0;
}
