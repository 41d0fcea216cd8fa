#!/usr/bin/env bash
# Open MPI's mpirun launches across two namespace nodes through the agent, as it would through
# ssh across two machines: each node prints its own hostname.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"
command -v mpirun >/dev/null || netns_skip "mpirun not found (Debian: openmpi-bin)"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
# orted starts on each node through the agent and calls back to mpirun on the bridge's subnet.
out=$(timeout 120 mpirun --allow-run-as-root --mca plm_rsh_agent "$ZPMIX_NETNS_AGENT" \
    -H "$a:1,$b:1" --mca oob_tcp_if_include "$ZPMIX_NETNS_SUBNET" \
    --mca btl_tcp_if_include "$ZPMIX_NETNS_SUBNET" hostname)
check "mpirun exit status" 0 $?
check "hostnames printed" "$(printf '%s\n' "$a" "$b")" "$(sort <<<"$out")"
# mpirun ends its orted daemons when the job is over (they may take a moment to exit).
deadline=$((SECONDS + 20))
while left=$(ip netns pids "$a"; ip netns pids "$b") && [ -n "$left" ] && ((SECONDS < deadline)); do
    sleep 0.05
done
check "no process left on the nodes (orted)" "" "$left"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
