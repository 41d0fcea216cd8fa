#pragma once
// A tool's session with a broker in zpmix's own protocol, for what the operators' commands ask
// beyond the standard's tool API (broker/cmd/pmix_tool.hpp): `zpmix ps`'s rows per job and paused
// ranks, `preempt`, `pset`, `notify`, `release`, `events` (the monitoring interface's handshake
// and replay) and `exporter`. Found by --broker URI or the rendezvous file, a Hello as a tool,
// then requests answered within a deadline.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <zmq.hpp>

#include "actors/protocol/common.hpp"
#include "actors/protocol/rendezvous.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/curve_keys.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/runtime/zmq_frames.hpp"
#include "broker/cmd/pmix_tool.hpp"
#include "broker/config.hpp"

namespace zpmix::cli {

class ToolSession {
  public:
    // Throws std::runtime_error when no broker is found or it does not welcome us, UntrustedPath
    // (one) when what was found is not this user's.
    explicit ToolSession(std::string uri, std::chrono::milliseconds timeout) : timeout_(timeout) {
        if (uri.empty()) {
            auto found = find_broker(default_base_dir());
            if (!found)
                throw std::runtime_error("no broker running in " + default_base_dir() +
                                         " (start `zpmix broker`, or give --broker URI)");
            uri = found->uri;
        }
        check_ipc_endpoint(uri);  // another user's socket gets nothing of ours
        dealer_.set(zmq::sockopt::linger, 0);
        if (uri.starts_with("tcp://"))  // the broker's CURVE keypair, as its tcp.key holds it
            if (const char *k = ::getenv("ZPMIX_TCP_KEYS"); k && *k) {
                auto keys = CurveKeypair::parse(k);
                if (!keys) throw std::runtime_error("$ZPMIX_TCP_KEYS is not \"PUBLIC SECRET\"");
                keys->apply_to_client(dealer_);
            }
        tcp_ = uri.starts_with("tcp://");
        dealer_.connect(uri);
        msg::Hello hello;
        hello.role = "tool";
        hello.pid = ::getpid();
        welcome_ = ask<msg::Welcome>(hello);
    }

    const msg::Welcome &welcome() const { return welcome_; }

    // Sends m and returns the reply's body as R; throws on an ErrorReply or the deadline.
    template <class R, class M>
    R ask(const M &m) {
        return answer<R>(send(m));
    }

    // Sends m without waiting: answer<R>() reads its reply, so that several requests are in
    // flight at once. Returns its id.
    template <class M>
    std::uint64_t send(const M &m) {
        const std::uint64_t id = ++next_id_;
        const zmq::message_t bytes = encode(M::type, id, m);
        if (tcp_)  // in frames the broker's tcp socket takes (zmtp_wire.hpp)
            send_in_pieces(dealer_, bytes.data(), bytes.size());
        else
            dealer_.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::none);
        in_flight_.insert(id);
        return id;
    }

    // The reply to request `id` as R, within the deadline; throws on an ErrorReply or the
    // deadline. Replies to the other requests in flight are kept for their answer().
    template <class R>
    R answer(std::uint64_t id) {
        const auto deadline = std::chrono::steady_clock::now() + timeout_;
        in_flight_.erase(id);
        zmq::message_t bytes;
        if (auto kept = early_.extract(id)) bytes = std::move(kept.mapped());
        while (bytes.empty()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            zmq::pollitem_t item{dealer_.handle(), 0, ZMQ_POLLIN, 0};
            if (left.count() <= 0 || zmq::poll(&item, 1, left) == 0)
                throw std::runtime_error("no answer from the broker");
            zmq::message_t got;
            (void)dealer_.recv(got);
            const std::uint64_t of = decode(got).id;
            if (of == id)
                bytes = std::move(got);
            else if (in_flight_.contains(of))  // anything else is stale
                early_.emplace(of, std::move(got));
        }
        const Envelope env = decode(bytes);
        if (env.type == msg::ErrorReply::type) {
            const auto e = env.as<msg::ErrorReply>();
            throw std::runtime_error(status_text(e.status) + ": " + e.message);
        }
        return env.as<R>();
    }

  private:
    std::chrono::milliseconds timeout_;
    bool tcp_ = false;
    msg::Welcome welcome_;
    zmq::context_t ctx_;
    zmq::socket_t dealer_{ctx_, zmq::socket_type::dealer};
    std::uint64_t next_id_ = 0;
    std::set<std::uint64_t> in_flight_;              // sent, their answer() not called yet
    std::map<std::uint64_t, zmq::message_t> early_;  // replies read before their answer()
};

}  // namespace zpmix::cli
