#!/bin/sh
# tests/peers/fake_fail.sh: a peer that crashes half-way: some output, a message on stderr, exit 3.
echo "benchdb-peer 1"
echo "sample 0 fwd 1000"
echo "fake_fail: loading the model" >&2
echo "fake_fail: something went wrong at step 1" >&2
exit 3
