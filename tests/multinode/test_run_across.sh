#!/usr/bin/env bash
# `zpmix run` across namespace nodes, as across machines through ssh: brokers start on the nodes
# through the rsh agent, the ranks' output and exit status come back, a failure anywhere ends the
# job everywhere, a node that cannot be reached fails the launch naming it, and nothing of the
# job (broker, rank, run directory) is left on any node afterwards. An MPMD job's apps span the
# nodes with their ranks numbered in order and their app information (APP_INFO: tests/launcher's).
# usage: test_run_across.sh ZPMIX [WIREUP_PROG [APP_INFO]]
set -u
zpmix=$1 app_info=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
conf=$(mktemp)
# Every broker of this test (the agent passes the environment on) keeps its run directory here.
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$conf" "$conf.out" "$conf.err" "$XDG_RUNTIME_DIR"; netns_down' EXIT
# A lost broker is noticed within 2 s here (10 s by default).
printf '[tree]\nheartbeat_ms = 200\nlost_after_ms = 2000\n' >"$conf"
export ZPMIX_CONFIG=$conf
run() { timeout 60 "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" "$@"; }
base=$XDG_RUNTIME_DIR/zpmix

# Starts `zpmix run` (itself, so that signals reach it) with a rank on each node that says "up"
# and sleeps; returns once both are up, with its pid in $pid and its stderr in $conf.err.
start_sleepers() {
    : >"$conf.out"
    "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:1,$b:1" sh -c 'echo up; exec sleep 60' \
        >>"$conf.out" 2>"$conf.err" &
    pid=$!
    local deadline=$((SECONDS + 30))
    while [ "$(grep -c up "$conf.out")" -lt 2 ] && ((SECONDS < deadline)); do sleep 0.05; done
}

# Nothing of a job outlives it: no process in the nodes' namespaces (within 15 s: a broker that
# lost its parent notices, then ends its ranks), no broker directory.
nothing_left_on_nodes() {
    local deadline=$((SECONDS + 15)) left
    while left=$(ip netns pids "$a"; ip netns pids "$b") && [ -n "$left" ] && ((SECONDS < deadline)); do
        sleep 0.05
    done
    check "$1: no process left on the nodes" "" "$left"
}
nothing_left() {
    nothing_left_on_nodes "$1"
    check "$1: no broker directory left" "" "$(ls "$base" 2>/dev/null | grep '^broker-')"
}

out=$(run -H "$a:2,$b:2" sh -c 'echo $(hostname) $PMIX_RANK')
check "hello: exit status" 0 $?
check "hello: each rank on its node" "$(printf '%s\n' "$a 0" "$a 1" "$b 2" "$b 3")" "$(sort <<<"$out")"
nothing_left hello

out=$(run --tag-output -H "$a:1,$b:1" sh -c 'echo hi')
check "tag-output names the node" "$(printf '%s\n' "$a" "$b")" "$(sed -n 's/^\[[^,]*,[01],\([^]]*\)\]<stdout>: hi$/\1/p' <<<"$out" | sort)"

# Output across the tree, nothing lost: a rank on each node writes a million lines to a reader
# that takes nothing for a while (the ranks wait), then every line arrives, whole, tagged with
# its node.
out=$(run --tag-output -H "$a:1,$b:1" sh -c 'yes $(hostname) | head -n 1000000' |
    (sleep 2; sed -n 's/^\[[^,]*,[01],\([^]]*\)\]<stdout>: \1$/\1/p' | sort | uniq -c))
check "a million lines from each node, slowly read: all, whole" \
    "$(printf '%s\n' "$a" "$b" | sort | sed 's/^/1000000 /')" "$(sed 's/^ *//' <<<"$out")"

# --tcp-if: the brokers listen on the nodes' subnet only; an interface nobody has is refused.
out=$(run --tcp-if "$ZPMIX_NETNS_SUBNET" -H "$a:1,$b:1" hostname)
check "tcp-if: exit status" 0 $?
check "tcp-if: both nodes" "$(printf '%s\n' "$a" "$b")" "$(sort <<<"$out")"
err=$(run --tcp-if nosuchif0 -H "$a:1,$b:1" hostname 2>&1)
check "tcp-if nowhere: exit status" 1 $?
check "tcp-if nowhere: says why" yes "$(grep -q "no up IPv4 interface" <<<"$err" && echo yes || echo "$err")"
nothing_left tcp-if

out=$(run -H "$a:2,$b:2" --map-by node -n 4 sh -c 'echo $(hostname) $PMIX_RANK')
check "map-by node: exit status" 0 $?
check "map-by node: ranks alternate" "$(printf '%s\n' "$a 0" "$a 2" "$b 1" "$b 3")" "$(sort <<<"$out")"

# MPMD across nodes: app 0's rank on a, app 1's two ranks on b (by slot), numbered after it; each
# rank knows its app, and another rank's, as on one node.
out=$(run -H "$a:1,$b:2" -n 1 sh -c 'echo $(hostname) $PMIX_RANK first' : \
    -n 2 sh -c 'echo $(hostname) $PMIX_RANK second')
check "MPMD: exit status" 0 $?
check "MPMD: the apps' ranks in order, across the nodes" \
    "$(printf '%s\n' "$a 0 first" "$b 1 second" "$b 2 second")" "$(sort <<<"$out")"
if [ -x "$app_info" ]; then
    out=$(run -H "$a:2,$b:2" -n 3 "$app_info" x : -n 1 "$app_info" y)
    check "MPMD: each rank's app, across the nodes" \
        "$(printf '%s\n' "x rank 0 appnum 0 apps 2 app_size 3 app_rank 0 appldr 0 job_size 4 last_appnum 1" \
            "x rank 1 appnum 0 apps 2 app_size 3 app_rank 1 appldr 0 job_size 4 last_appnum 1" \
            "x rank 2 appnum 0 apps 2 app_size 3 app_rank 2 appldr 0 job_size 4 last_appnum 1" \
            "y rank 3 appnum 1 apps 2 app_size 1 app_rank 0 appldr 3 job_size 4 last_appnum 1")" \
        "$(sort <<<"$out")"
fi
nothing_left MPMD

# A rank failing on one node ends the others on both, and its status is zpmix run's.
err=$(run -H "$a:2,$b:2" sh -c '[ $PMIX_RANK = 3 ] && exit 7; exec sleep 60' 2>&1 >/dev/null)
st=$?; [ $st = 7 ] || echo "$err" >&2
check "failure: exit status" 7 $st
check "failure: names the rank and node" yes "$(grep -q "rank 3 .*exited with status 7 (on $b)" <<<"$err" && echo yes || echo "$err")"
nothing_left failure

# A signal to zpmix run reaches every rank on every node.
start_sleepers
kill -TERM $pid
wait $pid
check "signal: exit status (SIGTERM)" 143 $?
nothing_left signal

# zpmix run killed outright: each node's broker misses its parent and stops with its ranks.
start_sleepers
kill -KILL $pid
wait $pid 2>/dev/null
# The root's watchdog removes its directory; the nodes' brokers remove theirs.
nothing_left "zpmix run killed"

# A node that cannot be reached fails the launch at once, naming it.
err=$(run -H "$a:1,nosuchnode:1" true 2>&1)
check "unreachable: exit status" 1 $?
check "unreachable: names the node" yes "$(grep -q "nosuchnode" <<<"$err" && grep -q "did not start" <<<"$err" && echo yes || echo "$err")"
nothing_left unreachable

# A node's broker killed mid-job: zpmix run notices within the configured time and ends the job.
start_sleepers
bpid=$(ip netns pids "$b" | while read -r p; do
    [[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" == "$zpmix broker "* ]] && echo "$p"
done | head -1)
kill -KILL "$bpid"
wait $pid
status=$?
check "lost broker: zpmix run fails" yes "$([ $status -ne 0 ] && [ $status -ne 124 ] && echo yes || echo "status $status")"
check "lost broker: says so" yes "$(grep -q "was lost" "$conf.err" && echo yes || cat "$conf.err")"
# The lost broker's watchdog ended its rank and removed its directory; the node serves again.
nothing_left "lost broker"
out=$(run -H "$a:1,$b:1" hostname)
check "after a lost broker: a job runs" "$(printf '%s\n' "$a" "$b")" "$(sort <<<"$out")"
nothing_left "after a lost broker"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
