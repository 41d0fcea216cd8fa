#include "actors/query/query_actor.hpp"

#include <memory>

#include <pmix_common.h>

#include "actors/protocol/group.hpp"
#include "actors/protocol/pset.hpp"
#include "actors/query/query_keys.hpp"

namespace zpmix {

QueryActor::QueryActor(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                       const BrokerMap &brokers, std::chrono::milliseconds answer_timeout,
                       bool to_host)
    : Actor("query", reactor, bus),
      namespaces_(namespaces),
      brokers_(brokers),
      answer_timeout_(answer_timeout),
      to_host_(to_host) {
    on(&QueryActor::request, Access::session | Access::operator_);
    on(&QueryActor::failed, Access::internal);
    expect<msg::ProcTable>();    // jobctl's process table
    expect<msg::PsetList>();     // the pset actor's sets
    expect<msg::GroupListed>();  // the group actor's groups
    expect<msg::QueryReply>();   // the hosting resource manager's answers
}

bool QueryActor::may_read(const Envelope &req, const std::string &nspace) {
    return !req.tcp_client() || req.session->nspace == nspace;
}

void QueryActor::request(const Envelope &env, msg::QueryRequest &m) {
    struct State {
        msg::QueryReply reply;
        std::size_t left = 0;
        msg::QueryRequest request;  // for the host (query_host.cpp)
    };
    auto state = std::make_shared<State>();
    if (to_host_) state->request = m;
    state->reply.results.resize(m.queries.size());
    for (std::size_t q = 0; q < m.queries.size(); ++q) {
        state->reply.results[q].answers.resize(m.queries[q].keys.size());
        state->left += m.queries[q].keys.size();
    }
    if (state->left == 0) return answer_or_ask_host(env, m, std::move(state->reply));
    // Answers may come at once or later: the reply goes with the last.
    for (std::size_t q = 0; q < m.queries.size(); ++q) {
        for (std::size_t k = 0; k < m.queries[q].keys.size(); ++k) {
            const std::string &key = m.queries[q].keys[k];
            state->reply.results[q].answers[k].key = key;
            QueryActor::Answer done = [this, env, state, q, k](std::int32_t status,
                                                               msg::Blob value) {
                auto &a = state->reply.results[q].answers[k];
                a.status = status;
                a.value = std::move(value);
                if (--state->left == 0)
                    answer_or_ask_host(env, state->request, std::move(state->reply));
            };
            const query::Key *entry = nullptr;
            for (const auto &e : query::keys())
                if (e.key == key) entry = &e;
            if (!entry) {
                log().debug("query of unknown key '{}'", key);
                done(PMIX_ERR_NOT_FOUND, {});
                continue;
            }
            entry->answer(*this, env, m.queries[q], done);
        }
    }
}

void QueryActor::failed(const Envelope &env, msg::ErrorReply &m) {
    log().debug("{} answered {}: {}", env.from, m.status, m.message);
    finish(env.id, m.status == PMIX_SUCCESS ? PMIX_ERROR : m.status, nullptr);
}

void QueryActor::finish(std::uint64_t id, std::int32_t status, const Envelope *reply) {
    auto it = awaiting_.find(id);
    if (it == awaiting_.end()) return;  // timed out already
    auto w = std::move(it->second);
    awaiting_.erase(it);
    reactor().cancel(w.timer);
    w.then(status, reply);
}

}  // namespace zpmix
