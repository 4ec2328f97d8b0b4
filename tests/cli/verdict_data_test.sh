#!/usr/bin/env bash
# tests/cli/verdict_data_test.sh: the verdicts CI gates on (regress, changes, nodes) on partial and
# damaged data of known truth, and the runs their selectors pick: planted runs
# (tests/make_planted.c) edited with sqlite3 the way a damaged or unusual database is — samples
# missing, a case key measured twice in one run, files merged out of order. Each
# check states what the data is and the verdict and exit status it must get; none depends on
# timings.
#   verdict_data_test.sh REPORT MAKE_PLANTED RUNNER
set -u
REPORT=$1
PLANTED=$2
RUNNER=$3
source "$(dirname "$0")/lib.sh"
planted() { local db=$1; shift; rm -f "$db"; "$PLANTED" "$db" "$@" >/dev/null; }

# ---- nodes: a node without a readable run of a case is not compared, never judged -------------
# Three nodes alike (3 runs each); node h3's runs of one case lost their samples: that node-case
# cannot be compared. It must not read as slow (out of bounds, exit 1): exit 2, and said why.
planted "$T/nodes.db" --cases 3 --between 0.02 --seed 11 --one-system n@h1:3:1 n@h2:3:1 n@h3:3:1
expect_status 0 "three nodes alike: no node out of bounds (--lenient: ~ within the band passes)" "$REPORT" nodes --db "$T/nodes.db" --lenient
sql "$T/nodes.db" "delete from samples where case_id in (select c.id from cases c join runs r on r.id = c.run_id join systems s on s.id = r.system_id where s.hostname = 'h3' and c.ord = 0)"
expect_status 2 "a node-case without samples: cannot tell (exit 2), not out of bounds" \
	"$REPORT" nodes --db "$T/nodes.db" --format csv
lacks "$T/out" ',h3,0,.*✗' "the node without samples is not marked out of bounds"
contains "$T/out" ',h3,0,.*,\?,' "it is marked ? (not compared)"
# the spread across nodes is of the nodes compared: h1 and h2 (max - min) / median, not h3's 0
check "the throughput spread of that case leaves out the node not compared" awk -F, '
	/^case,node,/ { t = 1; next } /^case,nodes,/ { t = 2; next } /^$/ { t = 0 }
	t == 1 && $2 != "h3" && $1 ~ /S256 / { x[++n] = $4 }
	t == 2 && $1 ~ /S256 / { got = $3 }
	END { lo = x[1] < x[2] ? x[1] : x[2]; hi = x[1] < x[2] ? x[2] : x[1]
	      want = 100 * (hi - lo) / ((hi + lo) / 2); exit !(n == 2 && (got - want) ^ 2 < 1e-6) }' "$T/out"
expect_status 2 "... (md)" "$REPORT" nodes --db "$T/nodes.db"
contains "$T/out" "1 node-case not compared \(\?\): no run of the node" "the notes say why"
contains "$T/out" "some comparisons cannot tell" "the verdict says it cannot tell"
lacks "$T/out" "^\| h3 .*slow on" "h3 is not called slow"
# a band that is not a number is a usage error (2), never every node out of bounds (1)
sql "$T/nodes.db" "update cases set peak_bytes = 1000000"
expect_status 2 "nodes --memory-band nan: a usage error" "$REPORT" nodes --db "$T/nodes.db" --memory-band nan
contains "$T/err" "--memory-band and --temp-band must be numbers, 0 or more" "says which options"
expect_status 2 "nodes --temp-band nan: a usage error" "$REPORT" nodes --db "$T/nodes.db" --temp-band nan
# two nodes, one of them without samples of the case: nothing to compare it with either
planted "$T/nodes2.db" --cases 3 --between 0.02 --seed 12 --one-system n@h1:3:1 n@h2:3:1
sql "$T/nodes2.db" "delete from samples where case_id in (select c.id from cases c join runs r on r.id = c.run_id join systems s on s.id = r.system_id where s.hostname = 'h2' and c.ord = 0)"
expect_status 2 "two nodes, one without samples of a case: cannot tell" \
	"$REPORT" nodes --db "$T/nodes2.db" --format csv
check "both nodes of that case are ? (not compared)" [ "$(grep -c ',[?],' "$T/out")" = 2 ]
# nodes whose latest runs are of different code: only the nodes on the code of the key's newest
# run are compared. h1 is 20% slower, and ran only the old commit (left out of the new job); the
# new commit is 20% slower on h2 and h3 (4 runs each at different times, 1% noise): h1 read
# within bounds beside them (exit 0), a slow node passed. Now it is not compared (?): exit 2.
planted "$T/code.db" --cases 2 --between 0.01 --seed 3 --one-system old@h1:4t:1.2 old@h2:4t:1 old@h3:4t:1 new@h2:4t:1.2 new@h3:4t:1.2
expect_status 2 "a node left on old code beside a slower new code: cannot tell, not within" "$REPORT" nodes --db "$T/code.db" --format csv
check "... h1 is ? on both cases, h2 and h3 within (✓)" [ "$(awk -F, '/^case,node,/ { t = 1; next } /^$/ { t = 0 } t { print $2 "," $12 }' "$T/out" | sort | uniq -c | tr -s ' ' | paste -sd';')" = " 2 h1,?; 2 h2,✓; 2 h3,✓" ]
check "... h1 within bounds on none, the others on both" [ "$(csv_cols "$T/out" node summary | sort | paste -sd';')" = "h1,cannot tell on 2 of 2 cases;h2,within bounds on 2 of 2 cases;h3,within bounds on 2 of 2 cases" ]
expect_status 2 "... (md): the notes say why" "$REPORT" nodes --db "$T/code.db"
contains "$T/out" "2 node-cases whose latest run is of other code \(h1: " "names the node and the cases"
# the same, the old-code node as fast as the others were: it was "fast" (out of bounds, exit 1)
# for what the code did; not compared now
planted "$T/code2.db" --cases 2 --between 0.01 --seed 3 --one-system old@h1:4t:1 old@h2:4t:1 old@h3:4t:1 new@h2:4t:1.2 new@h3:4t:1.2
expect_status 2 "a node on old code, the new code slower: not out of bounds (exit 2, not 1)" "$REPORT" nodes --db "$T/code2.db"
lacks "$T/out" "^\| h1 .*fast on" "h1 is not called fast"

# every-node jobs merged into one file (runner kube --merge, nodes-JOB.db of several jobs): four
# jobs ran on h1-h3, the fifth on h2 and h3 only (h1's pod failed). h1 was vouched for on the
# fourth job's run (exit 0); it is not in the newest job of the case: ?, not compared, exit 2.
J="n@h1:1:1 n@h2:1:1 n@h3:1:1"
planted "$T/jobs.db" --cases 2 --between 0.01 --seed 5 $J $J $J $J n@h2:1:1 n@h3:1:1
sql "$T/jobs.db" "update runs set group_id = case when id <= 12 then 'job-' || ((id - 1) / 3 + 1) else 'job-5' end"
expect_status 2 "a node left out of the newest every-node job: cannot tell, not within" "$REPORT" nodes --db "$T/jobs.db"
contains "$T/out" "^\| h1 .*cannot tell on 2 of 2 cases" "h1 cannot tell"
contains "$T/out" "^\| h2 .*within bounds on 2 of 2 cases" "h2 compared"
contains "$T/out" "2 node-cases whose latest run is not of the every-node job of the case's newest run \(h1: .* \(not in job-5\)" "the notes name the node and the job"
# the same groups, the runs shards of them (each case on one host of a job): no every-node job
sql "$T/jobs.db" "update runs set shard_index = 0, shard_count = 3"
expect_status 0 "shards' groups are no every-node job: every node compared" "$REPORT" nodes --db "$T/jobs.db" --lenient
sql "$T/jobs.db" "update runs set shard_index = NULL, shard_count = NULL"
# a node's own --repeat groups (one host each) are no every-node job: all three compared
sql "$T/jobs.db" "update runs set group_id = 'repeat-' || id"
expect_status 0 "groups of one host each: every node compared" "$REPORT" nodes --db "$T/jobs.db" --lenient
lacks "$T/out" "every-node job" "no node left out"

# three nodes, one of them the odd one (10% slower, or 10% faster), 3 runs each at 2% run noise:
# the odd node is out of bounds, the two healthy ones are not. Compared with "the others"
# together, each healthy node was 5% faster (or slower) than its two others, one of them the odd
# node, and was flagged too (fast or slow on most cases, on these seeds).
for odd in "1 1.10 1 h2 slow" "1 1 0.90 h3 fast"; do
	set -- $odd
	for seed in 1 2; do
		planted "$T/odd.db" --cases 6 --between 0.02 --seed $seed --one-system n@h1:3t:$1 n@h2:3t:$2 n@h3:3t:$3
		expect_status 1 "three nodes, $4 $5 (seed $seed): out of bounds" "$REPORT" nodes --db "$T/odd.db" --format csv
		check "... $4 is out of bounds ($5)" [ "$(csv_cols "$T/out" node summary | grep -c "^$4,\"$5 on ")" = 1 ]
		check "... and only $4 (seed $seed)" [ "$(csv_cols "$T/out" node out_of_bounds | grep -v "^$4," | grep -vc ',0$')" = 0 ]
	done
done
expect_status 1 "the notes say why a healthy node is not flagged" "$REPORT" nodes --db "$T/odd.db"
contains "$T/out" "beyond the band against the other nodes together but not against most of them one by one" "the note"
lacks "$T/out" "more than one system" "each node's runs are of one system: no note of it"
lacks "$T/out" "different code" "every node ran the same code: no note of it"
# two machines under one host name (h3 renamed h1, its own system row): their runs are one node's
# runs to the report, which hides the slow machine; the notes say that the name covers two systems
sql "$T/odd.db" "update systems set hostname = 'h1' where hostname = 'h3'"
"$REPORT" nodes --db "$T/odd.db" >"$T/out" 2>"$T/err"
contains "$T/out" "whose runs were made on more than one system .* under one node name \(h1\)" "two machines named h1: said so"
# two nodes that ran different code (each label its own commit): a difference may be the code's,
# and the notes say so, with the nodes' commits
planted "$T/code.db" --cases 3 --between 0.02 --seed 3 --one-system n@h1:3t:1 m@h2:3t:1.10
"$REPORT" nodes --db "$T/code.db" >"$T/out" 2>"$T/err"
c1=$(sql "$T/code.db" "select substr(git_commit, 1, 7) from runs where label = 'n' limit 1")
contains "$T/out" "3 case keys whose nodes ran different code or sweeps .*h[12] .*$c1" "different commits per node: said so, with the commits"
# two nodes alike; node h2's runs of one case failed (error) and of another never ran it (deleted,
# as a run stopped before it): those keys have ok cases on h1 alone. They were dropped without a
# word ("no node out of bounds", exit 0); now each is a node-case not compared: cannot tell (2)
planted "$T/failed.db" --cases 4 --between 0.02 --seed 3 --one-system n@h1:3t:1 n@h2:3t:1
h2_cases="select c.id from cases c join runs r on r.id = c.run_id join systems s on s.id = r.system_id where s.hostname = 'h2'"
expect_status 0 "two nodes alike (--lenient): no node out of bounds" "$REPORT" nodes --db "$T/failed.db" --lenient
sql "$T/failed.db" "update cases set status = 'error', reason = 'planted' where ord = 0 and id in ($h2_cases); delete from cases where ord = 1 and id in ($h2_cases)"
expect_status 2 "a node whose runs of a case failed or never ran it: cannot tell" "$REPORT" nodes --db "$T/failed.db" --lenient
contains "$T/out" "2 node-cases not compared \(\?\): the node has no ok case of a key other nodes ran \(h2: .* error; h2: .* not run\)" "the notes name the node, the case and what happened"
contains "$T/out" "^\| h2 .* no ok case \(failed or not run; not compared\) on 2 of 4 cases" "h2's line says so"
contains "$T/out" "some comparisons cannot tell" "the verdict says it cannot tell"
# the chart draws 24 cases at most: a report of 30 says, in the chart's title, which it shows
if command -v gnuplot >/dev/null; then
	planted "$T/many.db" --cases 30 --between 0.02 --seed 3 --one-system n@h1:3t:1 n@h2:3t:1
	"$REPORT" nodes --db "$T/many.db" --chart "$T/many" >/dev/null 2>&1
	contains "$T/many/nodes_throughput.svg" "the first 24 of 30 cases" "a chart of fewer cases than the report says so"
fi
# 80 nodes (40 planted, and a copy of them under other names and uuids, merged), h01 20% slower:
# every node is compared. Only the first 64 nodes of a case were, the rest dropped without a word
# ("2 case keys on 64 nodes"), h01 (the oldest runs) among them
planted "$T/n40.db" --cases 2 --between 0.02 --seed 3 --one-system $(for i in $(seq -w 1 40); do printf 'n@h%s:2t:1 ' "$i"; done)
sql "$T/n40.db" "update samples set ns = ns * 1.2 where case_id in (select c.id from cases c join runs r on r.id = c.run_id join systems s on s.id = r.system_id where s.hostname = 'h01')"
cp "$T/n40.db" "$T/n40b.db"
sql "$T/n40b.db" "update systems set hostname = 'j' || hostname, fingerprint = 'j' || fingerprint; update runs set uuid = 'f' || substr(uuid, 2), group_id = 'j-' || group_id"
rm -f "$T/n80.db"
"$RUNNER" merge --db "$T/n80.db" "$T/n40.db" "$T/n40b.db" >/dev/null
expect_status 1 "80 nodes, h01 20% slower: out of bounds" "$REPORT" nodes --db "$T/n80.db" --format csv
check "every one of the 80 nodes has its line" [ "$(csv_cols "$T/out" node | wc -l)" = 80 ]
check "h01 is slow" [ "$(csv_cols "$T/out" node summary | grep -c '^h01,"slow on 2 of 2 cases')" = 1 ]
# three nodes, h2 10% slower, h3's samples of one case lost: that case compares two nodes, and of
# two nodes that differ the slower one is flagged, not the faster (which was, as if three compared)
planted "$T/two_of_three.db" --cases 3 --between 0.02 --seed 5 --one-system n@h1:3t:1 n@h2:3t:1.10 n@h3:3t:1
sql "$T/two_of_three.db" "delete from samples where case_id in (select c.id from cases c join runs r on r.id = c.run_id join systems s on s.id = r.system_id where s.hostname = 'h3' and c.ord = 0)"
expect_status 1 "three nodes, one of them not compared on a case, h2 slower" "$REPORT" nodes --db "$T/two_of_three.db" --format csv
check "h2 is out of bounds on it" [ "$(grep -c '^flash float32 fwd B8 H1 S256 D64,h2,3,.*,✗,' "$T/out")" = 1 ]
check "h1, the faster of the two compared, is not" [ "$(grep -c '^flash float32 fwd B8 H1 S256 D64,h1,3,.*,✗,' "$T/out")" = 0 ]
# the node not compared has no throughput, time or cost: blank, not 0 (a free, infinitely fast node)
expect_status 1 "... with a price" "$REPORT" nodes --db "$T/two_of_three.db" --format csv --price 1
check "h3's samples/s, tokens/s, median and cost on that case are blank" [ "$(grep -c '^flash float32 fwd B8 H1 S256 D64,h3,0,,,,.*,?,,,$' "$T/out")" = 1 ]
# three nodes, h2's peak memory 5% more and its GPU 22 °C hotter: h2 is off, the two healthy
# nodes are not (against their others' median, the mean of h2 and a healthy node, they were 2.4%
# and 11 °C off, and were flagged too)
planted "$T/mem.db" --cases 2 --between 0.02 --seed 5 --one-system n@h1:3t:1 n@h2:3t:1 n@h3:3t:1
sql "$T/mem.db" "update cases set peak_bytes = 100000000, gpu_temp_c = 60; update cases set peak_bytes = 105000000, gpu_temp_c = 82 where run_id in (select r.id from runs r join systems s on s.id = r.system_id where s.hostname = 'h2')"
expect_status 1 "three nodes, h2's memory and temperature off: out of bounds" "$REPORT" nodes --db "$T/mem.db" --format csv
check "h2: memory and temperature ✗ on both cases" [ "$(grep -c '^flash[^,]*,h2,.*,✗,✗$' "$T/out")" = 2 ]
check "h1 and h3: memory and temperature ✓" [ "$(grep -c '^flash[^,]*,h[13],.*,✓,✓$' "$T/out")" = 4 ]

# ---- a case key measured twice in one run is one run's evidence --------------------------------
# A sweep may list a case twice (two benchmarks that overlap): the run stores it twice, under one
# case key. The run is still one run: its copies must not count as runs of a session (which made
# the noise between runs 0% and every CI a point), as points of a history (one slow run stored
# three times made a segment of three, a change point), or as a node's runs.
# copies DB RUN_IDS FACTOR SHIFT: store every case of those runs once more at ord + SHIFT, its
# samples times FACTOR (the run measured the case again)
copies() {
	sql "$1" "create temp table src as select * from cases where run_id in ($2);
		insert into cases (run_id, ord, suite, impl, device, dtype, pass, batch_size, heads,
			seq_len, head_dim, causal, model, params, case_key, name, warmup, iters, status,
			reason, started_at, elapsed_ns, cpu_wait)
		select run_id, ord + $4, suite, impl, device, dtype, pass, batch_size, heads, seq_len,
			head_dim, causal, model, params, case_key, name, warmup, iters, status, reason,
			started_at, elapsed_ns, cpu_wait from src;
		insert into samples select c2.id, s.phase, s.iter, cast(s.ns * $3 as integer) from src c1
			join cases c2 on c2.run_id = c1.run_id and c2.ord = c1.ord + $4
			join samples s on s.case_id = c1.id"
}
# regress, one run a side, no history: the noise between runs cannot be measured, so these runs
# cannot tell (exit 2) — with the cases stored twice as without
planted "$T/dup.db" --cases 4 --between 0.03 --seed 3 base:1:1 cand:1:1.0
expect_status 2 "one run a side: cannot tell" "$REPORT" regress --db "$T/dup.db" --baseline-label base --candidate-label cand
copies "$T/dup.db" 1,2 1 100
expect_status 2 "one run a side, each case stored twice: still cannot tell (not a pass)" \
	"$REPORT" regress --db "$T/dup.db" --baseline-label base --candidate-label cand
contains "$T/out" "noise between runs NOT measured \(one run a side" "the copies are not a measured noise"
contains "$T/out" "^- 4 cases compared" "each case compared once"
expect_status 0 "compare across the two runs" "$REPORT" compare --db "$T/dup.db" --baseline 1 --run 2
check "compare: each case once" [ "$(grep -c '^| flash' "$T/out")" = 4 ]
contains "$T/out" "noise between runs NOT measured" "compare: the copies are not a measured noise"
# the same folded into the stored noise (`runner noise`): an older run of the system, its cases
# stored twice, is one run of its session, not two that agree exactly
planted "$T/fold.db" --cases 4 --between 0.03 --seed 3 old:1:1 base:1:1 cand:1:1.0
copies "$T/fold.db" 1 1 100
expect_status 0 "runner noise folds the runs" "$RUNNER" noise --db "$T/fold.db"
check "folded: one run in the older run's session" [ "$(sql "$T/fold.db" "select distinct runs from noise_sessions where session like 'run:%1'")" = 1 ]
expect_status 2 "one run a side over a folded history of copies: still cannot tell" \
	"$REPORT" regress --db "$T/fold.db" --baseline-label base --candidate-label cand
# changes: a steady history whose newest run is 30% slower, that run storing each case three
# times: one run is never a change point (exit 0), and the series counts it once
planted "$T/spike.db" --cases 2 --between 0.03 --seed 7 nightly:30t:1 nightly:1t:1.3
copies "$T/spike.db" 31 1 100
copies "$T/spike.db" 31 1 200
expect_status 0 "changes: one slow run stored three times is not a slower segment" \
	"$REPORT" changes --db "$T/spike.db" --label nightly
lacks "$T/out" "\| slower" "no slower change point"
check "changes: each series has 31 runs" [ "$(grep -cE '^\| flash .* \| planted-host *\| +31 \|' "$T/out")" = 2 ]
# history: a run's second measurement of a case is no step against its first
planted "$T/hist.db" --cases 2 --between 0.02 --seed 4 nightly:6t:1
copies "$T/hist.db" 6 1.3 100
expect_status 0 "history of a run that measured the case twice" \
	"$REPORT" history --db "$T/hist.db" --where seq_len=256
lacks "$T/out" "slower \+|\? \+2|\? \+3" "no step between the run's two measurements"
contains "$T/out" "run 6 measured the case more than once" "the notes say so"
# nodes: three alike nodes of 3 runs, every case stored twice: 3 runs a node, as without copies
planted "$T/nodes3.db" --cases 3 --between 0.02 --seed 11 --one-system n@h1:3:1 n@h2:3:1 n@h3:3:1
copies "$T/nodes3.db" 1,2,3,4,5,6,7,8,9 1 100
expect_status 0 "nodes, every case stored twice: no node out of bounds" "$REPORT" nodes --db "$T/nodes3.db" --format csv --lenient
check "nodes: 3 runs a node-case, not 6" [ "$(grep -c ',h[123],3,' "$T/out")" = 9 ]

# ---- changes: a run that did not record its CPU wait hides nothing the others recorded ---------
# 30 quiet runs, then 6 runs 30% slower whose runner waited for a CPU 40% of the time: contended
# (exit 2). One of those 6 with cpu_wait NULL (not recorded: an older runner, a merged run) leaves
# 5 that say the machine was busy: still contended, not slower (exit 1).
planted "$T/wait.db" --cases 2 --between 0.03 --seed 8 nightly:30t:1:0.01 nightly:6t:1.3:0.4
expect_status 2 "changes: a slower segment that waited for a CPU is contended" \
	"$REPORT" changes --db "$T/wait.db" --label nightly
sql "$T/wait.db" "update cases set cpu_wait = NULL where run_id = 33"
expect_status 2 "... with one of its runs' waits not recorded: still contended, not slower" \
	"$REPORT" changes --db "$T/wait.db" --label nightly
contains "$T/out" "a contended change in 2;" "both series contended"
lacks "$T/out" "\| slower" "no slower change point"

# ---- a run is no baseline for itself -------------------------------------------------------
# 3 baseline runs, 3 candidate runs 25% slower. `--baseline cand` names the latest run labelled
# cand, which is the default candidate (latest): the run against itself showed no change and
# passed (exit 0). Nothing was compared: a usage error (exit 2) that says so.
planted "$T/self.db" --cases 2 --between 0.03 --seed 5 base:3t:1 cand:3t:1.25
expect_status 1 "the candidate runs against the baseline runs: slower" \
	"$REPORT" regress --db "$T/self.db" --baseline-label base --candidate-label cand
expect_status 2 "regress --baseline naming the candidate run: not a pass" \
	"$REPORT" regress --db "$T/self.db" --baseline cand
contains "$T/err" "selects run 6, which is a candidate run too" "says which run is on both sides"
expect_status 2 "regress, one run named on both sides" "$REPORT" regress --db "$T/self.db" --baseline 4 --candidate 4
expect_status 2 "regress, the candidate run among the baseline runs" \
	"$REPORT" regress --db "$T/self.db" --baseline 1 --baseline 4 --candidate-label cand
expect_status 2 "compare --baseline naming the candidate run" "$REPORT" compare --db "$T/self.db" --baseline latest
contains "$T/err" "is run 6, the candidate run itself" "compare says so"
# a label whose every run is a candidate run (the first night of a nightly: `--baseline-label
# cand`, the latest run the only one) said "no run is labelled cand": it names why it is empty
expect_status 2 "regress --baseline-label and --candidate-label the same label" \
	"$REPORT" regress --db "$T/self.db" --baseline-label cand --candidate-label cand
contains "$T/err" "^report: no run matches the baseline selection: every run labelled cand \(3\) is a candidate run too" "says the label's runs are the candidate's"
lacks "$T/err" "no run is labelled" "not that no run has the label"

# ---- a history merged out of order is read in time order -----------------------------------
# `runner merge` stores a database's runs after those already there, so merging February's
# nightly runs before January's gives February's the lower ids. The history is oldest run first
# by time: 30 quiet January runs, then 6 February runs 30% slower, is a slower segment at the
# newest runs (exit 1) however the files were merged.
# move_runs DB DATE C: move every run of DB (planted on 2026-01-01) to DATE, its uuids begun with C
move_runs() {
	sql "$1" "update runs set started_at = replace(started_at, '2026-01-01', '$2'),
		ended_at = replace(ended_at, '2026-01-01', '$2'), uuid = '$3' || substr(uuid, 2);
		update cases set started_at = replace(started_at, '2026-01-01', '$2')"
}
planted "$T/jan.db" --cases 2 --between 0.02 --seed 8 --one-system nightly:30t:1
planted "$T/feb.db" --cases 2 --between 0.02 --seed 9 --one-system nightly:6t:1.3
move_runs "$T/feb.db" 2026-02-01 b
"$RUNNER" merge --db "$T/merged.db" "$T/feb.db" "$T/jan.db" >/dev/null
check "merged out of order: February's runs have the lower ids" \
	[ "$(sql "$T/merged.db" "select started_at from runs where id = 1")" = "2026-02-01T00:01:00.000Z" ]
expect_status 1 "changes: the newest (February) runs began a slower segment" \
	"$REPORT" changes --db "$T/merged.db" --label nightly
contains "$T/err" "slower: 'flash float32 fwd B8 H1 S256 D64' on planted-host, \+[0-9.]+% since run 1$" "since the first February run"
expect_status 0 "history of the merged runs" "$REPORT" history --db "$T/merged.db" --where seq_len=256 --format csv
check "history: January first" [ "$(csv_cols "$T/out" run | head -1)" = 7 ]
check "history: the step at the first February run" grep -q '^1,slower +' <(csv_cols "$T/out" run step)
# regress and report pick the latest runs by time too: the newest February run is the latest,
# the runs before it are the ones started before it (the last January ones, then February's)
"$REPORT" regress --db "$T/merged.db" --baseline-last 5 --candidate-last 3 >"$T/out" 2>&1
contains "$T/out" "^### regressions: runs 4, 5, 6 vs baseline runs 35, 36, 1, 2, 3 " "--candidate-last 3 --baseline-last 5 by time"
"$REPORT" regress --db "$T/merged.db" --baseline-last 5 >"$T/out" 2>&1
contains "$T/out" "^### regressions: run 6 vs baseline runs 1, 2, 3, 4, 5 " "the latest run is the newest in time"
"$REPORT" --db "$T/merged.db" >"$T/out" 2>&1
contains "$T/out" "^## run 6: " "report's default run is the newest in time"
"$REPORT" runs --db "$T/merged.db" --format csv >"$T/out" 2>&1
check "report runs: oldest first by time (January's first run, then ... February's last)" \
	[ "$(csv_cols "$T/out" id | head -1),$(csv_cols "$T/out" id | tail -1)" = "7,6" ]
check "the label selects its newest run in time" grep -q 'selects run 6, which is a candidate' 	<("$REPORT" regress --db "$T/merged.db" --baseline nightly 2>&1)
# nodes: node h2's runs of its newest code are its newest in time, not its highest ids (older,
# 30% slower runs of an earlier commit merged after them)
planted "$T/now.db" --cases 2 --between 0.02 --seed 21 --one-system n@h1:3:1 n@h2:3:1
planted "$T/before.db" --cases 2 --between 0.02 --seed 22 --one-system old@h2:3:1.3
move_runs "$T/before.db" 2025-12-01 c
"$RUNNER" merge --db "$T/nodes_merged.db" "$T/now.db" "$T/before.db" >/dev/null
expect_status 0 "nodes: h2 judged by its newest runs (as fast as h1), not its older slow ones" \
	"$REPORT" nodes --db "$T/nodes_merged.db" --format csv --lenient
lacks "$T/out" "✗" "no node out of bounds"

# ---- --candidate-last K alone: the last K runs -------------------------------------------------
# 8 runs, then 3 runs 25% slower, no labels to tell them apart: `--baseline-last 5
# --candidate-last 3` is the last 3 against the 5 before. It took the latest run alone as the
# candidate and the 5 before it — two of them the slower code's — as the baseline.
planted "$T/last.db" --cases 4 --between 0.02 --seed 5 nightly:8t:1 slow:3t:1.25
sql "$T/last.db" "update runs set label = 'nightly'"
expect_status 1 "the last 3 runs against the 5 before: slower" \
	"$REPORT" regress --db "$T/last.db" --baseline-last 5 --candidate-last 3
contains "$T/out" "^### regressions: runs 9, 10, 11 vs baseline runs 4, 5, 6, 7, 8 " "the runs each side"
"$REPORT" regress --db "$T/last.db" --baseline-last 5 >"$T/out" 2>&1
contains "$T/out" "^### regressions: run 11 vs baseline runs 6, 7, 8, 9, 10 " "the latest and the 5 before it"

# ---- changes: a case that fails in the newest run fails the gate -------------------------------
# 12 steady nightly runs of 2 cases; in the newest run one case is error (the kernel broke). Its
# series has no new point, so its ok runs alone read steady: the gate must still fail (exit 1), as
# regress fails a case ok in the baseline and error in the candidate — and go on failing while
# the case does (a second failing run), and pass again once it is ok.
planted "$T/broken.db" --cases 2 --between 0.02 --seed 31 nightly:12t:1
expect_status 0 "changes: 12 steady runs" "$REPORT" changes --db "$T/broken.db" --label nightly
sql "$T/broken.db" "update cases set status = 'error', reason = 'planted: the kernel broke' where run_id = 12 and ord = 0"
sql "$T/broken.db" "delete from samples where case_id in (select id from cases where run_id = 12 and ord = 0)"
expect_status 1 "changes: a case error in the newest run fails the gate (not steady)" \
	"$REPORT" changes --db "$T/broken.db" --label nightly
contains "$T/err" "^report changes: error: '.*' on planted-host in run 12 \(ok in run 11\): planted: the kernel broke$" "stderr names the case, the run and the reason"
contains "$T/out" "\*\*NOT OK\*\*" "the verdict says so"
contains "$T/out" "Cases not ok in their newest run" "a table of them"
expect_status 1 "... the summary format too" "$REPORT" changes --db "$T/broken.db" --label nightly --format summary
# the site says what the gate said: the case first, not ok in run 12
expect_status 0 "report site of that history" "$REPORT" site --db "$T/broken.db" --label nightly -o "$T/site"
contains "$T/site/index.html" "1 not ok in their newest run" "the site's index counts it"
contains "$T/site/index.html" "steady; not ok in run 12: error" "and marks its case"
# another run of the newest one, a day later: run SRC of DB stored again as a new run started at
# WHEN, its cases with STATUS at ord 0 (ok: as they were)
rerun() {
	sql "$1" "create temp table r as select * from runs where id = $2;
		update r set id = (select max(id) + 1 from runs), uuid = uuid || '-$3', started_at = '$3';
		insert into runs select * from r;
		create temp table o as select max(id) as off from cases;
		create temp table c as select * from cases where run_id = $2;
		update c set run_id = (select id from r), id = id + (select off from o);
		insert into cases select * from c;
		insert into samples select s.case_id + (select off from o), s.phase, s.iter, s.ns from samples s where s.case_id in (select id from cases where run_id = $2);
		update cases set status = '$4' where run_id = (select id from r) and ord = 0"
}
# a 13th run where it is still not ok (oom): still failing (not only the night it broke)
rerun "$T/broken.db" 11 2030-01-01T00:00:00.000Z oom
sql "$T/broken.db" "delete from samples where case_id in (select id from cases where run_id = 13 and ord = 0)"
expect_status 1 "changes: still not ok in the next run: still failing" \
	"$REPORT" changes --db "$T/broken.db" --label nightly
contains "$T/err" "^report changes: oom: '.*' on planted-host in run 13 \(ok in run 11\)" "the newest run that has it"
# ok again in a 14th run: the gate passes
rerun "$T/broken.db" 11 2030-01-02T00:00:00.000Z ok
expect_status 0 "changes: ok again in the newest run: passes" "$REPORT" changes --db "$T/broken.db" --label nightly
# the newest run interrupted before a case: the case was not measured (exit 1); a complete newest
# run without a case (the sweep dropped it) is no failure
planted "$T/cut.db" --cases 2 --between 0.02 --seed 34 nightly:12t:1
sql "$T/cut.db" "delete from samples where case_id in (select id from cases where run_id = 12 and ord = 1); delete from cases where run_id = 12 and ord = 1"
expect_status 0 "changes: a complete newest run without a case (dropped from the sweep): passes" \
	"$REPORT" changes --db "$T/cut.db" --label nightly
sql "$T/cut.db" "update runs set status = 'interrupted' where id = 12"
expect_status 1 "changes: an interrupted newest run without a case: fails" \
	"$REPORT" changes --db "$T/cut.db" --label nightly
contains "$T/err" "^report changes: missing: '.*' on planted-host from run 12, which is interrupted \(ok in run 11\)$" "says the run is interrupted"

# ---- regress: a candidate run whose ok case lost its samples is said, not passed over -----------
# 4 baseline runs, 3 candidate runs alike; candidate run 6's samples of one case are gone (a
# damaged file): the case is compared on the two runs that have them, and the notes say so
planted "$T/partial.db" --cases 3 --between 0.02 --seed 5 base:4t:1 cand:3t:1
sql "$T/partial.db" "delete from samples where case_id in (select id from cases where run_id = 6 and ord = 0)"
"$REPORT" regress --db "$T/partial.db" --baseline-label base --candidate-label cand --lenient >"$T/out" 2>&1
contains "$T/out" "compared on fewer runs than the side has \(column n\): 1 case ok in a run without a median of the phase \(no samples, or times not positive: a damaged run\?\), left out of that run: flash float32 fwd B8 H1 S256 D64$" "the case left out of the damaged run is named"
# the same when the run's samples of a case are there but every time is 0 (no median to read):
# it was compared on the other runs with nothing said ('30x2' in column n the only trace)
planted "$T/zero.db" --cases 3 --between 0.02 --seed 5 base:4t:1 cand:3t:1
sql "$T/zero.db" "update samples set ns = 0 where case_id in (select id from cases where run_id = 6 and ord = 0)"
"$REPORT" regress --db "$T/zero.db" --baseline-label base --candidate-label cand --lenient >"$T/out" 2>&1
contains "$T/out" "compared on fewer runs than the side has \(column n\): 1 case .*left out of that run: flash float32 fwd B8 H1 S256 D64$" "a run whose times are 0: the case is named"

# ---- regress: a baseline case not compared is a row of every format, with what happened to it --
# 4 cases, 2 runs a side of one session each; in the candidate one case is error, one skipped,
# one missing from a run (deleted): exit 1, and the csv and json tables (read without the notes)
# name each with the candidate's status or "missing", not leave them out
planted "$T/gone.db" --cases 4 --between 0.02 --seed 8 base:2:1 cand:2:1
sql "$T/gone.db" "update cases set status = 'error', reason = 'planted' where run_id = 3 and ord = 0;
	update cases set status = 'skipped', reason = 'planted' where run_id = 4 and ord = 1;
	delete from samples where case_id in (select id from cases where run_id = 4 and ord = 2);
	delete from cases where run_id = 4 and ord = 2"
expect_status 1 "regress: error, skipped and missing in the candidate (csv)" \
	"$REPORT" regress --db "$T/gone.db" --baseline-label base --candidate-label cand --format csv
contains "$T/out" "^flash float32 fwd B8 H1 S256 D64,(,)*error$" "csv: the error case is a row, verdict error"
contains "$T/out" "^flash float32 fwd B8 H1 S320 D64,(,)*skipped$" "csv: the skipped case, verdict skipped"
contains "$T/out" "^flash float32 fwd B8 H1 S384 D64,(,)*missing$" "csv: the missing case, verdict missing"
check "csv: a row for each of the 4 baseline cases" test "$(grep -c '^flash' "$T/out")" = 4
expect_status 1 "... json" "$REPORT" regress --db "$T/gone.db" --baseline-label base --candidate-label cand --format json
check "json: the rows' verdicts" python3 -c "import json,sys; r=json.load(open('$T/out'))[0]['rows']; sys.exit(sorted(x['verdict'] for x in r) != sorted(['error', 'skipped', 'missing', r[0]['verdict']]))"
expect_status 1 "... summary" "$REPORT" regress --db "$T/gone.db" --baseline-label base --candidate-label cand --format summary
contains "$T/out" "all 4 cases, the noise" "summary: the folded table holds every baseline case"

# ---- compare against a run: what the table leaves out is said ---------------------------------
# baseline run 1 and candidate run 2 of 4 cases; run 2 interrupted after 2 of them: the table has
# 2 pairs, and the notes and stderr say the candidate is not complete and 2 of the 4 ok baseline
# cases were not compared (the table alone read as the whole comparison)
planted "$T/cut2.db" --cases 4 --between 0.02 --seed 9 base:1:1 cand:1:1
sql "$T/cut2.db" "update runs set status = 'interrupted' where id = 2;
	delete from samples where case_id in (select id from cases where run_id = 2 and ord >= 2);
	delete from cases where run_id = 2 and ord >= 2"
expect_status 0 "compare against a run: an interrupted candidate" "$REPORT" compare --db "$T/cut2.db" --baseline 1 --run 2
contains "$T/out" "^- candidate run 2 is interrupted, not complete \(2 of its cases stored\)$" "the notes say the candidate is not complete"
contains "$T/out" "^- 2 of the 4 ok cases of baseline run 1 not compared \(missing from run 2 or not ok there\)$" "the notes count the cases left out"
contains "$T/err" "^report compare: 2 of the 4 ok cases of baseline run 1 not compared" "stderr too (csv has no notes)"
expect_status 0 "compare against a run, the runs the other way" "$REPORT" compare --db "$T/cut2.db" --baseline 2 --run 1
contains "$T/out" "^- baseline run 2 is interrupted, not complete" "a baseline not complete is said"
lacks "$T/out" "not compared" "every ok case of the baseline compared"

# runs of two systems compared: said (regress refuses them without --any-system)
planted "$T/two.db" --cases 2 --between 0.02 --seed 9 base@h1:1:1 cand@h2:1:1
expect_status 0 "compare against a run of another system" "$REPORT" compare --db "$T/two.db" --baseline 1 --run 2
contains "$T/out" "^- runs 1 and 2 are of different systems \(h1, h2\): a change includes the difference between the machines" "the notes say the systems differ"
lacks "$T/err" "." "nothing on stderr"

# ---- regress: a baseline run that is not complete is said -------------------------------------
# one baseline --repeat group of 4 whose last run was interrupted after 2 of its 4 cases: no
# failure (the other 3 runs have every case), but the notes and stderr name it
planted "$T/bcut.db" --cases 4 --between 0.02 --seed 12 base:4:1 cand:2:1
sql "$T/bcut.db" "update runs set status = 'interrupted' where id = 4;
	delete from samples where case_id in (select id from cases where run_id = 4 and ord >= 2);
	delete from cases where run_id = 4 and ord >= 2"
"$REPORT" regress --db "$T/bcut.db" --baseline-label base --candidate-label cand >"$T/out" 2>"$T/err"
contains "$T/out" "^- baseline run 4 is interrupted, not complete \(2 of its cases stored\): the cases it lacks are compared on the other baseline runs that have them$" "the notes name the baseline run"
contains "$T/err" "^report regress: note: baseline run 4 is interrupted" "stderr too"

finish cli_verdict_data
