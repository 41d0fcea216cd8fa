#include "actors/runtime/reactor.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

namespace zpmix {

Reactor::Reactor() {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

Reactor::~Reactor() {
    ::close(wake_fd_);
}

void Reactor::watch(zmq::socket_ref socket, Callback on_readable) {
    unwatch(socket);
    watches_.push_back(
        {socket.handle(), -1, std::make_shared<Callback>(std::move(on_readable)), nullptr});
    watches_changed_ = true;
}

void Reactor::unwatch(zmq::socket_ref socket) {
    if (std::erase_if(watches_, [&](const Watch &w) { return w.socket == socket.handle(); }))
        watches_changed_ = true;
}

void Reactor::watch_fd(int fd, Callback on_readable) {
    unwatch_fd(fd);
    watches_.push_back({nullptr, fd, std::make_shared<Callback>(std::move(on_readable)), nullptr});
    watches_changed_ = true;
}

void Reactor::unwatch_fd(int fd) {
    if (std::erase_if(watches_, [&](const Watch &w) { return w.socket == nullptr && w.fd == fd; }))
        watches_changed_ = true;
}

void Reactor::when_writable(int fd, Callback on_writable) {
    for (auto &w : watches_) {
        if (w.socket != nullptr || w.fd != fd) continue;
        w.out = on_writable ? std::make_shared<Callback>(std::move(on_writable)) : nullptr;
        watches_changed_ = true;
        return;
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
        fn();
    }
    while (!due_.empty() && !timers_.contains(due_.begin()->second)) due_.erase(due_.begin());
    if (due_.empty()) return -1;
    const auto wait =
        std::chrono::ceil<std::chrono::milliseconds>(due_.begin()->first - Clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, wait.count()));
}

void Reactor::run() {
    thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    std::vector<zmq::pollitem_t> items;
    std::vector<Watch> polled;  // what items[1..] stand for
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
        // Callbacks posted from this thread did not wake the poll: never sleep on them.
        drain_posted();
        const int next_timer = run_timers();
        const int timeout = drain_posted() ? 0 : next_timer;  // timers post too
        if (watches_changed_) {
            polled = watches_;
            items.assign(1, {nullptr, wake_fd_, ZMQ_POLLIN, 0});
            for (const auto &w : polled)
                items.push_back({w.socket, w.fd,
                                 static_cast<short>(ZMQ_POLLIN | (w.out ? ZMQ_POLLOUT : 0)), 0});
            watches_changed_ = false;
        }
        const int rc = zmq_poll(items.data(), static_cast<int>(items.size()), timeout);
        if (rc < 0 && zmq_errno() != EINTR)
            throw std::system_error(zmq_errno(), std::generic_category(), "zmq_poll");
        if (rc <= 0) continue;
        if (items[0].revents & ZMQ_POLLIN) {
            std::uint64_t count;
            [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof count);
            drain_posted();
        }
        for (std::size_t i = 1; i < items.size(); ++i) {
            const short revents = items[i].revents;
            if (revents == 0) continue;
            const Watch &w = polled[i - 1];
            // An earlier callback of this round may have removed or replaced this watch.
            auto find = [&] {
                return std::find_if(watches_.begin(), watches_.end(), [&](const Watch &x) {
                    return x.socket == w.socket && x.fd == w.fd;
                });
            };
            auto current = find();
            if (current == watches_.end()) continue;
            if ((revents & ZMQ_POLLOUT) && current->out) {
                auto out = current->out;
                (*out)();
                current = find();
                if (current == watches_.end()) continue;
            }
            if (revents & (ZMQ_POLLIN | ZMQ_POLLERR)) {
                auto fn = current->fn;
                (*fn)();
            }
        }
    }
}

}  // namespace zpmix
