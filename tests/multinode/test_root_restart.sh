#!/usr/bin/env bash
# A standing tree's root broker killed outright and started again (as its service manager would):
# the other brokers stay up with their ranks, each saying once that it lost its parent and tries
# it again, and rejoin the new root, which adopts the jobs that still run on them. A job across
# the two other nodes fences, is told to fence while the root is away (that fence fails at once,
# PMIX_ERR_UNREACH, never hangs), then prints and fences again once the root is back: it ends with
# exit 0, every line of its output arrives, and `zpmix ps` on the new root lists it. A job that
# had a rank on the root's node fails, naming the lost broker.
# usage: test_root_restart.sh ZPMIX RESTART_PROG
set -u
zpmix=$1 prog=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"
source "$here/standing.sh"

netns_up 3
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]} c=${NETNS_NODES[2]}
work=$(mktemp -d)
stop_brokers() { pkill -KILL -f "^$zpmix broker --config $work/"; }
trap 'stop_brokers; rm -rf "$work"; netns_down' EXIT

"$zpmix" keygen "$work/tree.key"
# A chain (a, the root; b under it; c under b): c hears of the new root only through b.
standing_conf "$a" "$b" "$c"

# until_lines FILE SECONDS PATTERN COUNT: until FILE has COUNT lines matching.
until_lines() {
    local n deadline=$((SECONDS + $2))
    until n=$(grep -c -- "$3" "$1" 2>/dev/null); [ "${n:-0}" -ge "$4" ]; do
        ((SECONDS < deadline)) || { echo "no $4 '$3' in $1:" >&2; cat "$1" >&2; return 1; }
        sleep 0.02
    done
}
broker_pid() { sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$work/xdg.$1/zpmix/broker.json"; }
# ps_row NODE NSPACE: state, status, ranks by state and message of the job, as NODE's broker lists it.
ps_row() {
    on "$1" "$zpmix" ps --json | python3 -c '
import json, sys
for j in json.load(sys.stdin):
    if j["nspace"] == sys.argv[1]:
        ranks = ",".join("%s:%d" % kv for kv in sorted(j["ranks"].items()))
        print(j["state"], j.get("exit_status", "-"), ranks, j.get("message", ""))' "$2"
}
# ps_until NODE NSPACE STATE: ps_row once the job is in STATE there (10 s at most).
ps_until() {
    local row deadline=$((SECONDS + 10))
    while :; do
        row=$(ps_row "$1" "$2")
        [[ $row == "$3"* ]] || ((SECONDS >= deadline)) && break
        sleep 0.05
    done
    echo "$row"
}

mkdir -p "$work/xdg.$a" "$work/xdg.$b" "$work/xdg.$c"
start "$c"
start "$b"
start "$a"
until_log "$a" 30 "broker 1 on $b joined the tree"
until_log "$a" 30 "broker 2 on $c joined the tree"

# The job across b and c, from c (its output comes from b down to c, not through the root).
lines=500
XDG_RUNTIME_DIR=$work/xdg.$c RESTART_AWAY=$work/away RESTART_GO=$work/go RESTART_LINES=$lines \
    "$ZPMIX_NETNS_AGENT" "$c" exec "$zpmix" run -x RESTART_AWAY -x RESTART_GO -x RESTART_LINES \
    -H "$b:1,$c:1" --tag-output "$prog" >"$work/job.out" 2>"$work/job.err" &
job=$!
# A job with a rank on the root's node, from b.
XDG_RUNTIME_DIR=$work/xdg.$b "$ZPMIX_NETNS_AGENT" "$b" exec "$zpmix" run -H "$a:1,$b:1" \
    sh -c "'echo \$PMIX_NAMESPACE; exec sleep 300'" >"$work/lost.out" 2>"$work/lost.err" &
lost_job=$!
until_lines "$work/job.out" 30 "fence1 PMIX_SUCCESS" 2
until_lines "$work/lost.out" 30 "^zpmix\." 2
ns=$(sed -n 's/^\[\([^,]*\),.*fence1.*/\1/p' "$work/job.out" | head -1)

# The root killed outright: b (its child) stays up with its ranks, says so once, and waits.
kill -KILL "$(broker_pid "$a")"
until_log "$b" 10 "lost the parent broker: .*its ranks go on, and it tries the parent again"
# A fence while the root is away fails at once rather than waiting for it.
touch "$work/away"
until_lines "$work/job.out" 10 " away " 2
check "a fence while the root is away: fails, PMIX_ERR_UNREACH" 2 \
    "$(grep -c " away PMIX_ERR_UNREACH$" "$work/job.out")"
check "the root away: b and c stay up (each with its watchdog)" 4 \
    "$(pgrep -c -f "^$zpmix broker --config $conf")"

# Started again, the root adopts both jobs from the brokers that rejoin (b, then c under it).
start "$a"
until_log "$b" 10 "joined the tree again as broker 1"
until_log "$a" 10 "adopted from its part on" 2
check "b said it lost its parent once" 1 "$(grep -c "lost the parent broker" "$work/$b.log")"
check "c never lost its parent" 0 "$(grep -c "lost the parent broker" "$work/$c.log")"
wait "$lost_job"
check "the job with a rank on the root's node: fails" 1 $?
check "... naming the lost broker" yes \
    "$(grep -q "the broker on $a was lost, with the job's ranks there" "$work/lost.err" && echo yes || cat "$work/lost.err")"
check "the job across b and c: listed running on the new root" running \
    "$(ps_until "$a" "$ns" running | cut -d' ' -f1)"

# It goes on: its output, its fence across b and c through the new root, its end.
touch "$work/go"
wait "$job"
check "the job across b and c: exit 0" 0 $?
check "... every line of its output" "$lines $lines" \
    "$(grep -c "^\[$ns,0,$b\]<stdout>: rank 0 line " "$work/job.out") $(grep -c "^\[$ns,1,$c\]<stdout>: rank 1 line " "$work/job.out")"
check "... the fence after the root came back" 2 "$(grep -c "fence2 PMIX_SUCCESS" "$work/job.out")"
check "... zpmix ps on the new root: finished, exit 0" "finished 0 exited:2" \
    "$(ps_until "$a" "$ns" finished | cut -d' ' -f1-3)"
[ -s "$work/job.err" ] && cat "$work/job.err" >&2
exit $((fails > 0))
