#!/usr/bin/env bash
# `zpmix run` as mpirun users run it: its command line (-np, --, unknown options, --mca,
# --output-filename, --report-bindings), Open MPI 4.1 mpirun's spellings of it (-host, -hostfile,
# -npernode, -wdir, --n, -c; an unknown one an error, never the help), MPMD jobs (`:`, --app FILE)
# and their apps as PMIx tells the ranks, --wdir, --timestamp-output, --merge-stderr-to-stdout,
# MPIEXEC_TIMEOUT, --bind-to socket|numa|hwthread and its warning when cores are overloaded,
# `zpmix ctl` mistakes and kills, signals forwarded to the ranks (USR1, USR2, HUP, TSTP/CONT, TERM
# escalated to KILL, a second Ctrl-C killing at once), stdin (--stdin), the caller's environment,
# directory, umask and limits through a standalone broker, and a rank that leaves without
# PMIx_Finalize, and output (nothing lost, a slow reader pacing the ranks). Every wait polls a
# condition with a deadline.
# usage: test_run_cli.sh ZPMIX NO_FINALIZE_PROG APP_INFO_PROG
set -u
zpmix=$(readlink -f "$1")
no_finalize=$(readlink -f "$2")
app_info=$(readlink -f "$3")
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

# --- mpirun's spellings (Open MPI 4.1) -----------------------------------------------------------
# Single-dash long forms, which CLI11 alone would take for clusters of short options (-host as
# -h -o -s -t: the help, exit 0, nothing run).
check "-host HOST -np N" "x x" "$(run -host localhost:2 -np 2 echo x | xargs)"
printf 'localhost slots=2\n' >"$work/hosts"
check "-hostfile FILE" "y y" "$(run -hostfile "$work/hosts" echo y | xargs)"
check "-machinefile FILE" "y y" "$(run -machinefile "$work/hosts" echo y | xargs)"
check "-npernode N" "z" "$(run -host localhost:2 -npernode 1 echo z)"
check "--npernode N, --pernode" "z z" "$( (run -host localhost:2 --npernode 1 echo z; run -host localhost:2 --pernode echo z) | xargs)"
check "--n N, -c N, -np=N" "3 3 3" "$(for o in '--n 3' '-c 3' '-np=3'; do run $o echo . | wc -l; done | xargs)"
check "-timeout S, -tag-output, -x" "1" \
    "$(run -timeout 30 -tag-output -x FOO=1 -np 1 sh -c 'echo $FOO' | grep -c '^\[[^]]*,0\]<stdout>: 1$')"
for bad in -display-map -hostfle -hx --allow-run-as-root; do
    run "$bad" echo launched >"$work/out" 2>"$work/err"
    check "$bad: an error, not the help" "1 " "$? $(cat "$work/out")"
    check "$bad: named" yes "$(has "$work/err" "unknown option $bad" && echo yes || cat "$work/err")"
done
check "-h: the help, exit 0" "0 yes" \
    "$(run -h >"$work/out" 2>&1; echo "$? $(has "$work/out" "--merge-stderr-to-stdout" && echo yes)")"

# --- MPMD: apps between ':' and --app FILE -------------------------------------------------------
# Each app's ranks are numbered after the app before's; PMIx tells each rank its app (PMIX_APPNUM,
# PMIX_APP_SIZE, PMIX_APP_RANK, PMIX_APPLDR), the job's number of apps and another rank's app.
mpmd_expect="a rank 0 appnum 0 apps 2 app_size 2 app_rank 0 appldr 0 job_size 3 last_appnum 1
a rank 1 appnum 0 apps 2 app_size 2 app_rank 1 appldr 0 job_size 3 last_appnum 1
b rank 2 appnum 1 apps 2 app_size 1 app_rank 0 appldr 2 job_size 3 last_appnum 1"
check "MPMD -n 2 a : -n 1 b: the apps and their ranks" "$mpmd_expect" \
    "$(run -n 2 "$app_info" a : -n 1 "$app_info" b | sort)"
check "MPMD with mpirun's spellings (-np : -np)" "$mpmd_expect" \
    "$(run -np 2 "$app_info" a : -np 1 "$app_info" b | sort)"
check "one app: PMIX_JOB_NUM_APPS 1, its size" "solo rank 0 appnum 0 apps 1 app_size 1 app_rank 0 appldr 0 job_size 1 last_appnum 0" \
    "$(run -n 1 "$app_info" solo)"
printf '# the apps of a job\n-n 2 %s a\n\n-np 1 %s "b"  # the last\n' "$app_info" "$app_info" >"$work/appfile"
check "--app FILE" "$mpmd_expect" "$(run --app "$work/appfile" | sort)"
check "-app FILE" "$mpmd_expect" "$(run -app "$work/appfile" | sort)"
mkdir -p "$work/wd1" "$work/wd2"
check "-x and --wdir: the job's, then an app's own" "0 g $work/wd1|1 b $work/wd2|2 g $work/wd1" \
    "$(run -x FOO=g -wdir "$work/wd1" -n 1 sh -c 'echo $PMIX_RANK $FOO $(pwd)' : \
        -n 1 -x FOO=b --wdir "$work/wd2" sh -c 'echo $PMIX_RANK $FOO $(pwd)' : \
        -n 1 sh -c 'echo $PMIX_RANK $FOO $(pwd)' | sort | paste -sd'|')"
run -n 1 true : -n 1 --tag-output true >/dev/null 2>"$work/err"
check "MPMD: a job's option after ':' is an error" "1 yes" \
    "$? $(has "$work/err" "is an option of the whole job" && echo yes || cat "$work/err")"
run -n 1 true : true >/dev/null 2>"$work/err"
check "MPMD: an app without -n is an error" "1 yes" \
    "$? $(has "$work/err" "app 1 (true) has no -n" && echo yes || cat "$work/err")"
run -n 1 true : -n 1 >/dev/null 2>"$work/err"
check "MPMD: an app without a program is an error" "1 yes" \
    "$? $(has "$work/err" "no program" && echo yes || cat "$work/err")"
run -n 1 true : -n 1 -H localhost true >/dev/null 2>"$work/err"
check "MPMD: hosts per app are refused" "1 yes" \
    "$? $(has "$work/err" "hosts per app are not supported" && echo yes || cat "$work/err")"

# --- --wdir, --timestamp-output, --merge-stderr-to-stdout, MPIEXEC_TIMEOUT ------------------------
check "--wdir DIR (relative to here)" "$work/wd1" "$(cd "$work" && run --wdir wd1 -n 1 pwd)"
run --wdir "$work/none" -n 1 pwd >/dev/null 2>"$work/err"
check "--wdir of no directory: an error, named" "1 yes" \
    "$? $(has "$work/err" "no working directory $work/none" && echo yes || cat "$work/err")"
stamp='[A-Z][a-z][a-z] [A-Z][a-z][a-z] [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] [0-9]\{4\}'
check "--timestamp-output" "1" "$(run --timestamp-output -n 1 echo hi | grep -c "^$stamp<stdout>: hi$")"
check "--timestamp-output --tag-output" "1" \
    "$(run --timestamp-output --tag-output -n 1 echo hi | grep -c "^$stamp\[[^]]*,0\]<stdout>: hi$")"
run --merge-stderr-to-stdout -n 1 sh -c 'echo one; echo two >&2; echo three' >"$work/out" 2>"$work/err"
check "--merge-stderr-to-stdout: both streams on stdout, in order" "one two three|" \
    "$(paste -sd' ' "$work/out")|$(cat "$work/err")"
start=$SECONDS
MPIEXEC_TIMEOUT=1 run -n 1 sleep 30 2>"$work/err"
check "MPIEXEC_TIMEOUT: the job's time limit (124)" "124 yes" \
    "$? $( ((SECONDS - start < 20)) && echo yes || echo "$((SECONDS - start)) s")"
check "--timeout wins over MPIEXEC_TIMEOUT" "ok" "$(MPIEXEC_TIMEOUT=1 run --timeout 60 -n 1 sh -c 'sleep 2; echo ok')"
MPIEXEC_TIMEOUT=soon run -n 1 true 2>"$work/err"
check "MPIEXEC_TIMEOUT not a number: an error" "1 yes" \
    "$? $(has "$work/err" "MPIEXEC_TIMEOUT=soon" && echo yes || cat "$work/err")"

# --- --bind-to socket|numa|hwthread, overloaded cores --------------------------------------------
for b in socket numa hwthread package core; do
    run --report-bindings --bind-to "$b" -n 1 true 2>"$work/err"
    check "--bind-to $b" "0 yes" "$? $(has "$work/err" "rank 0 bound to cpus" && echo yes || cat "$work/err")"
done
# This node's cores as zpmix binds to them: the distinct cpusets of as many ranks as CPUs.
cores=$(run --report-bindings --bind-to core --oversubscribe -n "$(nproc)" true 2>&1 |
    sed -n 's/.* bound to cpus \([^ ]*\) .*/\1/p' | sort -u | wc -l)
run --bind-to core --oversubscribe -n $((cores + 1)) true 2>"$work/err"
check "--bind-to core, more ranks than cores: runs, with a warning" "0 yes" \
    "$? $(has "$work/err" "warning: --bind-to core: $((cores + 1)) ranks on .*'s $cores cores: some share one (overloaded" && echo yes || cat "$work/err")"
run --bind-to core:overload-allowed --oversubscribe -n $((cores + 1)) true 2>"$work/err"
check "--bind-to core:overload-allowed: no warning" "0 " "$? $(cat "$work/err")"
run --bind-to core -n "$cores" true 2>"$work/err"
check "--bind-to core, a rank a core: no warning" "0 " "$? $(cat "$work/err")"
run --bind-to board -n 1 true 2>"$work/err"
check "--bind-to of no kind zpmix binds to: an error" "1 yes" \
    "$? $(has "$work/err" "none, core, package, socket, numa or hwthread" && echo yes || cat "$work/err")"

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

# A second Ctrl-C within 2 s kills the job at once (SIGKILL), as srun and flux do: ranks that
# ignore SIGINT are gone without the grace period's SIGKILL. (zpmix run in the background of a
# script would ignore SIGINT, as bash starts it; the second SIGINT goes once the first was taken,
# or the two would be one.)
: >"$work/out"
: >"$work/err"
env --default-signal=INT "$zpmix" run -n 2 sh -c "trap '' INT; echo up \$\$; while :; do sleep 1; done" \
    >"$work/out" 2>"$work/err" &
pid=$!
pids+=("$pid")
until_true 30 at_least "$work/out" '^up ' 2
ranks=$(sed -n 's/^up //p' "$work/out")
pids+=($ranks)
int_taken() { (( (16#$(awk '/^ShdPnd:/ {print $2}' "/proc/$1/status") & 2) == 0 )); }
kill -INT "$pid"
until_true 10 int_taken "$pid"
kill -INT "$pid"
wait "$pid"
check "a second Ctrl-C: the job killed" "137" "$?"
check "a second Ctrl-C: at once, said so" "yes" \
    "$(has "$work/err" "a second interrupt within 2 s: killing job" && ! has "$work/err" "still runs" && echo yes || cat "$work/err")"
check "a second Ctrl-C: no rank left" "" "$(for p in $ranks; do kill -0 "$p" 2>/dev/null && echo "$p"; done)"

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
# pipe_write, or anon_pipe_write.) What it holds is measured above an idle job's size in this
# build (a sanitized zpmix run is ~580 MB idle).
rss_of() {  # the summed RSS (kB) of this run's zpmix processes whose command line is "zpmix run $*"
    local pids
    pids=$(pgrep -d, -f "^$zpmix run $*\$") || return 1
    ps -o rss= -p "$pids" | awk '{s += $1} END {print s + 0}'
}
rm -f "$work/go" "$work/count"
"$zpmix" run -n 1 sleep 300 &  # not through run(): $! would be a subshell, not zpmix run
idle=$!
pids+=("$idle")
until_true 30 pgrep -x -f "sleep 300" >/dev/null  # the rank runs: the job is up
idle_rss=$(rss_of "-n 1 sleep 300")
kill -TERM "$idle"
wait "$idle"
check "a slow reader: an idle job measured first" yes "$([ -n "$idle_rss" ] && echo yes)"
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
# This run's zpmix processes only (others' may run on the machine).
rss=$(rss_of "-n 1 sh -c yes \\| head -c 100M")
check "a slow reader: its zpmix run found" yes "$([ -n "$rss" ] && echo yes)"
check "a slow reader: zpmix run holds a window, not the output" "yes" \
    "$([ $((${rss:-0} - ${idle_rss:-0})) -lt 80000 ] && echo yes || echo "$rss kB, $idle_rss kB idle")"
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
