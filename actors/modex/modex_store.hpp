#pragma once
// ModexStore (`modex`): the data each process committed, direct-modex Get (waiting, bounded, for
// an owner that has not committed yet), the committed data a collecting fence gathers, and the
// publish/lookup/unpublish directory.
//
// Scopes: a commit carries the owner's data in three blobs (PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL
// puts). A reader on the owner's node gets local+global, a reader on another node remote+global,
// each blob tagged with its scope. Nodes are told apart by the hostnames of the registered
// namespaces' ranks; a process of a namespace the broker does not know is on the broker's node
// (BrokerMap's node).
//
// Several brokers (BrokerMap): each stores only its own node's commits. A Get for a process on
// another broker's node is relayed to that broker's `modex` (a ModexGet over the tree), which
// answers it as for a reader on another node; the answer goes back to the client under the
// client's own request id. The relay is bounded like a local wait (the Get's timeout, else the
// default), and fails with PMIX_ERR_UNREACH when that broker is lost (msg::TreeLost). Nothing of
// another node's data is kept here. A Get that came over the tree is never relayed again.
//
// Under a host (the server library): a Get for a process of a hosted job on another of the
// host's nodes goes to the host's direct_modex (msg::HostDirectModex), bounded and answered as a
// relay; a Get the host asks for (PMIx_server_dmodex_request, from the `host` actor) is answered
// as for a reader on another node.
//
// Publish/lookup: one directory per broker for ranges within its node (PROC_LOCAL, LOCAL); the
// root's for every other range, to which the other brokers relay those requests. Under a host, a
// hosted job's wider ranges go to the host's publish/lookup/unpublish upcalls (`host` actor).
//
// A client commits, publishes and looks up only as itself (msg::acting_proc, checked before any
// handler runs); over tcp it reads only its own job's data.
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/protocol/job.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class ModexStore : public Actor {
  public:
    // `default_wait` bounds a Get that gives no timeout (0: no limit).
    ModexStore(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
               const BrokerMap &brokers, std::chrono::milliseconds default_wait = {});

  private:
    struct Committed {
        msg::Blob local, remote, global;
        std::unordered_map<std::string, std::uint8_t> keys;  // key -> the scope it was put with
        std::uint32_t count = 0;                             // commits of this proc so far
    };
    // A direct-modex Get waiting for its owner's commit.
    struct Waiter {
        Envelope req;  // from + id, to answer
        msg::Proc proc;
        std::string key;
        bool same_node = true;      // the reader is on the owner's node
        std::uint32_t commits = 0;  // the least number of the owner's commits to answer from
        Reactor::TimerId timer = 0;
    };
    struct Entry {
        msg::Proc publisher;
        std::uint8_t range = 0;
        std::uint8_t persistence = 0;
        msg::Blob value;
    };
    // A Get relayed to the owner's broker, until its answer.
    static constexpr std::uint32_t kHost = UINT32_MAX;  // a relay to the host, not a broker
    struct Relay {
        Envelope req;              // the client's from + id
        std::uint32_t broker = 0;  // or kHost
        Reactor::TimerId timer = 0;
    };
    struct LookupWaiter {
        Envelope req;
        msg::Lookup lookup;
        Reactor::TimerId timer = 0;
    };

    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    std::chrono::milliseconds default_wait_;
    std::map<msg::Proc, Committed> committed_;
    std::map<std::uint64_t, Waiter> waiters_;
    std::map<std::uint64_t, Relay> relays_;        // by the request id sent to the owner's broker
    std::set<std::uint32_t> lost_;                 // brokers lost (tree.lost): no Get goes there
    std::multimap<std::string, Entry> published_;  // key -> entries (one per visible scope)
    std::map<std::uint64_t, LookupWaiter> lookups_;
    std::uint64_t next_waiter_ = 1;

    void commit(const Envelope &env, msg::Commit &m);
    void get(const Envelope &env, msg::ModexGet &m);
    void collect(const Envelope &env, msg::ModexCollect &m);
    void publish(const Envelope &env, msg::Publish &m);
    void lookup(const Envelope &env, msg::Lookup &m);
    void unpublish(const Envelope &env, msg::Unpublish &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void relayed(const Envelope &env, msg::ModexData &m);
    void relay_failed(const Envelope &env, msg::ErrorReply &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    void tree_joined(const Envelope &env, msg::TreeJoined &m);
    void relayed_ok(const Envelope &env, msg::Ok &m);
    void relayed_lookup(const Envelope &env, msg::LookupReply &m);
    // Whether a publish/lookup/unpublish in `range` goes to the root's directory, or (a hosted
    // job's) to the host's, and sending it there (bounded by timeout_ms, 0: no limit).
    bool directory_elsewhere(const Envelope &env, std::uint8_t range) const;
    bool directory_of_host(const msg::Proc &caller, std::uint8_t range) const;
    template <class Msg>
    void relay_to_root(const Envelope &env, const Msg &m, std::uint32_t timeout_ms);
    template <class Msg>
    void relay_to(const Envelope &env, const Msg &m, std::uint32_t timeout_ms,
                  const std::string &to);
    std::uint32_t default_wait() const { return static_cast<std::uint32_t>(default_wait_.count()); }

    // The node of a process (`here`, this broker's, for a process the table does not know, or
    // none).
    static const std::string &host_of(const NamespaceTable::Snapshot &namespaces,
                                      const msg::Proc &proc, const std::string &here);
    // Asks the owner's broker; `wait` bounds it (0: no limit).
    void relay(const Envelope &env, msg::ModexGet &m, std::uint32_t broker,
               std::chrono::milliseconds wait);
    bool ended(const msg::Proc &proc) const;
    // What a reader sees of the owner's data: local+global on its node, remote+global elsewhere.
    static msg::ProcData data_for(const msg::Proc &proc, const Committed &c, bool same_node);
    static bool readable(const Committed &c, const std::string &key, bool same_node);
    // Answers every waiting Get for `proc` that can be answered now.
    void settle_waiters(const msg::Proc &proc);
    // Answers the lookup when it can be answered now; returns whether it was.
    bool try_lookup(const Envelope &req, const msg::Lookup &m);
};

}  // namespace zpmix
