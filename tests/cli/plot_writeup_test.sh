#!/usr/bin/env bash
# tests/cli/plot_writeup_test.sh: `report plot` and `report writeup` end to end.
#   plot_writeup_test.sh RUNNER REPORT MAKE_FIXTURE
# On the fixture database (tests/make_fixture.c): every chart kind writes a real PNG and SVG
# (checked only where gnuplot is installed; the error paths are checked everywhere), a missing
# gnuplot is exit 1 with the install hint for `plot` and a note in the document for `writeup`,
# and README.md has its sections, the sweep text, the charts it embeds and a golden
# (tests/golden/writeup_fixture.md, dates and timings masked; UPDATE_GOLDEN=1 rewrites it).
# Then e2e cases (made ok by SQL, since this build has no e2e workload) and a real run of
# configs/smoke.yaml written up.
set -u
RUNNER=$1
REPORT=$2
MAKE_FIXTURE=$3
source "$(dirname "$0")/lib.sh"

# png_ok FILE: the 8-byte PNG signature and more than 4 KB.
png_ok() {
	[ -f "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		[ "$(stat -c %s "$1")" -gt 4096 ]
}
svg_ok() { [ -f "$1" ] && grep -q '<svg' "$1"; }

# Markdown that differs between runs of the test: the dates, the temporary directory, and the
# cells of columns that hold times, rates or ratios (pinned by the report_* goldens instead);
# then the padding that depended on their width.
mask_writeup() {
	sed -E "s|$T|TMP|g; s/(Written|ended) [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC/\1 DATE/g" |
		awk -F'|' -v OFS='|' '
		/^\|/ && !inrow { for (i = 2; i < NF; i++) masked[i] = ($i ~ /\(ms\)|GFLOP|\(x\)/); inrow = 1; print; next }
		/^\|/ { for (i = 2; i < NF; i++) if (masked[i] && $i !~ /^ *-+:? *$/ && $i !~ /^ *$/) $i = " N "; print; next }
		{ inrow = 0; print }' | sed -E 's/-{3,}/---/g; s/ +/ /g'
}

if [ -n "${GNUPLOT:-}" ]; then gp=$GNUPLOT; else gp=gnuplot; fi
if command -v "$gp" >/dev/null 2>&1; then have_gnuplot=1; else have_gnuplot=0; note "no gnuplot: chart files are not checked, only the error paths"; fi

db=$T/f.db
check "fixture written" "$MAKE_FIXTURE" "$db"
case2048="flash float32 fwd+bwd B8 H1 S2048 D64"

# ---- report plot: every kind -------------------------------------------------------------------
for kind in latency speedup warmup memory history; do
	extra=()
	[ $kind = history ] && extra=(--case "$case2048")
	if [ $have_gnuplot = 1 ]; then
		expect_status 0 "plot $kind" "$REPORT" plot $kind --db "$db" --run base -o "$T/charts" "${extra[@]}"
		contains "$T/out" "^wrote $T/charts/$kind.png$" "plot $kind prints the png path"
		contains "$T/out" "^wrote $T/charts/$kind.svg$" "plot $kind prints the svg path"
		check "plot $kind: a PNG over 4 KB" png_ok "$T/charts/$kind.png"
		check "plot $kind: an SVG" svg_ok "$T/charts/$kind.svg"
	else
		expect_status 1 "plot $kind without gnuplot" "$REPORT" plot $kind --db "$db" --run base -o "$T/charts" "${extra[@]}"
		contains "$T/err" "gnuplot-nox" "plot $kind without gnuplot: the install hint"
	fi
done
if [ $have_gnuplot = 1 ]; then
	# What the charts say, read from the SVGs (text is kept as text there).
	for impl in naive flash sdpa; do
		contains "$T/charts/latency.svg" ">$impl<" "latency legend names $impl"
		contains "$T/charts/memory.svg" ">$impl<" "memory legend names $impl"
	done
	contains "$T/charts/latency.svg" "B8 H1 D64" "latency title lists the fixed parameters"
	contains "$T/charts/latency.svg" "95% CI of the median" "latency says what its error bars are"
	contains "$T/charts/speedup.svg" ">S2048<" "speedup categories are the shapes"
	contains "$T/charts/speedup.svg" "speedup vs naive" "speedup against the default baseline"
	lacks "$T/charts/speedup.svg" ">naive<" "the baseline has no bars of its own"
	# history: the run ids and their start dates under the runs, a line through the medians
	for run in 1 2; do
		day=$(sql "$db" "select substr(started_at, 1, 10) from runs where id = $run")
		contains "$T/charts/history.svg" ">$run<" "history labels run $run by its id"
		contains "$T/charts/history.svg" ">$day<" "history labels run $run by its date ($day)"
	done
	contains "$T/charts/history.svg" "run median \(95% interval\)" "history's key says what the points are"
	contains "$T/charts/warmup.svg" "iterations 0-4 are warm-up" "warmup title gives the warm-up iterations"
	expect_status 0 "plot warmup caps its lines" "$REPORT" plot warmup --db "$db" -o "$T/charts"
	contains "$T/out" "showing 8 of 12 ok cases" "warmup says what it left out"
	expect_status 0 "plot latency of one impl" "$REPORT" plot latency --db "$db" --where impl=sdpa -o "$T/one"
	check "one-line latency chart" png_ok "$T/one/latency.png"
	expect_status 0 "history of the one case the filters leave" "$REPORT" plot history --db "$db" --where impl=flash --where seq_len=2048 -o "$T/one"
	contains "$T/one/history.svg" "flash float32 fwd\+bwd B8 H1 S2048 D64 on " "one case: its name in the title"
	# every case the filters leave: small multiples, one panel per case (and host)
	expect_status 0 "history of every case: small multiples" "$REPORT" plot history --db "$db" -o "$T/all"
	check "small multiples: a PNG" png_ok "$T/all/history.png"
	contains "$T/all/history.svg" "12 case series across their runs" "small multiples: the title counts the series"
	for impl in naive flash sdpa; do
		contains "$T/all/history.svg" ">$impl float32 fwd\+bwd B8 H1 S2048 D64 \(" "small multiples: a panel for $impl S2048"
	done
	expect_status 0 "history of one impl: 4 panels" "$REPORT" plot history --db "$db" --where impl=sdpa -o "$T/sdpa"
	contains "$T/sdpa/history.svg" "4 case series across their runs" "the filter picks the panels"
	lacks "$T/sdpa/history.svg" ">naive float32" "no panel of another impl"
	expect_status 0 "speedup vs another baseline" "$REPORT" plot speedup --db "$db" --baseline sdpa -o "$T/one"
	contains "$T/one/speedup.svg" ">naive<" "vs sdpa, naive has bars"
	# --phase fwd: the points are the forward time of a case whose name says fwd+bwd; the axis
	# says which
	expect_status 0 "history of the forward phase" "$REPORT" plot history --db "$db" --case "$case2048" --phase fwd -o "$T/fwd"
	contains "$T/fwd/history.svg" ">median fwd time \(ms\)<" "history --phase fwd: the y axis names the phase"
	lacks "$T/charts/history.svg" "median (fwd|total) time" "history of the total: the case's pass is its name's"
	expect_status 0 "plot into a new nested directory" "$REPORT" plot memory --db "$db" -o "$T/a/b/c"
	check "nested directory made" png_ok "$T/a/b/c/memory.png"
	# a case ok in run 1 and out of memory in its newest run: `report changes` fails it, and the
	# history chart, whose last point is run 1's, says so instead of reading steady
	if command -v sqlite3 >/dev/null 2>&1; then
		cp "$db" "$T/broken.db"
		check "the newest S2048 flash case made an oom" sql "$T/broken.db" "update cases set status = 'oom', reason = 'needs 9 GiB' where run_id = 2 and name = '$case2048'"
		expect_status 0 "history of a case out of memory in its newest run" "$REPORT" plot history --db "$T/broken.db" --case "$case2048" -o "$T/broken"
		contains "$T/broken/history.svg" ">not ok in run 2: oom<" "the chart says the newest run is not ok"
		contains "$T/out" "note: ${case2048//+/\\+} on fixture-host: not ok in run 2: oom — needs 9 GiB \(ok in run 1, its last point\)" "the notes say so, with the reason"
		expect_status 0 "small multiples with a case out of memory in its newest run" "$REPORT" plot history --db "$T/broken.db" -o "$T/broken"
		contains "$T/broken/history.svg" ">not ok in run 2: oom<" "its panel says so"
		# a run cut short: its chart lacks what it never reached, and says so
		cp "$db" "$T/cut.db"
		check "run 2 made an interrupted one" sql "$T/cut.db" "update runs set status = 'interrupted' where id = 2"
		expect_status 0 "plot latency of an interrupted run" "$REPORT" plot latency --db "$T/cut.db" -o "$T/cut"
		contains "$T/out" "note: run 2 is interrupted: cases it did not reach are not in the chart" "the notes say the run was cut short"
		expect_status 0 "plot latency of a complete run" "$REPORT" plot latency --db "$db" -o "$T/cut"
		lacks "$T/out" "cases it did not reach" "a complete run has no such note"
	fi
fi

# ---- report plot: errors -----------------------------------------------------------------------
expect_status 2 "plot without a kind" "$REPORT" plot --db "$db" -o "$T/x"
expect_status 2 "plot with an unknown kind" "$REPORT" plot pie --db "$db" -o "$T/x"
contains "$T/err" "unknown chart 'pie' \(valid: latency, speedup, warmup, memory, history\)" "unknown kind names the valid ones"
expect_status 2 "plot without -o" "$REPORT" plot latency --db "$db"
contains "$T/err" "-o DIR is required" "missing -o is named"
expect_status 2 "plot with a --where typo" "$REPORT" plot latency --db "$db" --where sequence=1 -o "$T/x"
expect_status 1 "plot on a missing database" "$REPORT" plot latency --db "$T/none.db" -o "$T/x"
expect_status 1 "plot speedup against an impl the run lacks" "$REPORT" plot speedup --db "$db" --baseline nope -o "$T/x"
contains "$T/err" "no case of impl 'nope' in run 2 .*impls: naive, flash, sdpa" "unknown baseline lists the impls"
expect_status 1 "plot history of an unknown case" "$REPORT" plot history --db "$db" --case "no such case" -o "$T/x"
contains "$T/err" "no case matches --case no such case" "unknown case is named"
expect_status 1 "plot history of a label no run has" "$REPORT" plot history --db "$db" --label nope -o "$T/x"
contains "$T/err" "no case matches --label nope \([0-9]+ cases of other runs left out" "the label filter is named"
expect_status 2 "plot history --min-segment 1" "$REPORT" plot history --db "$db" --min-segment 1 -o "$T/x"
expect_status 1 "plot with nothing left by the filters" "$REPORT" plot latency --db "$db" --where impl=nope -o "$T/x"
expect_status 1 "plot without gnuplot" env GNUPLOT=/nonexistent "$REPORT" plot latency --db "$db" -o "$T/nogp"
contains "$T/err" "gnuplot is not installed: install gnuplot-nox" "missing gnuplot: the install hint"
check "missing gnuplot writes no chart" [ ! -e "$T/nogp/latency.png" ]
printf '#!/bin/sh\ncat >/dev/null\necho "line 7: unexpected thing in the plot" >&2\nexit 1\n' >"$T/badgnuplot"
chmod +x "$T/badgnuplot"
expect_status 1 "plot with a failing gnuplot" env GNUPLOT="$T/badgnuplot" "$REPORT" plot speedup --db "$db" -o "$T/x"
contains "$T/err" "line 7: unexpected thing in the plot" "gnuplot's message is passed on"

# ---- report writeup on the fixture -------------------------------------------------------------
wu=$T/wu
expect_status 0 "writeup" "$REPORT" writeup --db "$db" --run cand -o "$wu"
readme=$wu/README.md
contains "$T/out" "^wrote $wu/README.md$" "writeup prints the document's path"
check "README.md written" [ -s "$readme" ]
for heading in "# Benchmark report: fixture" "## Provenance" "### System" "### Source and run" \
	"### Sweep" "## Results" "### attention" "## Warm-up effect" "### run 2: warm-up effect \(total\)" \
	"## Attention: time and memory vs sequence length" "## Speedup vs naive" \
	"### run 2: speedup vs naive \(total\)" "### summary" "## Cases that did not run" "## Reproduce" \
	"## How the numbers were made"; do
	contains "$readme" "^$heading\$" "heading '$heading'"
done
lacks "$readme" "^## End-to-end" "no e2e section without e2e cases"
contains "$readme" "^Written [0-9-]+ [0-9:]+ UTC by \`report writeup --db $db --run cand -o $wu\`" "date and command"
contains "$readme" "^\| host +\| fixture-host +\|" "system: host"
contains "$readme" "^\| CPU +\| Synthetic CPU, 2 cores, 2 threads +\|" "system: CPU"
contains "$readme" "^\| BLAS +\| none +\|" "system: BLAS"
contains "$readme" "git commit \`b{40}\` \(clean\), branch \`main\`" "git provenance"
contains "$readme" "^- runner version \`fixture\`$" "runner version"
contains "$readme" '^- environment \(the variables that change what is measured, and the OpenMP threads\): `\{\}`$' \
	"the run's env (runs.env: thread count, ISA caps), which the system table cannot say"
contains "$readme" "^make_fixture$" "command line in a fenced block"
check "sweep text in a yaml block" [ "$(awk '/^```yaml$/ { on = 1; next } /^```$/ { on = 0 } on' "$readme")" = "name: fixture" ]
contains "$readme" "^runner run fixture.yaml --db $db$" "reproduce: runner run"
contains "$readme" "^report writeup --db $db --run 00000002-0000-4000-8000-000000000000 -o $wu$" "reproduce: this document"
contains "$readme" "None: all 12 cases ran" "no case failed in the fixture"
contains "$readme" "^\| sdpa +\| +4 \|" "speedup summary row for sdpa"
if [ $have_gnuplot = 1 ]; then
	for chart in warmup latency memory speedup; do
		contains "$readme" "^!\[[^]]*\]\($chart.png\)$" "$chart chart embedded"
		check "$chart.png beside README.md" png_ok "$wu/$chart.png"
		check "$chart.svg beside README.md" svg_ok "$wu/$chart.svg"
	done
	# Every image the document embeds exists, and every chart written is embedded.
	for img in $(grep -oE '^!\[[^]]*\]\([^)]*\)' "$readme" | sed -E 's/.*\((.*)\)/\1/'); do
		check "embedded $img exists" [ -s "$wu/$img" ]
	done
	for png in "$wu"/*.png; do
		contains "$readme" "\($(basename "$png")\)" "$(basename "$png") is embedded"
	done
	lacks "$readme" "skipped" "with gnuplot no chart is skipped"
	mask_writeup <"$readme" >"$T/writeup.md"
	golden writeup_fixture.md "$T/writeup.md"
else
	note "no gnuplot: golden writeup_fixture.md (made with charts) not compared"
fi
# The same database gives the same document (dates aside).
expect_status 0 "writeup again" "$REPORT" writeup --db "$db" --run cand -o "$T/wu2"
sed "s|$wu|WU|g" "$readme" | mask_writeup >"$T/a.md"
sed "s|$T/wu2|WU|g" "$T/wu2/README.md" | mask_writeup >"$T/b.md"
check "writeup is reproducible" cmp -s "$T/a.md" "$T/b.md"

# Without gnuplot the document is still written, and says why it has no charts.
expect_status 0 "writeup without gnuplot" env GNUPLOT=/nonexistent "$REPORT" writeup --db "$db" -o "$T/nogp"
contains "$T/out" "charts skipped: gnuplot is not installed" "writeup says on stdout that charts were skipped"
contains "$T/nogp/README.md" "Charts were skipped: gnuplot is not installed: install gnuplot-nox" "the document says why"
contains "$T/nogp/README.md" "^_Chart \`latency.png\` skipped" "each chart spot says it was skipped"
lacks "$T/nogp/README.md" "^!\[" "no image embedded without gnuplot"
check "no chart files without gnuplot" [ -z "$(ls "$T/nogp" | grep -v README.md)" ]
# Again into the folder of a writeup with charts: the earlier charts do not stay beside a
# document that says it has none, and a file of the user's stays.
if [ $have_gnuplot = 1 ]; then
	check "the earlier writeup drew charts" [ -s "$T/wu2/latency.png" ]
	echo mine >"$T/wu2/notes.txt"
	expect_status 0 "writeup without gnuplot over one with charts" env GNUPLOT=/nonexistent "$REPORT" writeup --db "$db" --run cand -o "$T/wu2"
	check "no chart of the earlier writeup left ($(ls "$T/wu2" | tr '\n' ' '))" [ -z "$(ls "$T/wu2" | grep -E '\.(png|svg)$')" ]
	contains "$T/out" "^removed $T/wu2/latency.png" "says what it removed"
	check "the user's own file stays" grep -q mine "$T/wu2/notes.txt"
fi
# A gnuplot that fails: the document names the error, the writeup still succeeds.
expect_status 0 "writeup with a failing gnuplot" env GNUPLOT="$T/badgnuplot" "$REPORT" writeup --db "$db" -o "$T/badgp"
contains "$T/badgp/README.md" "^_Chart \`speedup.png\` not drawn: .*line 7: unexpected thing" "gnuplot's error in the document"
contains "$T/err" "speedup chart not drawn" "and on stderr"

expect_status 0 "writeup against another baseline" "$REPORT" writeup --db "$db" --baseline sdpa -o "$T/vs_sdpa"
contains "$T/vs_sdpa/README.md" "^## Speedup vs sdpa$" "speedup section follows --baseline"
contains "$T/vs_sdpa/README.md" " --baseline sdpa -o " "reproduce keeps --baseline"
expect_status 2 "writeup without -o" "$REPORT" writeup --db "$db"
expect_status 2 "writeup against an impl the run lacks" "$REPORT" writeup --db "$db" --baseline nope -o "$T/x"
contains "$T/err" "no case of run 2 has impl 'nope'" "unknown baseline is named"
expect_status 1 "writeup on a missing database" "$REPORT" writeup --db "$T/none.db" -o "$T/x"
expect_status 1 "writeup of an unknown run" "$REPORT" writeup --db "$db" --run nosuch -o "$T/x"

# ---- e2e: the float32/bfloat16 tables ----------------------------------------------------------
# A real e2e run, whose samples are then replaced with known ones (bf16 forward at half the
# float32 time) and one case turned into an oom, so that the writeup's figures are predictable.
if command -v sqlite3 >/dev/null 2>&1; then
	cat >"$T/e2e.yaml" <<'EOF'
name: e2e-mini
defaults: {warmup: 2, iters: 6, device: cpu}
benchmarks:
  - suite: e2e
    model: mini
    context_length: 32
    dtype: [float32, bfloat16]
    pass: [forward, train_step]
    batch_size: 1
models:
  mini: {d_model: 64, d_ff: 128, num_layers: 1, num_heads: 2, vocab_size: 100}
EOF
	e2e=$T/e2e.db
	expect_status 0 "runner run e2e" "$RUNNER" run "$T/e2e.yaml" --db "$e2e"
	check "e2e samples made known" sql "$e2e" "
		delete from samples;
		update cases set status = 'ok', reason = null,
			peak_bytes = case dtype when 'float32' then 4194304 else 3145728 end;
		with recursive it(i) as (select 0 union all select i + 1 from it where i < 7)
		insert into samples (case_id, phase, iter, ns)
		select c.id, ph.p, it.i, cast((case c.dtype when 'float32' then 1.0 else 0.5 end) * ph.base *
			(case when it.i < 2 then 3 else 1 end) * (1 + 0.01 * ((it.i * 7 + c.id) % 5)) as integer)
		from cases c, it, (select 'fwd' p, 1000000 base union all select 'bwd', 2000000
				   union all select 'opt', 500000) ph
		where ph.p = 'fwd' or c.pass = 'train_step';
		delete from samples where case_id in (select id from cases where pass = 'train_step' and dtype = 'bfloat16');
		update cases set status = 'oom', reason = 'needs 9 GiB, over the memory limit'
		where pass = 'train_step' and dtype = 'bfloat16';"
	expect_status 0 "writeup of an e2e run" "$REPORT" writeup --db "$e2e" -o "$T/e2e"
	r=$T/e2e/README.md
	contains "$r" "^## End-to-end model$" "e2e section"
	contains "$r" "^### e2e on cpu, float32$" "e2e table for float32"
	contains "$r" "^### e2e on cpu, bfloat16$" "e2e table for bfloat16"
	contains "$r" "^### mixed precision: float32 vs bfloat16$" "mixed-precision table"
	# param count (M): 1 (4·64² + 3·64·128 + 2·64) + 2·100·64 + 64 = 53952
	contains "$r" "^\| mini +\| forward +\| 32 +\| 1 +\| cpu +\| +0\.1 \| [0-9]+\/[0-9]+ +\| +1\.0[0-9]{2} \| +0\.5[0-9]{2} \| +(1\.9[5-9]|2\.0[0-5]) \|" "bf16 forward is 2x faster"
	contains "$r" "e2e mini float32 train_step ctx32 B1: float32 ok, bfloat16 oom" "unpaired precision named"
	contains "$r" "^\| e2e mini bfloat16 train_step ctx32 B1 +\| oom +\| needs 9 GiB, over the memory limit +\|" "oom case with its reason"
	contains "$r" "Every case of this run is an end-to-end model case" "results point to the e2e section"
	lacks "$r" "^## Speedup" "no speedup section without the baseline impl"
	lacks "$r" "^## Attention" "no attention section without attention cases"
else
	note "no sqlite3: the e2e writeup is not checked"
fi

# ---- a real run, written up --------------------------------------------------------------------
smoke=$T/smoke.db
expect_status 0 "runner run configs/smoke.yaml" "$RUNNER" run "$SRC/configs/smoke.yaml" --db "$smoke"
expect_status 0 "writeup of the smoke run" "$REPORT" writeup --db "$smoke" -o "$T/smoke"
r=$T/smoke/README.md
check "the smoke sweep verbatim" [ "$(awk '/^```yaml$/ { on = 1; next } /^```$/ { on = 0 } on' "$r")" = "$(cat "$SRC/configs/smoke.yaml")" ]
contains "$r" "^# Benchmark report: smoke$" "smoke title"
contains "$r" "^\| host +\| $(hostname) +\|" "the real host"
contains "$r" "^\| BLAS +\| oneDNN" "the real BLAS"
contains "$r" "^### matmul$" "matmul table"
contains "$r" "^## Speedup vs naive$" "flash vs naive"
contains "$r" "^runner run $SRC/configs/smoke.yaml --db $smoke$" "reproduce the smoke run"
if [ $have_gnuplot = 1 ]; then
	for chart in warmup latency memory speedup; do
		check "smoke $chart.png" png_ok "$T/smoke/$chart.png"
	done
fi

# ---- a run cut short: the cases it never reached did run nowhere, and the document says so ----
if command -v sqlite3 >/dev/null; then
	cp "$smoke" "$T/cut.db"
	sql "$T/cut.db" "UPDATE runs SET status = 'interrupted';
		DELETE FROM samples WHERE case_id IN (SELECT id FROM cases WHERE id > 2);
		DELETE FROM cases WHERE id > 2; UPDATE cases SET status = 'ok' WHERE id <= 2" >/dev/null
	expect_status 0 "writeup of an interrupted run" env GNUPLOT=/nonexistent "$REPORT" writeup --db "$T/cut.db" -o "$T/cut"
	contains "$T/cut/README.md" "^\*\*The run is interrupted\*\*: the cases of its sweep that it did not reach are not stored" "the cases not reached are said to be missing"
	lacks "$T/cut/README.md" "^None: all [0-9]+ cases ran" "no claim that every case ran"
fi

# ---- stored text that is markdown of its own ---------------------------------------------------
# A sweep name with a line break (it ended the heading: what followed became the document's own
# markdown, here a table), a label and a branch with backticks (they ended their code spans), a
# host name with a line break and a carriage return (each a line ending to markdown: the second
# split the system table's row): each stays on its line and reads back as stored, \n and \r.
cat >"$T/odd.yaml" <<'EOF'
name: odd
benchmarks:
  - {suite: attention, impl: naive, seq_len: 16, head_dim: 8, batch_size: 1, heads: 1, warmup: 1, iters: 2}
EOF
odd=$T/odd.db
expect_status 0 "a run with odd text" "$RUNNER" run "$T/odd.yaml" --db "$odd" --label 'fix `x`` y
line 2'
if command -v sqlite3 >/dev/null; then
	# (runner refuses such a name in a sweep file; a database of an older runner can hold one)
	sql "$odd" "UPDATE runs SET git_commit = 'c0ffee', git_branch = 'feat-\`tick\`',
			sweep_name = 'odd' || char(10) || '| a | b |' || char(10) || '|---|---|';
		UPDATE systems SET hostname = 'node' || char(10) || '## not a heading' || char(13) || '| x |';
		UPDATE cases SET cpu_wait = 0.5, name = 'n' || char(10) || char(10) || '## case <b>x</b>'" \
		>/dev/null
fi
expect_status 0 "writeup of the odd run" env GNUPLOT=/nonexistent "$REPORT" writeup --db "$odd" -o "$T/odd"
check "stored text reads back from the markdown" python3 - "$T/odd/README.md" "$(command -v sqlite3)" <<'EOF'
import re, sys
doc = open(sys.argv[1], newline="").read()   # a CR kept as it is
lines = doc.split("\n")

def spans(line):
    # CommonMark code spans: a backtick run closes at the next run of the same length; one space
    # each side is stripped when both are there
    out, i = [], 0
    while True:
        m = re.compile(r"`+").search(line, i)
        if not m:
            return out
        n = len(m.group())
        close = next((c for c in re.finditer(r"`+", line[m.end():]) if len(c.group()) == n), None)
        if not close:
            return out
        text = line[m.end():m.end() + close.start()]
        if len(text) > 1 and text[0] == " " and text[-1] == " " and text.strip():
            text = text[1:-1]
        out.append(text)
        i = m.end() + close.end()

assert lines[0] == r"# Benchmark report: odd\n| a | b |\n|---|---|" and lines[1] == "", lines[:2]
assert not any(l.startswith("| a ") for l in lines), "the sweep name made a table"
uuid = next(l for l in lines if l.startswith("- run uuid "))
assert spans(uuid)[1] == r"fix `x`` y\nline 2", spans(uuid)
if sys.argv[2]:
    git = next(l for l in lines if l.startswith("- git commit "))
    assert spans(git) == ["c0ffee", "feat-`tick`"], spans(git)
    assert r" on node\n## not a heading\r| x |, started " in lines[2], lines[2]
    assert not any(l.startswith("## not a heading") for l in lines)
    assert "\r" not in doc, "a raw carriage return, a line ending to markdown"
    host = next(l for l in lines if l.startswith("| host "))
    assert len(re.findall(r"(?<!\\)\|", host)) == 3, host
    # the contended case, named in the measurement conditions: one list item, its name a code span
    item = next(l for l in lines if l.startswith("- ") and l.endswith(": contended (waited 50%)"))
    assert spans(item) == [r"n\n\n## case <b>x</b>"], item
    assert not any(l.startswith("## case") for l in lines), "the case's name made a heading"
EOF
# report table's heading over the same run (markdown too)
expect_status 0 "report table of the odd run" "$REPORT" table --db "$odd"
check "its heading is one line" [ "$(head -1 "$T/out")" = '## run 1: odd\n| a | b |\n|---|---| (complete)' ]
lacks "$T/out" "^\\| a \\| b \\|" "the sweep's name made no table"
lacks "$T/out" "^## not a heading" "the host's name made no heading"

finish plot_writeup
