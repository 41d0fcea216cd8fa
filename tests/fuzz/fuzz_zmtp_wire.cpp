// The ZMTP 3.0 pieces both ends parse with (actors/runtime/zmtp_wire.hpp) over arbitrary bytes:
// the greeting check, frame headers, a command's name and data, a READY's properties. And what
// they must agree on with the writers: a header put for a size reads back as that size, a READY
// made for a socket type names it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "actors/runtime/zmtp_wire.hpp"

namespace zmtp = zpmix::zmtp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view in(reinterpret_cast<const char *>(data), size);
    if (size >= zmtp::kGreetingSize) {
        // Exactly a greeting's bytes, so that ASan sees a read past them.
        const std::string g(in.substr(0, zmtp::kGreetingSize));
        (void)zmtp::greeting_ok(g.data());
    }
    if (const auto f = zmtp::read_header(in.data(), in.size())) {
        if (f->header > size || (f->header != 2 && f->header != 9)) __builtin_trap();
        unsigned char h[zmtp::kMaxHeader];
        const std::size_t n = zmtp::put_header(h, f->flags & zmtp::kCommand, f->size);
        const auto back = zmtp::read_header(reinterpret_cast<const char *>(h), n);
        if (!back || back->size != f->size || back->header != n) __builtin_trap();
    }
    // The input as a command's body, and its data as a READY's properties.
    std::string_view props;
    const std::string_view name = zmtp::command_name(in, props);
    if (name.size() + props.size() > size) __builtin_trap();
    for (std::string_view key : {"Socket-Type", "Identity", "socket-type", ""})
        if (const auto v = zmtp::property(props, key))
            if (v->data() < in.data() || v->data() + v->size() > in.data() + size) __builtin_trap();
    (void)zmtp::property(in, "Socket-Type");
    // A READY made for the input's first bytes as a socket type names that type.
    const std::string_view type = in.substr(0, 255);
    const std::string ready = zmtp::ready(type);
    std::string_view ready_props;
    if (zmtp::command_name(ready, ready_props) != "READY") __builtin_trap();
    const auto back = zmtp::property(ready_props, "socket-TYPE");
    if (!back || *back != type) __builtin_trap();
    const std::string error = zmtp::error(in);
    std::string_view reason;
    if (zmtp::command_name(error, reason) != "ERROR" || reason.empty()) __builtin_trap();
    return 0;
}
