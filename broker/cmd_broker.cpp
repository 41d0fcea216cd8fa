// `zpmix broker`: a standalone node broker, found by `zpmix run` through <base>/broker.json.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "broker/broker.hpp"
#include "broker/commands.hpp"

namespace zpmix::cli {

namespace {

struct BrokerOptions {
    std::string run_dir, tcp, config;
    int verbose = 0, quiet = 0;
    bool daemonize = false;
    // A broker of a tree, started by its root through the rsh agent (broker/tree/boot.hpp).
    std::vector<std::string> parent;
    std::uint32_t rank = 0, size = 1, radix = 0;
    std::string node;
    bool keys_on_stdin = false;
    int heartbeat_ms = 0, lost_after_ms = 0;
};

// The allocation's CURVE keypair: two lines on stdin (public, secret), then stdin is /dev/null.
bool read_keys(Config &config) {
    std::string pub, sec;
    if (!std::getline(std::cin, pub) || !std::getline(std::cin, sec)) return false;
    config.tree_public_key = pub;
    config.tree_secret_key = sec;
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::close(null);
    return true;
}

int run_broker(const BrokerOptions &o) {
    Config config;
    try {
        config = load_config(o.config.empty() ? std::nullopt : std::optional(o.config));
        if (!o.run_dir.empty()) config.run_dir = o.run_dir;
        if (!o.tcp.empty()) config.tcp = o.tcp;
        if (!o.parent.empty()) {
            if (o.rank == 0 || o.rank >= o.size)
                throw ConfigError("--rank must be 1..size-1 with --parent");
            if (!o.keys_on_stdin || !read_keys(config))
                throw ConfigError(
                    "a broker with --parent reads the allocation's keys on stdin "
                    "(--keys-on-stdin)");
            config.tree_parent = o.parent;
            config.tree_rank = o.rank;
            config.tree_size = o.size;
            if (o.radix) config.tree_radix = o.radix;
            if (o.heartbeat_ms) config.tree_heartbeat_ms = o.heartbeat_ms;
            if (o.lost_after_ms) config.tree_lost_after_ms = o.lost_after_ms;
            config.node = o.node;
            config.run_dir.clear();  // private: `zpmix run` on this node must not take it
        } else if (config.run_dir.empty()) {
            config.run_dir = default_base_dir();
        }
        setup_logging("broker", config.log_level, o.verbose, o.quiet);
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
        broker.wait();
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
    cmd->add_option("--heartbeat-ms", o->heartbeat_ms, "Tree heartbeat period");
    cmd->add_option("--lost-after-ms", o->lost_after_ms, "A silent tree neighbour is lost after");
    cmd->callback([o, &status] { status = run_broker(*o); });
}

}  // namespace zpmix::cli
