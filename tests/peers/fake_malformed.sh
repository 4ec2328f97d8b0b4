#!/bin/sh
# tests/peers/fake_malformed.sh: a peer whose third line breaks the protocol (exit status 0).
echo "benchdb-peer 1"
echo "sample 0 fwd 1000"
echo "sample 0 bwd 12ms"
echo "status ok"
