// The query keys the broker answers, one entry each (the table at the end), and their answers.
// Shapes are the standard's (pmix_common.h's comment on each key gives the type).
#include "actors/query/query_keys.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"
#include "actors/protocol/group.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/log.hpp"
#include "actors/protocol/pset.hpp"
#include "actors/query/query_value.hpp"

namespace zpmix::query {

namespace {

using Done = QueryActor::Answer;

std::string joined(const std::vector<std::string> &items) {
    std::string out;
    for (const auto &s : items) out += (out.empty() ? "" : ",") + s;
    return out;
}

// The jobs the caller may read, with their records.
std::vector<NamespaceTable::Record> visible_jobs(QueryActor &q, const Envelope &req) {
    std::vector<NamespaceTable::Record> out;
    for (const auto &[ns, rec] : *q.namespaces().snapshot())
        if (QueryActor::may_read(req, ns)) out.push_back(rec);
    return out;
}

// A live process's command line (/proc), space-separated; empty when not on this node.
std::string command_line(std::int64_t pid) {
    if (pid <= 0) return "";
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!all.empty() && all.back() == '\0') all.pop_back();
    for (char &c : all)
        if (c == '\0') c = ' ';
    return all;
}

// Resident memory of a process in megabytes (/proc/<pid>/status VmRSS); negative when unknown.
float rss_mb(const std::string &pid) {
    std::ifstream in("/proc/" + pid + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmRSS:", 0) == 0) {
            std::istringstream words(line.substr(6));
            double kb = 0;
            words >> kb;
            return static_cast<float>(kb / 1024.0);
        }
    return -1;
}

void supported_keys(QueryActor &, const Envelope &, const msg::Query &, const Done &done) {
    std::vector<std::string> names;
    for (const auto &k : keys()) names.emplace_back(k.key);
    done(PMIX_SUCCESS, string_value(joined(names)));
}

void namespaces(QueryActor &q, const Envelope &req, const msg::Query &, const Done &done) {
    std::vector<std::string> names;
    for (const auto &rec : visible_jobs(q, req)) names.push_back(rec->job->nspace);
    done(PMIX_SUCCESS, string_value(joined(names)));
}

// An array with, for each job (the PMIX_NSPACE qualifier's, or every one), an info of its own
// array: its namespace, size, nodes and, when rank 0 runs here, its command line.
void namespace_info(QueryActor &q, const Envelope &req, const msg::Query &query, const Done &done) {
    std::vector<Info> jobs;
    for (const auto &rec : visible_jobs(q, req)) {
        const msg::JobInfo &job = *rec->job;
        if (!query.nspace.empty() && job.nspace != query.nspace) continue;
        std::vector<Info> about{
            {PMIX_NSPACE, string_value(job.nspace)},
            {PMIX_JOB_SIZE, uint32_value(job.size)},
            {PMIX_NUM_NODES, uint32_value(static_cast<std::uint32_t>(job.nodes.size()))},
            {PMIX_NODE_LIST, string_value(joined(job.nodes))}};
        if (const std::string cmd = command_line(rec->pids.empty() ? 0 : rec->pids[0]);
            !cmd.empty())
            about.push_back({PMIX_CMD_LINE, string_value(cmd)});
        jobs.push_back({PMIX_QUERY_NAMESPACE_INFO, info_array(about)});
    }
    if (!query.nspace.empty() && jobs.empty()) return done(PMIX_ERR_NOT_FOUND, {});
    done(PMIX_SUCCESS, info_array(jobs));
}

// A job's status: PMIX_SUCCESS while no rank failed, else how its first failed rank ended.
void job_status(QueryActor &q, const Envelope &req, const msg::Query &query, const Done &done) {
    if (query.nspace.empty()) return done(PMIX_ERR_BAD_PARAM, {});  // needs PMIX_NSPACE
    const auto rec = q.namespaces().find(query.nspace);
    if (!rec || !QueryActor::may_read(req, query.nspace)) return done(PMIX_ERR_NOT_FOUND, {});
    std::int32_t status = PMIX_SUCCESS;
    for (const auto &e : rec->ends) {
        if (!e.ended || (e.signal == 0 && e.exit_code == 0)) continue;
        status = e.signal ? PMIX_ERR_PROC_ABORTED_BY_SIG : PMIX_ERR_PROC_ABORTED;
        break;
    }
    done(PMIX_SUCCESS, status_value(status));
}

std::uint8_t proc_state(const msg::ProcRow &r) {
    if (r.state == "running" || r.state == "paused") return PMIX_PROC_STATE_RUNNING;
    if (r.state == "exited")
        return r.exit_code == 0 ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_NON_ZERO;
    if (r.state == "killed") return PMIX_PROC_STATE_ABORTED_BY_SIG;
    if (r.state == "unreachable") return PMIX_PROC_STATE_COMM_FAILED;
    return PMIX_PROC_STATE_UNDEF;
}

// jobctl's process table (gathered across the tree unless node_only), as pmix_proc_info_t.
void proc_table_of(QueryActor &q, const Envelope &req, const msg::Query &query, bool node_only,
                   const Done &done) {
    if (!QueryActor::may_read(req, query.nspace))
        return done(PMIX_ERR_NOT_FOUND, {});  // a tcp client: its own job, named
    q.ask("jobctl", msg::ProcTableQuery{query.nspace, node_only},
          [done, rank = query.rank](std::int32_t status, const Envelope *reply) {
              if (status != PMIX_SUCCESS || !reply) return done(status, {});
              std::vector<ProcInfo> rows;
              for (const auto &r : reply->as<msg::ProcTable>().procs) {
                  if (rank != msg::kWildcardRank && r.rank != rank) continue;
                  const std::int32_t code = r.state == "killed" ? 128 + r.signal : r.exit_code;
                  rows.push_back(
                      {r.nspace, r.rank, r.host, r.executable, r.pid, code, proc_state(r)});
              }
              done(PMIX_SUCCESS, proc_info_array(rows));
          });
}

void proc_table(QueryActor &q, const Envelope &req, const msg::Query &query, const Done &done) {
    proc_table_of(q, req, query, query.local_only, done);
}

void local_proc_table(QueryActor &q, const Envelope &req, const msg::Query &query,
                      const Done &done) {
    proc_table_of(q, req, query, true, done);
}

// This broker's resident memory and its job's (PMIX_NSPACE's, or every job's) live local ranks'
// average; with PMIX_QUERY_REPORT_MINMAX, their least and most too (keys "pmix.cl.mem.min" and
// "pmix.cl.mem.max", as the standard names none).
void memory_usage(QueryActor &q, const Envelope &req, const msg::Query &query, const Done &done) {
    std::vector<Info> out{{PMIX_DAEMON_MEMORY, float_value(rss_mb("self"))}};
    float sum = 0, least = 0, most = 0;
    int n = 0;
    for (const auto &rec : visible_jobs(q, req)) {
        if (!query.nspace.empty() && rec->job->nspace != query.nspace) continue;
        for (std::uint32_t r = 0; r < rec->size(); ++r) {
            if (rec->ended(r) || rec->pids[r] <= 0) continue;
            if (query.rank != msg::kWildcardRank && r != query.rank) continue;
            const float mb = rss_mb(std::to_string(rec->pids[r]));
            if (mb < 0) continue;  // on another node, or gone
            least = n == 0 ? mb : std::min(least, mb);
            most = n == 0 ? mb : std::max(most, mb);
            sum += mb;
            ++n;
        }
    }
    if (n > 0) {
        out.push_back({PMIX_CLIENT_AVG_MEMORY, float_value(sum / static_cast<float>(n))});
        if (query.report_minmax) {
            out.push_back({"pmix.cl.mem.min", float_value(least)});
            out.push_back({"pmix.cl.mem.max", float_value(most)});
        }
    }
    done(PMIX_SUCCESS, info_array(out));
}

// What the caller may do: for each operation, whether the broker's handler of its message takes
// it from the caller's class (the one access table, actors/runtime/actor.hpp).
void authorizations(QueryActor &q, const Envelope &req, const msg::Query &, const Done &done) {
    const Access who = !req.session               ? Access::anyone
                       : req.session->is_client() ? Access::session
                                                  : Access::operator_;
    static const std::pair<const char *, const char *> kOperations[] = {
        {"PMIx_Job_control", msg::JobControl::type},   {"PMIx_Spawn", msg::Spawn::type},
        {"PMIx_Notify_event", msg::NotifyEvent::type}, {"PMIx_Log", msg::Log::type},
        {"PMIx_Query_info", msg::QueryRequest::type},  {"PMIx_Abort", msg::Abort::type},
    };
    std::vector<Info> out;
    for (const auto &[fn, type] : kOperations) {
        const Bus::Route r = q.the_bus().route(type);
        out.push_back({fn, bool_value(r.actor && allows(r.access, who))});
    }
    done(PMIX_SUCCESS, info_array(out));
}

// A named set: its members the caller may see (a tcp client: its own job's).
struct NamedSet {
    std::string name;
    std::vector<msg::Proc> members;
};
using Sets = std::function<void(std::int32_t, std::vector<NamedSet>)>;

// The one job a tcp client may read (its own); nullopt: every job.
std::optional<std::string> readable_job(const Envelope &req) {
    if (!req.tcp_client()) return std::nullopt;
    return req.session->nspace;
}

std::vector<NamedSet> visible(const std::optional<std::string> &job, std::vector<NamedSet> sets) {
    if (job)
        for (auto &set : sets)
            std::erase_if(set.members, [&](const msg::Proc &p) { return p.nspace != *job; });
    std::erase_if(sets, [](const NamedSet &set) { return set.members.empty(); });
    return sets;
}

// Every process set (the pset actor keeps the same sets on every broker).
void psets(QueryActor &q, const Envelope &req, Sets then) {
    q.ask("pset", msg::PsetQuery{},
          [job = readable_job(req), then](std::int32_t status, const Envelope *reply) {
              if (status != PMIX_SUCCESS || !reply) return then(status, {});
              std::vector<NamedSet> sets;
              for (auto &p : reply->as<msg::PsetList>().psets)
                  sets.push_back({std::move(p.name), std::move(p.members)});
              then(PMIX_SUCCESS, visible(job, std::move(sets)));
          });
}

// The groups with members on this broker's node (the group actor knows those).
void groups(QueryActor &q, const Envelope &req, Sets then) {
    q.ask("group", msg::GroupList{},
          [job = readable_job(req), then](std::int32_t status, const Envelope *reply) {
              if (status != PMIX_SUCCESS || !reply) return then(status, {});
              std::vector<NamedSet> sets;
              for (auto &g : reply->as<msg::GroupListed>().groups)
                  sets.push_back({std::move(g.grp), std::move(g.members)});
              then(PMIX_SUCCESS, visible(job, std::move(sets)));
          });
}

std::vector<std::string> names_of(const std::vector<NamedSet> &sets) {
    std::vector<std::string> names;
    for (const auto &set : sets) names.push_back(set.name);
    return names;
}

// PMIX_QUERY_*_MEMBERSHIP: the members of the set the qualifier names.
void membership(const std::vector<NamedSet> &sets, const std::string &name, const Done &done) {
    if (name.empty()) return done(PMIX_ERR_BAD_PARAM, {});  // needs PMIX_PSET_NAME / GROUP_ID
    for (const auto &set : sets)
        if (set.name == name) return done(PMIX_SUCCESS, proc_array(set.members));
    done(PMIX_ERR_NOT_FOUND, {});
}

void num_psets(QueryActor &q, const Envelope &req, const msg::Query &, const Done &done) {
    psets(q, req, [done](std::int32_t status, std::vector<NamedSet> sets) {
        if (status != PMIX_SUCCESS) return done(status, {});
        done(PMIX_SUCCESS, size_value(sets.size()));
    });
}

void pset_names(QueryActor &q, const Envelope &req, const msg::Query &, const Done &done) {
    psets(q, req, [done](std::int32_t status, std::vector<NamedSet> sets) {
        if (status != PMIX_SUCCESS) return done(status, {});
        done(PMIX_SUCCESS, string_value(joined(names_of(sets))));
    });
}

void pset_membership(QueryActor &q, const Envelope &req, const msg::Query &query,
                     const Done &done) {
    psets(q, req, [done, name = query.name](std::int32_t status, std::vector<NamedSet> sets) {
        if (status != PMIX_SUCCESS) return done(status, {});
        membership(sets, name, done);
    });
}

void num_groups(QueryActor &q, const Envelope &req, const msg::Query &, const Done &done) {
    groups(q, req, [done](std::int32_t status, std::vector<NamedSet> sets) {
        if (status != PMIX_SUCCESS) return done(status, {});
        done(PMIX_SUCCESS, size_value(sets.size()));
    });
}

void group_names(QueryActor &q, const Envelope &req, const msg::Query &, const Done &done) {
    groups(q, req, [done](std::int32_t status, std::vector<NamedSet> sets) {
        if (status != PMIX_SUCCESS) return done(status, {});
        done(PMIX_SUCCESS, string_array(names_of(sets)));
    });
}

void group_membership(QueryActor &q, const Envelope &req, const msg::Query &query,
                      const Done &done) {
    groups(q, req, [done, name = query.name](std::int32_t status, std::vector<NamedSet> sets) {
        if (status != PMIX_SUCCESS) return done(status, {});
        membership(sets, name, done);
    });
}

// The table. Keys not here (and not answered by libpmix itself) are PMIX_ERR_NOT_FOUND.
constexpr Key kKeys[] = {
    {PMIX_QUERY_SUPPORTED_KEYS, supported_keys},
    {PMIX_QUERY_NAMESPACES, namespaces},
    {PMIX_QUERY_NAMESPACE_INFO, namespace_info},
    {PMIX_QUERY_JOB_STATUS, job_status},
    {PMIX_QUERY_PROC_TABLE, proc_table},
    {PMIX_QUERY_LOCAL_PROC_TABLE, local_proc_table},
    {PMIX_QUERY_MEMORY_USAGE, memory_usage},
    {PMIX_QUERY_AUTHORIZATIONS, authorizations},
    {PMIX_QUERY_NUM_PSETS, num_psets},
    {PMIX_QUERY_PSET_NAMES, pset_names},
    {PMIX_QUERY_PSET_MEMBERSHIP, pset_membership},
    {PMIX_QUERY_NUM_GROUPS, num_groups},
    {PMIX_QUERY_GROUP_NAMES, group_names},
    {PMIX_QUERY_GROUP_MEMBERSHIP, group_membership},
};

}  // namespace

std::span<const Key> keys() {
    return kKeys;
}

}  // namespace zpmix::query
