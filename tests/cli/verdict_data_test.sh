#!/usr/bin/env bash
# tests/cli/verdict_data_test.sh: the verdicts CI gates on (regress, changes, nodes) on partial and
# damaged data of known truth: planted runs (tests/make_planted.c) edited with sqlite3 the way a
# damaged or unusual database is — samples missing, a case key measured twice in one run. Each
# check states what the data is and the verdict and exit status it must get; none depends on
# timings.
#   verdict_data_test.sh REPORT MAKE_PLANTED
set -u
REPORT=$1
PLANTED=$2
source "$(dirname "$0")/lib.sh"
planted() { local db=$1; shift; rm -f "$db"; "$PLANTED" "$db" "$@" >/dev/null; }

# ---- nodes: a node without a readable run of a case is not compared, never judged -------------
# Three nodes alike (3 runs each); node h3's runs of one case lost their samples: that node-case
# cannot be compared. It must not read as slow (out of bounds, exit 1): exit 2, and said why.
planted "$T/nodes.db" --cases 3 --between 0.02 --seed 11 --one-system n@h1:3:1 n@h2:3:1 n@h3:3:1
expect_status 0 "three nodes alike: no node out of bounds" "$REPORT" nodes --db "$T/nodes.db"
sql "$T/nodes.db" "delete from samples where case_id in (select c.id from cases c join runs r on r.id = c.run_id join systems s on s.id = r.system_id where s.hostname = 'h3' and c.ord = 0)"
expect_status 2 "a node-case without samples: cannot tell (exit 2), not out of bounds" \
	"$REPORT" nodes --db "$T/nodes.db" --format csv
lacks "$T/out" ',h3,0,.*✗' "the node without samples is not marked out of bounds"
contains "$T/out" ',h3,0,.*,\?,' "it is marked ? (not compared)"
expect_status 2 "... (md)" "$REPORT" nodes --db "$T/nodes.db"
contains "$T/out" "1 node-case not compared \(\?\): no run of the node" "the notes say why"
contains "$T/out" "some comparisons cannot tell" "the verdict says it cannot tell"
lacks "$T/out" "^\| h3 .*slow on" "h3 is not called slow"
# two nodes, one of them without samples of the case: nothing to compare it with either
planted "$T/nodes2.db" --cases 3 --between 0.02 --seed 12 --one-system n@h1:3:1 n@h2:3:1
sql "$T/nodes2.db" "delete from samples where case_id in (select c.id from cases c join runs r on r.id = c.run_id join systems s on s.id = r.system_id where s.hostname = 'h2' and c.ord = 0)"
expect_status 2 "two nodes, one without samples of a case: cannot tell" \
	"$REPORT" nodes --db "$T/nodes2.db" --format csv
check "both nodes of that case are ? (not compared)" [ "$(grep -c ',[?],' "$T/out")" = 2 ]

finish cli_verdict_data
