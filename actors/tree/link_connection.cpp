#include "actors/tree/link_connection.hpp"

#include <poll.h>
#include <sodium.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix::tree {

namespace {

constexpr std::size_t kReadChunk = 65536;
constexpr std::size_t kReadPerWake = 4 * kReadChunk;  // then the other connections get a turn

std::string socket_type_of(std::string_view metadata) {
    const auto type = zmtp::property(metadata, "Socket-Type");
    return type ? std::string(*type) : std::string();
}

}  // namespace

LinkConnection::LinkConnection(Reactor &reactor, int fd, std::string peer, Settings settings,
                               Callbacks callbacks, spdlog::logger &log)
    : reactor_(reactor),
      fd_(fd),
      peer_(std::move(peer)),
      s_(settings),
      cb_(std::move(callbacks)),
      log_(log),
      state_(settings.side == Side::child ? State::connecting : State::greeting) {
    if (s_.side == Side::child)
        client_ = std::make_unique<CurveClient>(s_.peer_key, s_.public_key, s_.secret_key);
    else
        server_ = std::make_unique<CurveServer>(s_.public_key, s_.secret_key);
}

LinkConnection::~LinkConnection() {
    *alive_ = false;
    if (handshake_timer_) reactor_.cancel(handshake_timer_);
    if (stall_timer_) reactor_.cancel(stall_timer_);
    if (state_ != State::closed) reactor_.unwatch_fd(fd_);
    ::close(fd_);
}

void LinkConnection::start() {
    progress_ = Clock::now();
    handshake_timer_ = reactor_.after(s_.handshake_timeout, [this] {
        handshake_timer_ = 0;
        if (state_ != State::ready)
            close(fmt::format("no CURVE handshake within {} ms", s_.handshake_timeout.count()));
    });
    reactor_.watch_fd(fd_, [this] { read_input(); });
    if (state_ == State::connecting) {
        want_write_ = true;
        reactor_.when_writable(fd_, [this] { connected(); });
        return;
    }
    // The parent's side: our greeting (as-server) goes at once; the client's HELLO follows its.
    char g[zmtp::kGreetingSize];
    zmtp::greeting(g, "CURVE");
    g[32] = 1;
    put_raw({g, sizeof g});
    flush();
}

void LinkConnection::connected() {
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    want_write_ = false;
    reactor_.when_writable(fd_, {});
    if (err != 0) return close(std::string("cannot connect: ") + std::strerror(err));
    state_ = State::greeting;
    char g[zmtp::kGreetingSize];
    zmtp::greeting(g, "CURVE");
    put_raw({g, sizeof g});
    put_command(client_->hello());
    flush();
}

// --- input -----------------------------------------------------------------------------------

void LinkConnection::read_input() {
    if (state_ == State::closed || state_ == State::connecting) return;
    std::size_t total = 0;
    bool eof = false;
    std::string error;
    while (total < kReadPerWake) {
        in_.reserve(kReadChunk);
        const std::size_t want = std::min(in_.room(), kReadPerWake - total);
        const ssize_t got = ::recv(fd_, in_.tail(), want, 0);
        if (got > 0) {
            in_.wrote(static_cast<std::size_t>(got));
            total += static_cast<std::size_t>(got);
            if (static_cast<std::size_t>(got) < want) break;
            continue;
        }
        if (got == 0) {
            eof = true;
        } else if (errno == EINTR) {
            continue;
        } else if (errno != EAGAIN) {
            eof = true;
            error = std::strerror(errno);
        }
        break;
    }
    parse();  // what the peer sent before it left still counts
    if (eof && state_ != State::closed) close(error.empty() ? std::string(kPeerClosed) : error);
}

void LinkConnection::parse() {
    while (state_ != State::closed) {
        if (state_ == State::greeting) {
            if (in_.size() < zmtp::kGreetingSize) return;
            if (!zmtp::greeting_ok(in_.data(), "CURVE")) {
                handshake_failed_ = true;
                return close("not a ZMTP 3 peer with the CURVE mechanism");
            }
            in_.consume(zmtp::kGreetingSize);
            state_ = State::handshake;
            continue;
        }
        const auto f = zmtp::read_header(in_.data(), in_.size());
        if (!f) return;
        const std::size_t limit = state_ == State::ready ? zmtp::kTcpFrameLimit : kHandshakeFrame;
        // Refused at its header: a peer holds nothing here before it authenticated.
        if (f->size > limit)
            return close(fmt::format("a frame of {} bytes, over the limit of {}{}", f->size, limit,
                                     state_ == State::ready ? "" : " before authentication"));
        if (in_.size() - f->header < f->size) return;
        const std::string_view body(in_.data() + f->header, f->size);
        const bool ok = state_ == State::ready ? on_message_frame(body)
                                               : handshake((f->flags & zmtp::kCommand) != 0, body);
        // The bytes stay where they are until the next read (views into them were used above).
        if (state_ != State::closed) in_.consume(f->header + f->size);
        if (!ok) return;
    }
}

bool LinkConnection::handshake(bool is_command, std::string_view body) {
    if (!is_command) {
        close("a message before the handshake ended");
        return false;
    }
    std::string_view data;
    if (zmtp::command_name(body, data) == "ERROR") {
        const std::string reason =
            data.empty() ? std::string()
                         : std::string(data.substr(1, static_cast<unsigned char>(data[0])));
        close("refused by the peer" + (reason.empty() ? std::string() : ": " + reason));
        return false;
    }
    if (s_.side == Side::child) {
        if (!welcomed_) {
            if (!client_->welcome(body)) {
                close("a WELCOME not sealed by the parent's key (not this allocation's?)");
                return false;
            }
            welcomed_ = true;
            const std::string initiate = client_->initiate(zmtp::socket_type_property("DEALER"));
            if (initiate.empty()) {
                close("the parent's session key is unusable");
                return false;
            }
            put_command(initiate);
            flush();
            return state_ != State::closed;
        }
        std::string metadata;
        if (!client_->ready(body, &metadata)) {
            close("a READY not sealed by the parent's session key");
            return false;
        }
        if (const std::string type = socket_type_of(metadata); type != "ROUTER") {
            close("the parent's socket is a " + (type.empty() ? "?" : type) + ", not a ROUTER");
            return false;
        }
        became_ready();
        return state_ != State::closed;
    }
    if (!helloed_) {
        if (!server_->hello(body)) {
            handshake_failed_ = true;
            close("a HELLO not sealed for this tree's key");
            return false;
        }
        helloed_ = true;
        const std::string welcome = server_->welcome();
        if (welcome.empty()) {
            close("a HELLO with an unusable short-term key");
            return false;
        }
        put_command(welcome);
        flush();
        return state_ != State::closed;
    }
    CurveKey client_key{};
    std::string metadata;
    if (!server_->initiate(body, client_key, metadata)) {
        handshake_failed_ = true;
        close("an INITIATE that does not prove its key");
        return false;
    }
    if (sodium_memcmp(client_key.data(), s_.peer_key.data(), client_key.size()) != 0) {
        refuse("not a broker of this allocation");
        return false;
    }
    if (const std::string type = socket_type_of(metadata); type != "DEALER") {
        refuse("incompatible socket type");
        return false;
    }
    put_command(server_->ready(zmtp::socket_type_property("ROUTER")));
    became_ready();
    return state_ != State::closed;
}

void LinkConnection::became_ready() {
    state_ = State::ready;
    if (handshake_timer_) reactor_.cancel(std::exchange(handshake_timer_, 0));
    // What was sent meanwhile goes first, in order.
    for (const auto &m : early_) {
        std::vector<std::string_view> frames(m.begin(), m.end());
        if (!seal_into_out(frames)) return;
    }
    early_.clear();
    early_bytes_ = 0;
    flush();
    if (state_ == State::ready && cb_.ready) cb_.ready();
}

bool LinkConnection::on_message_frame(std::string_view body) {
    const std::size_t at = msg_.size();
    unsigned char flags = 0;
    const bool opened =
        client_ ? client_->open(body, flags, msg_, true) : server_->open(body, flags, msg_, true);
    if (!opened) {
        close("a MESSAGE not sealed by the peer's session key, or replayed");
        return false;
    }
    if (flags & CurveClient::kCommand) {
        // A libzmq peer's heartbeat: PING is answered with its context.
        const std::string cmd = msg_.substr(at);
        msg_.resize(at);
        std::string_view data;
        if (zmtp::command_name(cmd, data) == "PING") {
            const std::string pong =
                zmtp::command("PONG", data.size() > 2 ? data.substr(2) : std::string_view{});
            const std::string sealed = client_ ? client_->seal(CurveClient::kCommand, pong)
                                               : server_->seal(CurveServer::kCommand, pong);
            unsigned char h[zmtp::kMaxHeader];
            out_.append(reinterpret_cast<char *>(h), zmtp::put_header(h, 0, sealed.size()));
            out_ += sealed;
            flush();
        }
        return state_ != State::closed;
    }
    parts_.emplace_back(at, msg_.size() - at);
    if (msg_.size() > s_.max_message || parts_.size() > kMaxFrames) {
        close(fmt::format("a message over {} bytes or {} frames", s_.max_message, kMaxFrames));
        return false;
    }
    if (flags & CurveClient::kMore) return true;
    views_.clear();
    for (const auto &[offset, size] : parts_) views_.emplace_back(msg_.data() + offset, size);
    if (cb_.message) cb_.message(views_);
    msg_.clear();
    parts_.clear();
    return state_ != State::closed;
}

// --- output ----------------------------------------------------------------------------------

bool LinkConnection::send(std::initializer_list<std::string_view> frames) {
    return send(std::vector<std::string_view>(frames));
}

bool LinkConnection::send(const std::vector<std::string_view> &frames) {
    if (state_ == State::closed || frames.empty()) return false;
    if (state_ != State::ready) {
        std::size_t bytes = 0;
        for (auto f : frames) bytes += f.size();
        if (early_bytes_ + bytes > s_.max_output) {
            close(fmt::format("{} bytes wait for the handshake, over the limit of {}",
                              early_bytes_ + bytes, s_.max_output));
            return false;
        }
        early_bytes_ += bytes;
        early_.emplace_back(frames.begin(), frames.end());
        return true;
    }
    if (!seal_into_out(frames)) return false;
    flush();
    return state_ != State::closed;
}

bool LinkConnection::seal_into_out(const std::vector<std::string_view> &frames) {
    std::size_t bytes = 0;
    for (auto f : frames) bytes += f.size();
    if (queued() + bytes > s_.max_output) {
        log_.warn("broker at {} is not reading: {} bytes queued for it, over the limit of {}",
                  peer_, queued(), s_.max_output);
        close("not reading");
        return false;
    }
    if (out_pos_ == out_.size()) {
        out_.clear();
        out_pos_ = 0;
    }
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const std::string_view f = frames[i];
        const bool last_frame = i + 1 == frames.size();
        std::size_t at = 0;
        do {
            const std::string_view piece = f.substr(at, zmtp::kTcpFrameBytes);
            at += piece.size();
            const bool more = !last_frame || at < f.size();
            const unsigned char flags = more ? CurveClient::kMore : 0;
            const std::string sealed =
                client_ ? client_->seal(flags, piece) : server_->seal(flags, piece);
            // A MESSAGE travels in a data frame; the message's own flags are inside the box.
            unsigned char h[zmtp::kMaxHeader];
            out_.append(reinterpret_cast<char *>(h), zmtp::put_header(h, 0, sealed.size()));
            out_ += sealed;
        } while (at < f.size());
    }
    return true;
}

void LinkConnection::put_raw(std::string_view bytes) {
    out_ += bytes;
}

void LinkConnection::put_command(std::string_view body) {
    unsigned char h[zmtp::kMaxHeader];
    out_.append(reinterpret_cast<char *>(h), zmtp::put_header(h, zmtp::kCommand, body.size()));
    out_ += body;
}

void LinkConnection::refuse(const std::string &reason) {
    handshake_failed_ = true;  // the owner logs it (throttled) and counts it against the address
    put_command(zmtp::error(reason));
    flush();
    close(reason);
}

void LinkConnection::flush() {
    while (out_pos_ < out_.size() && state_ != State::closed && state_ != State::connecting) {
        const ssize_t n = ::send(fd_, out_.data() + out_pos_, out_.size() - out_pos_,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            out_pos_ += static_cast<std::size_t>(n);
            progress_ = Clock::now();
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN)
            return close(std::string("cannot write: ") + std::strerror(errno));
        // The kernel's buffer is full: the rest goes when it drains, within write_timeout.
        if (!want_write_) {
            want_write_ = true;
            reactor_.when_writable(fd_, [this] { flush(); });
        }
        if (!stall_timer_)
            stall_timer_ = reactor_.after(s_.write_timeout, [this] { check_stall(); });
        return;
    }
    if (out_pos_ == out_.size()) {
        out_.clear();
        out_pos_ = 0;
        if (want_write_ && state_ != State::closed && state_ != State::connecting) {
            want_write_ = false;
            reactor_.when_writable(fd_, {});
        }
    }
}

void LinkConnection::check_stall() {
    stall_timer_ = 0;
    if (state_ == State::closed || queued() == 0) return;
    const auto idle = Clock::now() - progress_;
    if (idle >= s_.write_timeout)
        return close(fmt::format("no output taken for {} ms ({} bytes queued)",
                                 s_.write_timeout.count(), queued()));
    stall_timer_ = reactor_.after(s_.write_timeout - idle, [this] { check_stall(); });
}

void LinkConnection::flush_until(Clock::time_point deadline) {
    while (state_ != State::closed && state_ != State::connecting && queued() > 0) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        pollfd p{fd_, POLLOUT, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return;
        const ssize_t n =
            ::send(fd_, out_.data() + out_pos_, queued(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            out_pos_ += static_cast<std::size_t>(n);
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
            return;
    }
}

void LinkConnection::close(const std::string &why) {
    if (state_ == State::closed) return;
    state_ = State::closed;
    if (handshake_timer_) reactor_.cancel(std::exchange(handshake_timer_, 0));
    if (stall_timer_) reactor_.cancel(std::exchange(stall_timer_, 0));
    reactor_.unwatch_fd(fd_);
    ::shutdown(fd_, SHUT_RDWR);
    // Later: the owner may be inside one of our calls, and may destroy us when told.
    reactor_.post([this, alive = std::weak_ptr<bool>(alive_), why] {
        if (!alive.lock() || !cb_.closed) return;
        auto closed = cb_.closed;  // the owner may destroy us in it
        closed(why);
    });
}

}  // namespace zpmix::tree
