#!/usr/bin/env bash
# tests/schema_numbers_test.sh: db/embed_sql.cmake gives each migration the schema version of its
# file's number: a number without a file (a migration of another branch) is a NULL entry that
# migrate() skips, numbers are decimal (008, 012), and two files of one number stop the build.
#   schema_numbers_test.sh CMAKE
set -u
CMAKE=$1
source "$(dirname "$0")/cli/lib.sh"
EMBED=$SRC/db/embed_sql.cmake

mkdir -p "$T/gap"
for f in 001_init 008_eight 010_ten 012_twelve; do echo "-- $f" >"$T/gap/$f.sql"; done
expect_status 0 "embed with a gap at 011" "$CMAKE" -DSCHEMA_DIR="$T/gap" -DOUT="$T/gap.c" -P "$EMBED"
check "latest = the highest number, 12" grep -q '^const int schema_migration_count = 12;$' "$T/gap.c"
# the entries in order: 1 m1, 2-7 NULL, 8 m8, 9 NULL, 10 m10, 11 NULL, 12 m12, the sentinel
entries=$(sed -n '/schema_migrations\[\] = {/,/^};/p' "$T/gap.c" | sed -n 's/^\t\([a-zA-Z0-9]*\),.*/\1/p' | paste -sd' ')
check "entry v-1 is migration v, NULL where no file has the number (got: $entries)" \
	[ "$entries" = "m1 NULL NULL NULL NULL NULL NULL m8 NULL m10 NULL m12 NULL" ]
check "migration 12 is 012_twelve.sql" grep -q '^static const char m12\[\] = {0x2d,0x2d,0x20,0x30,0x31,0x32,0x5f,0x74' "$T/gap.c"

mkdir -p "$T/dup"
for f in 001_init 011_mine 011_theirs; do echo "-- $f" >"$T/dup/$f.sql"; done
expect_status 1 "two files of one number stop the build" "$CMAKE" -DSCHEMA_DIR="$T/dup" -DOUT="$T/dup.c" -P "$EMBED"
contains "$T/err" "011_theirs\.sql: migration number 011" "the message names the file and its number"
check "nothing written" [ ! -e "$T/dup.c" ]

finish schema_numbers
