#!/usr/bin/env bash
# PMIx_Connect/Disconnect across nodes (tests/connect/connect_prog.c): a job with a rank on each of
# two namespace nodes spawns a child job, and both jobs connect over all their ranks: each rank
# reads the other job's size and its rank 0's data, then they disconnect; a child that never
# connects times the connect out. With MPI_DYN (tests/ompi/mpi_dyn.c, Debian's mpicc), Open MPI's
# MPI_Comm_spawn onto the other node: its roots meet through PMIx_Publish/PMIx_Lookup across
# brokers (the root's directory), then connect across nodes.
# usage: test_connect_across.sh ZPMIX CONNECT_PROG [MPI_DYN]
set -u
zpmix=$1 prog=$2 mpi_dyn=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$XDG_RUNTIME_DIR"; netns_down' EXIT
run() { timeout 120 "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:3,$b:3" --map-by node \
    -n 2 "$prog" "$@"; }

out=$(run ok 20)
check "ok: exit status" 0 $?
check "ok: every rank of both jobs connected and read the other's" \
    "$(printf '%s\n' "child 0 connect PMIX_SUCCESS size 2 card parent-0" \
        "child 1 connect PMIX_SUCCESS size 2 card parent-0" \
        "parent 0 connect PMIX_SUCCESS size 2 card child-0" \
        "parent 1 connect PMIX_SUCCESS size 2 card child-0")" \
    "$(grep ' connect ' <<<"$out" | sort)"
check "ok: every rank disconnected" 4 "$(grep -c ' disconnect PMIX_SUCCESS$' <<<"$out")"

out=$(run absent 2)
check "absent: exit status" 0 $?
check "absent: the parents' connect timed out" 2 \
    "$(grep -c '^parent [01] connect PMIX_ERR_TIMEOUT' <<<"$out")"

if [ -x "$mpi_dyn" ]; then
    # The parent's rank 0 on $a, its rank 1 and both children on $b.
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp \
        timeout 120 "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:1,$b:3" --map-by node \
        -n 2 "$mpi_dyn" spawn)
    check "MPI_Comm_spawn: exit status" 0 $?
    check "MPI_Comm_spawn: parents and children merged and exchanged" \
        "$(printf '%s\n' "child 0 merged 2 of 4 got 44" "child 1 merged 3 of 4 got 45" \
            "parent 0 merged 0 of 4 got 42" "parent 1 merged 1 of 4 got 43")" \
        "$(grep ' merged ' <<<"$out" | sort)"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
