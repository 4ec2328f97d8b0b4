#!/usr/bin/env bash
# tests/cli/marks_test.sh: contention and instability are visible in every output: `report`
# (table and pivot), `plot` (ringed points), `writeup`, `warmup`, `export --what stats`,
# `compare --baseline` (its verdict says contended; a mark column says unstable) and the cost
# table of compare and writeup with a price (issue 25). On
# the fixture database (tests/make_fixture.c), cases of known cpu_wait and rse are planted by SQL
# in run "cand": naive S512 waited 62% (contended), sdpa S512 4% (below the 5% level: not
# marked), naive S256 unknown (NULL: not marked), flash S1024 has a median uncertain by 4.1%
# (unstable, above 2.5%); everything else waited 0% and has the rse its 30 iterations give (well
# under 2.5%).
#   marks_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
REPORT=$2
MAKE_FIXTURE=$3
source "$(dirname "$0")/lib.sh"

db=$T/f.db
check "fixture written" "$MAKE_FIXTURE" "$db"
cand="(select id from runs where label = 'cand')"
sql "$db" "update cases set cpu_wait = 0 where run_id = $cand;
	update cases set cpu_wait = 0.62 where run_id = $cand and impl = 'naive' and seq_len = 512;
	update cases set cpu_wait = 0.04 where run_id = $cand and impl = 'sdpa' and seq_len = 512;
	update cases set cpu_wait = NULL where run_id = $cand and impl = 'naive' and seq_len = 256;
	update cases set rse = 0.041 where run_id = $cand and impl = 'flash' and seq_len = 1024"
NAIVE512='naive float32 fwd\+bwd B8 H1 S512 D64'
FLASH1024='flash float32 fwd\+bwd B8 H1 S1024 D64'

# ---- report (table): a mark column, only where a case is marked --------------------------------
expect_status 0 "report table (csv)" "$REPORT" --db "$db" --run cand --format csv
check "a mark column" grep -q '^impl,.*,status,mark,' "$T/out"
check "the contended case marked with its wait" grep -q "^naive,.*,512,.*,ok,contended (waited 62%)," "$T/out"
check "the unstable case marked with its error" grep -q "^flash,.*,1024,.*,ok,unstable (median +-4.1%)," "$T/out"
check "exactly two cases marked: 4% and unknown waits are not" [ "$(grep -c ',ok,\(contended\|unstable\)' "$T/out")" = 2 ]
expect_status 0 "report table (md)" "$REPORT" --db "$db" --run cand
contains "$T/out" "^- contended: the case waited for a CPU more than 5% of its measured time" "the md note says what contended means"
contains "$T/out" "^- unstable: the median's estimated relative standard error" "and what unstable means"
expect_status 0 "report table of the unmarked run" "$REPORT" --db "$db" --run base --format csv
lacks "$T/out" "mark" "no mark column where no case is marked"
expect_status 0 "report --pivot impl" "$REPORT" --db "$db" --run cand --pivot impl
contains "$T/out" "^- $NAIVE512: contended \(waited 62%\)" "the pivot names the contended case in a note"
contains "$T/out" "^- $FLASH1024: unstable" "and the unstable one"

# ---- export --what stats: cpu_wait, rse and mark columns ----------------------------------------
expect_status 0 "export stats" "$REPORT" export --what stats --db "$db" --run cand --format csv
check "export has cpu_wait, rse and mark columns after impl_info" grep -q '^run_id,.*,impl_info,cpu_wait,rse,mark[,$]' "$T/out"
csv_cols "$T/out" case_name cpu_wait rse mark >"$T/cols"   # by name: the case's parameters follow
check "the contended case's rows: cpu_wait 0.62 and the mark" awk -F, '$1 ~ /^naive.*S512 / { n++; if ($2 != 0.62 || $4 != "contended (waited 62%)") bad = 1 } END { exit bad || n != 3 }' "$T/cols"
check "the 4% case: its cpu_wait, no mark" awk -F, '$1 ~ /^sdpa.*S512 / { n++; if ($2 != 0.04 || $4 != "") bad = 1 } END { exit bad || n != 3 }' "$T/cols"
check "the unknown wait: blank, no mark" awk -F, '$1 ~ /^naive.*S256 / { n++; if ($2 != "" || $4 != "") bad = 1 } END { exit bad || n != 3 }' "$T/cols"
check "the unstable case: rse 0.041 and the mark" awk -F, '$1 ~ /^flash.*S1024 / { n++; if ($3 != 0.041 || $4 !~ /^unstable/) bad = 1 } END { exit bad || n != 3 }' "$T/cols"
check "the others' rse is estimated from their iterations, under 2.5%" awk -F, '$1 !~ /S1024/ && $3 != "" { n++; if ($3 >= 0.025) bad = 1 } END { exit bad || n < 20 }' "$T/cols"

# ---- compare --baseline: contended is the verdict, an unstable side is marked --------------------
expect_status 0 "compare --baseline naive" "$REPORT" compare --db "$db" --run cand --baseline naive --format csv
check "compare: a mark column before the verdict" grep -q ',cpu_wait_%,mark,verdict[,$]' "$T/out"
csv_cols "$T/out" case impl mark verdict >"$T/cols"
check "compare: the pairs against the contended naive S512 are contended, not faster" \
	awk -F, '$1 ~ /S512 / { n++; if ($4 != "contended") bad = 1 } END { exit bad || n != 2 }' "$T/cols"
check "compare: flash S1024, the unstable candidate, marked" \
	grep -q "^flash float32 fwd+bwd B8 H1 S1024 D64,flash,unstable (candidate +-4.1%),[a-z]*$" "$T/cols"
check "compare: no other pair marked" [ "$(grep -c ',unstable (' "$T/out")" = 1 ]
expect_status 0 "compare --baseline flash" "$REPORT" compare --db "$db" --run cand --baseline flash --format csv
csv_cols "$T/out" case impl mark verdict >"$T/cols"
check "compare: the pairs against the unstable flash S1024 are marked on the baseline side" \
	awk -F, '$1 ~ /S1024 / { n++; if ($3 != "unstable (baseline +-4.1%)") bad = 1 } END { exit bad || n != 2 }' "$T/cols"
expect_status 0 "compare (md)" "$REPORT" compare --db "$db" --run cand --baseline naive
contains "$T/out" "^- unstable \(1\): a side's median is uncertain by more than \+-5% \(95%\) within its run" "compare's note says what unstable means"
contains "$T/out" "^- contended \(2\): a side waited for a CPU" "and what contended means"
expect_status 0 "compare of the unmarked run" "$REPORT" compare --db "$db" --run base --baseline naive --format csv
lacks "$T/out" "mark|unstable" "no mark column where no side is unstable"

# ---- the cost table (compare and writeup with a price): samples/s and cost per 1K samples of a
# contended case are the machine's load's, so the case is marked there too
expect_status 0 "compare with a price (csv)" "$REPORT" compare --db "$db" --run cand --baseline naive --price 1 --format csv
sed -n '/^case,impl,priced_as,/,/^$/p' "$T/out" >"$T/cost"
check "cost: a mark column" grep -q '^case,impl,priced_as,.*,case_cost_USD,mark$' "$T/cost"
check "cost: the contended case marked with its wait" grep -q "^naive float32 fwd+bwd B8 H1 S512 D64,naive,cpu,.*,contended (waited 62%)$" "$T/cost"
check "cost: the unstable case marked" grep -q "^flash float32 fwd+bwd B8 H1 S1024 D64,flash,cpu,.*,unstable (median +-4.1%)$" "$T/cost"
check "cost: exactly two cases marked" [ "$(grep -c ',\(contended\|unstable\) (' "$T/cost")" = 2 ]
expect_status 0 "compare of the unmarked run with a price" "$REPORT" compare --db "$db" --run base --baseline naive --price 1 --format csv
check "cost of the unmarked run: no mark column" grep -q '^case,impl,priced_as,.*,case_cost_USD$' "$T/out"

# ---- warmup: a mark column -----------------------------------------------------------------------
expect_status 0 "warmup (csv)" "$REPORT" warmup --db "$db" --run cand --format csv
check "warmup marks the contended case" grep -q "^naive float32 fwd+bwd B8 H1 S512 D64,.*,contended (waited 62%)$" "$T/out"
check "warmup marks two cases" [ "$(grep -c ',\(contended\|unstable\)' "$T/out")" = 2 ]

# ---- plot: the marked points ringed, the cases named -------------------------------------------
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
	expect_status 0 "plot latency" "$REPORT" plot latency --db "$db" --run cand -o "$T/charts"
	contains "$T/charts/latency.svg" "<text>contended or unstable \(notes\)</text>" "the rings have a legend"
	cat "$T/out" "$T/err" >"$T/notes"
	contains "$T/notes" "ringed: $NAIVE512: contended \(waited 62%\)" "the ringed contended case named"
	contains "$T/notes" "ringed: $FLASH1024: unstable" "the ringed unstable case named"
	check "two points ringed" [ "$(grep -c 'ringed:' "$T/notes")" = 2 ]
	expect_status 0 "plot speedup" "$REPORT" plot speedup --db "$db" --run cand -o "$T/charts"
	cat "$T/out" "$T/err" >"$T/notes"
	contains "$T/notes" "ringed: $NAIVE512: contended" "a contended baseline rings the bars against it"
	expect_status 0 "plot latency of the unmarked run" "$REPORT" plot latency --db "$db" --run base -o "$T/base"
	lacks "$T/base/latency.svg" "contended" "no ring legend where nothing is marked"
else
	note "no gnuplot: the charts' rings are not checked"
fi

# ---- writeup: the conditions section, the marked tables ------------------------------------------
expect_status 0 "writeup" "$REPORT" writeup --db "$db" --run cand -o "$T/w"
doc=$(ls "$T"/w/*.md | head -1)
contains "$doc" "^## Measurement conditions" "a conditions section"
contains "$doc" "\*\*1 of 12 ok cases were measured under contention\*\*.*up to 62%" "it counts the contended cases"
contains "$doc" "^- \`$NAIVE512\`: contended \(waited 62%\)" "and names them (a code span)"
contains "$doc" "\| contended \(waited 62%\) +\|" "its tables carry the mark column"
expect_status 0 "writeup of the unmarked run" "$REPORT" writeup --db "$db" --run base -o "$T/wb"
contains "$(ls "$T"/wb/*.md | head -1)" "No case waited for a CPU more than 5% of its measured time" "a quiet run says so"

finish marks
