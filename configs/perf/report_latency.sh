#!/usr/bin/env bash
# configs/perf/report_latency.sh: time `report table`, `compare` and `warmup` on a generated
# database whose measured run holds 1,008,000 samples, next to a peer measured in the same run:
# the sqlite3 shell computing per-case mean/std over the same run through the case_stats view.
#   configs/perf/report_latency.sh [BUILD_DIR]        (default build/)
# Prints the median wall time of 5 runs of each, and the ratio to the sqlite3 peer.
set -euo pipefail
build=${1:-build}
db=$(mktemp -d)/report-latency.db
"$build/tests/make_fixture" "$db" --cases 4800 >/dev/null
samples=$(sqlite3 "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.run_id = 1")
echo "database: $db, run 1 holds $samples samples"

# median of 5 wall-clock runs, in seconds
median_time() {
	local t=()
	for _ in 1 2 3 4 5; do
		local s=$(date +%s.%N)
		"$@" >/dev/null
		local e=$(date +%s.%N)
		t+=("$(echo "$e - $s" | bc -l)")
	done
	printf '%s\n' "${t[@]}" | sort -g | sed -n 3p
}

peer=$(median_time sqlite3 "$db" "select count(*), sum(mean_ns), sum(std_ns) from case_stats where run_id = 1")
printf '%-38s %8.3f s\n' "peer: sqlite3 case_stats (run 1)" "$peer"
for cmd in "table" "compare --baseline naive" "warmup"; do
	# shellcheck disable=SC2086
	t=$(median_time "$build/report/report" $cmd --db "$db" --run base)
	printf '%-38s %8.3f s   %.2fx the peer\n' "report $cmd" "$t" "$(echo "$t / $peer" | bc -l)"
done
rm -f "$db"
