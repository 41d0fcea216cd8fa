// QueryActor under a resource manager that hosts the broker: what the broker could not answer
// goes to the host's query upcall, whose answers are merged into the broker's own.
#include <memory>

#include <pmix_common.h>

#include "actors/protocol/host_services.hpp"
#include "actors/query/query_actor.hpp"

namespace zpmix {

namespace {

// A process table of a hosted job: the broker knows its ranks, not their pids.
bool host_knows_better(const NamespaceTable &namespaces, const msg::Query &q,
                       const std::string &key) {
    if (key != PMIX_QUERY_PROC_TABLE && key != PMIX_QUERY_LOCAL_PROC_TABLE) return false;
    const auto ns = namespaces.find(q.nspace);
    return ns && ns->hosted;
}

}  // namespace

void QueryActor::answer_or_ask_host(const Envelope &env, const msg::QueryRequest &m,
                                    msg::QueryReply out) {
    if (!to_host_) return reply(env, out);
    // The keys for the host, by query; `where` maps them back to the broker's answers.
    msg::HostQuery ask_for;
    std::vector<std::pair<std::size_t, std::vector<std::size_t>>> where;
    for (std::size_t q = 0; q < m.queries.size(); ++q) {
        msg::Query sub = m.queries[q];
        sub.keys.clear();
        std::vector<std::size_t> at;
        for (std::size_t k = 0; k < out.results[q].answers.size(); ++k) {
            const auto &a = out.results[q].answers[k];
            if (a.status != PMIX_SUCCESS || host_knows_better(namespaces_, m.queries[q], a.key)) {
                sub.keys.push_back(a.key);
                at.push_back(k);
            }
        }
        if (at.empty()) continue;
        ask_for.queries.push_back(std::move(sub));
        where.emplace_back(q, std::move(at));
    }
    if (where.empty()) return reply(env, out);
    if (env.session && env.session->is_client())
        ask_for.requester = {env.session->nspace, env.session->rank};
    auto merged = std::make_shared<msg::QueryReply>(std::move(out));
    ask("hostsvc", ask_for, [this, env, merged, where](std::int32_t status, const Envelope *r) {
        if (status == PMIX_SUCCESS && r) {
            try {
                const auto host = r->as<msg::QueryReply>();
                for (std::size_t i = 0; i < where.size() && i < host.results.size(); ++i) {
                    const auto &[q, at] = where[i];
                    const auto &answers = host.results[i].answers;
                    for (std::size_t j = 0; j < at.size() && j < answers.size(); ++j)
                        if (answers[j].status == PMIX_SUCCESS)
                            merged->results[q].answers[at[j]] = answers[j];
                }
            } catch (const DecodeError &e) {
                log().warn("the resource manager's query answer does not decode: {}", e.what());
            }
        }
        reply(env, *merged);
    });
}

}  // namespace zpmix
