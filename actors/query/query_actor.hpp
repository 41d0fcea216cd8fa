#pragma once
// The broker's `query` actor (PMIx_Query_info, RFC0010): answers the queries of clients and
// tools, key by key, from the one table of keys (query_keys.cpp). A key nobody answers is
// PMIX_ERR_NOT_FOUND for that key alone; the reply goes when every key of every query is
// answered, each within `answer_timeout` (then PMIX_ERR_TIMEOUT for that key).
//
// What it reads: the namespace table (namespaces, job state), the broker map, the bus's handler
// table (what the caller may do), /proc (memory). What it asks: other actors, by message
// (`jobctl` for the process table, which gathers it across the tree), and under a hosting
// resource manager its query upcall (`hostsvc`) for what the broker cannot answer. A tcp client
// sees its own job only, as everywhere else.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include <pmix_common.h>

#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/query.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class QueryActor : public Actor {
  public:
    // A key's answer: its status and, on success, its value (query_value.hpp).
    using Answer = std::function<void(std::int32_t status, msg::Blob value)>;
    // Another actor's reply to ask(): nullptr with a status when it failed or timed out.
    using Then = std::function<void(std::int32_t status, const Envelope *reply)>;

    QueryActor(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
               const BrokerMap &brokers,
               std::chrono::milliseconds answer_timeout = std::chrono::seconds(12),
               bool to_host = false);

    // For the key table's answers.
    const NamespaceTable &namespaces() const { return namespaces_; }
    const BrokerMap &brokers() const { return brokers_; }
    Bus &the_bus() { return bus(); }
    // Whether the caller may read this job's information (a tcp client: its own job only).
    static bool may_read(const Envelope &req, const std::string &nspace);
    // Sends m to actor `to`; then() runs with its reply (a type listed in the constructor's
    // expect<>() lines), an ErrorReply's status, or PMIX_ERR_TIMEOUT after answer_timeout.
    template <class Msg>
    void ask(const std::string &to, const Msg &m, Then then) {
        const std::uint64_t id = next_id_++;
        awaiting_[id] = {std::move(then), reactor().after(answer_timeout_, [this, id] {
                             finish(id, PMIX_ERR_TIMEOUT, nullptr);
                         })};
        send(to, m, id);
    }

  private:
    struct Waiting {
        Then then;
        Reactor::TimerId timer = 0;
    };
    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    std::chrono::milliseconds answer_timeout_;
    std::uint64_t next_id_ = 1;
    std::unordered_map<std::uint64_t, Waiting> awaiting_;

    void request(const Envelope &env, msg::QueryRequest &m);
    // The replies ask() waits for: one expect<T>() line per reply type in the constructor.
    template <class Reply>
    void expect() {
        on(&QueryActor::answered<Reply>, Access::internal);
    }
    template <class Reply>
    void answered(const Envelope &env, Reply &) {
        finish(env.id, PMIX_SUCCESS, &env);
    }
    void failed(const Envelope &env, msg::ErrorReply &m);
    void finish(std::uint64_t id, std::int32_t status, const Envelope *reply);

    // Under a resource manager that hosts the broker (query_host.cpp): the keys the broker did
    // not answer, and the process tables of a hosted job (whose pids only the host knows), go to
    // the host's query upcall (`hostsvc`); its answers replace those, the rest stay the broker's.
    bool to_host_ = false;
    void answer_or_ask_host(const Envelope &env, const msg::QueryRequest &m, msg::QueryReply reply);
};

}  // namespace zpmix
