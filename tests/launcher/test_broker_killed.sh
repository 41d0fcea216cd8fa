#!/usr/bin/env bash
# A broker killed outright (SIGKILL) leaves nothing on its node: its ranks (and what they
# started) end, and its run directory, sockets, session directories and shared-memory files go,
# through its watchdog. Both kinds of broker: the one embedded in `zpmix run`, and a standalone
# `zpmix broker` in a directory of the user's (where only what it made is removed).
# usage: test_broker_killed.sh ZPMIX
set -u
zpmix=$1
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/xdg
mkdir -p "$XDG_RUNTIME_DIR"
base=$XDG_RUNTIME_DIR/zpmix
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
source "$(cd "$(dirname "$0")" && pwd)/../multinode/common.sh"  # check
# until_true SECONDS COMMAND...: polls COMMAND until it succeeds; fails after the deadline.
until_true() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
none_alive() {
    for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done
    return 0
}
# Ranks that print their pid and their child's, then sleep: the child shows the job's process group
# ends, not only the ranks.
ranks='sleep 60 & echo up $$ $!; wait'
ups() { grep -c '^up ' "$work/out" 2>/dev/null; }
two_up() { [ "$(ups)" = 2 ]; }
rank_pids() { sed -n 's/^up //p' "$work/out" | tr ' ' '\n'; }

# --- the broker inside zpmix run ---------------------------------------------------------------
"$zpmix" run -n 2 sh -c "$ranks" >"$work/out" 2>"$work/err" &
pid=$!
pids+=("$pid")
until_true 30 two_up
check "embedded: ranks up" 2 "$(ups)"
procs=$(rank_pids)
watchdog=$(ps -o pid= --ppid "$pid" | while read -r p; do
    grep -q "^up $p " "$work/out" || echo "$p"
done)
pids+=($procs $watchdog)
check "embedded: a watchdog runs" 1 "$(wc -w <<<"$watchdog")"
check "embedded: its run directory exists" yes "$([ -d "$base/broker-$pid-0/session" ] && echo yes || ls -R "$base")"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
until_true 10 none_alive $procs $watchdog
check "embedded: ranks, their children and the watchdog end" "" "$(for p in $procs $watchdog; do kill -0 "$p" 2>/dev/null && echo "$p"; done)"
until_true 10 test ! -e "$base/broker-$pid-0"
check "embedded: run directory removed" "" "$(ls "$base" 2>/dev/null)"

# --- a standalone broker in the user's directory ---------------------------------------------------
dir=$work/standalone
mkdir -p "$dir"
touch "$dir/keep"  # not the broker's: it stays
"$zpmix" broker --run-dir "$dir" 2>"$work/broker.err" &
bpid=$!
pids+=("$bpid")
until_true 30 test -S "$dir/broker.sock"
: >"$work/out"
"$zpmix" run --broker "ipc://$dir/broker.sock" -n 2 sh -c "$ranks" >"$work/out" 2>"$work/err" &
rpid=$!
pids+=("$rpid")
until_true 30 two_up
check "standalone: ranks up" 2 "$(ups)"
procs=$(rank_pids)
pids+=($procs)
check "standalone: the broker launched them" "$bpid $bpid" "$(for p in $(sed -n 's/^up \([0-9]*\) .*/\1/p' "$work/out"); do
    ps -o ppid= -p "$p"; done | tr -d ' ' | xargs)"
kill -KILL "$bpid"
wait "$bpid" 2>/dev/null
until_true 10 none_alive $procs
check "standalone: ranks and their children end" "" "$(for p in $procs; do kill -0 "$p" 2>/dev/null && echo "$p"; done)"
until_true 10 test ! -e "$dir/session"
check "standalone: only what the broker made is removed" "keep" "$(ls "$dir")"
until_true 10 none_alive "$rpid"
wait "$rpid" 2>/dev/null
st=$?
check "standalone: zpmix run fails" yes "$([ $st -ne 0 ] && echo yes || echo "status $st")"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
