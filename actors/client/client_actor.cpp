#include "actors/client/client_actor.hpp"

#include <spdlog/spdlog.h>

#include "actors/protocol/common.hpp"

namespace zpmix::client {

ClientActor::ClientActor(ClientStore &store) : store_(store), ctx_(0) {
    thread_ = std::thread([this] { reactor_.run(); });
}

ClientActor::ClientActor(ClientStore &store, const std::string &uri)
    : store_(store), has_broker_(true), ctx_(1) {
    dealer_ = zmq::socket_t(ctx_, zmq::socket_type::dealer);
    dealer_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(DecodeLimits{}.max_message));
    dealer_.set(zmq::sockopt::linger, 0);
    // The monitor must exist before connecting so that no event is missed.
    const std::string mon = "inproc://zpmix-client-monitor";
    if (zmq_socket_monitor(
            dealer_.handle(), mon.c_str(),
            ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0)
        throw zmq::error_t();
    monitor_ = zmq::socket_t(ctx_, zmq::socket_type::pair);
    monitor_.connect(mon);
    dealer_.connect(uri);
    reactor_.watch(dealer_, [this] { on_readable(); });
    reactor_.watch(monitor_, [this] { on_monitor(); });
    thread_ = std::thread([this] { reactor_.run(); });
}

ClientActor::~ClientActor() {
    reactor_.post([this] {
        fail_all(PMIX_ERR_LOST_CONNECTION);
        if (has_broker_) {
            // Give what is still queued (a last commit, an abort) a moment to leave.
            dealer_.set(zmq::sockopt::linger, lost_ ? 0 : 1000);
            zmq_socket_monitor(dealer_.handle(), nullptr, 0);
        }
        reactor_.stop();
    });
    thread_.join();
    if (has_broker_) {
        reactor_.unwatch(dealer_);
        reactor_.unwatch(monitor_);
        monitor_.close();
        dealer_.close();
    }
    ctx_.close();
}

void ClientActor::fence(const msg::FenceContribute &m, Done done) {
    const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
    submit(id, msg::fence_key(m.participants, m.fence_id), encode(m.type, id, m), m.timeout_ms,
           std::move(done));
}

void ClientActor::submit(std::uint64_t id, std::string fence_key, zmq::message_t bytes,
                         std::uint32_t timeout_ms, Done done) {
    auto shared = std::make_shared<zmq::message_t>(std::move(bytes));
    reactor_.post([this, id, key = std::move(fence_key), shared, timeout_ms,
                   done = std::move(done)]() mutable {
        if (!has_broker_ || lost_) {
            if (done) done(has_broker_ ? PMIX_ERR_LOST_CONNECTION : PMIX_ERR_UNREACH, nullptr);
            return;
        }
        if (done) {
            Pending p{std::move(done), key, 0};
            if (timeout_ms > 0)
                p.timer = reactor_.after(std::chrono::milliseconds(timeout_ms), [this, id] {
                    auto it = pending_.find(id);
                    if (it == pending_.end()) return;
                    it->second.timer = 0;
                    complete(id, PMIX_ERR_TIMEOUT, nullptr);
                });
            if (!key.empty()) fences_[key] = id;
            pending_.emplace(id, std::move(p));
        }
        if (!dealer_.send(*shared, zmq::send_flags::dontwait)) {
            spdlog::warn("pmix client: the broker's queue is full, request {} fails", id);
            complete(id, PMIX_ERR_UNREACH, nullptr);
        }
    });
}

void ClientActor::on_readable() {
    zmq::message_t frame;
    for (;;) {
        if (!dealer_.recv(frame, zmq::recv_flags::dontwait)) return;
        if (frame.more()) continue;  // only the last frame is the envelope
        on_message(frame);
    }
}

void ClientActor::on_message(const zmq::message_t &bytes) {
    Envelope env;
    try {
        env = decode(bytes);
    } catch (const DecodeError &e) {
        spdlog::error("pmix client: dropped a malformed message from the broker: {}", e.what());
        return;
    }
    try {
        if (env.type == msg::FenceDone::type) {
            auto done = env.as<msg::FenceDone>();
            auto f = fences_.find(done.key);
            if (f == fences_.end()) return;  // timed out here already
            const std::uint64_t id = f->second;
            pmix_status_t status = done.status;
            for (const auto &d : done.data)
                if (pmix_status_t rc = store_.add(d); rc != PMIX_SUCCESS && status == PMIX_SUCCESS)
                    status = rc;
            complete(id, status, nullptr);
            return;
        }
        if (env.type == msg::ErrorReply::type) {
            auto e = env.as<msg::ErrorReply>();
            if (!pending_.contains(env.id))
                spdlog::warn("pmix client: the broker says: {} ({})", e.message, e.status);
            complete(env.id, e.status != PMIX_SUCCESS ? e.status : PMIX_ERROR, nullptr);
            return;
        }
        complete(env.id, PMIX_SUCCESS, &env);
    } catch (const DecodeError &e) {
        spdlog::error("pmix client: {}", e.what());
        complete(env.id, PMIX_ERR_UNPACK_FAILURE, nullptr);
    }
}

void ClientActor::on_monitor() {
    for (;;) {
        zmq::message_t event, endpoint;
        if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
        if (event.more()) (void)monitor_.recv(endpoint, zmq::recv_flags::dontwait);
        if (event.size() < sizeof(std::uint16_t) || lost_) continue;
        std::uint16_t what;
        std::memcpy(&what, event.data(), sizeof what);
        spdlog::debug("pmix client: connection event {:#x}", what);
        lost_ = true;
        fail_all(PMIX_ERR_LOST_CONNECTION);
        if (lost_hook_) lost_hook_();
    }
}

void ClientActor::on_lost(std::function<void()> fn) {
    reactor_.post([this, fn = std::move(fn)] {
        lost_hook_ = fn;
        if (lost_ && lost_hook_) lost_hook_();
    });
}

void ClientActor::complete(std::uint64_t id, pmix_status_t status, const Envelope *env) {
    auto node = pending_.extract(id);
    if (!node) return;
    Pending &p = node.mapped();
    if (p.timer) reactor_.cancel(p.timer);
    if (!p.fence_key.empty()) fences_.erase(p.fence_key);
    p.done(status, env);
}

void ClientActor::fail_all(pmix_status_t status) {
    while (!pending_.empty()) complete(pending_.begin()->first, status, nullptr);
}

}  // namespace zpmix::client
