#!/usr/bin/env bash
# Two harness runs at once do not clash: while both are up, their subnets, bridges and node names
# differ, each reaches its own nodes, and both clean up after themselves.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"
[ "$(id -u)" -eq 0 ] || netns_skip "making network namespaces needs root"
meet=$(mktemp -d)
trap 'rm -rf "$meet"' EXIT

# One run: up, publish what it has, wait until the other is up too, use its nodes, go down.
one_run() {
    local me=$1 other=$2
    netns_up 2
    echo "$ZPMIX_NETNS_SUBNET ${NETNS_NODES[*]} $ZPMIX_NETNS_DIR" >"$meet/$me.tmp"
    mv "$meet/$me.tmp" "$meet/$me"
    wait_for_file "$meet/$other" 60 || { echo "run $me: the other run never came up" >&2; exit 1; }
    local n out
    for n in "${NETNS_NODES[@]}"; do
        out=$("$ZPMIX_NETNS_AGENT" "$n" hostname) || exit 1
        [ "$out" = "$n" ] || { echo "run $me: $n says it is $out" >&2; exit 1; }
    done
    # Each run's bridge reaches its own nodes (its subnet is routed to its own bridge only).
    out=$(ip -4 route get "$(netns_addr "${NETNS_NODES[1]}")" | grep -o 'dev [^ ]*')
    [ "$out" = "dev $(cat "$ZPMIX_NETNS_DIR/bridge")" ] || { echo "run $me: route $out" >&2; exit 1; }
    echo done >"$meet/$me.checked"
    wait_for_file "$meet/$other.checked" 60 || exit 1  # both stay up until both have looked
    netns_down
}
(one_run a b) &
run_a=$!
(one_run b a) &
run_b=$!
wait "$run_a"
check "run a" 0 $?
wait "$run_b"
check "run b" 0 $?
if [ "$fails" -eq 0 ]; then
    read -r subnet_a nodes_a1 nodes_a2 dir_a <"$meet/a"
    read -r subnet_b nodes_b1 nodes_b2 dir_b <"$meet/b"
    echo "run a: $subnet_a $nodes_a1 $nodes_a2; run b: $subnet_b $nodes_b1 $nodes_b2"
    [ "$subnet_a" != "$subnet_b" ] && check "different subnets" yes yes || check "different subnets" "$subnet_a != $subnet_b" same
    [ "$nodes_a1" != "$nodes_b1" ] && check "different names" yes yes || check "different names" "$nodes_a1 != $nodes_b1" same
    for d in "$dir_a" "$dir_b"; do check "state dir $d removed" no "$([ -e "$d" ] && echo yes || echo no)"; done
    check "no namespace left" "" "$(ip netns list | grep -E "^($nodes_a1|$nodes_a2|$nodes_b1|$nodes_b2)( |$)")"
    # What is left is told by the runs' own names: a subnet a run gave back may be another run's
    # already (one started meanwhile, by a test running beside this one).
    for d in "$dir_a" "$dir_b"; do
        id=${d##*/}
        check "no link of run $id left" "" "$(ip -o link show | grep -E "z[bvp]$id")"
        check "no address of run $id left" "" "$(ip -4 -o addr show | grep -E "^[0-9]+: z[bv]$id")"
    done
fi
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
