#!/usr/bin/env bash
# A standing tree (`[tree] hosts`): brokers a site runs as a service, one per namespace node,
# started in any order (the root last), each with a run directory of its own. `zpmix run` on any
# of the nodes runs a job across them through its node's broker, starting no broker, with the
# caller's environment, umask and limits on every node; a broker killed outright is lost (a job
# needing its node is refused, naming it; the others run), and once started again it joins again
# and runs ranks; a `zpmix run` killed ends its job's ranks on every node while the brokers stay;
# the root stopped stops the others, each saying why. A key file others may read, a node not in
# the tree, and a parent whose name does not resolve are refused. `zpmix ps` on every node lists
# a finished job across the tree alike (its status, every node's ranks).
# usage: test_standing.sh ZPMIX WIREUP_PROG
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
check "keygen: a keypair, mode 0600" "600 2" \
    "$(stat -c %a "$work/tree.key") $(wc -w <"$work/tree.key")"
"$zpmix" keygen "$work/tree.key" 2>/dev/null
check "keygen: never over another file" 1 $?
standing_conf "$a" "$b" "$c"

# The standing brokers: their rendezvous files. No other broker may exist: one embedded in
# `zpmix run`, or started by it on a node, makes a private directory broker-* beside them.
brokers() { ls "$work"/xdg.*/zpmix/broker.json 2>/dev/null | wc -l; }
others() { ls -d "$work"/xdg.*/zpmix/broker-* 2>/dev/null; }
# kill_broker NODE SIGNAL: that node's broker itself (its pid in its rendezvous file), not its
# watchdog, which is to clean up after it.
kill_broker() {
    kill "-$2" "$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$work/xdg.$1/zpmix/broker.json")"
}

mkdir -p "$work/xdg.$a" "$work/xdg.$b" "$work/xdg.$c"
start "$c"
start "$b"
start "$a"
until_log "$a" 30 "broker 1 on $b joined the tree"
until_log "$a" 30 "broker 2 on $c joined the tree"

out=$(on "$b" "$zpmix" run -H "$a:2,$b:2,$c:2" \
    sh -c "'echo \$(hostname) \$PMIX_RANK \$ZPMIX_URI'" 2>&1)
check "hello from $b: exit status" 0 $?
check "hello from $b: ranks on the tree's nodes" \
    "$(printf '%s\n' "$a 0" "$a 1" "$b 2" "$b 3" "$c 4" "$c 5")" "$(cut -d' ' -f1,2 <<<"$out" | sort)"
check "hello: each rank under its node's standing broker" 6 \
    "$(awk -v w="$work" '$3 == "ipc://" w "/xdg." $1 "/zpmix/broker.sock"' <<<"$out" | wc -l)"
check "hello: no broker started for it" "3" "$(brokers)$(others)"
# The caller's environment, umask and soft limits reach the ranks, on its node and the others
# (the brokers are services with their own).
cat >"$work/caller.sh" <<EOF
export ZPMIX_T_CALLER=hers
umask 0027
ulimit -S -n 555
exec "$zpmix" run -H "$a:1,$b:1,$c:1" sh -c 'echo \$(hostname) \$ZPMIX_T_CALLER \$(umask) \$(ulimit -n)'
EOF
out=$(on "$b" bash "$work/caller.sh" 2>&1)
check "the caller's environment, umask and limits on every node" \
    "$(printf '%s hers 0027 555\n' "$a" "$b" "$c")" "$(sort <<<"$out")"
# Another user: the tree's brokers are not hers (they run the jobs of the user they run as), and
# `zpmix run` says so before it starts brokers of its own (which fail here: no rsh for her).
if [ "$(id -u)" = 0 ]; then
    chmod 711 "$work"  # her way to the configuration
    err=$(ZPMIX_CONFIG=$conf timeout 60 "$ZPMIX_NETNS_AGENT" "$b" env -u XDG_RUNTIME_DIR \
        setpriv --reuid 65534 --regid 65534 --clear-groups "$zpmix" run -H "$a:1,$b:1" true 2>&1)
    check "another user: told why the standing tree does not run her job" yes \
        "$(grep -q "this node has no broker of it for this user (uid 65534)" <<<"$err" && echo yes || echo "$err")"
fi
out=$(on "$c" "$zpmix" run -H "$a:1,$b:2,$c:1" "$prog" across 3 2>&1)
check "wireup across the tree from $c (a leaf)" 0 $?
[ -z "$out" ] || echo "$out" >&2
out=$(on "$a" "$zpmix" run -H "$a:2,$b:2" "$prog" across 2 2>&1)
check "wireup from the root's node" 0 $?
[ -z "$out" ] || echo "$out" >&2

# zpmix ps after a job across the tree: every broker lists it alike, finished, with the job's
# status and how its ranks ended on every node (not those of other nodes as running), in aligned
# columns; --job finds it too.
# Rank 3 fails once the four are up (30 s at most), so that each rank ends as the job's failure
# ends it.
cat >"$work/fail_when_up.sh" <<EOF
echo \$PMIX_NAMESPACE
touch "$work/up.\$PMIX_NAMESPACE.\$PMIX_RANK"
[ \$PMIX_RANK = 3 ] || exec sleep 60
for i in \$(seq 600); do
    [ \$(ls "$work" | grep -c "^up\.\$PMIX_NAMESPACE\.") = 4 ] && exit 42
    sleep 0.05
done
exit 3
EOF
out=$(on "$b" "$zpmix" run -H "$a:2,$b:2" sh "$work/fail_when_up.sh" 2>/dev/null)
check "ps: the failed job's status" 42 $?
ns=$(head -1 <<<"$out")
# ps_row NODE: the job's row as NODE's broker lists it, once finished (10 s at most).
ps_row() {
    local row deadline=$((SECONDS + 10))
    while :; do
        row=$(on "$1" "$zpmix" ps --json | python3 -c '
import json, sys
for j in json.load(sys.stdin):
    if j["nspace"] == sys.argv[1]:
        ranks = ",".join("%s:%d" % kv for kv in sorted(j["ranks"].items()))
        print(j["state"], j["exit_status"], ranks, ",".join(j["nodes"]), j["message"])' "$ns")
        [[ $row == finished* ]] || ((SECONDS >= deadline)) && break
        sleep 0.05
    done
    echo "$row"
}
row_a=$(ps_row "$a")
check "ps on $a: finished, the job's status, every node's ranks" \
    "finished 42 exited:1,killed:3 $a,$b" "$(cut -d' ' -f1-4 <<<"$row_a")"
check "ps on $a: the job's message" yes \
    "$(grep -q "rank 3 (pid [0-9]*) exited with status 42 (on $b)$" <<<"$row_a" && echo yes || echo "$row_a")"
for n in "$b" "$c"; do
    check "ps on $n: the same row as on $a" "$row_a" "$(ps_row "$n")"
done
on "$c" "$zpmix" ps >"$work/ps.txt"
check "ps: NODES and STATUS aligned with their headers" "$a,$b exit 42" "$(awk -v ns="$ns" '
    NR == 1 { n = index($0, "NODES"); s = index($0, "STATUS") }
    $1 == ns { split(substr($0, n), w, " "); print w[1], substr($0, s, 7) }' "$work/ps.txt")"
check "ps --job of the finished job" "0 1" \
    "$(on "$c" "$zpmix" ps --job "$ns" >"$work/ps.txt"; echo "$? $(grep -c "^$ns .* exit 42" "$work/ps.txt")")"
# A job failing as it starts: c's part, spawning 20 ranks, may give up before all started. Every
# broker still lists it alike, finished, each of its 22 ranks counted once, none running.
out=$(on "$b" "$zpmix" run --oversubscribe -H "$a:1,$b:1,$c:20" \
    sh -c "'echo \$PMIX_NAMESPACE; [ \$PMIX_RANK = 1 ] && exit 42; exec sleep 60'" 2>/dev/null)
check "a job failing as it starts: its status" 42 $?
ns=$(grep -m1 '^zpmix\.' <<<"$out")
row_a=$(ps_row "$a")
check "a job failing as it starts: finished, 22 ranks, none running" "finished 42 22 no" \
    "$(awk '{split($3, s, ","); t = 0; for (i in s) { split(s[i], kv, ":"); t += kv[2] }
             print $1, $2, t, ($3 ~ /running/ ? "running" : "no")}' <<<"$row_a")"
for n in "$b" "$c"; do
    check "a job failing as it starts: the same row on $n" "$row_a" "$(ps_row "$n")"
done

# A job on one node of the tree is laid out by the tree too: its node ranks on b come next after
# that of a job across the tree still running there (rank 1, on b).
XDG_RUNTIME_DIR=$work/xdg.$b "$ZPMIX_NETNS_AGENT" "$b" exec "$zpmix" run -H "$a:1,$b:1" \
    sh -c "'echo \$PMIX_RANK \$($prog noderank); exec sleep 600'" >"$work/long.out" 2>&1 &
long=$!
deadline=$((SECONDS + 30))
until [ "$(grep -c ' noderank ' "$work/long.out")" = 2 ] || ((SECONDS >= deadline)); do
    sleep 0.02
done
on_b=$(sed -n 's/^1 noderank \([0-9]*\).*/\1/p' "$work/long.out")
out=$(on "$b" "$zpmix" run -n 2 "$prog" noderank 2>&1)
check "a job on $b alone: node ranks next after the other job's there" \
    "$((on_b + 1)) $((on_b + 2))" "$(sed -n 's/^noderank //p' <<<"$out" | sort -n | xargs)"
kill -TERM "$long"
wait "$long"

# c's broker killed outright: lost; a job needing c is refused naming it, the others run. A job
# running there fails, and ps lists its rank on c as unreachable.
XDG_RUNTIME_DIR=$work/xdg.$a "$ZPMIX_NETNS_AGENT" "$a" exec "$zpmix" run -H "$a:1,$c:1" \
    sh -c "'echo \$PMIX_NAMESPACE; exec sleep 500'" >"$work/lost.out" 2>&1 &
lost_run=$!
deadline=$((SECONDS + 30))
until [ "$(grep -c '^zpmix\.' "$work/lost.out")" = 2 ] || ((SECONDS >= deadline)); do sleep 0.02; done
ns=$(head -1 "$work/lost.out")
kill_broker "$c" KILL
until_log "$a" 30 "broker(s) 2 lost elsewhere"
wait "$lost_run"
check "$c lost: the job running there fails" yes "$([ $? -ne 0 ] && echo yes)"
check "$c lost: ps lists its rank there unreachable" "finished killed:1,unreachable:1 $a,$c" \
    "$(ps_row "$a" | cut -d' ' -f1,3,4)"
deadline=$((SECONDS + 15))
while pgrep -f "sleep 500" >/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
check "$c lost: its rank there does not outlive its broker" "" "$(pgrep -f 'sleep 500')"
err=$(on "$a" "$zpmix" run -H "$a:1,$c:1" true 2>&1)
check "$c lost: a job there fails" 1 $?
check "$c lost: says its broker is not up" yes \
    "$(grep -q "the broker on $c is not up" <<<"$err" && echo yes || echo "$err")"
out=$(on "$a" "$zpmix" run -H "$a:1,$b:1" "$prog" across 2 2>&1)
check "$c lost: a job on the others runs" 0 $?
[ -z "$out" ] || echo "$out" >&2

# Started again, it joins again and runs ranks.
start "$c"
until_log "$a" 30 "broker 2 on $c joined the tree" 2
out=$(on "$b" "$zpmix" run -H "$a:1,$b:1,$c:1" "$prog" across 3 2>&1)
check "$c joined again: wireup across the three" 0 $?
[ -z "$out" ] || echo "$out" >&2

# `zpmix run` killed: its job's ranks end on every node; the brokers stay.
XDG_RUNTIME_DIR=$work/xdg.$b "$ZPMIX_NETNS_AGENT" "$b" \
    exec "$zpmix" run -H "$a:1,$b:1,$c:1" sh -c "'echo up; exec sleep 600'" >"$work/run.out" 2>&1 &
run=$!
deadline=$((SECONDS + 30))
until [ "$(grep -c '^up$' "$work/run.out")" = 3 ] || ((SECONDS >= deadline)); do sleep 0.02; done
check "a long job: its three ranks up" 3 "$(grep -c '^up$' "$work/run.out")"
kill -KILL "$run"
deadline=$((SECONDS + 30))
while pgrep -f "sleep 600" >/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
check "zpmix run killed: its ranks end on every node" "" "$(pgrep -f 'sleep 600')"
check "zpmix run killed: the brokers stay" 3 "$(brokers)"
check "zpmix run killed: so do their processes" 6 "$(pgrep -c -f "^$zpmix broker --config $conf")"

# The root stopped: the others lose their parent and stop, saying so.
kill_broker "$a" TERM
wait "${bpid[$a]}" "${bpid[$b]}" "${bpid[$c]}"
check "the root stopped: every broker stopped" 0 "$(pgrep -c -f "^$zpmix broker --config $conf")"
check "the root stopped: $c says why" yes \
    "$(grep -q "its parent broker stopped, and so did it (start it again to rejoin the tree)" \
        "$work/$c.log" && echo yes || tail -3 "$work/$c.log")"
check "nothing left in the run directories" "" "$(ls "$work/xdg.$a/zpmix" "$work/xdg.$b/zpmix" \
    "$work/xdg.$c/zpmix" 2>/dev/null | grep -v ':$' | grep -v '^$')"

# Refusals: a key file others may read; a node not in the tree.
chmod 640 "$work/tree.key"
err=$(on "$a" "$zpmix" broker --config "$conf" --run-dir "$work/xdg.$a/zpmix" 2>&1)
check "a key file others may read: refused" yes \
    "$(grep -q "others can read or write it (mode 0640).*it must be mode 0600" <<<"$err" && echo yes || echo "$err")"
chmod 600 "$work/tree.key"
err=$(XDG_RUNTIME_DIR=$work/xdg.$a timeout 60 "$zpmix" broker --config "$conf" \
    --run-dir "$work/xdg.$a/zpmix" 2>&1)
check "a node not in the tree: refused" yes \
    "$(grep -q "is not one of \[tree\] hosts" <<<"$err" && echo yes || echo "$err")"
# A parent whose name does not resolve: an error at once, not a parent waited for for ever.
sed -e "s/^hosts = .*/hosts = [\"no-such-host.invalid\", \"$a\"]/" -e '/^addresses = /d' \
    "$conf" >"$work/unresolved.toml"
err=$(on "$a" "$zpmix" broker --config "$work/unresolved.toml" --run-dir "$work/xdg.$a/zpmix" 2>&1)
check "a parent that does not resolve: refused" 1 $?
check "a parent that does not resolve: says so" yes \
    "$(grep -q "this broker's parent, 'no-such-host.invalid', does not resolve" <<<"$err" && echo yes || echo "$err")"
exit $((fails > 0))
