// `zpmix ctl pause|resume|kill|terminate|signal SIG|checkpoint ID --job NS [--ranks LIST]`: job
// control by an operator, as a tool of the job owner's uid, through whichever broker of this node
// runs the job (the standalone one, or one embedded in `zpmix run`).
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <iostream>

#include <pmix_common.h>

#include "actors/protocol/jobctl.hpp"
#include "broker/commands.hpp"
#include "broker/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct CtlOptions {
    std::string action, arg, job, ranks, broker;
    double timeout_s = 30;
};

// "2", "SIGUSR1", "USR1" -> the number; 0 when unknown.
int parse_signal(const std::string &s) {
    if (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) return std::atoi(s.c_str());
    const std::string name = s.starts_with("SIG") ? s.substr(3) : s;
    for (int i = 1; i < NSIG; ++i)
        if (const char *abbrev = sigabbrev_np(i); abbrev && name == abbrev) return i;
    return 0;
}

// A rank: digits only, below 2^32.
std::uint32_t parse_rank(const std::string &s, const std::string &list) {
    const bool digits = !s.empty() && s.size() <= 10 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
    });
    if (!digits || std::stoull(s) > 0xffffffffull)
        throw std::invalid_argument("--ranks " + list + ": '" + s +
                                    "' is not a rank (ranks are numbers: 0,2-4)");
    return static_cast<std::uint32_t>(std::stoull(s));
}

// "0,2-4" -> {0,2,3,4}; throws, saying what is wrong, on anything else.
std::vector<std::uint32_t> parse_ranks(const std::string &list) {
    std::vector<std::uint32_t> out;
    std::size_t pos = 0;
    while (pos <= list.size()) {
        const auto comma = list.find(',', pos);
        const std::string item = list.substr(pos, comma == std::string::npos ? comma : comma - pos);
        const auto dash = item.find('-');
        const std::uint32_t lo = parse_rank(item.substr(0, dash), list);
        const std::uint32_t hi =
            dash == std::string::npos ? lo : parse_rank(item.substr(dash + 1), list);
        if (hi < lo) throw std::invalid_argument("--ranks " + list + ": " + item + " is empty");
        if (hi - lo > 1000000)
            throw std::invalid_argument("--ranks " + list + ": " + item + " is too large");
        for (unsigned long r = lo; r <= hi; ++r) out.push_back(static_cast<std::uint32_t>(r));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

int run_ctl(const CtlOptions &o) {
    msg::JobControl m;
    m.action = o.action;
    if (o.action == "signal") {
        m.signal = parse_signal(o.arg);
        if (m.signal <= 0 || m.signal >= NSIG) {
            std::cerr << "zpmix ctl: unknown signal '" << o.arg << "'\n";
            return 2;
        }
    } else if (o.action == "checkpoint") {
        m.id = o.arg;
        m.timeout_ms = static_cast<std::uint32_t>(o.timeout_s * 1000);
    } else if (o.action == "cancel") {
        m.cancel_id = o.arg;
    }
    try {
        if (o.ranks.empty())
            m.targets.push_back({o.job, msg::kWildcardRank});
        else
            for (auto r : parse_ranks(o.ranks)) m.targets.push_back({o.job, r});
        ToolSession session(
            broker_of_job(o.broker, o.job),
            std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000) + 5000));
        const auto r = session.ask<msg::JobControlReply>(m);
        if (r.status != PMIX_SUCCESS) {
            std::cerr << "zpmix ctl: " << o.action << " refused: " << status_text(r.status) << ": "
                      << r.message << "\n";
            return 1;
        }
        std::cout << r.message << "\n";
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "zpmix ctl: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace

void add_ctl_command(CLI::App &app, int &status) {
    auto o = std::make_shared<CtlOptions>();
    auto *cmd = app.add_subcommand("ctl", "Control a job's processes (PMIx job control)");
    cmd->add_option("action", o->action,
                    "pause | resume | kill | terminate | signal SIG | checkpoint ID | cancel [ID]")
        ->required()
        ->check(CLI::IsMember(
            {"pause", "resume", "kill", "terminate", "signal", "checkpoint", "cancel"}));
    cmd->add_option("arg", o->arg, "The signal (signal), the request id (checkpoint, cancel)");
    cmd->add_option("--job", o->job, "The job's namespace")->required();
    cmd->add_option("--ranks", o->ranks, "Ranks to act on, e.g. 0,2-3 (default: all)");
    cmd->add_option("--broker", o->broker,
                    "The broker's URI (default: the one of this node that runs the job)");
    cmd->add_option("--timeout", o->timeout_s, "Seconds to wait for a checkpoint (default 30)");
    cmd->callback([o, &status] {
        if (o->action == "signal" && o->arg.empty())
            throw CLI::ValidationError("signal", "which signal?");
        status = run_ctl(*o);
    });
}

}  // namespace zpmix::cli
