// `zpmix preempt --job NS [--grace-ms N]`: tell a preemptible job (PMIX_JCTRL_PREEMPT_ALERT) that
// it is being preempted, then terminate it after the grace period. zpmix's own request
// (jctl.preempt), not PMIx_Job_control: the standard has no directive to preempt a job now
// (PMIX_JOB_CTRL_PREEMPTIBLE is a job saying it may be preempted), and the broker, which holds
// that mark, alerts and later terminates the job even if this command is gone by then.
#include <iostream>

#include <pmix_common.h>

#include "actors/protocol/jobctl.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/tool_session.hpp"

namespace zpmix::cli {

void add_preempt_command(CLI::App &app, int &status) {
    auto o = std::make_shared<std::pair<msg::Preempt, std::string>>();  // request, broker uri
    auto *cmd = app.add_subcommand("preempt", "Preempt a job that declared itself preemptible");
    cmd->add_option("--job", o->first.nspace, "The job's namespace")->required();
    cmd->add_option("--grace-ms", o->first.grace_ms,
                    "Milliseconds between the alert and the termination (default 1000)");
    cmd->add_option("--broker", o->second,
                    "The broker's URI (default: the one of this node that runs the job)");
    cmd->callback([o, &status] {
        try {
            ToolSession session(broker_of_job(o->second, o->first.nspace),
                                std::chrono::seconds(10));
            const auto r = session.ask<msg::JobControlReply>(o->first);
            if (r.status != PMIX_SUCCESS) {
                std::cerr << "zpmix preempt: refused: " << status_text(r.status) << ": "
                          << r.message << "\n";
                status = 1;
                return;
            }
            std::cout << r.message << "\n";
            status = 0;
        } catch (const std::exception &e) {
            std::cerr << "zpmix preempt: " << e.what() << "\n";
            status = 1;
        }
    });
}

}  // namespace zpmix::cli
