#!/usr/bin/env bash
# configs/perf/eta.sh: how far the runner's ETA is from the truth on a sweep (docs/performance.md,
# "ETA"). Runs the sweep with its progress on a pipe (one line per finished case, with the
# elapsed time and the ETA), then for every line compares the ETA with the time the sweep really
# still took: ratio = ETA / (end - elapsed). A ratio of 2 is twice the truth, 0.5 half of it.
#   configs/perf/eta.sh RUNNER SWEEP.yaml OUT_DIR [runner run options...]
# Prints the load before and after, a line per case, and the summary.
set -u
RUNNER=$1 SWEEP=$2 OUT=$3
shift 3
mkdir -p "$OUT"
rm -f "$OUT/eta.db"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
"$RUNNER" run "$SWEEP" --db "$OUT/eta.db" "$@" 2>"$OUT/progress.log" >"$OUT/run.out"
status=$?
end=$(date +%s.%N)
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); runner exit $status; $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }') s in all"
# "[i/N] name: status ... (x s; elapsed M:SS, eta M:SS)" -> seconds
awk -v total="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" '
function secs(t,   n, p) { n = split(t, p, ":"); return n == 3 ? p[1] * 3600 + p[2] * 60 + p[3] : p[1] * 60 + p[2] }
/^\[[0-9]+\/[0-9]+\]/ && /eta [0-9:]+\)$/ {
	match($0, /elapsed [0-9:]+/); el = secs(substr($0, RSTART + 8, RLENGTH - 8))
	match($0, /eta [0-9:]+\)$/); eta = secs(substr($0, RSTART + 4, RLENGTH - 5))
	split($1, ix, /[\[\]\/]/); i = ix[2]; n = ix[3]
	truth = total - el
	if (i == n) next
	r = truth > 0 ? eta / truth : 0
	printf "case %3d/%d  elapsed %6.0f s  eta %6.0f s  truth %6.0f s  ratio %6.2f\n", i, n, el, eta, truth, r
	# judged by the ratio while a minute or more is left; in the last minute, by seconds
	if (truth < 60) { tail++; e = eta - truth; if (e < 0) e = -e; if (e > tail_err) tail_err = e; next }
	cnt++; if (r > 2 || r < 0.5) { bad++; last_bad = i }
	if (r > worst_hi) worst_hi = r; if (worst_lo == "" || r < worst_lo) worst_lo = r
	if (i > 1) { if (r > hi2) hi2 = r; if (lo2 == "" || r < lo2) lo2 = r }
}
END {
	printf "%d estimates with a minute or more left: ratio %.2f to %.2f (from case 2 on: %.2f to %.2f); %d outside 0.5-2x%s; %d in the last minute: off by %.0f s at most\n",
		cnt, worst_lo, worst_hi, lo2, hi2, bad, bad ? sprintf(", the last after case %d", last_bad) : "", tail, tail_err
}' "$OUT/progress.log"
