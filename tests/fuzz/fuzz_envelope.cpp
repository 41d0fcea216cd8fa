// Envelope decoding over arbitrary bytes: decode, decode_borrowed, decode_in_place, as<T>() and
// own(), and unpack_bounded (msgpack-c's object tree, for payloads nested as bytes), under the
// default limits and under tight ones. Any input must decode or throw DecodeError.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "actors/protocol/common.hpp"
#include "actors/runtime/envelope.hpp"

namespace {

using zpmix::DecodeError;
using zpmix::Envelope;

// What every peer does with an envelope it decoded: look at the header, read the body.
void use(Envelope &env) {
    if (env.type.empty() || env.version == 0) __builtin_trap();  // decode() promised both
    try {
        (void)env.as<zpmix::msg::ErrorReply>();
    } catch (const DecodeError &) {
    }
    try {
        (void)env.as<std::string>();
    } catch (const DecodeError &) {
    }
    env.own();
    try {
        (void)env.as<zpmix::msg::Ok>();
    } catch (const DecodeError &) {
    }
}

void decode_all(const char *p, std::size_t n, const zpmix::DecodeLimits &limits) {
    try {
        Envelope env = zpmix::decode(p, n, limits);
        use(env);
    } catch (const DecodeError &) {
    }
    try {
        Envelope env = zpmix::decode_borrowed(p, n, limits);
        use(env);
    } catch (const DecodeError &) {
    }
    try {
        Envelope env = zpmix::decode_in_place(std::make_shared<const zmq::message_t>(p, n), limits);
        use(env);
    } catch (const DecodeError &) {
    }
    for (bool borrow : {false, true}) {
        try {
            msgpack::object_handle h = zpmix::unpack_bounded(p, n, limits, borrow);
            (void)h.get().type;
        } catch (const DecodeError &) {
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto *p = reinterpret_cast<const char *>(data);
    decode_all(p, size, {});
    zpmix::DecodeLimits tight;
    tight.max_message = 4096;
    tight.max_elements = 4;
    tight.max_depth = 3;
    decode_all(p, size, tight);
    return 0;
}
