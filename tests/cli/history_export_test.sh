#!/usr/bin/env bash
# tests/cli/history_export_test.sh: end-to-end tests of `report history` and `report export` on the
# fixture database (tests/make_fixture.c: runs "base" and "cand"; in "cand" flash at S2048 is
# planted 10% slower, everything else unchanged; 5 warm-up + 30 measured iterations, fwd and bwd).
#   history_export_test.sh RUNNER REPORT MAKE_FIXTURE
# Golden files live in tests/golden/ (history_*, export_*); UPDATE_GOLDEN=1 rewrites them.
set -u
REPORT=$2
MAKE_FIXTURE=$3
source "$(dirname "$0")/lib.sh"

# close A B TOLERANCE: |A - B| <= TOLERANCE * max(|B|, 1)
close() { awk -v a="$1" -v b="$2" -v tol="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; if (m < 1) m = 1; exit !(a != "" && b != "" && d <= tol * m) }'; }

db=$T/f.db
check "fixture written" "$MAKE_FIXTURE" "$db"
key_of() { sql "$db" "select case_key from cases where run_id = 1 and impl = '$1' and seq_len = $2"; }
flash2048=$(key_of flash 2048)
naive1024=$(key_of naive 1024)
check "fixture has the flash S2048 key" [ -n "$flash2048" ]
check "fixture has the naive S1024 key" [ -n "$naive1024" ]

# ---- history ------------------------------------------------------------------------------------
for fmt in md json; do
	expect_status 0 "history flash S2048 ($fmt)" "$REPORT" history --db "$db" --case "$flash2048" --format $fmt
	golden "history_flash_s2048.$fmt" "$T/out"
done
# CSV columns: case_key,run,started,commit,host,status,median_ms,ci_lo_ms,ci_hi_ms,n,cpu_wait_%,step
expect_status 0 "history flash S2048 (csv)" "$REPORT" history --db "$db" --case "$flash2048" --format csv
check "csv header" [ "$(head -1 "$T/out")" = "case_key,run,started,commit,host,status,median_ms,ci_lo_ms,ci_hi_ms,n,cpu_wait_%,step" ]
check "two runs have the flash S2048 key" [ "$(grep -c '^suite=' "$T/out")" = 2 ]
check "oldest run first" awk -F, 'NR == 2 && $2 == 1 { a = 1 } NR == 3 && $2 == 2 { b = 1 } END { exit !(a && b) }' "$T/out"
check "first row has no step" awk -F, 'NR == 2 && $12 == "" { ok = 1 } END { exit !ok }' "$T/out"
# two runs of two commits cannot tell a change from the noise between runs: the planted ~10% is
# beyond the threshold but not claimed ("?"), and stderr says the noise was assumed
check "second row: the planted ~10% is a possible step, not a claim" awk -F, 'NR == 3 && $12 ~ /^\? \+/ { x = substr($12, 4) + 0; ok = x > 8 && x < 12 } END { exit !ok }' "$T/out"
check "the cpu wait shown (the fixture's 0)" awk -F, 'NR > 1 && $11 != 0 { bad = 1 } END { exit bad }' "$T/out"
contains "$T/err" "system 1: noise between runs NOT measured" "what the steps were judged with, on stderr"
check "commit is 12 characters" awk -F, 'NR == 2 && $4 == "aaaaaaaaaaaa" { ok = 1 } END { exit !ok }' "$T/out"
check "n is the measured iterations" awk -F, 'NR > 1 && $10 != 30 { bad = 1 } END { exit bad }' "$T/out"
check "median within its interval" awk -F, 'NR > 1 && !($8 <= $7 && $7 <= $9 && $8 < $9) { bad = 1 } END { exit bad || NR != 3 }' "$T/out"
# The median of the total over measured iterations, straight from the samples.
want=$(sql "$db" "with t as (select s.iter, sum(s.ns) v from samples s join cases c on c.id = s.case_id where c.run_id = 1 and c.case_key = '$flash2048' and s.iter >= c.warmup group by s.iter) select avg(v) / 1e6 from (select v from t order by v limit 2 offset 14)")
got=$(awk -F, 'NR == 2 { print $7 }' "$T/out")
check "median matches sqlite ($got vs $want)" close "$got" "$want" 1e-9

expect_status 0 "history naive S1024" "$REPORT" history --db "$db" --case "$naive1024" --format csv
check "naive S1024: two rows" [ "$(grep -c '^suite=' "$T/out")" = 2 ]
check "naive S1024: no step" awk -F, 'NR > 1 && $12 != "" { bad = 1 } END { exit bad }' "$T/out"

expect_status 0 "history --where impl=flash" "$REPORT" history --db "$db" --where impl=flash --format csv
check "one table per flash key" [ "$(grep -c '^case_key,' "$T/out")" = 4 ]
check "exactly one possible step, at flash S2048" [ "$(grep -c ',? +' "$T/out")/$(grep ',? +' "$T/out" | cut -d, -f1)" = "1/$flash2048" ]
expect_status 0 "history --where, --phase fwd, --threshold 20" "$REPORT" history --db "$db" --where impl=flash --where seq_len=2048 --phase fwd --threshold 20 --format csv
check "a 10% change is no step at a 20% threshold" [ "$(grep -c ',slower\|,? ' "$T/out")" = 0 ]
expect_status 0 "history tex" "$REPORT" history --db "$db" --case "$flash2048" --format tex
contains "$T/out" '\? \+[0-9.]+\\%' "tex escapes the percent sign"
# A second run of each commit (0.2% apart: runs of one code repeat), made after both (the history
# is in time order), measures the noise between runs: then the planted 10% is a step, slower, and
# so is the way back (faster) and forth.
hdb=$T/h.db
cp "$db" "$hdb"
for pair in "base:1.002:2026-01-04T12:00:00.000Z" "cand:0.998:2026-01-05T12:00:00.000Z"; do
	IFS=: read -r label factor at <<<"$pair"
	sql "$hdb" "
	INSERT INTO runs (uuid, system_id, started_at, status, tool_version, command_line, label, git_commit, git_dirty, sweep_hash)
	  SELECT 'again-' || uuid, system_id, '$at', 'complete', tool_version, command_line, '$label-again', git_commit, git_dirty, sweep_hash FROM runs WHERE label = '$label';
	INSERT INTO cases (run_id, ord, suite, impl, device, dtype, pass, params, case_key, name, warmup, iters, status, cpu_wait)
	  SELECT (SELECT id FROM runs WHERE label = '$label-again'), ord, suite, impl, device, dtype, pass, params, case_key, name, warmup, iters, status, cpu_wait
	  FROM cases WHERE run_id = (SELECT id FROM runs WHERE label = '$label');
	INSERT INTO samples (case_id, phase, iter, ns)
	  SELECT c2.id, s.phase, s.iter, CAST(s.ns * $factor AS INTEGER) FROM samples s
	  JOIN cases c1 ON c1.id = s.case_id AND c1.run_id = (SELECT id FROM runs WHERE label = '$label')
	  JOIN cases c2 ON c2.ord = c1.ord AND c2.run_id = (SELECT id FROM runs WHERE label = '$label-again');"
done
expect_status 0 "history with each commit run twice" "$REPORT" history --db "$hdb" --case "$flash2048" --format csv
contains "$T/err" "system 1: noise between runs, measured" "the noise measured from the runs of one commit"
check "the planted 10% is a step now: slower, then faster back, then slower" [ "$(cut -d, -f12 "$T/out" | grep -o '^[a-z]*' | tr '\n' ' ')" = "step slower faster slower " ]
expect_status 0 "history of an unchanged case with each commit run twice" "$REPORT" history --db "$hdb" --case "$naive1024" --format csv
check "no step where nothing changed" awk -F, 'NR > 1 && $12 != "" { bad = 1 } END { exit bad }' "$T/out"

# The table and the chart of history show one interval around one median for the same data (both
# from stats.c median_ci): the chart's data as a stand-in gnuplot receives it, against the table's
# CSV, run by run.
cat >"$T/gnuplot" <<'EOF'
#!/bin/sh
cat >"$(dirname "$0")/history.gp"
sed -n "s/^set output '\(.*\)'\$/\1/p" "$(dirname "$0")/history.gp" | while IFS= read -r f; do
	case $f in *.png) printf 'chart\0\0\0\0IEND\256B`\202' ;; *) echo '<svg>chart</svg>' ;; esac >"$f"   # whole charts
done
EOF
chmod +x "$T/gnuplot"
expect_status 0 "history chart (stand-in gnuplot)" env GNUPLOT="$T/gnuplot" "$REPORT" plot history --db "$db" --case "$flash2048" -o "$T/charts"
expect_status 0 "history table (csv)" "$REPORT" history --db "$db" --case "$flash2048" --format csv
# chart: "x median lo hi" (ms) per run, oldest first; table: median_ms,ci_lo_ms,ci_hi_ms
awk '/^\$p0 << EOD/ { on = 1; next } /^EOD/ { on = 0 } on { printf "%.6g %.6g %.6g\n", $2, $3, $4 }' "$T/history.gp" >"$T/chart_ci"
awk -F, 'NR > 1 { printf "%.6g %.6g %.6g\n", $7, $8, $9 }' "$T/out" >"$T/table_ci"
check "history: table and chart give the same median and interval ($(tr '\n' ';' <"$T/table_ci") vs $(tr '\n' ';' <"$T/chart_ci"))" cmp -s "$T/table_ci" "$T/chart_ci"
check "history: both runs compared" [ "$(wc -l <"$T/chart_ci")" = 2 ]

expect_status 2 "history without --case or --where" "$REPORT" history --db "$db"
contains "$T/err" "--case KEY" "asks for a case"
contains "$T/err" "--case 'suite=attention impl=naive .*seq_len=256" "lists case keys of the latest run"
expect_status 1 "history of an unknown key" "$REPORT" history --db "$db" --case "suite=attention impl=nope"
contains "$T/err" "no run has a case with key 'suite=attention impl=nope'" "unknown key message"
expect_status 1 "history of a filter matching nothing" "$REPORT" history --db "$db" --where impl=nope
contains "$T/err" "no case of any run matches" "no-match message"
expect_status 2 "history --where with an unknown parameter" "$REPORT" history --db "$db" --where imp=flash
contains "$T/err" "no case of any run has a parameter 'imp'" "unknown parameter message"
expect_status 2 "history --where malformed" "$REPORT" history --db "$db" --where impl
expect_status 2 "history unknown phase" "$REPORT" history --db "$db" --case "$flash2048" --phase fwdd
expect_status 2 "history unknown format" "$REPORT" history --db "$db" --case "$flash2048" --format xml
expect_status 1 "history on a missing database" "$REPORT" history --db "$T/none.db" --case "$flash2048"

# A run of 3 measured iterations: its interval is the whole range, which holds the median 75% of
# the time, not 95% — the table says so instead of calling it a 95% interval unqualified.
few=$T/few.db
cp "$db" "$few"
sql "$few" "DELETE FROM samples WHERE case_id = (SELECT id FROM cases WHERE run_id = 2 AND case_key = '$flash2048') AND iter >= (SELECT warmup FROM cases WHERE run_id = 2 AND case_key = '$flash2048') + 3; UPDATE cases SET iters = 3 WHERE run_id = 2 AND case_key = '$flash2048'"
expect_status 0 "history with a run of 3 iterations" "$REPORT" history --db "$few" --case "$flash2048"
check "n of the short run is 3" grep -q '| *3 | *0 |' "$T/out"
check "history: a 3-iteration interval is said to be 75%" grep -qF "whole range, which holds the median with probability 1 - 2^(1-n) (75% at the fewest here, n = 3)" "$T/out"
expect_status 0 "history with 30 iterations a run" "$REPORT" history --db "$db" --case "$flash2048"
check "history: no such note when every run has 6 iterations or more" sh -c '! grep -qF "whole range" "$1"' sh "$T/out"

# ---- export -------------------------------------------------------------------------------------
nsamples=$(sql "$db" "select count(*) from samples")
expect_status 0 "export samples (csv)" "$REPORT" export --db "$db"
check "samples header" [ "$(head -1 "$T/out")" = "run_id,case_id,case_key,case_name,impl,phase,iter,is_warmup,ns" ]
check "one row per stored sample ($(($(wc -l <"$T/out") - 1)) vs $nsamples)" [ "$(wc -l <"$T/out")" = $((nsamples + 1)) ]
check "warm-up samples included" [ "$(awk -F, '$8 == 1' "$T/out" | wc -l)" = "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where s.iter < c.warmup")" ]
check "raw ns sum matches sqlite" [ "$(awk -F, 'NR > 1 { s += $9 } END { printf "%.0f", s }' "$T/out")" = "$(sql "$db" "select sum(ns) from samples")" ]
check "a sample matches sqlite" [ "$(awk -F, '$2 == 5 && $6 == "bwd" && $7 == 3 { print $9 }' "$T/out")" = "$(sql "$db" "select ns from samples where case_id = 5 and phase = 'bwd' and iter = 3")" ]
expect_status 0 "export samples of one run" "$REPORT" export --db "$db" --run base
check "run base only" [ "$(wc -l <"$T/out")" = $(($(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.run_id = 1") + 1)) ]
expect_status 0 "export samples --where" "$REPORT" export --db "$db" --where impl=sdpa --suite attention
check "--where keeps only sdpa" [ "$(awk -F, 'NR > 1 && $5 != "sdpa"' "$T/out" | wc -l)/$(wc -l <"$T/out")" = "0/$(($(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.impl = 'sdpa'") + 1))" ]

expect_status 0 "export -o FILE" "$REPORT" export --db "$db" --run cand -o "$T/cand.csv"
check "-o writes nothing to stdout" [ ! -s "$T/out" ]
"$REPORT" export --db "$db" --run cand >"$T/cand_stdout.csv" 2>/dev/null
check "-o FILE holds what stdout would" cmp -s "$T/cand.csv" "$T/cand_stdout.csv"
# -o to what is not a regular file: the check that it is no database read it first, so -o
# /dev/stdout into a pipe (README: written in place) and -o into a FIFO waited for ever
timeout 60 "$REPORT" export --db "$db" --run cand -o /dev/stdout 2>"$T/err" | cat >"$T/cand_devstdout.csv"
check "-o /dev/stdout into a pipe: exit 0 (124: it hung)" [ "${PIPESTATUS[0]}" = 0 ]
check "-o /dev/stdout into a pipe: what stdout holds" cmp -s "$T/cand_devstdout.csv" "$T/cand_stdout.csv"
mkfifo "$T/fifo"
timeout 60 cat "$T/fifo" >"$T/cand_fifo.csv" & reader=$!
expect_status 0 "-o a FIFO with its reader waiting" timeout 30 "$REPORT" export --db "$db" --run cand -o "$T/fifo"
wait "$reader"
check "-o a FIFO: the reader got the export" cmp -s "$T/cand_fifo.csv" "$T/cand_stdout.csv"
expect_status 1 "export -o into a missing directory" "$REPORT" export --db "$db" -o "$T/nodir/x.csv"
contains "$T/err" "cannot write '$T/nodir/x.csv': No such file or directory" "unwritable path and reason"

expect_status 0 "export stats (csv)" "$REPORT" export --db "$db" --what stats
golden export_stats.csv "$T/out"
check "stats: fwd, bwd and total per case" [ "$(($(wc -l <"$T/out") - 1))" = $((3 * $(sql "$db" "select count(*) from cases"))) ]
# columns: run_id,case_id,case_key,case_name,impl,status,phase,n,mean_ns,std_ns,median_ns,min_ns,max_ns,cv,p5_ns,p95_ns
cid=$(sql "$db" "select id from cases where run_id = 2 and case_key = '$flash2048'")
row() { awk -F, -v id="$cid" -v ph="$1" '$2 == id && $7 == ph' "$T/out"; }
field() { row "$1" | cut -d, -f"$2"; }
for ph in fwd bwd; do
	agg=$(sql "$db" "select count(*) || ' ' || avg(s.ns) || ' ' || min(s.ns) || ' ' || max(s.ns) from samples s join cases c on c.id = s.case_id where c.id = $cid and s.phase = '$ph' and s.iter >= c.warmup")
	read -r n mean mn mx <<<"$agg"
	check "stats $ph: one row" [ "$(row $ph | wc -l)" = 1 ]
	check "stats $ph: n = $n" [ "$(field $ph 8)" = "$n" ]
	check "stats $ph: mean $(field $ph 9) ~ sqlite $mean" close "$(field $ph 9)" "$mean" 1e-9
	check "stats $ph: min and max" [ "$(field $ph 12)/$(field $ph 13)" = "$mn/$mx" ]
	check "stats $ph: std ~ case_stats view" close "$(field $ph 10)" "$(sql "$db" "select std_ns from case_stats where case_id = $cid and phase = '$ph'")" 1e-6
	check "stats $ph: min <= p5 <= median <= p95 <= max" awk -F, '{ exit !($12 <= $15 && $15 <= $11 && $11 <= $16 && $16 <= $13) }' <<<"$(row $ph)"
done
check "stats total mean = fwd mean + bwd mean" close "$(field total 9)" "$(awk -v a="$(field fwd 9)" -v b="$(field bwd 9)" 'BEGIN { printf "%.17g", a + b }')" 1e-9

if command -v python3 >/dev/null; then
	for what in samples stats; do
		expect_status 0 "export $what json" "$REPORT" export --db "$db" --what $what --format json
		check "export $what json is valid" python3 -c 'import json,sys; json.load(sys.stdin)' <"$T/out"
	done
	"$REPORT" export --db "$db" --format json >"$T/samples.json" 2>/dev/null
	check "json samples: one row per stored sample" [ "$(python3 -c 'import json,sys; print(sum(len(t["rows"]) for t in json.load(sys.stdin)))' <"$T/samples.json")" = "$nsamples" ]
	expect_status 0 "export json with nothing matched" "$REPORT" export --db "$db" --where impl=nope --format json
	check "empty export is valid json" python3 -c 'import json,sys; d = json.load(sys.stdin); assert d[0]["rows"] == []' <"$T/out"
else
	echo "python3 not found: json validity not checked" >&2
fi
expect_status 0 "export csv with nothing matched" "$REPORT" export --db "$db" --where impl=nope
check "empty export is the header alone" [ "$(cat "$T/out")" = "run_id,case_id,case_key,case_name,impl,phase,iter,is_warmup,ns" ]

for fmt in $(format_names | grep -vxF "$(format_names FORMAT_DATA)"); do   # md, tex
	expect_status 2 "export refuses $fmt" "$REPORT" export --db "$db" --format $fmt
	contains "$T/err" "format '$fmt' is for reading, not for export \(valid: $(format_list FORMAT_DATA);" "refusal names the valid formats"
done
expect_status 2 "export unknown --what" "$REPORT" export --db "$db" --what everything
contains "$T/err" "unknown --what 'everything' \(valid: samples, stats\)" "unknown --what message"
expect_status 2 "export --where with an unknown parameter" "$REPORT" export --db "$db" --where imp=flash
expect_status 1 "export of an unknown run" "$REPORT" export --db "$db" --run nosuch
expect_status 1 "export on a missing database" "$REPORT" export --db "$T/none.db"
check "export creates no database" [ ! -e "$T/none.db" ]

finish history_export
