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
};

int run_broker(const BrokerOptions &o) {
    Config config;
    try {
        config = load_config(o.config.empty() ? std::nullopt : std::optional(o.config));
        if (!o.run_dir.empty()) config.run_dir = o.run_dir;
        if (!o.tcp.empty()) config.tcp = o.tcp;
        if (config.run_dir.empty()) config.run_dir = default_base_dir();
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
    cmd->callback([o, &status] { status = run_broker(*o); });
}

}  // namespace zpmix::cli
