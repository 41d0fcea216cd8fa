# Shared by the standing-tree tests (sourced after netns.sh and common.sh, with $zpmix and $work
# set): the tree's configuration, its brokers started on their nodes, and waits on their logs.
declare -A bpid  # each node's broker, as start() started it

# standing_conf A B C: $work/zpmix.toml (its path in $conf) for a chain A (the root), B, C with
# quick heartbeats, and the key in $work/tree.key (made first).
standing_conf() {
    conf=$work/zpmix.toml
    cat >"$conf" <<CONF
[tree]
radix = 1
hosts = ["$1", "$2", "$3"]
addresses = ["$(netns_addr "$1")", "$(netns_addr "$2")", "$(netns_addr "$3")"]
port = 7100
key_file = "$work/tree.key"
heartbeat_ms = 100
lost_after_ms = 1500
CONF
}
# until_log NODE SECONDS PATTERN [COUNT]: until NODE's broker log has COUNT (1) lines matching.
until_log() {
    local n deadline=$((SECONDS + $2))
    until n=$(grep -c -- "$3" "$work/$1.log" 2>/dev/null); [ "${n:-0}" -ge "${4:-1}" ]; do
        ((SECONDS < deadline)) || { echo "no '$3' in $1's log:" >&2; cat "$work/$1.log" >&2; return 1; }
        sleep 0.02
    done
}
# start NODE: its broker, in the background, logging to $work/NODE.log.
start() {
    XDG_RUNTIME_DIR=$work/xdg.$1 "$ZPMIX_NETNS_AGENT" "$1" "$zpmix" broker --config "$conf" \
        --run-dir "$work/xdg.$1/zpmix" 2>>"$work/$1.log" &
    bpid[$1]=$!
}
# on NODE CMD...: CMD on NODE, finding that node's broker.
on() {
    local node=$1
    shift
    XDG_RUNTIME_DIR=$work/xdg.$node timeout 60 "$ZPMIX_NETNS_AGENT" "$node" "$@"
}
