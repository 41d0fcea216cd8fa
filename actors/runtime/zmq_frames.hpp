#pragma once
// What the broker's libzmq sockets share (its tcp listener, tools, `zpmix run`): reading one whole
// message without waiting, a message sent and rejoined in pieces of the tcp frame limit, and
// ZAP's (RFC 27) reply. What a ZAP handler admits is its own.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix {

// Every frame of the next message, none when nothing is waiting.
inline std::vector<zmq::message_t> next_message(zmq::socket_t &s) {
    std::vector<zmq::message_t> parts;
    (void)zmq::recv_multipart(s, std::back_inserter(parts), zmq::recv_flags::dontwait);
    return parts;
}

// tcp: one piece of `bytes` per frame, each at most zmtp::kTcpFrameBytes (the largest frame the
// broker's tcp sockets take), sent as the rest of the message begun by the caller (`more`: and
// more frames follow). Throws zmq::error_t as send does; false when it would block (dontwait).
inline bool send_in_pieces(zmq::socket_t &s, const void *bytes, std::size_t size,
                           zmq::send_flags flags = zmq::send_flags::none, bool more = false) {
    const char *p = static_cast<const char *>(bytes);
    std::size_t at = 0;
    do {
        const std::size_t n = std::min(zmtp::kTcpFrameBytes, size - at);
        const bool last = at + n == size;
        if (!s.send(zmq::const_buffer(p + at, n),
                    (!last || more) ? flags | zmq::send_flags::sndmore : flags))
            return false;
        at += n;
    } while (at < size);
    return true;
}

// The frames from `first` on as one buffer: what send_in_pieces sent; nullopt when it would be
// over `limit` bytes.
inline std::optional<zmq::message_t> joined(std::vector<zmq::message_t> &parts, std::size_t first,
                                            std::size_t limit) {
    if (parts.size() == first + 1) return std::move(parts[first]);
    std::size_t size = 0;
    for (std::size_t i = first; i < parts.size(); ++i) size += parts[i].size();
    if (size > limit) return std::nullopt;
    zmq::message_t out(size);
    char *to = static_cast<char *>(out.data());
    for (std::size_t i = first; i < parts.size(); ++i) {
        if (parts[i].size() != 0) std::memcpy(to, parts[i].data(), parts[i].size());
        to += parts[i].size();
    }
    return out;
}

namespace zap {

// "200" admits the peer as `user_id` (read back as the messages' "User-Id"); else refused.
inline void reply(zmq::socket_t &zap, zmq::message_t &request_id, const std::string &status,
                  const std::string &text, const std::string &user_id) {
    zap.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    zap.send(request_id, zmq::send_flags::sndmore);
    zap.send(zmq::buffer(status), zmq::send_flags::sndmore);
    zap.send(zmq::buffer(text), zmq::send_flags::sndmore);
    zap.send(zmq::buffer(user_id), zmq::send_flags::sndmore);
    zap.send(zmq::message_t(), zmq::send_flags::none);
}

}  // namespace zap
}  // namespace zpmix
