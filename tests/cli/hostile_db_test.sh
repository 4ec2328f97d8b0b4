#!/usr/bin/env bash
# tests/cli/hostile_db_test.sh: `report` on databases it did not make (issue 15, items 4 and 5).
#   hostile_db_test.sh RUNNER REPORT MAKE_FIXTURE
# 1. read-only: report opens a database without changing it — no byte of the file, no -wal/-shm
#    beside it, no journal-mode change, no migration — reads an older schema, refuses an empty
#    file, a foreign one and `user_version = -1` with a message (and leaves them as they were);
#    runs on a read-only file in a read-only directory (when not root, where modes bind).
# 2. the hostile-database catalogue: each database below is made from the fixture with sqlite3,
#    and every report command on it must exit 0, 1 or 2 with at most a message — never a crash
#    (a signal, or a sanitizer's report) — and leave the file unchanged.
set -u
RUNNER=$1
REPORT=$2
MAKE_FIXTURE=$3
source "$(dirname "$0")/lib.sh"

fixture=$T/fixture.db
check "fixture written" "$MAKE_FIXTURE" "$fixture"
# The fixture is written by the runner's library (WAL); checkpoint so the file stands alone.
sql "$fixture" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
latest=$(sql "$fixture" "PRAGMA user_version")

# state DIR: every file in DIR with its checksum (what "never creates or changes a file" means).
state() { (cd "$1" && find . -type f | sort | xargs -r md5sum); }

# ---- 1. read-only --------------------------------------------------------------------------
d=$T/ro
mkdir -p "$d"
cp "$fixture" "$d/bench.db"
before=$(state "$d")
for cmd in runs table warmup "compare --baseline base --run cand" "export --what samples"; do
	# shellcheck disable=SC2086
	expect_status 0 "report $cmd" "$REPORT" $cmd --db "$d/bench.db"
done
check "report left no file behind and changed none" [ "$(state "$d")" = "$before" ]
check "journal mode is still wal" [ "$(sql "$d/bench.db" "PRAGMA journal_mode")" = wal ]

# A database in rollback-journal mode stays in it (report converted it to WAL).
cp "$fixture" "$d/delete.db"
sql "$d/delete.db" "PRAGMA journal_mode = DELETE" >/dev/null
sum=$(md5sum <"$d/delete.db")
expect_status 0 "report on a rollback-journal database" "$REPORT" table --db "$d/delete.db"
check "journal mode is still delete" [ "$(sql "$d/delete.db" "PRAGMA journal_mode")" = delete ]
check "rollback-journal database unchanged" [ "$(md5sum <"$d/delete.db")" = "$sum" ]

# A writer killed inside a transaction of a rollback-journal database leaves a hot journal, which
# only a writer may roll back: report says so and what to run (it said "not a benchdb database:
# attempt to write a readonly database"), touching neither file; runner migrate rolls it back.
sqlite3 -batch "$d/delete.db" "PRAGMA cache_size = 1; BEGIN; UPDATE samples SET ns = ns + 1; UPDATE runs SET label = 'torn';" \
	'.shell kill -9 $PPID' >/dev/null 2>&1
check "the killed writer left its journal" [ -s "$d/delete.db-journal" ]
sums=$(md5sum "$d/delete.db" "$d/delete.db-journal")
expect_status 1 "report on a database with a hot journal" "$REPORT" runs --db "$d/delete.db"
contains "$T/err" "delete.db: a writer stopped in the middle of a transaction left its rollback journal \(.*delete.db-journal\).*runner migrate --db" "the hot journal is the reason, with what to run"
lacks "$T/err" "not a benchdb database" "a hot journal is not called a foreign file"
check "report touched neither the file nor its journal" [ "$(md5sum "$d/delete.db" "$d/delete.db-journal")" = "$sums" ]
expect_status 0 "runner migrate rolls the journal back" "$RUNNER" migrate --db "$d/delete.db"
expect_status 0 "then report reads it" "$REPORT" runs --db "$d/delete.db" --format csv
lacks "$T/out" "torn" "the killed transaction is not there"
rm -f "$d/delete.db"*

# While a writer holds the database open (its -wal exists), report reads through it and adds no file.
cp "$fixture" "$d/live.db"
sqlite3 "$d/live.db" "BEGIN; UPDATE runs SET label = 'changed' WHERE id = 2; COMMIT;" \
	".shell sleep 2" >/dev/null &
writer=$!
sleep 0.5
expect_status 0 "report runs beside an open writer" "$REPORT" runs --db "$d/live.db"
wait "$writer"

# A database copied with its -wal but not its -shm, into a writable directory: report reads what
# the -wal holds and creates no -shm beside it (SQLite made one there, owned by whoever ran report).
mkdir -p "$d/copy"
sqlite3 -batch "$d/live.db" "PRAGMA wal_autocheckpoint = 0; UPDATE runs SET label = 'only-in-the-wal' WHERE id = 2;" \
	".shell cp '$d/live.db' '$d/copy/c.db'; cp '$d/live.db-wal' '$d/copy/c.db-wal'" >/dev/null
before=$(state "$d/copy")
check "the copy has its -wal and no -shm" [ -s "$d/copy/c.db-wal" ] && [ ! -e "$d/copy/c.db-shm" ]
expect_status 0 "report runs on a copy with its -wal and no -shm" "$REPORT" runs --db "$d/copy/c.db" --format csv
contains "$T/out" ",only-in-the-wal," "report reads what only the copied -wal holds"
check "no -shm created beside the copy, no file changed" [ "$(state "$d/copy")" = "$before" ]
rm -rf "$d/copy" "$d/live.db"*

# A read-only file in a read-only directory (as root, whom modes do not bind, through an
# unprivileged user when setpriv can switch to one). Main said "attempt to write a readonly
# database" here.
as_user=()
if [ "$(id -u)" = 0 ]; then
	if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
		as_user=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
		chmod 755 "$T"
	else
		note "running as root without setpriv: the read-only directory case is not tested"
	fi
fi
if [ "$(id -u)" != 0 ] || [ ${#as_user[@]} -gt 0 ]; then
	chmod a-w "$d/bench.db" "$d"
	before=$(state "$d")
	expect_status 0 "report on a read-only file in a read-only directory" "${as_user[@]}" "$REPORT" table --db "$d/bench.db"
	contains "$T/out" "naive" "the read-only database's cases shown"
	check "read-only directory unchanged" [ "$(state "$d")" = "$before" ]
	chmod u+w "$d" "$d/bench.db"
fi

# An older schema (3: before the columns of 004 to 010) is read, with no migration.
cp "$fixture" "$d/old.db"
sql "$d/old.db" "ALTER TABLE cases DROP COLUMN param_count; DROP INDEX runs_by_group;
	ALTER TABLE runs DROP COLUMN group_id; ALTER TABLE runs DROP COLUMN shard_index;
	ALTER TABLE runs DROP COLUMN shard_count; ALTER TABLE cases DROP COLUMN gpu_temp_c;
	ALTER TABLE cases DROP COLUMN gpu_sm_clock_mhz; ALTER TABLE cases DROP COLUMN gpu_throttle;
	ALTER TABLE runs DROP COLUMN host; ALTER TABLE runs DROP COLUMN pid;
	ALTER TABLE runs DROP COLUMN heartbeat_at; ALTER TABLE cases DROP COLUMN impl_info;
	ALTER TABLE cases DROP COLUMN stop_reason; ALTER TABLE cases DROP COLUMN cpu_wait;
	ALTER TABLE cases DROP COLUMN rse;
	ALTER TABLE runs DROP COLUMN mem_limit; ALTER TABLE runs DROP COLUMN mem_limit_source;
	ALTER TABLE runs DROP COLUMN resumes;
	DROP VIEW run_noise; DROP TABLE noise_sessions; DROP TABLE noise_runs;
	PRAGMA user_version = 3" >/dev/null
sql "$d/old.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
before=$(state "$d")
expect_status 0 "report reads schema 3" "$REPORT" table --db "$d/old.db"
contains "$T/out" "naive" "schema 3's cases shown"
check "schema 3 file not migrated" [ "$(sql "$d/old.db" "PRAGMA user_version")" = 3 ]
check "schema 3: no file changed" [ "$(state "$d")" = "$before" ]
expect_status 0 "runner migrate upgrades it" "$RUNNER" migrate --db "$d/old.db"
check "migrated to the latest schema" [ "$(sql "$d/old.db" "PRAGMA user_version")" = "$latest" ]

# An empty file is refused, and stays empty (report used to give it a benchdb schema).
: >"$d/empty.db"
expect_status 1 "empty file refused" "$REPORT" runs --db "$d/empty.db"
contains "$T/err" "not a benchdb database" "empty file message"
check "empty file still empty" [ ! -s "$d/empty.db" ]

# user_version = -1: refused by report and by runner (it used to read out of bounds and rewrite
# the file), and left as it was.
cp "$fixture" "$d/minus1.db"
sql "$d/minus1.db" "PRAGMA user_version = -1"
sum=$(md5sum <"$d/minus1.db")
expect_status 1 "user_version -1 refused by report" "$REPORT" runs --db "$d/minus1.db"
contains "$T/err" "not a benchdb database: schema version -1" "user_version -1 message"
expect_status 1 "user_version -1 refused by runner" "$RUNNER" run "$SRC/tests/cli/tiny.yaml" --db "$d/minus1.db"
check "user_version -1 file unchanged" [ "$(md5sum <"$d/minus1.db")" = "$sum" ]

# A newer schema is refused with both versions named.
cp "$fixture" "$d/newer.db"
sql "$d/newer.db" "PRAGMA user_version = $((latest + 1))"
expect_status 1 "newer schema refused" "$REPORT" runs --db "$d/newer.db"
contains "$T/err" "newer than this benchdb" "newer schema message"

# ---- 2. the hostile-database catalogue -----------------------------------------------------
# hostile NAME SQL: a copy of the fixture whose tables have lost their constraints (as a foreign
# tool or a hand edit leaves them), then SQL applied.
unconstrained() {
	cat <<'EOF'
PRAGMA foreign_keys = OFF; PRAGMA legacy_alter_table = ON;
CREATE TABLE cases_u AS SELECT * FROM cases; DROP TABLE cases; ALTER TABLE cases_u RENAME TO cases;
CREATE TABLE runs_u AS SELECT * FROM runs; DROP TABLE runs; ALTER TABLE runs_u RENAME TO runs;
CREATE TABLE samples_u AS SELECT * FROM samples; DROP TABLE samples; ALTER TABLE samples_u RENAME TO samples;
CREATE TABLE systems_u AS SELECT * FROM systems; DROP TABLE systems; ALTER TABLE systems_u RENAME TO systems;
EOF
}
hdir=$T/hostile
mkdir -p "$hdir"
n_hostile=0
hostile() {
	local name=$1 body=$2
	cp "$fixture" "$hdir/$name.db"
	{ unconstrained; echo "$body"; echo "PRAGMA wal_checkpoint(TRUNCATE);"; } |
		sqlite3 -batch "$hdir/$name.db" >/dev/null 2>"$T/sqlerr" ||
		fail "making $name: $(cat "$T/sqlerr")"
	n_hostile=$((n_hostile + 1))
}
for col in suite impl device dtype pass params case_key name status; do
	hostile "null_case_$col" "UPDATE cases SET $col = NULL;"
done
for col in uuid started_at status tool_version command_line; do
	hostile "null_run_$col" "UPDATE runs SET $col = NULL;"
done
hostile null_hostname "UPDATE systems SET hostname = NULL;"
hostile null_everything_case "UPDATE cases SET ord = NULL, warmup = NULL, iters = NULL, batch_size = NULL, seq_len = NULL, head_dim = NULL, heads = NULL, causal = NULL;"
hostile huge_iters "UPDATE cases SET iters = 9223372036854775807, warmup = 9223372036854775807;"
hostile negative_iters "UPDATE cases SET iters = -9223372036854775808, warmup = -5;"
hostile mixed_iters "UPDATE cases SET iters = 6148914691236517204, warmup = -9223372036854775808;"
hostile text_numbers "UPDATE cases SET iters = 'many', warmup = x'00ff', seq_len = 'long', batch_size = 1.5e300;"
hostile bad_samples "UPDATE samples SET iter = -iter - 1 WHERE iter % 2 = 0; UPDATE samples SET iter = 2147483647 WHERE iter = 3; UPDATE samples SET ns = -ns WHERE iter = 5;"
hostile huge_samples "UPDATE samples SET ns = 9223372036854775807 WHERE iter % 3 = 0;"
hostile null_samples "UPDATE samples SET ns = NULL, iter = NULL, phase = NULL WHERE iter % 4 = 0;"
hostile unknown_phase "UPDATE samples SET phase = 'xyz' WHERE iter % 2 = 1;"
hostile unknown_status "UPDATE cases SET status = 'exploded', reason = NULL; UPDATE runs SET status = 'weird';"
hostile orphan_run "UPDATE runs SET system_id = 999;"
hostile no_samples "DELETE FROM samples;"
hostile duplicate_ord "UPDATE cases SET ord = 0, case_key = 'k';"
hostile huge_bytes "UPDATE cases SET peak_bytes = 9223372036854775807, param_bytes = -1, mem_limit = -9223372036854775808, flops_fwd = 1e308, flops_bwd = -1e308, bytes_fwd = 0.0/0.0;"
hostile long_text "UPDATE cases SET name = hex(zeroblob(50000)), reason = hex(zeroblob(50000)); UPDATE runs SET label = hex(zeroblob(20000));"
hostile control_chars "UPDATE cases SET name = char(27) || '[31mred' || char(7); UPDATE runs SET label = char(27) || ']0;title' || char(7) || char(127);"
hostile no_cases_table "DROP TABLE cases;"
hostile no_runs_table "DROP TABLE runs;"

# A truncated file and a foreign SQLite file (made outside the function: not from the fixture).
head -c 20000 "$fixture" >"$hdir/truncated.db"
n_hostile=$((n_hostile + 1))
sqlite3 "$hdir/foreign.db" "CREATE TABLE t (x); INSERT INTO t VALUES (1);"
n_hostile=$((n_hostile + 1))
printf 'not a database at all, just text\n%.0s' {1..20} >"$hdir/text.db"
n_hostile=$((n_hostile + 1))
mkdir -p "$hdir/directory.db"
n_hostile=$((n_hostile + 1))

commands=(runs table "table --derived" "--compare naive" "compare --baseline base --run cand"
	"regress --baseline base --candidate cand" warmup history "export --what samples"
	"export --what stats" "writeup -o $T/writeup" "table --format json" "table --format tex")
n_runs=0
for db in "$hdir"/*.db; do
	name=$(basename "$db" .db)
	before=$(md5sum <"$db" 2>/dev/null || echo dir)
	for cmd in "${commands[@]}"; do
		n_runs=$((n_runs + 1))
		# shellcheck disable=SC2086
		"$REPORT" $cmd --db "$db" >"$T/out" 2>"$T/err"
		st=$?
		if [ "$st" -gt 2 ] || grep -q "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/err"; then
			fail "$name: report $cmd: exit $st: $(head -c 400 "$T/err")"
		else
			ok
		fi
	done
	after=$(md5sum <"$db" 2>/dev/null || echo dir)
	check "$name: file unchanged" [ "$before" = "$after" ]
done
check "no side file created in the catalogue" [ -z "$(ls "$hdir" | grep -E -- '-(wal|shm|journal)$')" ]
# Blanks, not crashes: a NULL case name is shown as an empty cell.
expect_status 0 "null case names give a table" "$REPORT" table --db "$hdir/null_case_name.db"
# Control characters in stored names and labels reach the terminal escaped, never raw.
expect_status 0 "runs with an escape sequence in a label" "$REPORT" runs --db "$hdir/control_chars.db"
check "no raw escape byte in report runs" [ "$(tr -cd '\033\007' <"$T/out" | wc -c)" = 0 ]
contains "$T/out" '\\x1b\]0;title\\x07' "the label's escape shown as \\x1b"
expect_status 0 "table with an escape sequence in a case name" "$REPORT" table --db "$hdir/control_chars.db"
# In JSON they are \u escapes (DEL too: the report's \x7f for it was an invalid JSON escape).
expect_status 0 "runs as json with control characters in a label" "$REPORT" runs --format json \
	--db "$hdir/control_chars.db"
check "that json reads back, the label exact" python3 -c '
import json, sys
labels = [r["label"] for r in json.load(open(sys.argv[1]))[0]["rows"]]
assert "\x1b]0;title\x07\x7f" in labels, labels' "$T/out"
check "no raw escape byte in report table" [ "$(tr -cd '\033\007' <"$T/out" | wc -c)" = 0 ]
# report export: exact to a file or a pipe (data for other tools), escaped on a terminal (it wrote
# the escape sequence raw there, where the table commands never did).
expect_status 0 "export of a case name with an escape sequence" "$REPORT" export --db "$hdir/control_chars.db"
check "export to a pipe keeps the name exact" grep -q "$(printf '\033')\[31mred" "$T/out"
check "export to a terminal escapes it" python3 - "$REPORT" "$hdir/control_chars.db" <<'EOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "export", "--db", sys.argv[2]])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:   # EIO: the child closed the terminal
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
assert b"\x1b" not in out and b"\x07" not in out, "a raw escape byte on the terminal"
assert b"\\x1b[31mred\\x07" in out, out[:300]
EOF
# runner noise names each system by its stored hostname (a merged node's BENCHDB_NODE): escaped
cp "$fixture" "$T/host_esc.db"
sql "$T/host_esc.db" "UPDATE systems SET hostname = 'node' || char(27) || ']0;title' || char(7)"
expect_status 0 "runner noise on a hostname with an escape sequence" "$RUNNER" noise --db "$T/host_esc.db"
check "no raw escape byte in runner noise" [ "$(tr -cd '\033\007' <"$T/out" | wc -c)" = 0 ]
contains "$T/out" '^system [0-9]+ \(node\\x1b\]0;title\\x07\): ' "the hostname's escape shown as \\x1b"
# A right-to-left override in a case name and a label (a browser or a markdown viewer shows what
# follows it reversed: "flash<RLO>2x" reads "flashx2"): shown as \u202e in the terminal table,
# exact in JSON (where \u202e reads back as the same character).
cp "$fixture" "$T/bidi.db"
sql "$T/bidi.db" "UPDATE cases SET name = 'flash' || char(8238) || '2x'; UPDATE runs SET label = 'nightly' || char(8238) || 'ab'"
expect_status 0 "table of a run with a right-to-left override in its label" "$REPORT" table --db "$T/bidi.db"
rlo=$(printf '\342\200\256')   # U+202E in UTF-8, whatever the locale ($'\u202e' is the locale's)
check "no raw override in report table" [ "$(grep -c -F "$rlo" "$T/out")" = 0 ]
contains "$T/out" 'label nightly\\u202eab' "the override shown as \\u202e"
expect_status 0 "export of a case name with a right-to-left override" "$REPORT" export --db "$T/bidi.db" --format csv
contains "$T/out" "flash${rlo}2x" "export to a pipe keeps the name exact"
expect_status 0 "runs of a label with a right-to-left override" "$REPORT" runs --db "$T/bidi.db" --format json
check "that json reads back, the label exact" python3 -c '
import json, sys
labels = [r["label"] for r in json.load(open(sys.argv[1]))[0]["rows"]]
assert "nightly\u202eab" in labels, labels' "$T/out"
note "hostile databases: $n_hostile, report invocations on them: $n_runs"
finish hostile_db
