#!/usr/bin/env bash
# Debuggers across namespace nodes: `zpmix run --stop-in-init` of a job on two nodes; every rank,
# on either node, waits in PMIx_Init; a tool finds the run by its pid, hears PMIX_READY_FOR_DEBUG
# once all four wait (the root's coordinator counts them), sees that none went past PMIx_Init,
# finds them in the process table, attaches gdb to rank 0 (on the first node) and releases the
# job with PMIX_DEBUGGER_RELEASE, which the tree carries to the other node's ranks; the job ends
# well, every rank having gone on. Then the same with `--stop-on-exec`: every rank, on either
# node, is stopped at its first instruction until each node's launcher hears the release. Then a
# tool co-launches a debugger daemon per rank of a job stopped on both nodes: each runs beside its
# target's ranks (on its node, told which they are), the tool hears the daemons' end, and the
# target, released, ends well.
# usage: test_debug_across.sh ZPMIX DEBUGGER_TOOL DEBUG_RANK
set -u
zpmix=$1 tool=$2 rank_prog=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns.sh"
source "$here/common.sh"

command -v gdb >/dev/null || { echo "gdb not installed: skipped"; exit 77; }
netns_up 2
a=${NETNS_NODES[0]} b=${NETNS_NODES[1]}
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$work" "$XDG_RUNTIME_DIR"; netns_down' EXIT

# debug_run FLAG [exec]: the job stopped by FLAG, the tool's checks (at exec with `exec`), its end.
debug_run() {
    local flag=$1 mode=${2:-} files="$work/files$1"
    mkdir "$files"
    rm -f "$work/job.out" "$work/job.err"  # the wait below must not read the last run's
    "$zpmix" run "$flag" --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:2,$b:2" \
        "$rank_prog" "$files" >"$work/job.out" 2>"$work/job.err" &
    local pid=$! deadline=$((SECONDS + 30))
    until grep -q "release them: zpmix release" "$work/job.err" 2>/dev/null; do
        ((SECONDS < deadline)) || { cat "$work/job.out" "$work/job.err" >&2; kill "$pid"; exit 1; }
        sleep 0.02
    done
    local ns out st
    ns=$(sed -n 's/.*release them: zpmix release \(\S*\) .*/\1/p' "$work/job.err")

    out=$(timeout 90 "$tool" attach "$pid" "$ns" "$files" 4 $mode 2>&1)
    st=$?
    [ "$st" = 0 ] || { echo "$out" >&2; kill "$pid"; }  # a job left stopped never ends
    check "$flag: tool: ready, none past init, the table, gdb, the release" 0 "$st"
    check "$flag: tool: gdb read rank 0's variable" 1 "$(echo "$out" | grep -c 'gdb: \$1 = 4242')"
    check "$flag: tool: every rank in the table, with its node" "0:$a 1:$a 2:$b 3:$b" \
        "$(echo "$out" | awk '/^proc /{printf "%s%s:%s", sep, $2, $4; sep=" "}')"

    wait "$pid"
    st=$?
    [ "$st" = 0 ] || cat "$work/job.out" "$work/job.err" >&2
    check "$flag: the job ends well once released" 0 "$st"
    check "$flag: every rank, on both nodes, went on past PMIx_Init" 4 \
        "$(ls "$files" | grep -c '^up\.')"
}

# daemons_run: one daemon per rank of a job stopped in init on both nodes.
daemons_run() {
    local files="$work/daemons"
    mkdir "$files"
    rm -f "$work/job.out" "$work/job.err"
    "$zpmix" run --stop-in-init --rsh-agent "$ZPMIX_NETNS_AGENT" -H "$a:2,$b:2" \
        "$rank_prog" "$files" >"$work/job.out" 2>"$work/job.err" &
    local pid=$! deadline=$((SECONDS + 30))
    until grep -q "release them: zpmix release" "$work/job.err" 2>/dev/null; do
        ((SECONDS < deadline)) || { cat "$work/job.out" "$work/job.err" >&2; kill "$pid"; exit 1; }
        sleep 0.02
    done
    local ns out st
    ns=$(sed -n 's/.*release them: zpmix release \(\S*\) .*/\1/p' "$work/job.err")
    out=$(timeout 90 "$tool" daemons "$pid" "$ns" "$files" 4 "$rank_prog" 2>&1)
    st=$?
    [ "$st" = 0 ] || { echo "$out" >&2; kill "$pid"; }  # a job left stopped never ends
    check "daemons: tool: spawned, ended, the target waited, the release" 0 "$st"
    # Node ranks count every job's ranks on the node: the daemons' come after their target's.
    check "daemons: each beside its target's ranks, told which they are, node ranks after theirs" \
        "$(printf 'daemon %s: %s\n' 0 "$ns 0 1 node_rank=2 job=$ns" 1 "$ns 0 1 node_rank=3 job=$ns" \
            2 "$ns 2 3 node_rank=2 job=$ns" 3 "$ns 2 3 node_rank=3 job=$ns")" \
        "$(grep '^daemon ' <<<"$out")"
    wait "$pid"
    st=$?
    [ "$st" = 0 ] || cat "$work/job.out" "$work/job.err" >&2
    check "daemons: the target ends well once released" 0 "$st"
    check "daemons: every target rank went on" 4 "$(ls "$files" | grep -c '^up\.')"
}

debug_run --stop-in-init
debug_run --stop-on-exec exec
daemons_run
check "--stop-on-exec: rank 3 (second node) knew it was stopped at exec" \
    "init=0 app=0 exec=1 value=4242" "$(cat "$work/files--stop-on-exec/up.3")"
exit $((fails > 0))
