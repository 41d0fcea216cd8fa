#include "client/session.hpp"

#include <poll.h>

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "actors/protocol/common.hpp"

namespace zpmix::client {

namespace {
using Clock = ZmtpConnection::Clock;

// How often a client on tcp PINGs its broker: $ZPMIX_HEARTBEAT_IVL_MS, else 5 s.
std::chrono::milliseconds ping_interval() {
    const char *v = std::getenv("ZPMIX_HEARTBEAT_IVL_MS");
    const unsigned long ms = v ? std::strtoul(v, nullptr, 10) : 0;
    return std::chrono::milliseconds(ms > 0 && ms <= 3600000 ? ms : 5000);
}
}  // namespace

Session::Reply Session::unsupported(std::string_view type) {
    Reply r;
    r.status = PMIX_ERR_NOT_SUPPORTED;
    r.message = fmt::format(
        "'{}' needs the protocol feature '{}', which the broker's release (zpmix {}) lacks; this "
        "libpmix is zpmix {}",
        type, msg::feature_of(type), broker_.release(), msg::kRelease);
    spdlog::warn("pmix client: {}", r.message);
    return r;
}

void Session::unsupported(std::string_view type, Done done) {
    unsupported(type);
    reactor_.post([done = std::move(done)] { done(PMIX_ERR_NOT_SUPPORTED, nullptr); });
}

Session::Session(ClientStore &store) : store_(store), fences_(store) {
    thread_ = std::thread([this] { reactor_.run(); });
}

Session::Session(ClientStore &store, const std::string &uri, std::uint32_t timeout_ms,
                 bool pipeline, const std::optional<CurveKeypair> &tcp_keys)
    : store_(store),
      fences_(store),
      uri_(uri),
      tcp_keys_(tcp_keys),
      conn_(std::make_unique<ZmtpConnection>(uri, ZmtpConnection::Role::dealer,
                                             deadline_after(timeout_ms), DecodeLimits{}.max_message,
                                             pipeline, tcp_keys)) {
    // A broker's libzmq ROUTER on tcp drops a peer it hears nothing from (heartbeats); a client
    // reads only when it waits for an answer, so it cannot be relied on to answer its PINGs.
    if (uri.starts_with("tcp://")) reactor_.every(ping_interval(), [this] { conn_->ping(); });
    thread_ = std::thread([this] { reactor_.run(); });
}

Session::~Session() {
    {
        std::unique_lock lock(mu_);
        lost_ = true;  // from here on every request fails at once
        while (!pending_.empty())
            complete_locked(lock, pending_.begin()->first, PMIX_ERR_LOST_CONNECTION, nullptr);
    }
    // Posted after the failed requests' callbacks, so they run before the loop stops.
    reactor_.post([this] {
        if (watching_) reactor_.unwatch_fd(conn_->fd());
        watching_ = false;
        reactor_.stop();
    });
    thread_.join();
    // Whatever was sent (a last commit, an abort) is in the kernel's buffer: closing keeps it.
    conn_.reset();
}

// ------------------------------------------------------------------ sending

pmix_status_t Session::send_bytes(const zmq::message_t &bytes, std::uint64_t id,
                                  std::uint32_t timeout_ms) {
    if (!conn_) return PMIX_ERR_UNREACH;
    const auto limit = timeout_ms ? std::chrono::milliseconds(timeout_ms) : conn_->write_timeout();
    const auto written =
        conn_->send({std::string_view(static_cast<const char *>(bytes.data()), bytes.size())},
                    Clock::now() + limit);
    if (written == ZmtpConnection::Write::ok) return PMIX_SUCCESS;
    if (written == ZmtpConnection::Write::timeout) {
        spdlog::warn("pmix client: the broker took no message for {} ms", limit.count());
        if (id != 0) complete(id, PMIX_ERR_TIMEOUT, nullptr);
        if (!conn_->write_broken()) return PMIX_ERR_TIMEOUT;
        conn_->end();  // only now: a reader seeing the end would fail `id` as lost
    }
    mark_lost();
    return written == ZmtpConnection::Write::timeout ? PMIX_ERR_TIMEOUT : PMIX_ERR_LOST_CONNECTION;
}

Session::Reply Session::call_bytes(std::uint64_t id, Pending pending, const zmq::message_t &bytes,
                                   std::uint32_t timeout_ms) {
    std::optional<Reply> slot;
    pending.slot = &slot;
    {
        std::lock_guard lock(mu_);
        if (!conn_ || lost_) {
            if (!pending.fence_key.empty()) fences_.close(pending.fence_key);
            return {conn_ ? PMIX_ERR_LOST_CONNECTION : PMIX_ERR_UNREACH, {}, {}};
        }
        pending_.emplace(id, std::move(pending));
    }
    const auto deadline = deadline_after(timeout_ms);
    // A write that timed out completed `id` (unless another thread saw the connection end
    // first): its status is the call's.
    if (send_bytes(bytes, id, timeout_ms) == PMIX_ERR_TIMEOUT) return {PMIX_ERR_TIMEOUT, {}, {}};
    std::unique_lock lock(mu_);
    while (!slot) {
        if (Clock::now() >= deadline) {
            complete_locked(lock, id, PMIX_ERR_TIMEOUT, nullptr);
            break;
        }
        // Take the reader role if it is free; else the reader fills our slot, or hands the
        // role on when its own answer came, and wakes us either way. The role is only released
        // under mu_, so that wake-up cannot be missed.
        if (read_mu_.try_lock()) {
            lock.unlock();
            read_until(slot, deadline);
            lock.lock();
            read_mu_.unlock();
            answered_.notify_all();
            if (reader_wanted_) {
                reader_wanted_ = false;
                reactor_.post([this] { update_watch(); });
            }
            continue;
        }
        answered_.wait_until(lock, deadline);
    }
    return std::move(*slot);
}

pmix_status_t Session::fence_call(msg::FenceContribute m) {
    const std::uint64_t id = next_id();
    Pending p{.fence_key = fences_.open(m, id)};  // fills in m.done_through, encoded below
    return call_bytes(id, std::move(p), encode(m.type, id, m), m.timeout_ms).status;
}

void Session::fence(msg::FenceContribute m, Done done) {
    const std::uint64_t id = next_id();
    Pending p{.done = std::move(done), .fence_key = fences_.open(m, id)};
    submit(id, std::move(p), encode(m.type, id, m), m.timeout_ms);
}

void Session::submit(std::uint64_t id, Pending pending, const zmq::message_t &bytes,
                     std::uint32_t timeout_ms) {
    auto fail = [&](pmix_status_t status) {
        if (!pending.fence_key.empty()) fences_.close(pending.fence_key);
        if (pending.done)
            reactor_.post([done = std::move(pending.done), status] { done(status, nullptr); });
    };
    if (!conn_) return fail(PMIX_ERR_UNREACH);
    {
        std::unique_lock lock(mu_);
        if (lost_) {
            lock.unlock();
            return fail(PMIX_ERR_LOST_CONNECTION);
        }
        pending_.emplace(id, std::move(pending));
        ++async_pending_;
    }
    // Posted before the send: the timer exists before any answer's callback can run.
    reactor_.post([this, id, timeout_ms] {
        if (timeout_ms > 0) {
            std::lock_guard lock(mu_);
            if (pending_.contains(id))
                timers_[id] = reactor_.after(std::chrono::milliseconds(timeout_ms), [this, id] {
                    timers_.erase(id);
                    complete(id, PMIX_ERR_TIMEOUT, nullptr);
                });
        }
        update_watch();
    });
    send_bytes(bytes, id, timeout_ms);
}

// ------------------------------------------------------------------ reading

bool Session::refused() {
    if (!conn_) return false;
    if (!conn_->refused() && read_mu_.try_lock()) {
        (void)conn_->fill();
        std::vector<std::string_view> frames;  // parses the handshake: nothing else can follow
        (void)conn_->next(frames);
        read_mu_.unlock();
    }
    return conn_->refused();
}

void Session::read_until(std::optional<Reply> &slot, Clock::time_point deadline) {
    // What an earlier reader left in the buffer first, then wait and read: not the other way
    // round, as an answer is rarely in before its request's sender gets here and a read that
    // finds nothing costs a system call.
    dispatch_buffered();
    for (;;) {
        {
            std::lock_guard lock(mu_);
            if (slot) return;
        }
        if (!conn_->wait_readable(deadline)) return;
        if (!read_available()) {
            mark_lost();
            return;
        }
    }
}

bool Session::read_available() {
    const bool alive = conn_->fill();
    dispatch_buffered();
    return alive && !conn_->broken();
}

void Session::dispatch_buffered() {
    std::vector<std::string_view> frames;
    while (conn_->next(frames)) dispatch(frames.back());  // the envelope is the last frame
}

void Session::dispatch(std::string_view bytes) {
    Envelope env;
    try {
        // Borrowed: a fence's or an error's answer is read here, before the buffer moves on.
        env = decode_borrowed(bytes.data(), bytes.size());
    } catch (const DecodeError &e) {
        spdlog::error("pmix client: dropped a malformed message from the broker: {}", e.what());
        return;
    }
    try {
        if (env.type == msg::FenceDone::type) {
            auto done = env.as<msg::FenceDone>();
            const std::uint64_t id = fences_.request(done.key);
            if (id == 0) return;  // timed out here already
            complete(id, fences_.take(done), nullptr);
            return;
        }
        if (env.id != 0 && env.type != msg::ErrorReply::type) {
            std::shared_ptr<std::function<void(const Envelope &)>> fn;
            {
                std::lock_guard lock(mu_);
                if (auto it = streams_.find(env.id);
                    it != streams_.end() && it->second.type == env.type)
                    fn = it->second.fn;
            }
            if (fn) {
                env.own();
                reactor_.post([fn, env = std::move(env)] { (*fn)(env); });
                return;
            }
        }
        if (env.type == msg::ErrorReply::type) {
            auto e = env.as<msg::ErrorReply>();
            spdlog::debug("pmix client: the broker says: {} ({})", e.message, e.status);
            complete(env.id, e.status != PMIX_SUCCESS ? e.status : PMIX_ERROR, nullptr, e.message);
            return;
        }
        env.own();  // read later, by the caller
        complete(env.id, PMIX_SUCCESS, &env);
    } catch (const DecodeError &e) {
        spdlog::error("pmix client: {}", e.what());
        complete(env.id, PMIX_ERR_UNPACK_FAILURE, nullptr);
    }
}

void Session::complete(std::uint64_t id, pmix_status_t status, Envelope *env,
                       std::string_view message) {
    std::unique_lock lock(mu_);
    complete_locked(lock, id, status, env, message);
}

void Session::complete_locked(std::unique_lock<std::mutex> &, std::uint64_t id,
                              pmix_status_t status, Envelope *env, std::string_view message) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // answered, timed out or failed already
    // Closed before its request goes: take() finds a fence open only while its request waits.
    if (!it->second.fence_key.empty()) fences_.close(it->second.fence_key);
    auto node = pending_.extract(it);
    Pending &p = node.mapped();
    if (p.slot) {
        *p.slot = Reply{status, env ? std::move(*env) : Envelope{}, std::string(message)};
        answered_.notify_all();
        return;
    }
    --async_pending_;
    // Non-blocking callbacks always run on the progress thread, never inside a reader.
    std::optional<Envelope> copy;
    if (env) copy = std::move(*env);
    reactor_.post([this, id, status, done = std::move(p.done), copy = std::move(copy)] {
        if (auto t = timers_.extract(id)) reactor_.cancel(t.mapped());
        if (done) done(status, copy ? &*copy : nullptr);
        update_watch();
    });
}

void Session::connection_lost() {
    // The event stream ended first, but the broker's last answers may still wait unread on the
    // request connection (a broker that stops answers, then closes both): they are read before
    // what is left fails. A reader holding the role reads them, and sees the end itself; until
    // it lets go, look again shortly (readers wait with deadlines).
    if (conn_ && !read_mu_.try_lock()) {
        reactor_.after(std::chrono::milliseconds(5), [this] { connection_lost(); });
        return;
    }
    if (conn_) {
        (void)read_available();
        read_mu_.unlock();
    }
    mark_lost();
}

bool Session::broker_alive() {
    {
        std::lock_guard lock(mu_);
        if (!conn_ || lost_) return false;
    }
    pollfd p{conn_->fd(), POLLRDHUP, 0};
    return ::poll(&p, 1, 0) >= 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) == 0;
}

void Session::mark_lost() {
    {
        std::unique_lock lock(mu_);
        if (lost_) return;
        lost_ = true;
        while (!pending_.empty())
            complete_locked(lock, pending_.begin()->first, PMIX_ERR_LOST_CONNECTION, nullptr);
    }
    spdlog::debug("pmix client: lost the connection to the broker");
    reactor_.post([this] {
        update_watch();
        if (lost_hook_) lost_hook_();
    });
}

void Session::on_lost(std::function<void()> fn) {
    reactor_.post([this, fn = std::move(fn)] {
        lost_hook_ = fn;
        bool lost;
        {
            std::lock_guard lock(mu_);
            lost = lost_;
        }
        if (lost && lost_hook_) lost_hook_();
    });
}

void Session::open_stream(std::uint64_t id, std::string type,
                          std::function<void(const Envelope &)> fn) {
    {
        std::lock_guard lock(mu_);
        streams_[id] =
            Stream{std::move(type),
                   std::make_shared<std::function<void(const Envelope &)>>(std::move(fn))};
    }
    reactor_.post([this] { update_watch(); });
}

void Session::close_stream(std::uint64_t id) {
    {
        std::lock_guard lock(mu_);
        streams_.erase(id);
    }
    reactor_.post([this] { update_watch(); });
}

void Session::update_watch() {
    if (!conn_) return;
    bool want;
    {
        std::lock_guard lock(mu_);
        want = (async_pending_ > 0 || !streams_.empty()) && !lost_ && !reader_wanted_;
    }
    if (want == watching_) return;
    if (want)
        reactor_.watch_fd(conn_->fd(), [this] { on_readable(); });
    else
        reactor_.unwatch_fd(conn_->fd());
    watching_ = want;
}

void Session::on_readable() {
    bool reader;
    {
        std::lock_guard lock(mu_);
        reader = read_mu_.try_lock();
        // Else a blocking caller is reading: it dispatches our answers and calls us back.
        if (!reader) reader_wanted_ = true;
    }
    bool alive = true;
    if (reader) {
        alive = read_available();
        std::lock_guard lock(mu_);
        read_mu_.unlock();
        answered_.notify_all();
    }
    if (!alive) mark_lost();
    update_watch();
}

}  // namespace zpmix::client
