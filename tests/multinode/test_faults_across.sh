#!/usr/bin/env bash
# Faults across namespace nodes, as a user of mpirun would meet them: a node's broker killed
# mid-job (the surviving ranks get the standard's events for the lost ranks, their fence and Get
# fail instead of hanging, `zpmix run` fails naming the node in time), a remote rank killed (its
# status is the job's), `zpmix run` killed (every broker and rank ends), a node whose agent hangs
# (the launch fails in time, naming it); after each, nothing is left on any node: no process, no
# run directory or shared-memory file.
# usage: test_faults_across.sh ZPMIX FAULT_PROG
set -u
zpmix=$(realpath "$1")
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
work=$(mktemp -d)
# Every broker of this test (the agent passes the environment on) keeps its run directory here.
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$work" "$XDG_RUNTIME_DIR"; netns_down' EXIT
lost_after_ms=2000 boot_timeout_ms=3000
printf '[tree]\nheartbeat_ms = 200\nlost_after_ms = %d\nboot_timeout_ms = %d\n' \
    $lost_after_ms $boot_timeout_ms >"$work/conf"
export ZPMIX_CONFIG=$work/conf
base=$XDG_RUNTIME_DIR/zpmix
now_ms() { date +%s%3N; }

# wait_lines FILE PATTERN COUNT SECONDS: until FILE has COUNT lines matching PATTERN.
wait_lines() {
    local deadline=$((SECONDS + $4))
    until [ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ]; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
# Starts `zpmix run ARGS...` in the background: $pid, stdout in $work/out, stderr in $work/err.
start_run() {
    : >"$work/out"
    "$zpmix" run --rsh-agent "${agent:-$ZPMIX_NETNS_AGENT}" "$@" >"$work/out" 2>"$work/err" &
    pid=$!
}
# Waits (bounded) for zpmix run to end: its status in $status, how long it took after $t0 in $took.
wait_run() {
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.02; done
    took=$(($(now_ms) - t0))
    kill -0 "$pid" 2>/dev/null && { echo "zpmix run still running: killing it" >&2; kill -KILL "$pid"; }
    wait "$pid"
    status=$?
}
broker_on() {  # broker_on NODE: the pid of the node's broker
    ip netns pids "$1" | while read -r p; do
        [[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" == "$zpmix broker "* ]] && echo "$p"
    done | head -1
}
# Nothing left (within a deadline: a broker that lost its parent notices, then ends its ranks):
# no process on the nodes, none of the given pids on this host, no broker run directory.
nothing_left() {
    local what=$1 deadline=$((SECONDS + 10)) left
    shift
    while left=$(ip netns pids "$a"; ip netns pids "$b"; for p in "$@"; do kill -0 "$p" 2>/dev/null && echo "$p"; done) &&
        [ -n "$left" ] && ((SECONDS < deadline)); do
        sleep 0.05
    done
    check "$what: no process left" "" "$(for p in $left; do tr '\0' ' ' </proc/$p/cmdline; echo; done 2>/dev/null)"
    check "$what: no run directory left" "" "$(ls "$base" 2>/dev/null | grep '^broker-')"
    check "$what: no session or shared-memory file left" "" "$(find "$base" -path '*/session/*' 2>/dev/null)"
}
bound_ok() {  # bound_ok WHAT MS LIMIT_MS
    check "$1: within $3 ms" yes "$([ "$2" -le "$3" ] && echo yes || echo "$2 ms")"
}

# --- a node's broker killed while its ranks sleep and the others wait on them ---------------------
# radix 2: the root notices (both nodes' brokers are its children); radix 1, a chain root-a-b: a
# notices and tells the others (the root's coordinator, which ends the job).
lost_broker() {
    local radix=$1 w="radix $1: lost broker"
    printf 'radix = %d\n' "$radix" >>"$work/conf"
    FAULT_VICTIM=$b start_run -x FAULT_VICTIM -H "$a:2,$b:2" "$prog"
    wait_lines "$work/out" '^up$' 2 30 && wait_lines "$work/out" '^victim up$' 2 30
    check "$w: every rank up" yes "$([ "$(grep -c 'up$' "$work/out")" = 4 ] && echo yes || cat "$work/out" "$work/err")"
    bpid=$(broker_on "$b")
    t0=$(now_ms)
    kill -KILL "$bpid"
    wait_run
    check "$w: zpmix run fails" yes "$([ $status -ne 0 ] && [ $status -lt 124 ] && echo yes || echo "status $status")"
    [ "$radix" = 1 ] && check "$w: told through the tree" yes "$(grep -q "lost elsewhere in the tree" "$work/err" && echo yes || cat "$work/err")"
    check "$w: names the node" yes "$(grep -q "broker on $b was lost" "$work/err" && echo yes || cat "$work/err")"
    bound_ok "$w: zpmix run ends" "$took" $((lost_after_ms + 5000))
    out=$(cat "$work/out")
    for r in 0 1; do
        check "$w: rank $r gets NODE_DOWN for ranks 2,3" 1 "$(grep -c "^rank $r event PMIX_EVENT_NODE_DOWN 2,3$" <<<"$out")"
        for v in 2 3; do
            check "$w: rank $r gets PROC_TERM_WO_SYNC for rank $v" 1 "$(grep -c "^rank $r event PMIX_ERR_PROC_TERM_WO_SYNC $v$" <<<"$out")"
            check "$w: rank $r gets PROC_TERMINATED for rank $v" 1 "$(grep -c "^rank $r event PMIX_EVENT_PROC_TERMINATED $v$" <<<"$out")"
        done
    done
    check "$w: the fence fails" yes "$(grep -Eq '^rank 0 fence PMIX_ERR_(UNREACH|PROC_TERM_WO_SYNC)$' <<<"$out" && echo yes || echo "$out")"
    check "$w: the Get fails" yes "$(grep -Eq '^rank 1 get PMIX_ERR_(UNREACH|NOT_FOUND)$' <<<"$out" && echo yes || echo "$out")"
    nothing_left "$w"
    sed -i '/^radix/d' "$work/conf"
}
lost_broker 2
lost_broker 1

# --- a remote rank killed: the job ends with its status --------------------------------------------
start_run -H "$a:1,$b:1" sh -c 'echo up $(hostname) $$; exec sleep 60'
wait_lines "$work/out" '^up ' 2 30
rpid=$(sed -n "s/^up $b //p" "$work/out")
t0=$(now_ms)
kill -KILL "$rpid"
wait_run
check "remote rank killed: exit status" 137 $status
check "remote rank killed: names the rank and node" yes "$(grep -q "rank 1 .*killed by signal 9.*(on $b)" "$work/err" && echo yes || cat "$work/err")"
nothing_left "remote rank killed"

# --- zpmix run killed: every broker and rank ends, on every node and here ---------------------------
start_run -H "$a:1,$b:1" sh -c 'echo up; exec sleep 60'
wait_lines "$work/out" '^up$' 2 30
mine=$(ps -o pid= --ppid "$pid")  # the root broker's watchdog and rsh agents
t0=$(now_ms)
kill -KILL "$pid"
wait "$pid" 2>/dev/null
deadline=$((SECONDS + 15))
while [ -n "$(ip netns pids "$a"; ip netns pids "$b")" ] && ((SECONDS < deadline)); do sleep 0.02; done
bound_ok "zpmix run killed: the nodes' brokers and ranks end" $(($(now_ms) - t0)) $((lost_after_ms + 5000))
nothing_left "zpmix run killed" $mine

# --- a node whose agent hangs: the launch fails within boot_timeout_ms, naming it --------------------
cat >"$work/agent" <<EOF
#!/bin/sh
[ "\$1" = "$b" ] && { echo \$\$ >"$work/hung"; exec sleep 600; }
exec "$ZPMIX_NETNS_AGENT" "\$@"
EOF
chmod +x "$work/agent"
t0=$(now_ms)
agent=$work/agent start_run -H "$a:1,$b:1" true
wait_run
check "hung node: exit status" 1 $status
check "hung node: names the node" yes "$(grep -q "$b" "$work/err" && echo yes || cat "$work/err")"
bound_ok "hung node: fails" "$took" $((boot_timeout_ms + 5000))
nothing_left "hung node" "$(cat "$work/hung" 2>/dev/null)"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
