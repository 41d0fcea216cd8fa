#pragma once
// What the broker's libzmq sockets share (its tcp listener, the tree link): reading one whole
// message without waiting, and ZAP's (RFC 27) reply. What a ZAP handler admits is its own.
#include <iterator>
#include <string>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace zpmix {

// Every frame of the next message, none when nothing is waiting.
inline std::vector<zmq::message_t> next_message(zmq::socket_t &s) {
    std::vector<zmq::message_t> parts;
    (void)zmq::recv_multipart(s, std::back_inserter(parts), zmq::recv_flags::dontwait);
    return parts;
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
