// `zpmix ps [--job NS] [--json]`: the processes of the standalone broker's jobs, with their state.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/protocol/jobctl.hpp"
#include "broker/commands.hpp"
#include "broker/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct PsOptions {
    std::string job, broker;
    bool json = false;
};

int run_ps(const PsOptions &o) {
    msg::ProcTable table;
    try {
        ToolSession session(o.broker, std::chrono::seconds(10));
        table = session.ask<msg::ProcTable>(msg::ProcTableQuery{o.job});
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
    auto *cmd = app.add_subcommand("ps", "List the processes of the broker's jobs");
    cmd->add_option("--job", o->job, "Only this job (namespace)");
    cmd->add_flag("--json", o->json, "One JSON array of processes");
    cmd->add_option("--broker", o->broker, "The broker's URI (default: the standalone broker)");
    cmd->callback([o, &status] { status = run_ps(*o); });
}

}  // namespace zpmix::cli
