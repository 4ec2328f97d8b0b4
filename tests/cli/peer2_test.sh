#!/usr/bin/env bash
# tests/cli/peer2_test.sh: end-to-end tests of protocol 2 and of the peers' processes
# (schemas/peer-protocol.md) with the shell peers of tests/peers/ — validation (a planted wrong
# kernel is an error, not a time), work lines, peer parameters through keys, JSON, environment,
# --where/--pivot/--group-by and compare, persistent peers (one process, restarted after a crash,
# a timeout or garbage), no process outliving its case (four ways to detach, and a killed
# runner), cpu_wait over the peer's tree, and no terminal escape from a peer on the runner's
# stderr.
#   peer2_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"
PEERS=$SRC/tests/peers

# gone PID: no such process, or a zombie (whose parent is gone; a container's init may not reap it)
gone() { ! kill -0 "$1" 2>/dev/null || ps -o stat= -p "$1" | grep -q Z; }
wait_gone() { for _ in $(seq 1 200); do gone "$1" && return 0; sleep 0.05; done; return 1; }

# ---- validation, work and peer parameters: one process per case, and persistent -----------------
plant="{values: [none, wrong, nan, nocheck, crash, hang, garbage]}"
work="{values: [none, benchdb, own]}"
cat >"$T/v2.yaml" <<EOF
name: cli-peer2
defaults: {warmup: 1, iters: 3, seq_len: 16, head_dim: 8, heads: 2, batch_size: 1}
peers:
  once: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 2, params: {plant: $plant, work: $work}}
  kept: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 2, persistent: true,
         params: {plant: $plant, work: $work}}
  strict: {command: "sh $PEERS/fake_v2.sh", suite: attention, check: required,
           params: {plant: $plant}}
benchmarks:
  - {suite: attention, impl: [once, kept], plant: [none, wrong, nan, nocheck, crash, hang, garbage, none]}
  - suite: attention
    impl: [naive, kept]
    axes: {work: [none, benchdb, own]}
    exclude: [{work: benchdb, impl: naive}]
  - {suite: attention, impl: strict, plant: [none, nocheck]}
EOF
# (plant lists none twice: refused; the sweep is fixed below)
expect_status 2 "a value listed twice is refused" "$RUNNER" run "$T/v2.yaml" --db "$T/bad.db"
contains "$T/err" "v2.yaml:10:101: key 'plant' lists the value none twice \(first at line 10, column 52\)" "the repeated value, where"
sed -i 's/garbage, none\]}/garbage]}/' "$T/v2.yaml"
# (naive has no parameter work: that exclude drops nothing, refused since 9a57384; removed below)
expect_status 2 "an exclude of a peer parameter on an impl without it matches nothing" "$RUNNER" list "$T/v2.yaml"
contains "$T/err" "v2.yaml:14:15: this exclude matches no case of benchmark 2 \(suite attention\): no case takes all of its values together" "the exclude that drops nothing, where"
sed -i '/exclude: \[{work: benchdb, impl: naive}\]/d' "$T/v2.yaml"
expect_status 0 "runner list" "$RUNNER" list "$T/v2.yaml"
contains "$T/out" "^peer kept \(suite attention, timeout 2 s, persistent, params plant=none work=none, line 5\): sh " "list: a persistent peer and its parameters"
contains "$T/out" "^peer strict \(suite attention, timeout 3600 s, check required, params plant=none, line 7\)" "list: check required"
contains "$T/out" "20 to run" "list: 20 cases"
db=$T/v2.db
export FAKE_PEER_LOG=$T/v2.log
expect_status 1 "planted failures make the run exit 1" "$RUNNER" run "$T/v2.yaml" --db "$db"
unset FAKE_PEER_LOG
contains "$T/out" "run 1 complete: 20 of 20 cases stored \(9 ok, 0 oom, 11 error, 0 unsupported, 0 skipped\)" "every case stored; naive once over the work axis"
st() { sql "$db" "select group_concat(status || ':' || coalesce(max_diff, '-'), ',') from (select status, max_diff from cases where $1 order by ord)"; }
for impl in once kept; do
	check "$impl: the plants' statuses and max_diff" [ "$(st "impl = '$impl' and json_extract(params, '$.work') = 'none' and ord < 14")" = "ok:1.0e-06,error:0.25,error:Inf,ok:-,error:-,error:-,error:-" ]
	contains <(sql "$db" "select reason from cases where impl = '$impl' and params like '%\"plant\":\"wrong\"%'") "^peer check failed: output differs from the reference by 0.25 \(tolerance 2e-05\) at O\[b=0, h=1, s=3, d=2\]$" "$impl: a wrong kernel is an error with the check's figures"
	contains <(sql "$db" "select reason from cases where impl = '$impl' and params like '%\"plant\":\"crash\"%'") "^peer exited with status 3; stderr: fake_v2: crashing$" "$impl: a crash"
	contains <(sql "$db" "select reason from cases where impl = '$impl' and params like '%\"plant\":\"hang\"%'") "^peer '$impl' timed out after 2 s; stderr: fake_v2: hanging$" "$impl: a timeout"
	contains <(sql "$db" "select reason from cases where impl = '$impl' and params like '%\"plant\":\"garbage\"%'") "^malformed peer output: line 3: 'sample zero fwd 5'" "$impl: garbage"
done
check "a wrong or crashed case stores no sample" [ "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.status <> 'ok'")" = 0 ]
check "validated ok cases: max_diff and tolerance of the worst check" [ "$(sql "$db" "select count(*) from cases where status = 'ok' and max_diff = 1e-6 and tolerance = 1e-3")" = 6 ]
check "the tolerance handed to the peer is benchdb's (float32 attention: 2e-05)" [ "$(sql "$db" "select count(*) from cases where params like '%\"plant\":\"wrong\"%' and tolerance = 2e-5")" = 2 ]

# work: none (no rates), benchdb (the built-in workload's), own
fl() { sql "$db" "select coalesce(flops_fwd, '-') || '/' || coalesce(bytes_bwd, '-') from cases where impl = '$1' and ord >= 14 and json_extract(params, '$.work') = '$2'"; }
naive_fb="$(sql "$db" "select flops_fwd || '/' || bytes_bwd from cases where impl = 'naive'")"
check "work none: no FLOPs, no bytes" [ "$(fl kept none)" = "-/-" ]
check "work benchdb: the built-in workload's" [ "$(fl kept benchdb)" = "$naive_fb" ]
check "work own: the peer's" [ "$(fl kept own)" = "1000000.0/2048.0" ]
check "no work line: no FLOPs for a version-2 peer (not benchdb's)" [ "$(sql "$db" "select count(*) from cases where impl in ('once', 'kept') and status = 'ok' and json_extract(params, '$.work') = 'none' and flops_fwd is not null")" = 0 ]

# check: required
contains <(sql "$db" "select status || '|' || reason from cases where impl = 'strict' and params like '%nocheck%'") "^error\|peer 'strict' printed no check line \(check: required\)$" "check: required refuses an unchecked case"
check "check: required passes a checked case" [ "$(sql "$db" "select status from cases where impl = 'strict' and params like '%\"plant\":\"none\"%'")" = ok ]

# the persistent peer: one process until a crash, a timeout or garbage; a new one after each
pids() { grep "impl=kept" "$T/v2.log" | sed 's/ .*//' | uniq | wc -l; }
check "persistent: 4 processes for 10 cases (a new one after the crash, the hang and the garbage)" [ "$(pids)" = 4 ]
check "persistent: its first 5 cases in one process" [ "$(grep "impl=kept" "$T/v2.log" | head -5 | sed 's/ .*//' | sort -u | wc -l)" = 1 ]
check "one process per case otherwise: 7 processes" [ "$(grep "impl=once" "$T/v2.log" | sed 's/ .*//' | sort -u | wc -l)" = 7 ]
check "persistent: every case's info object stored" [ "$(sql "$db" "select count(*) from cases where impl = 'kept' and json_extract(impl_info, '$.mode') = 'persistent'")" -ge 7 ]

# peer parameters: keys, JSON, names; naive's case once
check "peer parameters in the key, after the built-in tokens" [ "$(sql "$db" "select case_key from cases where impl = 'kept' and ord = 17")" = "suite=attention impl=kept device=cpu dtype=float32 pass=forward_backward batch_size=1 heads=2 seq_len=16 head_dim=8 causal=false plant=none work=own" ]
check "peer parameters in the params JSON, keys sorted" [ "$(sql "$db" "select params from cases where impl = 'kept' and ord = 17")" = '{"batch_size":1,"causal":false,"device":"cpu","dtype":"float32","head_dim":8,"heads":2,"impl":"kept","iters":3,"mem_limit":0,"pass":"forward_backward","plant":"none","seed":0,"seq_len":16,"suite":"attention","sync":true,"tf32":false,"warmup":1,"work":"own"}' ]
check "the name shows a peer parameter away from its default" [ "$(sql "$db" "select name from cases where ord = 17")" = "kept float32 fwd+bwd B1 H2 S16 D8 work=own" ]
check "naive: no peer parameter, one case for the work axis" [ "$(sql "$db" "select count(*) || ':' || max(case_key like '%work=%') from cases where impl = 'naive'")" = "1:0" ]

# reports
expect_status 0 "report table" "$REPORT" --db "$db"
contains "$T/out" "\| plant=nocheck work=none +\|.*\| ok, unvalidated +\|" "an unchecked case is 'ok, unvalidated' with its peer parameters"
contains "$T/out" "^- ok, unvalidated: 2 cases not checked against a reference" "the note counts them"
expect_status 0 "report --where work=own" "$REPORT" --db "$db" --where work=own
check "--where on a peer parameter: one case" [ "$(grep -c '^| kept' "$T/out")" = 1 ]
expect_status 0 "report --group-by work" "$REPORT" --db "$db" --group-by work
contains "$T/out" "work=benchdb" "--group-by on a peer parameter"
expect_status 0 "report --pivot work" "$REPORT" --db "$db" --where impl=kept --where plant=none --pivot work
contains "$T/out" "work=none.*work=benchdb.*work=own" "--pivot on a peer parameter: a column per value"
# the peer's other parameters tell the rows apart (they read the same without them)
expect_status 0 "report --pivot impl over plant" "$REPORT" --db "$db" --where impl=once,kept --where work=none --pivot impl --format csv
contains "$T/out" "^dtype,.*,causal,peer_params,impl=once_ms,impl=kept_ms$" "pivot: causal and peer params columns"
check "pivot: no two rows alike" [ "$(sed 1d "$T/out" | cut -d, -f1-9 | sort | uniq -d | wc -l)" = 0 ]
contains "$T/out" ",plant=wrong work=none," "pivot: a row says its plant"
expect_status 0 "report --compare naive" "$REPORT" --db "$db" --compare naive
contains "$T/out" "^\| kept float32 fwd\+bwd B1 H2 S16 D8 work=own +\| kept plant=none work=own +\|" "a peer case paired with naive's, which lacks its parameters"
contains "$T/out" "^\| kept plant=none work=benchdb +\| +1 \|" "a summary row per impl and peer parameters"
contains "$T/out" "\[unvalidated\]" "the unvalidated case is marked in the comparison"
expect_status 0 "report compare --baseline work=none" "$REPORT" --db "$db" compare --baseline work=none
contains "$T/out" "^\| kept float32 fwd\+bwd B1 H2 S16 D8 work=benchdb +\|" "--baseline KEY=VALUE pairs cases that differ only in KEY"
check "--baseline work=none: two pairs" [ "$(grep -c '^| kept float32' "$T/out")" = 2 ]
expect_status 1 "--baseline KEY=VALUE with nothing to pair" "$REPORT" --db "$db" compare --baseline work=nothing
contains "$T/err" "no ok case of run 1 with work=nothing pairs" "says why"

# the environment a case gets: its peer parameters, the tolerance, the mode
cat >"$T/env.sh" <<'EOF'
#!/bin/sh
env | grep '^BENCHDB_' | sort >>"$ENV_LOG"
echo "benchdb-peer 2"
echo "status unsupported logged"
EOF
cat >"$T/env.yaml" <<EOF
peers:
  envp: {command: "sh $T/env.sh", suite: e2e, params: {optimizer: {values: [adamw, sgd]}, lora_rank: {type: int, default: 0}}}
models:
  tiny: {d_model: 32, d_ff: 64, num_layers: 1, num_heads: 2, vocab_size: 100}
benchmarks:
  - {suite: e2e, impl: envp, model: tiny, context_length: 8, batch_size: 1, dtype: bfloat16, lora_rank: 08, optimizer: sgd}
EOF
export ENV_LOG=$T/env.log BENCHDB_OPTIMIZER=inherited
expect_status 0 "a peer's environment" "$RUNNER" run "$T/env.yaml" --db "$T/env.db"
unset ENV_LOG BENCHDB_OPTIMIZER
for var in BENCHDB_PEER_PROTOCOL=1 BENCHDB_PEER_PROTOCOL_MAX=2 BENCHDB_PEER_MODE=case BENCHDB_OPTIMIZER=sgd \
	BENCHDB_LORA_RANK=8 BENCHDB_CHECK_ATOL=0.04 BENCHDB_CHECK_RTOL=0; do
	contains "$T/env.log" "^$var$" "environment has $var"
done
check "an inherited variable of a peer parameter is replaced, not passed twice" [ "$(grep -c '^BENCHDB_OPTIMIZER=' "$T/env.log")" = 1 ]
# e2e in float16 (a peer's torch.autocast; benchdb's model has none): its own bound, not float32's
# 1e-4, which autocast's gradients are 50x over
sed 's/dtype: bfloat16/dtype: float16/' "$T/env.yaml" >"$T/env16.yaml"
export ENV_LOG=$T/env16.log
expect_status 0 "a float16 e2e peer's environment" "$RUNNER" run "$T/env16.yaml" --db "$T/env16.db"
unset ENV_LOG
contains "$T/env16.log" "^BENCHDB_CHECK_ATOL=0.02$" "e2e float16: BENCHDB_CHECK_ATOL=0.02"

# bad peer parameters: file:line:col and the valid choices
while IFS='|' read -r name yaml want; do
	printf '%b' "$yaml" >"$T/$name.yaml"
	expect_status 2 "bad sweep $name" "$RUNNER" run "$T/$name.yaml" --db "$T/bad.db"
	contains "$T/err" "$want" "message for $name"
done <<'EOF'
builtin_name|peers:\n  p: {command: x, suite: attention, params: {dtype: {values: [a]}}}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8}]\n|builtin_name.yaml:2:46: parameter name 'dtype' of peer 'p' is taken \(a built-in parameter\)
reserved|peers:\n  p: {command: x, suite: attention, params: {peer_mode: {type: text, default: a}}}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8}]\n|reserved.yaml:2:46: parameter name 'peer_mode' of peer 'p' is taken
bad_value|peers:\n  p: {command: x, suite: attention, params: {backend: {values: [flash, math]}}}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8, backend: [flash, mat]}]\n|bad_value.yaml:3:84: value 'mat' of key 'backend' for peer p: not one of its values \(valid: flash, math\)
no_peer|peers:\n  p: {command: x, suite: attention, params: {backend: {values: [flash]}}}\nbenchmarks: [{suite: attention, impl: naive, seq_len: 8, head_dim: 8, backend: flash}]\n|no_peer.yaml:3:71: key 'backend' is a parameter of peer p, which benchmark 1 \(suite attention\) does not run \(add it to 'impl'\)
bad_type|peers:\n  p: {command: x, suite: attention, params: {rank: {type: float, default: 1}}}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8}]\n|bad_type.yaml:2:59: unknown type 'float' of parameter 'rank' of peer 'p' \(valid: bool, int, text\)
bad_int|peers:\n  p: {command: x, suite: attention, params: {rank: {type: int, default: 1}}}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8, rank: -3}]\n|bad_int.yaml:3:73: value '-3' of key 'rank' for peer p: expects an integer >= 0
no_default|peers:\n  p: {command: x, suite: attention, params: {rank: {type: int}}}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8}]\n|no_default.yaml:2:52: parameter 'rank' of peer 'p' needs a 'default'
persistent|peers:\n  p: {command: x, suite: attention, persistent: yes}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8}]\n|persistent.yaml:2:49: key 'persistent' of peer 'p' expects true, false or keep, got 'yes'
check_key|peers:\n  p: {command: x, suite: attention, check: always}\nbenchmarks: [{suite: attention, impl: p, seq_len: 8, head_dim: 8}]\n|check_key.yaml:2:44: key 'check' of peer 'p' expects required or optional, got 'always'
EOF
check "bad sweeps create no database" [ ! -e "$T/bad.db" ]

# ---- nothing a peer starts outlives its case ---------------------------------------------------
export FAKE_DAEMON_PIDS=$T/daemons
cat >"$T/daemon.yaml" <<EOF
defaults: {warmup: 0, iters: 1}
peers:
$(for v in setsid subshell ignore python; do echo "  d_$v: {command: \"sh $PEERS/fake_daemon.sh $v\", suite: attention}"; done)
benchmarks:
  - {suite: attention, impl: [d_setsid, d_subshell, d_ignore, d_python], seq_len: 8, head_dim: 8}
EOF
: >"$FAKE_DAEMON_PIDS"
expect_status 0 "four peers that leave a process behind" "$RUNNER" run "$T/daemon.yaml" --db "$T/daemon.db"
n=0
while read -r pid; do
	n=$((n + 1))
	check "a detached process ($n of 4, pid $pid) is gone with its case" wait_gone "$pid"
done <"$FAKE_DAEMON_PIDS"
if command -v python3 >/dev/null; then want=4; else want=3; note "no python3: its variant is unsupported"; fi
check "all $want detached processes were started" [ "$n" = $want ]

# a runner killed outright (no handler runs): the guardians still empty their trees
sed -i 's/warmup: 0, iters: 1/warmup: 0, iters: 1, seq_len: [8, 9]/; s/seq_len: 8, //' "$T/daemon.yaml"
cat >"$T/slowd.sh" <<EOF
#!/bin/sh
setsid sh -c 'echo \$\$ >>"\$FAKE_DAEMON_PIDS"; exec sleep 782' </dev/null >/dev/null 2>&1 &
echo \$\$ >>"\$FAKE_DAEMON_PIDS"
sleep 300
EOF
cat >"$T/killed.yaml" <<EOF
peers:
  slowd: {command: "sh $T/slowd.sh", suite: attention}
benchmarks:
  - {suite: attention, impl: slowd, seq_len: 8, head_dim: 8}
EOF
: >"$FAKE_DAEMON_PIDS"
"$RUNNER" run "$T/killed.yaml" --db "$T/killed.db" >"$T/out" 2>"$T/err" &
runner_pid=$!
for _ in $(seq 1 200); do [ "$(wc -l <"$FAKE_DAEMON_PIDS")" -ge 2 ] && break; sleep 0.05; done
kill -KILL $runner_pid
{ wait $runner_pid; } 2>/dev/null
n=0
while read -r pid; do
	n=$((n + 1))
	check "after the runner is killed, the peer's process $n (pid $pid) is gone" wait_gone "$pid"
done <"$FAKE_DAEMON_PIDS"
check "the peer and its detached process were both seen" [ "$n" = 2 ]
unset FAKE_DAEMON_PIDS

# ---- cpu_wait over the peer's whole tree -------------------------------------------------------
# The peer's child spins on CPU 0 for 2 s beside two busy loops pinned there too: it gets about
# a third of the CPU, so its threads wait for one about two thirds of the time. The spin is one
# process that forks nothing: a loop that forked `date` spent its time in children too short-lived
# for the runner's samples of the tree, and read 0.22-0.41 (a flaky failure of CI).
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
	cat >"$T/spin.sh" <<'EOF'
#!/bin/sh
echo "benchdb-peer 2"
taskset -c 0 timeout 2 sh -c 'while :; do :; done'
for i in 0 1; do echo "sample $i fwd 1000"; done
echo "check output 0 1"
echo "status ok"
EOF
	cat >"$T/spin.yaml" <<EOF
peers:
  spin: {command: "sh $T/spin.sh", suite: attention}
benchmarks:
  - {suite: attention, impl: spin, seq_len: 8, head_dim: 8, pass: forward, warmup: 1, iters: 1}
EOF
	taskset -c 0 sh -c 'while :; do :; done' & b1=$!
	taskset -c 0 sh -c 'while :; do :; done' & b2=$!
	expect_status 0 "a peer beside two busy loops on its CPU" "$RUNNER" run "$T/spin.yaml" --db "$T/spin.db"
	kill $b1 $b2
	wait $b1 $b2 2>/dev/null
	w=$(sql "$T/spin.db" "select cpu_wait from cases")
	note "cpu_wait of a peer sharing its CPU with two busy loops: $w"
	check "cpu_wait is measured over the peer's tree (got '$w', want > 0.5: about 2/3)" awk -v w="$w" 'BEGIN { exit !(w != "" && w > 0.5 && w <= 1) }'
else
	note "no taskset: the contended cpu_wait is not tested"
fi

# ---- white space the protocol ignores, before a line's keyword ---------------------------------
# A kept process's case ends at its status line: one led by a form feed and a vertical tab ends it
# as the parser reads it, not at the timeout.
cat >"$T/indent.yaml" <<EOF
name: cli-peer2-indent
defaults: {warmup: 1, iters: 3, seq_len: 16, head_dim: 8, heads: 2, batch_size: 1}
peers:
  kept: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 3, persistent: true,
         params: {plant: {values: [indent]}}}
  once: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 3, params: {plant: {values: [indent]}}}
benchmarks:
  - {suite: attention, impl: [kept, once]}
EOF
expect_status 0 "a peer's lines led by a form feed and a vertical tab" "$RUNNER" run "$T/indent.yaml" --db "$T/indent.db"
check "both peers ok, validated, with every sample" [ "$(sql "$T/indent.db" "select group_concat(c.impl || ':' || c.status || ':' || c.max_diff || ':' || (select count(*) from samples s where s.case_id = c.id), ',') from cases c")" = "kept:ok:1.0e-06:8,once:ok:1.0e-06:8" ]

# ---- persistent: keep: one process per peer for the whole invocation ----------------------------
# Two peers' cases alternate with a built-in one's (kb's two around naive's alone). `true` ends a
# peer's process when another case comes; `keep` leaves it idle until the end of the invocation, through --repeat's runs, and
# restarts it only after a crash.
keep_sweep() {   # keep_sweep PERSISTENT PLANT_OF_KA_S32
	cat >"$T/keep.yaml" <<EOF
defaults: {warmup: 1, iters: 2, head_dim: 8, heads: 1, batch_size: 1}
peers:
  ka: {command: "sh $PEERS/fake_v2.sh", suite: attention, persistent: $1, params: {plant: {values: [none, crash]}}}
  kb: {command: "sh $PEERS/fake_v2.sh", suite: attention, persistent: $1}
benchmarks:
  - {suite: attention, impl: ka, seq_len: 16}
  - {suite: attention, impl: kb, seq_len: 16}
  - {suite: attention, impl: naive, seq_len: 16}
  - {suite: attention, impl: kb, seq_len: 32}
  - {suite: attention, impl: ka, seq_len: 32, plant: $2}
  - {suite: attention, impl: ka, seq_len: 64}
EOF
}
npids() { grep "impl=$1" "$T/keep.log" | sed 's/ .*//' | sort -u | wc -l; }
keep_sweep true none
rm -f "$T/keep.log"
FAKE_PEER_LOG=$T/keep.log expect_status 0 "persistent: true, two peers alternating" "$RUNNER" run "$T/keep.yaml" --db "$T/keep1.db" --interleave 1
check "persistent: true: a new process each time another case, a peer's or a built-in one, came between (ka 2, kb 2)" [ "$(npids ka):$(npids kb)" = "2:2" ]
keep_sweep keep none
expect_status 0 "runner list: a kept peer" "$RUNNER" list "$T/keep.yaml"
contains "$T/out" "^peer ka \(suite attention, timeout 3600 s, persistent, kept, params plant=none" "list says kept"
rm -f "$T/keep.log"
FAKE_PEER_LOG=$T/keep.log expect_status 0 "persistent: keep, --repeat 2" "$RUNNER" run "$T/keep.yaml" --db "$T/keep2.db" --repeat 2
contains "$T/out" "run 2 complete: 6 of 6 cases stored \(6 ok" "both runs complete"
check "keep: one process per peer through both runs (ka's 6 cases, kb's 4)" [ "$(npids ka):$(npids kb):$(grep -c impl=ka "$T/keep.log"):$(grep -c impl=kb "$T/keep.log")" = "1:1:6:4" ]
check "keep: the two peers' processes are not the same" [ "$(sed 's/ .*//' "$T/keep.log" | sort -u | wc -l)" = 2 ]
for pid in $(sed 's/^pid=//; s/ .*//' "$T/keep.log" | sort -u); do
	check "keep: the kept process $pid is gone after the runner" wait_gone "$pid"
done
check "keep: every case's samples stored" [ "$(sql "$T/keep2.db" "select count(*) from cases c where status = 'ok' and (select count(*) from samples s where s.case_id = c.id) = 3 * 2")" = 12 ]
keep_sweep keep crash
rm -f "$T/keep.log"
FAKE_PEER_LOG=$T/keep.log expect_status 1 "persistent: keep, a crash in ka's second case" "$RUNNER" run "$T/keep.yaml" --db "$T/keep3.db"
check "keep: the crashed case is an error, the others ok" [ "$(sql "$T/keep3.db" "select group_concat(impl || seq_len || ':' || status, ',') from (select * from cases order by ord)")" = "ka16:ok,kb16:ok,naive16:ok,kb32:ok,ka32:error,ka64:ok" ]
check "keep: a new process for ka after its crash, kb's untouched (ka 2, kb 1)" [ "$(npids ka):$(npids kb)" = "2:1" ]

# an interrupt while a kept peer idles beside a built-in case: the peer's case stays stored, the
# idle process ends with the runner
cat >"$T/keepint.yaml" <<EOF
defaults: {warmup: 1, iters: 2, head_dim: 64, heads: 4, batch_size: 1}
peers:
  ka: {command: "sh $PEERS/fake_v2.sh", suite: attention, persistent: keep}
benchmarks:
  - {suite: attention, impl: ka, seq_len: 16}
  - {suite: attention, impl: naive, seq_len: 2048, iters: 100000}
  - {suite: attention, impl: ka, seq_len: 32}
EOF
rm -f "$T/keep.log"
FAKE_PEER_LOG=$T/keep.log "$RUNNER" run "$T/keepint.yaml" --db "$T/keepint.db" >"$T/out" 2>"$T/err" &
runner_pid=$!
for _ in $(seq 1 200); do grep -q '^\[1/3\]' "$T/err" && break; sleep 0.05; done
kept_pid=$(sed -n '1s/^pid=//; 1s/ .*//p' "$T/keep.log")
check "keep: the idle peer's process runs beside the built-in case" kill -0 "$kept_pid"
kill -INT "$runner_pid"
wait "$runner_pid"
check "keep: an interrupt stops the run (exit 130)" [ $? = 130 ]
check "keep: the idle peer's process (pid $kept_pid) is gone after the interrupt" wait_gone "$kept_pid"
check "keep: the peer's finished case is stored" [ "$(sql "$T/keepint.db" "select group_concat(impl || seq_len || ':' || status) from cases")" = "ka16:ok" ]

# ---- paced peers: a persistent peer's cases in the rounds of an interleaved group ---------------
# pa and pb (tests/peers/fake_paced.sh) plant times of 1 ms and 2 ms (a true ratio of 0.5) under a
# machine-wide drift of +2% per iteration run by either; naive is the built-in case of the same
# shape. In 9 rounds of one iteration each the drift reaches both alike; one case after the other
# (--interleave 1) it does not.
cat >"$T/paced.yaml" <<EOF
defaults: {warmup: 0, iters: 9, head_dim: 8, heads: 1, batch_size: 1, seq_len: 16}
peers:
  pa: {command: "FAKE_BASE_NS=1000000 sh $PEERS/fake_paced.sh", suite: attention, persistent: keep}
  pb: {command: "FAKE_BASE_NS=2000000 sh $PEERS/fake_paced.sh", suite: attention, persistent: true}
benchmarks:
  - {suite: attention, impl: [pa, naive, pb]}
EOF
median() { sql "$1" "select s.ns from samples s join cases c on c.id = s.case_id where c.impl = '$2' and s.phase = 'fwd' order by s.ns limit 1 offset 4"; }
paced_ratio() {   # paced_ratio DB: pa's median over pb's, against the truth 0.5 (1.0: exact)
	awk -v a="$(median "$1" pa)" -v b="$(median "$1" pb)" 'BEGIN { printf "%.4f", a / b / 0.5 }'
}
gos() { grep go "$T/paced.log" | cut -d' ' -f1 | tr '\n' ' '; }
rm -f "$T/paced.log" "$T/paced.ctr"
FAKE_PEER_LOG=$T/paced.log FAKE_COUNTER=$T/paced.ctr FAKE_DRIFT_PCT=2 expect_status 0 "paced: two peers and a built-in case in 9 rounds" "$RUNNER" run "$T/paced.yaml" --db "$T/paced9.db" --interleave 9
contains "$T/out" "3 of 3 cases stored \(3 ok" "paced: every case ok"
check "paced: one step per peer and round, in A B, B A order ($(gos))" \
	[ "$(gos)" = "pa pb pb pa pa pb pb pa pa pb pb pa pa pb pb pa pa pb " ]
check "paced: the go lines ask for one iteration each" [ "$(grep -c ' go 1$' "$T/paced.log")" = 18 ]
check "paced: every iteration of the three cases stored" [ "$(sql "$T/paced9.db" "select count(*) from samples")" = 54 ]
r9=$(paced_ratio "$T/paced9.db")
check "paced: in rounds the planted drift leaves the ratio within 3% of the truth ($r9)" awk -v r="$r9" 'BEGIN { exit !(r > 0.97 && r < 1.03) }'
rm -f "$T/paced.log" "$T/paced.ctr"
FAKE_PEER_LOG=$T/paced.log FAKE_COUNTER=$T/paced.ctr FAKE_DRIFT_PCT=2 expect_status 0 "paced: the same, one case after the other" "$RUNNER" run "$T/paced.yaml" --db "$T/paced1.db" --interleave 1
r1=$(paced_ratio "$T/paced1.db")
check "paced: one after the other the drift moves the ratio by more than 10% ($r1)" awk -v r="$r1" 'BEGIN { exit !(r < 0.90) }'
check "paced: one after the other no case is paced" [ "$(grep -c go "$T/paced.log")" = 0 ]
# a peer that breaks the steps: its case is an error with the reason, the others stand (5 rounds:
# 2 iterations a step); the next case of the peer gets a new process
paced_broken() {   # paced_broken PLANT DB REASON
	sed "s/\"FAKE_BASE_NS=1000000 /\"FAKE_PLANT=$1 FAKE_BASE_NS=1000000 /" "$T/paced.yaml" >"$T/broken.yaml"
	expect_status 1 "paced: a peer that plants $1" "$RUNNER" run "$T/broken.yaml" --db "$2"
	check "paced, $1: pa's case is an error, the others ok" [ "$(sql "$2" "select group_concat(impl || ':' || status, ',') from (select * from cases order by ord)")" = "pa:error,naive:ok,pb:ok" ]
	sql "$2" "select reason from cases where impl = 'pa'" >"$T/reason"
	contains "$T/reason" "$3" "paced, $1: the reason"
}
paced_broken overrun "$T/paced2.db" "a 'ready' line after 3 iterations, where the runner had asked for 2 \(go lines\)"
paced_broken runahead "$T/paced3.db" "'status ok' after 9 iterations of a paced case, where the runner had asked for 2 \(go lines\)"
paced_broken quit "$T/paced4.db" "peer exited with status 0 before the case's status line"
paced_broken runahead_eof "$T/paced5.db" "'status ok' after 9 iterations of a paced case, where the runner had asked for 2 \(go lines\)"
paced_broken stepahead "$T/paced6.db" "output after its 'ready' line before the runner's go line"
# comment and blank lines after a ready line are allowed (the protocol ignores them anywhere)
sed "s/\"FAKE_BASE_NS=1000000 /\"FAKE_PLANT=comment FAKE_BASE_NS=1000000 /" "$T/paced.yaml" >"$T/comment.yaml"
expect_status 0 "paced: a peer that prints a comment while it waits" "$RUNNER" run "$T/comment.yaml" --db "$T/paced7.db"
check "paced, comment: every case ok, every iteration stored" [ "$(sql "$T/paced7.db" "select count(*) from cases where status = 'ok'") $(sql "$T/paced7.db" "select count(*) from samples")" = "3 54" ]
# sample lines whose fields are separated by tabs: the parser takes them, so must the steps' count
sed "s/\"FAKE_BASE_NS=1000000 /\"FAKE_PLANT=tabs FAKE_BASE_NS=1000000 /" "$T/paced.yaml" >"$T/tabs.yaml"
expect_status 0 "paced: a peer that separates its sample fields by tabs" "$RUNNER" run "$T/tabs.yaml" --db "$T/paced8.db"
check "paced, tabs: every case ok, every iteration stored" [ "$(sql "$T/paced8.db" "select count(*) from cases where status = 'ok'") $(sql "$T/paced8.db" "select count(*) from samples")" = "3 54" ]
# an interrupt in the middle of a paced group: while the peer waits for its first step (naive's
# long step comes first), and inside its own step (0.2 s an iteration, 2 a step): exit 130, no
# case of the group stored, the kept peer's process gone
paced_interrupt() {   # paced_interrupt WHAT PLANT ITERS GOS: interrupt once GOS go lines came
	cat >"$T/pacedint.yaml" <<EOF
defaults: {warmup: 1, head_dim: 64, heads: 4, batch_size: 1, seq_len: 2048}
peers:
  pa: {command: "FAKE_PLANT=$2 sh $PEERS/fake_paced.sh", suite: attention, persistent: keep}
benchmarks:
  - {suite: attention, impl: [naive, pa], iters: $3}
EOF
	rm -f "$T/paced.log" "$T/pacedint.db"
	FAKE_PEER_LOG=$T/paced.log "$RUNNER" run "$T/pacedint.yaml" --db "$T/pacedint.db" --interleave 50 >"$T/out" 2>"$T/err" &
	runner_pid=$!
	for _ in $(seq 1 400); do
		grep -q "^pa case" "$T/paced.log" 2>/dev/null && [ "$(grep -c go "$T/paced.log")" -ge "$4" ] && break
		sleep 0.05
	done
	[ "$4" = 0 ] && sleep 0.5   # its ready line is read, naive's step runs
	check "paced, $1: the peer has had $4 steps before the interrupt" [ "$(grep -c go "$T/paced.log")" = "$4" ]
	paced_pid=$(sed -n "s/^pa case //p" "$T/paced.log" | head -1)
	kill -INT "$runner_pid"
	wait "$runner_pid"
	check "paced, $1: an interrupt stops the run (exit 130)" [ $? = 130 ]
	check "paced, $1: the paced peer's process is gone after the interrupt" wait_gone "${paced_pid:-0}"
	check "paced, $1: no unfinished case of the group is stored" [ "$(sql "$T/pacedint.db" "select count(*) from cases")" = 0 ]
}
paced_interrupt "waiting" none 1000000 0
paced_interrupt "in its step" slow 100 2

# interleave: false: the peer's cases are measured whole, one after the other, never paced
sed 's/persistent: keep}/persistent: keep, interleave: false}/' "$T/paced.yaml" >"$T/whole.yaml"
expect_status 0 "runner list: a peer not interleaved" "$RUNNER" list "$T/whole.yaml"
contains "$T/out" "^peer pa \(suite attention, timeout 3600 s, persistent, kept, not interleaved, line" "list says not interleaved"
rm -f "$T/paced.log"
FAKE_PEER_LOG=$T/paced.log expect_status 0 "interleave: false" "$RUNNER" run "$T/whole.yaml" --db "$T/whole.db" --interleave 9
check "interleave: false: pa is never paced, pb still is (9 steps)" [ "$(grep -c '^pa go' "$T/paced.log"):$(grep -c '^pb go' "$T/paced.log")" = "0:9" ]

# a persistent peer that knows nothing of pacing (fake_v2.sh runs a case through) in a group: it
# runs its whole case when handed it, and is stored as usual
cat >"$T/unpaced.yaml" <<EOF
defaults: {warmup: 1, iters: 4, head_dim: 8, heads: 1, batch_size: 1, seq_len: 16}
peers:
  kv: {command: "sh $PEERS/fake_v2.sh", suite: attention, persistent: true}
benchmarks:
  - {suite: attention, impl: [naive, kv]}
EOF
expect_status 0 "an unpaced persistent peer in a group" "$RUNNER" run "$T/unpaced.yaml" --db "$T/unpaced.db"
check "unpaced: both cases ok with every sample" [ "$(sql "$T/unpaced.db" "select count(*) from samples where phase in ('fwd', 'bwd')")" = 20 ]

# ---- terminal escapes from a peer stay off the runner's terminal -------------------------------
cat >"$T/esc.yaml" <<EOF
peers:
  esc: {command: "sh $PEERS/fake_escape.sh", suite: attention}
benchmarks:
  - {suite: attention, impl: esc, seq_len: 8, head_dim: 8}
EOF
expect_status 1 "a peer that prints escape sequences" "$RUNNER" run "$T/esc.yaml" --db "$T/esc.db"
check "no ESC, BEL or 8-bit CSI on the runner's stderr" [ "$(LC_ALL=C grep -c $'\x1b\|\x07\|\xc2\x9b' "$T/err")" = 0 ]
contains "$T/err" "error: the peer says \?\[31mred\?\[0m and \?\]0;title\?" "the reason, made printable"
check "nor in the stored reason" [ "$(sql "$T/esc.db" "select count(*) from cases where instr(reason, char(27)) or instr(reason, char(7)) or instr(reason, char(155))")" = 0 ]

# ---- a persistent peer's process that exits on its own between two cases -----------------------
# It serves one case and exits, status 0, half a second later: the runner may already have sent
# the next case's line to the process on its way out. "A process that exits on its own between two
# cases is started anew" (schemas/peer-protocol.md): every case ok, each in a process of its own,
# read to its end and paced alike.
cat >"$T/quits.yaml" <<EOF
defaults: {warmup: 1, iters: 3, head_dim: 8, heads: 1, batch_size: 1}
peers:
  pq: {command: "FAKE_CASES=1 sh $PEERS/fake_paced.sh", suite: attention, timeout: 20, persistent: keep}
benchmarks:
  - {suite: attention, impl: [pq, naive], seq_len: [16, 32, 64]}
EOF
for il in 1 2; do
	rm -f "$T/quits.log"
	FAKE_PEER_LOG=$T/quits.log expect_status 0 "a peer that quits after each case (--interleave $il)" "$RUNNER" run "$T/quits.yaml" --db "$T/quits$il.db" --interleave $il
	check "quits after each case (--interleave $il): every case ok" [ "$(sql "$T/quits$il.db" "select group_concat(impl || ':' || status || coalesce(reason, ''), ',') from (select * from cases where impl = 'pq' order by ord)")" = "pq:ok,pq:ok,pq:ok" ]
	check "quits after each case (--interleave $il): a process per case" [ "$(grep ' case ' "$T/quits.log" | cut -d' ' -f3 | sort -u | wc -l)" = 3 ]
done
check "quits after each case: paced with --interleave 2" [ "$(grep -c ' go ' "$T/quits.log")" -gt 0 ]

# ---- output after a case's status line -----------------------------------------------------------
# Nothing may follow the status line. What comes with it is that case's malformed output, for a
# one-process peer and a persistent one alike (trailer: in the same write); what comes after the
# case was stored (late: 0.02 s later, while another peer's case takes a second) ends the
# process, and the peer's next case, not to blame, runs in a new one (read with the status line
# or after it, the late line is never the next case's). Paced: a `ready` line after the status
# line.
cat >"$T/trail.yaml" <<EOF
defaults: {warmup: 1, iters: 3, head_dim: 8, heads: 1, batch_size: 1}
peers:
  once: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 20, params: {plant: {values: [none, trailer, late]}}}
  kept: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 20, persistent: keep, params: {plant: {values: [none, trailer, late]}}}
  pause: {command: "sleep 1; exec sh $PEERS/fake_v2.sh", suite: attention, timeout: 20}
benchmarks:
  - {suite: attention, impl: [once, kept], seq_len: 16, plant: trailer}
  - {suite: attention, impl: kept, seq_len: 32}
  - {suite: attention, impl: kept, seq_len: 64, plant: late}
  - {suite: attention, impl: pause, seq_len: 16}
  - {suite: attention, impl: kept, seq_len: 128}
EOF
rm -f "$T/trail.log"
FAKE_PEER_LOG=$T/trail.log expect_status 1 "output after the status line" "$RUNNER" run "$T/trail.yaml" --db "$T/trail.db" --interleave 1
tr_case() { sql "$T/trail.db" "select status || '|' || coalesce(reason, '') from cases where impl = '$1' and seq_len = $2"; }
for impl in once kept; do
	contains <(tr_case "$impl" 16) "^error\|malformed peer output: line [0-9]+: 'sample 0 fwd 5': nothing may follow the status line" "$impl: a line that came with the status line is the case's malformed output"
done
check "kept: its next case, in a new process, ok" [ "$(tr_case kept 32)" = "ok|" ]
check "kept: the case after a late line is not blamed for it" [ "$(tr_case kept 128)" = "ok|" ]
check "kept: a process after the trailer, another after the late line (3)" [ "$(grep impl=kept "$T/trail.log" | sed 's/ .*//' | sort -u | wc -l)" = 3 ]
cat >"$T/rdy.yaml" <<EOF
defaults: {warmup: 0, iters: 4, head_dim: 8, heads: 1, batch_size: 1}
peers:
  kp: {command: "FAKE_PLANT=readyafter sh $PEERS/fake_paced.sh", suite: attention, timeout: 20, persistent: keep}
benchmarks:
  - {suite: attention, impl: [naive, kp], seq_len: [16, 32]}
EOF
expect_status 1 "paced: a ready line after the status line" "$RUNNER" run "$T/rdy.yaml" --db "$T/rdy.db" --interleave 2
check "paced: each case's ready after its status line is that case's error, never the next one's" [ "$(sql "$T/rdy.db" "select group_concat(status || ':' || (reason like 'malformed peer output: line %: ''ready'': nothing may follow the status line%'), ',') from (select * from cases where impl = 'kp' order by ord)")" = "error:1,error:1" ]

# ---- a persistent peer that closes its stdout and stays -----------------------------------------
# A crash (schemas/peer-protocol.md), reported as such, not a wait to its timeout (timed out
# after 10 s); its next case runs in a new process. (exec: the shell that runs the command must
# not hold the pipe too; with it waiting on its child, stdout ends only when the shell does.)
cat >"$T/closeout.yaml" <<EOF
defaults: {warmup: 1, iters: 3, head_dim: 8, heads: 1, batch_size: 1}
peers:
  kept: {command: "exec sh $PEERS/fake_v2.sh", suite: attention, timeout: 10, persistent: true, params: {plant: {values: [none, closeout]}}}
benchmarks:
  - {suite: attention, impl: kept, seq_len: 16, plant: closeout}
  - {suite: attention, impl: kept, seq_len: 32}
EOF
expect_status 1 "a persistent peer closes its stdout" "$RUNNER" run "$T/closeout.yaml" --db "$T/closeout.db"
check "closed stdout: the case's error says so, the next case ok" [ "$(sql "$T/closeout.db" "select group_concat(status || '|' || coalesce(reason, ''), ',') from (select * from cases order by ord)")" = "error|peer 'kept' closed its stdout before the case's status line; stderr: fake_v2: stdout closed,ok|" ]

# ---- a persistent peer that closes its stdin and stays -------------------------------------------
# It served its case (closing its stdin first, so that the next case line cannot be sent) and is
# on its way out, slowly: the next case goes to a new process (schemas/peer-protocol.md), and is
# not stored as 'timed out after 20 s' two seconds after its line could not be sent.
cat >"$T/closein.sh" <<'EOF'
echo "benchdb-peer 2"
read -r kind json
exec 0<&-
printf 'sample 0 fwd 5\nstatus ok\n'
sleep 30
EOF
cat >"$T/closein.yaml" <<EOF
defaults: {warmup: 0, iters: 1, head_dim: 8, heads: 1, batch_size: 1, pass: forward}
peers:
  kept: {command: "exec sh $T/closein.sh", suite: attention, timeout: 20, persistent: true}
benchmarks:
  - {suite: attention, impl: kept, seq_len: [16, 32]}
EOF
expect_status 0 "a persistent peer closes its stdin after its case" "$RUNNER" run "$T/closein.yaml" --db "$T/closein.db"
check "closed stdin: the next case runs in a new process" [ "$(sql "$T/closein.db" "select group_concat(status || '|' || coalesce(reason, ''), ',') from (select * from cases order by ord)")" = "ok|,ok|" ]

# ---- a persistent peer's line that no output may hold: named at once ----------------------------
# A status line the runner cannot see as one ("status: ok", a nul byte before "status") leaves the
# peer waiting for its next case line and the runner for the status line: the case ends there,
# with the line named, not at its timeout (timed out after 10 s); the next case, in a new
# process, is the peer's own error and nothing else. A process that exits after such a line (a
# message on stdout, then exit 1) has its exit status told as for a one-process peer.
cat >"$T/refused.sh" <<'EOF'
echo "benchdb-peer 2"
while read -r kind json; do
	case "$json" in
	*'"BENCHDB_SEQ_LEN":"16"'*) echo "status: ok" ;;
	*'"BENCHDB_SEQ_LEN":"32"'*) printf '\000status ok\n' ;;
	*'"BENCHDB_SEQ_LEN":"64"'*) echo "Error: no GPU"; exit 1 ;;
	*) echo "status error fine" ;;
	esac
done
EOF
cat >"$T/refused.yaml" <<EOF
defaults: {warmup: 0, iters: 1, head_dim: 8, heads: 1, batch_size: 1}
peers:
  kept: {command: "exec sh $T/refused.sh", suite: attention, timeout: 10, persistent: true}
benchmarks:
  - {suite: attention, impl: kept, seq_len: [16, 32, 64, 128]}
EOF
expect_status 1 "a persistent peer prints a line of no kind" "$RUNNER" run "$T/refused.yaml" --db "$T/refused.db"
check "refused lines: named as malformed, not timed out; the next case runs" [ "$(sql "$T/refused.db" "select group_concat(status || '|' || reason, ',') from (select * from cases order by ord)")" = "error|malformed peer output: line 2: 'status: ok': unknown line kind 'status:' (valid: info, sample, memory, check, work, status; '#' starts a comment),error|malformed peer output: line 2: '': the line contains a nul byte,error|malformed peer output: line 2: 'Error: no GPU': unknown line kind 'Error:' (valid: info, sample, memory, check, work, status; '#' starts a comment); peer exited with status 1,error|fine" ]

# ---- a case's output that ends with its process: as for a one-process peer ---------------------
# A malformed line before the end is named, whichever way the process ends (badcrash: exit 3;
# badnoeol: a status line without a line end, exit 0); a version-1 header is refused from a
# persistent peer with or without a line end after its status line (h1: FAKE_HEADER=1).
cat >"$T/ends.yaml" <<EOF
defaults: {warmup: 1, iters: 3, seq_len: 16, head_dim: 8, heads: 1, batch_size: 1}
peers:
  once: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 10, params: {plant: {values: [none, badcrash, badnoeol]}}}
  kept: {command: "sh $PEERS/fake_v2.sh", suite: attention, timeout: 10, persistent: true, params: {plant: {values: [none, badcrash, badnoeol]}}}
  h1: {command: "FAKE_HEADER=1 sh $PEERS/fake_v2.sh", suite: attention, timeout: 10, persistent: true, params: {plant: {values: [nocheck, noeol]}}}
benchmarks:
  - {suite: attention, impl: [once, kept], plant: [badcrash, badnoeol]}
  - {suite: attention, impl: h1, plant: [nocheck, noeol]}
EOF
expect_status 1 "outputs that end with their process" "$RUNNER" run "$T/ends.yaml" --db "$T/ends.db"
ends_case() { sql "$T/ends.db" "select status || '|' || reason from cases where impl = '$1' and json_extract(params, '$.plant') = '$2'"; }
for impl in once kept; do
	contains <(ends_case "$impl" badcrash) "^error\|malformed peer output: line [0-9]+: 'sample zero fwd 5': .*; peer exited with status 3; stderr: fake_v2: crashing$" "$impl: a malformed line, then exit 3"
	contains <(ends_case "$impl" badnoeol) "^error\|malformed peer output: line [0-9]+: 'sample zero fwd 5': [^;]*$" "$impl: a malformed line, then a status line without a line end and exit 0"
done
for plant in nocheck noeol; do
	check "h1 ($plant): a version-1 header refused from a persistent peer" [ "$(ends_case h1 $plant)" = "error|malformed peer output: a persistent peer speaks protocol 2, and 'h1' printed 'benchdb-peer 1'" ]
done

# ---- a persistent peer without a header: told the header it must print ------------------------
cat >"$T/nohdr.yaml" <<EOF
defaults: {warmup: 1, iters: 3, seq_len: 16, head_dim: 8, heads: 1, batch_size: 1}
peers:
  nh: {command: "read -r kind json; echo 'status ok'; read -r kind json", suite: attention, timeout: 10, persistent: true}
benchmarks:
  - {suite: attention, impl: nh}
EOF
expect_status 1 "a persistent peer without a header" "$RUNNER" run "$T/nohdr.yaml" --db "$T/nohdr.db"
check "no header: the reason asks for 'benchdb-peer 2'" [ "$(sql "$T/nohdr.db" "select status || '|' || reason from cases")" = "error|malformed peer output: line 1: 'status ok': expected 'benchdb-peer 2' as the first line" ]

finish peer2
