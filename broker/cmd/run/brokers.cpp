#include "broker/cmd/run/brokers.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <optional>

#include <spdlog/spdlog.h>
#include <zmq.h>

#include "actors/protocol/rendezvous.hpp"
#include "actors/tree/boot.hpp"

namespace zpmix::cli::run {

namespace {

// Whether `program` is an executable file in a directory of $PATH.
bool on_path(const std::string &program) {
    const char *path = std::getenv("PATH");
    std::string_view dirs = path ? path : "";
    while (!dirs.empty()) {
        const auto colon = dirs.find(':');
        const std::string dir(dirs.substr(0, colon));
        dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
        if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    }
    return false;
}

// The program the other nodes run as their broker: the configured one, else this one's path.
std::string zpmix_program(const Config &config) {
    if (!config.tree_zpmix.empty()) return config.tree_zpmix;
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "zpmix";
}

// The root of a tree of brokers, one per node of the job, for this job alone.
alloc::Result<JobBroker> start_tree(const RunOptions &o, const Spread &spread) {
    JobBroker b;
    try {
        Config config = load_config(std::nullopt);
        config.run_dir.clear();
        config.node = spread.brokers[0];
        config.tree_size = static_cast<std::uint32_t>(spread.brokers.size());
        config.tree_nodes = spread.brokers;
        if (!o.rsh_agent.empty()) config.tree_rsh_agent = o.rsh_agent;
        std::string error;
        config.tree_launcher =
            tree::resolve_launcher(o.launcher.empty() ? config.tree_launcher : o.launcher,
                                   std::getenv("SLURM_JOB_ID") != nullptr, on_path("srun"), error);
        if (!error.empty()) return {{}, error};
        spdlog::debug("brokers started by {}", config.tree_launcher);
        if (!o.tcp_if.empty()) config.tree_tcp_if = o.tcp_if;
        config.tree_zpmix = zpmix_program(config);
        char pub[41] = {}, sec[41] = {};
        if (zmq_curve_keypair(pub, sec) != 0)
            return {
                {},
                "cannot make the brokers' CURVE keys: " + std::string(zmq_strerror(zmq_errno()))};
        config.tree_public_key = pub;
        config.tree_secret_key = sec;
        config.tree_broker_args = {"--heartbeat-ms", std::to_string(config.tree_heartbeat_ms),
                                   "--lost-after-ms", std::to_string(config.tree_lost_after_ms)};
        if (!config.tree_tcp_if.empty())
            config.tree_broker_args.insert(config.tree_broker_args.end(),
                                           {"--tcp-if", config.tree_tcp_if});
        if (!config.tree_munge_socket.empty())
            config.tree_broker_args.insert(config.tree_broker_args.end(),
                                           {"--munge-socket", config.tree_munge_socket});
        for (int i = 0; i < o.verbose; ++i) config.tree_broker_args.push_back("-v");
        if (o.verbose == 0) config.tree_broker_args.push_back("-q");
        b.embedded = std::make_unique<Broker>(config);
        b.embedded->start();
        b.uri = b.embedded->uri();
        const auto limit = std::chrono::milliseconds(config.tree_boot_timeout_ms + 5000);
        if (auto error = b.embedded->wait_tree(limit); !error.empty()) {
            b.embedded->stop();
            return {{}, "cannot start the brokers: " + error};
        }
    } catch (const std::exception &e) {
        b.stop();
        return {{}, std::string("cannot start the brokers: ") + e.what()};
    }
    return {std::move(b), {}};
}

// This node's standalone broker (`found`), else one embedded here.
alloc::Result<JobBroker> this_node_broker(const std::optional<RendezvousInfo> &found) {
    JobBroker b;
    if (found) {
        b.uri = found->uri;
        spdlog::debug("using the broker (pid {}) at {}", found->pid, b.uri);
        return {std::move(b), {}};
    }
    try {
        Config config = load_config(std::nullopt);
        config.run_dir.clear();  // a private directory: nobody else looks for it
        b.embedded = std::make_unique<Broker>(config);
        b.embedded->start();
        b.uri = b.embedded->uri();
    } catch (const std::exception &e) {
        return {{}, std::string("cannot start a broker: ") + e.what()};
    }
    return {std::move(b), {}};
}

// A standing tree configured for this job's nodes ([tree] hosts in $ZPMIX_CONFIG), but no broker
// of it here that this user may use: its brokers serve the user they run as, and another's
// directory is not looked in. Said, since the job then starts brokers of its own.
void say_why_not_the_standing_tree(const Layout &layout) {
    std::vector<std::string> hosts;
    try {
        hosts = load_config(std::nullopt).tree_hosts;
    } catch (const std::exception &) {
        return;  // an embedded broker reports the configuration's error
    }
    if (hosts.empty()) return;
    RendezvousInfo tree;
    tree.tree_hosts = std::move(hosts);
    if (Layout probe = layout; !probe.on_standing_tree(tree)) return;
    spdlog::warn(
        "the standing tree of $ZPMIX_CONFIG runs these nodes, but this node has no broker of it "
        "for this user (uid {}) in {}: a standing tree's brokers run the jobs of the user they run "
        "as. This job starts brokers of its own instead.",
        ::getuid(), default_base_dir());
}

}  // namespace

alloc::Result<JobBroker> job_broker(const RunOptions &o, Layout &layout) {
    // The standalone broker of this user's base directory, if any. A directory or file there that
    // another user could have made is refused, before anything of ours goes anywhere.
    std::optional<RendezvousInfo> standalone;
    try {
        if (!o.broker.empty()) {
            check_ipc_endpoint(o.broker);
            return {JobBroker{o.broker, nullptr}, {}};
        }
        standalone = find_broker(default_base_dir());
    } catch (const UntrustedPath &e) {
        return {{}, e.what()};
    }
    if (standalone && layout.on_standing_tree(*standalone)) {
        spdlog::debug("the standing tree's broker (pid {}) runs the job", standalone->pid);
        return {JobBroker{standalone->uri, nullptr}, {}};
    }
    if (!standalone || standalone->tree_hosts.empty()) say_why_not_the_standing_tree(layout);
    if (layout.across()) return start_tree(o, layout.spread);
    return this_node_broker(standalone);
}

}  // namespace zpmix::cli::run
