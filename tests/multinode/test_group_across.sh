#!/usr/bin/env bash
# Process groups across namespace nodes (tests/group/group_prog.c): construct in any order with
# group info, endpoint data and context ids, a fence over the group, destruct and build again,
# on two nodes under a flat tree and on three under a chain (a broker in the middle relays); each
# node's ranks in a group of their own get context ids unique across brokers; a node's broker
# killed during a construct fails it for the others with PMIX_ERR_UNREACH, in bounded time;
# groups by invitation with the leader on one node and invitees on another (accept, decline,
# leave, destruct; an invitee that never answers, one that ends; a leader that ends and a
# participant on either node that takes over, or none that does); a member that leaves (rank 1,
# on the first node) leaves the membership the others' libraries keep, on either node; a
# recoverable job where a member dies (the others go on); the inviter's broker killed while an
# invitee on another node waits to join fails that join with PMIX_ERR_UNREACH, in bounded time.
# usage: test_group_across.sh ZPMIX GROUP_PROG
set -u
zpmix=$(realpath "$1")
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

netns_up 3
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]} c=${NETNS_NODES[2]}
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$work" "$XDG_RUNTIME_DIR"; netns_down' EXIT
export ZPMIX_CONFIG=$work/conf
run() { timeout 120 "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" "$@"; }
ok_lines() {  # ok_lines WHAT SCENARIO RANKS OUTPUT STATUS
    check "$1: exit status" 0 "$5"
    check "$1: every rank ok" "$3" "$(grep -c "^$2 ok$" <<<"$4")"
}

printf '[tree]\nradix = 4\n' >"$work/conf"
out=$(run -H "$a:2,$b:2" "$prog" basic 2>&1)
ok_lines "two nodes: basic" basic 4 "$out" $?
out=$(run -H "$a:2,$b:2" "$prog" pernode 2>&1)
ok_lines "two nodes: a group per node, context ids unique across brokers" pernode 4 "$out" $?

out=$(run -H "$a:1,$b:3" "$prog" invite 2>&1)
ok_lines "two nodes: invite, join, leave" invite 4 "$out" $?
out=$(run -H "$a:2,$b:1" "$prog" leavequiet 2>&1)
ok_lines "two nodes: a leaver leaves every member's membership" leavequiet 3 "$out" $?
out=$(run -H "$a:1,$b:2" "$prog" invitesilent 2>&1)
ok_lines "two nodes: an invitee that never answers" invitesilent 3 "$out" $?
# The invitee that ends is on the other node than the leader: its broker tells the leader's at
# once (the scenario fails if that took until the invitation's 60 s timeout).
out=$(run --enable-recovery -H "$a:1,$b:2" "$prog" invitedeath 2>&1)
ok_lines "two nodes: an invitee that ends on another node fails at once" invitedeath 2 "$out" $?
# The leader (rank 0, where the invitation is) ends: rank 1 takes over, on the same node as the
# invitation, then on the other one (its join and its answer relayed); or no one does.
out=$(run --enable-recovery -H "$a:2,$b:3" "$prog" reselect 2>&1)
ok_lines "two nodes: a participant on the inviter's node takes over" reselect 4 "$out" $?
out=$(run --enable-recovery -H "$a:1,$b:4" "$prog" reselect 2>&1)
ok_lines "two nodes: a participant on another node takes over" reselect 4 "$out" $?
out=$(run --enable-recovery -H "$a:1,$b:2" "$prog" leaderdeath 2>&1)
ok_lines "two nodes: no one takes over from the leader" leaderdeath 2 "$out" $?
# A recoverable job (--enable-recovery) across nodes: a member killed on the second node fails
# the construct for the others, who go on (a construct without it), and the job still exits
# with that first failure's status; a member's end told to the others with notify_termination.
out=$(run --enable-recovery -H "$a:2,$b:2" "$prog" kill 2>&1)
st=$?
check "two nodes, recoverable: a killed member fails the construct, the others go on" 3 \
    "$(grep -c '^kill ok$' <<<"$out")"
check "two nodes, recoverable: the job exits with the first failure's status" 137 "$st"
out=$(run --enable-recovery -H "$a:1,$b:2" "$prog" notify 2>&1)
ok_lines "two nodes: a member's end heard with notify_termination" notify 2 "$out" $?

printf '[tree]\nradix = 1\n' >"$work/conf"
out=$(run -H "$a:1,$b:2,$c:1" "$prog" basic 2>&1)
ok_lines "three nodes in a chain: basic" basic 4 "$out" $?
out=$(run -H "$a:1,$b:2,$c:1" "$prog" pernode 2>&1)
ok_lines "three nodes in a chain: a group per node" pernode 4 "$out" $?

# A node's broker killed (lost_broker WHAT SCENARIO HOSTS UP REPORTS): runs SCENARIO with node b
# as $GROUP_VICTIM, waits for UP lines ending in "up", kills b's broker, then waits for REPORTS
# lines "rank R ..." (in $outf, the scenario's own file, emptied before the run starts: the
# background run truncates it only once it runs, and an earlier run's lines must not count);
# `took` is the time from the kill to the last report.
lost_after_ms=2000
printf '[tree]\nradix = 4\nheartbeat_ms = 200\nlost_after_ms = %d\n' $lost_after_ms >"$work/conf"
lost_broker() {
    outf=$work/$2.out
    : >"$outf"
    GROUP_VICTIM=$b "$zpmix" run --rsh-agent "$ZPMIX_NETNS_AGENT" -x GROUP_VICTIM -H "$3" \
        "$prog" "$2" >"$outf" 2>>"$work/err" &
    local pid=$! deadline=$((SECONDS + 30)) bpid t0 status
    until [ "$(grep -c 'up$' "$outf")" -ge "$4" ] || ((SECONDS >= deadline)); do sleep 0.02; done
    check "$1: every rank up" "$4" "$(grep -c 'up$' "$outf")"
    bpid=$(ip netns pids "$b" | while read -r p; do
        [[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" == "$zpmix broker "* ]] && echo "$p"
    done | head -1)
    t0=$(date +%s%3N)
    kill -KILL "$bpid"
    deadline=$((SECONDS + 30))
    until [ "$(grep -c '^rank ' "$outf")" -ge "$5" ] || ((SECONDS >= deadline)); do sleep 0.02; done
    took=$(($(date +%s%3N) - t0))
    check "$1: within lost_after_ms + 3 s" yes "$([ $took -le $((lost_after_ms + 3000)) ] && echo yes || echo "$took ms")"
    deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    wait "$pid"
    status=$?
    check "$1: zpmix run fails" yes "$([ $status -ne 0 ] && [ $status -lt 124 ] && echo yes || echo "status $status")"
}

# A node's broker killed while the others construct a group with its ranks.
lost_broker "lost broker" lostnode "$a:2,$b:2" 4 2
for r in 0 1; do
    check "lost broker: rank $r's construct fails" 1 "$(grep -c "^rank $r construct PMIX_ERR_UNREACH$" "$outf")"
done
# The inviter's broker killed (rank 2 on b invited ranks 0 and 1 on a; rank 0 accepted): the
# invitation went with it, so the join fails.
lost_broker "lost inviter's broker" leaderlost "$a:2,$b:1" 1 1
check "lost inviter's broker: rank 0's join fails" 1 "$(grep -c "^rank 0 join PMIX_ERR_UNREACH$" "$outf")"

[ "$fails" -eq 0 ] || { cat "$work"/*.out "$work/err" >&2; echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
