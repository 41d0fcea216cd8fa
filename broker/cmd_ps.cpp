// `zpmix ps [--job NS] [--ranks] [--json]`: this user's jobs on this node (the standalone broker's
// and those of `zpmix run`'s embedded brokers, whatever XDG_RUNTIME_DIR each was started with),
// one row each: program, ranks by state, nodes, elapsed time, psets, and for a job finished
// within `[broker] keep_finished_s` its exit status; `--ranks`, one row per rank. A job spanning
// nodes is listed whole, every broker of its tree asked for its ranks.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "actors/protocol/jobctl.hpp"
#include "actors/runtime/unix_time.hpp"
#include "broker/commands.hpp"
#include "broker/tool_session.hpp"

namespace zpmix::cli {

namespace {

constexpr auto kScanTimeout = std::chrono::seconds(5);  // per broker, when looking for a job

// This user's brokers, whatever XDG_RUNTIME_DIR they were started with.
std::vector<RendezvousInfo> brokers_here() {
    auto found = find_user_brokers();
    if (found.empty())
        throw std::runtime_error(
            fmt::format("no broker running in {} (start `zpmix broker` or `zpmix run`, or give "
                        "--broker URI)",
                        fmt::join(user_base_dirs(), ", ")));
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

std::string events_broker(const std::string &broker) {
    if (!broker.empty()) return broker;
    const auto found = brokers_here();
    // The standalone broker of the default base directory comes first; else the only one there
    // (a `zpmix run`'s); else the only one of the user anywhere.
    if (auto standalone = find_broker(default_base_dir())) return standalone->uri;
    if (const auto here = find_brokers(default_base_dir()); here.size() == 1)
        return here.front().uri;
    if (found.size() == 1) return found.front().uri;
    std::vector<std::string> which;
    for (const auto &b : found) which.push_back(fmt::format("{} (pid {})", b.uri, b.pid));
    throw std::runtime_error(
        fmt::format("{} brokers run here and none is standalone: give "
                    "--broker with one of {}",
                    found.size(), fmt::join(which, ", ")));
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
    bool ranks = false;
};

// What one broker said: its process table (every rank, across its tree) and its jobs.
struct Listing {
    std::string uri;
    msg::ProcTable table;
    msg::JobList jobs;
};

std::string user_name() {
    if (const passwd *pw = ::getpwuid(::getuid())) return pw->pw_name;
    return std::to_string(::getuid());
}

std::string elapsed_text(double s) {
    const auto t = static_cast<long long>(s);
    if (t >= 3600) return fmt::format("{}h{:02}m{:02}s", t / 3600, t / 60 % 60, t % 60);
    if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
    return fmt::format("{:.1f}s", s);
}

void print_ranks(const std::vector<Listing> &all, bool json) {
    if (json) {
        auto rows = nlohmann::json::array();
        for (const auto &l : all)
            for (const auto &p : l.table.procs)
                rows.push_back({{"nspace", p.nspace},
                                {"rank", p.rank},
                                {"host", p.host},
                                {"pid", p.pid},
                                {"state", p.state},
                                {"exit_code", p.exit_code},
                                {"signal", p.signal}});
        std::cout << rows.dump() << "\n";
        return;
    }
    std::cout << fmt::format("{:<24} {:>5} {:<16} {:>8} {:<8} {}\n", "NSPACE", "RANK", "HOST",
                             "PID", "STATE", "EXIT");
    for (const auto &l : all)
        for (const auto &p : l.table.procs) {
            std::string exit;
            if (p.state == "exited") exit = std::to_string(p.exit_code);
            if (p.state == "killed") exit = "signal " + std::to_string(p.signal);
            std::cout << fmt::format("{:<24} {:>5} {:<16} {:>8} {:<8} {}\n", p.nspace, p.rank,
                                     p.host, p.pid, p.state, exit);
        }
}

// One row per job: a running job's rank states and nodes from the process table (every node's
// ranks), a finished one's as its broker last saw them.
void print_jobs(const std::vector<Listing> &all, const std::string &only, bool json) {
    const auto now_us = unix_time_us();
    const std::string user = user_name();
    auto rows = nlohmann::json::array();
    for (const auto &l : all) {
        auto jobs = l.jobs.jobs;
        std::sort(jobs.begin(), jobs.end(),
                  [](const auto &a, const auto &b) { return a.started_us < b.started_us; });
        for (const auto &j : jobs) {
            if (!only.empty() && j.nspace != only) continue;
            const bool running = j.ended_us == 0;
            std::map<std::string, std::uint32_t> states = j.states;
            std::vector<std::string> nodes = j.hosts;
            if (running) {
                states.clear();
                for (const auto &p : l.table.procs) {
                    if (p.nspace != j.nspace) continue;
                    ++states[p.state];
                    if (std::find(nodes.begin(), nodes.end(), p.host) == nodes.end())
                        nodes.push_back(p.host);
                }
            }
            const double elapsed =
                j.started_us == 0 ? 0 : ((running ? now_us : j.ended_us) - j.started_us) / 1e6;
            nlohmann::json row = {
                {"nspace", j.nspace},     {"user", user},
                {"program", j.program},   {"np", j.np},
                {"ranks", states},        {"nodes", nodes},
                {"elapsed_s", elapsed},   {"state", running ? "running" : "finished"},
                {"exit_status", nullptr}, {"psets", j.psets},
                {"broker", l.uri}};
            if (!running) {
                row["exit_status"] = j.status;
                row["message"] = j.message;
            }
            rows.push_back(std::move(row));
        }
    }
    if (json) {
        std::cout << rows.dump() << "\n";
        return;
    }
    std::cout << fmt::format("{:<24} {:<10} {:<20} {:<22} {:<16} {:>10} {:<10} {}\n", "JOB", "USER",
                             "PROGRAM", "RANKS", "NODES", "ELAPSED", "STATUS", "PSETS");
    for (const auto &r : rows) {
        std::vector<std::string> by_state;
        for (const auto &[state, n] : r["ranks"].items())
            by_state.push_back(fmt::format("{} {}", n.get<std::uint32_t>(), state));
        const std::string status = r["exit_status"].is_null()
                                       ? "running"
                                       : fmt::format("exit {}", r["exit_status"].get<int>());
        std::cout << fmt::format(
            "{:<24} {:<10} {:<20} {:<22} {:<16} {:>10} {:<10} {}\n", r["nspace"].get<std::string>(),
            r["user"].get<std::string>(),
            std::filesystem::path(r["program"].get<std::string>()).filename().string(),
            fmt::join(by_state, ","), fmt::join(r["nodes"].get<std::vector<std::string>>(), ","),
            elapsed_text(r["elapsed_s"].get<double>()), status,
            fmt::join(r["psets"].get<std::vector<std::string>>(), ","));
    }
}

int run_ps(const PsOptions &o) {
    std::vector<Listing> all;
    try {
        std::vector<std::string> uris;
        if (!o.job.empty()) {
            uris = {broker_of_job(o.broker, o.job)};
        } else if (!o.broker.empty()) {
            uris = {o.broker};
        } else {
            for (const auto &b : find_user_brokers()) uris.push_back(b.uri);
            if (uris.empty()) {  // no broker: no job
                if (o.json)
                    std::cout << "[]\n";
                else
                    std::cerr << "zpmix ps: no broker running in "
                              << fmt::format("{}", fmt::join(user_base_dirs(), ", ")) << "\n";
                return 0;
            }
        }
        for (const auto &uri : uris) {
            try {
                ToolSession session(uri, std::chrono::seconds(10));
                Listing l{uri, session.ask<msg::ProcTable>(msg::ProcTableQuery{o.job}), {}};
                if (!o.ranks) l.jobs = session.ask<msg::JobList>(msg::JobsQuery{});
                all.push_back(std::move(l));
            } catch (const std::exception &e) {
                // One broker that stopped meanwhile does not hide the others' jobs.
                if (uris.size() == 1) throw;
                std::cerr << "zpmix ps: " << uri << ": " << e.what() << "\n";
            }
        }
    } catch (const std::exception &e) {
        std::cerr << "zpmix ps: " << e.what() << "\n";
        return 1;
    }
    if (o.ranks)
        print_ranks(all, o.json);
    else
        print_jobs(all, o.job, o.json);
    return 0;
}

}  // namespace

void add_ps_command(CLI::App &app, int &status) {
    auto o = std::make_shared<PsOptions>();
    auto *cmd = app.add_subcommand(
        "ps", "List this user's jobs on this node, running and lately finished, one row each");
    cmd->add_option("--job", o->job, "Only this job (namespace)");
    cmd->add_flag("--ranks", o->ranks, "One row per rank (host, pid, state, exit) instead");
    cmd->add_flag("--json", o->json, "One JSON array of jobs (of ranks with --ranks)");
    cmd->add_option("--broker", o->broker, "The broker's URI (default: every broker of this node)");
    cmd->callback([o, &status] { status = run_ps(*o); });
}

}  // namespace zpmix::cli
