#pragma once
// ClientActor: a client process's end of its session with the node's broker. It runs on its own
// progress thread with its own Reactor and owns the DEALER socket; API threads hand it requests
// (thread-safe) and get their answers through callbacks that run on the progress thread.
// Replies are matched to requests by envelope id, and FenceDone (one message for every local
// participant, without a per-client id) by its fence key. A monitor on the DEALER notices the
// broker's end: every pending and later request then fails with PMIX_ERR_LOST_CONNECTION.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include <pmix_common.h>
#include <zmq.hpp>

#include "actors/client/client_store.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/runtime/reactor.hpp"

namespace zpmix::client {

class ClientActor {
  public:
    // status, and the reply's envelope when the broker answered with something else than an error.
    using Done = std::function<void(pmix_status_t, const Envelope *)>;

    // A singleton's actor: a progress thread (for the callbacks of non-blocking calls), no broker.
    explicit ClientActor(ClientStore &store);
    // Connects to the broker at `uri` (the Hello is the first request).
    ClientActor(ClientStore &store, const std::string &uri);
    ~ClientActor();  // stops the progress thread; unsent messages get a short linger
    ClientActor(const ClientActor &) = delete;
    ClientActor &operator=(const ClientActor &) = delete;

    bool has_broker() const { return has_broker_; }

    // Thread-safe. Sends `m`; `done` runs on the progress thread with the reply, an ErrorReply's
    // status, PMIX_ERR_TIMEOUT after timeout_ms (0 = none) or PMIX_ERR_LOST_CONNECTION.
    template <class Msg>
    void request(const Msg &m, std::uint32_t timeout_ms, Done done) {
        const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
        submit(id, std::string(), encode(Msg::type, id, m), timeout_ms, std::move(done));
    }
    // A fence contribution: completed by the FenceDone named by its key (the store has the
    // fence's data before `done` runs).
    void fence(const msg::FenceContribute &m, Done done);
    // Thread-safe: a message that needs no answer (PMIx_Commit).
    template <class Msg>
    void notify(const Msg &m) {
        submit(0, std::string(), encode(Msg::type, 0, m), 0, nullptr);
    }
    // Thread-safe: runs fn on the progress thread.
    void post(std::function<void()> fn) { reactor_.post(std::move(fn)); }
    // For the actor's companions on the progress thread (the events' SUB socket).
    Reactor &reactor() { return reactor_; }
    zmq::context_t &context() { return ctx_; }
    // Thread-safe: fn runs on the progress thread once the broker's end is noticed, after the
    // pending requests failed (at once if it already was). nullptr removes it.
    void on_lost(std::function<void()> fn);

  private:
    struct Pending {
        Done done;
        std::string fence_key;  // empty unless a fence
        Reactor::TimerId timer = 0;
    };

    ClientStore &store_;
    bool has_broker_ = false;
    Reactor reactor_;
    zmq::context_t ctx_;
    zmq::socket_t dealer_;
    zmq::socket_t monitor_;  // the DEALER's connection events
    std::atomic<std::uint64_t> next_id_{1};
    // Progress thread only:
    std::unordered_map<std::uint64_t, Pending> pending_;
    std::unordered_map<std::string, std::uint64_t> fences_;  // fence key -> request id
    bool lost_ = false;
    std::function<void()> lost_hook_;
    std::thread thread_;

    void submit(std::uint64_t id, std::string fence_key, zmq::message_t msg,
                std::uint32_t timeout_ms, Done done);
    void on_readable();
    void on_monitor();
    void on_message(const zmq::message_t &bytes);
    void complete(std::uint64_t id, pmix_status_t status, const Envelope *env);
    void fail_all(pmix_status_t status);
};

}  // namespace zpmix::client
