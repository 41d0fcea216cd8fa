#!/usr/bin/env bash
# Slurm 22.05's mpi/pmix plugin hosting zpmix on two namespace nodes: `srun --mpi=pmix` of an
# Open MPI program and of plain PMIx programs (a collecting fence; direct modex through Slurm's
# own dmodex exchange), with zpmix's libpmix.so.2 where the plugin dlopens OpenPMIx's and where the
# ranks load it: a bind mount over Debian's OpenPMIx library, in a mount namespace of this test's
# own (the machine's library is untouched). Each slurmstepd and rank is checked to have zpmix's
# library mapped (by its inode: the path is OpenPMIx's).
#   test_server_slurm.sh ZPMIX MPI_PROG LIBDIR SERVER_CLIENT
set -u
here=$(cd "$(dirname "$0")" && pwd)
openpmix=/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2.6.2
if [ -z "${ZPMIX_IN_MOUNT_NS:-}" ]; then
    [ -e "$openpmix" ] || { echo "skipped: Debian's OpenPMIx (libpmix2) is not installed"; exit 77; }
    ZPMIX_IN_MOUNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$here/netns.sh"
source "$here/slurm.sh"
source "$here/common.sh"
mpi_prog=$2 lib=$(readlink -f "$3/libpmix.so.2") client=$4
mount --bind "$lib" "$openpmix" || netns_skip "cannot bind-mount over $openpmix"
inode=$(stat -c %i "$lib")

netns_up 2
slurm_up
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include="$ZPMIX_NETNS_SUBNET" \
    OMPI_MCA_oob_tcp_if_include="$ZPMIX_NETNS_SUBNET"
run() { timeout 60 srun --mpi=pmix -N2 --ntasks-per-node=2 "$@"; }

out=$(run "$mpi_prog" check 4)
check "Open MPI under srun --mpi=pmix: exit status" 0 $?
check "Open MPI: every rank ran its collectives" 4 "$(grep -c ' ok$' <<<"$out")"

out=$(run "$client" fence)
check "a collecting fence across the nodes: exit status" 0 $?
check "a collecting fence: every rank read every card" 4 "$(grep -c ' ok$' <<<"$out")"

out=$(run "$client" dmodex)
check "direct modex through Slurm: exit status" 0 $?
check "direct modex: every rank read every card" 4 "$(grep -c ' ok$' <<<"$out")"

# While a job waits: each node's slurmstepd and each rank map zpmix's library (its inode).
work=$(mktemp -d /tmp/zpmix-server-slurm-XXXXXX)
trap 'rm -rf "$work"; netns_down' EXIT
run "$mpi_prog" wait "$work/go" >"$work/out" 2>&1 &
job=$!
deadline=$((SECONDS + 60))
until [ "$(grep -c '^ready ' "$work/out" 2>/dev/null)" == 4 ] || ((SECONDS >= deadline)); do sleep 0.02; done
check "the waiting ranks passed MPI_Init" 4 "$(grep -c '^ready ' "$work/out")"
maps_zpmix() {  # maps_zpmix PID: whether it maps the library with zpmix's inode
    awk -v ino="$inode" '$6 ~ /libpmix\.so/ && $5 == ino {found=1} END {print found ? "zpmix" : "no"}' \
        "/proc/$1/maps" 2>/dev/null
}
for node in "${NETNS_NODES[@]}"; do
    stepd=$(pgrep -f "slurmstepd: \[[0-9]+\.0\]" | while read -r p; do
        [ "$(ip netns identify "$p")" == "$node" ] && echo "$p"; done | head -1)
    check "the slurmstepd of $node loaded zpmix's libpmix" zpmix "$(maps_zpmix "$stepd")"
done
for r in $(awk '/^ready /{print $2}' "$work/out"); do
    check "rank pid $r loaded zpmix's libpmix" zpmix "$(maps_zpmix "$r")"
done
touch "$work/go"
wait "$job"
check "the waiting job's exit status" 0 $?

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
