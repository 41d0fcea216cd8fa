#include "broker/cmd/run/relay.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/protocol/rendezvous.hpp"
#include "actors/protocol/session.hpp"

namespace zpmix::cli::run {

namespace {

bool ending(int s) {
    return s == SIGINT || s == SIGTERM;
}

}  // namespace

int take_signals() {
    sigset_t sigs;
    sigemptyset(&sigs);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT}) sigaddset(&sigs, s);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    const int signal_fd = ::signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);
    return signal_fd;
}

// ---- The session ---------------------------------------------------------------------------

Session::Session(const std::string &uri, int signal_fd) : signal_fd_(signal_fd) {
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.set(zmq::sockopt::heartbeat_ivl, 2000);
    dealer_.set(zmq::sockopt::heartbeat_timeout, 6000);
    const bool ipc = uri.starts_with("ipc://");
    tcp_ = uri.starts_with("tcp://");
    zmq_socket_monitor(dealer_.handle(), "inproc://zpmix-run-monitor",
                       ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                           (ipc ? ZMQ_EVENT_CONNECTED : 0));
    monitor_.connect("inproc://zpmix-run-monitor");
    dealer_.connect(uri);
    if (ipc) check_peer();
}

void Session::check_peer() {
    zmq::pollitem_t item{monitor_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(10000)) == 0) return;
    zmq::message_t ev, addr;
    (void)monitor_.recv(ev);
    if (ev.more()) (void)monitor_.recv(addr);
    std::uint16_t event = 0;
    std::uint32_t fd = 0;
    if (ev.size() >= 6) {
        std::memcpy(&event, ev.data(), 2);
        std::memcpy(&fd, static_cast<const char *>(ev.data()) + 2, 4);
    }
    if (event != ZMQ_EVENT_CONNECTED) {
        early_loss_ = event;
        return;
    }
    untrusted_peer_ = ipc_peer_problem(static_cast<int>(fd));
}

Session::Event Session::next(Envelope &env, int &sig, std::chrono::milliseconds timeout) {
    zmq::pollitem_t items[] = {{dealer_.handle(), 0, ZMQ_POLLIN, 0},
                               {nullptr, signal_fd_, ZMQ_POLLIN, 0},
                               {monitor_.handle(), 0, ZMQ_POLLIN, 0},
                               {nullptr, written_fd_, ZMQ_POLLIN, 0},
                               {nullptr, input_fd_, ZMQ_POLLIN, 0}};
    for (;;) {
        if (early_loss_) {
            refused_ = std::exchange(early_loss_, 0) != ZMQ_EVENT_DISCONNECTED;
            return Event::lost;
        }
        const int rc = zmq::poll(items, input_fd_ >= 0 ? 5 : 4, timeout);
        if (rc == 0) return Event::timeout;
        // What was written is acknowledged first: the launchers wait for it, and a busy stream of
        // messages must not hold it back.
        if (items[3].revents & ZMQ_POLLIN) return Event::written;
        if (items[0].revents & ZMQ_POLLIN) {
            zmq::message_t m;
            (void)dealer_.recv(m);
            try {
                env = decode(m);
                return Event::message;
            } catch (const DecodeError &e) {
                spdlog::warn("undecodable message from the broker: {}", e.what());
                continue;
            }
        }
        if (items[1].revents & ZMQ_POLLIN) {
            signalfd_siginfo si{};
            if (::read(signal_fd_, &si, sizeof si) == sizeof si) {
                sig = static_cast<int>(si.ssi_signo);
                return Event::signal;
            }
        }
        if (items[2].revents & ZMQ_POLLIN) {
            zmq::message_t ev, addr;
            (void)monitor_.recv(ev);
            if (ev.more()) (void)monitor_.recv(addr);
            std::uint16_t event = 0;
            if (ev.size() >= sizeof event) std::memcpy(&event, ev.data(), sizeof event);
            if (event == ZMQ_EVENT_CONNECTED) continue;  // a reconnection
            refused_ = event != ZMQ_EVENT_DISCONNECTED;
            return Event::lost;
        }
        if (input_fd_ >= 0 && (items[4].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) return Event::input;
    }
}

// ---- Hello and the launch ------------------------------------------------------------------

std::optional<int> Relay::launch(const msg::Launch &launch, const Layout &layout,
                                 bool oversubscribe) {
    if (!session_.untrusted_peer().empty())
        return fail("refusing the broker at " + uri_ + ": " + session_.untrusted_peer());
    msg::Hello hello;
    hello.role = "launcher";
    hello.pid = ::getpid();
    session_.send(hello);
    if (auto failed = wait_reply("hello", msg::Welcome::type)) return failed;
    if (layout.across()) {
        const Spread &spread = layout.spread;
        msg::LaunchAcross across{launch, spread.nodes, spread.node_of_rank, spread.slots,
                                 oversubscribe};
        across.spare_nodes = spread.spare_nodes;
        across.spare_slots = spread.spare_slots;
        session_.send(across);
    } else {
        session_.send(launch);
    }
    if (auto failed = wait_reply("launch", msg::LaunchReply::type)) return failed;
    launched_ = env_.as<msg::LaunchReply>();
    spdlog::debug("job {} launched: {} rank(s)", launched_.nspace, launched_.pids.size());
    return std::nullopt;
}

std::optional<int> Relay::wait_reply(const char *what, std::string_view type) {
    const auto deadline = std::chrono::steady_clock::now() + kHelloTimeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return fail(fmt::format("no answer from the broker at {} ({})", uri_, what));
        switch (session_.next(env_, sig_, left)) {
            case Session::Event::message:
                if (env_.type == msg::ErrorReply::type) {
                    const auto e = env_.as<msg::ErrorReply>();
                    return fail(e.message, exit_status_of(e.status));
                }
                if (env_.type != type) {
                    early_.push_back(std::move(env_));
                    continue;
                }
                return std::nullopt;
            case Session::Event::signal:
                pending_signals_.emplace_back(sig_, std::chrono::steady_clock::now());
                if (std::count_if(pending_signals_.begin(), pending_signals_.end(),
                                  [](const auto &p) { return ending(p.first); }) >= 3)
                    return 128 + sig_;
                continue;
            case Session::Event::input:  // read once the job is there
                session_.watch_input(-1);
                continue;
            case Session::Event::written:
                for (const auto &ack : output_.written()) session_.send(ack);
                continue;
            case Session::Event::lost:
                // A standalone broker out of room turns the connection away in the handshake;
                // libzmq does not pass on the reason, the broker's log has it.
                return fail(session_.refused()
                                ? "the broker at " + uri_ +
                                      " refused the connection (too many connections or out of "
                                      "file descriptors: its log says which)"
                                : "lost the connection to the broker at " + uri_);
            case Session::Event::timeout:
                continue;
        }
    }
}

// ---- Signals and stdin ---------------------------------------------------------------------

void Relay::start(std::int64_t stdin_target, const Layout &layout) {
    for (const auto &[s, when] : pending_signals_) forward(s, when);
    if (stdin_target != msg::kStdinNone &&
        (!::isatty(STDIN_FILENO) || ::tcgetpgrp(STDIN_FILENO) == ::getpgrp()))
        input_brokers_ = layout.brokers_of(stdin_target);
    if (!input_brokers_.empty()) session_.watch_input(STDIN_FILENO);
}

void Relay::forward(int s, std::chrono::steady_clock::time_point when) {
    if (s == SIGINT && last_interrupt_ && when - *last_interrupt_ <= kKillWithin) {
        std::cerr << "zpmix run: a second interrupt within " << kKillWithin.count()
                  << " s: killing job " << launched_.nspace << "\n";
        session_.send(msg::SignalJob{launched_.nspace, SIGKILL});
        kill_at_.reset();
        last_interrupt_.reset();
        ++signals_seen_;
        return;
    }
    if (s == SIGINT) last_interrupt_ = when;
    const int to_ranks = s == SIGTSTP ? SIGSTOP : s;
    spdlog::debug("forwarding signal {} to {}", to_ranks, launched_.nspace);
    session_.send(msg::SignalJob{launched_.nspace, to_ranks});
    if (!ending(s)) return;
    ++signals_seen_;
    if (!kill_at_) kill_at_ = when + kTermGrace;
}

void Relay::read_input() {
    std::string data(kInputChunk, '\0');
    ssize_t n;
    while ((n = ::read(STDIN_FILENO, data.data(), data.size())) < 0 && errno == EINTR) {
    }
    data.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    const bool eof = n <= 0;
    for (auto b : input_brokers_) session_.send(msg::Input{launched_.nspace, b, data, eof});
    input_in_flight_ = input_brokers_.size();
    session_.watch_input(-1);
    if (eof) input_brokers_.clear();
}

// ---- The job's run -------------------------------------------------------------------------

std::optional<int> Relay::handle(const Envelope &m) {
    try {
        if (m.type == msg::Output::type) {
            output_.print(m.as<msg::Output>());
        } else if (m.type == msg::ProcExit::type) {
            const auto e = m.as<msg::ProcExit>();
            spdlog::debug("{} rank {} (pid {}) ended: code {} signal {}", e.nspace, e.rank, e.pid,
                          e.exit_code, e.signal);
        } else if (m.type == msg::JobEnded::type) {
            return output_.ended(m.as<msg::JobEnded>(), launched_.nspace);
        } else if (m.type == msg::InputTaken::type) {
            if (input_in_flight_ > 0 && --input_in_flight_ == 0 && !input_brokers_.empty())
                session_.watch_input(STDIN_FILENO);
        } else if (m.type == msg::ErrorReply::type) {
            spdlog::warn("broker: {}", m.as<msg::ErrorReply>().message);
        }
    } catch (const DecodeError &e) {
        spdlog::warn("{}", e.what());
    }
    return std::nullopt;
}

int Relay::run() {
    if (!early_.empty())
        spdlog::debug("{} message(s) of spawned jobs came before the launch's reply",
                      early_.size());
    for (const auto &m : early_)
        if (auto status = handle(m)) return *status;
    for (;;) {
        auto wait = std::chrono::milliseconds(-1);
        if (kill_at_ && std::chrono::steady_clock::now() >= *kill_at_) {
            kill_at_.reset();
            std::cerr << "zpmix run: job " << launched_.nspace << " still runs "
                      << kTermGrace.count() << " s after the signal: killing it\n";
            session_.send(msg::SignalJob{launched_.nspace, SIGKILL});
        } else if (kill_at_) {
            wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                *kill_at_ - std::chrono::steady_clock::now());
        }
        switch (session_.next(env_, sig_, wait)) {
            case Session::Event::timeout:
                continue;
            case Session::Event::lost:
                return fail("lost the connection to the broker at " + uri_ + "; job " +
                            launched_.nspace + " is terminated");
            case Session::Event::signal:
                // mpirun-like: forward; the third SIGINT/SIGTERM, stop waiting for the job.
                forward(sig_, std::chrono::steady_clock::now());
                if (signals_seen_ >= 3) return fail("giving up on " + launched_.nspace, 128 + sig_);
                continue;
            case Session::Event::input:
                read_input();
                continue;
            case Session::Event::written:
                for (const auto &ack : output_.written()) session_.send(ack);
                continue;
            case Session::Event::message:
                break;
        }
        if (auto status = handle(env_)) return *status;
    }
}

}  // namespace zpmix::cli::run
