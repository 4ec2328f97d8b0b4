/* db/records.h: what the db layer writes and reads (rows of schemas/001_init.sql). */
#ifndef BENCHDB_RECORDS_H
#define BENCHDB_RECORDS_H

#include <stdint.h>

#include "vocab.h"

struct case_params;

/* A machine + build. Text fields are "" when unknown (stored as NULL); numbers 0 when unknown. */
struct sysinfo {
	char hostname[256];
	char os[256];
	char kernel[256];
	char arch[64];
	char cpu_model[256];
	int cpu_cores, cpu_threads;
	char cpu_flags[512];
	int64_t mem_bytes;
	char gpu_name[256];
	int gpu_count;
	int64_t gpu_mem_bytes;
	int gpu_sm_count;
	char gpu_cc[16];
	int gpu_clock_mhz, gpu_mem_clock_mhz;
	char driver_version[64];
	char cuda_runtime[64];
	char cudnn_version[64];
	char cublas_version[64];
	char blas[256];
	char compiler[128];
	char build_flags[512];
};

struct run_record {
	char uuid[40];
	char started_at[32];
	const char *git_commit;   /* NULL when unknown */
	int git_dirty;            /* -1 unknown */
	const char *git_branch;
	const char *tool_version;
	const char *command_line;
	const char *sweep_path;
	const char *sweep_name;
	const char *sweep_text;
	const char *sweep_hash;
	const char *label;        /* NULL for none */
	const char *env_json;
	const char *group_id;     /* shards of one sweep share it; NULL for none */
	int shard_index, shard_count;   /* shard_count 0: not a shard */
	int64_t mem_limit;        /* bytes given to cases (schema 11); 0 unknown */
	int mem_limit_all;        /* 1: --mem-limit, every case; 0: the default share, CPU cases
				   * without a limit of their own */
};

struct case_record {
	int64_t ord;
	/* The parameters: cases.suite, impl, device, ... and the other typed columns are written
	 * from it as param_defs says (common/params.h); NULL: all of them NULL. */
	const struct case_params *params;
	const char *params_json, *case_key, *name;
	int64_t warmup, iters;
	enum bd_status status;
	const char *reason;      /* NULL for ok */
	double max_diff, tolerance;        /* < 0 = not validated */
	int64_t mem_limit;                 /* 0 = none */
	int64_t param_bytes, peak_fwd_bytes, peak_bwd_bytes, peak_bytes; /* < 0 = unknown */
	/* what the memory holds (e2e); <= 0 is stored as NULL: none or unknown */
	int64_t grad_bytes, optim_bytes, activation_bytes, workspace_bytes;
	int64_t param_count;               /* parameters of the case's model; <= 0: none (NULL) */
	/* schemas/008_case_detail.sql; NULL or "": stored as NULL */
	const char *impl_info;             /* JSON object: what ran (engine, library versions) */
	const char *stop_reason;           /* iters, precision, max_time, max_iters */
	double cpu_wait;                   /* schema 9: share waited for a CPU; < 0 unknown (NULL) */
	double rse;                        /* schema 12: the median's relative standard error;
					    * not finite or <= 0 (a zeroed record): NULL */
	double flops[PHASE_COUNT], bytes[PHASE_COUNT];
	char started_at[32];
	int64_t elapsed_ns;
};

struct sample {
	int32_t iter;    /* 0-based, warm-up first */
	int32_t phase;   /* enum bd_phase */
	int64_t ns;
};

/* Rows read back. Strings are owned by the row and freed with the list that holds it. */
struct run_row {
	int64_t id;
	char *uuid, *started_at, *ended_at, *status, *git_commit, *git_branch, *label;
	char *sweep_path, *sweep_name, *sweep_hash, *command_line, *tool_version;
	int git_dirty;           /* -1 unknown */
	int64_t system_id;
	char *hostname;
	int64_t ncases, nok;
	int64_t shard_index, shard_count;   /* the slice of its sweep (runner run --shard); -1: none */
};

struct case_row {
	int64_t id, run_id, ord;
	char *suite, *impl, *device, *dtype, *pass, *model;
	int64_t batch_size, heads, seq_len, head_dim;  /* 0 when NULL */
	int causal;                                     /* -1 when NULL */
	char *params_json, *case_key, *name;
	int64_t warmup, iters;
	enum bd_status status;
	char *reason;
	double max_diff, tolerance;                     /* -1 when NULL */
	int64_t mem_limit, param_bytes, peak_fwd_bytes, peak_bwd_bytes, peak_bytes; /* -1 when NULL */
	int64_t grad_bytes, optim_bytes, activation_bytes, workspace_bytes;       /* -1 when NULL */
	int64_t param_count;                                                      /* -1 when NULL */
	char *impl_info, *stop_reason;                                            /* NULL when NULL */
	double cpu_wait;                                                          /* -1 when NULL */
	double rse;                                                               /* -1 when NULL */
	double flops[PHASE_COUNT], bytes[PHASE_COUNT];
	int64_t elapsed_ns;
};

#endif
