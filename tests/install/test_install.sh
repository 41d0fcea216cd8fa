#!/usr/bin/env bash
# `cmake --install --prefix P` gives a working zpmix under P: the installed zpmixcc and the
# installed zpmix.pc (pkg-config) build a PMIx program that runs under the installed `zpmix run`,
# against the installed libpmix; and a prefix moved elsewhere still works (every path is relative).
# usage: test_install.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR=$work/xdg
mkdir -p "$XDG_RUNTIME_DIR"
source "$src/tests/multinode/common.sh"  # check
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name libpmix.so.2 | head -1)")
for f in bin/zpmix bin/zpmixcc include/pmix.h include/pmix_common.h; do
    check "installed: $f" yes "$([ -e "$prefix/$f" ] && echo yes)"
done
check "installed: libpmix.so.2" yes "$([ -e "$libdir/libpmix.so.2" ] && echo yes)"
pcdir=$(dirname "$libdir")/pkgconfig
check "installed: zpmix.pc" yes "$([ -e "$pcdir/zpmix.pc" ] && echo yes)"
check "the library in the multiarch directory" "$prefix/lib/$(gcc -print-multiarch)/zpmix" "$libdir"
# Every command has its man page, and man renders each without a warning.
for page in zpmix zpmix-run zpmix-broker zpmix-ctl zpmix-preempt zpmix-ps zpmix-events \
    zpmix-notify zpmix-pset zpmix-info zpmix-release zpmix-exporter zpmix-keygen zpmixcc; do
    f=$prefix/share/man/man1/$page.1.gz
    check "installed: man page $page" yes "$([ -e "$f" ] && echo yes)"
    out=$(LC_ALL=C MANWIDTH=80 man -l --warnings "$f" 2>"$work/man.err")
    check "man -l $page renders without warnings" "" "$(cat "$work/man.err")"
    check "man -l $page: its NAME" 1 "$(grep -c "^ *$page - " <<<"$out")"
done
for cmd in $("$prefix/bin/zpmix" --help | awk '/^Subcommands:/ {on=1; next} on && NF {print $1}'); do
    check "zpmix $cmd has a man page" yes "$([ -e "$prefix/share/man/man1/zpmix-$cmd.1.gz" ] && echo yes)"
done
check "nothing points into the build tree" "" "$(grep -rl -- "$build" "$prefix/bin/zpmixcc" "$pcdir/zpmix.pc")"
check "the configuration file" yes "$([ -e "$prefix/etc/zpmix/zpmix.toml" ] && echo yes)"
check "the systemd unit names the installed zpmix" \
    "ExecStart=$prefix/bin/zpmix broker --config $prefix/etc/zpmix/zpmix.toml" \
    "$(grep ^ExecStart= "$prefix/lib/systemd/user/zpmix-broker.service")"

# run_here PREFIX LIBDIR: builds wireup both ways with what PREFIX holds and runs it there.
run_here() {
    local p=$1 l=$2 where=$3
    "$p/bin/zpmixcc" "$src/bindings/c/examples/wireup.c" -o "$work/wireup_cc" 2>"$work/cc.err"
    check "$where: zpmixcc builds" 0 "$?"
    # shellcheck disable=SC2046
    cc "$src/bindings/c/examples/wireup.c" -o "$work/wireup_pc" \
        $(PKG_CONFIG_PATH=$(dirname "$l")/pkgconfig pkg-config --cflags --libs zpmix) 2>"$work/pc.err"
    check "$where: pkg-config builds" 0 "$?"
    for prog in wireup_cc wireup_pc; do
        check "$where: $prog uses the installed libpmix" "$(readlink -f "$l/libpmix.so.2")" \
            "$(readlink -f "$(ldd "$work/$prog" | awk '/libpmix/ {print $3}')")"
        timeout 60 "$p/bin/zpmix" run -n 3 "$work/$prog" >"$work/out" 2>"$work/err"
        check "$where: $prog runs under the installed zpmix run" 0 "$?"
        check "$where: $prog: every rank checked every card" 3 "$(grep -c ": ok, checked 3 cards" "$work/out")"
    done
}
run_here "$prefix" "$libdir" "prefix"
mv "$prefix" "$work/moved"
run_here "$work/moved" "${libdir/$prefix/$work/moved}" "moved prefix"
exit $((fails > 0))
