#!/usr/bin/env bash
# The README's second command after its first: setup.sh configures the build tree again, and the
# build that follows must only build what changed. A configure that changes an object's compile
# command, or rewrites a file its build depends on (a unity source, a generated header, make's
# flags.make), recompiles it: once FindPkgConfig's first-configure-only handling of libzmq's
# `-isystem` changed ~80 of them. This configures a scratch tree twice as setup.sh does and compares.
# usage: test_setup_again.sh SOURCE_DIR
set -u
src=$(cd "$1" && pwd)
source "$src/tests/multinode/common.sh"  # check
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# setup.sh's configure step, as it is written there.
check "setup.sh configures as this test does" 1 \
    "$(grep -c '^cmake -S \. -B "\$build" "\${generator\[@\]}" -DCMAKE_BUILD_TYPE=\${CMAKE_BUILD_TYPE:-RelWithDebInfo} "\$@"$' "$src/setup.sh")"
# The first time with setup.sh's generator, then again as setup.sh does: keeping it.
configure() {
    local generator=(-G Ninja)
    [ ! -f "$work/build/CMakeCache.txt" ] || generator=()
    cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/configure.log" 2>&1
}

configure
check "first configure" 0 $? || cat "$work/configure.log" >&2
# What an object's rebuild depends on, with its modification time.
inputs() {
    (cd "$work/build" && find . \( -name flags.make -o -name 'unity_*' -o -path './generated/*' \) \
        -type f -printf '%p %T@\n' | sort)
}
cp "$work/build/compile_commands.json" "$work/commands.first"
inputs >"$work/inputs.first"
# A later configure in the same second would hide a rewritten file from the comparison of times.
start=$(date +%s)
while [ "$(date +%s)" = "$start" ]; do sleep 0.1; done

configure
check "second configure" 0 $? || cat "$work/configure.log" >&2
check "the same compile commands" "" "$(diff "$work/commands.first" "$work/build/compile_commands.json" | head -5)"
check "no flags, unity source or generated header rewritten" "" \
    "$(diff "$work/inputs.first" <(inputs) | grep '^>' | head -5)"
check "compile commands compared" yes \
    "$([ "$(grep -c '"command"' "$work/commands.first")" -gt 50 ] && echo yes)"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
