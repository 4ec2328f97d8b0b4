/* runner/cmd_sysinfo.c: `runner sysinfo` — what a run would record about this machine, and on
 * request the CPU's measured float32 FMA peak (not stored: a ceiling to read GEMM rates against). */
#include <stdio.h>

#include "build_info.h"
#include "commands.h"
#include "fma_peak.h"
#include "opt.h"
#include "proc_wait.h"
#include "sysinfo.h"

int cmd_sysinfo(struct cmd_line *cl)
{
	int fma_peak = 0;
	const char *isa = NULL;
	const struct opt_spec specs[] = {
		{"fma-peak", 0, OPT_FLAG, NULL, "also measure the cpu's float32 fma peak with every "
		 "openmp thread (about 2 s; not stored)", &fma_peak},
		{"isa", 0, OPT_STRING, "ISA", "the fma peak's vectors: avx512 or avx2 (default: the "
		 "widest this cpu has), or avx512bf16 for the bfloat16 dot-product peak", &isa},
		{0}};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "sysinfo", "[--fma-peak [--isa ISA]]",
		"Print the system, build and environment facts that `runner run` stores with each run."};
	int npos = 0;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if (isa && !fma_peak) {
		fprintf(stderr, RUNNER_PROG " sysinfo: --isa goes with --fma-peak\n");
		return EXIT_USAGE;
	}
	struct fma_peak peak = {0};
	if (fma_peak) {
		struct bd_error err = {0};
		if (fma_peak_measure(isa, 7, 0.25, &peak, &err) < 0) {
			bd_error_print(RUNNER_PROG " sysinfo --fma-peak", &err);
			return err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		}
	}
	struct sysinfo si;
	sysinfo_collect(&si);
	struct strbuf env = STRBUF_INIT;
	sysinfo_env_json(&env);
	char gpu[512];
	struct kernels_build_info bi;
	kernels_build_info(&bi);
	if (si.gpu_count)
		snprintf(gpu, sizeof(gpu), "%.255s (x%d; %d SMs, %.1f GiB, compute capability %s, "
			 "clocks %d/%d MHz)", si.gpu_name, si.gpu_count, si.gpu_sm_count,
			 (double)si.gpu_mem_bytes / (1 << 30), si.gpu_cc, si.gpu_clock_mhz,
			 si.gpu_mem_clock_mhz);
	else
		snprintf(gpu, sizeof(gpu), "none visible (%s)", bi.no_gpu[0] ? bi.no_gpu : "?");
	const struct {
		const char *k, *v;
	} rows[] = {
		{"hostname", si.hostname}, {"os", si.os}, {"kernel", si.kernel}, {"arch", si.arch},
		{"cpu_model", si.cpu_model}, {"cpu_flags", si.cpu_flags}, {"blas", si.blas},
		{"cpu_bf16", bi.cpu_bf16}, {"compiler", si.compiler}, {"build_flags", si.build_flags},
		{"git_commit", build_git_commit[0] ? build_git_commit : "unknown"},
		{"git_branch", build_git_branch[0] ? build_git_branch : "unknown"},
		{"git_dirty", build_git_dirty < 0 ? "unknown" : build_git_dirty ? "yes" : "no"},
		{"gpu", gpu},
		{"cuda_driver", si.driver_version}, {"cuda_runtime", si.cuda_runtime},
		{"cublas", si.cublas_version}, {"cudnn", si.cudnn_version},
		{"env", sb_str(&env)},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		printf("%-12s %s\n", rows[i].k, rows[i].v[0] ? rows[i].v : "unknown");
	printf("%-12s %d physical, %d logical\n", "cpu_cores", si.cpu_cores, si.cpu_threads);
	printf("%-12s %.1f GiB\n", "memory", (double)si.mem_bytes / (1 << 30));
	if (fma_peak)
		printf("%-12s %.1f GFLOP/s %s (%s, %d-bit %s, %d thread%s; fastest of %d runs of "
		       "%.2f s, slowest %.1f)\n", "fma_peak", peak.best_gflops, peak.dtype, peak.isa,
		       peak.vector_bits, peak.instruction, peak.threads, peak.threads == 1 ? "" : "s",
		       peak.reps, peak.rep_seconds, peak.worst_gflops);
	/* a peak measured while other processes had the CPUs is a floor, and says so */
	if (fma_peak && peak.cpu_wait > CPU_WAIT_CONTENDED)
		printf("%-12s contended: its threads waited for a CPU %.0f%% of the fastest run (another "
		       "process had it, or more threads than CPUs): the peak is higher than measured\n",
		       "fma_wait", 100 * peak.cpu_wait);
	sb_free(&env);
	return EXIT_OK;
}
