#!/usr/bin/env bash
# Installs what zpmix needs from Debian 12 and builds it into ./build (or $ZPMIX_BUILD).
# Idempotent; run as root, or as a user with sudo. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
    build-essential cmake ninja-build pkg-config git
    libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libhwloc-dev libboost-test-dev zlib1g-dev libsodium-dev
    libcli11-dev libspdlog-dev libfmt-dev libtomlplusplus-dev nlohmann-json3-dev
    python3 python3-zmq python3-msgpack
    prometheus-cpp-dev python3-prometheus-client python3-yaml
    libpmix-dev openmpi-bin libopenmpi-dev python3-pmix python3-mpi4py
    clang libclang-rt-14-dev clang-format
    iproute2 util-linux
    gdb
    slurm-wlm munge libmunge2 libmunge-dev
    man-db
)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build=${ZPMIX_BUILD:-build}
# Ninja, which compiles a library's dependents while it links (make waits for each library whole);
# a tree configured before keeps the generator it has.
generator=(-G Ninja)
[ ! -f "$build/CMakeCache.txt" ] || generator=()
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} "$@"
cmake --build "$build" -j "$(nproc)"
