#!/usr/bin/env bash
# PMIx wire-up across namespace nodes: job information, collecting and data-less fences over the
# job and a subset, scopes and direct modex (tests/wireup/wireup_prog.c, scenario "across"), on
# two nodes under a flat tree and on three nodes under a chain (a broker in the middle relays).
# usage: test_wireup_across.sh ZPMIX WIREUP_PROG
set -u
zpmix=$1 prog=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 3
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]} c=${NETNS_NODES[2]}
conf=$(mktemp)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$conf" "$XDG_RUNTIME_DIR"; netns_down' EXIT
export ZPMIX_CONFIG=$conf
run() { timeout 120 "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" "$@"; }

printf '[tree]\nradix = 4\n' >"$conf"
out=$(run -H "$a:2,$b:2" "$prog" across 2 2>&1)
check "two nodes: wireup across" 0 $?
[ -z "$out" ] || echo "$out" >&2

printf '[tree]\nradix = 1\n' >"$conf"
out=$(run -H "$a:1,$b:2,$c:1" "$prog" across 3 2>&1)
check "three nodes in a chain: wireup across" 0 $?
[ -z "$out" ] || echo "$out" >&2

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
