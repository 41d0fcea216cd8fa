#include "actors/pset/pset_registry.hpp"

#include <algorithm>
#include <chrono>

#include <pmix_common.h>

#include "actors/events/event_broker.hpp"
#include "actors/protocol/events.hpp"
#include "actors/runtime/unix_time.hpp"

namespace zpmix {

namespace {

bool holds(const std::vector<msg::Proc> &members, const msg::Proc &proc) {
    return std::any_of(members.begin(), members.end(), [&](const msg::Proc &m) {
        return m.nspace == proc.nspace && (m.rank == msg::kWildcardRank || m.rank == proc.rank);
    });
}

}  // namespace

PsetRegistry::PsetRegistry(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                           const BrokerMap &brokers, std::string broker)
    : Actor("pset", reactor, bus),
      namespaces_(namespaces),
      brokers_(brokers),
      broker_(std::move(broker)) {
    on(&PsetRegistry::define, Access::operator_);
    on(&PsetRegistry::remove, Access::operator_);
    on(&PsetRegistry::launched, Access::internal);
    on(&PsetRegistry::changed, Access::internal);
    on(&PsetRegistry::query, Access::session | Access::operator_);
    on(&PsetRegistry::namespace_ended, Access::internal);
    on(&PsetRegistry::event_published, Access::internal);
    on(&PsetRegistry::event_failed, Access::internal);
}

std::vector<msg::Pset> PsetRegistry::list(const msg::Proc &proc) const {
    std::map<std::string, std::vector<msg::Proc>> all;
    for (const auto &[nspace, record] : *namespaces_.snapshot())
        for (const auto &[name, ranks] : record->job->psets) {
            auto &members = all[name];
            for (std::uint32_t r : ranks) members.push_back({nspace, r});
        }
    for (const auto &[name, members] : defined_) all[name] = members;
    std::vector<msg::Pset> out;
    for (auto &[name, members] : all)
        if (proc.nspace.empty() || holds(members, proc)) out.push_back({name, std::move(members)});
    return out;
}

bool PsetRegistry::launch_set(const std::string &name) const {
    const auto snapshot = namespaces_.snapshot();
    return std::any_of(snapshot->begin(), snapshot->end(),
                       [&](const auto &ns) { return ns.second->job->psets.contains(name); });
}

void PsetRegistry::define(const Envelope &env, msg::PsetDefine &m) {
    if (m.name.empty() || m.members.empty())
        return reply_error(env, PMIX_ERR_BAD_PARAM, "a process set needs a name and members");
    if (defined_.contains(m.name) || launch_set(m.name))
        return reply_error(env, PMIX_ERR_EXISTS, "process set '" + m.name + "' exists");
    for (const auto &p : m.members) {
        const auto ns = namespaces_.find(p.nspace);
        if (!ns) return reply_error(env, PMIX_ERR_NOT_FOUND, "no job '" + p.nspace + "'");
        if (p.rank != msg::kWildcardRank && p.rank >= ns->size())
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               p.nspace + " has no rank " + std::to_string(p.rank));
    }
    std::sort(m.members.begin(), m.members.end());
    m.members.erase(std::unique(m.members.begin(), m.members.end()), m.members.end());
    log().info("process set '{}' defined ({} members)", m.name, m.members.size());
    publish(PMIX_PROCESS_SET_DEFINE, m.name, m.members);
    share({m.name, m.members});
    reply(env, msg::Ok{});
}

void PsetRegistry::launched(const Envelope &, msg::PsetLaunched &m) {
    for (const auto &[name, ranks] : m.psets) {
        std::vector<msg::Proc> members;
        for (std::uint32_t r : ranks) members.push_back({m.nspace, r});
        log().info("process set '{}' given at launch to {} ({} members)", name, m.nspace,
                   members.size());
        publish(PMIX_PROCESS_SET_DEFINE, name, members);
    }
}

void PsetRegistry::remove(const Envelope &env, msg::PsetDelete &m) {
    if (!defined_.contains(m.name))
        return reply_error(env, PMIX_ERR_NOT_FOUND,
                           launch_set(m.name) ? "process set '" + m.name +
                                                    "' was given at launch: it ends with its job"
                                              : "no process set '" + m.name + "'");
    log().info("process set '{}' deleted", m.name);
    publish(PMIX_PROCESS_SET_DELETE, m.name, {});
    share({m.name, {}});
    reply(env, msg::Ok{});
}

// Applied here at once (a query after the answer sees it), then on every other broker.
void PsetRegistry::share(msg::PsetChanged change) {
    if (!brokers_.view()->alone()) send(every_broker(name()), change);
    changed(Envelope{}, change);
}

void PsetRegistry::changed(const Envelope &env, msg::PsetChanged &m) {
    if (env.from == remote_address(brokers_.view()->rank, name())) return;  // ours, back
    if (m.members.empty())
        defined_.erase(m.name);
    else
        defined_[m.name] = std::move(m.members);
}

void PsetRegistry::query(const Envelope &env, msg::PsetQuery &m) {
    // A tcp client's secret vouches for its own job only: it learns the sets of its own
    // processes, and of their members only its job's.
    if (!env.tcp_client()) return reply(env, msg::PsetList{list(m.proc)});
    if (m.proc.nspace != env.session->nspace)
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                           "a tcp client may ask only of its own job's process sets");
    auto sets = list(m.proc);
    for (auto &set : sets)
        std::erase_if(set.members, [&](const msg::Proc &p) { return p.nspace != m.proc.nspace; });
    reply(env, msg::PsetList{std::move(sets)});
}

// A defined set goes with the last of its namespaces (each broker sees every job's end).
void PsetRegistry::namespace_ended(const Envelope &, msg::NamespaceEnded &) {
    const auto snapshot = namespaces_.snapshot();
    std::erase_if(defined_, [&](const auto &set) {
        return std::none_of(set.second.begin(), set.second.end(),
                            [&](const msg::Proc &p) { return snapshot->contains(p.nspace); });
    });
}

void PsetRegistry::publish(std::int32_t code, const std::string &name,
                           const std::vector<msg::Proc> &members) {
    msg::NotifyEvent n;
    n.event.status = code;
    n.event.source = {broker_, 0};
    n.event.range = static_cast<std::uint8_t>(msg::Range::global);
    n.event.timestamp = unix_time_s();
    InfoBlob info;
    info.add_string(PMIX_PSET_NAME, name);
    if (!members.empty()) info.add_procs(PMIX_PSET_MEMBERS, members);
    n.event.info = info.bytes();
    send("events", n, next_event_++);
}

void PsetRegistry::event_published(const Envelope &, msg::Ok &) {}

void PsetRegistry::event_failed(const Envelope &, msg::ErrorReply &m) {
    log().error("a process set event could not be published: {}", m.message);
}

}  // namespace zpmix
