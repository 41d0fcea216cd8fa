#!/usr/bin/env bash
# The Debian packages (`cpack -G DEB`) as a user gets them: their names, split and files (stripped,
# man pages compressed, the copyright file, the configuration file as a conffile, the library in
# the multiarch directory); installable here (dpkg's dependency and conflict checks against this
# machine's packages, in --dry-run); installed by dpkg into a fresh root of its own; then, in a
# mount namespace where that root's /usr and /etc lie over the machine's, the README's main job
# built with the installed zpmixcc and run by the installed /usr/bin/zpmix, at the packaged paths.
# .ci/run's "Debian package" stage runs it after cpack; as root (else a user namespace).
# usage: test_package.sh SOURCE_DIR RUNTIME_DEB DEV_DEB
set -u
src=$1
runtime=$(readlink -f "$2")
dev=$(readlink -f "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$src/tests/multinode/common.sh"  # check
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
libdir=/usr/lib/$arch/zpmix

check "runtime package: zpmix" zpmix "$(dpkg-deb -f "$runtime" Package)"
check "development package: zpmix-dev" zpmix-dev "$(dpkg-deb -f "$dev" Package)"
version=$(dpkg-deb -f "$runtime" Version)
check "zpmix-dev depends on its zpmix" yes \
    "$(dpkg-deb -f "$dev" Depends | grep -q "zpmix (= $version)" && echo yes)"
check "zpmix depends on the libraries it links (shlibdeps)" yes \
    "$(dpkg-deb -f "$runtime" Depends | grep -q libzmq5 && echo yes)"
runtime_files=$(dpkg-deb -c "$runtime" | awk '{print $6}')
dev_files=$(dpkg-deb -c "$dev" | awk '{print $6}')
for f in ./usr/bin/zpmix ".$libdir/libpmix.so.2" ./etc/zpmix/zpmix.toml \
    ./usr/lib/systemd/user/zpmix-broker.service ./usr/share/doc/zpmix/copyright \
    ./usr/share/man/man1/zpmix-run.1.gz ./usr/share/man/man1/zpmix.1.gz \
    ./usr/share/zpmix/monitoring/zpmix-dashboard.json ./usr/share/zpmix/monitoring/zpmix-alerts.yml; do
    check "zpmix has $f" yes "$(grep -qx -- "$f" <<<"$runtime_files" && echo yes)"
done
for f in ./usr/bin/zpmixcc ./usr/include/pmix.h ./usr/include/pmix_server.h ".$libdir/libpmix.so" \
    "./usr/lib/$arch/pkgconfig/zpmix.pc" ./usr/share/man/man1/zpmixcc.1.gz \
    ./usr/share/doc/zpmix-dev/copyright; do
    check "zpmix-dev has $f" yes "$(grep -qx -- "$f" <<<"$dev_files" && echo yes)"
done
check "no header or libpmix.so in zpmix" "" "$(grep -E '\.h$|libpmix\.so$|zpmixcc' <<<"$runtime_files")"
check "no uncompressed man page" "" "$(grep -E '/man/.*\.[0-9]$' <<<"$runtime_files$dev_files")"
check "nothing in the machine's own libpmix.so.2 place" "" \
    "$(grep -x -- "./usr/lib/$arch/libpmix.so.2" <<<"$runtime_files")"
mkdir -p "$work/ctl"
dpkg-deb -e "$runtime" "$work/ctl"
check "the configuration file is a conffile" /etc/zpmix/zpmix.toml "$(cat "$work/ctl/conffiles")"
mkdir -p "$work/x"
dpkg-deb -x "$runtime" "$work/x"
for f in usr/bin/zpmix "${libdir#/}/libpmix.so.2"; do
    check "$f is stripped (no symbol table)" "" "$(readelf -S "$work/x/$f" | grep -o '\.symtab')"
done
echo "sizes: $(du -b "$runtime" "$dev" | awk '{printf "%s %d kB; ", $2, $1 / 1024}')"

# dpkg's own checks against this machine: dependencies there, no file of another package taken.
if [ "$(id -u)" -eq 0 ]; then
    dpkg --dry-run -i "$runtime" "$dev" >"$work/dry" 2>&1
    check "dpkg --dry-run -i: installable here" 0 "$?" || cat "$work/dry"
fi

# A fresh root with a database of its own: dpkg installs both packages there (the dependencies
# are this machine's, checked above: the fresh root has none).
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg --root="$root" --force-not-root --force-depends --force-script-chrootless \
    -i "$runtime" "$dev" >"$work/dpkg.log" 2>&1
check "dpkg installs both into a fresh root" 0 "$?" || cat "$work/dpkg.log"
check "dpkg lists them as installed" "install ok installed
install ok installed" \
    "$(dpkg --root="$root" -s zpmix zpmix-dev 2>/dev/null | sed -n 's/^Status: //p')"

# The installed root's /usr and /etc over the machine's, in a mount namespace of this script's:
# /usr/bin/zpmix, /usr/bin/zpmixcc, the headers and the library are the installed ones.
cat >"$work/inside.sh" <<INSIDE
set -u
source "$src/tests/multinode/common.sh"
mount -t overlay overlay -o "lowerdir=$root/usr:/usr" /usr || exit 99
mount -t overlay overlay -o "lowerdir=$root/etc:/etc" /etc || exit 99
export XDG_RUNTIME_DIR=$work/xdg
mkdir -m 700 -p "\$XDG_RUNTIME_DIR"
cd "$work"
# zpmixcc and zpmix.pc name paths relative to where they are (/usr/bin/../include): resolved here.
compile=\$(/usr/bin/zpmixcc --showme:compile)
check "zpmixcc --showme:compile: the installed headers" /usr/include "\$(readlink -f "\${compile#-I}")"
link=\$(/usr/bin/zpmixcc --showme:link)
check "zpmixcc --showme:link: the installed library" "$libdir -lpmix" \
    "\$(readlink -f "\$(sed 's/^-L\([^ ]*\) .*/\1/' <<<"\$link")") \${link##* }"
check "zpmixcc --showme: the command" yes \
    "\$(CC=cc /usr/bin/zpmixcc --showme a.c | grep -q '^cc -I.* a.c -L.* -lpmix\$' && echo yes)"
/usr/bin/zpmixcc "$src/bindings/c/examples/wireup.c" -o wireup
check "the installed zpmixcc builds the main job" 0 "\$?"
check "it links the installed libpmix" "$(readlink -f "$root$libdir/libpmix.so.2" | sed "s|^$root||")" \
    "\$(readlink -f "\$(ldd ./wireup | awk '/libpmix/ {print \$3}')")"
pc=\$(pkg-config --cflags zpmix | tr -d " ")
check "pkg-config finds zpmix.pc: the installed headers" /usr/include "\$(readlink -f "\${pc#-I}")"
check "the installed zpmix links the installed libpmix" "$(readlink -f "$root$libdir/libpmix.so.2" | sed "s|^$root||")" \
    "\$(readlink -f "\$(ldd /usr/bin/zpmix | awk '/libpmix/ {print \$3}')")"
timeout 60 /usr/bin/zpmix run -n 4 ./wireup >out 2>err
check "zpmix run -n 4 wireup, as installed" 0 "\$?" || cat err
check "every rank checked every card" 4 "\$(grep -c ": ok, checked 4 cards" out)"
check "man finds zpmix-run(1)" yes "\$(man -w zpmix-run 2>/dev/null | grep -q zpmix-run.1.gz && echo yes)"
man_text=\$(LC_ALL=C MANWIDTH=200 man zpmix-run 2>/dev/null)
missing=""
for opt in \$(/usr/bin/zpmix run --help | grep -oE '^ +(-[a-zA-Z],)*--?[a-z][a-z-]*' | tr -d ' ' | tr ',' ' '); do
    grep -qF -- "\$opt" <<<"\$man_text" || missing="\$missing \$opt"
done
check "zpmix-run(1) has every option of zpmix run --help" "" "\$missing"
check "the unit runs the installed zpmix with the installed configuration" \
    "ExecStart=/usr/bin/zpmix broker --config /etc/zpmix/zpmix.toml" \
    "\$(grep ^ExecStart= /usr/lib/systemd/user/zpmix-broker.service)"
exit \$((fails > 0))
INSIDE
if [ "$(id -u)" -eq 0 ]; then
    unshare --mount --propagation private bash "$work/inside.sh"
else
    unshare --user --map-root-user --mount bash "$work/inside.sh"
fi
rc=$?
check "the installed packages run the main job (in the namespace)" 0 "$rc"
exit $((fails > 0))
