#!/bin/sh
# scripts/json_libs/run.sh [ROUNDS [REPS]]: the comparison behind the peer protocol's choice of
# jansson (runner/peer_protocol.c): RFC 8259 strictness probes and parse speed on peer-like lines,
# of Debian 12's C JSON libraries. Needs their -dev packages (not the build's dependencies):
#   apt-get install libjansson-dev libjson-c-dev libcjson-dev libyajl-dev libjsonparser-dev
set -eu
cd "$(dirname "$0")"
out=${TMPDIR:-/tmp}/benchdb_json_libs
# one file per library: jansson's and json-c's headers cannot be included together
cc -O2 -Wall -Wextra -o "$out" bench.c lib_*.c -ljansson -ljson-c -lcjson -lyajl -ljsonparser
"$out" "${1:-21}" "${2:-20000}"
