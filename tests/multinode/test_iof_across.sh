#!/usr/bin/env bash
# I/O forwarding across namespace nodes: a tool attached to `zpmix run` (the root broker, whose
# node runs no rank) pulls the output of a job on two other nodes, gets what the ranks wrote
# before it came, pushes input to rank 0 (on the first node) and gets its echo, deregisters
# (tests/tools/iof_tool.c says what it checks).
# usage: test_iof_across.sh ZPMIX IOF_TOOL IOF_RANK
set -u
zpmix=$1 tool=$2 rank=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'exec 3>&-; rm -rf "$work" "$XDG_RUNTIME_DIR"; netns_down' EXIT

# zpmix run's stdin stays open (this script holds the FIFO): rank 0 reads only what the tool
# pushes.
mkfifo "$work/stdin"
exec 3<>"$work/stdin"
"$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:2,$b:2" "$rank" <"$work/stdin" \
    >"$work/job.out" 2>"$work/job.err" &
pid=$!
deadline=$((SECONDS + 30))
until [ "$(grep -c " before$" "$work/job.out" 2>/dev/null)" = 4 ]; do
    ((SECONDS < deadline)) || { cat "$work/job.out" "$work/job.err" >&2; kill "$pid"; exit 1; }
    sleep 0.02
done
ns=$(sed -n 's/^nspace \(\S*\)$/\1/p' "$work/job.out")

out=$(timeout 60 "$tool" "$pid" "$ns" 4 2>&1)
st=$?
[ "$st" = 0 ] || echo "$out" >&2
check "tool: its checks (cached output of both nodes, echo of pushed input, deregistration)" 0 "$st"
check "tool: rank 2's line came from the second node, tagged" 1 \
    "$(echo "$out" | grep -c "^A stdout: \[$ns,2\]<stdout>: out 2 before$")"

wait "$pid"
st=$?
[ "$st" = 0 ] || cat "$work/job.out" "$work/job.err" >&2
check "the job ends once rank 0's input ended" 0 "$st"
check "zpmix run printed the echo" 1 "$(grep -c "^echo: hello$" "$work/job.out")"
exit $((fails > 0))
