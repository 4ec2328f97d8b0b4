#!/bin/sh
# tests/peers/fake_escape.sh: a peer whose status reason and stderr carry terminal escape
# sequences (clear screen, a window title, colours, an 8-bit CSI); none may reach the runner's
# terminal raw.
echo "benchdb-peer 1"
printf 'fake_escape: \033[2J\033]0;pwned\007 \302\233 31m done\n' >&2
printf 'status error the peer says \033[31mred\033[0m and \033]0;title\007\n'
exit 1
