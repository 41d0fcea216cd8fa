#pragma once
// Session: a client process's end of its session with the node's broker. It owns the session
// connection (a DEALER on the broker's ROUTER, spoken by ZmtpConnection) and a progress thread
// with its own Reactor, where the callbacks of non-blocking calls and event handlers run.
//
// Every message is written by the thread that sends it, so the broker sees a thread's messages
// in the order it sent them (a Commit before the Fence that follows it). Answers are read by
// whoever waits for them: a blocking call reads the socket itself on its own thread (one wake-up
// per answer, the reason this class exists in this shape); the progress thread reads only while
// non-blocking requests are outstanding. Whoever reads dispatches every answer it finds to its
// owner. Replies are matched to requests by envelope id, and FenceDone (one message for every
// local participant, without a per-client id) by its fence key: which request waits for which
// fence, and which fences and segments this process still needs, is ClientFences' bookkeeping.
// When the broker's end goes, every pending and later request fails with
// PMIX_ERR_LOST_CONNECTION.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <pmix_common.h>

#include "actors/protocol/compat.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/runtime/reactor.hpp"
#include "client/fences.hpp"
#include "client/store.hpp"
#include "client/zmtp_connection.hpp"

namespace zpmix::client {

// When a wait of timeout_ms ends; 0 is no limit of its own (the caller gave no PMIX_TIMEOUT).
inline std::chrono::steady_clock::time_point deadline_after(std::uint32_t timeout_ms) {
    return timeout_ms == 0
               ? std::chrono::steady_clock::time_point::max()
               : std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
}

class Session {
  public:
    // status, and the reply's envelope when the broker answered with something else than an error.
    using Done = std::function<void(pmix_status_t, const Envelope *)>;
    struct Reply {
        pmix_status_t status = PMIX_ERROR;
        Envelope env;         // the reply when status is PMIX_SUCCESS
        std::string message;  // the broker's reason when it answered with an ErrorReply
    };

    // A singleton's session: a progress thread (for the callbacks of non-blocking calls), no
    // broker.
    explicit Session(ClientStore &store);
    // Connects to the broker at `uri` within timeout_ms; throws ZmtpError when it cannot.
    // `pipeline`: the first request follows the handshake at once (ZmtpConnection).
    // `tcp_keys`: the broker's CURVE keypair, which tcp needs.
    Session(ClientStore &store, const std::string &uri, std::uint32_t timeout_ms,
            bool pipeline = false, const std::optional<CurveKeypair> &tcp_keys = std::nullopt);
    ~Session();  // fails what is pending, stops the progress thread, closes the session
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    bool has_broker() const { return conn_ != nullptr; }
    // The broker's release and protocol features, from its Welcome (before it: all of ours).
    // Set once, before the session is used by more than the thread that opened it. A request
    // of a feature the broker lacks fails at once with PMIX_ERR_NOT_SUPPORTED, logged.
    void set_broker(msg::PeerFeatures features) { broker_ = std::move(features); }
    const msg::PeerFeatures &broker() const { return broker_; }
    // The store the session's answers go to (the client's, or the tool's).
    ClientStore &store() const { return store_; }
    // The broker's address and, on tcp, its keypair: the events connection uses them too.
    const std::string &uri() const { return uri_; }
    const std::optional<CurveKeypair> &tcp_keys() const { return tcp_keys_; }
    // The broker turned this process away in the handshake, and the reason it gave. Valid once
    // a call has failed with PMIX_ERR_LOST_CONNECTION (the write may have met the closed
    // connection before anything was read: refused() reads what the broker sent before closing).
    bool refused();
    std::string refusal() const { return conn_ ? conn_->refusal() : std::string(); }

    // Thread-safe, blocking: sends `m` and waits on this thread for the answer, an ErrorReply's
    // status, PMIX_ERR_TIMEOUT after timeout_ms (0 = none) or PMIX_ERR_LOST_CONNECTION.
    // Writing a request waits for the broker to take it up to timeout_ms, else up to the
    // connection's write_timeout(): then PMIX_ERR_TIMEOUT.
    template <class Msg>
    Reply call(const Msg &m, std::uint32_t timeout_ms) {
        if (!broker_.serves(Msg::type)) return unsupported(Msg::type);
        const std::uint64_t id = next_id();
        return call_bytes(id, {}, encode(Msg::type, id, m), timeout_ms);
    }
    // Thread-safe, blocking: a fence contribution, completed by the FenceDone named by its key
    // (the store has the fence's data, or its segment mapped, when this returns). Fills in
    // m.done_through.
    pmix_status_t fence_call(msg::FenceContribute m);

    // Thread-safe: sends `m`; `done` runs on the progress thread with the outcome, as for call().
    template <class Msg>
    void request(const Msg &m, std::uint32_t timeout_ms, Done done) {
        if (!broker_.serves(Msg::type)) return unsupported(Msg::type, std::move(done));
        const std::uint64_t id = next_id();
        submit(id, Pending{.done = std::move(done)}, encode(Msg::type, id, m), timeout_ms);
    }
    // Non-blocking form of fence_call.
    void fence(msg::FenceContribute m, Done done);
    // Thread-safe: a message that needs no answer (PMIx_Commit, a heartbeat). False when the
    // broker is gone (or there is none) or did not take it within the write timeout.
    template <class Msg>
    bool notify(const Msg &m) {
        if (!broker_.serves(Msg::type)) return unsupported(Msg::type), false;
        return send_bytes(encode(Msg::type, 0, m), 0, 0) == PMIX_SUCCESS;
    }
    // Thread-safe: the broker's messages of `type` under envelope id `id` (a stream, such as the
    // deliveries of PMIx_IOF_pull, which follow its answer) go to fn on the progress thread, in
    // order, until close_stream(id); while a stream is open the progress thread reads the socket.
    // The id comes from new_id(), and the request that opens the stream uses it (call_as).
    std::uint64_t new_id() { return next_id(); }
    void open_stream(std::uint64_t id, std::string type, std::function<void(const Envelope &)> fn);
    void close_stream(std::uint64_t id);
    template <class Msg>
    Reply call_as(std::uint64_t id, const Msg &m, std::uint32_t timeout_ms) {
        if (!broker_.serves(Msg::type)) return unsupported(Msg::type);
        return call_bytes(id, {}, encode(Msg::type, id, m), timeout_ms);
    }
    // request() under a given id: `done` runs on the progress thread before anything the stream
    // `id` receives after the answer.
    template <class Msg>
    void request_as(std::uint64_t id, const Msg &m, std::uint32_t timeout_ms, Done done) {
        if (!broker_.serves(Msg::type)) return unsupported(Msg::type, std::move(done));
        submit(id, Pending{.done = std::move(done)}, encode(Msg::type, id, m), timeout_ms);
    }
    // Thread-safe: runs fn on the progress thread.
    void post(std::function<void()> fn) { reactor_.post(std::move(fn)); }
    // For the session's companions on the progress thread (the events' SUB connection).
    Reactor &reactor() { return reactor_; }
    // Thread-safe: fn runs on the progress thread once the broker's end is noticed, after the
    // pending requests failed (at once if it already was). nullptr removes it.
    void on_lost(std::function<void()> fn);
    // Thread-safe: a companion noticed that the broker is gone (its own connection ended).
    void connection_lost();
    // Thread-safe, without reading: whether the broker's end of the session is still there.
    bool broker_alive();

  private:
    // A request waiting for its answer: a blocking caller's slot, or a callback for the
    // progress thread.
    struct Pending {
        Done done{};                   // non-blocking
        std::optional<Reply> *slot{};  // blocking: filled in by the reader
        std::string fence_key{};       // empty unless a fence, open in fences_ until completed
    };

    ClientStore &store_;
    ClientFences fences_;
    Reactor reactor_;
    std::string uri_;
    std::optional<CurveKeypair> tcp_keys_;
    std::unique_ptr<ZmtpConnection> conn_;
    msg::PeerFeatures broker_;
    std::atomic<std::uint64_t> next_id_{1};

    std::mutex mu_;                     // guards what follows, down to reader_wanted_
    std::condition_variable answered_;  // a slot was filled, or the reader role became free
    std::unordered_map<std::uint64_t, Pending> pending_;
    std::size_t async_pending_ = 0;
    struct Stream {
        std::string type;
        std::shared_ptr<std::function<void(const Envelope &)>> fn;
    };
    std::unordered_map<std::uint64_t, Stream> streams_;
    bool lost_ = false;
    bool reader_wanted_ = false;  // the progress thread needs the socket a blocking reader holds

    std::mutex read_mu_;  // the reader role (fences_.take() is the reader's)
    // Progress thread only:
    bool watching_ = false;
    std::unordered_map<std::uint64_t, Reactor::TimerId> timers_;
    std::function<void()> lost_hook_;
    std::thread thread_;

    std::uint64_t next_id() { return next_id_.fetch_add(1, std::memory_order_relaxed); }
    // A request of `type`, which the broker's release lacks: logged, and answered
    // PMIX_ERR_NOT_SUPPORTED (`done` on the progress thread).
    Reply unsupported(std::string_view type);
    void unsupported(std::string_view type, Done done);
    Reply call_bytes(std::uint64_t id, Pending pending, const zmq::message_t &bytes,
                     std::uint32_t timeout_ms);
    void submit(std::uint64_t id, Pending pending, const zmq::message_t &bytes,
                std::uint32_t timeout_ms);
    // Writes a message within timeout_ms (0: the connection's write timeout). A timeout fails
    // request `id` (if not 0) with PMIX_ERR_TIMEOUT; a connection that ends (or is left
    // mid-message) fails everything pending. The status of the write.
    pmix_status_t send_bytes(const zmq::message_t &bytes, std::uint64_t id,
                             std::uint32_t timeout_ms);
    // Reads and dispatches until `slot` is filled or `deadline` passes (the caller holds read_mu_).
    void read_until(std::optional<Reply> &slot, ZmtpConnection::Clock::time_point deadline);
    bool read_available();     // reader: fill + dispatch; false when the connection is gone
    void dispatch_buffered();  // reader: dispatches the complete messages already read
    void dispatch(std::string_view bytes);
    // `message`: an ErrorReply's reason, for a blocking caller.
    void complete(std::uint64_t id, pmix_status_t status, Envelope *env,
                  std::string_view message = {});
    void complete_locked(std::unique_lock<std::mutex> &lock, std::uint64_t id, pmix_status_t status,
                         Envelope *env, std::string_view message = {});
    void mark_lost();
    void update_watch();  // progress thread: watch the socket iff non-blocking answers are due
    void on_readable();   // progress thread
};

}  // namespace zpmix::client
