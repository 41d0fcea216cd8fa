#!/usr/bin/env bash
# Tools and queries across namespace nodes: a tool finds the broker of a `zpmix run` by its pid
# (PMIX_SERVER_PIDINFO) and queries the process table of a job on two nodes: every rank, with its
# node and pid; the job's ranks query it too (from their own node's broker), and see every rank.
# A tool on the second node reaches `zpmix run`'s broker over tcp (PMIX_TCP_URI, the keypair in
# $ZPMIX_TCP_KEYS): the same table, an event to itself on the broker's tcp publisher, job control
# of the job; without the keypair it is turned away.
# usage: test_tools_across.sh ZPMIX TOOL_PROG QUERY_CLIENT
set -u
zpmix=$1 tool=$2 qprog=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$work" "$XDG_RUNTIME_DIR"; netns_down' EXIT
# The brokers also serve tcp (a free port each), where tools of other nodes connect.
export ZPMIX_CONFIG=$work/zpmix.toml
printf '[broker]\ntcp = "tcp://0.0.0.0:*"\n' >"$ZPMIX_CONFIG"

"$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:2,$b:2" "$qprog" "$work/release" \
    >"$work/job.out" 2>"$work/job.err" &
pid=$!
deadline=$((SECONDS + 30))
until [ "$(grep -c " ready" "$work/job.out" 2>/dev/null)" = 4 ]; do
    ((SECONDS < deadline)) || { cat "$work/job.out" "$work/job.err" >&2; kill "$pid"; exit 1; }
    sleep 0.02
done
ns=$(sed -n 's/^nspace \(\S*\) rank 0 ready$/\1/p' "$work/job.out")

out=$(timeout 60 "$tool" pid "$pid" "$ns" 2>&1)
check "tool: its checks" 0 "$?"
check "tool: every rank with its node and state (5: running)" \
    "0:$a:5 1:$a:5 2:$b:5 3:$b:5" \
    "$(echo "$out" | awk '/^row /{printf "%s%s:%s:%s", sep, $2, $5, $4; sep=" "}')"
ps=$(timeout 60 "$zpmix" ps --ranks --json --job "$ns" --broker "ipc://$XDG_RUNTIME_DIR/zpmix/broker-$pid-0/broker.sock" |
    python3 -c 'import json,sys; print(" ".join("%d:%d" % (p["rank"], p["pid"]) for p in json.load(sys.stdin)))')
check "tool: the pids are the ranks' (as zpmix ps lists them)" "$ps" \
    "$(echo "$out" | awk '/^row /{printf "%s%s:%s", sep, $2, $3; sep=" "}')"

# Over tcp from the second node: `zpmix run`'s broker is in the root namespace, on the bridge.
root=$XDG_RUNTIME_DIR/zpmix/broker-$pid-0
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tcp_uri"].rsplit(":", 1)[1])' \
    "$root/broker.json")
uri=tcp://$ZPMIX_NETNS_BRIDGE_ADDR:$port
out=$(timeout 60 "$ZPMIX_NETNS_AGENT" "$b" env "ZPMIX_TCP_KEYS='$(cat "$root/tcp.key")'" \
    "$tool" tcp "$uri" "$ns" 2>&1)
check "tcp tool on $b: its checks (queries, its event back, job control)" 0 "$?"
[ "$(grep -c '^ok$' <<<"$out")" = 1 ] || echo "$out" >&2
check "tcp tool on $b: every rank with its node" "0:$a 1:$a 2:$b 3:$b" \
    "$(echo "$out" | awk '/^row /{printf "%s%s:%s", sep, $2, $5; sep=" "}')"
out=$(timeout 60 "$ZPMIX_NETNS_AGENT" "$b" "$tool" tcp "$uri" "$ns" 2>&1)
check "tcp tool on $b without the keypair: refused" 1 "$?"

touch "$work/release"
wait "$pid"
st=$?
[ "$st" = 0 ] || cat "$work/job.out" "$work/job.err" >&2
check "the ranks' own queries of the table (every rank, across nodes)" 0 "$st"
exit $((fails > 0))
