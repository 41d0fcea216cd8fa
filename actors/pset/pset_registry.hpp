#pragma once
// PsetRegistry (`pset`): process sets. A job's launch-time sets (`zpmix run --pset`) are in its
// JobInfo and live as long as the job; the sets `zpmix pset define` makes live until `zpmix pset
// delete`, or until every namespace they name has ended.
//
// A job's launch-time sets are announced as definitions are: the broker that launched the job
// (its launcher's `pset.launched`) publishes PMIX_PROCESS_SET_DEFINE for each, once, global.
//
// Every broker keeps the same defined sets: the broker an operator asks checks the request against
// what it knows, applies the change and sends it (PsetChanged) to every other broker, each of
// which applies it; it also publishes the event, PMIX_PROCESS_SET_DEFINE or _DELETE, once, with a
// global range (the events actor relays it to every broker's subscribers), carrying PMIX_PSET_NAME
// and, for a definition, PMIX_PSET_MEMBERS. Two operators defining one name at once on two
// brokers both succeed, and the later change wins everywhere: names are the operator's to keep
// apart.
//
// `list(proc)` is the one place that says which sets exist and who is in them: pset.query
// answers with it, for PMIx_Get(PMIX_PSET_NAMES) and the pset queries.
#include <map>
#include <string>
#include <vector>

#include "actors/protocol/job.hpp"
#include "actors/protocol/pset.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class PsetRegistry : public Actor {
  public:
    // `broker`: this broker's name, the source of its events.
    PsetRegistry(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                 const BrokerMap &brokers, std::string broker);

    // The sets that exist now, by name (launch-time ones of the registered jobs, then the
    // defined ones), only those holding `proc` when its nspace is not empty (a wildcard member
    // holds every rank of its namespace).
    std::vector<msg::Pset> list(const msg::Proc &proc) const;

  private:
    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    const std::string broker_;
    std::map<std::string, std::vector<msg::Proc>> defined_;
    std::uint64_t next_event_ = 1;

    void define(const Envelope &env, msg::PsetDefine &m);
    void remove(const Envelope &env, msg::PsetDelete &m);
    void launched(const Envelope &env, msg::PsetLaunched &m);
    void changed(const Envelope &env, msg::PsetChanged &m);
    void query(const Envelope &env, msg::PsetQuery &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void event_published(const Envelope &env, msg::Ok &m);
    void event_failed(const Envelope &env, msg::ErrorReply &m);

    bool launch_set(const std::string &name) const;
    // Applies the change here and on every other broker.
    void share(msg::PsetChanged change);
    void publish(std::int32_t code, const std::string &name, const std::vector<msg::Proc> &members);
};

}  // namespace zpmix
