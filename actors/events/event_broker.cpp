#include "actors/events/event_broker.hpp"

#include <unistd.h>

#include <chrono>
#include <random>

#include <pmix_common.h>

#include "actors/protocol/host.hpp"
#include "actors/runtime/unix_time.hpp"

namespace zpmix {

namespace {

constexpr std::uint32_t kWildcard = PMIX_RANK_WILDCARD;
constexpr std::string_view kSyncPrefix = "ev/sync/";

std::string hostname() {
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
}

// A stream id no earlier start of any broker had: 64 random bits, in hex.
std::string new_epoch() {
    std::random_device rd;
    const std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd();
    return fmt::format("{:016x}", v);
}

}  // namespace

EventBroker::EventBroker(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                         std::vector<TopicPublisher *> publishers, EventOptions options)
    : Actor("events", reactor, bus),
      namespaces_(namespaces),
      opts_(std::move(options)),
      publishers_(std::move(publishers)),
      cache_(opts_.ring_size) {
    if (opts_.host.empty()) opts_.host = hostname();
    if (opts_.epoch.empty()) opts_.epoch = new_epoch();
    on(&EventBroker::notify, Access::session | Access::operator_);
    on(&EventBroker::register_handler, Access::session | Access::operator_);
    on(&EventBroker::streams, Access::session | Access::operator_);
    on(&EventBroker::resend, Access::session | Access::operator_);
    on(&EventBroker::since, Access::operator_);
    on(&EventBroker::stats, Access::operator_);
    on(&EventBroker::ack, Access::session);
    on(&EventBroker::notify_completion, Access::session | Access::operator_);
    on(&EventBroker::proc_ended, Access::internal);
    on(&EventBroker::namespace_ended, Access::internal);
    on(&EventBroker::abort_job, Access::internal);
    on(&EventBroker::relayed, Access::internal);
    on(&EventBroker::tree_lost, Access::internal);
    on(&EventBroker::job_lifecycle, Access::internal);
    on(&EventBroker::jobs_related, Access::internal);
    on(&EventBroker::deregister_handler, Access::session);
    on(&EventBroker::host_agreed, Access::internal);
    on(&EventBroker::host_refused, Access::internal);
    for (TopicPublisher *p : publishers_)
        p->on_subscription([this](bool on, std::string_view topic) { on_subscription(on, topic); });
}

// --- requests ------------------------------------------------------------------------------

void EventBroker::notify(const Envelope &env, msg::NotifyEvent &m) {
    if (m.event.custom_range.size() > opts_.max_custom_range) {
        const std::string why = fmt::format(
            "a custom range of {} processes is over the limit of {} ([events] max_custom_range)",
            m.event.custom_range.size(), opts_.max_custom_range);
        warn_peer(env, "event {} from {}:{} not published: {}", m.event.status,
                  m.event.source.nspace, m.event.source.rank, why);
        if (env.id != 0) reply_error(env, PMIX_ERR_BAD_PARAM, why);
        return;
    }
    // A client's (a rank's): its own source (Actor::on refused another), its rights.
    const bool client = env.session && env.session->is_client();
    if (client)
        if (const std::string why = rights_.refusal(*env.session, m.event); !why.empty()) {
            warn_peer(env, "refused an event of {}:{} (pid {}): {}", env.session->nspace,
                      env.session->rank, env.peer.pid, why);
            if (env.id != 0) reply_error(env, PMIX_ERR_NO_PERMISSIONS, why);
            return;
        }
    if (m.event.timestamp == 0) m.event.timestamp = unix_time_s();
    const auto range = static_cast<msg::Range>(m.event.range);
    // Beyond the node, a client's or a tool's (a debugger's release) goes to the host too, which
    // carries it to its other nodes, as OpenPMIx's server hands it to notify_event.
    if (env.session && opts_.to_host && range != msg::Range::local &&
        range != msg::Range::proc_local)
        send("host", msg::HostNotify{m.event});
    const msg::Proc source = m.event.source;
    const bool checkpointed = m.event.status == PMIX_JCTRL_CHECKPOINT_COMPLETE;
    // An event for the resource manager: the log is where it goes.
    if (static_cast<msg::Range>(m.event.range) == msg::Range::rm)
        log_peer(env, spdlog::level::info, "event {} for the resource manager from {}:{}: {}",
                 m.event.status, source.nspace, source.rank, m.event.text);
    const std::int32_t status = publish(std::move(m.event), !m.do_not_cache, client);
    // Job control waits for these (PMIx_Job_control's checkpoint requests).
    if (status == PMIX_SUCCESS && checkpointed) broadcast(msg::CheckpointCompleted{source});
    // Request id 0: the notifier checked the range itself and wants no answer (msg::routable).
    if (status != PMIX_SUCCESS) {
        const char *why = "cannot publish the event: bad range or targets";
        if (env.id == 0)
            warn_peer(env, "{} from {}:{}", why, source.nspace, source.rank);
        else
            reply_error(env, status, why);
        return;
    }
    if (env.id != 0) reply(env, msg::Ok{});
}

void EventBroker::register_handler(const Envelope &env, msg::EventRegister &m) {
    if (asks_host(env, m)) return;  // subscribe_handler once the host agreed
    subscribe_handler(env, m);
}

void EventBroker::subscribe_handler(const Envelope &env, msg::EventRegister &m) {
    if (m.sync.empty()) {
        complete_register(env, m);
        return;
    }
    if (synced_.erase(m.sync) > 0) {
        complete_register(env, m);
        return;
    }
    if (awaiting_sync_.contains(m.sync)) {
        reply_error(env, PMIX_ERR_BAD_PARAM, "sync id already in use");
        return;
    }
    const std::string id = m.sync;
    auto timer = reactor().after(opts_.sync_timeout, [this, id] {
        auto it = awaiting_sync_.find(id);
        if (it == awaiting_sync_.end()) return;
        log_peer(it->second.req, spdlog::level::warn,
                 "registration {} timed out waiting for its subscription", id);
        reply_error(it->second.req, PMIX_ERR_TIMEOUT,
                    "event subscription never reached the broker");
        awaiting_sync_.erase(it);
    });
    awaiting_sync_.emplace(id, PendingRegister{env, std::move(m), timer});
}

void EventBroker::complete_register(const Envelope &req, const msg::EventRegister &m) {
    msg::EventRegistered out;
    out.session = opts_.session;
    out.host = opts_.host;
    for (const auto &stream : m.streams) {
        auto it = heads_.find(stream);
        out.heads[stream] = it == heads_.end() ? 0 : it->second;
    }
    // A client hears the cached events its job may (a monitor or tool: every one).
    out.replay = cache_.of_streams(
        m.streams, req.session && req.session->is_client() ? m.proc.nspace : std::string());
    // A client that registers is a local process of its job, even if no launcher registered its
    // namespace here (a singleton, or a job launched by another broker).
    if (!m.proc.nspace.empty() && m.proc.nspace != opts_.self.nspace &&
        !namespaces_.find(m.proc.nspace))
        strangers_.insert(m.proc);
    reply(req, out);
}

void EventBroker::streams(const Envelope &env, msg::EventStreamsQuery &) {
    reply(env, msg::EventStreams{opts_.session, opts_.host});
}

void EventBroker::resend(const Envelope &env, msg::EventResend &m) {
    msg::EventResent out{m.stream, m.from, m.to, {}};
    if (m.to >= m.from && m.to - m.from < std::uint64_t{1} << 20)
        out.events = cache_.range(m.stream, m.from, m.to);
    if (out.events.size() != (m.to >= m.from ? m.to - m.from + 1 : 0))
        warn_peer(env, "a subscriber asked for {}#{}..{}: {} of them are no longer cached",
                  m.stream, m.from, m.to, (m.to - m.from + 1) - out.events.size());
    reply(env, out);
}

void EventBroker::since(const Envelope &env, msg::EventsSince &m) {
    msg::EventsSinceReply out;
    out.epoch = opts_.epoch;
    out.head = bseq_;
    out.restarted = !m.epoch.empty() && m.epoch != opts_.epoch;
    const std::uint64_t after = out.restarted ? 0 : std::min(m.after, bseq_);
    const std::uint64_t oldest = replay_.empty() ? bseq_ + 1 : replay_.front().event.bseq;
    out.lost = oldest > after + 1 ? oldest - after - 1 : 0;
    auto wanted = [&](const std::string &topic) {
        if (m.topics.empty()) return true;
        for (const auto &t : m.topics)
            if (topic.starts_with(t)) return true;
        return false;
    };
    for (const auto &p : replay_)
        if (p.event.bseq > after && wanted(p.topic)) out.events.push_back(p);
    if (out.restarted || out.lost > 0)
        log_peer(env, spdlog::level::info,
                 "a monitor asked for the events after {}#{}: {}{} no longer kept",
                 m.epoch.empty() ? opts_.epoch : m.epoch, m.after,
                 out.restarted ? "that epoch is over; " : "", out.lost);
    reply(env, out);
}

void EventBroker::stats(const Envelope &env, msg::EventStatsQuery &m) {
    log().debug("event counters for {}", m.scraper);
    reply(env, msg::EventStats{published_, dropped_, cache_.size()});
}

void EventBroker::ack(const Envelope &, msg::EventAck &m) {
    for (const auto &[stream, upto] : m.upto) cache_.ack(m.proc, stream, upto);
}

void EventBroker::notify_completion(const Envelope &env, msg::NotifyCompletion &m) {
    completion_watchers_[m.nspace].push_back(m.requester);
    reply(env, msg::Ok{});
}

// --- what the other actors tell us ----------------------------------------------------------

// A job that ran ends with PMIX_EVENT_JOB_END for whoever asked: the spawner of a job started
// with PMIX_NOTIFY_COMPLETION (in the table, so in the message), and each NotifyCompletion.
void EventBroker::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    auto watchers = std::move(m.notify_completion);
    if (auto it = completion_watchers_.find(m.nspace); it != completion_watchers_.end()) {
        watchers.insert(watchers.end(), it->second.begin(), it->second.end());
        completion_watchers_.erase(it);
    }
    if (m.ran)
        for (const auto &w : watchers) {
            msg::Event e;
            e.source = opts_.self;
            e.status = PMIX_EVENT_JOB_END;
            e.range = static_cast<std::uint8_t>(msg::Range::custom);
            e.custom_range = {w};
            e.affected = {{m.nspace, kWildcard}};
            e.non_default = true;
            e.timestamp = unix_time_s();
            e.text = fmt::format("job {} ended with status {}{}{}", m.nspace, m.status,
                                 m.message.empty() ? "" : ": ", m.message);
            e.info = InfoBlob()
                         .add_status(PMIX_JOB_TERM_STATUS, m.status)
                         .add_int(PMIX_EXIT_CODE, m.status)
                         .bytes();
            publish_on(msg::topic::proc(w), std::move(e), true);
        }
    cache_.forget({m.nspace, kWildcard});
    rights_.forget(m.nspace);
}

void EventBroker::jobs_related(const Envelope &, msg::JobsRelated &m) {
    rights_.relate(m.nspaces);
}

void EventBroker::abort_job(const Envelope &, msg::AbortJob &m) {
    msg::Event ev;
    ev.source = opts_.self;
    ev.status = PMIX_ERR_PROC_REQUESTED_ABORT;
    ev.range = static_cast<std::uint8_t>(msg::Range::nspace);
    ev.affected = {{m.nspace, m.rank}};
    ev.timestamp = unix_time_s();
    ev.text = fmt::format("{}:{} called PMIx_Abort with status {}{}{}", m.nspace, m.rank, m.status,
                          m.message.empty() ? "" : ": ", m.message);
    ev.info = InfoBlob().add_int(PMIX_EXIT_CODE, m.status).bytes();
    publish_on(msg::topic::nspace(m.nspace), std::move(ev), true);
}

void EventBroker::proc_ended(const Envelope &, msg::ProcEnded &m) {
    const msg::Proc proc{m.nspace, m.rank};
    cache_.forget(proc);

    msg::Event ev;
    ev.source = opts_.self;
    ev.range = static_cast<std::uint8_t>(msg::Range::nspace);
    ev.affected = {proc};
    ev.timestamp = unix_time_s();
    // Events of a job go to the job's namespace stream, whoever their source is.
    // A rank lost with its node is reported by every broker to its own subscribers.
    const bool lost = !m.lost_with.empty();
    auto publish_job = [&](std::int32_t code, std::string text, bool non_default = false) {
        msg::Event e = ev;
        e.status = code;
        e.text = std::move(text);
        e.non_default = non_default;
        InfoBlob info;
        if (lost)
            info.add_string(PMIX_HOSTNAME, m.lost_with);
        else
            info.add_int(PMIX_EXIT_CODE, m.signal ? 128 + m.signal : m.exit_code);
        e.info = info.bytes();
        publish_on(msg::topic::nspace(m.nspace), std::move(e), true, !lost);
    };
    if (lost) {
        publish_job(PMIX_ERR_PROC_TERM_WO_SYNC,
                    fmt::format("{}:{} was lost with node {}", m.nspace, m.rank, m.lost_with));
    } else if (m.signal != 0) {
        publish_job(PMIX_ERR_PROC_ABORTED_BY_SIG,
                    fmt::format("{}:{} killed by signal {}", m.nspace, m.rank, m.signal));
    } else if (m.exit_code != 0) {
        publish_job(PMIX_ERR_EXIT_NONZERO_TERM,
                    fmt::format("{}:{} exited with status {}", m.nspace, m.rank, m.exit_code));
    }
    // A rank's end is not an error: only handlers registered for it get it (Open MPI's default
    // handler aborts the process on any event it is given).
    publish_job(PMIX_EVENT_PROC_TERMINATED, fmt::format("{}:{} terminated", m.nspace, m.rank),
                true);
}

// For monitors only (the RM range): no client subscribes to it, so no handler of a rank runs,
// and nothing is kept for acknowledgements (the replay ring keeps it for monitors).
void EventBroker::job_lifecycle(const Envelope &, msg::JobLifecycle &m) {
    msg::Event ev;
    ev.source = opts_.self;
    ev.status = m.code;
    ev.range = static_cast<std::uint8_t>(msg::Range::rm);
    if (m.ranks.empty())
        ev.affected = {{m.nspace, kWildcard}};
    else
        for (auto r : m.ranks) ev.affected.push_back({m.nspace, r});
    ev.non_default = true;
    ev.timestamp = unix_time_s();
    ev.text = std::move(m.text);
    InfoBlob info;
    info.add_string(PMIX_NSPACE, m.nspace);
    if (m.code == PMIX_EVENT_JOB_START) info.add_int(PMIX_JOB_SIZE, m.np);
    if (m.signal != 0) info.add_int(PMIX_JOB_CTRL_SIGNAL, m.signal);
    if (m.code == PMIX_EVENT_JOB_END)
        info.add_status(PMIX_JOB_TERM_STATUS, m.status).add_int(PMIX_EXIT_CODE, m.status);
    ev.info = info.bytes();
    publish_on(msg::topic::rm(), std::move(ev), false);
}

// PMIX_EVENT_NODE_DOWN for each job with ranks on a lost broker's node, to this broker's
// subscribers (every broker hears of the loss), the node's ranks affected; each rank's own end
// follows (the registry's ProcEnded).
void EventBroker::tree_lost(const Envelope &, msg::TreeLost &m) {
    if (m.parent) return;
    const auto snapshot = namespaces_.snapshot();
    for (const auto &node : m.nodes)
        for (const auto &[nspace, rec] : *snapshot) {
            msg::Event ev;
            for (const auto &p : rec->job->procs)
                if (p.hostname == node) ev.affected.push_back({nspace, p.rank});
            if (ev.affected.empty()) continue;
            ev.source = opts_.self;
            ev.range = static_cast<std::uint8_t>(msg::Range::nspace);
            ev.timestamp = unix_time_s();
            ev.status = PMIX_EVENT_NODE_DOWN;
            ev.text = fmt::format("node {} was lost, with {} rank(s) of {}", node,
                                  ev.affected.size(), nspace);
            ev.info = InfoBlob().add_string(PMIX_HOSTNAME, node).bytes();
            publish_on(msg::topic::nspace(nspace), std::move(ev), true, false);
        }
}

// The launcher's word that a job is over: PMIX_EVENT_JOB_END on each watcher's own stream, with
// the job (wildcard rank) as the affected process and its status as PMIX_JOB_TERM_STATUS and
// PMIX_EXIT_CODE (what `zpmix run` would exit with: 0, the first failing rank's exit code,
// 128+signal, the PMIx_Abort status, 124 for the time limit). Only handlers registered for it
// run (Open MPI's default handler aborts on any event it gets).
// --- publishing ------------------------------------------------------------------------------

std::vector<std::string> EventBroker::prefixes_of(const msg::Event &ev, std::string &error) const {
    switch (static_cast<msg::Range>(ev.range)) {
        case msg::Range::rm:
            return {msg::topic::rm()};
        case msg::Range::local:
            return {msg::topic::node(opts_.host)};
        case msg::Range::nspace:
            if (ev.source.nspace.empty()) break;
            return {msg::topic::nspace(ev.source.nspace)};
        case msg::Range::session:
            return {msg::topic::session(opts_.session)};
        case msg::Range::global:
            return {msg::topic::global()};
        case msg::Range::custom: {
            std::set<std::string> out;
            for (const auto &p : ev.custom_range) {
                if (p.nspace.empty()) continue;
                out.insert(p.rank == kWildcard ? msg::topic::nspace(p.nspace)
                                               : msg::topic::proc(p));
            }
            if (out.empty()) break;
            return {out.begin(), out.end()};
        }
        default:
            break;
    }
    error = "range";
    return {};
}

std::int32_t EventBroker::publish(msg::Event ev, bool cache, bool from_client) {
    std::string error;
    const auto prefixes = prefixes_of(ev, error);
    if (prefixes.empty()) return PMIX_ERR_BAD_PARAM;
    if (static_cast<msg::Range>(ev.range) != msg::Range::custom) {
        for (const auto &prefix : prefixes) publish_on(prefix, ev, cache, true, from_client);
        return PMIX_SUCCESS;
    }
    // A custom range: each member's stream gets the event naming that member alone, so the work
    // is linear in the range (a copy of the whole range on each stream was quadratic).
    std::vector<msg::Proc> members = std::move(ev.custom_range);
    ev.custom_range.clear();
    std::set<std::string> done;
    for (const auto &p : members) {
        if (p.nspace.empty()) continue;
        std::string prefix =
            p.rank == kWildcard ? msg::topic::nspace(p.nspace) : msg::topic::proc(p);
        if (!done.insert(prefix).second) continue;
        msg::Event one = ev;
        one.custom_range = {p};
        publish_on(prefix, std::move(one), cache);
    }
    return PMIX_SUCCESS;
}

std::set<msg::Proc> EventBroker::recipients(const std::string &prefix) const {
    // The local processes a job-level stream reaches: they must all have an event before it may
    // leave the cache.
    const auto snapshot = namespaces_.snapshot();
    std::set<msg::Proc> out;
    // Its local ranks still running: of the table, or those registered of a namespace it lacks.
    auto add = [&](const std::string &ns, std::uint32_t only = kWildcard) {
        if (auto it = snapshot->find(ns); it != snapshot->end()) {
            const NamespaceRecord &job = *it->second;
            // One rank's stream looks at that rank only (a custom range names thousands).
            const std::uint32_t from = only == kWildcard ? 0 : only;
            const std::uint32_t to =
                only == kWildcard ? job.size() : std::min(only + 1, job.size());
            for (std::uint32_t r = from; r < to; ++r) {
                const std::string &host = job.job->procs[r].hostname;
                if (!job.ended(r) && (host.empty() || host == opts_.host)) out.insert({ns, r});
            }
            return;
        }
        for (auto p = strangers_.lower_bound({ns, 0}); p != strangers_.end() && p->nspace == ns;
             ++p)
            if (only == kWildcard || p->rank == only) out.insert(*p);
    };
    if (prefix.starts_with("ev/n/")) {
        add(prefix.substr(5, prefix.size() - 6));
    } else if (prefix.starts_with("ev/p/")) {
        const auto body = prefix.substr(5, prefix.size() - 6);  // <nspace>/<rank>
        const auto slash = body.rfind('/');
        add(body.substr(0, slash), static_cast<std::uint32_t>(std::stoul(body.substr(slash + 1))));
    } else if (prefix != msg::topic::rm()) {
        for (const auto &[ns, job] : *snapshot) add(ns);
        out.insert(strangers_.begin(), strangers_.end());
    }
    return out;
}

std::set<std::string> EventBroker::replay_to(const std::string &prefix, const msg::Event &ev,
                                             bool from_client) const {
    std::set<std::string> out;
    if (!from_client || prefix.starts_with("ev/n/") || prefix.starts_with("ev/p/")) return out;
    for (const auto &[ns, job] : *namespaces_.snapshot()) out.insert(ns);
    for (const auto &p : strangers_) out.insert(p.nspace);
    out.insert(ev.source.nspace);
    return out;
}

void EventBroker::relayed(const Envelope &, msg::EventRelay &m) {
    if (opts_.brokers && m.origin == opts_.brokers->view()->rank) return;  // ours, back
    publish_on(m.prefix, std::move(m.event), m.cache, false, m.from_client);
}

void EventBroker::publish_on(const std::string &prefix, msg::Event ev, bool cache, bool relay,
                             bool from_client) {
    if (ev.time_us == 0)
        ev.time_us = unix_time_us();  // a relayed event keeps its first broker's time
    // Ranks stopped at exec cannot hear it: their launcher continues them.
    if (ev.status == PMIX_DEBUGGER_RELEASE)
        broadcast(msg::DebuggerReleased{ev.range == static_cast<std::uint8_t>(msg::Range::custom)
                                            ? ev.custom_range
                                            : ev.affected});
    if (relay && opts_.brokers && !prefix.starts_with("ev/node/")) {
        const auto view = opts_.brokers->view();
        if (!view->alone())
            send(every_broker(name()), msg::EventRelay{prefix, ev, cache, view->rank, from_client});
    }
    ev.stream = msg::topic::stream(prefix, ev.enviro);
    ev.seq = ++heads_[ev.stream];
    ev.epoch = opts_.epoch;
    ev.bseq = ++bseq_;
    ++published_[ev.status];
    log().debug("event {} from {}:{} on {}#{}{}", ev.status, ev.source.nspace, ev.source.rank,
                ev.stream, ev.seq, relay ? "" : " (relayed)");
    const std::string topic = msg::topic::of_event(ev.stream, ev.status);
    std::set<msg::Proc> awaiting;
    if (cache && !ev.enviro) awaiting = recipients(prefix);
    ev.retained = !awaiting.empty();  // only these need the recipients' acknowledgements
    zmq::message_t body =
        encode_versioned(msg::kEventSchemaVersion, msg::Event::type, 0, ev, name());
    if (opts_.replay_size > 0) {
        replay_.push_back({topic, ev});
        if (replay_.size() > opts_.replay_size) replay_.pop_front();
    }
    if (cache) cache_.add(ev, std::move(awaiting), replay_to(prefix, ev, from_client));
    if (opts_.test_drop_every != 0 && ev.seq % opts_.test_drop_every == 0) {
        log().debug("test: not sending {}#{}", ev.stream, ev.seq);
        return;
    }
    // Never blocks: a subscriber at its high-water mark loses the message, and recovers it from
    // the cache when it sees the gap.
    for (TopicPublisher *p : publishers_)
        dropped_ += p->publish(topic, {static_cast<const char *>(body.data()), body.size()});
}

void EventBroker::on_subscription(bool subscribe, std::string_view topic) {
    if (!topic.starts_with(kSyncPrefix) || topic.size() <= kSyncPrefix.size() + 1) return;
    const std::string id(topic.substr(kSyncPrefix.size(), topic.size() - kSyncPrefix.size() - 1));
    if (!subscribe) {
        synced_.erase(id);
        return;
    }
    auto it = awaiting_sync_.find(id);
    if (it == awaiting_sync_.end()) {
        synced_.insert(id);
        return;
    }
    reactor().cancel(it->second.timer);
    PendingRegister pending = std::move(it->second);
    awaiting_sync_.erase(it);
    complete_register(pending.req, pending.body);
}

// --- info blobs ------------------------------------------------------------------------------

InfoBlob &InfoBlob::add_int(const std::string &key, std::int64_t v) {
    const bool small = v >= INT32_MIN && v <= INT32_MAX;
    items_.emplace_back(key, [v, small](auto &pk) {
        pk.pack_array(2);
        pk.pack(static_cast<std::uint16_t>(small ? PMIX_INT : PMIX_INT64));
        pk.pack(v);
    });
    return *this;
}

InfoBlob &InfoBlob::add_status(const std::string &key, std::int32_t v) {
    items_.emplace_back(key, [v](auto &pk) {
        pk.pack_array(2);
        pk.pack(static_cast<std::uint16_t>(PMIX_STATUS));
        pk.pack(v);
    });
    return *this;
}

InfoBlob &InfoBlob::add_bool(const std::string &key, bool v) {
    items_.emplace_back(key, [v](auto &pk) {
        pk.pack_array(2);
        pk.pack(static_cast<std::uint16_t>(PMIX_BOOL));
        pk.pack(v);
    });
    return *this;
}

InfoBlob &InfoBlob::add_string(const std::string &key, const std::string &v) {
    items_.emplace_back(key, [v](auto &pk) {
        pk.pack_array(2);
        pk.pack(static_cast<std::uint16_t>(PMIX_STRING));
        pk.pack(v);
    });
    return *this;
}

InfoBlob &InfoBlob::add_procs(const std::string &key, const std::vector<msg::Proc> &v) {
    items_.emplace_back(key, [v](auto &pk) {
        pk.pack_array(2);
        pk.pack(static_cast<std::uint16_t>(PMIX_DATA_ARRAY));
        pk.pack_array(2);
        pk.pack(static_cast<std::uint16_t>(PMIX_PROC));
        pk.pack_array(static_cast<std::uint32_t>(v.size()));
        for (const auto &p : v) {
            pk.pack_array(2);
            pk.pack(p.nspace);
            pk.pack_uint32(p.rank);
        }
    });
    return *this;
}

msg::Blob InfoBlob::bytes() const {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_array(static_cast<std::uint32_t>(items_.size()));
    for (const auto &[key, fn] : items_) {
        pk.pack_array(3);  // [key, flags, value], as the C binding's codec packs a pmix_info_t
        pk.pack(key);
        pk.pack(std::uint32_t{0});
        fn(pk);
    }
    return msg::Blob(buf.data(), buf.data() + buf.size());
}

}  // namespace zpmix
