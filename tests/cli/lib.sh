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
# The report's output formats, from the rows of REPORT_FORMATS in report/render.h (one a line:
# X(ID, name, kinds)). format_names [KIND]: their names, of that kind (FORMAT_DATA, ...) or all;
# format_list [KIND]: "md, csv, json, tex" as errors list them; format_help [KIND]: "md (default),
# csv, json or tex" as --help says them.
format_names() {
	sed -n 's/^[[:space:]]*X([A-Z0-9_]*, *\([a-z0-9_]*\), *\([^)]*\)).*/\1 \2/p' \
		"$SRC/report/render.h" | awk -v k="${1:-}" 'k == "" || index($0, k) { print $1 }'
}
format_list() { format_names "$@" | paste -sd, - | sed 's/,/, /g'; }
format_help() {
	format_names "$@" | awk '{ n[NR] = $1 }
		END { s = n[1] " (default)"; for (i = 2; i <= NR; i++) s = s (i < NR ? ", " : " or ") n[i]; print s }'
}
# golden NAME FILE: compare FILE with tests/golden/NAME (UPDATE_GOLDEN=1 rewrites it). In help
# goldens (*_help.txt) the format lists are @FORMATS@ and @DATA_FORMATS@ (export's), written from
# render.h's table, so that a new format changes no golden.
golden() {
	local out=$2
	case $1 in
	*_help.txt)
		out=$T/golden_masked
		sed -e "s/$(format_help)/@FORMATS@/" -e "s/$(format_help FORMAT_DATA)/@DATA_FORMATS@/" \
			"$2" >"$out"
		;;
	esac
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$out" "$GOLDEN/$1"; ok; return; fi
	if diff -u "$GOLDEN/$1" "$out" >"$T/diff"; then ok; else fail "golden $1 differs:"; cat "$T/diff" >&2; fi
}
sql() { sqlite3 -batch -noheader "$1" "$2"; }
# csv_cols FILE NAME...: the named columns of a CSV's first table (to its first blank line),
# comma-joined, by header name; "?" for a column the header lacks (so that no check passes on it)
csv_cols() {
	local f=$1
	shift
	awk -F, -v names="$*" 'BEGIN { n = split(names, want, " ") }
		NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
		NF == 0 { exit }
		{ s = ""; for (k = 1; k <= n; k++) s = s (k > 1 ? "," : "") (want[k] in at ? $(at[want[k]]) : "?"); print s }' "$f"
}
# finish NAME: the closing line CTest logs, and the exit status.
finish() {
	echo "$1: $passed passed, $failed failed"
	[ "$failed" = 0 ]
}
