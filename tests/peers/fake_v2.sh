#!/bin/sh
# tests/peers/fake_v2.sh: a protocol-2 peer (schemas/peer-protocol.md) for the CLI tests, one
# process per case or persistent (BENCHDB_PEER_MODE). It times nothing: every sample is
# SEQ_LEN * 1000 + ITER nanoseconds. Its peer parameters plant what the runner must catch:
#   plant: none (checks within the bound), wrong (a check over the bound: a wrong kernel), nan,
#          nocheck, crash (exits 3 in the middle of the case), hang (past the timeout), garbage
#          (a malformed line), indent (its sample lines, first check line and status line led
#          by a form feed and a vertical tab: white space the protocol ignores), trailer (a
#          sample line after its status line, in the same write), late (the same line 0.02 s
#          after its status line), closeout (persistent: closes its stdout in the middle of the
#          case and waits on stdin), badcrash (a malformed line, then exits 3), badnoeol (a
#          malformed line, then its status line without a line end, and exits 0), noeol (no check
#          line; its status line without a line end, then it exits 0)
#   work:  none (no work line), benchdb, own (1e6 FLOPs and 2048 bytes per phase)
# FAKE_HEADER: the version its header says (default 2).
# When FAKE_PEER_LOG is set, each case appends "pid=PID impl=IMPL seq_len=S plant=P" there.
case_run() {
	[ -n "${FAKE_PEER_LOG:-}" ] &&
		echo "pid=$$ impl=$BENCHDB_IMPL seq_len=$BENCHDB_SEQ_LEN plant=$BENCHDB_PLANT" >>"$FAKE_PEER_LOG"
	echo "info {\"peer\": \"fake_v2.sh\", \"mode\": \"$BENCHDB_PEER_MODE\"}"
	case "$BENCHDB_PLANT" in
	crash) echo "sample 0 fwd 5"; echo "fake_v2: crashing" >&2; exit 3 ;;
	hang) echo "fake_v2: hanging" >&2; sleep 600 ;;
	closeout) echo "sample 0 fwd 5"; exec 1>&-; echo "fake_v2: stdout closed" >&2; read -r _; exit 0 ;;
	garbage) echo "sample zero fwd 5"; echo "status ok"; return ;;
	badcrash) echo "sample zero fwd 5"; echo "fake_v2: crashing" >&2; exit 3 ;;
	badnoeol) echo "sample zero fwd 5"; printf 'status ok'; exit 0 ;;
	esac
	lead=
	[ "$BENCHDB_PLANT" = indent ] && lead=$(printf '\f\v')
	i=0
	while [ "$i" -lt $((BENCHDB_WARMUP + BENCHDB_ITERS)) ]; do
		for phase in $BENCHDB_PHASES; do
			echo "${lead}sample $i $phase $((BENCHDB_SEQ_LEN * 1000 + i))"
		done
		i=$((i + 1))
	done
	case "$BENCHDB_PLANT" in
	wrong) echo "check output 0.25 $BENCHDB_CHECK_ATOL O[b=0, h=1, s=3, d=2]" ;;
	nan) echo "check output nan $BENCHDB_CHECK_ATOL" ;;
	nocheck | noeol) ;;
	*) echo "${lead}check output 0.000001 0.001 O[b=0, h=0, s=1, d=1]"; echo "check dq 0 $BENCHDB_CHECK_ATOL" ;;
	esac
	case "$BENCHDB_WORK" in
	benchdb) echo "work benchdb" ;;
	own) for phase in $BENCHDB_PHASES; do echo "work $phase 1000000 2048"; done ;;
	esac
	case "$BENCHDB_PLANT" in
	trailer) printf 'status ok\nsample 0 fwd 5\n' ;;
	late) echo "status ok"; sleep 0.02; echo "sample 0 fwd 5" ;;
	noeol) printf 'status ok'; exit 0 ;;
	*) echo "${lead}status ok" ;;
	esac
}

echo "benchdb-peer ${FAKE_HEADER:-2}"
if [ "$BENCHDB_PEER_MODE" != persistent ]; then
	case_run
	exit 0
fi
while read -r kind json; do
	if [ "$kind" != case ]; then
		echo "status error expected a case line, got '$kind'"
		continue
	fi
	# the case's variables from its JSON object of strings (values here are names and numbers)
	for v in BENCHDB_IMPL BENCHDB_SEQ_LEN BENCHDB_WARMUP BENCHDB_ITERS BENCHDB_PHASES \
		BENCHDB_PLANT BENCHDB_WORK BENCHDB_CHECK_ATOL BENCHDB_PEER_MODE; do
		val=$(printf '%s\n' "$json" | sed -n "s/.*\"$v\":\"\([^\"]*\)\".*/\1/p")
		eval "$v=\$val"
	done
	case_run
done
