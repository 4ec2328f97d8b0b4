#!/usr/bin/env bash
# tests/cli/cuda_run_test.sh (label gpu): `runner run` of CUDA cases on a GPU, end to end: a tiny
# model in float32, TF32 and bfloat16, device-timed and with sync: false, a cuBLASLt matmul, an
# out-of-memory case followed by one that runs on the same GPU, and `report` over them; then GPU
# attention (naive, flash, cuDNN SDPA, and the model with each) and `report --compare sdpa`.
# Exits 77 (skipped) where `runner sysinfo` sees no GPU.
#   cuda_run_test.sh RUNNER REPORT [MAKE_FIXTURE]
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"

expect_status 0 "runner sysinfo" "$RUNNER" sysinfo
if grep -Eq '^gpu +none visible' "$T/out"; then
	echo "cuda_run: $(grep -E '^gpu ' "$T/out") (skipped)"
	exit 77
fi
contains "$T/out" "compute capability [0-9]+\.[0-9]" "sysinfo shows the compute capability"
db=$T/cuda.db
cat >"$T/cuda.yaml" <<'YAML'
name: cli-cuda-run
defaults: {device: cuda, warmup: 1, iters: 3}
models:
  mini: {d_model: 64, d_ff: 160, num_layers: 2, num_heads: 4, vocab_size: 503}
benchmarks:
  - suite: e2e
    model: mini
    context_length: 37
    batch_size: 2
    axes:
      dtype: [float32, bfloat16]
      pass: [forward, train_step]
  - {suite: e2e, model: mini, context_length: 37, batch_size: 2, tf32: true, pass: forward_backward}
  - {suite: e2e, model: mini, context_length: 37, batch_size: 2, sync: false}
  - {suite: e2e, model: mini, context_length: 37, batch_size: 2, mem_limit: 33MiB}
  - {suite: e2e, model: mini, context_length: 16, batch_size: 1, pass: forward}
  - {suite: matmul, impl: cublaslt, m: 257, n: 129, k: 511, dtype: [float32, bfloat16]}
YAML
expect_status 0 "runner run on the GPU" "$RUNNER" run "$T/cuda.yaml" --db "$db"
contains "$T/out" "10 of 10 cases stored \(9 ok, 1 oom, 0 error, 0 unsupported" "run summary"
check "the oom case says what did not fit" [ "$(sql "$db" "select count(*) from cases where status = 'oom' and reason like '%did not fit%'")" = 1 ]
check "the case after the oom ran on the same GPU" [ "$(sql "$db" "select status from cases order by id desc limit 1 offset 2")" = ok ]
check "ok cases validated" [ "$(sql "$db" "select count(*) from cases where status = 'ok' and max_diff >= 0 and max_diff <= tolerance")" = 9 ]
check "samples are positive" [ "$(sql "$db" "select count(*) from samples where ns <= 0")" = 0 ]
check "train_step: 4 iterations x 3 phases" [ "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.pass = 'train_step' and c.status = 'ok' and c.params like '%\"sync\":true%' and c.dtype = 'float32'")" = 12 ]
check "peaks recorded" [ "$(sql "$db" "select count(*) from cases where status = 'ok' and suite = 'e2e' and peak_bytes > 0")" = 7 ]
check "GPU stored with the run" [ "$(sql "$db" "select gpu_count > 0 and length(gpu_name) > 0 and length(cublas_version) > 0 from systems")" = 1 ]
check "tf32 stored with the case" [ "$(sql "$db" "select count(*) from cases where params like '%\"tf32\":true%' and status = 'ok'")" = 1 ]
expect_status 0 "report" "$REPORT" --db "$db"
contains "$T/out" "mini" "report lists the cases"

# GPU attention: naive, flash and cuDNN SDPA in one run, a float32 SDPA that cuDNN refuses, the
# model with each attention, then report --compare sdpa pairs them per shape.
adb=$T/attn.db
cat >"$T/attn.yaml" <<'YAML'
name: cli-cuda-attention
defaults: {device: cuda, warmup: 1, iters: 3}
models:
  mini: {d_model: 64, d_ff: 160, num_layers: 2, num_heads: 4, vocab_size: 503}
benchmarks:
  - suite: attention
    impl: [naive, flash, sdpa]
    dtype: [bfloat16, float16]
    causal: [false, true]
    head_dim: 64
    seq_len: 333
    batch_size: 2
    heads: 3
  - {suite: attention, impl: sdpa, dtype: float32, head_dim: 64, seq_len: 128, batch_size: 1, heads: 1}
  - {suite: e2e, model: mini, context_length: 37, batch_size: 2, dtype: bfloat16, pass: forward_backward,
     attention: [naive, flash, sdpa]}
YAML
expect_status 0 "runner run of GPU attention" "$RUNNER" run "$T/attn.yaml" --db "$adb"
contains "$T/out" "16 of 16 cases stored \(15 ok, 0 oom, 0 error, 1 unsupported" "attention run summary"
check "sdpa float32: unsupported with cuDNN's reason" [ "$(sql "$adb" "select count(*) from cases where impl = 'sdpa' and dtype = 'float32' and status = 'unsupported' and reason like '%sdpa%'")" = 1 ]
check "attention cases validated" [ "$(sql "$adb" "select count(*) from cases where suite = 'attention' and status = 'ok' and max_diff >= 0 and max_diff <= tolerance")" = 12 ]
check "memory after the forward recorded" [ "$(sql "$adb" "select count(*) from cases where suite = 'attention' and status = 'ok' and peak_fwd_bytes > 0")" = 12 ]
check "cuDNN version stored" [ "$(sql "$adb" "select length(cudnn_version) > 0 from systems")" = 1 ]
expect_status 0 "report --compare sdpa" "$REPORT" --db "$adb" --compare sdpa
contains "$T/out" "flash" "compare sdpa: flash against sdpa"
contains "$T/out" "naive" "compare sdpa: naive against sdpa"
finish cuda_run
