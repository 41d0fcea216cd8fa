#!/usr/bin/env bash
# test_faults.sh's "another user" cases, run as root in a private mount namespace (unshare -m)
# whose /dev/shm is a fresh tmpfs: with XDG_RUNTIME_DIR unset, this user's (root's) base
# directory is /dev/shm/zpmix-0, which uid 65534 (the attacker, setpriv) makes first and fills with
# a broker of hers (fake_broker.py) that captures what it is sent. Every case must refuse loudly,
# within its deadline, with nothing sent to her. Prints the check lines and one "row ..." line per
# case for the suite's table; exits with the number of failed checks.
# usage: another_user.sh ZPMIX FAULT_PROG WORK [MPI_PROG]
set -u
zpmix=$1
prog=$2
work=$3
mpi_prog=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
fails=0
source "$here/../multinode/common.sh"  # check
unset XDG_RUNTIME_DIR
mount -t tmpfs -o mode=1777 tmpfs /dev/shm || exit 90
base=/dev/shm/zpmix-0
att=/dev/shm/att
as_attacker() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
as_attacker mkdir -m 0755 "$att"
captured=$att/captured
attacker=
now_ms() { date +%s%3N; }
until_true() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
plant() {  # plant ARGS...: (re)starts her broker, waits until it listens
    [ -n "$attacker" ] && { kill "$attacker" 2>/dev/null; wait "$attacker" 2>/dev/null; }
    : >"$att/ready"
    # setpriv execs python: $! is her broker's pid (a function would run in a subshell of its own).
    setpriv --reuid=65534 --regid=65534 --clear-groups -- \
        /usr/bin/python3 "$here/fake_broker.py" "$@" >"$att/ready" 2>&1 &
    attacker=$!
    until_true 20 grep -q ready "$att/ready" || echo "fake broker did not start: $(cat "$att/ready")" >&2
}
nothing_sent() { [ ! -s "$captured" ] && echo yes || echo "she got: $(head -c 300 "$captured" | tr -c '[:print:]' .)"; }
refused() {  # refused STATUS ERRFILE PATTERN...: failed (not by the deadline) and said why
    [ "$1" -ne 0 ] && [ "$1" -ne 124 ] || { echo "status $1"; return; }
    local f=$2
    shift 2
    for p in "$@"; do grep -q -- "$p" "$f" || { echo "no '$p' in: $(head -3 "$f")"; return; }; done
    echo yes
}
row() { echo "row | $1 | $2 |"; }
NO_PERMS=$(printf '#include <pmix_common.h>\nPMIX_ERR_NO_PERMISSIONS\n' | cpp -P -I"$here/../../include" - 2>/dev/null | tail -1 | tr -d ' ()')

# (a) Her directory (mode 0777) and broker.json: `zpmix run` refuses, and sends her nothing.
plant "$base" 0 "$captured"
t0=$(now_ms)
ZPMIX_T=hunter2 timeout 20 "$zpmix" run -n 1 "$prog" ok >"$work/au.out" 2>"$work/au.err"
st=$?
ms=$(($(now_ms) - t0))
check "another user's directory: zpmix run refuses, naming it and her" yes "$(refused $st "$work/au.err" "$base" "uid 65534")"
check "another user's directory: refused within 10 s" yes "$([ $ms -lt 10000 ] && echo yes || echo "$ms ms")"
check "another user's directory: nothing sent to her" yes "$(nothing_sent)"
row "another user's /dev/shm/zpmix-0 with her broker.json" "zpmix run exit $st after $ms ms, nothing sent: $(grep -m1 -o 'refusing [^;]*' "$work/au.err" | head -c 90)"
echo "mpirow zpmix|another user's session directory (mode 0777) planted first|exit $st after $ms ms, refused, nothing sent"

# (b) `zpmix broker` refuses to start among her files.
timeout 20 "$zpmix" broker >"$work/aub.out" 2>"$work/aub.err"
st=$?
check "another user's directory: zpmix broker refuses" yes "$(refused $st "$work/aub.err" "$base" "65534")"

# (e) The operators' commands: their own discovery (zpmix events, zpmix ps) refuses too.
timeout 20 "$zpmix" events >"$work/aue.out" 2>"$work/aue.err"
check "another user's directory: zpmix events refuses" yes "$(refused $? "$work/aue.err" "$base")"
timeout 20 "$zpmix" ps >"$work/aup.out" 2>"$work/aup.err"
check "another user's directory: zpmix ps refuses" yes "$(refused $? "$work/aup.err" "$base")"
check "another user's directory: the commands sent her nothing" yes "$(nothing_sent)"

# (c) Our directory, but mode 0777, and her broker.json in it.
kill "$attacker"; wait "$attacker" 2>/dev/null; attacker=
rm -rf "$base" && (umask 0 && mkdir -m 0777 "$base")
plant "$base" 0 "$captured"
ZPMIX_T=hunter2 timeout 20 "$zpmix" run -n 1 "$prog" ok >"$work/auc.out" 2>"$work/auc.err"
check "a directory of ours others can write: refused" yes "$(refused $? "$work/auc.err" "$base" "0777")"
check "a directory of ours others can write: nothing sent" yes "$(nothing_sent)"
row "/dev/shm/zpmix-0 ours but mode 0777, her broker.json" "refused: $(grep -m1 -o 'refusing [^;]*' "$work/auc.err" | head -c 90)"

# (f) Our private directory, its broker.json a link to a file of hers.
rm -rf "$base" && mkdir -m 0700 "$base"
plant "$att" 0 "$captured" --socket "$att/b.sock"
printf '{"uri": "ipc://%s", "events_uri": "", "tcp_uri": "", "pid": %d, "uid": 0, "protocol": 1}\n' \
    "$att/b.sock" "$attacker" >"$att/planted.json"
ln -s "$att/planted.json" "$base/broker.json"
ZPMIX_T=hunter2 timeout 20 "$zpmix" run -n 1 "$prog" ok >"$work/auf.out" 2>"$work/auf.err"
check "a linked broker.json: refused" yes "$(refused $? "$work/auf.err" "symbolic link")"
check "a linked broker.json: nothing sent" yes "$(nothing_sent)"
rm -rf "$base"

# (d) Her socket named directly: zpmix run (--broker) and a rank (ZPMIX_URI) check who listens
# (the socket's owner, SO_PEERCRED) before they send anything.
ZPMIX_T=hunter2 timeout 20 "$zpmix" run --broker "ipc://$att/b.sock" -n 1 "$prog" ok >"$work/aud.out" 2>"$work/aud.err"
st=$?
check "her socket as --broker: refused" yes "$(refused $st "$work/aud.err" "65534")"
ZPMIX_URI="ipc://$att/b.sock" PMIX_NAMESPACE=victim PMIX_RANK=0 ZPMIX_T=hunter2 \
    timeout 20 "$prog" ok >"$work/aur.out" 2>"$work/aur.err"
check "her socket as a rank's ZPMIX_URI: PMIx_Init refuses" "init $NO_PERMS" "$(grep '^init' "$work/aur.out")"
check "her socket: nothing sent" yes "$(nothing_sent)"
row "her socket given as --broker, or as a rank's ZPMIX_URI" "zpmix run exit $st; PMIx_Init $(grep '^init' "$work/aur.out"); nothing sent"

# (g) A socket she may not open, named to her own commands: root's, in a directory only root may
# enter, and hers, of mode 0000. The kernel's refusal (EACCES) is final: `zpmix ps` and `zpmix ctl`
# say "Permission denied" at once (they retried for 10 s), as the tool API under them does.
mkdir -m 0700 /dev/shm/rootonly
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
print("ready", flush=True)
time.sleep(120)' /dev/shm/rootonly/s.sock >"$work/rootonly.out" 2>&1 &
rootonly=$!
until_true 20 grep -q ready "$work/rootonly.out"
as_attacker chmod 000 "$att/b.sock"
as_attacker mkdir -m 0700 "$att/xdg"
as_her() { setpriv --reuid=65534 --regid=65534 --clear-groups -- env XDG_RUNTIME_DIR="$att/xdg" HOME="$att" "$@"; }
denied_at_once() {  # denied_at_once STATUS MS FILE: failed, within 3 s, saying why
    [ "$1" -ne 0 ] && [ "$1" -ne 124 ] && [ "$2" -lt 3000 ] && grep -q 'Permission denied' "$3" &&
        echo yes || echo "status $1 after $2 ms: $(head -3 "$3")"
}
said=""
for target in /dev/shm/rootonly/s.sock "$att/b.sock"; do
    t0=$(now_ms)
    as_her timeout 30 "$zpmix" ps --broker "ipc://$target" >"$work/aug.ps" 2>&1
    st=$?
    ms=$(($(now_ms) - t0))
    check "a socket she may not open ($target): zpmix ps refuses at once" yes "$(denied_at_once $st $ms "$work/aug.ps")"
    said+="${said:+; }ps exit $st after $ms ms"
    t0=$(now_ms)
    as_her timeout 30 "$zpmix" ctl kill --job x --broker "ipc://$target" >"$work/aug.ctl" 2>&1
    st=$?
    ms=$(($(now_ms) - t0))
    check "a socket she may not open ($target): zpmix ctl refuses at once" yes "$(denied_at_once $st $ms "$work/aug.ctl")"
    said+=", ctl exit $st after $ms ms"
done
kill "$rootonly" 2>/dev/null
wait "$rootonly" 2>/dev/null
row "a socket the user may not open (root's in a 0700 directory; hers of mode 0000) as --broker of zpmix ps and ctl" "$said: $(grep -m1 -o 'cannot connect[^"]*' "$work/aug.ps" | head -c 90)"

# mpirun's own session directory planted by her the same way (Open MPI 4.1 keeps it in
# $TMPDIR/ompi.<host>.<uid>, here in a sticky world-writable TMPDIR of this namespace): whether it
# still runs, and what it tells.
if command -v mpirun >/dev/null && [ -n "$mpi_prog" ] && [ -x "$mpi_prog" ]; then
    host=$(hostname)
    (umask 0 && mkdir -m 1777 /dev/shm/tmp)
    as_attacker mkdir -m 0777 "/dev/shm/tmp/ompi.$host.0"
    as_attacker touch "/dev/shm/tmp/ompi.$host.0/planted"
    t0=$(now_ms)
    TMPDIR=/dev/shm/tmp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_btl=self,vader ZPMIX_T=hunter2 \
        timeout 60 mpirun --oversubscribe -n 2 "$mpi_prog" check >"$work/aum.out" 2>&1
    st=$?
    ms=$(($(now_ms) - t0))
    fate=$([ -e "/dev/shm/tmp/ompi.$host.0/planted" ] && echo "her directory used" || echo "her directory and its file deleted (by root)")
    echo "mpirow mpirun|another user's session directory (mode 0777) planted first|exit $st after $ms ms, $fate"
fi
kill "$attacker" 2>/dev/null
wait "$attacker" 2>/dev/null
check "her broker is gone" "" "$(ps -o pid= -p "$attacker")"
exit "$fails"
