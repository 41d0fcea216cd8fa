#!/usr/bin/env bash
# Job control, the process table, PMIx_Abort of named ranks and process monitoring across
# namespace nodes: `zpmix ctl` and `zpmix ps` through the root's broker (beside `zpmix run`, on no
# node of the job) and PMIx_Job_control from a rank reach the ranks of every node; terminate
# escalates to SIGKILL on a remote node; a lost broker makes an answer partial, never a hang;
# PMIx_Abort of a rank on another node ends it alone first; monitor alerts and responses of a
# remote rank work as on one node.
# usage: test_control_across.sh ZPMIX WIREUP_PROG JOBCTL_PROG
set -u
zpmix=$1 wprog=$2 jprog=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$work" "$XDG_RUNTIME_DIR"; netns_down' EXIT
base=$XDG_RUNTIME_DIR/zpmix
# 300 ms from SIGTERM to SIGKILL, monitor times in units of 20 ms, a lost broker noticed in 3 s.
printf '[broker]\nkill_grace_ms = 300\n[monitor]\ntime_unit_ms = 20\n[tree]\nheartbeat_ms = 200\nlost_after_ms = 3000\n' >"$work/conf"
printf '[broker]\nkill_grace_ms = 300\n[monitor]\ntime_unit_ms = 20\nresponse = "terminate"\n' >"$work/conf.terminate"
printf '[broker]\nkill_grace_ms = 10000\n' >"$work/conf.grace"
export ZPMIX_CONFIG=$work/conf
run() { timeout 60 "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" "$@"; }

# start NAME ARGS...: `zpmix run ARGS` in the background, output in $work/NAME.out and .err, its
# pid in $pid, the root broker's uri in $root.
start() {
    local name=$1
    shift
    "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" "$@" >"$work/$name.out" 2>"$work/$name.err" &
    pid=$!
    root=ipc://$base/broker-$pid-0/broker.sock
}
# wait_lines FILE PATTERN N: until FILE has N lines matching PATTERN (within 30 s).
wait_lines() {
    local deadline=$((SECONDS + 30))
    local n
    until n=$(grep -c -- "$2" "$1" 2>/dev/null) && [ "$n" -ge "$3" ]; do
        ((SECONDS < deadline)) || { echo "timed out waiting for $3 x '$2' in $1:" >&2; cat "$1" >&2; return 1; }
        sleep 0.02
    done
}
# The namespace of the job whose output is FILE.
nspace_of() { sed -n 's/^rank 0 nspace \(\S*\) ready$/\1/p' "$1" | head -1; }
ctl() { timeout 60 "$zpmix" ctl "$@" --job "$ns" --broker "$root" 2>&1; }
ps_json() { timeout 60 "$zpmix" ps --ranks --json --job "$ns" --broker "$root"; }
# "rank:host:state" of every row, in order.
ps_states() {
    ps_json | python3 -c 'import json,sys; print(" ".join("%d:%s:%s" % (p["rank"], p["host"], p["state"]) for p in json.load(sys.stdin)))'
}
# FIELD of RANK's row.
ps_field() {
    ps_json | python3 -c 'import json,sys; print([p for p in json.load(sys.stdin) if p["rank"] == int(sys.argv[1])][0][sys.argv[2]])' "$1" "$2"
}
# wait_state RANK STATE: until the process table says so (within 30 s).
wait_state() {
    local deadline=$((SECONDS + 30)) s
    until s=$(ps_field "$1" state) && [ "$s" = "$2" ]; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}
proc_state() { sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat"; }
# wait_proc PID yes|no: until the process is stopped (yes) or not (within 10 s).
wait_proc() {
    local deadline=$((SECONDS + 10))
    until { [ "$(proc_state "$1")" = T ] && echo yes || echo no; } | grep -qx "$2"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
# wait_count FILE: until the counter in FILE passed 10 (the program's loop runs).
wait_count() {
    local deadline=$((SECONDS + 30))
    until [ "$(cat "$1" 2>/dev/null || echo 0)" -gt 10 ] 2>/dev/null; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
# finish NAME EXPECTED-STATUS: zpmix run ends with it; a job that job control ended (non-zero, as
# on one node) is said to be ended by whom.
finish() {
    wait "$pid"
    local st=$?
    [ "$st" = "$2" ] || cat "$work/$1.out" "$work/$1.err" >&2
    check "$1: zpmix run's exit status" "$2" "$st"
    [ "$2" = 0 ] || check "$1: zpmix run says who ended the job" yes \
        "$(grep -q "as asked by " "$work/$1.err" && echo yes || cat "$work/$1.err")"
}

# --- zpmix ps and zpmix ctl through the root's broker ---------------------------------------
start counter -H "$a:2,$b:2" "$jprog" counter "$work"
wait_lines "$work/counter.out" " ready" 4
ns=$(nspace_of "$work/counter.out")
check "ps: every rank, its node and state" "0:$a:running 1:$a:running 2:$b:running 3:$b:running" "$(ps_states)"
for r in 0 1 2 3; do
    node=$a
    ((r >= 2)) && node=$b
    p=$(ps_field $r pid)
    check "ps: rank $r's pid is its process on $node" yes \
        "$(ip netns pids "$node" | grep -qx "$p" && grep -q jobctl_prog "/proc/$p/cmdline" && echo yes || echo "pid $p")"
done
pid2=$(ps_field 2 pid)

out=$(ctl signal USR1)
check "ctl signal: reaches every node" "signal delivered to 4 process(es)" "$out"
wait_lines "$work/counter.out" "got signal 10" 4
check "ctl signal: every rank got it" 4 "$(grep -c "got signal 10" "$work/counter.out")"

out=$(ctl pause --ranks 1,2)
check "ctl pause: a rank on each node" "pause delivered to 2 process(es)" "$out"
check "ctl pause: the remote rank is stopped" yes "$(wait_proc "$pid2" yes && echo yes || proc_state "$pid2")"
check "ps: paused ranks, on both nodes" "0:$a:running 1:$a:paused 2:$b:paused 3:$b:running" "$(ps_states)"
out=$(ctl resume --ranks 1,2)
check "ctl resume" "resume delivered to 2 process(es)" "$out"
check "ctl resume: the remote rank runs" yes "$(wait_proc "$pid2" no && echo yes || proc_state "$pid2")"
check "ps: resumed" "0:$a:running 1:$a:running 2:$b:running 3:$b:running" "$(ps_states)"

out=$(ctl kill --ranks 3)
check "ctl kill: a remote rank" "kill delivered to 1 process(es)" "$out"
wait_state 3 killed
check "ps: the killed remote rank" "killed 9" "$(ps_field 3 state) $(ps_field 3 signal)"
out=$(ctl terminate)
check "ctl terminate: the live ranks" "terminate delivered to 3 process(es)" "$out"
wait "$pid"
st=$?
# As on one node: ended by job control is not a success, and zpmix run says who ended it (the
# first end a node reported: rank 3's kill or a rank's terminate).
check "ctl-ended job: zpmix run fails" yes "$([ "$st" = 137 ] || [ "$st" = 143 ] && echo yes || echo "$st")"
check "ctl-ended job: zpmix run says who ended it" yes \
    "$(grep -q "as asked by tool pid .* (\(kill\|terminate\) request) (on $a\|on $b)" "$work/counter.err" && echo yes || cat "$work/counter.err")"

# --- PMIx_Job_control from a rank reaches the other node -------------------------------------
start fromrank -H "$a:1,$b:1" "$jprog" ctl-from-rank "$work"
wait_lines "$work/fromrank.out" "got signal 10" 2
check "from a rank: granted" 1 "$(grep -c "rank 0 signalled its job: 0" "$work/fromrank.out")"
check "from a rank: the remote rank got it" 1 "$(grep -c "rank 1 got signal 10" "$work/fromrank.out")"
ns=$(nspace_of "$work/fromrank.out")
ctl kill >/dev/null
finish fromrank 137

# --- terminate escalates to SIGKILL on the remote node ----------------------------------------
mkdir "$work/ignore.d"
start ignore -H "$a:1,$b:1" "$jprog" ignore-term "$work/ignore.d"
wait_lines "$work/ignore.out" " ready" 2
ns=$(nspace_of "$work/ignore.out")
wait_count "$work/ignore.d/counter.1"  # counting: SIGTERM is ignored already
out=$(ctl terminate --ranks 1)
check "terminate: the remote rank" "terminate delivered to 1 process(es)" "$out"
wait_state 1 killed
check "terminate: the remote rank that ignores SIGTERM is killed" "killed 9" "$(ps_field 1 state) $(ps_field 1 signal)"
check "terminate: the other rank runs on" running "$(ps_field 0 state)"
ctl kill >/dev/null
finish ignore 137

# --- checkpoints through the root reach every node, by signal and by event -------------------
for method in signal event; do
    start "ckpt-$method" -H "$a:1,$b:1" "$jprog" "ckpt-$method" "$work"
    wait_lines "$work/ckpt-$method.out" " ready" 2
    ns=$(nspace_of "$work/ckpt-$method.out")
    out=$(ctl checkpoint "c-$method")
    check "checkpoint by $method: complete on both nodes" "checkpoint complete" "$out"
    wait_lines "$work/ckpt-$method.out" "checkpointed (0)" 2  # their output follows
    check "checkpoint by $method: both ranks checkpointed" 2 "$(grep -c "checkpointed (0)" "$work/ckpt-$method.out")"
    ctl kill >/dev/null
    finish "ckpt-$method" 137
done

# --- preemption through the root: a rank on the other node marked the job preemptible ------
start preempt -H "$a:1,$b:1" "$jprog" preempt "$work"
wait_lines "$work/preempt.out" " ready" 2
ns=$(nspace_of "$work/preempt.out")
out=$(timeout 60 "$zpmix" preempt --job "$ns" --grace-ms 100 --broker "$root" 2>&1)
check "preempt: granted" 0 $?
wait_lines "$work/preempt.out" "preempt alert" 2
check "preempt: both nodes' ranks alerted" 2 "$(grep -c "preempt alert" "$work/preempt.out")"
finish preempt 143

# --- a lost broker: the answers come at its loss, with what the others reached ---------------
start lost -H "$a:1,$b:1" "$jprog" counter "$work"
wait_lines "$work/lost.out" " ready" 2
ns=$(nspace_of "$work/lost.out")
bpid=$(ip netns pids "$b" | while read -r p; do
    [[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" == "$zpmix broker "* ]] && echo "$p"
done | head -1)
kill -STOP "$bpid"
ps_states >"$work/lost.ps" &
pspid=$!
out=$(ctl signal USR1)
wait $pspid
check "lost broker: signal reaches the other node, says which is not" \
    "signal delivered to 1 process(es); not reached: $b: its broker is lost" "$out"
check "lost broker: ps lists the unreachable rank" "0:$a:running 1:$b:unreachable" "$(cat "$work/lost.ps")"
kill -KILL "$bpid"
wait "$pid"
check "lost broker: the job fails" yes "$(grep -q "was lost" "$work/lost.err" && echo yes || cat "$work/lost.err")"
for p in $(ip netns pids "$b"); do kill -KILL "$p" 2>/dev/null; done

# --- PMIx_Abort of a rank on another node ------------------------------------------------------
out=$(ZPMIX_CONFIG=$work/conf.grace run -H "$a:2,$b:1" "$wprog" abortremote 2>"$work/abort.err")
st=$?
[ $st = 7 ] || cat "$work/abort.err" >&2
check "abort remote: the job's status is the abort's" 7 $st
check "abort remote: the named rank was terminated" 1 "$(grep -c "rank 2: terminated by the abort: 1" <<<"$out")"
check "abort remote: the others ran on meanwhile" 2 "$(grep -c "abortremote ok" <<<"$out")"
check "abort remote: says who" yes \
    "$(grep -q "rank 0 called PMIx_Abort with status 7 for rank(s) 2: abort remote" "$work/abort.err" && echo yes || cat "$work/abort.err")"

# --- monitoring: a remote rank's alert reaches the job on every node; the response works there -
out=$(run -H "$a:2,$b:1" "$jprog" hb-range "$work" 2>&1)
check "heartbeat alert: exit status" 0 $?
ns=$(sed -n 's/^rank 0 nspace \(\S*\) ready$/\1/p' <<<"$out")
for r in 0 1 2; do
    check "heartbeat alert: rank $r heard rank 0's" 1 "$(grep -c "rank $r alert -109 from $ns:0" <<<"$out")"
done
err=$(ZPMIX_CONFIG=$work/conf.terminate run -H "$b:1" "$jprog" stall-ignore-term "$work" 2>&1 >/dev/null)
st=$?
check "monitor response on a remote node: the stalled rank is killed" 137 $st
check "monitor response: zpmix run says where" yes \
    "$(grep -q "rank 0 (pid [0-9]*) was killed by signal 9 (Killed) (on $b)" <<<"$err" && echo yes || echo "$err")"

deadline=$((SECONDS + 15))
while left=$(ip netns pids "$a"; ip netns pids "$b") && [ -n "$left" ] && ((SECONDS < deadline)); do
    sleep 0.05
done
check "nothing left on the nodes" "" "$left"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
