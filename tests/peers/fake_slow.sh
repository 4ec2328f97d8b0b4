#!/bin/sh
# tests/peers/fake_slow.sh: a peer that never finishes (for timeouts and interrupts). Its sleep runs
# as a child, so that stopping only the shell would leave it behind; when FAKE_PEER_PIDS is set,
# the shell and the sleep write their process ids there.
echo "benchdb-peer 1"
echo "fake_slow: started" >&2
sleep 300 &
[ -n "${FAKE_PEER_PIDS:-}" ] && echo "$$ $!" >"$FAKE_PEER_PIDS"
wait
