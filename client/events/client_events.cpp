#include "client/events/client_events.hpp"

#include <unistd.h>

#include <algorithm>
#include <future>

#include <spdlog/spdlog.h>

#include "actors/protocol/event_rights.hpp"

namespace zpmix::client {

namespace {

constexpr std::uint32_t kRegisterTimeoutMs = 30000;
// A notification with a custom range of more processes waits for the broker's answer.
constexpr std::size_t kAnsweredCustomRange = 256;
constexpr std::uint32_t kAnsweredNotifyTimeoutMs = 30000;
constexpr auto kAckDelay = std::chrono::milliseconds(5);

EventScope scope_of(const ClientEvents::Identity &id) {
    EventScope s;
    s.self = id.me;
    const std::string broker = id.broker;
    std::string my_host;
    if (id.me.rank < id.job.procs.size()) my_host = id.job.procs[id.me.rank].hostname;
    auto job = std::make_shared<msg::JobInfo>(id.job);
    s.is_host = [broker](const msg::Proc &p) { return p.nspace == broker; };
    s.is_local = [broker, job, my_host](const msg::Proc &p) {
        if (p.nspace == broker) return true;
        if (p.nspace != job->nspace || p.rank >= job->procs.size()) return false;
        return job->procs[p.rank].hostname == my_host;
    };
    return s;
}

// The broker's events endpoint as this process reaches it: a tcp one bound on every interface
// ("tcp://0.0.0.0:P", "tcp://*:P") is on the host this process reached the broker at.
std::string events_endpoint(const std::string &events_uri, const std::string &broker_uri) {
    for (const char *any : {"tcp://0.0.0.0:", "tcp://*:"}) {
        const std::string_view prefix(any);
        if (!events_uri.starts_with(prefix) || !broker_uri.starts_with("tcp://")) continue;
        const auto colon = broker_uri.rfind(':');
        if (colon == std::string::npos || colon < 6) break;
        return broker_uri.substr(0, colon + 1) + events_uri.substr(prefix.size());
    }
    return events_uri;
}

}  // namespace

ClientEvents::ClientEvents(Session &session, Identity id)
    : session_(session), id_(std::move(id)), registry_(scope_of(id_)) {
    if (id_.events_uri.empty()) return;
    // Connected here (the caller's thread, during init) so that a broker without a publisher
    // fails PMIx_Init rather than every registration later. The handshake's end is read with
    // the first events: PMIx_Init does not wait for it.
    sub_ = std::make_unique<ZmtpConnection>(
        events_endpoint(id_.events_uri, session_.uri()), ZmtpConnection::Role::sub,
        ZmtpConnection::Clock::now() + std::chrono::milliseconds(kRegisterTimeoutMs),
        DecodeLimits{}.max_message, false, session_.tcp_keys());
    post_open([this](bool open) {
        if (open) session_.reactor().watch_fd(sub_->fd(), [this] { on_sub(); });
    });
    session_.on_lost([this] {
        msg::Event ev;
        ev.status = PMIX_ERR_LOST_CONNECTION;
        ev.source = {id_.broker, 0};
        ev.range = PMIX_RANGE_PROC_LOCAL;
        ev.text = "lost the connection to the broker";
        raise_local(std::move(ev));
    });
}

ClientEvents::~ClientEvents() {
    if (!closed_) close();
}

void ClientEvents::close() {
    if (std::exchange(closed_, true)) return;
    session_.on_lost(nullptr);  // before the teardown is posted: no hook runs after it
    auto teardown = [this] {
        *open_ = false;  // answers still pending (failed when the session goes) find us closed
        if (ack_timer_) session_.reactor().cancel(ack_timer_);
        ack_timer_ = 0;
        if (sub_) {
            session_.reactor().unwatch_fd(sub_->fd());
            sub_.reset();
        }
    };
    if (on_progress_thread()) return teardown();
    std::promise<void> closed;
    session_.post([&] {
        teardown();
        closed.set_value();
    });
    closed.get_future().wait();
}

void ClientEvents::post_open(std::function<void(bool open)> fn) {
    session_.post([open = open_, fn = std::move(fn)] { fn(open->load()); });
}

bool ClientEvents::on_progress_thread() const {
    return session_.reactor().on_reactor_thread();
}

EventChain::Post ClientEvents::poster() {
    // A chain continues (a handler completed) only while this object is open: it reads the
    // registry.
    return [&session = session_, open = open_](std::function<void()> fn) {
        session.post([open, fn = std::move(fn)] {
            if (*open) fn();
        });
    };
}

// --- registration ------------------------------------------------------------------------------

void ClientEvents::register_handler(EventHandler h, Registered done) {
    post_open([this, h = std::move(h), done = std::move(done)](bool open) mutable {
        if (!open) return done(PMIX_ERR_INIT, 0);
        if (!sub_) {  // no broker: events of this process only
            std::size_t id = 0;
            const pmix_status_t rc = registry_.add(std::move(h), id);
            done(rc, id);
            return;
        }
        with_streams(
            [this, h = std::move(h), done = std::move(done)](pmix_status_t status) mutable {
                if (status != PMIX_SUCCESS) return done(status, 0);
                add_registered(std::move(h), std::move(done));
            });
    });
}

void ClientEvents::with_streams(std::function<void(pmix_status_t)> then) {
    if (have_streams_) return then(PMIX_SUCCESS);
    session_.request(msg::EventStreamsQuery{id_.me}, kRegisterTimeoutMs,
                     [this, open = open_, then = std::move(then)](pmix_status_t status,
                                                                  const Envelope *env) mutable {
                         if (!*open) return then(PMIX_ERR_LOST_CONNECTION);
                         if (status == PMIX_SUCCESS) {
                             try {
                                 auto s = env->as<msg::EventStreams>();
                                 session_id_ = s.session;
                                 host_ = s.host;
                                 have_streams_ = true;
                             } catch (const DecodeError &) {
                                 status = PMIX_ERR_UNPACK_FAILURE;
                             }
                         }
                         then(status);
                     });
}

void ClientEvents::observe(std::vector<pmix_status_t> codes, Observer fn) {
    post_open([this, codes = std::move(codes), fn = std::move(fn)](bool open) mutable {
        if (open) observers_.emplace_back(std::move(codes), std::move(fn));
    });
}

void ClientEvents::after(std::vector<pmix_status_t> codes, Outcome fn) {
    post_open([this, codes = std::move(codes), fn = std::move(fn)](bool open) mutable {
        if (open) outcomes_.emplace_back(std::move(codes), std::move(fn));
    });
}

void ClientEvents::follow(std::function<void()> done) {
    if (!done) done = [] {};
    if (following_) return session_.post(std::move(done));
    post_open([this, done = std::move(done)](bool open) mutable {
        if (!open || !sub_) return done();
        with_streams([this, done = std::move(done)](pmix_status_t status) mutable {
            if (status != PMIX_SUCCESS) {
                spdlog::warn("pmix client: cannot follow the library's events: status {}", status);
                return done();
            }
            EventHandler job_level;  // the streams a job-level handler gets
            const auto streams = streams_for(job_level);
            if (std::all_of(streams.begin(), streams.end(),
                            [this](const auto &s) { return subscribed_.contains(s); })) {
                following_ = true;  // a handler's registration did it (or one is under way)
                return done();
            }
            subscribe_and_register(0, streams,
                                   [this, done = std::move(done)](pmix_status_t rc, std::size_t) {
                                       if (rc == PMIX_SUCCESS)
                                           following_ = true;
                                       else
                                           spdlog::warn(
                                               "pmix client: cannot follow the library's "
                                               "events: status {}",
                                               rc);
                                       done();
                                   });
        });
    });
}

std::vector<std::string> ClientEvents::streams_for(const EventHandler &h) const {
    const std::vector<std::string> prefixes = {
        msg::topic::proc(id_.me), msg::topic::nspace(id_.me.nspace), msg::topic::node(host_),
        msg::topic::session(session_id_), msg::topic::global()};
    std::vector<std::string> out;
    for (const auto &p : prefixes) {
        if (h.job_level) out.push_back(msg::topic::stream(p, false));
        if (h.enviro_level) out.push_back(msg::topic::stream(p, true));
    }
    return out;
}

void ClientEvents::add_registered(EventHandler h, Registered done) {
    const auto streams = streams_for(h);
    std::vector<std::int32_t> codes(h.codes.begin(), h.codes.end());
    const bool enviro = h.enviro_level;
    std::size_t id = 0;
    if (const pmix_status_t rc = registry_.add(std::move(h), id); rc != PMIX_SUCCESS)
        return done(rc, 0);
    // Until the broker answers, the handler gets nothing live: its replay comes first.
    replayed_upto_[id] = {};
    for (const auto &s : streams) replayed_upto_[id][s] = UINT64_MAX;
    subscribe_and_register(id, streams, std::move(done), std::move(codes), enviro);
}

void ClientEvents::subscribe_and_register(std::size_t id, std::vector<std::string> streams,
                                          Registered done, std::vector<std::int32_t> codes,
                                          bool enviro) {
    std::string sync;
    for (const auto &s : streams) {
        if (!subscribed_.insert(s).second) continue;
        sub_->subscribe(s, true);
        if (sync.empty()) sync = std::to_string(::getpid()) + "." + std::to_string(next_sync_++);
    }
    if (!sync.empty()) sub_->subscribe(msg::topic::sync(sync), true);
    session_.request(msg::EventRegister{id_.me, sync, streams, std::move(codes), enviro},
                     kRegisterTimeoutMs,
                     [this, open = open_, id, sync, done = std::move(done)](pmix_status_t status,
                                                                            const Envelope *env) {
                         if (!*open) return done(PMIX_ERR_LOST_CONNECTION, 0);
                         if (!sync.empty() && sub_) sub_->subscribe(msg::topic::sync(sync), false);
                         msg::EventRegistered reg;
                         if (status == PMIX_SUCCESS) {
                             try {
                                 reg = env->as<msg::EventRegistered>();
                             } catch (const DecodeError &) {
                                 status = PMIX_ERR_UNPACK_FAILURE;
                             }
                         }
                         if (status != PMIX_SUCCESS) {
                             registry_.remove(id);
                             replayed_upto_.erase(id);
                             return done(status, 0);
                         }
                         if (id != 0) replayed_upto_[id] = reg.heads;  // 0: observers, no replay
                         done(PMIX_SUCCESS, id);
                         // The RFC's order: the registration is acknowledged, then cached events
                         // replayed.
                         for (const auto &ev : reg.replay) {
                             note_for_ack(ev);
                             if (id != 0) run_chain(ev, {id});
                         }
                         std::vector<msg::Event> early;
                         for (const auto &[stream, head] : reg.heads) {
                             std::optional<StreamTracker::Gap> gap;
                             auto ready = tracker_.start(stream, head, gap);
                             early.insert(early.end(), ready.begin(), ready.end());
                             if (gap) recover(*gap);
                         }
                         deliver(std::move(early));
                         send_acks();
                     });
}

void ClientEvents::deregister(std::size_t id, OpDone done) {
    auto work = [this, id, done = std::move(done)](bool open) {
        if (!open) {
            if (done) done(PMIX_ERR_INIT);
            return;
        }
        // A handler for environment events: the broker tells a host when no handler wants its
        // codes any more.
        if (const EventHandler *h = registry_.find(id); h && h->enviro_level && sub_)
            session_.notify(msg::EventDeregister{
                id_.me, std::vector<std::int32_t>(h->codes.begin(), h->codes.end())});
        const bool found = registry_.remove(id);
        replayed_upto_.erase(id);
        if (done) done(found ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND);
    };
    if (on_progress_thread()) {
        work(open_->load());
    } else {
        post_open(std::move(work));
    }
}

// --- notification ------------------------------------------------------------------------------

void ClientEvents::notify(msg::Event ev, bool do_not_cache, OpDone done) {
    // What a client may not notify at all is refused here: the one-way send below would never
    // hear the broker's refusal. Releasing a debug target (debugger daemons) and custom ranges
    // naming other jobs are the broker's to judge (event_rights.hpp): they are answered.
    bool answered = false;
    if (!id_.tool && sub_ && ev.range != PMIX_RANGE_PROC_LOCAL) {
        const bool custom = ev.range == PMIX_RANGE_CUSTOM;
        if (auto why = msg::client_may_not_notify(ev.status, ev.range, custom); !why.empty()) {
            spdlog::error("pmix client: PMIx_Notify_event: {}", why);
            return session_.post([done = std::move(done)] { done(PMIX_ERR_NO_PERMISSIONS); });
        }
        answered = msg::runtime_only(ev.status);
        for (const auto &p : ev.custom_range) answered = answered || p.nspace != id_.me.nspace;
    }
    if (ev.range == PMIX_RANGE_CUSTOM && sub_ && msg::routable(ev) &&
        (answered || ev.custom_range.size() > kAnsweredCustomRange)) {
        // A range this large may be over the broker's limit ([events] max_custom_range): its
        // answer says so; as it says whether a range naming other jobs is allowed.
        session_.request(
            msg::NotifyEvent{std::move(ev), do_not_cache}, kAnsweredNotifyTimeoutMs,
            [done = std::move(done)](pmix_status_t status, const Envelope *) { done(status); });
        return;
    }
    if (ev.range != PMIX_RANGE_PROC_LOCAL && sub_) {
        // Straight from the caller's thread, and unanswered: the range is checked here, and
        // once the bytes are in the kernel's buffer the broker will publish them even if this
        // process ends now. An answer would cost every notifier a wake-up.
        pmix_status_t status = PMIX_ERR_BAD_PARAM;
        if (msg::routable(ev))
            status = session_.notify(msg::NotifyEvent{std::move(ev), do_not_cache})
                         ? PMIX_SUCCESS
                         : PMIX_ERR_LOST_CONNECTION;
        session_.post([status, done = std::move(done)] { done(status); });
        return;
    }
    post_open([this, ev = std::move(ev), done = std::move(done)](bool open) mutable {
        if (!open) return done(PMIX_ERR_INIT);
        if (!sub_ && ev.range == PMIX_RANGE_RM) return done(PMIX_ERR_UNREACH);
        run_chain(ev);
        done(PMIX_SUCCESS);
    });
}

void ClientEvents::raise_local(msg::Event ev) {
    post_open([this, ev = std::move(ev)](bool open) {
        if (open) run_chain(ev);
    });
}

// --- delivery ----------------------------------------------------------------------------------

void ClientEvents::on_sub() {
    // A subscription's write fails only when the broker is gone, which the read below sees too.
    const bool alive = sub_->fill();
    std::vector<msg::Event> ready;
    std::vector<std::string_view> frames;
    while (sub_->next(frames)) {
        if (frames.size() < 2) continue;  // topic, then the event
        try {
            std::optional<StreamTracker::Gap> gap;
            const std::string_view body = frames.back();
            // Converted at once, before the next read reuses the buffer.
            auto got =
                tracker_.accept(decode_borrowed(body.data(), body.size()).as<msg::Event>(), gap);
            ready.insert(ready.end(), std::make_move_iterator(got.begin()),
                         std::make_move_iterator(got.end()));
            if (gap) recover(*gap);
        } catch (const DecodeError &e) {
            spdlog::error("pmix client: dropped a malformed event: {}", e.what());
        }
    }
    if (!alive || sub_->broken()) {
        session_.reactor().unwatch_fd(sub_->fd());
        session_.connection_lost();
    }
    deliver(std::move(ready));
    send_acks();
}

void ClientEvents::recover(const StreamTracker::Gap &gap) {
    spdlog::debug("pmix client: events {}#{}..{} missed, asking the broker", gap.stream, gap.from,
                  gap.to);
    session_.request(msg::EventResend{gap.stream, gap.from, gap.to}, kRegisterTimeoutMs,
                     [this, open = open_, gap](pmix_status_t status, const Envelope *env) {
                         if (!*open) return;
                         std::vector<msg::Event> events;
                         if (status == PMIX_SUCCESS) {
                             try {
                                 events = env->as<msg::EventResent>().events;
                             } catch (const DecodeError &) {
                             }
                         }
                         deliver(tracker_.fill(gap.stream, gap.from, gap.to, std::move(events)));
                         send_acks();
                     });
}

void ClientEvents::deliver(std::vector<msg::Event> events) {
    for (const auto &ev : events) {
        note_for_ack(ev);
        for (const auto &[codes, fn] : observers_)
            if (std::find(codes.begin(), codes.end(), ev.status) != codes.end()) fn(ev);
        std::vector<Outcome> after;
        for (const auto &[codes, fn] : outcomes_)
            if (std::find(codes.begin(), codes.end(), ev.status) != codes.end())
                after.push_back(fn);
        EventChain::Done done;
        if (!after.empty())
            done = [after, ev](pmix_status_t, const pmix_info_t *results, size_t n) {
                for (const auto &fn : after) fn(ev, results, n);
            };
        run_chain(ev, {}, std::move(done));
    }
}

void ClientEvents::note_for_ack(const msg::Event &ev) {
    if (ev.retained) to_ack_.insert(ev.stream);  // the broker keeps it until we acknowledge
}

void ClientEvents::send_acks() {
    // Acknowledgements only let the broker drop job events it retains for us: one message per
    // few milliseconds does that as well as one per event, and keeps bursts cheap. Events it
    // does not keep (PMIX_EVENT_DO_NOT_CACHE, environment events) need none.
    if (ack_timer_ || to_ack_.empty() || !*open_) return;
    ack_timer_ = session_.reactor().after(kAckDelay, [this] {
        ack_timer_ = 0;
        flush_acks();
    });
}

void ClientEvents::flush_acks() {
    msg::EventAck ack{id_.me, {}};
    const auto upto = tracker_.upto();
    for (const auto &stream : to_ack_)
        if (auto it = upto.find(stream); it != upto.end()) ack.upto[stream] = it->second;
    to_ack_.clear();
    if (!ack.upto.empty()) session_.notify(ack);
}

void ClientEvents::run_chain(const msg::Event &wire, std::vector<std::size_t> only,
                             EventChain::Done done) {
    std::shared_ptr<LocalEvent> ev;
    try {
        ev = LocalEvent::from_wire(wire);
    } catch (const std::exception &e) {
        spdlog::error("pmix client: event {} dropped: {}", wire.status, e.what());
        return;
    }
    std::vector<std::size_t> chain;
    if (!only.empty()) {
        for (std::size_t id : only)
            if (const EventHandler *h = registry_.find(id); h && registry_.matches(*h, *ev))
                chain.push_back(id);
    } else {
        for (std::size_t id : registry_.chain_for(*ev)) {
            // A handler registered after this event was cached had it in its replay.
            auto r = replayed_upto_.find(id);
            if (!wire.stream.empty() && r != replayed_upto_.end()) {
                auto s = r->second.find(wire.stream);
                if (s != r->second.end() && wire.seq <= s->second) continue;
            }
            chain.push_back(id);
        }
    }
    if (chain.empty()) {
        if (done) done(PMIX_SUCCESS, nullptr, 0);
        return;
    }
    EventChain::run(registry_, std::move(ev), std::move(chain), poster(), std::move(done));
}

}  // namespace zpmix::client
