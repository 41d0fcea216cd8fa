#!/usr/bin/env bash
# `zpmix run` inside a Slurm allocation (a real slurmctld and one slurmd per namespace node,
# slurm.sh): the hosts come from the allocation and the brokers start as one srun step, which
# the ranks see (they inherit the step's environment) and squeue lists; PMIx wire-up across the
# nodes works under a chain of brokers (each learns its parent's address late, on the step's
# stdin, with the keys sealed by MUNGE); a node whose broker cannot start fails the launch naming
# it; --launcher rsh still works inside the allocation, --launcher srun outside one is refused;
# nothing is left behind. An Open MPI program (MPI_PROG: tests/ompi's, built with Debian's mpicc)
# runs as one job through salloc (brokers started by srun, or by the rsh agent) and through sbatch
# from the batch node, where Open MPI's schizo/slurm would make singletons of its ranks.
# usage: test_slurm.sh ZPMIX WIREUP_PROG [MPI_PROG]
set -u
zpmix=$1 prog=$2 mpi_prog=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/slurm.sh"
source "$here/common.sh"

netns_up 3
slurm_up
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]} c=${NETNS_NODES[2]}
conf=$(mktemp)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$conf" "$conf".* "$XDG_RUNTIME_DIR"; netns_down' EXIT
export ZPMIX_CONFIG=$conf
# A chain (root, a, b, c): b and c learn their parents' addresses only once those joined. The
# brokers' keys go sealed with MUNGE, through the cluster's munged.
munge_socket=$ZPMIX_SLURM_DIR/munge/socket
printf '[tree]\nradix = 1\nboot_timeout_ms = 20000\nmunge_socket = "%s"\n' "$munge_socket" >"$conf"
# in_job ARGS...: `zpmix run ARGS...` in an allocation of the three nodes, two tasks each.
in_job() { timeout 60 salloc -Q -N3 --ntasks-per-node=2 "$zpmix" run "$@"; }

# Each rank says where it is, what Slurm step it runs under, and what steps the job has.
out=$(in_job sh -c 'echo "$(hostname) $PMIX_RANK ${SLURMD_NODENAME:-none} ${SLURM_STEP_ID:-none}"
                    if [ "$PMIX_RANK" = 0 ]; then squeue -h -s -j "$SLURM_JOB_ID" -o "step %j"; fi' 2>&1)
check "hello: exit status" 0 $?
check "hello: ranks on the allocation's nodes, under the srun step" \
    "$(printf '%s\n' "$a 0 $a 0" "$a 1 $a 0" "$b 2 $b 0" "$b 3 $b 0" "$c 4 $c 0" "$c 5 $c 0" \
        "step zpmix-brokers" | sort)" "$(sort <<<"$out")"

out=$(in_job "$prog" across 3 2>&1)
check "wireup across three nodes under srun-started brokers" 0 $?
[ -z "$out" ] || echo "$out" >&2

# Open MPI's ranks in the allocation: MPI_Init selects ess/pmi (not a singleton of size 1), and
# the six ranks are one world on three nodes (an allreduce and a ring across them).
if [ -x "$mpi_prog" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
    mpi_ok=$(for r in 0 1 2 3 4 5; do echo "rank $r of 6: allreduce 21 ring 15 ok"; done)
    out=$(in_job "$mpi_prog" check 6 2>&1)
    check "MPI under salloc, brokers by srun: exit status" 0 $?
    check "MPI under salloc, brokers by srun: one world of 6" "$mpi_ok" \
        "$(grep ' ok$' <<<"$out" | sort)" || echo "$out" >&2
    out=$(in_job --launcher rsh --rsh-agent "$ZPMIX_NETNS_AGENT" "$mpi_prog" check 6 2>&1)
    check "MPI under salloc, brokers by rsh: exit status" 0 $?
    check "MPI under salloc, brokers by rsh: one world of 6" "$mpi_ok" \
        "$(grep ' ok$' <<<"$out" | sort)" || echo "$out" >&2
    # The README's sbatch line: zpmix run in the batch script, on the allocation's first node.
    timeout 120 sbatch -Q --wait -N3 --ntasks-per-node=2 -o "$conf.sbatch" \
        --wrap "$zpmix run $mpi_prog check 6"
    check "MPI under sbatch: exit status" 0 $?
    check "MPI under sbatch: one world of 6" "$mpi_ok" "$(grep ' ok$' "$conf.sbatch" | sort)" ||
        cat "$conf.sbatch" >&2
    unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl
else
    echo "no MPI program ($mpi_prog): the MPI checks are not run" >&2
fi

# What srun carried to the brokers: each broker's line, with the keys in a MUNGE credential that
# decodes to the keypair (two Z85 keys), and no key in clear.
printf '#!/bin/sh\ntee -a "%s.stdin.$(hostname)" | "%s" "$@"\n' "$conf" "$zpmix" >"$conf.tee"
chmod +x "$conf.tee"
printf '[tree]\nradix = 1\nboot_timeout_ms = 20000\nmunge_socket = "%s"\nzpmix = "%s"\n' \
    "$munge_socket" "$conf.tee" >"$conf"
in_job true
check "srun input recorded: exit status" 0 $?
cat "$conf".stdin.* >"$conf.input" 2>/dev/null
check "srun input: a line per broker, each with a credential" 3 \
    "$(sort -u "$conf.input" | grep -c -E '^[^ ]+ [0-9]+ [^ ]+ MUNGE:[^ ]+$')"
cred=$(grep -m1 "^$b " "$conf.input" | cut -d' ' -f4)
keys=$(unmunge --socket="$munge_socket" --metadata=/dev/null <<<"$cred" 2>&1)
check "srun input: the credential holds the keypair" 2 "$(grep -c -E '^.{40}$' <<<"$keys")"
check "srun input: no key in clear" "" "$(grep -F -f <(grep -E '^.{40}$' <<<"$keys") "$conf.input")"
# Without munged the keys cannot be sealed: the launch fails at once, saying so.
printf '[tree]\nradix = 1\nboot_timeout_ms = 20000\nmunge_socket = "%s"\n' "$conf.none" >"$conf"
err=$(in_job true 2>&1)
check "no munged: exit status" 1 $?
check "no munged: says why" yes \
    "$(grep -q "$a (rank 1): cannot seal the allocation's keys with MUNGE" <<<"$err" && echo yes || echo "$err")"
printf '[tree]\nradix = 1\nboot_timeout_ms = 20000\nmunge_socket = "%s"\n' "$munge_socket" >"$conf"

out=$(in_job --launcher rsh --rsh-agent "$ZPMIX_NETNS_AGENT" sh -c 'echo ${SLURMD_NODENAME:-none}' 2>&1)
check "--launcher rsh inside the allocation: exit status" 0 $?
check "--launcher rsh: brokers not under srun" "none none none none none none" "$(echo $out)"

err=$(env -u SLURM_JOB_ID timeout 30 "$zpmix" run --launcher srun -H "$a:1" hostname 2>&1)
check "--launcher srun outside an allocation: exit status" 1 $?
check "--launcher srun outside an allocation: says why" yes \
    "$(grep -q "inside one (salloc, sbatch; SLURM_JOB_ID is not set)" <<<"$err" && echo yes || echo "$err")"

# The broker cannot start on c (its zpmix fails there): the launch fails naming c, in time.
cat >"$conf.zpmix" <<EOF
#!/bin/sh
[ "\$(hostname)" = "$c" ] && { echo "zpmix: not installed on $c" >&2; exit 3; }
exec "$zpmix" "\$@"
EOF
chmod +x "$conf.zpmix"
printf '[tree]\nradix = 1\nboot_timeout_ms = 20000\nmunge_socket = "%s"\nzpmix = "%s"\n' \
    "$munge_socket" "$conf.zpmix" >"$conf"
start=$SECONDS
err=$(in_job hostname 2>&1 >/dev/null)
check "broker failing on a node: exit status" 1 $?
check "broker failing on a node: named" yes \
    "$(grep -q "the broker on $c (rank 3) did not start: its srun step .*task .*Exited with exit code 3" <<<"$err" && echo yes || echo "$err")"
check "broker failing on a node: fails before the boot timeout" yes \
    "$( ((SECONDS - start < 15)) && echo yes || echo "took $((SECONDS - start)) s")"

# Nothing left: no zpmix process on any node (slurmd stays), no step in Slurm.
left() {
    local n
    for n in "$a" "$b" "$c"; do
        ip netns pids "$n" | xargs -r ps -o comm= -p | grep -v -e '^slurmd$' -e '^slurmstepd$'
    done
}
deadline=$((SECONDS + 15))
while [ -n "$(left)" ] && ((SECONDS < deadline)); do sleep 0.05; done
check "no process left on the nodes" "" "$(left)"
check "no Slurm step left" "" "$(squeue -h -s)"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
