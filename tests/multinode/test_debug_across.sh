#!/usr/bin/env bash
# Debuggers across namespace nodes: `zpmix run --stop-in-init` of a job on two nodes; every rank,
# on either node, waits in PMIx_Init; a tool finds the run by its pid, hears PMIX_READY_FOR_DEBUG
# once all four wait (the root's coordinator counts them), sees that none went past PMIx_Init,
# finds them in the process table, attaches gdb to rank 0 (on the first node) and releases the
# job with PMIX_DEBUGGER_RELEASE, which the tree carries to the other node's ranks; the job ends
# well, every rank having gone on.
# usage: test_debug_across.sh ZPMIX DEBUGGER_TOOL DEBUG_RANK
set -u
zpmix=$1 tool=$2 rank_prog=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

command -v gdb >/dev/null || { echo "gdb not installed: skipped"; exit 77; }
netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
work=$(mktemp -d)
mkdir "$work/files"
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$work" "$XDG_RUNTIME_DIR"; netns_down' EXIT

"$zpmix" run --stop-in-init --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:2,$b:2" \
    "$rank_prog" "$work/files" >"$work/job.out" 2>"$work/job.err" &
pid=$!
deadline=$((SECONDS + 30))
until grep -q "release them: zpmix release" "$work/job.err" 2>/dev/null; do
    ((SECONDS < deadline)) || { cat "$work/job.out" "$work/job.err" >&2; kill "$pid"; exit 1; }
    sleep 0.02
done
ns=$(sed -n 's/.*release them: zpmix release \(\S*\) .*/\1/p' "$work/job.err")

out=$(timeout 90 "$tool" attach "$pid" "$ns" "$work/files" 4 2>&1)
st=$?
[ "$st" = 0 ] || echo "$out" >&2
check "tool: ready, none past init, the table, gdb, the release" 0 "$st"
check "tool: gdb read rank 0's variable" 1 "$(echo "$out" | grep -c 'gdb: \$1 = 4242')"
check "tool: every rank in the table, with its node" "0:$a 1:$a 2:$b 3:$b" \
    "$(echo "$out" | awk '/^proc /{printf "%s%s:%s", sep, $2, $4; sep=" "}')"

wait "$pid"
st=$?
[ "$st" = 0 ] || cat "$work/job.out" "$work/job.err" >&2
check "the job ends well once released" 0 "$st"
check "every rank, on both nodes, went on past PMIx_Init" 4 "$(ls "$work/files" | grep -c '^up\.')"
exit $((fails > 0))
