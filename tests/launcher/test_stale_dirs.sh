#!/usr/bin/env bash
# A starting broker removes the run and session directories of brokers that are gone (killed
# with their watchdog, so that nothing cleaned up), and never a live broker's: one whose lock is
# held, or one without a lock file whose pid lives. Embedded brokers (`zpmix run`) and a
# standalone `zpmix broker` restarted in its directory.
# usage: test_stale_dirs.sh ZPMIX
set -u
zpmix=$1
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/xdg
mkdir -p "$XDG_RUNTIME_DIR"
base=$XDG_RUNTIME_DIR/zpmix
pids=()
fails=0
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
source "$(cd "$(dirname "$0")" && pwd)/../multinode/common.sh"  # check
until_true() {  # until_true SECONDS COMMAND...
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
up() { grep -q '^up' "$1" 2>/dev/null; }
# The children of a broker's process that are not its ranks: its watchdog.
watchdog_of() { ps -o pid=,args= --ppid "$1" | awk '$2 !~ /^(sh|sleep)$/ {print $1}'; }

# --- a stale embedded broker: killed with its watchdog, mid-job ------------------------------------
"$zpmix" run -n 1 sh -c 'echo up; exec sleep 60' >"$work/stale.out" 2>&1 &
stale=$!
pids+=("$stale")
until_true 30 up "$work/stale.out"
wd=$(watchdog_of "$stale")
rank=$(ps -o pid= --ppid "$stale" | grep -v -w "$wd" | xargs)
pids+=($wd $rank)
check "a watchdog runs" 1 "$(wc -w <<<"$wd")"
kill -KILL $wd
kill -KILL "$stale" $rank
wait "$stale" 2>/dev/null
check "the killed broker left its directory" yes "$([ -d "$base/broker-$stale-0/session" ] && echo yes)"

# --- live brokers: one running a job, one held only by its lock ------------------------------------
"$zpmix" run -n 1 sh -c 'echo up; exec sleep 60' >"$work/live.out" 2>&1 &
live=$!
pids+=("$live")
until_true 30 up "$work/live.out"
check "the live broker's directory exists" yes "$([ -f "$base/broker-$live-0/broker.lock" ] && echo yes)"
# A directory whose pid is dead but whose lock is held: its owner lives (the pid may be reused).
held=$base/broker-999999999-0
mkdir -p "$held/session"
exec {lockfd}>"$held/broker.lock"
flock -n "$lockfd"
# No lock file, and a live pid in its name (a broker that died before locking, or one starting).
young=$base/broker-$$-7
mkdir -p "$young"
# A lock file nobody holds yet, and a live pid: a broker between making its directory and locking.
locking=$base/broker-$$-8
mkdir -p "$locking"
touch "$locking/broker.lock"

# --- a new broker cleans up ----------------------------------------------------------------------
"$zpmix" run -n 1 true >"$work/new.out" 2>&1
check "a new job runs" 0 $?
check "the stale directory is gone" no "$([ -e "$base/broker-$stale-0" ] && echo yes || echo no)"
check "the live broker's directory stays" yes "$([ -d "$base/broker-$live-0/session" ] && echo yes)"
check "a held lock keeps its directory" yes "$([ -d "$held/session" ] && echo yes)"
check "a live pid without a lock keeps its directory" yes "$([ -d "$young" ] && echo yes)"
check "a live pid with a lock not yet taken keeps its directory" yes "$([ -d "$locking" ] && echo yes)"
exec {lockfd}>&-
rmdir "$young"
rm -r "$locking"
kill -TERM "$live"
wait "$live" 2>/dev/null
check "the live broker removes its own directory when it stops" no "$([ -e "$base/broker-$live-0" ] && echo yes || echo no)"

# --- a standalone broker restarted in its directory ------------------------------------------------
dir=$work/standalone
mkdir -p "$dir"
touch "$dir/keep"
"$zpmix" broker --run-dir "$dir" 2>"$work/b1.err" &
b1=$!
pids+=("$b1")
until_true 30 test -S "$dir/broker.sock"
"$zpmix" run --broker "ipc://$dir/broker.sock" -n 1 sh -c 'echo up; exec sleep 60' >"$work/s.out" 2>&1 &
r1=$!
pids+=("$r1")
until_true 30 up "$work/s.out"
wd=$(watchdog_of "$b1")
rank=$(ps -o pid= --ppid "$b1" | grep -v -w "$wd" | xargs)
pids+=($wd $rank)
kill -KILL $wd
kill -KILL "$b1" $rank "$r1" 2>/dev/null
wait "$b1" "$r1" 2>/dev/null
check "the killed standalone broker left its session directory" yes "$([ -d "$dir/session" ] && echo yes)"
# A second broker while one lives is refused; after the first is gone it reclaims the directory.
"$zpmix" broker --run-dir "$dir" 2>"$work/b2.err" &
b2=$!
pids+=("$b2")
until_true 30 test -S "$dir/broker.sock"
until_true 30 grep -q "listening" "$work/b2.err"
check "the restarted broker removed the stale session directory" no "$([ -e "$dir/session" ] && echo yes || echo no)"
"$zpmix" broker --run-dir "$dir" 2>"$work/b3.err"
check "a second broker in a live broker's directory is refused" yes "$(grep -q 'already running' "$work/b3.err" && echo yes || cat "$work/b3.err")"
kill -TERM "$b2"
wait "$b2" 2>/dev/null
check "the stopped broker leaves only what was not its own" keep "$(ls "$dir")"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
