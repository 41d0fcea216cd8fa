// `zpmix pset define NAME --job NS [--ranks LIST]` and `zpmix pset delete NAME [--job NS]`:
// process sets made and removed while jobs run (actors/pset/pset_registry.hpp).
#include <charconv>
#include <iostream>
#include <stdexcept>

#include <pmix_common.h>

#include "actors/protocol/pset.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct PsetOptions {
    std::string name, job, ranks, broker;
};

std::uint32_t number(std::string_view s) {
    std::uint32_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
        throw std::runtime_error("bad rank '" + std::string(s) + "' in --ranks");
    return n;
}

// "0,2-4" as members of `job`; empty or "*": the whole job.
std::vector<msg::Proc> members(const std::string &job, std::string_view ranks) {
    if (ranks.empty() || ranks == "*") return {{job, msg::kWildcardRank}};
    std::vector<msg::Proc> out;
    while (!ranks.empty()) {
        const auto comma = std::min(ranks.find(','), ranks.size());
        const std::string_view part = ranks.substr(0, comma);
        ranks.remove_prefix(std::min(comma + 1, ranks.size()));
        const auto dash = part.find('-');
        const std::uint32_t lo = number(part.substr(0, dash));
        const std::uint32_t hi =
            dash == std::string_view::npos ? lo : number(part.substr(dash + 1));
        if (hi < lo || hi - lo > 1u << 20) throw std::runtime_error("bad range in --ranks");
        for (std::uint32_t r = lo; r <= hi; ++r) out.push_back({job, r});
    }
    return out;
}

template <class Msg>
int ask(const std::string &uri, const Msg &m, const char *what) {
    ToolSession session(uri, std::chrono::seconds(10));
    session.ask<msg::Ok>(m);
    std::cout << "process set '" << m.name << "' " << what << "\n";
    return 0;
}

}  // namespace

void add_pset_command(CLI::App &app, int &status) {
    auto o = std::make_shared<PsetOptions>();
    auto *cmd = app.add_subcommand("pset", "Define or delete a process set while jobs run");
    cmd->require_subcommand(1);
    auto *define = cmd->add_subcommand("define", "Name ranks of a running job as a process set");
    define->add_option("name", o->name, "The set's name")->required();
    define->add_option("--job", o->job, "The job's namespace")->required();
    define->add_option("--ranks", o->ranks, "Its ranks: 0,2-4 (default: every rank)");
    define->add_option("--broker", o->broker,
                       "The broker's URI (default: the one of this node that runs the job)");
    auto *remove = cmd->add_subcommand("delete", "Delete a process set `pset define` made");
    remove->add_option("name", o->name, "The set's name")->required();
    remove->add_option("--job", o->job, "A job the set's broker runs (to find the broker)");
    remove->add_option("--broker", o->broker, "The broker's URI");
    define->callback([o, &status] {
        try {
            status = ask(broker_of_job(o->broker, o->job),
                         msg::PsetDefine{o->name, members(o->job, o->ranks)}, "defined");
        } catch (const std::exception &e) {
            std::cerr << "zpmix pset define: " << e.what() << "\n";
            status = 1;
        }
    });
    remove->callback([o, &status] {
        try {
            const std::string uri = o->job.empty() ? brokers_to_list(o->broker).front()
                                                   : broker_of_job(o->broker, o->job);
            status = ask(uri, msg::PsetDelete{o->name}, "deleted");
        } catch (const std::exception &e) {
            std::cerr << "zpmix pset delete: " << e.what() << "\n";
            status = 1;
        }
    });
}

}  // namespace zpmix::cli
