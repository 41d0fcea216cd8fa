#!/usr/bin/env bash
# Open MPI's mpirun hosting zpmix across two namespace nodes: mpirun, the orted daemon it starts on
# each node through the agent, and the ranks all load zpmix's libpmix.so.2 (LD_LIBRARY_PATH,
# exported to the daemons by the agent and to the ranks by -x); MPI_Init's fences cross the nodes
# through orted's fence_nb upcall, and MPI collectives run; a key published in the session goes
# to mpirun's data server through the publish and lookup upcalls.
#   test_server_mpirun.sh ZPMIX MPI_PROG LIBDIR SERVER_CLIENT
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"
mpi_prog=$2 libdir=$3 server_client=$4
command -v mpirun >/dev/null || netns_skip "mpirun not found (Debian: openmpi-bin)"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
lib=$(readlink -f "$libdir/libpmix.so.2")
work=$(mktemp -d /tmp/zpmix-server-mpirun-XXXXXX)
trap 'rm -rf "$work"; netns_down' EXIT
mpirun_() {
    timeout 120 mpirun --allow-run-as-root --mca plm_rsh_agent "$ZPMIX_NETNS_AGENT" \
        -H "$a:2,$b:2" --mca oob_tcp_if_include "$ZPMIX_NETNS_SUBNET" \
        --mca btl_tcp_if_include "$ZPMIX_NETNS_SUBNET" -x LD_LIBRARY_PATH "$@"
}
# Which libpmix a process has mapped: "zpmix", "other" or "none".
libpmix_of() {
    local maps
    maps=$(grep libpmix.so "/proc/$1/maps" 2>/dev/null | awk '{print $6}' | sort -u)
    if [ -z "$maps" ]; then echo none; elif [ "$maps" == "$lib" ]; then echo zpmix; else echo other; fi
}

# Four ranks, two per node: allreduce and a ring across the nodes.
out=$(mpirun_ "$mpi_prog" check 4)
check "mpirun exit status" 0 $?
check "every rank ran its collectives" 4 "$(grep -c ' ok$' <<<"$out")"

# Rank 0 publishes in the session (mpirun's data server) and on its node (its broker's); the
# ranks of both nodes look them up (the node's key is not found on the other node).
out=$(mpirun_ "$server_client" publish 2>"$work/pub.err")
check "publish and lookup across the nodes: exit status" 0 $?
check "publish and lookup across the nodes: every rank" 4 "$(grep -c ' ok$' <<<"$out")"
[ "$fails" -eq 0 ] || cat "$work/pub.err" >&2

# While the ranks wait: mpirun, each node's orted and each rank hold zpmix's library.
: >"$work/out"
mpirun_ "$mpi_prog" wait "$work/go" >"$work/out" 2>"$work/err" &
job=$!
deadline=$((SECONDS + 60))
until [ "$(grep -c '^ready ' "$work/out")" -eq 4 ] || ((SECONDS >= deadline)); do sleep 0.02; done
check "the ranks passed MPI_Init" 4 "$(grep -c '^ready ' "$work/out")"
# job (a subshell) -> timeout -> mpirun
mpirun_pid=$(pgrep -x mpirun -P "$(pgrep -x timeout -P "$job")")
check "mpirun loaded zpmix's libpmix" zpmix "$(libpmix_of "$mpirun_pid")"
for node in "$a" "$b"; do
    orted=$(ip netns pids "$node" | while read -r p; do
        [ "$(cat /proc/$p/comm 2>/dev/null)" == orted ] && echo "$p"; done | head -1)
    check "the orted of $node loaded zpmix's libpmix" zpmix "$(libpmix_of "$orted")"
done
ranks=$(awk '/^ready /{print $2}' "$work/out")
for r in $ranks; do
    check "rank pid $r loaded zpmix's libpmix" zpmix "$(libpmix_of "$r")"
done
touch "$work/go"
wait "$job"
check "the waiting job's exit status" 0 $?

# mpirun ends its orted daemons when the job is over (they may take a moment to exit).
deadline=$((SECONDS + 20))
while left=$(ip netns pids "$a"; ip netns pids "$b") && [ -n "$left" ] && ((SECONDS < deadline)); do
    sleep 0.05
done
check "no process left on the nodes (orted)" "" "$left"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
