#!/usr/bin/env bash
# configs/perf/verdict_aa.sh BUILD_DIR [REPS]: a real A/A test of `report regress` on this machine
# (docs/performance.md, "Measurement validity"). REPS times (default 5): 4 baseline runs and 1
# candidate run of the same sweep and the same binary, one thread, then `report regress` of the
# candidate against the 4 runs (labels repK-base, repK-cand) and against the last baseline run
# alone. Prints one line per repetition with both exit codes; no change was made, so every
# exit 1 is a false alarm.
set -u
build=${1:?usage: verdict_aa.sh BUILD_DIR [REPS]}
reps=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
db=${VERDICT_AA_DB:-verdict_aa.db}
rm -f "$db" "$db-wal" "$db-shm"
export OMP_NUM_THREADS=1
for ((k = 0; k < reps; k++)); do
	for ((r = 0; r < 4; r++)); do
		"$build/runner/runner" run "$here/verdict_aa_cpu.yaml" --db "$db" --label "rep$k-base" >/dev/null 2>&1 || exit 1
	done
	"$build/runner/runner" run "$here/verdict_aa_cpu.yaml" --db "$db" --label "rep$k-cand" >/dev/null 2>&1 || exit 1
	"$build/report/report" regress --db "$db" --baseline-label "rep$k-base" --candidate-label "rep$k-cand" >"$db.rep$k.md" 2>&1
	runs=$?
	"$build/report/report" regress --db "$db" --baseline-last 1 --candidate-label "rep$k-cand" >"$db.rep$k.single.md" 2>&1
	single=$?
	echo "rep $k: 4 baseline runs: exit $runs ($(grep -o '[0-9]* cases compared: [0-9]* slower' "$db.rep$k.md")); one baseline run: exit $single ($(grep -o '[0-9]* cases compared: [0-9]* slower' "$db.rep$k.single.md"))"
done
