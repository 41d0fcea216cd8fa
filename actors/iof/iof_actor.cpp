#include "actors/iof/iof_actor.hpp"

#include <algorithm>

#include <pmix_common.h>

#include "actors/protocol/host_services.hpp"
#include "actors/runtime/unix_time.hpp"

namespace zpmix {

IofActor::IofActor(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                   const BrokerMap &brokers, Settings settings)
    : Actor("iof", reactor, bus), namespaces_(namespaces), brokers_(brokers), settings_(settings) {
    on(&IofActor::output, Access::internal);
    on(&IofActor::pull, Access::session | Access::operator_);
    on(&IofActor::ack, Access::session | Access::operator_);
    on(&IofActor::deregister, Access::session | Access::operator_);
    on(&IofActor::push, Access::session | Access::operator_);
    on(&IofActor::input_taken, Access::internal);
    on(&IofActor::refused, Access::internal);
    on(&IofActor::keep, Access::internal);
    on(&IofActor::ended, Access::internal);
    on(&IofActor::session_closed, Access::internal);
    on(&IofActor::tree_lost, Access::internal);
    on(&IofActor::relay_pulled, Access::internal);
    on(&IofActor::relay_deliver, Access::internal);
    on(&IofActor::relay_deregistered, Access::internal);
}

bool IofActor::may_use(const Envelope &env, const std::vector<msg::Proc> &procs) {
    if (!env.session || !env.session->is_client()) return true;  // a tool, or an actor
    return std::all_of(procs.begin(), procs.end(),
                       [&](const msg::Proc &p) { return p.nspace == env.session->nspace; });
}

bool IofActor::matches(const Pull &p, const msg::IofChunk &c) {
    if (!(p.channels & c.channel)) return false;
    return std::any_of(p.procs.begin(), p.procs.end(), [&](const msg::Proc &q) {
        return q.nspace == c.source.nspace &&
               (q.rank == msg::kWildcardRank || q.rank == c.source.rank);
    });
}

void IofActor::enqueue(Queue &q, const msg::IofChunk &c, std::size_t limit, std::uint8_t policy) {
    const std::size_t n = c.data.size();
    if (policy == msg::kIofLossless) {
        q.chunks.push_back(c);
        q.bytes += n;
        return;
    }
    if (n > limit || (policy == msg::kIofDropNewest && q.bytes + n > limit)) {
        q.dropped += n;
        return;
    }
    while (q.bytes + n > limit) {
        q.bytes -= q.chunks.front().data.size();
        q.dropped += q.chunks.front().data.size();
        q.chunks.pop_front();
    }
    q.chunks.push_back(c);
    q.bytes += n;
}

void IofActor::output(const Envelope &, msg::Output &m) {
    flows_[{m.nspace, m.broker}].received += m.data.size();
    msg::IofChunk c{{m.nspace, m.rank},
                    static_cast<std::uint16_t>(m.fd == 2 ? msg::kIofStderr : msg::kIofStdout),
                    unix_time_us(),
                    std::move(m.data)};
    for (auto &[key, p] : pulls_)
        if (matches(p, c)) offer(key, p, c);
    Queue &cache = jobs_[c.source.nspace];
    enqueue(cache, c, settings_.cache_bytes, msg::kIofDropOldest);  // history: the oldest goes
    acknowledge(c.source.nspace, false);
}

void IofActor::offer(const PullKey &key, Pull &p, const msg::IofChunk &c) {
    enqueue(p.queue, c, p.cache_bytes, p.policy);
    if (p.policy == msg::kIofLossless && p.queue.bytes >= p.cache_bytes) p.holding = true;
    flush(key, p, false);
}

bool IofActor::pulls_job(const Pull &p, const std::string &nspace) {
    return std::any_of(p.procs.begin(), p.procs.end(),
                       [&](const msg::Proc &q) { return q.nspace == nspace; });
}

bool IofActor::held(const std::string &nspace) const {
    return std::any_of(pulls_.begin(), pulls_.end(), [&](const auto &kp) {
        return kp.second.holding && pulls_job(kp.second, nspace);
    });
}

void IofActor::acknowledge(const std::string &nspace, bool all) {
    if (held(nspace)) return;
    const auto view = brokers_.view();
    for (auto it = flows_.lower_bound({nspace, 0}); it != flows_.end() && it->first.first == nspace;
         ++it) {
        Flow &f = it->second;
        const std::uint64_t unacked = f.received - f.acked;
        if (unacked == 0 || (!all && unacked < msg::kOutputAckBytes)) continue;
        f.acked = f.received;
        const std::uint32_t broker = it->first.second;
        send(broker == view->rank ? std::string("launcher") : remote_address(broker, "launcher"),
             msg::OutputAck{nspace, broker, f.acked});
    }
}

void IofActor::flush(const PullKey &key, Pull &p, bool all) {
    if (p.queue.chunks.empty() && p.queue.dropped == 0) return;
    // Buffering: wait for buffering_bytes, at most the buffering time.
    if (!all && !p.due && p.buffering_bytes > 0 && p.queue.bytes < p.buffering_bytes) {
        if (p.buffering.count() > 0 && !p.timer)
            p.timer = reactor().after(p.buffering, [this, key] {
                auto it = pulls_.find(key);
                if (it == pulls_.end()) return;
                it->second.timer = 0;
                it->second.due = true;
                flush(key, it->second, false);
            });
        return;
    }
    while ((all || p.in_flight < kWindow) && (!p.queue.chunks.empty() || p.queue.dropped > 0)) {
        msg::IofDeliver d;
        std::size_t bytes = 0;
        while (!p.queue.chunks.empty() &&
               (d.chunks.empty() || bytes + p.queue.chunks.front().data.size() <= kMaxDelivery)) {
            bytes += p.queue.chunks.front().data.size();
            d.chunks.push_back(std::move(p.queue.chunks.front()));
            p.queue.chunks.pop_front();
        }
        p.queue.bytes -= bytes;
        d.dropped = std::exchange(p.queue.dropped, 0);
        if (d.dropped)
            log().info("pull {} of {}: {} bytes dropped", key.second, key.first, d.dropped);
        send(key.first, d, key.second);
        ++p.in_flight;
    }
    if (p.queue.chunks.empty()) {
        p.due = false;
        if (p.timer) reactor().cancel(std::exchange(p.timer, 0));
    }
    // A lossless pull that was full lets its jobs go on once its queue is half empty.
    if (p.holding && p.queue.bytes < p.cache_bytes / 2) {
        p.holding = false;
        for (const auto &q : p.procs) acknowledge(q.nspace, true);
    }
}

void IofActor::pull(const Envelope &env, msg::IofPull &m) {
    if (m.procs.empty() || m.channels == 0)
        return reply_error(env, PMIX_ERR_BAD_PARAM, "a pull names procs and channels");
    if (!may_use(env, m.procs))
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "a client pulls its own job only");
    if (pulls_.size() >= settings_.max_pulls)
        return reply_error(env, PMIX_ERR_OUT_OF_RESOURCE, "too many pulls on this broker");
    const PullKey key{env.from, env.id};
    if (pulls_.contains(key) || relayed_.contains(key))
        return reply_error(env, PMIX_ERR_BAD_PARAM, "a pull of that id is open already");
    if (brokers_.view()->rank != 0) return relay_pull(env, m);
    Pull p;
    p.procs = std::move(m.procs);
    p.channels = m.channels;
    p.cache_bytes = m.cache_bytes ? m.cache_bytes : settings_.cache_bytes;
    p.policy = m.policy <= msg::kIofDropNewest ? m.policy : msg::kIofLossless;
    p.buffering_bytes = m.buffering_bytes;
    p.buffering = std::chrono::milliseconds(m.buffering_ms);
    reply(env, msg::IofPulled{});
    tell_host(p.procs, p.channels);
    // What the jobs wrote before: the cache of each job named, then what comes.
    std::vector<std::string> seen;
    for (const auto &q : p.procs) {
        if (std::find(seen.begin(), seen.end(), q.nspace) != seen.end()) continue;
        seen.push_back(q.nspace);
        auto it = jobs_.find(q.nspace);
        if (it == jobs_.end()) continue;
        p.queue.dropped += it->second.dropped;  // what the cache lost before this pull
        for (const auto &c : it->second.chunks)
            if (matches(p, c)) enqueue(p.queue, c, p.cache_bytes, p.policy);
    }
    auto [it, _] = pulls_.emplace(key, std::move(p));
    flush(key, it->second, false);
}

void IofActor::ack(const Envelope &env, msg::IofAck &m) {
    auto it = pulls_.find({env.from, m.pull});
    if (it == pulls_.end()) {
        if (auto r = relayed_.find({env.from, m.pull}); r != relayed_.end())
            send(remote_address(0, name()), msg::IofAck{r->second});
        return;
    }
    Pull &p = it->second;
    if (p.in_flight > 0) --p.in_flight;
    flush(it->first, p, false);
}

void IofActor::deregister(const Envelope &env, msg::IofDeregister &m) {
    auto it = pulls_.find({env.from, m.pull});
    if (it == pulls_.end()) {
        auto r = relayed_.find({env.from, m.pull});
        if (r == relayed_.end()) return reply_error(env, PMIX_ERR_NOT_FOUND, "no such pull");
        // Answered once the root has stopped it: nothing of it comes after the answer.
        const std::uint64_t id = next_id_++;
        deregistering_.emplace(id, env);
        send(remote_address(0, name()), msg::IofDeregister{r->second}, id);
        drop_relay(r->second);
        return;
    }
    // What waits for its buffering is delivered now, before the answer (the standard's flush).
    it->second.due = true;
    flush(it->first, it->second, true);
    drop_pull(it);
    reply(env, msg::Ok{});
}

void IofActor::tell_host(const std::vector<msg::Proc> &procs, std::uint16_t channels) {
    msg::HostIofPull m{{}, channels};
    for (const auto &q : procs)
        if (const auto ns = namespaces_.find(q.nspace); ns && ns->hosted) m.procs.push_back(q);
    if (!m.procs.empty()) send("hostsvc", m);
}

void IofActor::drop_pull(std::map<PullKey, Pull>::iterator it) {
    if (it->second.timer) reactor().cancel(it->second.timer);
    const bool holding = it->second.holding;
    const std::vector<msg::Proc> procs = holding ? it->second.procs : std::vector<msg::Proc>{};
    pulls_.erase(it);
    for (const auto &q : procs) acknowledge(q.nspace, true);  // nothing waits for it any more
}

void IofActor::session_closed(const Envelope &, msg::SessionClosed &m) {
    for (auto it = pulls_.lower_bound({m.peer, 0});
         it != pulls_.end() && it->first.first == m.peer;)
        drop_pull(it++);
    for (auto it = relayed_.lower_bound({m.peer, 0});
         it != relayed_.end() && it->first.first == m.peer;) {
        const std::uint64_t id = (it++)->second;
        send(remote_address(0, name()), msg::IofDeregister{id});
        drop_relay(id);
    }
    std::erase_if(keep_for_, [&](const auto &k) { return k.second == m.peer; });
    std::erase_if(kept_, [&](const auto &k) {
        if (k.second != m.peer) return false;
        jobs_.erase(k.first);
        return true;
    });
}

// The root: the pulls relayed by lost brokers go. A broker that lost the root stops.
void IofActor::tree_lost(const Envelope &, msg::TreeLost &m) {
    for (auto it = pulls_.begin(); it != pulls_.end();) {
        const auto from = sender_broker(it->first.first);
        if (from && std::binary_search(m.brokers.begin(), m.brokers.end(), *from))
            drop_pull(it++);
        else
            ++it;
    }
}

// ---- pulls relayed to the root

void IofActor::relay_pull(const Envelope &env, const msg::IofPull &m) {
    const std::uint64_t id = next_id_++;
    Relay &r = relays_[id];
    r.puller = {env.from, env.id};
    r.request = env;
    r.timer = reactor().after(settings_.relay_timeout, [this, id] {
        auto it = relays_.find(id);
        if (it == relays_.end()) return;
        it->second.timer = 0;
        reply_error(it->second.request, PMIX_ERR_TIMEOUT,
                    "the root broker did not answer the pull");
        send(remote_address(0, name()), msg::IofDeregister{id});  // should it come late
        drop_relay(id);
    });
    relayed_.emplace(r.puller, id);
    send(remote_address(0, name()), m, id);
}

void IofActor::drop_relay(std::uint64_t id) {
    auto it = relays_.find(id);
    if (it == relays_.end()) return;
    if (it->second.timer) reactor().cancel(it->second.timer);
    relayed_.erase(it->second.puller);
    relays_.erase(it);
}

void IofActor::relay_pulled(const Envelope &env, msg::IofPulled &m) {
    auto it = relays_.find(env.id);
    if (it == relays_.end() || !it->second.timer) return;
    reactor().cancel(std::exchange(it->second.timer, 0));
    reply(it->second.request, m);
}

void IofActor::relay_deliver(const Envelope &env, msg::IofDeliver &m) {
    auto it = relays_.find(env.id);
    if (it == relays_.end()) return;  // deregistered: the root stops too
    send(it->second.puller.first, m, it->second.puller.second);
}

void IofActor::relay_deregistered(const Envelope &env, msg::Ok &m) {
    auto node = deregistering_.extract(env.id);
    if (!node.empty()) reply(node.mapped(), m);
}

void IofActor::keep(const Envelope &, msg::IofKeep &m) {
    keep_for_[m.nspace] = std::move(m.peer);
}

void IofActor::ended(const Envelope &, msg::NamespaceEnded &m) {
    // Nothing more comes of the job: its pulls get what their buffering held back.
    for (auto &[key, p] : pulls_)
        if (std::any_of(p.procs.begin(), p.procs.end(),
                        [&](const msg::Proc &q) { return q.nspace == m.nspace; })) {
            p.due = true;
            flush(key, p, false);
        }
    std::erase_if(flows_, [&](const auto &f) { return f.first.first == m.nspace; });
    auto keep = keep_for_.extract(m.nspace);
    if (keep.empty()) {
        jobs_.erase(m.nspace);
        return;
    }
    jobs_.try_emplace(m.nspace);  // a job that wrote nothing has no cache yet
    kept_.emplace_back(m.nspace, std::move(keep.mapped()));
    if (kept_.size() > kMaxKept) {
        log().info("the output of {} is no longer kept for its tool ({} ended jobs are)",
                   kept_.front().first, kMaxKept);
        jobs_.erase(kept_.front().first);
        kept_.pop_front();
    }
}

// ---- input

void IofActor::push(const Envelope &env, msg::IofPush &m) {
    if (m.targets.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, "no target to push to");
    if (!may_use(env, m.targets))
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "a client feeds its own job only");
    // A hosted job's stdin is the resource manager's (its push_stdin upcall answers).
    if (const auto ns = namespaces_.find(m.targets.front().nspace); ns && ns->hosted) {
        const msg::Proc source = env.session && env.session->is_client()
                                     ? msg::Proc{env.session->nspace, env.session->rank}
                                     : msg::Proc{};
        return send("hostsvc", msg::HostStdin{source, std::move(m.targets), std::move(m.data),
                                              m.eof, env.from, env.id});
    }
    const auto view = brokers_.view();
    // One Input per namespace and broker: a wildcard is every stdin rank of every broker.
    std::map<std::pair<std::string, std::uint32_t>, std::vector<std::uint32_t>> inputs;
    std::map<std::pair<std::string, std::uint32_t>, bool> whole;
    for (const auto &t : m.targets) {
        auto rec = namespaces_.find(t.nspace);
        if (!rec) return reply_error(env, PMIX_ERR_NOT_FOUND, "no job " + t.nspace);
        const auto &procs = rec->job->procs;
        auto broker_of = [&](const msg::ProcInfo &i) {
            return view->size() > 1 ? view->broker_of(i.hostname).value_or(0) : 0;
        };
        if (t.rank == msg::kWildcardRank) {
            for (const auto &i : procs) whole[{t.nspace, broker_of(i)}] = true;
            continue;
        }
        if (t.rank >= procs.size())
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               "no rank " + std::to_string(t.rank) + " in " + t.nspace);
        inputs[{t.nspace, broker_of(procs[t.rank])}].push_back(t.rank);
    }
    for (const auto &[k, yes] : whole) inputs[k].clear();
    const std::uint64_t push_id = next_id_++;
    Push &p = pushes_[push_id];
    p.request = env;
    p.waiting = inputs.size();
    p.timer = reactor().after(settings_.push_timeout,
                              [this, push_id] { push_step(push_id, PMIX_ERR_TIMEOUT); });
    for (auto &[k, ranks] : inputs) {
        const std::uint64_t id = next_id_++;
        inputs_[id] = push_id;
        send("launcher", msg::Input{k.first, k.second, m.data, m.eof, std::move(ranks)}, id);
    }
}

void IofActor::input_taken(const Envelope &env, msg::InputTaken &m) {
    auto node = inputs_.extract(env.id);
    if (!node.empty()) push_step(node.mapped(), m.status);
}

void IofActor::refused(const Envelope &env, msg::ErrorReply &m) {
    if (auto node = inputs_.extract(env.id); !node.empty())
        return push_step(node.mapped(), m.status ? m.status : PMIX_ERROR);
    if (auto node = deregistering_.extract(env.id); !node.empty())
        return reply_error(node.mapped(), m.status, std::move(m.message));
    if (auto it = relays_.find(env.id); it != relays_.end()) {
        reply_error(it->second.request, m.status, std::move(m.message));
        drop_relay(env.id);
    }
}

// One Input of the push answered (or the push timed out): the first failure is the push's.
void IofActor::push_step(std::uint64_t push_id, std::int32_t status) {
    auto it = pushes_.find(push_id);
    if (it == pushes_.end()) return;
    Push &p = it->second;
    if (status != PMIX_SUCCESS && p.status == PMIX_SUCCESS) p.status = status;
    if (status != PMIX_ERR_TIMEOUT && p.waiting > 0 && --p.waiting > 0) return;
    reactor().cancel(p.timer);
    if (p.status == PMIX_SUCCESS)
        reply(p.request, msg::Ok{});
    else
        reply_error(p.request, p.status,
                    p.status == PMIX_ERR_NOT_SUPPORTED ? "a target does not read forwarded input"
                    : p.status == PMIX_ERR_TIMEOUT     ? "the ranks did not take the input in time"
                                                       : "the input was not delivered");
    pushes_.erase(it);
}

}  // namespace zpmix
