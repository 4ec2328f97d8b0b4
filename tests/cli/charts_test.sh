#!/usr/bin/env bash
# tests/cli/charts_test.sh: every chart kind of `report plot`, read back from its SVG by
# tests/svg_check.c (issue 30): a legend entry per series wherever there is more than one (the
# warm-up chart had none), no two series alike past 8 of them (colour with dash or fill pattern),
# x labels that never run into each other or off the chart (the speedup chart's multi-parameter
# shapes, 90 categories), and peers in the memory chart (a peer without memory lines named in
# the notes instead). Real runs: attention over 18 shapes with naive, flash and two shell peers,
# then naive against nine peers, then one case three times for the history and under three node
# names for report nodes' chart.
#   charts_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
REPORT=$2
MAKE_FIXTURE=$3
source "$(dirname "$0")/lib.sh"
SVG_CHECK=$(dirname "$MAKE_FIXTURE")/svg_check
if ! command -v gnuplot >/dev/null; then
	echo "skipped: gnuplot is not installed (apt-get install gnuplot-nox; .ci/deps does)"
	exit 77
fi
PEER="sh $SRC/tests/peers/fake_ok.sh"
db=$T/charts.db
cat >"$T/charts.yaml" <<YAML
name: cli-charts
defaults: {warmup: 2, iters: 5, device: cpu}
peers:
  fake: {command: "$PEER", suite: attention}
  fake_nomem: {command: "$PEER | grep -v '^memory'", suite: attention}
benchmarks:
  - suite: attention
    impl: [naive, flash, fake, fake_nomem]
    seq_len: [16, 32, 64]
    head_dim: [8, 16, 32]
    batch_size: [1, 2]
    heads: 2
YAML
{
	echo "name: cli-charts-bars"
	echo "defaults: {warmup: 1, iters: 5, device: cpu}"
	echo "peers:"
	for i in 1 2 3 4 5 6 7 8 9; do echo "  peer$i: {command: \"$PEER\", suite: attention}"; done
	echo "benchmarks:"
	echo "  - {suite: attention, impl: [naive, peer1, peer2, peer3, peer4, peer5, peer6, peer7, peer8, peer9], seq_len: [16, 32], head_dim: 8, batch_size: 1, heads: 2}"
} >"$T/bars.yaml"
cat >"$T/one.yaml" <<'YAML'
name: cli-charts-one
defaults: {warmup: 2, iters: 5, device: cpu}
benchmarks:
  - {suite: attention, impl: flash, seq_len: 16, head_dim: 8, batch_size: 1, heads: 2}
YAML
expect_status 0 "the shapes' run" "$RUNNER" run "$T/charts.yaml" --db "$db"
expect_status 0 "nine peers against naive" "$RUNNER" run "$T/bars.yaml" --db "$db" --label bars
for i in 1 2 3; do
	expect_status 0 "one case, run $i" "$RUNNER" run "$T/one.yaml" --db "$db"
done

# svg_check CHART LEGEND DESCRIPTION: the chart's legend has LEGEND entries and its layout holds
svg() {
	# a chart with contended or unstable points rings them, with one more legend entry for that
	local want=$2
	grep -q "<title>\(contended (waited for a CPU)\|unstable (median uncertain)\|contended or unstable (notes)\)</title>" "$1" &&
		want=$((want + 1))
	if "$SVG_CHECK" "$1" --legend "$want" >"$T/svg.out" 2>"$T/svg.err"; then ok; else
		fail "$3: $(cat "$T/svg.out" "$T/svg.err")"
	fi
}
plot() { expect_status 0 "plot $1" "$REPORT" --db "$db" plot "$@" -o "$T/charts"; }

plot latency --run 1
svg "$T/charts/latency.svg" 24 "latency: 24 lines (4 impls x 3 head_dims x 2 batches), all told apart"
plot warmup --run 1
svg "$T/charts/warmup.svg" 8 "warmup: a legend entry for each of its 8 lines"
lacks "$T/charts/warmup.svg" "<title>gnuplot_plot_" "warmup: no line without a legend entry"
plot memory --run 1
svg "$T/charts/memory.svg" 18 "memory: naive, flash and the peer with memory lines, 6 lines each"
contains "$T/charts/memory.svg" "<title>fake B1 D8</title>" "memory: the peer is in the chart"
contains "$T/out" "18 ok cases stored no peak memory, not drawn \(fake_nomem" "memory: the peer without memory lines is named"
plot speedup --run 1
svg "$T/charts/speedup.svg" 3 "speedup: flash and two peers vs naive, 18 shapes of three parameters"
contains "$T/svg.out" "^18 x tic labels, at (45|90) degrees" "speedup: the shapes' labels are turned"
plot speedup --run bars
svg "$T/charts/speedup.svg" 9 "speedup: nine bar series, the ninth with a fill pattern"
plot history --where impl=flash --where seq_len=16 --where head_dim=8 --where batch_size=1
svg "$T/charts/history.svg" 2 "history: the runs' medians and the band of run-to-run noise"
contains "$T/svg.out" "^4 x tic labels" "history: a label per run"

# a warm-up axis (the coursework's "with and without warm-up"): the key leaves warm-up out, yet
# the cases of one key are different measurements, a line each, not one line zigzagging between
# them at every sequence length
cat >"$T/warmup_axis.yaml" <<'YAML'
name: cli-charts-warmup-axis
defaults: {iters: 5, device: cpu}
benchmarks:
  - {suite: attention, impl: [naive, flash], seq_len: [16, 32], head_dim: 8, batch_size: 1, heads: 2, warmup: [0, 2]}
  - {suite: matmul, impl: onednn, size: 16, warmup: 0}
YAML
expect_status 0 "a sweep with a warm-up axis" "$RUNNER" run "$T/warmup_axis.yaml" --db "$T/warmup_axis.db"
expect_status 0 "plot latency of the warm-up axis" "$REPORT" --db "$T/warmup_axis.db" plot latency -o "$T/wa"
svg "$T/wa/latency.svg" 4 "latency: a line per impl and warm-up"
for line in "naive warmup=0" "naive warmup=2" "flash warmup=0" "flash warmup=2"; do
	contains "$T/wa/latency.svg" "<title>$line</title>" "latency: the line '$line'"
done
expect_status 0 "plot memory of the warm-up axis" "$REPORT" --db "$T/warmup_axis.db" plot memory -o "$T/wa"
svg "$T/wa/memory.svg" 4 "memory: a line per impl and warm-up"
# the speedup bars pair cases as `report compare` does, the first of a key: the notes say that
# the other warm-up has no bar
expect_status 0 "plot speedup of the warm-up axis" "$REPORT" --db "$T/warmup_axis.db" plot speedup -o "$T/wa"
contains "$T/out" "note: 2 cases repeat the key of an earlier case of the run \(a warm-up axis\?\) and have no bar" "speedup: the cases without a bar are counted"
lacks "$T/out" "other impls than naive" "speedup: a suite without naive (matmul) is no case without a bar"

# a key measured twice at one warm-up (two benchmarks whose seq_len lists overlap) is one case,
# its first copy, as in `report compare`: not a second point at the same x
cat >"$T/overlap.yaml" <<'YAML'
name: cli-charts-overlap
defaults: {warmup: 1, iters: 5, device: cpu}
benchmarks:
  - {suite: attention, impl: naive, seq_len: [16, 32], head_dim: 8, batch_size: 1, heads: 2}
  - {suite: attention, impl: naive, seq_len: [32, 64], head_dim: 8, batch_size: 1, heads: 2}
YAML
expect_status 0 "a sweep whose benchmarks overlap" "$RUNNER" run "$T/overlap.yaml" --db "$T/overlap.db"
expect_status 0 "plot latency of the overlap" "$REPORT" --db "$T/overlap.db" plot latency -o "$T/overlap"
contains "$T/out" "note: 1 case repeats the key of an earlier case of the run and is not drawn: the first case of a key counts" "latency: the second S32 case is left out, and said to be"

# forward cases beside forward_backward ones: the total of each case is not "fwd+bwd" time, and
# the axis must not say so of the forward lines
cat >"$T/passes.yaml" <<'YAML'
name: cli-charts-passes
defaults: {warmup: 1, iters: 5, device: cpu}
benchmarks:
  - {suite: attention, impl: [naive, flash], seq_len: [16, 32], head_dim: 8, batch_size: 1, heads: 2, pass: [forward, forward_backward]}
YAML
expect_status 0 "a sweep of two passes" "$RUNNER" run "$T/passes.yaml" --db "$T/passes.db"
expect_status 0 "plot latency of two passes" "$REPORT" --db "$T/passes.db" plot latency -o "$T/passes"
lacks "$T/passes/latency.svg" "fwd\+bwd" "latency: the forward lines are not called fwd+bwd time"
contains "$T/passes/latency.svg" "median total \(all phases\) time \(ms\)" "latency: the axis says each case's total"
expect_status 0 "plot speedup of two passes" "$REPORT" --db "$T/passes.db" plot speedup -o "$T/passes"
lacks "$T/passes/speedup.svg" "fwd\+bwd" "speedup: the forward bars are not called fwd+bwd"
lacks "$T/out" "no bar" "speedup: every flash case has its bar"
expect_status 0 "plot speedup --phase bwd of two passes" "$REPORT" --db "$T/passes.db" plot speedup --phase bwd -o "$T/passes"
contains "$T/out" "note: 2 cases of other impls than naive have no bar: flash float32 fwd B1 H2 S16 D8 \(no bwd iterations on a side\); flash float32 fwd B1 H2 S32 D8 " "speedup: the forward cases without a bwd bar are named"
expect_status 0 "plot latency of the forward pass alone" "$REPORT" --db "$T/passes.db" plot latency --where pass=forward -o "$T/passes"
contains "$T/passes/latency.svg" "median fwd time \(ms\)" "latency: one pass keeps its phases' name"
# --phase bwd: the forward cases have no point to draw, and the notes say so
expect_status 0 "plot latency --phase bwd of two passes" "$REPORT" --db "$T/passes.db" plot latency --phase bwd -o "$T/passes"
contains "$T/out" "note: 4 ok cases measured no bwd iterations, not drawn \(naive forward, flash forward\)" "latency: the lines without bwd are named"
expect_status 1 "plot latency --phase opt of attention" "$REPORT" --db "$T/passes.db" plot latency --phase opt -o "$T/passes"
contains "$T/err" "no ok attention case of run 1 measured opt iterations \(choose another with --phase\)" "latency: a phase no case has is named"

# report nodes --chart: one bar series per node (three runs of one case under three node names)
for node in alpha beta gamma; do
	BENCHDB_NODE=$node "$RUNNER" run "$T/one.yaml" --db "$T/nodes.db" >/dev/null 2>&1 || fail "run on $node"
done
mkdir -p "$T/nodes"
"$REPORT" nodes --db "$T/nodes.db" --chart "$T/nodes" >"$T/out" 2>"$T/err"
check "report nodes --chart (exit 0, 1 or 2: the verdict is the noise's)" [ $? -le 2 ]
svg "$(ls "$T"/nodes/*.svg | head -1)" 3 "nodes: a bar series per node"

# 90 categories: the chart widens until their labels stand upright side by side
"$MAKE_FIXTURE" "$T/big.db" --cases 90 --iters 5 || fail "make_fixture --cases 90"
expect_status 0 "plot speedup of 90 shapes" "$REPORT" --db "$T/big.db" plot speedup -o "$T/big"
svg "$T/big/speedup.svg" 2 "speedup: 90 labels that do not collide"
contains "$T/svg.out" "^90 x tic labels, at 90 degrees" "90 labels, upright"

# the checker fails on what it is for: a chart whose labels collide and whose legend is missing
cat >"$T/bad.gp" <<'GP'
set terminal svg size 220,200 dynamic font 'sans,10'
set output 'bad.svg'
set xtics ('B1 S128 D32' 0, 'B1 S128 D64' 1, 'B2 S128 D32' 2, 'B2 S128 D64' 3)
plot '-' with lines notitle, '-' with lines lt 1 title 'a', '-' with lines lt 1 title 'b'
0 1
3 2
e
0 2
3 1
e
0 3
3 3
e
GP
(cd "$T" && gnuplot bad.gp 2>/dev/null)
"$SVG_CHECK" "$T/bad.svg" --legend 3 >"$T/svg.out" 2>"$T/svg.err"
check "svg_check fails a chart with colliding labels" grep -q "run into each other" "$T/svg.err"
check "svg_check fails a missing legend entry" grep -q "legend: 2 entries, want 3" "$T/svg.err"
check "svg_check fails two series alike" grep -q "look alike" "$T/svg.err"

finish charts
