#!/usr/bin/env bash
# The README's examples run as written. Every command line of the README's ```sh blocks is in
# the table below, with what this test does with it: "run" runs it verbatim (in order, in one
# shell, in a scratch directory where build/ is the build tree, app.c is the example program,
# setup.sh is a stand-in (setup itself is CI's first step), the standalone broker of "zpmix
# broker &" is this test's own); "listen" runs it in the background and checks what it prints;
# anything else says why it is not run here, and which test covers it. A README line missing from
# the table, or a table line gone from the README, fails the test: the README cannot change
# without it. Then the README's event schema is checked against an event the broker sends.
# usage: test_readme.sh BUILD_DIR SOURCE_DIR
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
source "$src/tests/multinode/common.sh"  # check, wait_for_file

declare -A what=(
    ['./setup.sh && build/bin/zpmix run -n 4 build/bin/wireup']=run
    ['./setup.sh && ctest --test-dir build --output-on-failure -j "$(nproc)"']="the suite itself"
    ['cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel -j "$(nproc)"']="CI's Release build"
    ['cmake --install build-rel --prefix "$HOME/zpmix"   # bin/zpmix, bin/zpmixcc, lib/x86_64-linux-gnu/zpmix/libpmix.so.2, include/, lib/x86_64-linux-gnu/pkgconfig/zpmix.pc, etc/zpmix/zpmix.toml']="tests/install"
    ['(cd build-rel && cpack -G DEB)                     # zpmix_<version>_amd64.deb and zpmix-dev_<version>_amd64.deb']="CI's package step (tests/install/test_package.sh)"
    ['build/bin/zpmix run -n 8 ./app            # embedded broker, 8 ranks on this node']=run
    ['build/bin/zpmix run -n 4 --tag-output --timeout 60 --bind-to core ./app']=run
    ['build/bin/zpmix run -np 2 ./app : -np 2 ./app   # MPMD, in mpirun'"'"'s spelling: one job of 4 ranks']=run
    ['build/bin/zpmix broker &                   # a standalone broker; `zpmix run` then uses it']=run
    ['build/bin/zpmixcc app.c -o app             # compile a PMIx program against zpmix']=run
    ['pkg-config --cflags --libs zpmix           # or the pkg-config file (PKG_CONFIG_PATH=<prefix>/lib/x86_64-linux-gnu/pkgconfig)']=run
    ['build/bin/zpmix run -H node1:4,node2:4 ./app                  # over ssh (the default agent)']="tests/multinode (namespace nodes)"
    ['build/bin/zpmix run --hostfile hosts -N 2 ./app               # Open MPI'"'"'s hostfile format']="tests/multinode"
    ['build/bin/zpmix run --rsh-agent "ssh -o BatchMode=yes" -H n1,n2 ./app']="tests/multinode"
    ['salloc -N 4 build/bin/zpmix run ./app                          # Slurm: its nodes, slots and srun']="tests/multinode/test_slurm.sh"
    ['LD_LIBRARY_PATH=$(pkg-config --variable=libdir zpmix) mpirun -x LD_LIBRARY_PATH -n 4 ./mpi_program']="tests/server/test_server_mpirun.cpp, tests/multinode/test_server_mpirun.sh"
    ['salloc -N 2 --ntasks-per-node=4 build/bin/zpmix run ./app      # 8 ranks, brokers started by srun']="tests/multinode/test_slurm.sh"
    ['sbatch -N 8 --ntasks-per-node=2 --wrap "$PWD/build/bin/zpmix run $PWD/app"  # from the batch node']="tests/multinode/test_slurm.sh"
    ['zpmix keygen /etc/zpmix/tree.key     # once; the same file (mode 0600) on every node']="tests/multinode/test_standing.sh (a site's paths)"
    ["printf '[tree]\\nhosts = [\"n1\", \"n2\", \"n3\"]\\nport = 7100\\nkey_file = \"/etc/zpmix/tree.key\"\\n' >/etc/zpmix/zpmix.toml"]="tests/multinode/test_standing.sh"
    ['ZPMIX_CONFIG=/etc/zpmix/zpmix.toml zpmix broker          # on each node (systemd: Restart=always)']="tests/multinode/test_standing.sh"
    ['ZPMIX_CONFIG=/etc/zpmix/zpmix.toml zpmix run -H n1:4,n2:4 ./app   # on any of them']="tests/multinode/test_standing.sh"
    ['tests/bench/run --write     # zpmix and OpenPMIx (under Open MPI'"'"'s mpirun), same run']="minutes long; rewrites RESULTS.md"
    ['zpmix events --json                       # one JSON object per event (--topic PREFIX to filter)']=listen
    ['zpmix events --json --since 120 --epoch 5f0c...   # what came after #120 of that epoch, then live']="an example epoch; tests/monitor/test_monitor (--since)"
    ['zpmix notify --code -1000 --range global --info reason=maintenance   # inject one']=run
)

mapfile -t lines < <(awk '/^```sh/ {on = 1; next} /^```/ {on = 0} on && NF' "$src/README.md")
declare -A in_readme=()
for l in "${lines[@]}"; do
    in_readme[$l]=1
    check "README line known to this test: $l" yes "$([ -n "${what[$l]+x}" ] && echo yes)"
done
for l in "${!what[@]}"; do
    check "table line still in the README: $l" yes "$([ -n "${in_readme[$l]+x}" ] && echo yes)"
done

work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
export XDG_RUNTIME_DIR=$work/xdg
mkdir -p "$XDG_RUNTIME_DIR"
cd "$work" || exit 1
ln -s "$build" build
printf '#!/bin/sh\nexit 0\n' >setup.sh
chmod +x setup.sh
cp "$src/bindings/c/examples/wireup.c" app.c
build/bin/zpmixcc app.c -o app || exit 1
export PATH=$build/bin:$PATH PKG_CONFIG_PATH=$build/lib/pkgconfig

declare -A out_of=()
n=0
for l in "${lines[@]}"; do
    n=$((n + 1))
    out_of[$l]=$work/out$n
    case ${what[$l]-} in
    run)
        if [[ $l =~ [^\&]\&[[:space:]]+(#|$) ]]; then
            # A background job of the README: this shell's, so that it is ended at the end.
            eval "$l" >"$work/out$n" 2>&1
            pids+=("$!")
            wait_for_file "$XDG_RUNTIME_DIR/zpmix/broker.json" 30
            check "README: $l: it listens" 0 "$?"
        elif [ -n "${listener-}" ]; then
            # What a listener started before this line should see: run it as written until the
            # listener has printed something (it may not have subscribed yet), within 30 s.
            deadline=$((SECONDS + 30))
            until [ -s "$work/listen.out" ] || ((SECONDS > deadline)); do
                timeout 60 bash -c "$l" >"$work/out$n" 2>"$work/err$n"
                check "README: $l" 0 "$?"
                wait_for_file "$work/listen.out" 1
            done
        else
            timeout 120 bash -c "$l" >"$work/out$n" 2>"$work/err$n"
            status=$?
            check "README: $l" 0 "$status"
            [ "$status" -eq 0 ] || cat "$work/err$n" >&2
        fi
        ;;
    listen)
        # exec: the background job is the command itself, which cleanup then ends.
        eval "exec $l" >"$work/listen.out" 2>"$work/listen.err" &
        pids+=("$!")
        listener=$!
        ;;
    esac
done
main='build/bin/zpmix run -n 8 ./app            # embedded broker, 8 ranks on this node'
check "zpmix run -n 8 ./app: every rank checked every card" 8 \
    "$(grep -c ': ok, checked 8 cards' "${out_of[$main]}")"
check "zpmix run -np 2 ./app : -np 2 ./app: one job of 4, every rank checked every card" 4 \
    "$(grep -c ': ok, checked 4 cards' "${out_of['build/bin/zpmix run -np 2 ./app : -np 2 ./app   # MPMD, in mpirun'"'"'s spelling: one job of 4 ranks']}")"
check "zpmix run -n 4 build/bin/wireup: every rank checked every card" 4 \
    "$(grep -c ': ok, checked 4 cards' "${out_of['./setup.sh && build/bin/zpmix run -n 4 build/bin/wireup']}")"
check "pkg-config names libpmix" yes \
    "$(grep -q -- '-lpmix' "${out_of['pkg-config --cflags --libs zpmix           # or the pkg-config file (PKG_CONFIG_PATH=<prefix>/lib/x86_64-linux-gnu/pkgconfig)']}" && echo yes)"
check "zpmix events --json printed the injected event" yes \
    "$(grep -q -- '-1000' "$work/listen.out" && echo yes || cat "$work/listen.out" "$work/listen.err")"

# The event schema the README describes is what the broker publishes.
/usr/bin/python3 "$src/tests/docs/readme_schema.py" "$src/README.md" "$XDG_RUNTIME_DIR/zpmix" \
    "$build/bin/zpmix"
check "README: the event schema is the broker's" 0 "$?"
exit $((fails > 0))
