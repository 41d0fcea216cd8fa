#!/usr/bin/env bash
# The broker tree at scale: 64, then 256 brokers started on this machine (tests/tree/local_agent),
# each with one rank, fence (data-less and collecting) across all of them and leave nothing behind.
# usage: test_scale.sh ZPMIX PMIX_BENCH
set -u
zpmix=$1 bench=$2
here=$(cd "$(dirname "$0")" && pwd)
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
fails=0
for n in 64 256; do
    hosts=$(seq -s, -f "n%g" 1 "$n")
    out=$(timeout 240 "$zpmix" run -q --rsh-agent "$here/local_agent" -H "$hosts" -n "$n" "$bench" 20 2>&1)
    status=$?
    # A broker that fails while stopping says so at level critical.
    if [ $status -ne 0 ] || ! grep -q '^fence_collect_4k_median ' <<<"$out" || grep -q critical <<<"$out"; then
        echo "FAIL: $n brokers: status $status" >&2
        echo "$out" >&2
        fails=$((fails + 1))
    else
        echo "ok: $n brokers: $(grep -E '^fence_(barrier|collect_4k)_median' <<<"$out" | tr '\n' ' ')"
    fi
    left=$(ls "$XDG_RUNTIME_DIR/zpmix" 2>/dev/null | grep '^broker-')
    [ -z "$left" ] || { echo "FAIL: $n brokers: left $left" >&2; fails=$((fails + 1)); }
done
[ "$fails" -eq 0 ] || exit 1
echo "all checks passed"
