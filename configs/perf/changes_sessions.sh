#!/bin/bash
# configs/perf/changes_sessions.sh [TRIALS]: `report changes` on planted nightly histories whose
# nights are sessions of several runs (`runner run --repeat 3`) or one run, A/A and with a step;
# per row, of TRIALS x 4 series: how many got any change point, and how many a nightly gate fails
# (newest runs slower: exit 1). docs/performance.md, "Runs of one session count once".
# REPORT and MAKE_PLANTED name the binaries (default: build/).
set -euo pipefail
trials=${1:-100}
report=${REPORT:-build/report/report}
planted=${MAKE_PLANTED:-build/tests/make_planted}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# nights N, runs a night R ("1t": one run, a session of its own), factor F: N groups
nights() {
	local n=$1 runs=$2 factor=$3
	for ((i = 0; i < n; i++)); do printf 'nightly:%s:%s ' "$runs" "$factor"; done
}

# row TITLE SESSION_SHARE GROUP...
row() {
	local title=$1 share=$2
	shift 2
	rm -f "$dir/p.db"
	"$planted" "$dir/p.db" --trials "$trials" --cases 4 --between 0.03 --session "$share" \
		--seed 17 "$@" >/dev/null
	"$report" changes --db "$dir/p.db" --format csv >"$dir/out.csv" 2>/dev/null || true
	# change-point rows have 13 fields, the newest runs' 10 (each with the case key first)
	awk -F, -v title="$title" '
		NF == 13 && $13 != "verdict" { cp[$3 "|" $1] = 1 }
		NF == 10 && $10 != "newest" { series++; if ($10 ~ /^slower/) slower++ }
		END { n = 0; for (k in cp) n++
		      printf "| %s | %d | %d | %d |\n", title, series, n, slower }' "$dir/out.csv"
}

echo "| history (3% run-to-run noise) | series | with a change point | newest runs slower (exit 1) |"
echo "|---|---|---|---|"
row "A/A, 20 nights x 3 runs, a quarter of the variance the session's" 0.25 $(nights 20 3 1)
row "A/A, 20 nights x 3 runs, half the variance the session's" 0.5 $(nights 20 3 1)
row "A/A, 20 nights x 1 run" 0.25 nightly:20t:1
row "A/A, 60 nights x 1 run" 0.25 nightly:60t:1
row "5% slower for the last 6 of 20 nights x 3 runs (quarter)" 0.25 $(nights 14 3 1) $(nights 6 3 1.05)
row "5% slower for the last 6 of 20 nights x 3 runs (half)" 0.5 $(nights 14 3 1) $(nights 6 3 1.05)
row "5% slower for the last 6 of 20 nights x 1 run" 0.25 nightly:14t:1 nightly:6t:1.05
row "5% slower for the last 3 of 20 nights x 3 runs (quarter)" 0.25 $(nights 17 3 1) $(nights 3 3 1.05)
row "5% slower for the last 3 of 20 nights x 1 run" 0.25 nightly:17t:1 nightly:3t:1.05
