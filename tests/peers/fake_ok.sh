#!/bin/sh
# tests/peers/fake_ok.sh: a well-behaved peer (schemas/peer-protocol.md) for the CLI tests. It
# times nothing: every sample of the case is SEQ_LEN * 1000 + ITER nanoseconds, so that the test
# can check exactly what was stored. Causal attention is "unsupported". When FAKE_PEER_LOG is set,
# it appends its working directory and BENCHDB_* environment there.
if [ -n "${FAKE_PEER_LOG:-}" ]; then
	{ echo "cwd=$(pwd)"; env | grep '^BENCHDB_' | sort; echo; } >>"$FAKE_PEER_LOG"
fi
echo "benchdb-peer 1"
echo "info peer fake_ok.sh"
echo "info {\"peer\": \"fake_ok.sh\", \"seq_len\": $BENCHDB_SEQ_LEN}"
echo "# $BENCHDB_PARAMS"
if [ "$BENCHDB_CAUSAL" = true ]; then
	echo "status unsupported the fake peer has no causal mask"
	exit 0
fi
i=0
while [ "$i" -lt $((BENCHDB_WARMUP + BENCHDB_ITERS)) ]; do
	for phase in $BENCHDB_PHASES; do
		echo "sample $i $phase $((BENCHDB_SEQ_LEN * 1000 + i))"
	done
	i=$((i + 1))
done
echo "memory peak_fwd 1000"
echo "memory peak_bwd 3000"
echo "status ok"
