#!/usr/bin/env bash
# scripts/device/gpu_run.sh: main's GPU tests and GPU sweeps on a lent GPU machine (the device
# tool of this workplace, see docs/performance.md "Measured on a GPU"). The machine has the CUDA
# driver, toolkit and PyTorch but not libyaml/SQLite/oneDNN/cmocka, and cannot fetch packages, so
# the binaries are built here (scripts/device/bundle.sh) and travel as .dev/bundle.tar.xz with the
# libraries they link; cuBLASLt and cuDNN come from the machine's PyPI wheels.
#   gpu_run.sh STAGE...    stages: env tests cputests flash short cpuflash cpue2e cpubf16 cpuprof attn e2e cs336 peergpu torchsdpa kitgpu equiv (each writes under $OUT)
set -u
OUT=${OUT:-/tmp/gpu-out}
ROOT=$PWD
mkdir -p "$OUT" /work
[ "$ROOT" = /work/main ] || { [ -e /work/main ] || ln -s "$ROOT" /work/main; }  # ctest's absolute paths
[ -d .dev/lib ] || tar -xJf .dev/bundle.tar.xz
sp=$(python3 -c 'import site; print(site.getsitepackages()[0])')
libs=$(find "$sp/nvidia" -name 'lib*.so*' -printf '%h\n' 2>/dev/null | sort -u | tr '\n' :)
export LD_LIBRARY_PATH=$ROOT/.dev/lib:$libs/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$ROOT/.dev/bin:$PATH BENCHDB_PYTHON=python3
R=$ROOT/build-gpu/runner/runner
P=$ROOT/build-gpu/report/report
A=$ROOT/build-avx512/runner/runner   # the CPU stages' build (-march for AVX-512; bundle.sh)
# run NAME SECONDS COMMAND...: one stage's command under a time limit (SIGINT first: the runner
# keeps every finished case), its output in $OUT/NAME.log
run() {
	local name=$1 secs=$2; shift 2
	local t0=$SECONDS
	timeout -s INT -k 30 "$secs" "$@" >"$OUT/$name.log" 2>&1
	echo "== $name: exit $? in $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
}
for stage in "$@"; do
	case $stage in
	env)
		{ nvidia-smi; nvcc --version; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|MHz|Flags' | cut -c1-2000
		  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
		  ls "$sp"/nvidia/*/lib 2>/dev/null | grep -E 'cudnn\.so|cublasLt' ; pip list 2>/dev/null | grep -i -E 'cudnn|cublas'
		  ldd "$R" | grep -E 'not found|cudnn|cublas|dnnl'; "$R" sysinfo; } >"$OUT/env.log" 2>&1 ;;
	tests) run gpu-tests 240 ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 230 ;;
	cputests)  # the CPU side on this machine's CPU (AVX-512 where it has it): oneDNN's native bf16
		run cpu-tests 120 ctest --test-dir build-gpu -L unit -j 8 --output-on-failure
		[ -d build-avx512 ] && run avx512-tests 120 ctest --test-dir build-avx512 -L unit -j 8 --output-on-failure ;;
	flash) run flash 420 "$R" run configs/flash_vs_sdpa.yaml --db "$OUT/flash.db"
		"$P" --db "$OUT/flash.db" --compare sdpa >"$OUT/flash-compare.md" 2>&1 ;;
	short) run short 240 "$R" run configs/perf/flash_vs_sdpa_short.yaml --db "$OUT/short.db" ;;
	cpuflash)  # the per-ISA CPU figures on this machine's CPU, with the AVX-512 build
		run cpuflash 150 build-avx512/runner/runner run configs/perf/flash_vs_naive_cpu_s2048.yaml --db "$OUT/cpu.db" ;;
	cpue2e)  # issue 17's per-ISA table on this machine's CPU (AVX-512 build, the machine's torch):
		# the FMA peak per ISA, then float32 rounds against torch eager and torch.compile;
		# docs/performance.md "CPU end-to-end transformer vs PyTorch". One device call each:
		# cpue2e, cpubf16 (the bfloat16 rounds), cpuprof (the GEMMs by role). CPUE2E_SECONDS (540) bounds
		# each of the two round stages (SIGINT: the finished cases stay), CPUE2E_REPEAT (3) its runs,
		# each of 15 paced rounds (--interleave 15: one iteration of each impl per round).
		# (avx512bf16: VDPBF16PS's ceiling; a CPU without AVX512-BF16 gets the named refusal)
		{ "$A" sysinfo --fma-peak; "$A" sysinfo --fma-peak --isa avx2 | tail -1
		  "$A" sysinfo --fma-peak --isa avx512bf16 2>&1 | tail -1; } >"$OUT/fma-peak.log" 2>&1
		run cpue2e-f32 "${CPUE2E_SECONDS:-540}" "$A" run configs/perf/e2e_vs_pytorch_cpu_fb.yaml --repeat "${CPUE2E_REPEAT:-3}" --interleave 15 --db "$OUT/cpue2e.db" --label e2e-cpu-fb
		sqlite3 -header -column "$OUT/cpue2e.db" <configs/perf/e2e_vs_pytorch_cpu_fb.sql >"$OUT/cpue2e-f32.txt" 2>&1
		"$A" sysinfo --fma-peak | tail -1 >>"$OUT/fma-peak.log" 2>&1 ;;
	cpubf16)
		run cpue2e-bf16 "${CPUE2E_SECONDS:-540}" "$A" run configs/perf/e2e_vs_pytorch_cpu_fb_bf16.yaml --repeat "${CPUE2E_REPEAT:-3}" --interleave 15 --db "$OUT/cpubf16.db" --label e2e-cpu-fb-bf16
		sqlite3 -header -column "$OUT/cpubf16.db" <configs/perf/e2e_vs_pytorch_cpu_fb.sql >"$OUT/cpue2e-bf16.txt" 2>&1 ;;
	cpuprof)
		DNNL_VERBOSE=1 "$A" run configs/perf/e2e_profile_cpu.yaml --db "$OUT/prof.db" >"$OUT/verbose.log" 2>&1
		python3 configs/perf/dnnl_verbose_roles.py "$OUT/verbose.log" 4 >"$OUT/roles.txt" 2>&1 ;;
	attn) run attn 200 "$R" run configs/attention_gpu.yaml --db "$OUT/attn.db" ;;
	e2e) run e2e 500 "$R" run configs/e2e_vs_pytorch_gpu.yaml --db "$OUT/e2e.db" ;;
	cs336) run cs336 500 "$R" run configs/cs336_e2e.yaml --db "$OUT/cs336.db" ;;
	torchsdpa)  # PyTorch's SDPA per backend (the kit's peer, the machine's torch) beside our flash and
		# cuDNN SDPA (configs/perf/torch_sdpa_gpu_short.yaml); docs/performance.md "PyTorch SDPA on the GPU"
		run torchsdpa "${TORCHSDPA_SECONDS:-240}" "$R" run "${TORCHSDPA_CONFIG:-configs/perf/torch_sdpa_gpu_short.yaml}" --db "$OUT/torchsdpa.db"
		"$P" --db "$OUT/torchsdpa.db" --compare sdpa >"$OUT/torchsdpa-compare.md" 2>&1
		"$P" --db "$OUT/torchsdpa.db" --derived >"$OUT/torchsdpa-table.md" 2>&1 ;;
	kitgpu)  # the kit's training path on the GPU (scripts/device/kit_gpu.yaml)
		run kitgpu 200 "$R" run scripts/device/kit_gpu.yaml --db "$OUT/kitgpu.db"
		sqlite3 -separator ' | ' "$OUT/kitgpu.db" "select c.name, c.status, c.reason, c.max_diff, c.tolerance, c.peak_bytes, c.flops_fwd, (select group_concat(phase || '=' || ns, ' ') from (select phase, ns from samples s where s.case_id = c.id and s.iter = c.warmup)) from cases c order by ord" >"$OUT/kitgpu.txt" 2>&1 ;;
	equiv)  # every CUDA workload once (issue 27); diff equiv.cases against another build's
		run equiv 300 "$R" run scripts/device/workloads_equiv.yaml --db "$OUT/equiv.db"
		sqlite3 -separator ' | ' "$OUT/equiv.db" "select ord, case_key, name, params, status, reason, quote(max_diff), quote(tolerance), peak_fwd_bytes, peak_bwd_bytes, peak_bytes, flops_fwd, flops_bwd, flops_opt, bytes_fwd, bytes_bwd, bytes_opt, param_bytes, grad_bytes, optim_bytes, activation_bytes, workspace_bytes, param_count, impl_info from cases order by ord" >"$OUT/equiv.cases" 2>&1 ;;
	peergpu)  # a peer's CUDA cases are watched by the GPU probe (NVML) like built-in ones
		cat >"$OUT/peergpu.yaml" <<EOF
defaults: {warmup: 1, iters: 3, device: cuda, seq_len: 16, head_dim: 8}
peers:
  slow: {command: "sleep 1; sh $ROOT/tests/peers/fake_v2.sh", suite: attention, params: {plant: {values: [none]}}}
  kept: {command: "sh $ROOT/tests/peers/fake_v2.sh", suite: attention, persistent: true, params: {plant: {values: [none, hang]}}}
benchmarks:
  - {suite: attention, impl: slow}
  - {suite: attention, impl: kept, plant: [hang, none], causal: [false, true]}
EOF
		sed -i 's/persistent: true,/persistent: true, timeout: 2,/' "$OUT/peergpu.yaml"
		run peergpu 60 "$R" run "$OUT/peergpu.yaml" --db "$OUT/peergpu.db"
		sqlite3 "$OUT/peergpu.db" "select impl, status, gpu_temp_c, gpu_sm_clock_mhz, gpu_throttle, cpu_wait from cases order by ord" >"$OUT/peergpu.txt" 2>&1 ;;
	*) echo "gpu_run.sh: unknown stage '$stage' (env tests cputests flash short cpuflash cpue2e cpubf16 cpuprof attn e2e cs336 peergpu torchsdpa kitgpu equiv)" >&2; exit 2 ;;
	esac
done
cat "$OUT/summary.txt" 2>/dev/null
