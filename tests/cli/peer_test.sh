#!/usr/bin/env bash
# tests/cli/peer_test.sh: end-to-end tests of peers (a sweep's `peers:`; schemas/peer-protocol.md).
#   peer_test.sh RUNNER REPORT MAKE_FIXTURE [pytorch]
# Without a fourth argument: the fake peers of tests/peers/ — what an ok peer's case stores, that
# every failing peer is a stored error with its reason and the sweep goes on, timeouts,
# interrupts, a killed runner, and sweep errors. With `pytorch`: peers/pytorch_e2e.py against the
# built-in e2e workload on a tiny model; exit 77 (skipped) when no python3 here has torch.
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"

# The first of $BENCHDB_PYTHON, python3 (PATH) and /usr/bin/python3 that can (with: yes) or
# cannot (no) import torch.
python_with_torch() {
	for py in ${BENCHDB_PYTHON:-} python3 /usr/bin/python3; do
		command -v "$py" >/dev/null 2>&1 || continue
		if "$py" -c 'import torch' >/dev/null 2>&1; then has=yes; else has=no; fi
		[ "$has" = "$1" ] && { command -v "$py"; return 0; }
	done
	return 1
}

if [ "${4:-}" = pytorch ]; then
	py=$(python_with_torch yes) || { echo "no python3 with torch here: skipped"; exit 77; }
	note "python with torch: $py"
	cat >"$T/pytorch.yaml" <<EOF
name: cli-peer-pytorch
defaults: {warmup: 1, iters: 2}
models:
  tiny: {d_model: 64, d_ff: 128, num_layers: 2, num_heads: 4, vocab_size: 1000}
peers:
  pytorch: {command: "$py $SRC/peers/pytorch_e2e.py", suite: e2e}
benchmarks:
  - suite: e2e
    impl: [benchdb, pytorch]
    model: tiny
    context_length: 16
    batch_size: 2
    dtype: [float32, bfloat16]
    pass: [forward, train_step]
  - {suite: e2e, impl: pytorch, model: tiny, context_length: 16, batch_size: 2, dtype: float16}
  - {suite: e2e, impl: pytorch, model: tiny, context_length: 16, batch_size: 2, tf32: true}
EOF
	db=$T/pytorch.db
	expect_status 0 "runner run with the pytorch peer" "$RUNNER" run "$T/pytorch.yaml" --db "$db"
	contains "$T/out" "10 of 10 cases stored" "every case stored"
	check "pytorch: 4 ok cases, float16 and cpu tf32 unsupported" [ "$(sql "$db" "select group_concat(status) from (select status from cases where impl = 'pytorch' order by ord)")" = "ok,ok,ok,ok,unsupported,unsupported" ]
	check "pytorch: tf32 on the cpu says why" [ "$(sql "$db" "select count(*) from cases where impl = 'pytorch' and params like '%\"tf32\":true%' and reason like '%tf32 is a CUDA GEMM mode%'")" = 1 ]
	# benchdb's bfloat16 runs where oneDNN multiplies bfloat16 natively, else it is unsupported
	if "$RUNNER" sysinfo | grep -q '^cpu_bf16 \+native'; then bench_ok=4; else
		bench_ok=2
		note "no native bfloat16 matmul here: benchdb's bfloat16 cases must be unsupported"
		check "benchdb: bfloat16 unsupported, with the reason" [ "$(sql "$db" "select group_concat(status || ':' || (reason like '%has no bfloat16 matmul on this CPU%')) from cases where impl = 'benchdb' and dtype = 'bfloat16'")" = "unsupported:1,unsupported:1" ]
	fi
	check "benchdb: $bench_ok ok cases to compare with (else see test_model)" [ "$(sql "$db" "select count(*) from cases where impl = 'benchdb' and status = 'ok'")" = $bench_ok ]
	check "pytorch: samples of (1 + 2) iterations x the pass's phases" [ "$(sql "$db" "select group_concat(n) from (select count(*) n from samples s join cases c on c.id = s.case_id where c.impl = 'pytorch' group by c.id order by c.ord)")" = "3,9,3,9" ]
	# L(4d² + 3 d f + 2d) + 2Vd + d = 2(16384 + 24576 + 128) + 128000 + 64 = 210240 float32 parameters
	check "pytorch: param bytes from its memory line" [ "$(sql "$db" "select group_concat(distinct param_bytes) from cases where impl = 'pytorch' and status = 'ok'")" = $((210240 * 4)) ]
	check "pytorch: its info object (torch version, threads) stored as impl_info" [ "$(sql "$db" "select count(*) from cases where impl = 'pytorch' and status = 'ok' and json_extract(impl_info, '\$.torch') is not null and json_extract(impl_info, '\$.threads') > 0")" = 4 ]
	check "pytorch: same FLOPs as benchdb" [ "$(sql "$db" "select count(*) from cases a join cases b on a.dtype = b.dtype and a.pass = b.pass where a.impl = 'pytorch' and a.status = 'ok' and b.impl = 'benchdb' and b.status = 'ok' and a.flops_fwd = b.flops_fwd and a.flops_fwd > 0")" = $bench_ok ]
	contains <(sql "$db" "select reason from cases where dtype = 'float16'") "float16 autocast runs on cuda only" "float16 on the cpu is unsupported"
	# the pairs through CSV, never a table's widths: a row per case both impls ran ok
	expect_status 0 "report --compare benchdb" "$REPORT" --db "$db" --compare benchdb --format csv
	pairs() { awk -F, -v c="$1" '$1 == c && $2 == "pytorch"' "$T/out" | wc -l; }
	check "the peer's float32 train_step against benchdb's" [ "$(pairs "e2e pytorch tiny float32 train_step ctx16 B2")" = 1 ]
	check "the peer's bfloat16 train_step paired only where benchdb's ran" \
		[ "$(pairs "e2e pytorch tiny bfloat16 train_step ctx16 B2")" = $((bench_ok == 4)) ]
	check "one pair per case both ran ok ($bench_ok)" [ "$(awk -F, '$2 == "pytorch" && $3 ~ /^[0-9]+\/[0-9]+$/' "$T/out" | wc -l)" = $bench_ok ]
	finish peer_pytorch
	exit
fi

sweep=$SRC/tests/cli/peer.yaml

# ---- list ---------------------------------------------------------------------------------------
expect_status 0 "runner list" "$RUNNER" list "$sweep"
contains "$T/out" "fake float32 fwd\+bwd B1 H2 S16 D8 +run by peer fake$" "a peer case runs by its peer"
contains "$T/out" "12 to run, 0 unsupported here" "peer cases count as runnable"
contains "$T/out" "^peer fake_slow \(suite attention, timeout 1 s, line 9\): sh ../peers/fake_slow.sh$" "peers listed"

# ---- run ----------------------------------------------------------------------------------------
db=$T/bench.db
export FAKE_PEER_LOG=$T/env.log
expect_status 1 "a run with failing peers exits 1" "$RUNNER" run "$sweep" --db "$db" --mem-limit 1GiB
unset FAKE_PEER_LOG
contains "$T/out" "run 1 complete: 12 of 12 cases stored \(6 ok, 0 oom, 4 error, 2 unsupported, 0 skipped\)" "every case stored"
check "run is complete" [ "$(sql "$db" "select status from runs")" = complete ]
status_of() { sql "$db" "select status || '|' || coalesce(reason, '') from cases where impl = '$1' ${2:+and $2}"; }

# The ok peer: (warmup 2 + iters 3) x fwd, bwd, the values it printed, iteration-major.
check "fake: 2 ok cases, 2 unsupported" [ "$(sql "$db" "select group_concat(status, ',') from (select status from cases where impl = 'fake' order by ord)")" = "ok,unsupported,ok,unsupported" ]
check "fake: 10 samples per ok case" [ "$(sql "$db" "select group_concat(n) from (select count(*) n from samples s join cases c on c.id = s.case_id where c.impl = 'fake' and c.status = 'ok' group by c.id)")" = "10,10" ]
check "fake: 5 iterations x fwd, bwd" [ "$(sql "$db" "select count(distinct iter) || '/' || (select group_concat(phase) from (select distinct phase from samples s join cases c on c.id = s.case_id where c.impl = 'fake' order by phase)) from samples s join cases c on c.id = s.case_id where c.impl = 'fake' and c.seq_len = 32")" = "5/bwd,fwd" ]
check "fake: stored ns are what the peer printed" [ "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.impl = 'fake' and s.ns = c.seq_len * 1000 + s.iter")" = 20 ]
check "fake: warm-up samples stored" [ "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.impl = 'fake' and s.iter < 2")" = 8 ]
check "fake: the peer's unsupported reason" [ "$(status_of fake "causal = 1 and seq_len = 16")" = "unsupported|the fake peer has no causal mask" ]
check "fake: memory lines stored (peak = max of phases)" [ "$(sql "$db" "select peak_fwd_bytes || '/' || peak_bwd_bytes || '/' || peak_bytes from cases where impl = 'fake' and seq_len = 16 and causal = 0")" = "1000/3000/3000" ]
check "fake: same FLOPs as the built-in workload" [ "$(sql "$db" "select count(*) from cases a join cases b on a.seq_len = b.seq_len and a.causal = b.causal where a.impl = 'fake' and b.impl = 'naive' and a.flops_fwd = b.flops_fwd and a.flops_bwd = b.flops_bwd and a.flops_fwd > 0")" = 4 ]
check "fake: its info object stored as printed, unsupported cases too" [ "$(sql "$db" "select count(*) from cases where impl = 'fake' and impl_info = '{\"peer\": \"fake_ok.sh\", \"seq_len\": ' || seq_len || '}'")" = 4 ]
check "fake: not validated" [ "$(sql "$db" "select count(*) from cases where impl = 'fake' and max_diff is null")" = 4 ]
check "fake: same case key as naive but for impl" [ "$(sql "$db" "select count(*) from cases a join cases b on replace(a.case_key, 'impl=fake ', 'impl=naive ') = b.case_key where a.impl = 'fake' and b.impl = 'naive'")" = 4 ]
check "fake: params JSON names the peer as impl" [ "$(sql "$db" "select count(*) from cases where impl = 'fake' and json_extract(params, '\$.impl') = 'fake'")" = 4 ]

# The environment the peer saw, and where it ran.
contains "$T/env.log" "^cwd=$SRC/tests/cli$" "the peer runs in the sweep file's directory"
for var in BENCHDB_PEER_PROTOCOL=1 BENCHDB_SUITE=attention BENCHDB_IMPL=fake BENCHDB_DEVICE=cpu \
	BENCHDB_DTYPE=float32 BENCHDB_PASS=forward_backward "BENCHDB_PHASES=fwd bwd" BENCHDB_BATCH_SIZE=1 \
	BENCHDB_HEADS=2 BENCHDB_SEQ_LEN=32 BENCHDB_HEAD_DIM=8 BENCHDB_CAUSAL=false BENCHDB_WARMUP=2 \
	BENCHDB_ITERS=3 BENCHDB_SEED=0 BENCHDB_MEM_LIMIT=1073741824 BENCHDB_SYNC=true BENCHDB_TF32=false; do
	contains "$T/env.log" "^$var$" "environment has $var"
done
contains "$T/env.log" '^BENCHDB_PARAMS=\{"batch_size":1,"causal":false,"device":"cpu",.*"impl":"fake",.*"seq_len":32,"suite":"attention",' "environment has the params JSON"
check "BENCHDB_PARAMS is the stored params JSON" [ "$(grep -c "^BENCHDB_PARAMS=$(sql "$db" "select params from cases where impl = 'fake' and seq_len = 32 and causal = 0")$" "$T/env.log")" = 1 ]

# Failing peers: stored errors with the reason, nothing timed.
contains <(status_of fake_malformed) "^error\|malformed peer output: line 3: 'sample 0 bwd 12ms': NS must be a positive integer" "malformed: the line number and the line"
contains <(status_of fake_fail) "^error\|peer exited with status 3; stderr: fake_fail: loading the model \| fake_fail: something went wrong at step 1$" "failing: exit status and stderr tail"
contains <(status_of fake_missing) "^error\|peer exited with status 127 \(command not found\); stderr: .*no_such_benchdb_peer.*not found" "missing command: 127 and the shell's message"
contains <(status_of fake_slow) "^error\|peer 'fake_slow' timed out after 1 s; stderr: fake_slow: started$" "slow: timed out with stderr"
check "failed peers store no samples" [ "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.status <> 'ok'")" = 0 ]
check "the timeout took about 1 s (at least 1, far below the peer's 300)" [ "$(sql "$db" "select elapsed_ns between 900000000 and 60000000000 from cases where impl = 'fake_slow'")" = 1 ]

# report: the peer compares like any impl.
expect_status 0 "report --compare naive" "$REPORT" --db "$db" --compare naive
contains "$T/out" "^\| fake float32 fwd\+bwd B1 H2 S16 D8 \[unvalidated\] +\| fake +\|" "per-case row of the peer, marked unvalidated"
contains "$T/out" "^\| fake +\| +2 \|" "summary row of the peer: 2 pairs"
expect_status 0 "report --compare fake" "$REPORT" --db "$db" --compare fake
contains "$T/out" "^\| naive float32 fwd\+bwd B1 H2 S32 D8 +\| naive +\|" "naive against the peer"
expect_status 0 "report table" "$REPORT" --db "$db"
contains "$T/out" "^\| fake_fail +\|.*\| error +\|" "error cases in the table"
contains "$T/out" "^- case 10 \(fake_fail .*\): error — peer exited with status 3" "error reasons under the table"

# ---- a peer killed by a signal --------------------------------------------------------------------
# Its guardian ends by the same signal to tell the runner, and must not dump a core of its own (a
# copy of the runner's memory, as 'core' in the runner's directory, or a crash report of the
# runner where cores go to a handler) for a peer's crash.
mkdir -p "$T/crashrun"
cat >"$T/crash.yaml" <<'EOF'
peers:
  crash: {command: "echo benchdb-peer 1; kill -SEGV $$", suite: attention}
benchmarks:
  - {suite: attention, impl: crash, seq_len: 16, head_dim: 8, batch_size: 1}
EOF
# A command killed by a signal below the shell that runs it: the shell's exit status 128 + S is
# told as such (the OOM killer's SIGKILL: 137).
cat >"$T/killed.yaml" <<'EOF'
peers:
  killed: {command: "echo benchdb-peer 1; sh -c 'kill -KILL $$'; exit $?", suite: attention}
benchmarks:
  - {suite: attention, impl: killed, seq_len: 16, head_dim: 8, batch_size: 1}
EOF
expect_status 1 "a command killed below the peer's shell" "$RUNNER" run "$T/killed.yaml" --db "$T/killed.db"
contains <(sql "$T/killed.db" "select status || '|' || reason from cases") "^error\|peer exited with status 137 \(128 \+ 9: how a shell reports a command killed by signal 9, Killed\)" "status 137 told as a shell's report of signal 9"
if (ulimit -c unlimited) 2>/dev/null; then
	(cd "$T/crashrun" && ulimit -c unlimited && exec "$RUNNER" run "$T/crash.yaml" --db "$T/crash.db") >"$T/out" 2>"$T/err"
	check "a crashed peer: exit 1 (got $?)" [ $? = 1 ]
	check "a crashed peer: its signal in the reason" [ "$(sql "$T/crash.db" "select status || '|' || reason from cases")" = "error|peer killed by signal 11 (Segmentation fault)" ]
	check "a crashed peer: no core file in the runner's directory ($(ls -A "$T/crashrun"))" [ -z "$(ls -A "$T/crashrun")" ]
else
	note "core files cannot be allowed here (ulimit -c): a crashed peer's core is not tested"
fi

# ---- the peer dies with its case: timeout and interrupt stop the whole process group --------------
# gone PID: no such process, or a zombie (whose parent is gone; a container's init may not reap it)
gone() { ! kill -0 "$1" 2>/dev/null || ps -o stat= -p "$1" | grep -q Z; }
# A signalled process finishes dying when the scheduler gets to it (late on a loaded machine): wait
# for it, up to 10 s, before the check says whether it went.
wait_gone() { for _ in $(seq 1 200); do gone "$1" && return 0; sleep 0.05; done; return 1; }
cat >"$T/slow.yaml" <<EOF
peers:
  slow: {command: "sh $SRC/tests/peers/fake_slow.sh", suite: attention, timeout: 1}
benchmarks:
  - {suite: attention, impl: [slow, naive], seq_len: [16, 17], head_dim: 8, batch_size: 1}
EOF
export FAKE_PEER_PIDS=$T/pids
expect_status 1 "timeouts" "$RUNNER" run "$T/slow.yaml" --db "$T/slow.db"
read -r sh_pid sleep_pid <"$T/pids"
check "after a timeout the peer's shell is gone" wait_gone "$sh_pid"
check "after a timeout the peer's child is gone too" wait_gone "$sleep_pid"
check "the sweep went on after the timeouts" [ "$(sql "$T/slow.db" "select group_concat(impl || ':' || status, ',') from (select impl, status from cases order by ord)")" = "slow:error,slow:error,naive:ok,naive:ok" ]

# What a stopped peer says on stderr when it gets its SIGTERM (where it hung) is part of the
# timeout's reason: it comes after the timeout, while the runner stops the peer. The peer has its
# grace also when the shell that runs its command stays between (wrapped: the shell dies of the
# SIGTERM at once; the peer below it must not be killed with it).
cat >"$T/term.yaml" <<EOF
peers:
  term: {command: "exec sh $SRC/tests/peers/fake_term.sh", suite: attention, timeout: 1}
  wrapped: {command: "sh $SRC/tests/peers/fake_term.sh; exit \$?", suite: attention, timeout: 1}
benchmarks:
  - {suite: attention, impl: [term, wrapped], seq_len: 16, head_dim: 8, batch_size: 1}
EOF
expect_status 1 "a peer that says where it hung" "$RUNNER" run "$T/term.yaml" --db "$T/term.db"
for impl in term wrapped; do
	check "timeout ($impl): the peer's last words on stderr in the reason" [ "$(sql "$T/term.db" "select status || ':' || reason from cases where impl = '$impl'")" = "error:peer '$impl' timed out after 1 s; stderr: fake_term: started | fake_term: stopped while waiting on step 7" ]
done

sed -i 's/timeout: 1}/timeout: 600}/' "$T/slow.yaml"
rm -f "$T/pids"
"$RUNNER" run "$T/slow.yaml" --db "$T/int.db" >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 200); do [ -s "$T/pids" ] && break; sleep 0.05; done
read -r sh_pid sleep_pid <"$T/pids"
kill -INT $pid
wait $pid
status=$?
check "an interrupted peer case exits 130 (got $status)" [ $status = 130 ]
check "after an interrupt the peer's shell is gone" wait_gone "$sh_pid"
check "after an interrupt the peer's child is gone" wait_gone "$sleep_pid"
check "the interrupted peer case is not stored" [ "$(sql "$T/int.db" "select count(*) from cases")" = 0 ]
check "the run is marked interrupted" [ "$(sql "$T/int.db" "select status from runs")" = interrupted ]

# A runner killed outright (no handler runs) still takes its peer's whole process group along.
rm -f "$T/pids"
"$RUNNER" run "$T/slow.yaml" --db "$T/kill.db" >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 200); do [ -s "$T/pids" ] && break; sleep 0.05; done
read -r sh_pid sleep_pid <"$T/pids"
kill -KILL $pid
{ wait $pid; } 2>/dev/null   # no "Killed" line from bash
check "after the runner is killed the peer's shell is gone" wait_gone "$sh_pid"
check "after the runner is killed the peer's child is gone" wait_gone "$sleep_pid"
unset FAKE_PEER_PIDS

# ---- the pytorch peer without torch: an error that says what to install --------------------------
if py=$(python_with_torch no); then
	cat >"$T/notorch.yaml" <<EOF
peers:
  pytorch: {command: "$py $SRC/peers/pytorch_e2e.py", suite: e2e}
benchmarks:
  - {suite: e2e, impl: pytorch, model: small, context_length: 8, batch_size: 1}
EOF
	expect_status 1 "the pytorch peer without torch" "$RUNNER" run "$T/notorch.yaml" --db "$T/notorch.db"
	contains <(sql "$T/notorch.db" "select status || '|' || reason from cases") "^error\|python module torch not found for .*install python3-torch" "missing torch is an error with the fix"
else
	note "every python3 here has torch: the missing-torch case is not tested"
fi

# ---- sweep errors -------------------------------------------------------------------------------
# name|yaml|stderr regex
while IFS='|' read -r name yaml want; do
	printf '%b' "$yaml" >"$T/$name.yaml"
	expect_status 2 "bad sweep $name" "$RUNNER" run "$T/$name.yaml" --db "$T/bad.db"
	contains "$T/err" "$want" "message for $name"
done <<'EOF'
no_command|peers:\n  p: {suite: attention}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8}]\n|no_command.yaml:2:6: peer 'p' is missing required key 'command'
bad_suite|peers:\n  p: {command: x, suite: atention}\nbenchmarks: [{suite: matmul, size: 8}]\n|bad_suite.yaml:2:26: unknown suite 'atention' for peer 'p' \(valid: attention, e2e, matmul\); did you mean 'attention'\?
builtin|peers:\n  flash: {command: x, suite: attention}\nbenchmarks: [{suite: matmul, size: 8}]\n|builtin.yaml:2:3: peer name 'flash' is a built-in impl
other_suite|peers:\n  pytorch: {command: x, suite: e2e}\nbenchmarks: [{suite: attention, impl: pytorch, seq_len: 8, head_dim: 8}]\n|other_suite.yaml:3:39: unknown impl 'pytorch' for suite attention \(valid: naive, flash,[^)]* sdpa[^)]*\); 'pytorch' is a peer of suite e2e
EOF
check "bad sweeps create no database" [ ! -e "$T/bad.db" ]

finish peer
