# tests/cli/lib.sh: the assertions the CLI test scripts share. Sourcing it
# sets SRC (repository root), GOLDEN, T (a temporary directory removed on exit unless KEEP is
# set) and the pass/fail counters; finish a script with `finish NAME`.
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GOLDEN=$SRC/tests/golden
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
note() { echo "note: $*"; }
# check DESCRIPTION COMMAND...: the command must succeed.
check() { local d=$1; shift; if "$@"; then ok; else fail "$d"; fi; }
# expect_status WANT DESCRIPTION COMMAND...: run it, keep stdout/stderr in $T/out $T/err.
expect_status() {
	local want=$1 d=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	local got=$?
	if [ "$got" = "$want" ]; then ok; else fail "$d: exit $got, want $want; stderr: $(head -c 600 "$T/err")"; fi
}
# contains FILE REGEX DESCRIPTION / lacks FILE REGEX DESCRIPTION
contains() { if grep -Eq -- "$2" "$1"; then ok; else fail "$3: '$2' not in $(head -c 600 "$1")"; fi; }
lacks() { if grep -Eq -- "$2" "$1"; then fail "$3: '$2' found in $1"; else ok; fi; }
# golden NAME FILE: compare FILE with tests/golden/NAME (UPDATE_GOLDEN=1 rewrites it).
golden() {
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$2" "$GOLDEN/$1"; ok; return; fi
	if diff -u "$GOLDEN/$1" "$2" >"$T/diff"; then ok; else fail "golden $1 differs:"; cat "$T/diff" >&2; fi
}
sql() { sqlite3 -batch -noheader "$1" "$2"; }
# finish NAME: the closing line CTest logs, and the exit status.
finish() {
	echo "$1: $passed passed, $failed failed"
	[ "$failed" = 0 ]
}
