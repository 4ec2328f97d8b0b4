#!/bin/sh
# tests/peers/fake_daemon.sh VARIANT: a protocol-1 peer for the CLI tests that leaves a process
# behind, which tries to outlive its case (the runner must kill it: schemas/peer-protocol.md,
# "Processes"). The process appends its pid to $FAKE_DAEMON_PIDS, then sleeps. VARIANT:
#   setsid    setsid sh -c ... &            a new session, out of the peer's process group
#   subshell  ( setsid sh -c ... & )        the same, its parent gone at once (a double fork)
#   ignore    sh -c 'trap "" TERM HUP INT; ...' &   in the group, deaf to SIGTERM
#   python    python3: fork, os.setsid(), fork, exec sleep (the classic daemon), stdout kept
# (no python3: the python variant says unsupported).
pids=$FAKE_DAEMON_PIDS
before=$(cat "$pids" 2>/dev/null | wc -l)
echo "benchdb-peer 1"
case $1 in
setsid) setsid sh -c 'echo $$ >>"$FAKE_DAEMON_PIDS"; exec sleep 778' </dev/null >/dev/null 2>&1 & ;;
subshell) ( setsid sh -c 'echo $$ >>"$FAKE_DAEMON_PIDS"; exec sleep 779' </dev/null >/dev/null 2>&1 & ) ;;
ignore) sh -c 'trap "" TERM HUP INT; echo $$ >>"$FAKE_DAEMON_PIDS"; exec sleep 780' </dev/null >/dev/null 2>&1 & ;;
python)
	if ! command -v python3 >/dev/null 2>&1; then echo "status unsupported no python3"; exit 0; fi
	python3 -c '
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(os.environ["FAKE_DAEMON_PIDS"], "a") as f:
            f.write("%d\n" % os.getpid())
        os.execvp("sleep", ["sleep", "781"])
    os._exit(0)
os.wait()
' ;;
*) echo "status error unknown variant '$1'"; exit 0 ;;
esac
# the process has written its pid before the case ends
n=0
while [ "$(cat "$pids" 2>/dev/null | wc -l)" -le "$before" ] && [ $n -lt 100 ]; do
	sleep 0.05
	n=$((n + 1))
done
i=0
while [ "$i" -lt $((BENCHDB_WARMUP + BENCHDB_ITERS)) ]; do
	for phase in $BENCHDB_PHASES; do echo "sample $i $phase 1000"; done
	i=$((i + 1))
done
echo "status ok"
