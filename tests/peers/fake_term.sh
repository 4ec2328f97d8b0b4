#!/bin/sh
# tests/peers/fake_term.sh: a peer that hangs until it is stopped and then says, on stderr, where
# it was (its SIGTERM handler's last words, which the case's reason must show).
trap 'echo "fake_term: stopped while waiting on step 7" >&2; exit 1' TERM
echo "benchdb-peer 1"
echo "fake_term: started" >&2
sleep 300 &
wait
