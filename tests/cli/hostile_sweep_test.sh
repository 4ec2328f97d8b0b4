#!/usr/bin/env bash
# tests/cli/hostile_sweep_test.sh: sweeps nobody should write (issue 15, items 3 and 6): files
# that are not files, too large, too deep, sizes whose arithmetic would wrap, junk. Each must be
# refused — exit 2 with the file's name — quickly, within bounded memory, without touching the
# database, and never crash.
#   hostile_sweep_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
source "$(dirname "$0")/lib.sh"

dir=$T/sweeps
mkdir -p "$dir"
db=$T/bench.db
# A database that must stay as it is: one real run first.
check "a first run" "$RUNNER" run "$SRC/tests/cli/tiny.yaml" --db "$db" >/dev/null 2>&1
sum=$(md5sum <"$db")

n=0
# 512 MiB beyond what the program's own libraries map (cuBLASLt alone is hundreds of MiB in a
# CUDA build: twice their file sizes covers their mappings).
libs_kib=$(ldd "$RUNNER" | awk '$3 ~ /^\// { print $3 }' | xargs -r stat -L -c %s |
	awk '{ s += $1 } END { print int(s / 1024) }')
vmem=$((524288 + 2 * ${libs_kib:-0}))
# A sanitizer's shadow memory cannot live under a virtual-memory limit: there, time alone bounds.
grep -q __asan_init "$RUNNER" && vmem=unlimited
# refuse NAME STATUS REGEX: run and list the sweep $dir/NAME; both must exit STATUS, name the file
# and match REGEX, within 10 s and 512 MiB (of virtual memory; not under ASan).
refuse() {
	local name=$1 want=$2 re=$3 path=$dir/$1
	n=$((n + 1))
	for cmd in list run; do
		local args=("$cmd" "$path")
		[ "$cmd" = run ] && args+=(--db "$db")
		(ulimit -v "$vmem"; timeout 10 "$RUNNER" "${args[@]}") >"$T/out" 2>"$T/err"
		local st=$?
		if [ "$st" != "$want" ]; then
			fail "$name ($cmd): exit $st, want $want: $(head -c 300 "$T/err")"
			continue
		fi
		ok
		contains "$T/err" "$(basename "$path")" "$name ($cmd): the message names the file"
		contains "$T/err" "$re" "$name ($cmd): the message"
		lacks "$T/err" "runtime error|AddressSanitizer" "$name ($cmd): no sanitizer report"
	done
}
sweep() { printf '%b' "$2" >"$dir/$1"; }
att='benchmarks:\n  - {suite: attention, impl: naive, head_dim: 8, seq_len: 8'

# -- not regular files, and sizes
mkdir "$dir/a_directory.yaml"; refuse a_directory.yaml 2 "it is a directory, not a regular file"
ln -s /dev/zero "$dir/dev_zero.yaml"; refuse dev_zero.yaml 2 "character device"
ln -s /dev/urandom "$dir/dev_urandom.yaml"; refuse dev_urandom.yaml 2 "character device"
mkfifo "$dir/fifo.yaml"; refuse fifo.yaml 2 "it is a pipe"
ln -s "$dir/nowhere" "$dir/dangling.yaml"; refuse dangling.yaml 2 "no such file"
head -c 50000000 /dev/zero | tr '\0' '#' >"$dir/fifty_mb.yaml"; refuse fifty_mb.yaml 2 "at most 1048576"
{ printf 'benchmarks:\n'; for _ in $(seq 1 40000); do printf '  - {suite: matmul, size: 8}\n'; done; } >"$dir/many_benchmarks.yaml"
refuse many_benchmarks.yaml 2 "at most 1048576"
# -- nesting
python3 -c "print('benchmarks: ' + '[' * 100000 + ']' * 100000)" >"$dir/flow_100k.yaml"; refuse flow_100k.yaml 2 "more than 32 deep"
python3 -c "print('benchmarks: ' + '{a: ' * 50000 + '1' + '}' * 50000)" >"$dir/flow_maps.yaml"; refuse flow_maps.yaml 2 "more than 32 deep"
python3 -c "print('benchmarks:\n  - ' + '- ' * 20000 + 'x')" >"$dir/block_seq.yaml"; refuse block_seq.yaml 2 "more than 32 deep"
python3 -c "
print('benchmarks:')
for i in range(40): print('  ' * (i + 1) + 'k%d:' % i)" >"$dir/block_maps.yaml"; refuse block_maps.yaml 2 "more than 32 deep"
python3 -c "print('benchmarks: ' + '[' * 100000)" >"$dir/flow_unclosed.yaml"; refuse flow_unclosed.yaml 2 "more than 32 deep"
# -- long lists and mappings, the repeat at the end: each entry compared with every earlier one
# took a minute for a 1 MiB file
python3 -c "
print('models: {' + ', '.join('m%d: 1' % i for i in range(95000)) + ', m0: 1}')
print('benchmarks: [{suite: matmul, size: 8}]')" >"$dir/many_keys.yaml"
refuse many_keys.yaml 2 "duplicate key 'm0' .first given at line 1, column 10"
python3 -c "
print('benchmarks: [{suite: matmul, m: 1, n: 1, seed: [' + ', '.join(str(i) for i in range(120000)) + ', 0]}]')" >"$dir/many_values.yaml"
refuse many_values.yaml 2 "key 'seed' lists the value 0 twice"
python3 -c "
print('peers: {p: {command: x, suite: matmul, params: {o: {values: [' + ', '.join('v%d' % i for i in range(100000)) + ', v0]}}}}')
print('benchmarks: [{suite: matmul, size: 8}]')" >"$dir/many_peer_values.yaml"
refuse many_peer_values.yaml 2 "parameter 'o' of peer 'p' lists the value v0 twice"
# anchors: libyaml's loader compares each with every one before it
python3 -c "
print('x: [' + ', '.join('&a%d 1' % i for i in range(80000)) + ']')
print('benchmarks: [{suite: matmul, size: 8}]')" >"$dir/many_anchors.yaml"
refuse many_anchors.yaml 2 "more than 1000 anchors"
# 40,000 cases against an exclude of 40,000 values: each case typed every value (minutes)
python3 -c "
ks = ', '.join(str(i + 1) for i in range(40000))
print('benchmarks: [{suite: matmul, m: 1, n: 1, k: [%s], exclude: {k: [%s]}}]' % (ks, ks))" >"$dir/long_exclude.yaml"
refuse long_exclude.yaml 2 "every case is excluded"
# -- sizes whose arithmetic would wrap (item 3)
sweep iters_wrap.yaml "$att, iters: 6148914691236517204}\n"; refuse iters_wrap.yaml 2 "key 'iters' value 6148914691236517204 is too large"
sweep iters_max.yaml "$att, iters: 9223372036854775807}\n"; refuse iters_max.yaml 2 "too large"
sweep warmup_max.yaml "$att, warmup: 9223372036854775807}\n"; refuse warmup_max.yaml 2 "key 'warmup'.*too large"
sweep iters_huge.yaml "$att, iters: 99999999999999999999999}\n"; refuse iters_huge.yaml 2 "too large"
sweep seq_wrap.yaml 'benchmarks:\n  - {suite: attention, impl: naive, head_dim: 8, seq_len: 3037000500}\n'
refuse seq_wrap.yaml 2 "key 'seq_len' value 3037000500 is too large"
sweep scores_wrap.yaml 'benchmarks:\n  - {suite: attention, impl: naive, head_dim: 1, seq_len: 2147483647, batch_size: 65536}\n'
refuse scores_wrap.yaml 2 "the case is too large"
sweep matmul_wrap.yaml 'benchmarks:\n  - {suite: matmul, m: 2147483647, n: 2147483647, k: 2147483647}\n'
refuse matmul_wrap.yaml 2 "the case is too large"
sweep e2e_wrap.yaml 'benchmarks:\n  - {suite: e2e, model: small, context_length: 2147483647, batch_size: 2147483647}\n'
refuse e2e_wrap.yaml 2 "the case is too large"
sweep model_wrap.yaml 'models:\n  m: {d_model: 9223372036854775807, d_ff: 1, num_layers: 1, num_heads: 1}\nbenchmarks:\n  - {suite: e2e, model: m, context_length: 8}\n'
refuse model_wrap.yaml 2 "d_model"
sweep vocab_wrap.yaml 'benchmarks:\n  - {suite: e2e, model: small, context_length: 8, vocab_size: 4611686018427387904}\n'
refuse vocab_wrap.yaml 2 "vocab_size"
sweep mem_wrap.yaml "$att, mem_limit: 9999999999TiB}\n"; refuse mem_wrap.yaml 2 "mem_limit"
sweep negative.yaml "$att, iters: -1}\n"; refuse negative.yaml 2 "iters"
# -- junk
printf 'benchmarks:\n  - {suite: attention\0, impl: naive}\n' >"$dir/nul.yaml"; refuse nul.yaml 2 "nul byte"
head -c 4096 /dev/urandom >"$dir/random.yaml"; refuse random.yaml 2 "."
printf '\xff\xfe\x00b\x00e' >"$dir/utf16.yaml"; refuse utf16.yaml 2 "."
sweep anchors.yaml 'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nbenchmarks: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n'
refuse anchors.yaml 2 "."
sweep two_docs.yaml "$att}\n---\n$att}\n"; refuse two_docs.yaml 2 "."
sweep empty.yaml ''; refuse empty.yaml 2 "."
# (an impl quoted in the message; a control character in the name is refused itself, below)
sweep escape_name.yaml 'name: escape\nbenchmarks:\n  - {suite: attention, impl: "\\e[2J", head_dim: 8, seq_len: 8}\n'
refuse escape_name.yaml 2 "\\\\x1b\\[2J"
lacks "$T/err" $'\033' "escape_name: no raw escape byte on the terminal"
# a name that is valid but for its control characters: runner list would print it raw
sweep escape_valid_name.yaml 'name: "\\e]0;pwned\\a\\e[2J"\nbenchmarks:\n  - {suite: matmul, size: 8}\n'
refuse escape_valid_name.yaml 2 "key 'name' contains the control character 0x1b"
lacks "$T/out" $'\033' "escape_valid_name: no raw escape byte on the terminal"

check "the database is unchanged by every refused sweep" [ "$(md5sum <"$db")" = "$sum" ]
note "hostile sweeps: $n (each through runner list and runner run)"
finish hostile_sweep
