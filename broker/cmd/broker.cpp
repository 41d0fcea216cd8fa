// `zpmix broker`: a standalone node broker, found by `zpmix run` through <base>/broker.json.
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/launcher/allocation.hpp"
#include "actors/runtime/curve_keys.hpp"
#include "actors/tree/munge_keys.hpp"
#include "actors/tree/topology.hpp"
#include "broker/broker.hpp"
#include "broker/cmd/commands.hpp"

namespace zpmix::cli {

namespace {

struct BrokerOptions {
    LogOptions log = cli_log_options();  // the command line's; the configuration fills the rest
    std::string run_dir, tcp, config;
    int verbose = 0, quiet = 0;
    bool daemonize = false;
    // A broker of a tree, started by its root through the rsh agent or an srun step
    // (actors/tree/boot.hpp).
    std::vector<std::string> parent;
    std::uint32_t rank = 0, size = 1, radix = 0;
    std::string node, tcp_if, munge_socket;
    bool keys_on_stdin = false;
    bool await_parent = false;  // started by srun: rank and parent come on stdin
    int heartbeat_ms = 0, lost_after_ms = 0;
};

// Lines from stdin (the boot channel), each waited for until a deadline.
class StdinLines {
  public:
    explicit StdinLines(std::chrono::milliseconds limit)
        : deadline_(std::chrono::steady_clock::now() + limit) {}
    // The next line; nullopt at the end of the input or the deadline.
    std::optional<std::string> next() {
        for (;;) {
            if (const auto nl = buf_.find('\n'); nl != std::string::npos) {
                std::string line = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                return line;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline_ - std::chrono::steady_clock::now());
            pollfd p{0, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
                return std::nullopt;
            char chunk[4096];
            const ssize_t n = ::read(0, chunk, sizeof chunk);
            if (n <= 0) return std::nullopt;
            buf_.append(chunk, static_cast<std::size_t>(n));
        }
    }

  private:
    std::chrono::steady_clock::time_point deadline_;
    std::string buf_;
};

// The boot channel is read: stdin becomes /dev/null (the step's later lines are not ours).
void close_stdin() {
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::close(null);
}

// The allocation's CURVE keypair: two lines on stdin (public, secret).
bool read_keys(StdinLines &in, Config &config) {
    auto pub = in.next();
    auto sec = pub ? in.next() : std::nullopt;
    if (!sec) return false;
    config.tree_public_key = *pub;
    config.tree_secret_key = *sec;
    return true;
}

// This node's name as the allocation gives it: --node, else Slurm's, else the hostname.
std::string own_node(const BrokerOptions &o) {
    if (!o.node.empty()) return o.node;
    if (const char *n = std::getenv("SLURMD_NODENAME")) return n;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}

// --await-parent (a broker of an srun step, tree/boot.hpp): lines "NODE RANK ADDR,ADDR... KEYS"
// until this node's, which gives its rank, its parent's addresses and the keypair (a MUNGE
// credential).
void await_parent(StdinLines &in, const BrokerOptions &o, Config &config) {
    const std::string node = own_node(o);
    while (auto line = in.next()) {
        std::istringstream words(*line);
        std::string name, addresses, keys;
        std::uint32_t rank = 0;
        if (!(words >> name >> rank >> addresses) || name != node) continue;
        if (!(words >> keys))
            throw ConfigError("the boot line for node '" + node + "' has no keys");
        try {
            tree::open_keys(keys,
                            o.munge_socket.empty() ? config.tree_munge_socket : o.munge_socket,
                            config.tree_public_key, config.tree_secret_key);
        } catch (const std::runtime_error &e) {
            throw ConfigError(std::string("the allocation's keys: ") + e.what());
        }
        config.tree_rank = rank;
        config.node = node;
        config.tree_parent.clear();
        std::istringstream list(addresses);
        for (std::string a; std::getline(list, a, ',');) config.tree_parent.push_back(a);
        return;
    }
    throw ConfigError("no rank for node '" + node + "' came on stdin within " +
                      std::to_string(config.tree_boot_timeout_ms) +
                      " ms (is it a node of the job as `zpmix run` names it?)");
}

// [tree] hosts: this broker is broker r of a standing tree, on hosts[r] (its node found among them
// by name, short or full), under its parent at the parent's host and [tree] port, with the
// tree's keypair from [tree] key_file.
void join_standing_tree(const BrokerOptions &o, Config &config) {
    if (config.tree_port == 0)
        throw ConfigError(
            "[tree] hosts needs [tree] port, where the brokers listen for their "
            "children");
    if (config.tree_key_file.empty())
        throw ConfigError("[tree] hosts needs [tree] key_file, the tree's keypair");
    const std::string me = own_node(o);
    const auto &hosts = config.tree_hosts;
    const auto it = std::find_if(hosts.begin(), hosts.end(),
                                 [&](const std::string &h) { return alloc::is_this_host(h, me); });
    if (it == hosts.end()) throw ConfigError("this node (" + me + ") is not one of [tree] hosts");
    std::optional<std::string> text;
    try {  // root's or ours, mode 0600
        text = read_trusted_file(config.tree_key_file, FileTrust{.secret = true, .root_ok = true});
    } catch (const std::exception &e) {
        throw ConfigError("[tree] key_file: " + std::string(e.what()) +
                          " (it must be mode 0600: chmod 600)");
    }
    if (!text) throw ConfigError("[tree] key_file " + config.tree_key_file + ": no such file");
    const auto keys = CurveKeypair::parse(*text);
    if (!keys)
        throw ConfigError("[tree] key_file " + config.tree_key_file +
                          ": not \"PUBLIC SECRET\" (40-character Z85 keys)");
    config.tree_public_key = keys->public_key;
    config.tree_secret_key = keys->secret_key;
    config.tree_rank = static_cast<std::uint32_t>(it - hosts.begin());
    config.tree_size = static_cast<std::uint32_t>(hosts.size());
    config.tree_nodes = hosts;
    config.node = *it;
    config.tree_standing = true;
    if (!config.tree_addresses.empty() && config.tree_addresses.size() != hosts.size())
        throw ConfigError("[tree] addresses must name one address per host, or none");
    const tree::Topology topology(config.tree_size, config.tree_radix);
    if (const auto parent = topology.parent(config.tree_rank)) {
        const auto &at = config.tree_addresses.empty() ? hosts : config.tree_addresses;
        // A parent whose name does not resolve would be waited for for ever: an error, at once
        // (a resolver not up yet at boot too: the service's restart tries again).
        addrinfo hints{}, *res = nullptr;
        hints.ai_family = AF_INET;
        hints.ai_socktype = SOCK_STREAM;
        const int e = ::getaddrinfo(at[*parent].c_str(), nullptr, &hints, &res);
        if (res) ::freeaddrinfo(res);
        if (e != 0)
            throw ConfigError("[tree] " +
                              std::string(config.tree_addresses.empty() ? "hosts" : "addresses") +
                              ": this broker's parent, '" + at[*parent] + "', does not resolve (" +
                              gai_strerror(e) + "): fix the name, or give [tree] addresses");
        config.tree_parent = {"tcp://" + at[*parent] + ":" + std::to_string(config.tree_port)};
    }
}

// systemd's readiness notification (sd_notify(3), a stable protocol): one datagram to the socket
// $NOTIFY_SOCKET names, a path or, starting with '@', an abstract name. Written here rather than
// linking libsystemd for one datagram. Nothing without $NOTIFY_SOCKET (not a Type=notify unit).
class ServiceManager {
  public:
    // Takes $NOTIFY_SOCKET out of the environment: the ranks of the broker's jobs must not
    // notify systemd for it.
    ServiceManager() {
        if (const char *s = std::getenv("NOTIFY_SOCKET"); s && (s[0] == '/' || s[0] == '@'))
            socket_ = s;
        ::unsetenv("NOTIFY_SOCKET");
    }
    void notify(const std::string &state) const {
        if (socket_.empty()) return;
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        if (socket_.size() >= sizeof addr.sun_path) {
            spdlog::warn("$NOTIFY_SOCKET is too long for a unix socket: systemd not told {}",
                         state);
            return;
        }
        std::memcpy(addr.sun_path, socket_.data(), socket_.size());
        if (socket_[0] == '@') addr.sun_path[0] = '\0';
        const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_.size());
        if (fd < 0 || ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                               reinterpret_cast<const sockaddr *>(&addr), len) < 0)
            spdlog::warn("cannot tell systemd {} through {}: {}", state, socket_,
                         std::strerror(errno));
        if (fd >= 0) ::close(fd);
    }

  private:
    std::string socket_;
};

int run_broker(const BrokerOptions &o) {
    const ServiceManager service_manager;
    Config config;
    try {
        config = load_config(o.config.empty() ? std::nullopt : std::optional(o.config));
        if (!o.run_dir.empty()) config.run_dir = o.run_dir;
        if (!o.tcp.empty()) config.tcp = o.tcp;
        if (!o.parent.empty() || o.await_parent) {
            if (!o.await_parent && (o.rank == 0 || o.rank >= o.size))
                throw ConfigError("--rank must be 1..size-1 with --parent");
            StdinLines in(std::chrono::milliseconds(config.tree_boot_timeout_ms));
            if (!o.await_parent && (!o.keys_on_stdin || !read_keys(in, config)))
                throw ConfigError(
                    "a broker of a tree reads the allocation's keys on stdin "
                    "(--keys-on-stdin)");
            if (o.await_parent) {
                await_parent(in, o, config);
                if (config.tree_rank == 0 || config.tree_rank >= o.size)
                    throw ConfigError("the rank given on stdin is not in 1..size-1");
            } else {
                config.tree_parent = o.parent;
                config.tree_rank = o.rank;
                config.node = o.node;
            }
            close_stdin();
            config.tree_size = o.size;
            if (o.radix) config.tree_radix = o.radix;
            if (o.heartbeat_ms) config.tree_heartbeat_ms = o.heartbeat_ms;
            if (o.lost_after_ms) config.tree_lost_after_ms = o.lost_after_ms;
            if (!o.tcp_if.empty()) config.tree_tcp_if = o.tcp_if;
            config.run_dir.clear();  // private: `zpmix run` on this node must not take it
        } else {
            if (config.run_dir.empty()) config.run_dir = default_base_dir();
            if (!config.tree_hosts.empty()) join_standing_tree(o, config);
        }
        setup_logging("broker", config.log_level, o.verbose, o.quiet, log_options(config, o.log));
    } catch (const std::exception &e) {
        std::cerr << "zpmix broker: " << e.what() << "\n";
        return 1;
    }
    config.handle_signals = true;

    // --daemonize: the parent exits once the child broker is listening (or reports why not).
    int ready[2] = {-1, -1};
    if (o.daemonize) {
        if (::pipe2(ready, O_CLOEXEC) != 0) return perror("pipe"), 1;
        const pid_t pid = ::fork();
        if (pid < 0) return perror("fork"), 1;
        if (pid > 0) {
            ::close(ready[1]);
            char c = 0;
            const bool ok = ::read(ready[0], &c, 1) == 1 && c == '1';
            return ok ? 0 : 1;
        }
        ::close(ready[0]);
        ::setsid();
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::close(null);
    }
    try {
        Broker broker(config);
        broker.start();
        if (o.daemonize) {
            [[maybe_unused]] auto n = ::write(ready[1], "1", 1);
            ::close(ready[1]);
        }
        service_manager.notify(
            fmt::format("READY=1\nMAINPID={}\nSTATUS=serving in {}", ::getpid(), config.run_dir));
        broker.wait();
        service_manager.notify("STOPPING=1");
        const char *again = config.tree_standing ? " (start it again to rejoin the tree)" : "";
        if (broker.lost_parent()) {
            std::cerr << "zpmix broker: lost its parent broker, and stopped with its ranks" << again
                      << "\n";
            return 1;
        }
        if (broker.parent_stopped() && config.tree_standing)
            std::cerr << "zpmix broker: its parent broker stopped, and so did it" << again << "\n";
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "zpmix broker: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace

void add_broker_command(CLI::App &app, int &status) {
    auto o = std::make_shared<BrokerOptions>();
    auto *cmd = app.add_subcommand("broker", "Run this node's broker in the foreground");
    cmd->add_option("--run-dir", o->run_dir,
                    "Directory for the sockets and broker.json (default: $XDG_RUNTIME_DIR/zpmix "
                    "or /dev/shm/zpmix-<uid> or /tmp/zpmix-<uid>)");
    cmd->add_option("--tcp", o->tcp, "Also listen on tcp://host:port (remote clients)");
    cmd->add_option("--config", o->config, "TOML configuration file (default: $ZPMIX_CONFIG)");
    cmd->add_flag("-v,--verbose", o->verbose, "More log output (repeatable)");
    cmd->add_flag("-q,--quiet", o->quiet, "Less log output (repeatable)");
    add_log_options(*cmd, o->log);
    cmd->add_flag("--daemonize", o->daemonize, "Detach once listening");
    cmd->add_option("--parent", o->parent,
                    "Join a broker tree under the broker at these addresses (the first that "
                    "answers; comma-separated), as a broker `zpmix run` starts on another node")
        ->delimiter(',');
    cmd->add_option("--rank", o->rank, "This broker's rank in the tree");
    cmd->add_option("--size", o->size, "The number of brokers in the tree");
    cmd->add_option("--radix", o->radix, "Children per broker in the tree");
    cmd->add_option("--node", o->node, "This node's name as the allocation gives it");
    cmd->add_flag("--keys-on-stdin", o->keys_on_stdin,
                  "Read the allocation's CURVE keypair from stdin (two lines: public, secret)");
    cmd->add_flag("--await-parent", o->await_parent,
                  "Started with the other brokers by srun: read lines `NODE RANK "
                  "PARENT-ADDRESSES KEYS` on stdin until this node's (--node, else "
                  "SLURMD_NODENAME, else the hostname); KEYS is a MUNGE credential");
    cmd->add_option("--heartbeat-ms", o->heartbeat_ms, "Tree heartbeat period");
    cmd->add_option("--tcp-if", o->tcp_if, "Listen for child brokers on this interface / CIDR");
    cmd->add_option("--munge-socket", o->munge_socket,
                    "munged's socket, to open the keys (--await-parent; default: MUNGE's)");
    cmd->add_option("--lost-after-ms", o->lost_after_ms, "A silent tree neighbour is lost after");
    cmd->callback([o, &status] { status = run_broker(*o); });
}

}  // namespace zpmix::cli
