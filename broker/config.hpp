#pragma once
// The broker's settings: built-in defaults, then a TOML file (`--config FILE` or $ZPMIX_CONFIG),
// then command-line flags. config/zpmix.toml documents every key.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/protocol/rendezvous.hpp"  // default_base_dir

namespace zpmix {

struct Config {
    // Where the broker's sockets, rendezvous file and session directories live. Empty: a private
    // directory `<base>/broker-<pid>-<n>` (an embedded broker); `zpmix broker` uses `<base>`.
    std::string run_dir;
    std::string
        tcp;  // "tcp://host:port" to also listen on tcp (clients of remote nodes); empty: off
    // tcp's CURVE keypair, "PUBLIC SECRET" in Z85; empty: made at start into <run_dir>/tcp.key.
    std::string tcp_key_file;
    std::size_t max_message_bytes = std::size_t{64} << 20;
    std::size_t max_peer_output_bytes = std::size_t{256} << 20;  // queued for one ipc peer
    // A job's output a consumer (`zpmix run`, the iof actor) may have unacknowledged before the
    // launcher stops reading the job's pipes (its ranks then wait, as under mpirun).
    std::size_t output_window_bytes = std::size_t{1} << 20;
    // Output of each job kept for PMIx_IOF_pull from tools that come later (the oldest goes).
    std::size_t iof_cache_bytes = std::size_t{1} << 20;
    // Connections on each ipc socket at once; more are turned away with a reason. 0: a quarter
    // of the file-descriptor limit (each rank has two, and the launcher three descriptors more).
    std::size_t max_connections = 0;
    // How long a client's write without PMIX_TIMEOUT waits at most.
    int client_write_timeout_ms = 30000;
    // tcp: a ZMTP PING every ivl (0: none); a peer silent for timeout is dropped.
    int tcp_heartbeat_ivl_ms = 5000;
    int tcp_heartbeat_timeout_ms = 30000;
    // tcp, before a peer authenticates (TcpGate): the time its handshake may take, and how many
    // such connections at once, in all and from one address.
    int tcp_handshake_timeout_ms = 5000;
    std::size_t tcp_max_unauthenticated = 256;
    std::size_t tcp_max_unauthenticated_per_address = 128;
    // Failed handshakes (a wrong key, refused credentials) from one address, on every tcp port of
    // the broker (its own and the tree's): this many at once, then these a minute (TcpGate).
    unsigned tcp_failed_handshakes_burst = 16;
    unsigned tcp_failed_handshakes_per_minute = 60;
    std::string log_level = "info";  // trace | debug | info | warn | error | off
    int kill_grace_ms = 2000;        // SIGTERM to SIGKILL when a job is terminated
    // How long a PMIx_Get without PMIX_TIMEOUT waits for data that may still come (0: no limit).
    int get_timeout_ms = 300000;
    // How long a group construct or destruct without PMIX_TIMEOUT waits for its members.
    int group_timeout_ms = 300000;
    int keep_finished_s = 300;  // how long `zpmix ps` lists a finished job
    // [events]
    std::size_t event_cache_size = 512;         // cache_size: events kept for replay and recovery
    int event_sndhwm = 100000;                  // sndhwm: events queued per subscriber before drops
    std::uint64_t event_test_drop_every = 0;    // test_drop_every: testing gap recovery only
    std::size_t event_max_custom_range = 4096;  // max_custom_range: processes in a custom range
    std::size_t event_replay_size = 4096;       // replay_size: events kept for monitors' --since
    // [monitor]
    bool monitor_terminate = false;   // response: "report" (false) or "terminate" a stalled process
    int monitor_time_unit_ms = 1000;  // time_unit_ms: one second of the monitor times (testing)
    // [log]
    std::string log_syslog_socket = "/dev/log";  // syslog_socket: where PMIX_LOG_SYSLOG goes
    std::string log_format = "text";  // format: the process's own log, "text" or "json" lines
    std::string log_file;             // file: append the process's log here, not to stderr
    bool log_syslog = false;          // syslog: send it to syslog_socket, not to stderr
    // peer_lines, peer_interval_ms: what one peer's messages and connections may make the broker
    // log (refusals, malformed messages): lines per interval; the rest is counted (PeerLogLimit).
    unsigned log_peer_lines = 10;
    int log_peer_interval_ms = 10000;
    // [tree]: the brokers of a job spanning nodes (actors/tree/link.hpp).
    std::uint32_t tree_radix = 8;        // radix: children per broker
    int tree_heartbeat_ms = 1000;        // heartbeat_ms
    int tree_lost_after_ms = 10000;      // lost_after_ms: a silent neighbour is lost
    int tree_boot_timeout_ms = 60000;    // boot_timeout_ms: every broker up by then
    std::string tree_tcp_if;             // tcp_if: listen on this interface / CIDR only
    std::string tree_rsh_agent = "ssh";  // rsh_agent: `AGENT HOST COMMAND...`
    std::string tree_launcher = "auto";  // launcher: auto | rsh | srun (tree/boot.hpp)
    std::string tree_zpmix;              // zpmix: the program on the nodes ("": this one's)
    std::string tree_munge_socket;       // munge_socket: munged's, for srun ("": MUNGE's default)
    // A standing tree, which a site runs as a service: hosts (broker r on hosts[r], the first the
    // root), the port each listens on for its children, the file of the tree's keypair.
    std::vector<std::string> tree_hosts;
    std::vector<std::string> tree_addresses;  // where each host's broker is reached ("": its name)
    int tree_port = 0;
    std::string tree_key_file;
    // Not file keys: this broker's place in a tree (set by `zpmix broker --parent`, or by
    // `zpmix run` for its root). tree_size 1: no tree.
    std::string node;  // the node's name as the allocation gives it; "": the hostname
    std::uint32_t tree_rank = 0, tree_size = 1;
    std::vector<std::string> tree_parent;  // the parent's addresses
    std::vector<std::string> tree_nodes;   // root: every broker's node, by rank
    std::string tree_public_key, tree_secret_key;
    std::vector<std::string> tree_broker_args;  // root: added to the other brokers' command
    bool tree_standing = false;  // this broker is a member of the standing tree of tree_hosts
    // Not a file key: whether the broker itself stops on SIGTERM/SIGINT (a standalone broker).
    bool handle_signals = false;
    // Not file keys: a broker embedded in a resource manager's process by the server library
    // (bindings/c/src/server/): it leaves the process's limits alone; its private run directory
    // goes under run_dir_base (the host's; "": this user's runtime directory); its clients may be
    // processes of client_uid too (the job's user, when the host runs as another), for whom its
    // run directory and sockets are made.
    bool hosted = false;
    std::string run_dir_base;
    std::int64_t client_uid = -1;
    // Hosted: the host's monitor upcall watches its clients (it has one, and did not ask the
    // library to, PMIX_SERVER_ENABLE_MONITORING); the broker's monitors' alerts also go to the
    // host (its notify_event).
    bool monitor_by_host = false, monitor_alerts_to_host = false;
    // Hosted: the host has a spawn upcall, which starts tools' jobs too (else the broker's own
    // launcher does).
    bool host_spawns = false;
};

struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Reads a TOML file over `into`; throws ConfigError naming the file and the bad key.
void load_config_file(const std::string &path, Config &into);
// `explicit_path` if set, else $ZPMIX_CONFIG if set, else nothing: defaults stay.
Config load_config(const std::optional<std::string> &explicit_path);

// Applies the level name to spdlog's default logger; throws ConfigError on an unknown name.
void apply_log_level(const std::string &level);

}  // namespace zpmix
