#!/usr/bin/env bash
# PMIx_Spawn from a job on two namespace nodes (tests/wireup/wireup_prog.c, scenarios
# "spawn_across" and "spawned"): the child is mapped onto the slots its parent left on both nodes
# (or onto the host PMIX_HOST names, or onto a node of the allocation without ranks of the
# parent; no room is refused), its ranks know their node and their parent, fence across
# nodes, and their output reaches `zpmix run`; its end comes to the spawner (PMIX_EVENT_JOB_END
# with its exit code) and is the run's exit status; a host outside the allocation and a part that
# cannot start are refused; a child spawned with PMIX_SPAWN_CHILD_SEP false and still running ends
# with its parent job, on every node; with
# --tag-output its lines name their node.
# usage: test_spawn_across.sh ZPMIX WIREUP_PROG
set -u
zpmix=$1 prog=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
conf=$(mktemp)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$conf" "$conf.err" "$XDG_RUNTIME_DIR"; netns_down' EXIT
export ZPMIX_CONFIG=$conf
run() { timeout 120 "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" "$@"; }
# The parent: one rank on each node (3 slots each), so 2 slots are left on each.
parent=(-H "$a:3,$b:3" --map-by node -n 2 "$prog" spawn_across)
children() { sed -n 's/^\(child [0-9]* of [0-9]* on .*\)$/\1/p' <<<"$1" | sort; }

out=$(run -v "${parent[@]}" 4 0 2>"$conf.err")
check "across: exit status" 0 $?
check "across: the child's ranks on both nodes, each knowing its node" \
    "$(printf '%s\n' "child 0 of 4 on $a node 0 of 2" "child 1 of 4 on $a node 0 of 2" \
        "child 2 of 4 on $b node 1 of 2" "child 3 of 4 on $b node 1 of 2")" "$(children "$out")"
check "across: every rank of both jobs held its scenario" 6 "$(grep -c ': spawn\(_across\|ed\) ok$' <<<"$out")"
[ -z "$(grep -v '^\(child\|rank\|spawned\) ' <<<"$out")" ] || echo "$out" >&2
# The part that could not start is named (the second spawn's, on both nodes' parts with ranks).
check "across: a failed part names its node" yes \
    "$(grep -q "failed on \($a\|$b\): cannot launch '/no/such/program-zpmix'" "$conf.err" && echo yes || cat "$conf.err")"

# PMIX_HOST: only there; the child's exit status is the spawner's event's and the run's.
out=$(run -v "${parent[@]}" 2 3 "$b" 2>"$conf.err")
check "host: exit status is the child's" 3 $?
check "host: the child's ranks all on $b" \
    "$(printf '%s\n' "child 0 of 2 on $b node 0 of 1" "child 1 of 2 on $b node 0 of 1")" "$(children "$out")"
check "host: the parent held its scenario" 2 "$(grep -c ': spawn_across ok$' <<<"$out")"
check "host: the part on $b that could not start is named" yes \
    "$(grep -q "failed on $b: cannot launch '/no/such/program-zpmix'" "$conf.err" && echo yes || cat "$conf.err")"

# A parent whose ranks are all on one node: its child goes to the allocation's other node, which
# runs none of its ranks (a broker runs on every node of the allocation, as mpirun's daemons do).
out=$(run -H "$a:1,$b:2" -n 1 "$prog" spawn_across 2 0 2>"$conf.err")
check "free node: exit status" 0 $?
check "free node: the child's ranks on $b, where the parent has none" \
    "$(printf '%s\n' "child 0 of 2 on $b node 0 of 1" "child 1 of 2 on $b node 0 of 1")" "$(children "$out")"
check "free node: the parent held its scenario" 1 "$(grep -c ': spawn_across ok$' <<<"$out")"

# No room left in the allocation: PMIX_ERR_OUT_OF_RESOURCE, and a line saying why.
out=$(run -H "$a:1,$b:2" -n 1 "$prog" spawn_across 3 full 2>"$conf.err")
check "no room: exit status" 0 $?
check "no room: the spawner saw PMIX_ERR_OUT_OF_RESOURCE" 1 "$(grep -c '^spawn refused$' <<<"$out")"
check "no room: said in the log" yes \
    "$(grep -q "spawn of 3 rank(s) from .* refused" "$conf.err" && echo yes || cat "$conf.err")"

# A child spawned with PMIX_SPAWN_CHILD_SEP false and still running when its parent job ends
# (normally) is ended with it, on every node. With
# --tag-output, each line of the child names the node its rank runs on.
out=$(run --tag-output "${parent[@]}" 4 sleep 2>"$conf.err")
check "teardown: exit status" 0 $?
check "teardown: the child ran on both nodes" 4 \
    "$(children "$(sed 's/^\[[^]]*\]<stdout>: //' <<<"$out")" | wc -l)"
check "tag-output: each line of the child names its rank's node" 4 \
    "$(grep -c '^\[[^,]*,[0-9]*,\([^]]*\)\]<stdout>: child [0-9]* of 4 on \1 ' <<<"$out")"
deadline=$((SECONDS + 15))
while left=$(ip netns pids "$a"; ip netns pids "$b") && [ -n "$left" ] && ((SECONDS < deadline)); do
    sleep 0.05
done
check "teardown: no process left on the nodes" "" "$left"
check "teardown: no child left" "" "$(pgrep -f "$prog spawned" || true)"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
