#!/usr/bin/env bash
# `zpmix run` as mpirun users run it: its command line (-np, --, unknown options, --mca,
# --output-filename, --report-bindings), `zpmix ctl` mistakes and kills, signals forwarded to the
# ranks (USR1, USR2, HUP, TSTP/CONT, TERM escalated to KILL), stdin (--stdin), the caller's
# environment, directory, umask and limits through a standalone broker, and a rank that leaves
# without PMIx_Finalize, and output (nothing lost, a slow reader pacing the ranks). Every wait
# polls a condition with a deadline.
# usage: test_run_cli.sh ZPMIX NO_FINALIZE_PROG
set -u
zpmix=$(readlink -f "$1")
no_finalize=$(readlink -f "$2")
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/xdg
mkdir -p "$XDG_RUNTIME_DIR"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
source "$(cd "$(dirname "$0")" && pwd)/../multinode/common.sh"  # check
until_true() {  # until_true SECONDS COMMAND...: polls COMMAND until it succeeds or the deadline
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
has() { grep -q -- "$2" "$1" 2>/dev/null; }
count() { grep -c -- "$2" "$1" 2>/dev/null; }
# at_least FILE PATTERN N: FILE has N or more lines matching PATTERN (counted at each try).
at_least() { [ "$(count "$1" "$2")" -ge "$3" ] 2>/dev/null; }
state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }  # R, S, T (stopped), ...
run() { timeout 60 "$zpmix" run "$@"; }
# A job in the background that writes to $work/out and $work/err, emptied first: its own
# redirection may come after our first look, which would read the job before's output.
start_bg() {
    : >"$work/out"
    : >"$work/err"
    "$zpmix" run "$@" >"$work/out" 2>"$work/err" &
}

# --- the command line ----------------------------------------------------------------------------
check "-np N" "0 1 " "$(run -np 2 sh -c 'echo $PMIX_RANK' | sort | tr '\n' ' ')"
check "-n N --oversubscribe -- prog" "a" "$(run -n 1 --oversubscribe -- echo a)"
check "options after the program are its own" "x -np 3" "$(run -n 1 echo x -np 3)"
run -n 1 --oversubscrib echo launched >"$work/out" 2>"$work/err"
check "unknown option: an error" "1" "$?"
check "unknown option: not launched" "" "$(cat "$work/out")"
check "unknown option: named, the nearest suggested" "yes" \
    "$(has "$work/err" "unknown option --oversubscrib; did you mean --oversubscribe?" && echo yes || cat "$work/err")"
check "--mca KEY VALUE and -mca" "self 3" \
    "$(run --mca btl self -mca btl_tcp_links 3 -n 1 sh -c 'echo $OMPI_MCA_btl $OMPI_MCA_btl_tcp_links')"
run --output-filename "$work/of" -n 2 sh -c 'echo out $PMIX_RANK; echo err $PMIX_RANK >&2' \
    >"$work/out" 2>"$work/err"
check "--output-filename: rank 1's stdout" "out 1" "$(cat "$work/of/1/rank.1/stdout")"
check "--output-filename: rank 0's stderr" "err 0" "$(cat "$work/of/1/rank.0/stderr")"
check "--output-filename: still on the terminal" "2" "$(count "$work/out" '^out ')"
run --report-bindings --bind-to core -n 1 true 2>"$work/err"
check "--report-bindings" "yes" "$(has "$work/err" "rank 0 bound to cpus" && echo yes || cat "$work/err")"

# --- zpmix ctl -----------------------------------------------------------------------------------
"$zpmix" ctl kill --job nobody --ranks x 2>"$work/err"
check "ctl --ranks x: an error" "1" "$?"
check "ctl --ranks x: says what is wrong" "yes" \
    "$(has "$work/err" "'x' is not a rank" && echo yes || cat "$work/err")"
for action in kill terminate; do
    start_bg -n 2 sh -c 'echo up $PMIX_NAMESPACE; exec sleep 60'
    pid=$!
    pids+=("$pid")
    until_true 30 has "$work/out" "^up "
    ns=$(sed -n 's/^up //p' "$work/out" | head -1)
    "$zpmix" ctl "$action" --job "$ns" >/dev/null
    wait "$pid"
    status=$?
    check "ctl $action: zpmix run fails" "yes" "$([ "$status" -ne 0 ] && echo yes || echo "$status")"
    check "ctl $action: and says who ended the job" "yes" \
        "$(has "$work/err" "as asked by tool pid .* ($action request)" && echo yes || cat "$work/err")"
done

# --- signals -------------------------------------------------------------------------------------
start_bg -n 2 sh -c 'for s in USR1 USR2 HUP; do trap "echo $s \$PMIX_RANK" $s; done
    echo up $$; while :; do sleep 1 & wait $!; done'
pid=$!
pids+=("$pid")
until_true 30 at_least "$work/out" '^up ' 2
ranks=$(sed -n 's/^up //p' "$work/out")
pids+=($ranks)
for s in USR1 USR2 HUP; do
    kill -"$s" "$pid"
    until_true 10 at_least "$work/out" "^$s " 2
    check "SIG$s reaches every rank once" "$s 0 $s 1 " "$(grep "^$s " "$work/out" | sort | tr '\n' ' ')"
done
check "zpmix run outlives them" "yes" "$(kill -0 "$pid" && echo yes)"
all_in_state() {
    local want=$1 p
    for p in $ranks; do [ "$(state_of "$p")" = "$want" ] || return 1; done
}
kill -TSTP "$pid"
until_true 10 all_in_state T
check "SIGTSTP suspends the ranks" "T T" "$(for p in $ranks; do state_of "$p"; done | xargs)"
kill -CONT "$pid"
until_true 10 all_in_state S
check "SIGCONT resumes them" "S S" "$(for p in $ranks; do state_of "$p"; done | xargs)"
kill -TERM "$pid"
wait "$pid"
check "SIGTERM ends the job" "143" "$?"

# Ranks that ignore SIGTERM get SIGKILL after the grace period (3 s, as mpirun).
start_bg -n 2 sh -c "trap '' TERM; echo up \$\$; while :; do sleep 1; done"
pid=$!
pids+=("$pid")
until_true 30 at_least "$work/out" '^up ' 2
ranks=$(sed -n 's/^up //p' "$work/out")
pids+=($ranks)
start=$SECONDS
kill -TERM "$pid"
wait "$pid"
status=$?
check "SIGTERM ignored: escalated to SIGKILL" "137" "$status"
check "SIGTERM ignored: within the grace period and a margin" "yes" \
    "$( ((SECONDS - start <= 8)) && echo yes || echo $((SECONDS - start)) s)"
check "SIGTERM ignored: said so" "yes" "$(has "$work/err" "killing it" && echo yes || cat "$work/err")"
check "SIGTERM ignored: no rank left" "" "$(for p in $ranks; do kill -0 "$p" 2>/dev/null && echo "$p"; done)"

# --- stdin ---------------------------------------------------------------------------------------
check "stdin goes to rank 0" "hi" "$(echo hi | run -n 1 cat)"
check "--stdin all" "0:a 1:a " \
    "$(echo a | run -n 2 --stdin all sh -c 'read l; echo $PMIX_RANK:$l' | sort | tr '\n' ' ')"
check "--stdin 1" "0: 1:x " \
    "$(echo x | run -n 2 --stdin 1 sh -c 'read l; echo $PMIX_RANK:$l' | sort | tr '\n' ' ')"
check "--stdin none" "" "$(echo x | run -n 1 --stdin none cat)"
check "--stdin 5 of 2 ranks: refused" "1" "$(echo x | run -n 2 --stdin 5 cat 2>/dev/null; echo $?)"
head -c 3000000 /dev/urandom >"$work/big"
check "a large stdin arrives whole" "$(md5sum <"$work/big" | cut -d' ' -f1)" \
    "$(run -n 1 md5sum <"$work/big" | cut -d' ' -f1)"

# --- the caller's environment, directory, umask and limits --------------------------------------
rank_view='echo "$FOO $(pwd) $(umask) $(ulimit -n) $PMIX_NAMESPACE"'
mkdir -p "$work/here"
expect="x $work/here 0077 200"
got=$(cd "$work/here" && umask 077 && ulimit -n 200 && FOO=x run -n 1 sh -c "$rank_view")
check "embedded broker: the caller's env, cwd, umask, ulimit -n" "$expect" "${got% *}"
export XDG_RUNTIME_DIR=$work/standalone
mkdir -p "$XDG_RUNTIME_DIR"
"$zpmix" broker -q >"$work/broker.log" 2>&1 &
broker=$!
pids+=("$broker")
until_true 30 test -s "$XDG_RUNTIME_DIR/zpmix/broker.json"
got=$(cd "$work/here" && umask 077 && ulimit -n 200 && FOO=x run -n 1 sh -c "$rank_view")
check "standalone broker: the caller's env, cwd, umask, ulimit -n" "$expect" "${got% *}"
check "standalone broker: it ran the job" "zpmix.$broker." "$(echo "${got##* }" | grep -o "^zpmix\.$broker\.")"
kill -TERM "$broker"
wait "$broker"
export XDG_RUNTIME_DIR=$work/xdg

# --- output: nothing lost, the ranks wait for a slow reader -------------------------------------
got=$(run -n 1 sh -c 'yes | head -c 5M' | wc -c; echo "${PIPESTATUS[0]}")
check "5 MB of yes arrive whole, exit 0" "5242880 0" "$(echo $got)"
# A reader that takes nothing until told: the rank blocks on its pipe (in pipe_write), and zpmix
# run holds a window of it, not the 100 MB; then every byte arrives. (The kernel names the wait
# pipe_write, or anon_pipe_write.)
rm -f "$work/go" "$work/count"
(run -n 1 sh -c 'yes | head -c 100M' | (until_true 60 test -e "$work/go"; wc -c >"$work/count")) &
reader=$!
writer_blocked() {
    local p
    for p in $(pgrep -f 'head -c 100M'); do
        case $(cat "/proc/$p/wchan" 2>/dev/null) in  # pipe_write, anon_pipe_write (6.x)
            *pipe_write) [ "$(cat "/proc/$p/comm")" = head ] && return 0 ;;
        esac
    done
    return 1
}
until_true 30 writer_blocked
check "a slow reader: the rank waits on its pipe" "0" "$?"
rss=$(ps -o rss= -C zpmix | awk '{s += $1} END {print s + 0}')
check "a slow reader: zpmix run holds a window, not the output" "yes" \
    "$([ "$rss" -lt 80000 ] && echo yes || echo "$rss kB")"
touch "$work/go"
wait "$reader"
check "a slow reader: then every byte arrives" "104857600" "$(cat "$work/count")"
got=$(run -n 16 --oversubscribe --output-filename "$work/of16" sh -c 'yes $PMIX_RANK | head -c 1M' | wc -c)
check "16 ranks: every byte on stdout" "16777216" "$got"
check "16 ranks: every rank's file whole" "16" \
    "$(find "$work/of16/1" -name stdout -size 1024k | wc -l)"
check "--tag-output: every line of batched output tagged" "0" \
    "$(run -n 4 --tag-output sh -c 'yes | head -c 1M' | grep -vc '^\[[^]]*\]<stdout>: y$')"
got=$(run -n 1 sh -c 'yes | head -c 50M' | head -1; echo "${PIPESTATUS[0]}")
check "| head -1: zpmix run ends, exit 0" "y 0" "$(echo $got)"

# --- a rank that leaves without PMIx_Finalize while the others run ------------------------------
run -n 2 "$no_finalize" >"$work/out" 2>"$work/err"
status=$?
check "no PMIx_Finalize: the job fails" "1" "$status"
check "no PMIx_Finalize: reported" "yes" \
    "$(has "$work/err" "rank 0 (pid [0-9]*) exited with status 0 without calling PMIx_Finalize" && echo yes || cat "$work/err")"

exit $((fails > 0))
