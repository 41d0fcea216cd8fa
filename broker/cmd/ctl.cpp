// `zpmix ctl pause|resume|kill|terminate|signal SIG|checkpoint ID|cancel [ID] --job NS [--ranks
// LIST]`: job control by an operator, a tool of the standard API (PMIx_Job_control with the
// standard's directive) of the job owner's uid, through whichever broker of this node runs the job
// (PMIX_SERVER_NSPACE: the standalone one, or one embedded in `zpmix run`) or --broker's
// (PMIX_SERVER_URI). It prints the broker's message (what was done, or why not).
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/protocol/jobctl.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/pmix_tool.hpp"

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

// The broker's messages in PMIx_Job_control's results: the last one, or nullopt without any.
std::optional<std::string> message_of(const pmix_info_t *results, size_t n) {
    std::optional<std::string> out;
    for (size_t i = 0; results && i < n; ++i)
        if (PMIX_CHECK_KEY(&results[i], msg::kJobControlMessageKey) &&
            results[i].value.type == PMIX_STRING)
            out = results[i].value.data.string ? results[i].value.data.string : "";
    return out;
}

int run_ctl(const CtlOptions &o) {
    int sig = 0;
    if (o.action == "signal") {
        sig = parse_signal(o.arg);
        if (sig <= 0 || sig >= NSIG) {
            std::cerr << "zpmix ctl: unknown signal '" << o.arg << "'\n";
            return 2;
        }
    }
    std::vector<pmix_proc_t> targets;
    try {
        if (o.job.size() > PMIX_MAX_NSLEN)
            throw std::invalid_argument("--job " + o.job + ": a namespace has at most " +
                                        std::to_string(PMIX_MAX_NSLEN) + " characters");
        pmix_proc_t p;
        if (o.ranks.empty()) {
            PMIX_LOAD_PROCID(&p, o.job.c_str(), PMIX_RANK_WILDCARD);
            targets.push_back(p);
        } else {
            for (auto r : parse_ranks(o.ranks)) {
                PMIX_LOAD_PROCID(&p, o.job.c_str(), r);
                targets.push_back(p);
            }
        }
    } catch (const std::exception &e) {
        std::cerr << "zpmix ctl: " << e.what() << "\n";
        return 1;
    }
    static const std::map<std::string, const char *> kSwitches = {
        {"pause", PMIX_JOB_CTRL_PAUSE},
        {"resume", PMIX_JOB_CTRL_RESUME},
        {"kill", PMIX_JOB_CTRL_KILL},
        {"terminate", PMIX_JOB_CTRL_TERMINATE}};
    pmix_info_t dirs[2];
    bool yes = true;
    if (o.action == "signal")
        PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    else if (o.action == "checkpoint")
        PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_CHECKPOINT, o.arg.c_str(), PMIX_STRING);
    else if (o.action == "cancel")  // no id: every pending request of ours
        PMIX_INFO_LOAD(&dirs[0], PMIX_JOB_CTRL_CANCEL, o.arg.c_str(), PMIX_STRING);
    else
        PMIX_INFO_LOAD(&dirs[0], kSwitches.at(o.action), &yes, PMIX_BOOL);
    // Whole seconds, as the standard has them: a checkpoint's wait; libpmix awaits the broker's
    // answer 5 s longer.
    const int timeout =
        o.timeout_s > 1 ? static_cast<int>(std::min(std::ceil(o.timeout_s), 1e6)) : 1;
    PMIX_INFO_LOAD(&dirs[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    int status = 1;
    try {
        PmixTool tool("ctl", o.broker.empty() ? PMIX_SERVER_NSPACE : PMIX_SERVER_URI,
                      o.broker.empty() ? o.job : o.broker);
        pmix_info_t *results = nullptr;
        size_t n = 0;
        const pmix_status_t rc =
            PMIx_Job_control(targets.data(), targets.size(), dirs, 2, &results, &n);
        const auto message = message_of(results, n);
        if (results) PMIX_INFO_FREE(results, n);
        if (rc == PMIX_SUCCESS) {
            std::cout << message.value_or("") << "\n";
            status = 0;
        } else if (message) {
            std::cerr << "zpmix ctl: " << o.action << " refused: " << status_text(rc) << ": "
                      << *message << "\n";
        } else {  // no answer from the broker
            std::cerr << "zpmix ctl: " << o.action << ": " << failure_text(rc) << "\n";
        }
    } catch (const std::exception &e) {
        std::cerr << "zpmix ctl: " << (o.broker.empty() ? "job " + o.job : o.broker) << ": "
                  << e.what() << "\n";
    }
    PMIX_INFO_DESTRUCT(&dirs[0]);
    PMIX_INFO_DESTRUCT(&dirs[1]);
    return status;
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
    cmd->add_option("--timeout", o->timeout_s,
                    "Seconds to wait for a checkpoint, whole (default 30)");
    cmd->callback([o, &status] {
        if (o->action == "signal" && o->arg.empty())
            throw CLI::ValidationError("signal", "which signal?");
        status = run_ctl(*o);
    });
}

}  // namespace zpmix::cli
