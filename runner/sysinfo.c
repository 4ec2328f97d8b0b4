/* runner/sysinfo.c: machine, build and environment facts from /proc, uname and the libraries. */
#include "sysinfo.h"

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "build_info.h"
#include "cgroup_cpu.h"

#ifndef BENCHDB_COMPILER
#define BENCHDB_COMPILER "unknown"
#endif
#ifndef BENCHDB_BUILD_FLAGS
#define BENCHDB_BUILD_FLAGS ""
#endif

/* Environment variables that change what a benchmark measures. */
static const char *const env_vars[] = {
	"OMP_NUM_THREADS", "OMP_THREAD_LIMIT", "OMP_PROC_BIND", "OMP_PLACES", "OMP_DYNAMIC",
	"GOMP_CPU_AFFINITY",
	"KMP_AFFINITY", "OMP_WAIT_POLICY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ONEDNN_VERBOSE",
	"DNNL_VERBOSE",
	/* the peers': PyTorch's CPU kernels, MKL's, torch.compile's code (docs/peers.md) */
	"ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "MKL_NUM_THREADS", "TORCHINDUCTOR_CPP_MARCH",
	"CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS",
	"CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "CUDNN_LOGLEVEL_DBG", "LD_PRELOAD",
	"BENCHDB_CUDA_TIMING_DELAY_US", "BENCHDB_SDPA_GRAPH", "BENCHDB_GEMM_PAIRS", "BENCHDB_GEMM_TUNE",
	"BENCHDB_NODE", NULL,
};

/* SIMD and matrix-extension flags worth recording, in /proc/cpuinfo spelling. */
static const char *const simd_flags[] = {
	"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
	"avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve", NULL,
};

/* The SIMD flags of simd_flags that the compiler targeted, in their spelling there: what
 * -march=native resolved to on the build machine, which the kernels' vectors follow
 * (kernels/cpu/simd.h) whatever the machine that runs them has. "none" when none. */
static void target_flags(char *out, size_t n)
{
	size_t used = 0;
	out[0] = '\0';
#define TARGET_FLAG(name)                                                                       \
	if (used < n)                                                                           \
		used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " " : "", name)
#ifdef __SSE4_2__
	TARGET_FLAG("sse4_2");
#endif
#ifdef __AVX__
	TARGET_FLAG("avx");
#endif
#ifdef __AVX2__
	TARGET_FLAG("avx2");
#endif
#ifdef __FMA__
	TARGET_FLAG("fma");
#endif
#ifdef __F16C__
	TARGET_FLAG("f16c");
#endif
#ifdef __AVX512F__
	TARGET_FLAG("avx512f");
#endif
#ifdef __AVX512BW__
	TARGET_FLAG("avx512bw");
#endif
#ifdef __AVX512VL__
	TARGET_FLAG("avx512vl");
#endif
#ifdef __AVX512VNNI__
	TARGET_FLAG("avx512_vnni");
#endif
#ifdef __AVX512BF16__
	TARGET_FLAG("avx512_bf16");
#endif
#ifdef __AVX512FP16__
	TARGET_FLAG("avx512_fp16");
#endif
#ifdef __AMX_TILE__
	TARGET_FLAG("amx_tile");
#endif
#ifdef __AMX_BF16__
	TARGET_FLAG("amx_bf16");
#endif
#ifdef __AMX_INT8__
	TARGET_FLAG("amx_int8");
#endif
#ifdef __ARM_NEON
	TARGET_FLAG("asimd");
#endif
#ifdef __ARM_FEATURE_SVE
	TARGET_FLAG("sve");
#endif
#undef TARGET_FLAG
	if (!out[0])
		snprintf(out, n, "none");
}

/* Value of "key : value" lines in a /proc-style file; "" if absent. */
static void proc_field(const char *path, const char *key, char *out, size_t n)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[8192];
	size_t klen = strlen(key);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || (line[klen] != ' ' && line[klen] != '\t' &&
						  line[klen] != ':' && line[klen] != '='))
			continue;
		char *v = line + klen;
		while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=')
			v++;
		v[strcspn(v, "\n")] = '\0';
		if (*v == '"') {
			v++;
			v[strcspn(v, "\"")] = '\0';
		}
		snprintf(out, n, "%s", v);
		break;
	}
	fclose(f);
}

static int64_t meminfo_kib(const char *key)
{
	char v[64];
	proc_field("/proc/meminfo", key, v, sizeof(v));
	return v[0] ? atoll(v) * 1024 : 0;
}

void sysinfo_memory(int64_t *total, int64_t *available)
{
	*total = meminfo_kib("MemTotal");
	*available = meminfo_kib("MemAvailable");
}

/* Physical cores: distinct (physical id, core id) pairs in /proc/cpuinfo. */
static int physical_cores(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return 0;
	char line[512];
	int phys = 0, seen[4096][2], nseen = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "physical id", 11))
			phys = atoi(strchr(line, ':') + 1);
		if (strncmp(line, "core id", 7))
			continue;
		int core = atoi(strchr(line, ':') + 1), dup = 0;
		for (int i = 0; i < nseen && !dup; i++)
			dup = seen[i][0] == phys && seen[i][1] == core;
		if (!dup && nseen < 4096) {
			seen[nseen][0] = phys;
			seen[nseen][1] = core;
			nseen++;
		}
	}
	fclose(f);
	return nseen;
}

static void cpu_flags(char *out, size_t n)
{
	char flags[8192];
	proc_field("/proc/cpuinfo", "flags", flags, sizeof(flags));
	if (!flags[0])
		proc_field("/proc/cpuinfo", "Features", flags, sizeof(flags));
	out[0] = '\0';
	size_t used = 0;
	for (const char *const *want = simd_flags; *want; want++) {
		size_t wl = strlen(*want);
		for (char *p = flags; (p = strstr(p, *want)); p += wl) {
			int starts = p == flags || p[-1] == ' ';
			int ends = p[wl] == ' ' || p[wl] == '\0';
			if (starts && ends) {
				used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " " : "", *want);
				break;
			}
		}
		if (used >= n)
			break;
	}
}

void sysinfo_collect(struct sysinfo *si)
{
	memset(si, 0, sizeof(*si));
	/* BENCHDB_NODE names the machine instead (`runner slurm --nodes` passes Slurm's name of
	 * the node, which report nodes then tells nodes apart by) */
	const char *node = getenv("BENCHDB_NODE");
	if (node && *node)
		snprintf(si->hostname, sizeof(si->hostname), "%s", node);
	else if (gethostname(si->hostname, sizeof(si->hostname) - 1) != 0)
		snprintf(si->hostname, sizeof(si->hostname), "unknown");
	proc_field("/etc/os-release", "PRETTY_NAME", si->os, sizeof(si->os));
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(si->kernel, sizeof(si->kernel), "%.100s %.100s", u.sysname, u.release);
		snprintf(si->arch, sizeof(si->arch), "%.60s", u.machine);
	}
	proc_field("/proc/cpuinfo", "model name", si->cpu_model, sizeof(si->cpu_model));
	si->cpu_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	si->cpu_cores = physical_cores();
	if (si->cpu_cores <= 0)
		si->cpu_cores = si->cpu_threads;
	cpu_flags(si->cpu_flags, sizeof(si->cpu_flags));
	int64_t avail;
	sysinfo_memory(&si->mem_bytes, &avail);
	struct kernels_build_info bi;
	kernels_build_info(&bi);
	const struct cuda_gpu_info gi = bi.gpu;
	snprintf(si->blas, sizeof(si->blas), "%s", bi.blas);
	snprintf(si->gpu_name, sizeof(si->gpu_name), "%s", gi.name);
	si->gpu_count = gi.count;
	si->gpu_mem_bytes = gi.mem_bytes;
	si->gpu_sm_count = gi.sm_count;
	snprintf(si->gpu_cc, sizeof(si->gpu_cc), "%s", gi.cc);
	si->gpu_clock_mhz = gi.clock_mhz;
	si->gpu_mem_clock_mhz = gi.mem_clock_mhz;
	snprintf(si->driver_version, sizeof(si->driver_version), "%s", gi.driver);
	snprintf(si->cuda_runtime, sizeof(si->cuda_runtime), "%s", gi.runtime);
	snprintf(si->cublas_version, sizeof(si->cublas_version), "%s", gi.cublas);
	snprintf(si->cudnn_version, sizeof(si->cudnn_version), "%s", gi.cudnn);
	snprintf(si->compiler, sizeof(si->compiler), "%s", BENCHDB_COMPILER);
	/* -march=native names no ISA: the build machine's, which need not be this one's */
	char native[256] = "";
	if (strstr(BENCHDB_BUILD_FLAGS, "-march=native")) {
		char flags[200];
		target_flags(flags, sizeof(flags));
		snprintf(native, sizeof(native), " (native: %s)", flags);
	}
	snprintf(si->build_flags, sizeof(si->build_flags), "%s%s", BENCHDB_BUILD_FLAGS, native);
}

void sysinfo_env_json(struct strbuf *sb)
{
	sb_addc(sb, '{');
	int first = 1;
	for (const char *const *name = env_vars; *name; name++) {
		const char *v = getenv(*name);
		if (!v)
			continue;
		if (!first)
			sb_addc(sb, ',');
		first = 0;
		sb_add_json_str(sb, *name);
		sb_addc(sb, ':');
		sb_add_json_str(sb, v);
	}
	/* the CPUs this process may run on, where fewer than the machine's (taskset, a cpuset):
	 * cpu_threads counts the machine's, and OMP_NUM_THREADS may ask for more than these */
	cpu_set_t allowed;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) < online) {
		sb_addf(sb, "%s\"cpus_allowed\":%d", first ? "" : ",", CPU_COUNT(&allowed));
		first = 0;
	}
	/* the CPU time the control group allows, where less than the machine's CPUs (a container's
	 * or pod's CPU limit): cases with more threads than it wait for a CPU (cgroup_cpu.h) */
	double quota;
	if (!cgroup_cpu_quota_self(&quota) && quota < online) {
		sb_addf(sb, "%s\"cpu_quota\":%.4g", first ? "" : ",", quota);
		first = 0;
	}
	/* a parallel region's team: OMP_THREAD_LIMIT caps it below omp_get_max_threads() */
	int threads = omp_get_max_threads(), limit = omp_get_thread_limit();
	sb_addf(sb, "%s\"omp_max_threads\":%d}", first ? "" : ",", limit < threads ? limit : threads);
}
