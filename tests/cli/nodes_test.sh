#!/usr/bin/env bash
# tests/cli/nodes_test.sh: `report nodes` on a merged database of real runs from two "nodes":
# three real runs (`runner run --repeat 3`) of a small sweep, copied as the second node (its own
# system row and run uuids), the samples planted — each run's times 1% apart from the others' on
# node 1 (the run-to-run spread), and on node 2 the same times 10% (or 1%) slower — then merged
# with `runner merge`. 10% slower: node 2 is flagged and the exit is 1; 1%: every node passes,
# exit 0; one run per node: the spread between runs is not measured, exit 2. Also: memory and GPU
# temperature bounds, the bands as options, contended runs, the cost column from a prices file,
# the chart, and nothing to compare (exit 2).
#   nodes_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"
export TMPDIR=$T

cat >"$T/nodes.yaml" <<'YAML'
name: cli-nodes
defaults: {warmup: 1, iters: 30}
benchmarks:
  - {suite: attention, impl: [naive, flash], seq_len: [17, 33], head_dim: 16, batch_size: 2, heads: 1}
  - {suite: attention, impl: sdpa, seq_len: 17, head_dim: 16}
YAML
expect_status 0 "node 1's runs" "$RUNNER" run "$T/nodes.yaml" --db "$T/node1.db" --repeat 3
# tight planted times: 1 ms + up to 0.6%, by iteration; each run 1% from the next
sql "$T/node1.db" "update samples set ns = (1000000 + (iter % 7) * 1000 + (select ord from cases c where c.id = case_id) * 50000) * (1 + 0.01 * ((select run_id from cases c where c.id = case_id) % 3 - 1)); update cases set gpu_temp_c = 60, cpu_wait = 0 where status = 'ok'"
# node2 FACTOR [SQL]: node 1 as another machine, its samples FACTOR times node 1's
node2() {
	local node1=${NODE1:-$T/node1.db}
	rm -f "$T/node2.db"
	cp "$node1" "$T/node2.db"
	sql "$T/node2.db" "update systems set hostname = 'node2', fingerprint = 'node2-fingerprint';
		update runs set uuid = (CASE substr(uuid, 1, 1) WHEN 'f' THEN 'e' ELSE 'f' END) || substr(uuid, 2),
			group_id = 'node2-' || group_id;
		update samples set ns = cast(ns * $1 as integer); ${2:-}"
	rm -f "$T/merged.db"
	"$RUNNER" merge --db "$T/merged.db" "$node1" "$T/node2.db" >/dev/null
}
ok_cases=$(sql "$T/node1.db" "select count(distinct case_key) from cases where status = 'ok'")
check "the tiny sweep has ok cases" [ "$ok_cases" -ge 2 ]

node2 1.10
expect_status 1 "10% slower node: exit 1" "$REPORT" nodes --db "$T/merged.db" --format csv
check "node2 is flagged in every ok case" [ "$(grep -c ',node2,3,.*,✗,' "$T/out")" = "$ok_cases" ]
check "node 1 is not (of two nodes the slower is flagged)" [ "$(awk -F, 'NF == 14 && $2 != "node2" && /✗/' "$T/out" | wc -l)" = 0 ]
expect_status 1 "10% slower node: the summary first" "$REPORT" nodes --db "$T/merged.db"
check "the report opens with the nodes" [ "$(grep -m1 '^### ' "$T/out")" = "### nodes" ]
contains "$T/out" "^\| node2 +\| +$ok_cases \| +$ok_cases \| slow on $ok_cases of $ok_cases cases — " "node2: slow on every case, named"
contains "$T/out" "^\| $(hostname) +\| +$ok_cases \| +0 \| " "node 1: none out of bounds"
expect_status 1 "10% slower node (md)" "$REPORT" nodes --db "$T/merged.db"
contains "$T/out" "a node is out of bounds" "the summary says so"
contains "$T/out" "throughput spread" "spread column"
expect_status 1 "10% slower node (summary, a CI comment)" "$REPORT" nodes --db "$T/merged.db" --format summary
check "summary: the marker, then the verdict" [ "$(sed -n 1,2p "$T/out")" = "$(printf '<!-- benchdb: report nodes -->\n### ❌ OUT OF BOUNDS')" ]
contains "$T/out" "slow on $ok_cases of $ok_cases cases" "summary: the node named"
# a merged database damaged after it was written (its samples table's pages are another table's):
# its data cannot be read, so it cannot tell (2), never "a node is out of bounds" (1)
cp "$T/merged.db" "$T/damaged.db"
sql "$T/damaged.db" "pragma writable_schema = on; update sqlite_master set rootpage = (select rootpage from sqlite_master where name = 'runs') where name = 'samples'" >/dev/null
expect_status 2 "a damaged merged database: cannot tell, not out of bounds" "$REPORT" nodes --db "$T/damaged.db"
contains "$T/err" "damaged.db: cannot read samples: " "names the file and what could not be read"
lacks "$T/out" "out of bounds" "no verdict from a database that cannot be read"
expect_status 0 "a 15% band passes 10%" "$REPORT" nodes --db "$T/merged.db" --throughput-band 15
contains "$T/out" "noise between runs: within a session measured" "the run-to-run spread is measured from the repeated runs"

node2 1.01
expect_status 0 "1% slower node: exit 0" "$REPORT" nodes --db "$T/merged.db"
contains "$T/out" "no node out of bounds" "the summary says so"
lacks "$T/out" "\| ✗ " "no ✗ at 1%"
contains "$T/out" "\| ✓ " "within bounds shown where the interval lies inside the band"
contains "$T/out" "these runs flag a node [0-9.]+% slower than the others 90% of the time" "what a pass is worth"

# a slow node whose runs waited for a CPU: contended, not out of bounds (exit 2)
node2 1.10 "update cases set cpu_wait = 0.4 where status = 'ok'"
expect_status 2 "a slow node whose runs waited for a CPU: exit 2" "$REPORT" nodes --db "$T/merged.db" --format csv
check "node2 contended in every ok case" [ "$(grep -c ',node2,3,.*,contended,' "$T/out")" = "$ok_cases" ]

# one run per node: the spread between runs is not measured, so nodes cannot tell
expect_status 0 "node 1's single run" "$RUNNER" run "$T/nodes.yaml" --db "$T/single.db"
sql "$T/single.db" "update samples set ns = 1000000 + (iter % 7) * 1000 + case_id * 50000; update cases set cpu_wait = 0"
NODE1=$T/single.db node2 1.10
expect_status 2 "one run per node: cannot tell" "$REPORT" nodes --db "$T/merged.db"
contains "$T/out" "noise between runs is not measured \(one run per node\): cannot tell" "says why"
contains "$T/out" "with a single run: a node's run-to-run spread needs repeated runs" "says what to do"
expect_status 2 "one run per node (summary)" "$REPORT" nodes --db "$T/merged.db" --format summary
check "summary: cannot tell, never a pass" [ "$(sed -n 2p "$T/out")" = "### ⚠️ CANNOT TELL" ]

node2 1.0 "update cases set peak_bytes = cast(peak_bytes * 1.05 as integer)"
expect_status 1 "5% more memory: exit 1" "$REPORT" nodes --db "$T/merged.db" --format csv
check "memory flagged on both (they disagree)" [ "$(awk -F, '$13 == "✗"' "$T/out" | wc -l)" = "$((2 * ok_cases))" ]
expect_status 0 "a 10% memory band passes it" "$REPORT" nodes --db "$T/merged.db" --memory-band 10

node2 1.0 "update cases set gpu_temp_c = 75, gpu_sm_clock_mhz = 1400, gpu_throttle = 'sw_thermal' where status = 'ok'"
expect_status 1 "15 °C hotter: exit 1" "$REPORT" nodes --db "$T/merged.db" --format csv
contains "$T/out" "node2,.*,75,1400,sw_thermal," "temperature, clock and throttle shown"
expect_status 0 "a 20 °C band passes it" "$REPORT" nodes --db "$T/merged.db" --temp-band 20

# cost: a prices file keyed by cpu
printf 'prices:\n  cpu: 0.36\n  "NVIDIA A10": 0.60\n' >"$T/prices.yaml"
expect_status 0 "cost column" "$REPORT" nodes --db "$T/merged.db" --temp-band 20 --prices "$T/prices.yaml" --format csv
contains "$T/out" "cost_per_1K_samples_USD" "the cost column"
# 0.36 USD/h = 1e-4 USD/s: per 1K samples = 0.1 / samples/s
check "cost per 1K samples = price / 3600 / samples/s × 1000" awk -F, 'NF == 15 && $4 + 0 > 0 { n++; if (($15 - 100 / $4 / 1000) ^ 2 > 1e-12) bad = 1 } END { exit bad || !n }' "$T/out"
expect_status 0 "report --compare with a price" "$REPORT" --db "$T/node1.db" --compare naive --price 2.5 --format csv
contains "$T/out" "^case,impl,priced_as,price_USD_h,samples_s,cost_per_1K_samples_USD,case_cost_USD" "compare: the cost table"
check "compare: every ok case priced as cpu at 2.5" [ "$(grep -c ',cpu,2.5,' "$T/out")" = "$ok_cases" ]
expect_status 0 "report --compare without a price has no cost" "$REPORT" --db "$T/node1.db" --compare naive
lacks "$T/out" "cost per 1K" "no cost table without a price"
expect_status 0 "compare: a GPU-only price table leaves the cpu unpriced" "$REPORT" --db "$T/node1.db" --compare naive --prices <(printf 'prices: {"NVIDIA H100 80GB HBM3": 2.0}\n')
contains "$T/out" "without a price \(no --price, and no entry for 'cpu'" "says which device has no price"
expect_status 0 "writeup with a price" "$REPORT" writeup --db "$T/node1.db" -o "$T/wu" --price 0.36
contains "$T/wu/README.md" "^## Cost" "writeup: a cost section"
contains "$T/wu/README.md" "cost of the run: " "writeup: the run's cost"
printf 'prices: [1, 2]\n' >"$T/bad_prices.yaml"
expect_status 2 "a bad prices file" "$REPORT" nodes --db "$T/merged.db" --prices "$T/bad_prices.yaml"
contains "$T/err" "bad_prices.yaml:1:1: expected .prices:. a mapping" "names the file"
# a prices file that cannot be read says why (a directory was libyaml's "1:1: input error")
expect_status 2 "a missing prices file" "$REPORT" --db "$T/node1.db" --compare naive --prices "$T/no_prices.yaml"
contains "$T/err" "no_prices.yaml: cannot read the prices file: No such file or directory" "names the file and the reason"
expect_status 2 "a directory as the prices file" "$REPORT" --db "$T/node1.db" --compare naive --prices "$T"
contains "$T/err" "$T: cannot read the prices file: it is a directory" "names the directory"
# a device priced twice, or two tables: refused where it is, not the first silently taken
printf 'prices:\n  cpu: 0.05\n  "NVIDIA A10": 0.60\n  cpu: 9\n' >"$T/dup_prices.yaml"
expect_status 2 "a device priced twice" "$REPORT" --db "$T/node1.db" --compare naive --prices "$T/dup_prices.yaml"
contains "$T/err" "dup_prices.yaml:4:3: prices: 'cpu' is given twice \(first on line 2\)" "names the file, line and key"
printf 'prices: {cpu: 0.05}\nprices: {cpu: 9}\n' >"$T/dup_tables.yaml"
expect_status 2 "two prices tables" "$REPORT" nodes --db "$T/merged.db" --prices "$T/dup_tables.yaml"
contains "$T/err" "dup_tables.yaml:2:1: .prices:. is given twice \(first on line 1\)" "names the file and both lines"
# a price that is no price (strtod takes nan and inf; a negative --price was taken as none, and
# -1, the commands' "not given", still was):
# refused, not a cost table of nan or inf, nor silently no cost table
printf 'prices:\n  cpu: nan\n' >"$T/nan_prices.yaml"
expect_status 2 "a nan price in the prices file" "$REPORT" --db "$T/node1.db" --compare naive --prices "$T/nan_prices.yaml"
contains "$T/err" "nan_prices.yaml:2:8: prices: 'cpu' needs a price in USD per hour" "names the file, line and key"
for bad in nan inf -3 -1 abc; do
	expect_status 2 "--price $bad" "$REPORT" --db "$T/node1.db" --compare naive --price "$bad"
	contains "$T/err" "--price expects USD per device-hour, a finite number >= 0" "--price $bad: says why"
done

if command -v gnuplot >/dev/null; then
	expect_status 0 "chart" "$REPORT" nodes --db "$T/merged.db" --temp-band 20 --chart "$T"
	check "chart written" [ -s "$T/nodes_throughput.png" ] && [ -s "$T/nodes_throughput.svg" ]
fi

expect_status 2 "one node only: nothing to compare" "$REPORT" nodes --db "$T/node1.db"
contains "$T/err" "more than one host" "says why"
# two nodes merged that ran no case in common (another sweep): not "merge the databases first"
node2 1.0 "update cases set case_key = case_key || '-other'"
expect_status 2 "two nodes, no case in common: nothing to compare" "$REPORT" nodes --db "$T/merged.db"
contains "$T/err" "hosts such as .*node2.* ran no case in common \(run the same sweep on every node\)" "says why, naming the hosts"
lacks "$T/err" "merge the nodes' databases first" "not told to merge what is merged"

finish nodes
