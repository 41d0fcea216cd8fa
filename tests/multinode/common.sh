# Assertions shared by the namespace-node tests.
fails=0
check() {  # check DESCRIPTION EXPECTED ACTUAL; false when it failed
    if [ "$2" == "$3" ]; then
        echo "ok: $1"
    else
        echo "FAIL: $1: expected [$2], got [$3]" >&2
        fails=$((fails + 1))
        return 1
    fi
}
# wait_for_file FILE SECONDS: polls until FILE exists; fails after the deadline.
wait_for_file() {
    local deadline=$((SECONDS + $2))
    until [ -s "$1" ]; do
        ((SECONDS < deadline)) || return 1
        sleep 0.02
    done
}
