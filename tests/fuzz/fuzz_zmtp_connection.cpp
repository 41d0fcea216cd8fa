// The client's ZmtpConnection (client/zmtp_connection.cpp) reading what a broker sends:
// the real class over a real Unix socket, whose other end is this program. An input is a flags
// byte and the bytes the "broker" sends before it closes. Flags bit 0: the connection is a SUB
// (which subscribes first, ending its handshake), else a pipelining DEALER; bit 1: a valid
// greeting and READY (ROUTER or XPUB) go before the bytes, so that mutations explore framing
// rather than the greeting. The connection must hand out whole messages within what it read and
// end at the broker's end of stream, without crashing.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime/zmtp_wire.hpp"
#include "client/zmtp_connection.hpp"

namespace {

using zpmix::client::ZmtpConnection;
using zpmix::client::ZmtpError;

struct Broker {
    std::string dir, path;
    int listen_fd = -1;
    Broker() {
        char d[] = "/tmp/fuzz_zmtp_connection.XXXXXX";
        if (!::mkdtemp(d)) std::abort();
        dir = d;
        path = dir + "/sock";
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
        listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listen_fd < 0 || ::bind(listen_fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
            ::listen(listen_fd, 4) != 0)
            std::abort();
    }
    ~Broker() {
        ::close(listen_fd);
        std::filesystem::remove_all(dir);
    }
};

// The broker's half of the handshake, as a ROUTER or an XPUB.
std::string handshake(std::string_view type) {
    char g[zpmix::zmtp::kGreetingSize];
    zpmix::zmtp::greeting(g);
    const std::string ready = zpmix::zmtp::ready(type);
    unsigned char h[zpmix::zmtp::kMaxHeader];
    const std::size_t n = zpmix::zmtp::put_header(h, zpmix::zmtp::kCommand, ready.size());
    return std::string(g, sizeof g) + std::string(reinterpret_cast<char *>(h), n) + ready;
}

// Every message the connection has, each frame touched (ASan checks the views).
void drain(ZmtpConnection &c) {
    std::vector<std::string_view> frames;
    while (c.next(frames)) {
        if (frames.empty()) __builtin_trap();
        std::size_t sum = 0;
        for (auto f : frames)
            for (char ch : f) sum += static_cast<unsigned char>(ch);
        volatile std::size_t keep = sum;
        (void)keep;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static Broker *b = new Broker;  // for the process's life: libFuzzer exits without unwinding
    static const bool cleanup = [] { return std::atexit([] { delete b; }) == 0; }();
    (void)cleanup;
    if (size == 0) return 0;
    const bool sub = data[0] & 1;
    std::string bytes = (data[0] & 2) ? handshake(sub ? "XPUB" : "ROUTER") : std::string();
    bytes.append(reinterpret_cast<const char *>(data) + 1, size - 1);

    const auto deadline = ZmtpConnection::Clock::now() + std::chrono::seconds(10);
    const auto role = sub ? ZmtpConnection::Role::sub : ZmtpConnection::Role::dealer;
    ZmtpConnection c("ipc://" + b->path, role, deadline, 1 << 16, /*pipeline=*/true);
    const int peer = ::accept4(b->listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (peer < 0) std::abort();
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(peer, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    // The connection's own greeting and READY, read so that closing is an end of stream.
    char sink[4096];
    while (::recv(peer, sink, sizeof sink, 0) > 0) {
    }
    ::close(peer);

    if (sub) (void)c.subscribe("ev/", true);
    // Read until the end of stream; each fill() reads something or ends it.
    drain(c);
    while (c.fill()) drain(c);
    drain(c);  // what the last fill() read before the end
    (void)c.refused();
    (void)c.broken();
    return 0;
}
