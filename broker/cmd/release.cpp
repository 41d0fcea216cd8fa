// `zpmix release NSPACE`: a debugger's release of a job stopped for it (`zpmix run
// --stop-in-init`, PMIX_DEBUG_STOP_IN_INIT): PMIX_DEBUGGER_RELEASE targeted at the job's ranks on
// every node, as a tool's PMIx_Notify_event would send it (the broker is the source).
#include <iostream>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct ReleaseOptions {
    std::string nspace, broker;
};

int run_release(const ReleaseOptions &o) {
    msg::NotifyEvent n;
    msg::Event &ev = n.event;
    ev.status = PMIX_DEBUGGER_RELEASE;
    ev.range = static_cast<std::uint8_t>(msg::Range::custom);
    ev.custom_range = {{o.nspace, PMIX_RANK_WILDCARD}};
    ev.affected = ev.custom_range;
    try {
        ToolSession session(o.broker, std::chrono::seconds(10));
        ev.source = {session.welcome().broker, 0};
        session.ask<msg::Ok>(n);
    } catch (const std::exception &e) {
        std::cerr << "zpmix release: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace

void add_release_command(CLI::App &app, int &status) {
    auto o = std::make_shared<ReleaseOptions>();
    auto *cmd = app.add_subcommand(
        "release", "Release a job's ranks stopped for a debugger (PMIX_DEBUGGER_RELEASE)");
    cmd->add_option("nspace", o->nspace, "The job's namespace")->required();
    cmd->add_option("--broker", o->broker, "The broker's URI (default: the standalone broker)");
    cmd->callback([o, &status] { status = run_release(*o); });
}

}  // namespace zpmix::cli
