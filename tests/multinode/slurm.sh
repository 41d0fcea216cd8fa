# A Slurm cluster on the namespace nodes (netns.sh), for tests: source netns.sh and this file,
# `netns_up K`, then `slurm_up`. Debian's slurm-wlm and munge (setup.sh installs them).
#
# slurm_up starts, all under the run's directory ($ZPMIX_NETNS_DIR/slurm):
#   - a munged of the run's own (its key and socket; Slurm reaches it through AuthInfo=socket=),
#   - slurmctld in the root network namespace, under a UTS namespace whose hostname is its
#     SlurmctldHost, listening on the bridge's address (which every node reaches),
#   - one `slurmd -N NODE` in each node's network and UTS namespaces, in a mount namespace of its
#     own where the cluster's TmpFS is the node's own directory (Slurm's PMIx plugin writes there,
#     under a name that is the same on every node of a step),
# with a slurm.conf of the run's (SLURM_CONF, exported: srun, salloc and squeue read it): free ports
# (two runs never share one), proctrack/linuxproc, task/affinity (srun --cpu-bind=none works), MpiDefault=none, no accounting.
# It returns once every node is idle. netns_down (on every exit path) kills the daemons (their
# pids are in the run's pids file) and removes the directory with the rest of the run.
# Without Slurm or munge installed, or when a daemon does not come up, slurm_up exits 77.
#
# After slurm_up:
#   SLURM_CONF             the cluster's configuration (exported)
#   ZPMIX_SLURM_DIR        its directory (logs in log/)
#   ZPMIX_SLURM_PARTITION  the partition holding every node

slurm_skip_() {
    local log
    echo "SKIP: $*" >&2
    for log in "$ZPMIX_SLURM_DIR"/log/*; do
        [ -s "$log" ] && { echo "--- $log" >&2; tail -n 15 "$log" >&2; }
    done
    exit 77
}

# A TCP port nothing listens on now, in the range this machine does not hand out itself.
slurm_free_port_() {
    python3 - <<'EOF'
import random, socket
for _ in range(200):
    p = random.randint(20000, 29999)
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
EOF
}

# slurm_wait_ SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds, or skips.
slurm_wait_() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || slurm_skip_ "$what"
        sleep 0.1
    done
}

slurm_up() {
    local c dir ctl port name i cpus
    for c in slurmctld slurmd srun salloc squeue munged; do
        command -v "$c" >/dev/null || netns_skip "$c not found (Debian: slurm-wlm, munge; see setup.sh)"
    done
    [ -n "${ZPMIX_NETNS_DIR:-}" ] && [ ${#NETNS_NODES[@]} -gt 0 ] || {
        echo "slurm_up: call netns_up first" >&2
        exit 2
    }
    dir=$ZPMIX_NETNS_DIR/slurm
    ZPMIX_SLURM_DIR=$dir
    mkdir -p "$dir"/{state,spool,log,tmp,tmpfs,munge}
    chmod 700 "$dir/munge"

    # munge: a key of the run's; the daemon refuses a key or socket directory others can write.
    head -c 1024 /dev/urandom >"$dir/munge/key"
    chmod 400 "$dir/munge/key"
    munged -F --force --key-file="$dir/munge/key" --socket="$dir/munge/socket" \
        --pid-file="$dir/munge/pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/seed" >>"$dir/log/munged.log" 2>&1 &
    echo $! >>"$ZPMIX_NETNS_DIR/pids" && disown $!
    slurm_wait_ 10 "munged did not start (log above)" test -S "$dir/munge/socket"

    ctl="zc${ZPMIX_NETNS_DIR##*/}"
    port=$(slurm_free_port_)
    [ -n "$port" ] || slurm_skip_ "no free TCP port for slurmctld"
    cpus=$(nproc)
    ZPMIX_SLURM_PARTITION=zpmix
    export SLURM_CONF=$dir/slurm.conf
    {
        echo "ClusterName=zpmix${ZPMIX_NETNS_DIR##*/}"
        echo "SlurmctldHost=$ctl($ZPMIX_NETNS_BRIDGE_ADDR)"
        echo "SlurmctldPort=$port"
        echo "SlurmdPort=6818"  # each slurmd in a network namespace of its own
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "AuthInfo=socket=$dir/munge/socket"
        echo "CredType=cred/munge"
        echo "StateSaveLocation=$dir/state"
        echo "SlurmdSpoolDir=$dir/spool/%n"
        echo "SlurmctldPidFile=$dir/slurmctld.pid"
        echo "SlurmdPidFile=$dir/spool/slurmd.%n.pid"
        echo "SlurmctldLogFile=$dir/log/slurmctld.log"
        echo "SlurmdLogFile=$dir/log/slurmd.%n.log"
        echo "SlurmctldDebug=info"
        echo "SlurmdDebug=info"
        echo "TmpFS=$dir/tmpfs"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/affinity"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "JobCompType=jobcomp/none"
        echo "SwitchType=switch/none"
        echo "MpiDefault=none"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "ReturnToService=2"
        echo "SlurmdTimeout=30"
        echo "InactiveLimit=0"
        echo "KillWait=2"
        echo "MinJobAge=10"
        echo "MessageTimeout=10"
        echo "PlugStackConfig=$dir/plugstack.conf"
        for name in "${NETNS_NODES[@]}"; do
            echo "NodeName=$name NodeAddr=$(netns_addr "$name") NodeHostname=$name CPUs=$cpus State=UNKNOWN"
        done
        echo "PartitionName=$ZPMIX_SLURM_PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
    } >"$SLURM_CONF"
    : >"$dir/plugstack.conf"
    # Debian's slurmd loads cgroup.conf even with proctrack/linuxproc; these machines are cgroup v1.
    printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n' >"$dir/cgroup.conf"

    unshare --uts -- sh -c "hostname $ctl && exec slurmctld -D -i -f $SLURM_CONF" \
        >>"$dir/log/slurmctld.out" 2>&1 &
    echo $! >>"$ZPMIX_NETNS_DIR/pids" && disown $!
    for name in "${NETNS_NODES[@]}"; do
        mkdir -p "$dir/spool/$name" "$dir/tmp/$name"
        nsenter --net="/run/netns/$name" --uts="$ZPMIX_NETNS_DIR/uts/$name" -- \
            unshare --mount --propagation private -- sh -c \
            "mount --bind $dir/tmp/$name $dir/tmpfs && exec slurmd -D -N $name -f $SLURM_CONF" \
            >>"$dir/log/slurmd.$name.out" 2>&1 &
        echo $! >>"$ZPMIX_NETNS_DIR/pids" && disown $!
    done
    slurm_wait_ 30 "slurmctld does not answer (logs above)" scontrol ping
    for name in "${NETNS_NODES[@]}"; do
        slurm_wait_ 30 "node $name did not come up in Slurm (logs above)" slurm_node_idle_ "$name"
    done
}

slurm_node_idle_() {
    sinfo -h -n "$1" -o %T | grep -qx idle
}
