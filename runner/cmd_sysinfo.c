/* runner/cmd_sysinfo.c: `runner sysinfo` — what a run would record about this machine. */
#include <stdio.h>

#include "build_info.h"
#include "commands.h"
#include "opt.h"
#include "sysinfo.h"

int cmd_sysinfo(int argc, char **argv)
{
	static const struct opt_spec specs[] = {{0}};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "sysinfo", "",
		"Print the system, build and environment facts that `runner run` stores with each run."};
	int npos = 0;
	int status = opt_parse_command(specs, &usage, argc, argv, 0, 0, &npos);
	if (status >= 0)
		return status;
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
	sb_free(&env);
	return EXIT_OK;
}
