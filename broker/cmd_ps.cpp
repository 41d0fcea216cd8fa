// `zpmix ps [--job NS] [--json]`: the processes of this node's jobs (the standalone broker's and
// those of `zpmix run`'s embedded brokers), with their node and state; a job spanning nodes is
// listed whole, every broker of its tree asked for its ranks.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/protocol/jobctl.hpp"
#include "broker/commands.hpp"
#include "broker/tool_session.hpp"

namespace zpmix::cli {

namespace {

constexpr auto kScanTimeout = std::chrono::seconds(5);  // per broker, when looking for a job

std::vector<RendezvousInfo> brokers_here() {
    auto found = find_brokers(default_base_dir());
    if (found.empty())
        throw std::runtime_error("no broker running in " + default_base_dir() +
                                 " (start `zpmix broker` or `zpmix run`, or give --broker URI)");
    return found;
}

}  // namespace

std::string broker_of_job(const std::string &broker, const std::string &nspace) {
    if (!broker.empty()) return broker;
    std::string why;
    for (const auto &b : brokers_here()) {
        try {
            ToolSession session(b.uri, kScanTimeout);
            (void)session.ask<msg::ProcTable>(msg::ProcTableQuery{nspace});
            return b.uri;
        } catch (const std::exception &e) {  // not its job (or it is going away): the next one
            why = e.what();
        }
    }
    throw std::runtime_error("no broker on this node runs job " + nspace + " (" + why + ")");
}

std::vector<std::string> brokers_to_list(const std::string &broker) {
    if (!broker.empty()) return {broker};
    std::vector<std::string> out;
    for (const auto &b : brokers_here()) out.push_back(b.uri);
    return out;
}

namespace {

struct PsOptions {
    std::string job, broker;
    bool json = false;
};

int run_ps(const PsOptions &o) {
    msg::ProcTable table;
    try {
        if (!o.job.empty()) {
            ToolSession session(broker_of_job(o.broker, o.job), std::chrono::seconds(10));
            table = session.ask<msg::ProcTable>(msg::ProcTableQuery{o.job});
        } else {
            const auto uris = brokers_to_list(o.broker);
            for (const auto &uri : uris) {
                try {
                    ToolSession session(uri, std::chrono::seconds(10));
                    auto t = session.ask<msg::ProcTable>(msg::ProcTableQuery{});
                    table.procs.insert(table.procs.end(), t.procs.begin(), t.procs.end());
                } catch (const std::exception &e) {
                    // One broker that stopped meanwhile does not hide the others' jobs.
                    if (uris.size() == 1) throw;
                    std::cerr << "zpmix ps: " << uri << ": " << e.what() << "\n";
                }
            }
        }
    } catch (const std::exception &e) {
        std::cerr << "zpmix ps: " << e.what() << "\n";
        return 1;
    }
    if (o.json) {
        auto rows = nlohmann::json::array();
        for (const auto &p : table.procs)
            rows.push_back({{"nspace", p.nspace},
                            {"rank", p.rank},
                            {"host", p.host},
                            {"pid", p.pid},
                            {"state", p.state},
                            {"exit_code", p.exit_code},
                            {"signal", p.signal}});
        std::cout << rows.dump() << "\n";
        return 0;
    }
    std::cout << fmt::format("{:<24} {:>5} {:<16} {:>8} {:<8} {}\n", "NSPACE", "RANK", "HOST",
                             "PID", "STATE", "EXIT");
    for (const auto &p : table.procs) {
        std::string exit;
        if (p.state == "exited") exit = std::to_string(p.exit_code);
        if (p.state == "killed") exit = "signal " + std::to_string(p.signal);
        std::cout << fmt::format("{:<24} {:>5} {:<16} {:>8} {:<8} {}\n", p.nspace, p.rank, p.host,
                                 p.pid, p.state, exit);
    }
    return 0;
}

}  // namespace

void add_ps_command(CLI::App &app, int &status) {
    auto o = std::make_shared<PsOptions>();
    auto *cmd = app.add_subcommand("ps", "List the processes of this node's jobs");
    cmd->add_option("--job", o->job, "Only this job (namespace)");
    cmd->add_flag("--json", o->json, "One JSON array of processes");
    cmd->add_option("--broker", o->broker, "The broker's URI (default: every broker of this node)");
    cmd->callback([o, &status] { status = run_ps(*o); });
}

}  // namespace zpmix::cli
