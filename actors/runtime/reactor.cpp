#include "actors/runtime/reactor.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

namespace zpmix {

Reactor::Reactor() {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event ev{EPOLLIN, {.u64 = 0}};
    if (wake_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
        const int e = errno;
        ::close(epoll_fd_);
        if (wake_fd_ >= 0) ::close(wake_fd_);
        throw std::system_error(e, std::generic_category(), "eventfd");
    }
}

Reactor::~Reactor() {
    ::close(wake_fd_);
    ::close(epoll_fd_);
}

void Reactor::add(Watch w) {
    const WatchId id = next_watch_++;
    epoll_event ev{EPOLLIN, {.u64 = id}};
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, w.fd, &ev) != 0) {
        if (errno != EPERM || w.socket != nullptr)
            throw std::system_error(errno, std::generic_category(), "epoll_ctl");
        w.always_ready = true;
    }
    watches_.emplace(id, std::move(w));
}

void Reactor::remove(std::unordered_map<WatchId, Watch>::iterator it) {
    if (!it->second.always_ready) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
    watches_.erase(it);
}

std::unordered_map<Reactor::WatchId, Reactor::Watch>::iterator Reactor::find_fd(int fd) {
    return std::find_if(watches_.begin(), watches_.end(), [&](const auto &w) {
        return w.second.socket == nullptr && w.second.fd == fd;
    });
}

void Reactor::watch(zmq::socket_ref socket, Callback on_readable) {
    unwatch(socket);
    add({socket.handle(), socket.get(zmq::sockopt::fd),
         std::make_shared<Callback>(std::move(on_readable)), nullptr});
}

void Reactor::unwatch(zmq::socket_ref socket) {
    auto it = std::find_if(watches_.begin(), watches_.end(),
                           [&](const auto &w) { return w.second.socket == socket.handle(); });
    if (it != watches_.end()) remove(it);
}

void Reactor::watch_fd(int fd, Callback on_readable) {
    unwatch_fd(fd);
    add({nullptr, fd, std::make_shared<Callback>(std::move(on_readable)), nullptr});
}

void Reactor::unwatch_fd(int fd) {
    if (auto it = find_fd(fd); it != watches_.end()) remove(it);
}

void Reactor::when_writable(int fd, Callback on_writable) {
    auto it = find_fd(fd);
    if (it == watches_.end()) return;
    Watch &w = it->second;
    w.out = on_writable ? std::make_shared<Callback>(std::move(on_writable)) : nullptr;
    if (w.always_ready) return;
    const std::uint32_t mask = w.out ? EPOLLIN | EPOLLOUT : EPOLLIN;
    epoll_event ev{mask, {.u64 = it->first}};
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0)
        throw std::system_error(errno, std::generic_category(), "epoll_ctl");
}

void Reactor::dispatch(WatchId id, bool readable, bool writable) {
    auto it = watches_.find(id);
    if (it == watches_.end()) return;  // an earlier callback of this turn removed it
    if (writable && it->second.out) {
        auto out = it->second.out;
        ran_ = true;
        (*out)();
        it = watches_.find(id);
        if (it == watches_.end()) return;
    }
    if (readable) {
        auto fn = it->second.fn;
        ran_ = true;
        (*fn)();
    }
}

Reactor::TimerId Reactor::after(Clock::duration delay, Callback fn) {
    const TimerId id = next_timer_++;
    const auto due = Clock::now() + delay;
    timers_.emplace(id, Timer{due, Clock::duration{}, std::move(fn)});
    due_.emplace(due, id);
    return id;
}

Reactor::TimerId Reactor::every(Clock::duration period, Callback fn) {
    const TimerId id = after(period, std::move(fn));
    timers_.at(id).period = period;
    return id;
}

void Reactor::cancel(TimerId id) {
    timers_.erase(id);
}  // its due_ entry is skipped when reached

void Reactor::post(Callback fn) {
    {
        std::lock_guard lock(mu_);
        posted_.push_back(std::move(fn));
    }
    // The loop drains the queue before it polls again: only another thread needs to wake it.
    if (on_reactor_thread()) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void Reactor::stop() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

bool Reactor::on_reactor_thread() const {
    return std::this_thread::get_id() == thread_.load(std::memory_order_relaxed);
}

bool Reactor::drain_posted() {
    std::deque<Callback> batch;
    {
        std::lock_guard lock(mu_);
        batch.swap(posted_);
    }
    if (!batch.empty()) ran_ = true;
    for (auto &fn : batch) fn();
    std::lock_guard lock(mu_);
    return !posted_.empty();
}

int Reactor::run_timers() {
    const auto now = Clock::now();
    while (!due_.empty() && due_.begin()->first <= now) {
        const TimerId id = due_.begin()->second;
        due_.erase(due_.begin());
        auto it = timers_.find(id);
        if (it == timers_.end()) continue;  // cancelled
        Callback fn = it->second.fn;        // the callback may cancel or re-arm its own timer
        if (it->second.period.count() > 0) {
            it->second.due = now + it->second.period;
            due_.emplace(it->second.due, id);
        } else {
            timers_.erase(it);
        }
        ran_ = true;
        fn();
    }
    while (!due_.empty() && !timers_.contains(due_.begin()->second)) due_.erase(due_.begin());
    if (due_.empty()) return -1;
    const auto wait =
        std::chrono::ceil<std::chrono::milliseconds>(due_.begin()->first - Clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, wait.count()));
}

void Reactor::run_sockets(const std::vector<WatchId> &ids, std::vector<WatchId> &readable) {
    for (const WatchId id : ids) {
        auto it = watches_.find(id);
        if (it == watches_.end()) continue;
        if (it->second.always_ready) {
            dispatch(id, true, true);
            continue;
        }
        int events = 0;
        std::size_t size = sizeof events;
        if (zmq_getsockopt(it->second.socket, ZMQ_EVENTS, &events, &size) != 0 ||
            !(events & ZMQ_POLLIN))
            continue;
        readable.push_back(id);  // its callback reads a bounded batch: look again next turn
        dispatch(id, true, false);
    }
}

void Reactor::run() {
    thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    std::vector<epoll_event> events(64);
    // The ZeroMQ sockets to look at this turn: those whose ZMQ_FD fired and those readable last
    // turn; all of them (and the always-ready descriptors) once any callback ran since they were
    // last looked at, as a send on a socket may take the signal its ZMQ_FD would have given.
    std::vector<WatchId> look, readable;
    ran_ = true;
    for (;;) {
        bool stopping;
        {
            std::lock_guard lock(mu_);
            stopping = std::exchange(stopping_, false);
        }
        if (stopping) {
            // What was posted before stop() still runs: another thread's last messages (a
            // job's end, sent by the launcher just before it stops the broker) are not lost.
            drain_posted();
            return;
        }
        // Callbacks posted from this thread did not wake the wait: never sleep on them.
        drain_posted();
        const int next_timer = run_timers();
        if (std::exchange(ran_, false)) {
            look.clear();
            for (const auto &[id, w] : watches_)
                if (w.socket != nullptr || w.always_ready) look.push_back(id);
        }
        readable.clear();
        run_sockets(look, readable);
        look.swap(readable);
        const bool posted_more = drain_posted();  // timers and callbacks post too
        const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                                   posted_more || ran_ ? 0 : next_timer);
        if (n < 0 && errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "epoll_wait");
        for (int i = 0; i < n; ++i) {
            const WatchId id = events[i].data.u64;
            const std::uint32_t e = events[i].events;
            if (id == 0) {
                std::uint64_t count;
                [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
                drain_posted();
                continue;
            }
            auto it = watches_.find(id);
            if (it == watches_.end()) continue;
            if (it->second.socket != nullptr) {
                look.push_back(id);  // its ZMQ_FD: something changed, ZMQ_EVENTS says what
                continue;
            }
            dispatch(id, e & (EPOLLIN | EPOLLERR | EPOLLHUP), e & EPOLLOUT);
        }
    }
}

}  // namespace zpmix
