// The tree link's connection (actors/tree/link_connection.cpp) on its parent's end, reading what
// a child sends over a socket pair. An input is a mode byte and the rest. Mode 0: a CURVE
// greeting, then the bytes as they are (frames of a handshake that no forger can finish: the
// connection must never become ready nor deliver a message). Mode 1: a real client
// (CurveClient, the fixed keypair below) completes the handshake, then each chunk of the rest (a
// length byte, a flags byte, the payload) goes as one MESSAGE frame sealed with the flags' low
// bits (more, command); bit 7 flips a bit of the box (a forgery, which must end the connection).
// The messages delivered must be exactly the frames sealed, grouped by the more flag.
#include <sodium.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "actors/runtime/reactor.hpp"
#include "actors/runtime/zmtp_wire.hpp"
#include "actors/tree/link_connection.hpp"

namespace {

using zpmix::CurveClient;
using zpmix::CurveKey;
using zpmix::tree::LinkConnection;

struct Keys {
    CurveKey pub{}, sec{};
    Keys() {
        if (sodium_init() < 0) std::abort();
        std::array<unsigned char, crypto_box_SEEDBYTES> seed{};
        seed.fill(11);  // fixed, so that a crash replays
        crypto_box_seed_keypair(pub.data(), sec.data(), seed.data());
    }
};

void write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n <= 0) std::abort();
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::string frame(unsigned char flags, std::string_view body) {
    unsigned char h[zpmix::zmtp::kMaxHeader];
    std::string out(reinterpret_cast<char *>(h), zpmix::zmtp::put_header(h, flags, body.size()));
    out += body;
    return out;
}

// The next frame the connection wrote (after the greeting), read whole from the socket.
std::string read_frame(int fd, std::string &pending) {
    for (;;) {
        if (auto f = zpmix::zmtp::read_header(pending.data(), pending.size());
            f && pending.size() >= f->header + f->size) {
            std::string body = pending.substr(f->header, f->size);
            pending.erase(0, f->header + f->size);
            return body;
        }
        char buf[4096];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) return {};
        pending.append(buf, static_cast<std::size_t>(n));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static const Keys keys;
    static auto log =
        std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
    if (size == 0 || size > 8193) return 0;  // at most kMaxFrames chunks
    const std::string_view in(reinterpret_cast<const char *>(data) + 1, size - 1);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    zpmix::Reactor reactor;
    std::vector<std::vector<std::string>> delivered;
    LinkConnection::Settings s;
    s.side = LinkConnection::Side::parent;
    s.public_key = s.peer_key = keys.pub;
    s.secret_key = keys.sec;
    s.max_message = 1 << 20;
    auto conn = std::make_unique<LinkConnection>(
        reactor, sv[0], "fuzz", s,
        LinkConnection::Callbacks{.ready = {},
                                  .message =
                                      [&](const std::vector<std::string_view> &frames) {
                                          delivered.emplace_back(frames.begin(), frames.end());
                                      },
                                  .closed = {}},
        *log);
    conn->start();
    char g[zpmix::zmtp::kGreetingSize];
    zpmix::zmtp::greeting(g, "CURVE");
    std::string from_server;
    if (data[0] % 2 == 0) {
        write_all(sv[1], std::string(g, sizeof g) + std::string(in));
        conn->read_input();
        if (conn->ready() || !delivered.empty()) std::abort();
        conn.reset();
        ::close(sv[1]);
        return 0;
    }
    CurveClient c(keys.pub, keys.pub, keys.sec);
    write_all(sv[1], std::string(g, sizeof g) + frame(zpmix::zmtp::kCommand, c.hello()));
    conn->read_input();
    char their_greeting[zpmix::zmtp::kGreetingSize];
    if (::read(sv[1], their_greeting, sizeof their_greeting) != sizeof their_greeting) std::abort();
    if (!c.welcome(read_frame(sv[1], from_server))) std::abort();
    write_all(sv[1], frame(zpmix::zmtp::kCommand,
                           c.initiate(zpmix::zmtp::socket_type_property("DEALER"))));
    conn->read_input();
    if (!conn->ready() || !c.ready(read_frame(sv[1], from_server))) std::abort();
    std::vector<std::vector<std::string>> expected;
    std::vector<std::string> partial;
    bool forged_sent = false;
    for (std::string_view rest = in; rest.size() >= 2 && !forged_sent;) {
        const std::size_t len =
            std::min<std::size_t>(static_cast<unsigned char>(rest[0]), rest.size() - 2);
        const auto flags = static_cast<unsigned char>(rest[1]);
        const std::string_view payload = rest.substr(2, len);
        rest.remove_prefix(2 + len);
        std::string box = c.seal(flags & 0x03, payload);
        if (flags & 0x80) {
            box[box.size() - 1 - len % (box.size() - 16)] ^= 1;
            forged_sent = true;
        } else if (!(flags & CurveClient::kCommand)) {
            partial.emplace_back(payload);
            if (!(flags & CurveClient::kMore)) expected.push_back(std::move(partial)), partial = {};
        }
        write_all(sv[1], frame(0, box));
        conn->read_input();
    }
    if (delivered != expected) std::abort();
    if (forged_sent != conn->is_closed()) std::abort();
    conn.reset();
    ::close(sv[1]);
    return 0;
}
