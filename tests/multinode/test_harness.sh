#!/usr/bin/env bash
# The namespace-node harness is what ssh to real nodes would be: 3 nodes with their own hostnames
# and addresses, TCP between them and from the root namespace, the agent behaving as ssh (argv,
# stdin/stdout/stderr, exit status), and nothing left after netns_down.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"
agent=$ZPMIX_NETNS_AGENT
python=/usr/bin/python3

netns_up 3
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]} c=${NETNS_NODES[2]}
echo "nodes: ${NETNS_NODES[*]} on $ZPMIX_NETNS_SUBNET"

# Hostnames: each node's is its name, none is this machine's.
for n in "$a" "$b" "$c"; do check "hostname of $n" "$n" "$("$agent" "$n" hostname)"; done
[ "$(hostname)" != "$a" ] || check "root hostname differs" "not $a" "$(hostname)"

# TCP from node A to node B's address, between the root namespace and node C both ways.
tcp_round() {  # tcp_round FROM TO (each a node or "root")
    local from=$1 to=$2 ready="$ZPMIX_NETNS_DIR/ready.$1.$2" port out addr listener
    if [ "$to" = root ]; then
        addr=$ZPMIX_NETNS_BRIDGE_ADDR
        "$python" "$here/listener.py" "$addr" "$ready" &
    else
        addr=$(netns_addr "$to")
        "$agent" "$to" "$python" "$here/listener.py" "$addr" "$ready" &
    fi
    listener=$!
    wait_for_file "$ready" 20 || { check "listener on $to ready" "ready" "timeout"; return; }
    port=$(cat "$ready")
    [ "$to" = root ] && to=$(hostname)
    local client="exec 3<>/dev/tcp/$addr/$port && echo hello-from-$from >&3 && head -n1 <&3"
    if [ "$from" = root ]; then
        out=$(timeout 20 bash -c "$client")
    else
        out=$(timeout 20 "$agent" "$from" "bash -c '$client'")
    fi
    check "tcp $from -> $to" "$to got hello-from-$from" "$out"
    wait "$listener"
    check "listener on $to exit status" 0 $?
}
tcp_round "$a" "$b"
tcp_round root "$c"
tcp_round "$c" root  # the bridge's address: where mpirun's or zpmix run's root listens

# The agent is ssh: words joined by spaces and run by sh -c, exit status propagated.
"$agent" "$a" exit 7
check "exit status" 7 $?
"$agent" "$a" false
check "exit status of false" 1 $?
check "words re-split as ssh does" "a b c" "$("$agent" "$a" echo 'a   b' c)"
check "quoting inside one word" "<a   b>" "$("$agent" "$a" "printf '<%s>' 'a   b'")"
check "shell syntax" "$a:yes" "$("$agent" "$a" 'echo $(hostname):yes')"
check "stdin passes through" "from stdin" "$(echo "from stdin" | "$agent" "$b" cat)"
check "stderr passes through" "on stderr" "$("$agent" "$b" 'echo on stderr >&2' 2>&1 >/dev/null)"
check "stdout only on stdout" "" "$("$agent" "$b" 'echo on stdout' 2>&1 >/dev/null)"
"$agent" nosuchnode true 2>/dev/null
check "unknown host: ssh's 255" 255 $?
check "node found without ZPMIX_NETNS_DIR (host map)" "$c" "$(env -u ZPMIX_NETNS_DIR "$agent" "$c" hostname)"

# Teardown: a process left running in a node is killed; nothing the run made is left.
"$agent" "$b" "exec sleep 1000" &
stray=$!
deadline=$((SECONDS + 10))
until [ -n "$(ip netns pids "$b")" ] || ((SECONDS > deadline)); do sleep 0.02; done
check "stray process running in $b" 1 "$(ip netns pids "$b" | wc -l)"
dir=$ZPMIX_NETNS_DIR id=${ZPMIX_NETNS_DIR##*/}
netns_down
wait "$stray" 2>/dev/null
check "stray process killed" 1 "$(kill -0 "$stray" 2>/dev/null; echo $?)"
check "no namespace left" "" "$(ip netns list | grep "z${id}n")"
check "no link left" "" "$(ip -o link | grep -E "z[bvp]$id")"
check "no state dir left" "no" "$([ -e "$dir" ] && echo yes || echo no)"
check "no host map left" "" "$(ls "$ZPMIX_NETNS_BASE/hosts" | grep "z${id}n")"
check "no UTS mount left" "" "$(grep "$dir" /proc/self/mountinfo)"
# (By its links' names: the subnet it gave back may be a run's that started meanwhile.)
check "no address left" "" "$(ip -4 -o addr show | grep -E "^[0-9]+: z[bv]$id")"

# A run killed without its traps (SIGKILL) is removed by the next run's netns_up. Its owner
# becomes a sleep (exec keeps the pid and drops the traps), killed while this holds the lock under
# which a run takes a dead one over: no run started meanwhile removes it before it is looked at.
up=$(mktemp)
bash -c 'source "$1"; netns_up 1; echo "$ZPMIX_NETNS_DIR ${NETNS_NODES[0]}" >"$2"; exec sleep 600' \
    _ "$here/netns.sh" "$up" 2>/dev/null &
owner=$!
wait_for_file "$up" 60
read -r killed_dir killed_node <"$up"
rm -f "$up"
check "the killed run was up" yes "$([ -n "$killed_node" ] && echo yes)"
exec {lock}>"$ZPMIX_NETNS_BASE/.lock"
flock -w 30 "$lock"
kill -KILL "$owner"
wait "$owner" 2>/dev/null
check "a killed run leaves its namespace" "$killed_node" "$(ip netns list | grep -o "^$killed_node")"
exec {lock}>&-
netns_up 1
# Removed by this netns_up, or by a run's that started meanwhile and may still be at it.
gone() { ! ip netns list | grep -q "^$killed_node" && [ ! -e "$killed_dir" ]; }
deadline=$((SECONDS + 30))
until gone || ((SECONDS > deadline)); do sleep 0.05; done
check "the next run removed it" "" "$(ip netns list | grep "^$killed_node")"
check "and its state dir" "no" "$([ -e "$killed_dir" ] && echo yes || echo no)"
netns_down

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
