#!/usr/bin/env bash
# configs/perf/verdict_aa.sh BUILD_DIR [REPS]: a real A/A test of `report regress` on this machine
# (docs/performance.md, "Measurement validity"). REPS times (default 5): 4 baseline runs (one
# `runner run --repeat 4`: the cases in a new random order each run) and 1 candidate run of the
# same sweep and the same binary, one thread, then `report regress` of the candidate against the
# 4 runs (labels repK-base, repK-cand) and against the last baseline run alone. Prints one line
# per repetition with both exit codes and the largest cpu_wait of each side; no change was made,
# so every exit 1 is a false alarm (exit 2 with "contended": the machine was busy).
set -u
build=${1:?usage: verdict_aa.sh BUILD_DIR [REPS]}
reps=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
db=${VERDICT_AA_DB:-verdict_aa.db}
rm -f "$db" "$db-wal" "$db-shm"
export OMP_NUM_THREADS=1
for ((k = 0; k < reps; k++)); do
	"$build/runner/runner" run "$here/verdict_aa_cpu.yaml" --db "$db" --label "rep$k-base" --repeat 4 >/dev/null 2>&1 || exit 1
	"$build/runner/runner" run "$here/verdict_aa_cpu.yaml" --db "$db" --label "rep$k-cand" >/dev/null 2>&1 || exit 1
	"$build/report/report" regress --db "$db" --baseline-label "rep$k-base" --candidate-label "rep$k-cand" >"$db.rep$k.md" 2>&1
	runs=$?
	"$build/report/report" regress --db "$db" --baseline-last 1 --candidate-label "rep$k-cand" >"$db.rep$k.single.md" 2>&1
	single=$?
	wait=$(sqlite3 "$db" "select group_concat(w, ' / ') from (select printf('%.2f', max(c.cpu_wait)) as w from cases c join runs r on r.id = c.run_id where r.label in ('rep$k-base', 'rep$k-cand') group by r.label order by r.label)")
	echo "rep $k: 4 baseline runs: exit $runs ($(grep -Eo '[0-9]+ cases compared: [0-9]+ slower.*contended|[0-9]+ cases compared: [0-9]+ slower' "$db.rep$k.md")); one baseline run: exit $single ($(grep -Eo '[0-9]+ cases compared: [0-9]+ slower' "$db.rep$k.single.md")); max cpu_wait base / cand: $wait"
done
