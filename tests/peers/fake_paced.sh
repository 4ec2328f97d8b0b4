#!/bin/sh
# tests/peers/fake_paced.sh: a persistent protocol-2 peer (schemas/peer-protocol.md) that keeps to
# a paced case's steps: `ready` once set up and after each step, then the iterations of the next
# `go N` from stdin. It times nothing: each sample is FAKE_BASE_NS nanoseconds (default 1000000)
# times a planted machine-wide drift, 1 + FAKE_DRIFT_PCT/100 per iteration run so far by any
# peer sharing the counter file FAKE_COUNTER (no file: no drift) — a machine that slows down
# as the run goes on, whichever implementation is measured.
# FAKE_PLANT plants what the runner must catch or cope with: overrun (one iteration more than each
# go line asks for), runahead (after its first go line, the rest of the case without waiting),
# runahead_eof (the same, its status line without a line end, then it exits), stepahead (never
# reads a go line: steps of FAKE_STEP iterations, default 2, each after a `ready` that counts
# right), comment (a comment and a blank line after each `ready`: allowed), quit (exits,
# status 0, while it waits after its first step), slow (0.2 s per iteration), tabs (its sample
# lines' fields separated by tabs, two after `sample`: the parser's white space, allowed),
# readyafter (a `ready` line after its status line, in the same write).
# FAKE_CASES: it serves that many cases and then exits on its own, status 0, after a clean-up of
# FAKE_CLEANUP seconds (default 0.5; an interpreter's teardown), while the runner may already send
# the next case's line.
# When FAKE_PEER_LOG is set, each go line appends "IMPL go N" there, and each case "IMPL case PID".
log() { [ -n "${FAKE_PEER_LOG:-}" ] && echo "$BENCHDB_IMPL $*" >>"$FAKE_PEER_LOG"; return 0; }
iteration() {   # iteration I: its samples, at the drift the counter says
	ran=0
	if [ -n "${FAKE_COUNTER:-}" ]; then
		ran=$(cat "$FAKE_COUNTER" 2>/dev/null || echo 0)
		echo $((ran + 1)) >"$FAKE_COUNTER"
	fi
	ns=$(( ${FAKE_BASE_NS:-1000000} * (100 + ran * ${FAKE_DRIFT_PCT:-0}) / 100 ))
	for phase in $BENCHDB_PHASES; do
		if [ "${FAKE_PLANT:-}" = tabs ]; then
			printf 'sample\t\t%s\t%s\t%s\n' "$1" "$phase" "$ns"
		else
			echo "sample $1 $phase $ns"
		fi
	done
}
echo "benchdb-peer 2"
served=0
while [ -z "${FAKE_CASES:-}" ] || [ "$served" -lt "$FAKE_CASES" ]; do
	read -r kind json || break
	for v in BENCHDB_IMPL BENCHDB_WARMUP BENCHDB_ITERS BENCHDB_PHASES BENCHDB_PACED BENCHDB_CHECK_ATOL; do
		val=$(printf '%s\n' "$json" | sed -n "s/.*\"$v\":\"\([^\"]*\)\".*/\1/p")
		eval "$v=\$val"
	done
	log case $$
	total=$((BENCHDB_WARMUP + BENCHDB_ITERS))
	i=0
	while [ "$i" -lt "$total" ]; do
		if [ "$BENCHDB_PACED" = true ]; then
			if [ "${FAKE_PLANT:-}" = stepahead ]; then
				# the ready line and the next iteration's samples in one write, so that the
				# runner has both when it reads the ready line; then the rest of the step
				printf 'ready\n%s\n' "$(iteration "$i")"
				i=$((i + 1))
				go=go n=$((${FAKE_STEP:-2} - 1))
			else
				echo ready
				[ "${FAKE_PLANT:-}" = quit ] && [ "$i" -gt 0 ] && exit 0
				[ "${FAKE_PLANT:-}" = comment ] && printf '# waiting for go\n\n'
				read -r go n || exit 0
			fi
			log "$go $n"
			case "${FAKE_PLANT:-}" in
			overrun) n=$((n + 1)) ;;
			runahead | runahead_eof) n=$total ;;
			esac
		else
			n=$total
		fi
		while [ "$n" -gt 0 ] && [ "$i" -lt "$total" ]; do
			[ "${FAKE_PLANT:-}" = slow ] && sleep 0.2
			iteration "$i"
			i=$((i + 1))
			n=$((n - 1))
		done
	done
	echo "check output 0 $BENCHDB_CHECK_ATOL"
	if [ "${FAKE_PLANT:-}" = runahead_eof ]; then
		printf 'status ok'
		exit 0
	fi
	if [ "${FAKE_PLANT:-}" = readyafter ]; then
		printf 'status ok\nready\n'
	else
		echo "status ok"
	fi
	served=$((served + 1))
done
[ -n "${FAKE_CASES:-}" ] && sleep "${FAKE_CLEANUP:-0.5}"
exit 0
