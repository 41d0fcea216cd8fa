#include "actors/modex/modex_store.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <pmix_common.h>

#include "actors/protocol/host.hpp"

#include "actors/tree/topology.hpp"

namespace zpmix {

namespace {

// The keys of a blob (a msgpack map key -> [type, payload]), or DecodeError.
template <class Fn>
void for_each_entry(const msg::Blob &blob, Fn fn) {
    if (blob.empty()) return;
    auto handle = unpack_bounded(blob.data(), blob.size(), {}, true);  // values not copied
    const msgpack::object &obj = handle.get();
    if (obj.type != msgpack::type::MAP) throw DecodeError("a data blob is not a map");
    for (const auto &kv : obj.via.map) {
        if (kv.key.type != msgpack::type::STR) throw DecodeError("a data key is not a string");
        fn(kv.key.as<std::string>(), kv.val);
    }
}

Envelope return_address(const Envelope &env) {
    Envelope r;
    r.from = env.from;
    r.id = env.id;
    r.type = env.type;
    return r;
}

// Whether `reader`, looking in `range`, sees an entry that `e_pub` published in `e_range`.
bool visible(const msg::Proc &e_pub, std::uint8_t e_range, const msg::Proc &reader,
             std::uint8_t range) {
    auto within = [&](std::uint8_t r) {
        if (r == PMIX_RANGE_PROC_LOCAL) return e_pub == reader;
        if (r == PMIX_RANGE_NAMESPACE) return e_pub.nspace == reader.nspace;
        return true;  // one broker: local, session, global, rm all span it
    };
    return within(e_range) && within(range);
}

}  // namespace

ModexStore::ModexStore(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                       const BrokerMap &brokers, std::chrono::milliseconds default_wait)
    : Actor("modex", reactor, bus),
      namespaces_(namespaces),
      brokers_(brokers),
      default_wait_(default_wait) {
    on(&ModexStore::commit, Access::session);
    on(&ModexStore::get, Access::session);
    on(&ModexStore::collect, Access::internal);
    on(&ModexStore::publish, Access::session | Access::operator_);
    on(&ModexStore::lookup, Access::session | Access::operator_);
    on(&ModexStore::unpublish, Access::session | Access::operator_);
    on(&ModexStore::proc_ended, Access::internal);
    on(&ModexStore::namespace_ended, Access::internal);
    on(&ModexStore::relayed, Access::internal);
    on(&ModexStore::relay_failed, Access::internal);
    on(&ModexStore::relayed_ok, Access::internal);
    on(&ModexStore::relayed_lookup, Access::internal);
    on(&ModexStore::tree_lost, Access::internal);
    on(&ModexStore::tree_joined, Access::internal);
}

void ModexStore::commit(const Envelope &env, msg::Commit &m) {
    Committed c;
    const std::pair<const msg::Blob *, std::uint8_t> blobs[] = {
        {&m.local, PMIX_LOCAL}, {&m.remote, PMIX_REMOTE}, {&m.global, PMIX_GLOBAL}};
    for (const auto &[blob, scope] : blobs)
        for_each_entry(*blob, [&, scope = scope](std::string key, const msgpack::object &) {
            c.keys.insert_or_assign(std::move(key), scope);
        });
    c.local = std::move(m.local);
    c.remote = std::move(m.remote);
    c.global = std::move(m.global);
    Committed &slot = committed_[m.proc];
    c.count = slot.count + 1;
    slot = std::move(c);
    if (env.id) reply(env, msg::Ok{});
    settle_waiters(m.proc);
}

const std::string &ModexStore::host_of(const NamespaceTable::Snapshot &namespaces,
                                       const msg::Proc &proc, const std::string &here) {
    static const std::string elsewhere = "\x01elsewhere";  // no node's name
    auto ns = namespaces.find(proc.nspace);
    if (ns == namespaces.end() || proc.rank >= ns->second->job->procs.size()) return here;
    if (ns->second->elsewhere) return elsewhere;
    const std::string &host = ns->second->job->procs[proc.rank].hostname;
    return host.empty() ? here : host;
}

bool ModexStore::ended(const msg::Proc &proc) const {
    const auto ns = namespaces_.find(proc.nspace);
    return ns && ns->ended(proc.rank);
}

msg::ProcData ModexStore::data_for(const msg::Proc &proc, const Committed &c, bool same_node) {
    msg::ProcData d{proc, {}, {}};
    auto add = [&](const msg::Blob &blob, std::uint8_t scope) {
        if (blob.empty()) return;
        d.blobs.push_back(blob);
        d.scopes.push_back(scope);
    };
    if (same_node)
        add(c.local, PMIX_LOCAL);
    else
        add(c.remote, PMIX_REMOTE);
    add(c.global, PMIX_GLOBAL);
    return d;
}

bool ModexStore::readable(const Committed &c, const std::string &key, bool same_node) {
    if (key.empty()) return true;  // whatever was committed
    auto k = c.keys.find(key);
    if (k == c.keys.end()) return false;
    return k->second == PMIX_GLOBAL || k->second == (same_node ? PMIX_LOCAL : PMIX_REMOTE);
}

void ModexStore::get(const Envelope &env, msg::ModexGet &m) {
    // A tcp client's secret vouches for its own job only.
    if (env.tcp_client() && m.proc.nspace != env.session->nspace)
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                           "a tcp client may read only its own job's data");
    if (m.proc.rank == msg::kWildcardRank) {
        reply_error(env, PMIX_ERR_BAD_PARAM, "direct modex needs one rank");
        return;
    }
    // Data that can never come is not waited for: a rank its job does not have, or a namespace
    // this broker does not know (unless a process of it committed here: a singleton's).
    const auto snapshot = namespaces_.snapshot();
    if (auto job = snapshot->find(m.proc.nspace); job != snapshot->end()) {
        if (m.proc.rank >= job->second->size())
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               fmt::format("{} has no rank {} (size {})", m.proc.nspace,
                                           m.proc.rank, job->second->size()));
    } else if (auto c = committed_.lower_bound({m.proc.nspace, 0});
               c == committed_.end() || c->first.nspace != m.proc.nspace) {
        return reply_error(env, PMIX_ERR_NOT_FOUND, "unknown namespace '" + m.proc.nspace + "'");
    }
    const auto view = brokers_.view();
    const std::string &owner = host_of(*snapshot, m.proc, view->node());
    if (m.held_only) {
        auto it = committed_.find(m.proc);
        if (it != committed_.end() && readable(it->second, m.key, owner == view->node()))
            return reply(env, msg::ModexData{data_for(m.proc, it->second, owner == view->node())});
        return reply_error(env, PMIX_ERR_NOT_FOUND, "not held by this broker");
    }
    const auto wait = m.timeout_ms > 0 ? std::chrono::milliseconds(m.timeout_ms) : default_wait_;
    // Over the tree the reader is on the asking broker's node, never on this one; so is it for
    // a Get the host asks for another of its nodes (PMIx_server_dmodex_request).
    const bool from_broker =
        (env.session && env.session->role == PeerSession::Role::broker) || env.from == "host";
    if (!from_broker && view->alone() && owner != view->node()) {
        // A host's job (the server library): the host's direct_modex brings it from its node.
        if (auto job = snapshot->find(m.proc.nspace); job != snapshot->end() && job->second->hosted)
            return relay(env, m, kHost, wait);
    }
    if (!from_broker && !view->alone() && owner != view->node()) {
        const auto broker = view->broker_of(owner);
        if (!broker)
            return reply_error(env, PMIX_ERR_UNREACH, "no broker serves node '" + owner + "'");
        if (lost_.contains(*broker))
            return reply_error(env, PMIX_ERR_UNREACH, "the broker of node '" + owner + "' is lost");
        return relay(env, m, *broker, wait);
    }
    const bool near = !from_broker && owner == host_of(*snapshot, m.reader, view->node());
    auto it = committed_.find(m.proc);
    if (it != committed_.end() && it->second.count >= m.commits) {
        if (readable(it->second, m.key, near))
            reply(env, msg::ModexData{data_for(m.proc, it->second, near)});
        else
            reply_error(env, PMIX_ERR_NOT_FOUND,
                        "'" + m.key + "' was not committed for the reader's node");
        return;
    }
    if (ended(m.proc)) {
        reply_error(env, PMIX_ERR_NOT_FOUND, "the process ended without committing");
        return;
    }
    const std::uint64_t id = next_waiter_++;
    Waiter w{return_address(env), m.proc, m.key, near, m.commits, 0};
    if (wait.count() > 0)
        w.timer = reactor().after(wait, [this, id] {
            auto node = waiters_.extract(id);
            if (node) reply_error(node.mapped().req, PMIX_ERR_TIMEOUT, "direct modex timed out");
        });
    waiters_.emplace(id, std::move(w));
}

void ModexStore::settle_waiters(const msg::Proc &proc) {
    auto c = committed_.find(proc);
    const bool gone = ended(proc);
    for (auto it = waiters_.begin(); it != waiters_.end();) {
        Waiter &w = it->second;
        if (w.proc != proc) {
            ++it;
            continue;
        }
        const bool in = c != committed_.end() && c->second.count >= w.commits;
        if (in && readable(c->second, w.key, w.same_node))
            reply(w.req, msg::ModexData{data_for(proc, c->second, w.same_node)});
        else if (in)
            reply_error(w.req, PMIX_ERR_NOT_FOUND,
                        "'" + w.key + "' was not committed for the reader's node");
        else if (gone)
            reply_error(w.req, PMIX_ERR_NOT_FOUND, "the process ended without committing");
        else {
            ++it;
            continue;
        }
        if (w.timer) reactor().cancel(w.timer);
        it = waiters_.erase(it);
    }
}

void ModexStore::relay(const Envelope &env, msg::ModexGet &m, std::uint32_t broker,
                       std::chrono::milliseconds wait) {
    const std::uint64_t id = next_waiter_++;
    Relay r{return_address(env), broker, 0};
    if (wait.count() > 0) {
        m.timeout_ms = static_cast<std::uint32_t>(wait.count());  // the owner's broker's bound
        r.timer = reactor().after(wait, [this, id] {
            auto node = relays_.extract(id);
            if (node) reply_error(node.mapped().req, PMIX_ERR_TIMEOUT, "direct modex timed out");
        });
    }
    relays_.emplace(id, std::move(r));
    if (broker == kHost) return send("host", msg::HostDirectModex{m.proc, m.timeout_ms}, id);
    send(remote_address(broker, name()), m, id);
}

void ModexStore::relayed(const Envelope &env, msg::ModexData &m) {
    auto node = relays_.extract(env.id);
    if (!node) return;  // timed out, or its broker was lost
    if (node.mapped().timer) reactor().cancel(node.mapped().timer);
    reply(node.mapped().req, m);
}

void ModexStore::relay_failed(const Envelope &env, msg::ErrorReply &m) {
    auto node = relays_.extract(env.id);
    if (!node) return;
    if (node.mapped().timer) reactor().cancel(node.mapped().timer);
    reply_error(node.mapped().req, m.status, std::move(m.message));
}

// The Gets relayed to a lost broker fail: those under a lost child, or, when the parent is
// lost, every broker outside this one's subtree.
// A standing tree's broker that joined again is reached again.
void ModexStore::tree_joined(const Envelope &, msg::TreeJoined &m) {
    lost_.erase(m.rank);
}

void ModexStore::tree_lost(const Envelope &, msg::TreeLost &m) {
    const auto view = brokers_.view();
    if (view->alone()) return;
    const auto mine = tree::Topology(view->size(), view->radix).subtree(view->rank);
    lost_.insert(m.brokers.begin(), m.brokers.end());
    for (auto it = relays_.begin(); it != relays_.end();) {
        const std::uint32_t b = it->second.broker;
        const bool lost = std::find(m.brokers.begin(), m.brokers.end(), b) != m.brokers.end() ||
                          (m.parent && !std::binary_search(mine.begin(), mine.end(), b));
        if (!lost) {
            ++it;
            continue;
        }
        if (it->second.timer) reactor().cancel(it->second.timer);
        reply_error(it->second.req, PMIX_ERR_UNREACH,
                    "the broker of the process's node (" + std::to_string(b) + ") is lost");
        it = relays_.erase(it);
    }
}

// For the fence's participants on this node: as its readers see them, or with `remote`, as a
// reader on another node does.
void ModexStore::collect(const Envelope &env, msg::ModexCollect &m) {
    msg::ModexCollected out;
    const auto snapshot = namespaces_.snapshot();
    const auto view = brokers_.view();
    auto add = [&](const msg::Proc &p, const Committed &c) {
        out.data.push_back(
            data_for(p, c, !m.remote && host_of(*snapshot, p, view->node()) == view->node()));
    };
    for (const auto &p : m.procs) {
        if (p.rank == msg::kWildcardRank) {
            for (auto it = committed_.lower_bound({p.nspace, 0});
                 it != committed_.end() && it->first.nspace == p.nspace; ++it)
                add(it->first, it->second);
        } else if (auto it = committed_.find(p); it != committed_.end()) {
            add(p, it->second);
        }
    }
    reply(env, out);
}

void ModexStore::proc_ended(const Envelope &, msg::ProcEnded &m) {
    const msg::Proc proc{m.nspace, m.rank};
    settle_waiters(proc);
    std::erase_if(published_, [&](const auto &kv) {
        return kv.second.persistence == PMIX_PERSIST_PROC && kv.second.publisher == proc;
    });
}

// The job is over: its data goes, and what it published for no longer than itself.
void ModexStore::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    std::erase_if(committed_, [&](const auto &kv) { return kv.first.nspace == m.nspace; });
    std::erase_if(published_, [&](const auto &kv) {
        return kv.second.publisher.nspace == m.nspace &&
               (kv.second.persistence == PMIX_PERSIST_PROC ||
                kv.second.persistence == PMIX_PERSIST_APP);
    });
}

// Over several brokers the root's modex keeps the directory of what is published beyond a node
// (every range but PROC_LOCAL and LOCAL): another broker relays those requests there, and the
// answer back under the client's request id, as it does a Get.
bool ModexStore::directory_elsewhere(const Envelope &env, std::uint8_t range) const {
    const auto view = brokers_.view();
    const bool from_broker = env.session && env.session->role == PeerSession::Role::broker;
    return !from_broker && !view->alone() && view->rank != 0 && range != PMIX_RANGE_PROC_LOCAL &&
           range != PMIX_RANGE_LOCAL;
}

static msg::HostPublish for_host(const msg::Publish &m) {
    return {m};
}
static msg::HostLookup for_host(const msg::Lookup &m) {
    return {m};
}
static msg::HostUnpublish for_host(const msg::Unpublish &m) {
    return {m};
}

// Under a host, its directory (the publish, lookup and unpublish upcalls) holds what a hosted
// job publishes beyond a node; this broker's holds the node's ranges.
bool ModexStore::directory_of_host(const msg::Proc &caller, std::uint8_t range) const {
    if (range == PMIX_RANGE_PROC_LOCAL || range == PMIX_RANGE_LOCAL) return false;
    const auto snapshot = namespaces_.snapshot();
    const auto job = snapshot->find(caller.nspace);
    return job != snapshot->end() && job->second->hosted;
}

template <class Msg>
void ModexStore::relay_to_root(const Envelope &env, const Msg &m, std::uint32_t timeout_ms) {
    if (directory_of_host(m.proc, m.range)) return relay_to(env, for_host(m), timeout_ms, "host");
    if (lost_.contains(0)) return reply_error(env, PMIX_ERR_UNREACH, "the root broker is lost");
    relay_to(env, m, timeout_ms, remote_address(0, name()));
}

template <class Msg>
void ModexStore::relay_to(const Envelope &env, const Msg &m, std::uint32_t timeout_ms,
                          const std::string &to) {
    const std::uint64_t id = next_waiter_++;
    Relay r{return_address(env), 0, 0};
    if (timeout_ms > 0)
        r.timer = reactor().after(std::chrono::milliseconds(timeout_ms), [this, id] {
            auto node = relays_.extract(id);
            if (node) reply_error(node.mapped().req, PMIX_ERR_TIMEOUT, "timed out");
        });
    relays_.emplace(id, std::move(r));
    send(to, m, id);
}

void ModexStore::relayed_ok(const Envelope &env, msg::Ok &m) {
    auto node = relays_.extract(env.id);
    if (!node) return;
    if (node.mapped().timer) reactor().cancel(node.mapped().timer);
    reply(node.mapped().req, m);
}

void ModexStore::relayed_lookup(const Envelope &env, msg::LookupReply &m) {
    auto node = relays_.extract(env.id);
    if (!node) return;
    if (node.mapped().timer) reactor().cancel(node.mapped().timer);
    reply(node.mapped().req, m);
}

void ModexStore::publish(const Envelope &env, msg::Publish &m) {
    if (directory_elsewhere(env, m.range) || directory_of_host(m.proc, m.range))
        return relay_to_root(env, m, default_wait());
    std::vector<std::pair<std::string, msg::Blob>> entries;
    for_each_entry(m.data, [&](std::string key, const msgpack::object &value) {
        msgpack::sbuffer buf;
        msgpack::pack(buf, value);
        entries.emplace_back(std::move(key), msg::Blob(buf.data(), buf.data() + buf.size()));
    });
    for (const auto &[key, value] : entries) {
        auto [lo, hi] = published_.equal_range(key);
        for (auto it = lo; it != hi; ++it)
            if (visible(it->second.publisher, it->second.range, m.proc, m.range)) {
                reply_error(env, PMIX_ERR_DUPLICATE_KEY, "'" + key + "' is already published");
                return;
            }
    }
    for (auto &[key, value] : entries)
        published_.emplace(key, Entry{m.proc, m.range, m.persistence, std::move(value)});
    reply(env, msg::Ok{});
    for (auto it = lookups_.begin(); it != lookups_.end();) {
        if (try_lookup(it->second.req, it->second.lookup)) {
            if (it->second.timer) reactor().cancel(it->second.timer);
            it = lookups_.erase(it);
        } else {
            ++it;
        }
    }
}

bool ModexStore::try_lookup(const Envelope &req, const msg::Lookup &m) {
    msg::LookupReply out;
    std::vector<std::multimap<std::string, Entry>::iterator> read;
    for (const auto &key : m.keys) {
        auto [lo, hi] = published_.equal_range(key);
        for (auto it = lo; it != hi; ++it)
            if (visible(it->second.publisher, it->second.range, m.proc, m.range)) {
                out.found.push_back({it->second.publisher, key, it->second.value});
                read.push_back(it);
                break;
            }
    }
    if (m.wait && out.found.size() < m.keys.size()) return false;
    if (out.found.empty()) {
        reply_error(req, PMIX_ERR_NOT_FOUND, "no such key published");
        return true;
    }
    for (auto it : read)
        if (it->second.persistence == PMIX_PERSIST_FIRST_READ) published_.erase(it);
    reply(req, out);
    return true;
}

void ModexStore::lookup(const Envelope &env, msg::Lookup &m) {
    if (m.keys.empty()) {
        reply_error(env, PMIX_ERR_BAD_PARAM, "lookup without keys");
        return;
    }
    if (directory_elsewhere(env, m.range) || directory_of_host(m.proc, m.range))
        return relay_to_root(env, m, m.wait ? m.timeout_ms : default_wait());
    if (try_lookup(env, m)) return;
    const std::uint64_t id = next_waiter_++;
    LookupWaiter w{return_address(env), std::move(m), 0};
    if (w.lookup.timeout_ms > 0)
        w.timer = reactor().after(std::chrono::milliseconds(w.lookup.timeout_ms), [this, id] {
            auto node = lookups_.extract(id);
            if (node) reply_error(node.mapped().req, PMIX_ERR_TIMEOUT, "lookup timed out");
        });
    lookups_.emplace(id, std::move(w));
}

void ModexStore::unpublish(const Envelope &env, msg::Unpublish &m) {
    if (directory_elsewhere(env, m.range) || directory_of_host(m.proc, m.range))
        return relay_to_root(env, m, default_wait());
    const std::set<std::string> keys(m.keys.begin(), m.keys.end());
    const auto removed = std::erase_if(published_, [&](const auto &kv) {
        return kv.second.publisher == m.proc && (keys.empty() || keys.contains(kv.first));
    });
    if (removed == 0)
        reply_error(env, PMIX_ERR_NOT_FOUND, "nothing of the caller's was published");
    else
        reply(env, msg::Ok{});
}

}  // namespace zpmix
