# Many "nodes" on one machine, for tests: source this file, then `netns_up K`.
#
# Each node is a network namespace with a veth pair onto a bridge in the root namespace, an
# address on a /24 of its own run (10.213.X.0/24, X chosen under a lock among the /24s no
# interface of this machine has, so runs at once never share one), loopback up, and its own
# hostname in a persistent UTS namespace (bind-mounted on a file, entered later with nsenter).
# The bridge has the subnet's .254, so the root namespace (where `zpmix run` or mpirun runs)
# reaches every node. `tests/multinode/agent HOST CMD...` runs a command on a node, as ssh would.
#
# After netns_up:
#   NETNS_NODES               the node names (also their hostnames and namespace names)
#   ZPMIX_NETNS_DIR           the run's state directory (the agent finds the nodes there)
#   ZPMIX_NETNS_SUBNET        the run's subnet (CIDR), ZPMIX_NETNS_BRIDGE_ADDR the bridge's address
#   ZPMIX_NETNS_AGENT         the rsh agent
#   netns_addr NAME           a node's address
# netns_down removes everything the run made; netns_up registers it on EXIT, INT, TERM, HUP and PIPE.
# Daemons a run starts outside the nodes (slurm.sh's) go, one pid a line, in $ZPMIX_NETNS_DIR/pids:
# netns_down ends them too.
#
# Runs at once never clash: a run's id (its interfaces' and nodes' names) is its state directory's
# name, taken by mkdir and held until everything named by it is gone (the directory goes last). A
# run killed without its traps is removed by a later run's netns_up once its owner is dead; the
# owner is a pid with its start time, so that a reused pid is not taken for it. Only one run removes
# a dead one: it takes the run over under the lock first (the owner becomes itself).
# Without the privilege to make namespaces, netns_up exits 77 (ctest's SKIP_RETURN_CODE).

ZPMIX_NETNS_BASE=${ZPMIX_NETNS_BASE:-/run/zpmix-netns}
ZPMIX_NETNS_AGENT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/agent"
NETNS_NODES=()

netns_skip() {
    echo "SKIP: $*" >&2
    exit 77
}

netns_addr() {
    cat "$ZPMIX_NETNS_DIR/addr/$1"
}

# Picks a free 10.213.X.0/24 and gives the bridge its .254 while holding the lock, so that a run
# choosing at the same time sees it taken.
netns_claim_subnet_() {
    local bridge=$1 x start used
    exec {lock}>"$ZPMIX_NETNS_BASE/.lock"
    flock -w 30 "$lock" || { exec {lock}>&-; echo "cannot lock $ZPMIX_NETNS_BASE/.lock" >&2; return 1; }
    used=$(ip -4 -o addr show; ip -4 route show table all)
    start=$((RANDOM % 256))
    for ((i = 0; i < 256; i++)); do
        x=$(((start + i) % 256))
        if ! grep -q "10\.213\.$x\." <<<"$used"; then
            ip addr add "10.213.$x.254/24" dev "$bridge" || break
            exec {lock}>&-
            ZPMIX_NETNS_SUBNET="10.213.$x.0/24"
            ZPMIX_NETNS_BRIDGE_ADDR="10.213.$x.254"
            return 0
        fi
    done
    exec {lock}>&-
    echo "no free /24 in 10.213.0.0/16" >&2
    return 1
}

# "PID START" of a live process (START: its start time, field 22 of /proc/PID/stat, in clock
# ticks since boot), which a later process with the same pid does not share.
netns_proc_id_() {
    local stat fields
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    read -r -a fields <<<"${stat##*) }"  # the fields after the command name (field 3 on)
    echo "$1 ${fields[19]}"
}

# Whether the owner of run directory $1 lives: its pid in "owner" (all an older netns.sh reads),
# its start time in "owner.start" (written first). An owner not written yet is a run starting.
netns_owner_alive_() {
    local pid start=""
    [ -f "$1/owner" ] || return 0
    read -r pid <"$1/owner" 2>/dev/null
    [ -n "${pid:-}" ] || return 0
    [ -f "$1/owner.start" ] && read -r start <"$1/owner.start" 2>/dev/null
    [ -n "$start" ] || { kill -0 "$pid" 2>/dev/null; return; }
    [ "$(netns_proc_id_ "$pid")" = "$pid $start" ]
}

# Makes the shell $1 (a pid) the owner of run directory $2.
netns_set_owner_() {
    local id
    id=$(netns_proc_id_ "$1") || return 1
    echo "${id#* }" >"$2/owner.start.new" && mv -f "$2/owner.start.new" "$2/owner.start" &&
        echo "$1" >"$2/owner.new" && mv -f "$2/owner.new" "$2/owner"
}

# Takes over run directory $1, under the lock, if its owner is dead: the owner becomes this shell,
# so that no other run removes it too, and the run's id stays taken until it is gone.
netns_take_over_() {
    local dir=$1 lock taken=1
    exec {lock}>"$ZPMIX_NETNS_BASE/.lock"
    flock -w 30 "$lock" || { exec {lock}>&-; return 1; }
    if [ -d "$dir" ] && ! netns_owner_alive_ "$dir"; then
        netns_set_owner_ "$BASHPID" "$dir" && taken=0
    fi
    exec {lock}>&-
    return $taken
}

# What runs killed without their traps (SIGKILL, a ctest timeout) left: their owner is gone.
netns_reap_stale_() {
    local d owner
    for d in "$ZPMIX_NETNS_BASE"/*/; do
        d=${d%/}
        [ "$d" != "$ZPMIX_NETNS_DIR" ] && [ "${d##*/}" != hosts ] || continue
        netns_owner_alive_ "$d" && continue
        owner=$(cat "$d/owner" 2>/dev/null)
        netns_take_over_ "$d" || continue
        echo "netns_up: removing run ${d##*/}, left by process $owner" >&2
        (ZPMIX_NETNS_DIR=$d netns_down)
    done
}

# netns_up K: K nodes named z<id>n1 .. z<id>nK.
netns_up() {
    local k=$1 id dir name i
    [ "$k" -ge 1 ] && [ "$k" -le 250 ] || { echo "netns_up: 1..250 nodes" >&2; exit 2; }
    [ "$(id -u)" -eq 0 ] || netns_skip "making network namespaces needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN)"
    for c in ip unshare nsenter flock; do
        command -v "$c" >/dev/null || netns_skip "$c not found (Debian: iproute2, util-linux)"
    done
    mkdir -p "$ZPMIX_NETNS_BASE/hosts" || netns_skip "cannot create $ZPMIX_NETNS_BASE"
    # An id no run holds (its directory), of which no interface is left either.
    for ((i = 0; i < 100; i++)); do
        id=$(printf '%05x' $(((RANDOM << 5 ^ $$ ^ RANDOM) & 0xfffff)))
        mkdir "$ZPMIX_NETNS_BASE/$id" 2>/dev/null || { id=""; continue; }
        ip -o link show 2>/dev/null | grep -q "z[bvp]$id" || break
        rmdir "$ZPMIX_NETNS_BASE/$id"
        id=""
    done
    [ -n "$id" ] || { echo "netns_up: no free run id in $ZPMIX_NETNS_BASE" >&2; exit 1; }
    dir="$ZPMIX_NETNS_BASE/$id"
    netns_set_owner_ "$BASHPID" "$dir" || exit 1
    export ZPMIX_NETNS_DIR=$dir ZPMIX_NETNS_AGENT
    netns_reap_stale_
    mkdir "$dir/uts" "$dir/addr"
    trap netns_down EXIT
    trap 'netns_down; exit 130' INT
    trap 'netns_down; exit 143' TERM
    trap 'netns_down; exit 129' HUP
    trap 'netns_down; exit 141' PIPE

    # What is made is written down first, so that netns_down removes it whatever failed after.
    echo "zb$id" >"$dir/bridge"
    if ! ip link add "zb$id" type bridge 2>"$dir/err"; then
        netns_skip "cannot create a bridge: $(cat "$dir/err")"
    fi
    ip link set "zb$id" up || exit 1
    netns_claim_subnet_ "zb$id" || exit 1
    echo "$ZPMIX_NETNS_SUBNET" >"$dir/subnet"
    export ZPMIX_NETNS_SUBNET ZPMIX_NETNS_BRIDGE_ADDR

    for ((i = 1; i <= k; i++)); do
        name="z${id}n$i"
        echo "$name" >>"$dir/nodes"
        if ! ip netns add "$name" 2>"$dir/err"; then
            netns_skip "ip netns add failed: $(cat "$dir/err")"
        fi
        ln -s "$dir" "$ZPMIX_NETNS_BASE/hosts/$name"
        {
            ip link add "zv$id$i" type veth peer name "zp$id$i" &&
                ip link set "zv$id$i" master "zb$id" up &&
                ip link set "zp$id$i" netns "$name" &&
                ip -n "$name" link set "zp$id$i" name eth0 &&
                ip -n "$name" addr add "${ZPMIX_NETNS_BRIDGE_ADDR%.*}.$i/24" dev eth0 &&
                ip -n "$name" link set eth0 up &&
                ip -n "$name" link set lo up &&
                touch "$dir/uts/$name" &&
                unshare --uts="$dir/uts/$name" hostname "$name"
        } || { echo "netns_up: cannot make node $name" >&2; exit 1; }
        echo "${ZPMIX_NETNS_BRIDGE_ADDR%.*}.$i" >"$dir/addr/$name"
        NETNS_NODES+=("$name")
    done
}

# Kills what runs in a node's namespace, waiting (bounded) until it is gone.
netns_kill_node_() {
    local name=$1 pids deadline=$((SECONDS + 10))
    while pids=$(ip netns pids "$name" 2>/dev/null) && [ -n "$pids" ]; do
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
        if ((SECONDS > deadline)); then
            echo "netns_down: processes left in $name: $pids" >&2
            return 1
        fi
        sleep 0.05  # a killed process leaves the namespace once the kernel reaps it
    done
}

# Ends the run's daemons outside the nodes: SIGTERM, SIGKILL after 10 s.
netns_kill_pids_() {
    local pids pid deadline=$((SECONDS + 10))
    pids=$(cat "$1")
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    for pid in $pids; do
        while kill -0 "$pid" 2>/dev/null; do
            ((SECONDS < deadline)) || { kill -KILL "$pid" 2>/dev/null; break; }
            sleep 0.05
        done
    done
}

netns_down() {
    local dir=${ZPMIX_NETNS_DIR:-} name id
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    id=${dir##*/}
    [ -f "$dir/pids" ] && netns_kill_pids_ "$dir/pids"
    if [ -f "$dir/nodes" ]; then
        while read -r name; do
            netns_kill_node_ "$name"
            ip netns del "$name" 2>/dev/null
            ip link del "zv$id${name##*n}" 2>/dev/null
            if [ -e "$dir/uts/$name" ]; then
                umount "$dir/uts/$name" 2>/dev/null
                rm -f "$dir/uts/$name"
            fi
            rm -f "$ZPMIX_NETNS_BASE/hosts/$name"
        done <"$dir/nodes"
    fi
    [ -f "$dir/bridge" ] && ip link del "$(cat "$dir/bridge")" 2>/dev/null
    rm -rf "$dir"
    NETNS_NODES=()
    return 0
}
