// The broker's ZmtpListener (broker/zmtp_listener.cpp) reading what one peer sends: the
// real class, on its reactor, over a real Unix socket. An input is a flags byte and the bytes
// the peer sends before it closes its end. Flags bit 0: the listener is an XPUB, else a ROUTER;
// bit 1: a valid greeting and READY (DEALER or SUB) go before the bytes, so that mutations
// explore framing and commands rather than the greeting. The listener must end the connection
// (it always does once the peer closes) without crashing, and answer every message it passes on.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/runtime/reactor.hpp"
#include "actors/runtime/zmtp_wire.hpp"
#include "broker/zmtp_listener.hpp"

namespace {

using namespace std::chrono_literals;
using zpmix::ZmtpListener;

struct Harness {
    std::string dir;
    zpmix::Reactor reactor;
    ZmtpListener router, xpub;

    static std::string make_dir() {
        char d[] = "/tmp/fuzz_zmtp_listener.XXXXXX";
        if (!::mkdtemp(d)) std::abort();
        return d;
    }
    Harness()
        : dir(make_dir()),
          router(reactor, {.path = dir + "/router",
                           .kind = ZmtpListener::Kind::router,
                           .uid = static_cast<std::int64_t>(::getuid()),
                           .max_message = 1 << 16}),
          xpub(reactor, {.path = dir + "/xpub",
                         .kind = ZmtpListener::Kind::publisher,
                         .uid = static_cast<std::int64_t>(::getuid()),
                         .max_message = 1 << 16}) {
        spdlog::set_level(spdlog::level::off);  // every bad peer is logged
        // A router echoes each message's frames to its sender; an XPUB publishes on each
        // subscription's topic: the replies exercise the writing side too.
        router.on_message([this](const std::string &peer,
                                 const std::vector<std::string_view> &frames,
                                 const zpmix::PeerCredentials &) {
            std::string all;
            for (auto f : frames) all += f;
            router.send(peer, all);
        });
        xpub.on_subscription([this](bool on, std::string_view topic) {
            if (on) xpub.publish(topic, "event");
        });
        router.listen();
        xpub.listen();
    }
    ~Harness() {
        router.close();
        xpub.close();
        std::filesystem::remove_all(dir);
    }
};

// Our peer's half of the handshake, as a DEALER or a SUB.
std::string handshake(std::string_view type) {
    char g[zpmix::zmtp::kGreetingSize];
    zpmix::zmtp::greeting(g);
    const std::string ready = zpmix::zmtp::ready(type);
    unsigned char h[zpmix::zmtp::kMaxHeader];
    const std::size_t n = zpmix::zmtp::put_header(h, zpmix::zmtp::kCommand, ready.size());
    return std::string(g, sizeof g) + std::string(reinterpret_cast<char *>(h), n) + ready;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static Harness *h = new Harness;  // for the process's life: libFuzzer exits without unwinding
    static const bool cleanup = [] { return std::atexit([] { delete h; }) == 0; }();
    (void)cleanup;
    if (size == 0) return 0;
    const bool publisher = data[0] & 1;
    std::string bytes = (data[0] & 2) ? handshake(publisher ? "SUB" : "DEALER") : std::string();
    bytes.append(reinterpret_cast<const char *>(data) + 1, size - 1);

    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = h->dir + (publisher ? "/xpub" : "/router");
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) std::abort();
    // What the socket's buffer takes (the reactor is not running yet), then our end of stream.
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    // The listener's answers are read and dropped; its end of stream (the connection dropped)
    // ends the run. A listener that never drops a closed peer is a hang, not a pass.
    h->reactor.watch_fd(fd, [fd] {
        char buf[65536];
        for (;;) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n > 0) continue;
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno == EAGAIN) return;
            h->reactor.unwatch_fd(fd);
            h->reactor.stop();
            return;
        }
    });
    const auto timer = h->reactor.after(10s, [] {
        std::fprintf(stderr, "the listener did not end a closed connection within 10 s\n");
        std::abort();
    });
    h->reactor.run();
    h->reactor.cancel(timer);
    ::close(fd);
    if (h->router.peers() + h->xpub.peers() != 0) __builtin_trap();  // the dropped peer was freed
    return 0;
}
