// `zpmix ps [--job NS] [--ranks] [--json]`: this user's jobs on this node (the standalone broker's
// and those of `zpmix run`'s embedded brokers, whatever XDG_RUNTIME_DIR each was started with),
// one row each: program, ranks by state, nodes, elapsed time, psets, and for a job finished
// within `[broker] keep_finished_s` its exit status; `--ranks`, one row per rank. A job spanning
// nodes is listed whole, every broker of its tree asked for its ranks.
//
// The ranks come from the standard's process table (PMIx_Query_info, PMIX_QUERY_PROC_TABLE), ps
// being a tool attached to each broker in turn. The rest is zpmix's own (jctl.jobs, jctl.ps): the
// standard's queries have no rows per job (user, program, ranks by state, nodes, elapsed time,
// psets, finished jobs), and its process states no paused one.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "actors/protocol/jobctl.hpp"
#include "actors/runtime/unix_time.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/pmix_tool.hpp"
#include "broker/cmd/tool_session.hpp"

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

constexpr auto kPsTimeout = std::chrono::seconds(10);  // per broker

// What one broker said: its process table (every rank, across its tree) and its jobs.
struct Listing {
    std::string uri;
    std::vector<msg::ProcRow> procs;
    msg::JobList jobs;
};

// A rank of the standard's process table as ps shows it (state running, paused, exited, killed,
// unreachable; a signal's end is 128 + the signal there).
msg::ProcRow ps_row(const pmix_proc_info_t &p) {
    msg::ProcRow r;
    r.nspace = std::string(p.proc.nspace, strnlen(p.proc.nspace, PMIX_MAX_NSLEN));
    r.rank = p.proc.rank;
    r.host = p.hostname ? p.hostname : "";
    r.pid = p.pid;
    switch (p.state) {
        case PMIX_PROC_STATE_RUNNING:
            r.state = "running";
            break;
        case PMIX_PROC_STATE_TERMINATED:
        case PMIX_PROC_STATE_TERM_NON_ZERO:
            r.state = "exited";
            r.exit_code = p.exit_code;
            break;
        case PMIX_PROC_STATE_ABORTED_BY_SIG:
            r.state = "killed";
            r.signal = p.exit_code - 128;
            break;
        case PMIX_PROC_STATE_COMM_FAILED:
            r.state = "unreachable";
            break;
        default:
            r.state = PMIx_Proc_state_string(p.state);
    }
    return r;
}

// The process table of the broker the tool uses: of `job` (PMIX_NSPACE) or of every job, as ps
// shows it, but for paused ranks (running there). The query's status.
pmix_status_t standard_table(const std::string &job, std::vector<msg::ProcRow> &out) {
    std::vector<std::pair<const char *, std::string>> qualifiers;
    if (!job.empty()) qualifiers.emplace_back(PMIX_NSPACE, job);
    return query(PMIX_QUERY_PROC_TABLE, qualifiers, static_cast<int>(kPsTimeout.count()),
                 [&](const pmix_value_t &v) {
                     if (v.type != PMIX_DATA_ARRAY || !v.data.darray ||
                         v.data.darray->type != PMIX_PROC_INFO)
                         return;
                     const auto *rows = static_cast<const pmix_proc_info_t *>(v.data.darray->array);
                     for (size_t i = 0; i < v.data.darray->size; ++i)
                         out.push_back(ps_row(rows[i]));
                 });
}

// The broker at `uri`'s listing (its process table; with `jobs`, its jobs too). The status of the
// standard's query (PMIX_ERR_NOT_FOUND: not a job of this broker); throws when zpmix's own
// questions fail.
pmix_status_t broker_listing(PmixTool &tool, const std::string &uri, const std::string &job,
                             bool jobs, Listing &l) {
    l.uri = uri;
    if (pmix_status_t rc = tool.use(uri); rc != PMIX_SUCCESS) return rc;
    // Our own questions go first, so that they are answered with the standard one: a broker that
    // answers once another one is lost may end its job and be gone just after.
    ToolSession session(uri, kPsTimeout);
    const std::uint64_t table = session.send(msg::ProcTableQuery{job});
    const std::uint64_t rows = jobs ? session.send(msg::JobsQuery{}) : 0;
    if (pmix_status_t rc = standard_table(job, l.procs); rc != PMIX_SUCCESS) {
        // A job that finished lately has no ranks in the table, but its row.
        if (rc != PMIX_ERR_NOT_FOUND || job.empty() || !jobs) return rc;
        l.jobs = session.answer<msg::JobList>(rows);
        const bool listed = std::any_of(l.jobs.jobs.begin(), l.jobs.jobs.end(),
                                        [&](const msg::JobRow &j) { return j.nspace == job; });
        return listed ? PMIX_SUCCESS : rc;
    }
    std::set<std::pair<std::string, std::uint32_t>> paused;
    for (const auto &p : session.answer<msg::ProcTable>(table).procs)
        if (p.state == "paused") paused.insert({p.nspace, p.rank});
    for (auto &p : l.procs)
        if (p.state == "running" && paused.contains({p.nspace, p.rank})) p.state = "paused";
    if (jobs) l.jobs = session.answer<msg::JobList>(rows);
    return PMIX_SUCCESS;
}

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

// Rows of cells (the first the header) in columns as wide as their widest cell, two spaces apart;
// the columns in `right` right-aligned, the last one not padded.
void print_table(const std::vector<std::vector<std::string>> &rows,
                 const std::set<std::size_t> &right) {
    std::vector<std::size_t> width;
    for (const auto &row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (width.size() <= c) width.push_back(0);
            width[c] = std::max(width[c], row[c].size());
        }
    for (const auto &row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (c) line += "  ";
            const std::size_t pad = width[c] - row[c].size();
            if (right.contains(c)) line.append(pad, ' ');
            line += row[c];
            if (!right.contains(c) && c + 1 < row.size()) line.append(pad, ' ');
        }
        line.erase(line.find_last_not_of(' ') + 1);
        std::cout << line << "\n";
    }
}

void print_ranks(const std::vector<Listing> &all, bool json) {
    if (json) {
        auto rows = nlohmann::json::array();
        for (const auto &l : all)
            for (const auto &p : l.procs)
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
    std::vector<std::vector<std::string>> table{{"NSPACE", "RANK", "HOST", "PID", "STATE", "EXIT"}};
    for (const auto &l : all)
        for (const auto &p : l.procs) {
            std::string exit;
            if (p.state == "exited") exit = std::to_string(p.exit_code);
            if (p.state == "killed") exit = "signal " + std::to_string(p.signal);
            table.push_back(
                {p.nspace, std::to_string(p.rank), p.host, std::to_string(p.pid), p.state, exit});
        }
    print_table(table, {1, 3});
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
                for (const auto &p : l.procs) {
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
    std::vector<std::vector<std::string>> table{
        {"JOB", "USER", "PROGRAM", "RANKS", "NODES", "ELAPSED", "STATUS", "PSETS"}};
    for (const auto &r : rows) {
        std::vector<std::string> by_state;
        for (const auto &[state, n] : r["ranks"].items())
            by_state.push_back(fmt::format("{} {}", n.get<std::uint32_t>(), state));
        const std::string status = r["exit_status"].is_null()
                                       ? "running"
                                       : fmt::format("exit {}", r["exit_status"].get<int>());
        // Joined first: a width given to fmt::join pads each element, not the column.
        table.push_back(
            {r["nspace"].get<std::string>(), r["user"].get<std::string>(),
             std::filesystem::path(r["program"].get<std::string>()).filename().string(),
             fmt::format("{}", fmt::join(by_state, ",")),
             fmt::format("{}", fmt::join(r["nodes"].get<std::vector<std::string>>(), ",")),
             elapsed_text(r["elapsed_s"].get<double>()), status,
             fmt::format("{}", fmt::join(r["psets"].get<std::vector<std::string>>(), ","))});
    }
    print_table(table, {5});
}

int run_ps(const PsOptions &o) {
    std::vector<Listing> all;
    try {
        // With --job, the first of them that runs it.
        std::vector<std::string> uris;
        if (!o.job.empty() || !o.broker.empty()) {
            uris = brokers_to_list(o.broker);
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
        PmixTool tool("ps");
        std::string why;  // --job: why the last broker asked does not list it
        for (const auto &uri : uris) {
            Listing l;
            std::string failed;
            try {
                if (pmix_status_t rc = broker_listing(tool, uri, o.job, !o.ranks, l);
                    rc != PMIX_SUCCESS)
                    failed = failure_text(rc) + (rc == PMIX_ERR_NOT_FOUND && !o.job.empty()
                                                     ? ": no job " + o.job
                                                     : std::string());
            } catch (const std::exception &e) {
                failed = e.what();
            }
            if (failed.empty()) {
                all.push_back(std::move(l));
                if (!o.job.empty()) break;
            } else if (!o.job.empty()) {
                why = failed;  // not its job (or it is going away): the next one
            } else if (uris.size() == 1) {
                throw std::runtime_error(failed);
            } else {  // one broker that stopped meanwhile does not hide the others' jobs
                std::cerr << "zpmix ps: " << uri << ": " << failed << "\n";
            }
        }
        if (!o.job.empty() && all.empty())
            throw std::runtime_error(o.broker.empty() ? "no broker on this node runs job " + o.job +
                                                            " (" + why + ")"
                                                      : why);
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
