#!/usr/bin/env bash
# Negotiation at Hello within a protocol version (docs/compatibility.md), with a release that
# lacks a feature played by $ZPMIX_TEST_WITHOUT_FEATURES:
#   1. a broker without "group": a client's group construct fails at once with
#      PMIX_ERR_NOT_SUPPORTED, its log line naming both releases; attribute support names no group
#      function; the rest of the job runs;
#   2. a client without "ev": the broker answers its event registration PMIX_ERR_NOT_SUPPORTED
#      instead of sending it what it cannot read, and says so in its log.
# usage: test_negotiation.sh ZPMIX COMPAT_PROG
set -u
zpmix=$1 prog=$2
export XDG_RUNTIME_DIR=$(mktemp -d)
trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
fails=0
check() {  # WHAT OUTPUT STATUS EXPECTED-LINE...
    local what=$1 out=$2 status=$3
    shift 3
    local ok=1
    [ "$status" -eq 0 ] || ok=0
    for line in "$@"; do grep -qF -- "$line" <<<"$out" || { ok=0; echo "missing: $line" >&2; }; done
    if [ $ok -eq 1 ]; then
        echo "ok: $what"
    else
        echo "FAIL: $what: status $status" >&2
        echo "$out" >&2
        fails=$((fails + 1))
    fi
}
release=$("$zpmix" --version | cut -d' ' -f2)

out=$(ZPMIX_TEST_WITHOUT_FEATURES=group timeout 30 "$zpmix" run -n 1 \
    env -u ZPMIX_TEST_WITHOUT_FEATURES "$prog" lacks-group 2>&1)
check "a broker without group" "$out" $? "lacks-group ok" \
    "'group.contribute' needs the protocol feature 'group', which the broker's release (zpmix $release) lacks; this libpmix is zpmix $release"

out=$(timeout 30 "$zpmix" run -n 1 env ZPMIX_TEST_WITHOUT_FEATURES=ev "$prog" lacks-ev 2>&1)
check "a client without ev" "$out" $? "lacks-ev ok" \
    "runs zpmix $release, which lacks 'ev' (this broker zpmix $release): refused the request with 'ev."

[ "$fails" -eq 0 ] || exit 1
echo "all checks passed"
