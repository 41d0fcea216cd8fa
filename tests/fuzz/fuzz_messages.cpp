// Every message body: an input is a message type name, a zero byte and a body; the name picks the
// message struct of actors/protocol/*.hpp (an unknown name picks one by its bytes, so that mutated
// names still reach every struct). Each body is read as as<T>() reads it (msg::Reader) and as
// msgpack-c's object tree converts it (unpack_map, for structs nested in cached blobs); whatever
// the Reader accepts must survive a round trip: packed again, it reads back and packs to the same
// bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <msgpack.hpp>

#include "actors/runtime/envelope.hpp"
#include "tests/fuzz/messages.hpp"

namespace {

using zpmix::fuzz::Messages;
using namespace std::string_view_literals;

template <class T>
std::string packed(const T &value) {
    msgpack::sbuffer buf;
    msgpack::pack(buf, value);
    return {buf.data(), buf.size()};
}

// Whether the body may hold a number that reads as the double 2^64: msgpack-c 4.1.3 packs that
// double with undefined behaviour (its integral check converts it to uint64_t), so such a body
// is not packed again. Launch's and Spawn's timeouts are the only doubles of the messages, and
// the product reads them, never packs one it received.
bool may_hold_2p64(std::string_view body) {
    for (std::size_t i = 0; i + 5 <= body.size(); ++i) {
        const std::string_view at = body.substr(i);
        if (at.starts_with("\xca\x5f\x80\x00\x00"sv) || at.starts_with("\xcb\x43\xf0"sv) ||
            (at.size() >= 9 && at.starts_with("\xcf\xff\xff\xff\xff\xff\xff"sv) &&
             static_cast<unsigned char>(at[7]) >= 0xfc))
            return true;
    }
    return false;
}

template <class T>
void fuzz_body(std::string_view body) {
    zpmix::Envelope env;
    env.version = zpmix::kProtocolVersion;
    env.type = T::type;
    env.body = body;
    try {
        const T value = env.as<T>();
        if (!may_hold_2p64(body)) {
            const std::string once = packed(value);
            zpmix::Envelope again = env;
            again.body = once;
            const std::string twice = packed(again.as<T>());
            if (once != twice) __builtin_trap();  // read back other than what was packed
        }
    } catch (const zpmix::DecodeError &) {
    }
    // msgpack-c's object tree, as unpack_bounded gives it to nested decoders.
    if (body.empty()) return;
    try {
        msgpack::object_handle h = zpmix::unpack_bounded(body.data(), body.size());
        T value{};
        h.get().convert(value);
    } catch (const zpmix::DecodeError &) {
    } catch (const msgpack::type_error &) {
    }
}

template <std::size_t... I>
void dispatch(std::string_view name, std::string_view body, std::index_sequence<I...>) {
    std::size_t which = 0;
    for (unsigned char c : name) which += c;
    which %= sizeof...(I);
    ((name == std::tuple_element_t<I, Messages>::type ? which = I : 0), ...);
    ((which == I ? fuzz_body<std::tuple_element_t<I, Messages>>(body) : void()), ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const std::size_t zero = input.find('\0');
    if (zero == std::string_view::npos) return 0;
    dispatch(input.substr(0, zero), input.substr(zero + 1),
             std::make_index_sequence<std::tuple_size_v<Messages>>{});
    return 0;
}
