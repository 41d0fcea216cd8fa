#pragma once
// ZMTP 3.0 (rfc.zeromq.org/spec/23), the ZeroMQ wire protocol, as far as zpmix speaks it: the
// NULL mechanism's greeting and commands and the framing. Shared by the client's connection
// (client/zmtp_connection.*), the broker's listener (broker/zmtp_listener.*) and the tree link's
// connections (actors/tree/link_connection.*, which speak CURVE: zmtp_curve.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace zpmix::zmtp {

// Frame flags.
inline constexpr unsigned char kMore = 0x01, kLong = 0x02, kCommand = 0x04;
inline constexpr std::size_t kGreetingSize = 64;
inline constexpr std::size_t kMaxHeader = 9;

// tcp: the largest frame the broker's libzmq sockets take (ZMQ_MAXMSGSIZE, which binds the
// handshake's frames as much as the messages'), so that a peer that has not authenticated can
// make it hold little. A larger message travels as several frames of at most kTcpFrameBytes of
// its bytes, rejoined by the receiver; kTcpFrameLimit adds what CURVE wraps around each.
inline constexpr std::size_t kTcpFrameBytes = 64 * 1024;
inline constexpr std::size_t kTcpFrameLimit = kTcpFrameBytes + 256;

// Our greeting: signature, version 3.0, the mechanism (NULL, or CURVE on tcp), as-server 0,
// filler.
inline void greeting(char (&g)[kGreetingSize], std::string_view mechanism = "NULL") {
    std::memset(g, 0, sizeof g);
    g[0] = '\xff';
    g[9] = '\x7f';
    g[10] = 3;
    std::memcpy(g + 12, mechanism.data(), std::min<std::size_t>(mechanism.size(), 20));
}

// Whether a peer's greeting is ZMTP 3.x with the mechanism.
inline bool greeting_ok(const char *g, std::string_view mechanism = "NULL") {
    return static_cast<unsigned char>(g[0]) == 0xff && g[9] == 0x7f && g[10] >= 3 &&
           mechanism.size() < 20 && std::memcmp(g + 12, mechanism.data(), mechanism.size()) == 0 &&
           g[12 + mechanism.size()] == 0;
}

// A frame header for `size` bytes of body into h (kMaxHeader bytes); returns its length.
inline std::size_t put_header(unsigned char *h, unsigned char flags, std::size_t size) {
    if (size <= 255) {
        h[0] = flags;
        h[1] = static_cast<unsigned char>(size);
        return 2;
    }
    h[0] = flags | kLong;
    for (int i = 0; i < 8; ++i) h[1 + i] = static_cast<unsigned char>(size >> (56 - 8 * i));
    return 9;
}

struct FrameHeader {
    unsigned char flags = 0;
    std::size_t size = 0;    // of the body
    std::size_t header = 0;  // bytes of the header itself
};

// The header at the start of [p, p + n), if it is all there.
inline std::optional<FrameHeader> read_header(const char *p, std::size_t n) {
    if (n < 2) return std::nullopt;
    FrameHeader f{static_cast<unsigned char>(p[0]), static_cast<unsigned char>(p[1]), 2};
    if (f.flags & kLong) {
        if (n < 9) return std::nullopt;
        f.size = 0;
        for (std::size_t i = 1; i < 9; ++i) f.size = f.size << 8 | static_cast<unsigned char>(p[i]);
        f.header = 9;
    }
    return f;
}

// A command's body: name length, name, data.
inline std::string command(std::string_view name, std::string_view data = {}) {
    std::string c(1, static_cast<char>(name.size()));
    c += name;
    c += data;
    return c;
}

// The one property we send, Socket-Type (in READY, or CURVE's INITIATE).
inline std::string socket_type_property(std::string_view socket_type) {
    std::string props("\x0bSocket-Type");
    const auto n = static_cast<std::uint32_t>(socket_type.size());
    for (int shift = 24; shift >= 0; shift -= 8) props += static_cast<char>(n >> shift);
    props += socket_type;
    return props;
}

// READY with one property, Socket-Type.
inline std::string ready(std::string_view socket_type) {
    return command("READY", socket_type_property(socket_type));
}

// ERROR with a reason (at most 255 bytes).
inline std::string error(std::string_view reason) {
    reason = reason.substr(0, 255);
    return command("ERROR", std::string(1, static_cast<char>(reason.size())) + std::string(reason));
}

// The command's name, and its data in `data`; empty for a malformed command.
inline std::string_view command_name(std::string_view body, std::string_view &data) {
    if (body.empty()) return {};
    const std::size_t n = static_cast<unsigned char>(body[0]);
    if (body.size() < 1 + n) return {};
    data = body.substr(1 + n);
    return body.substr(1, n);
}

// A property of a READY command's data, or nullopt when absent or malformed.
inline std::optional<std::string_view> property(std::string_view props, std::string_view name) {
    while (!props.empty()) {
        const std::size_t n = static_cast<unsigned char>(props[0]);
        if (props.size() < 1 + n + 4) return std::nullopt;
        const std::string_view key = props.substr(1, n);
        std::uint32_t len = 0;
        for (std::size_t i = 0; i < 4; ++i)
            len = len << 8 | static_cast<unsigned char>(props[1 + n + i]);
        if (props.size() - (1 + n + 4) < len) return std::nullopt;
        const std::string_view value = props.substr(1 + n + 4, len);
        if (key.size() == name.size() &&
            std::equal(key.begin(), key.end(), name.begin(),
                       [](char a, char b) { return (a | 0x20) == (b | 0x20); }))
            return value;
        props = props.substr(1 + n + 4 + len);
    }
    return std::nullopt;
}

}  // namespace zpmix::zmtp
