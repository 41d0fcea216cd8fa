#pragma once
// The loop an actor runs on: one thread waits on ZeroMQ sockets, plain file descriptors (pipes,
// sockets, signalfd, pidfd) and timers, and runs what other threads post to it. Every callback
// runs on the reactor's thread, one at a time, so the actors it hosts need no locks.
//
// It waits in epoll: one system call per wake-up, whatever the number of descriptors (zmq_poll
// made two poll(2) calls over all of them; a cross-node barrier costs 2-7 % less CPU this way,
// CHANGELOG.md, 2026-11-28). A ZeroMQ socket's ZMQ_FD only says that something changed, and a send
// on the socket may take that signal: its ZMQ_EVENTS is read when its ZMQ_FD fired, when it was
// readable last turn, and once any callback ran; a readable socket keeps the loop from sleeping.
// A descriptor epoll refuses (a regular file, as stdin may be) is always ready, as poll(2) has
// it. A descriptor must be unwatched before it is closed.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <zmq.hpp>

namespace zpmix {

class Reactor {
  public:
    using Callback = std::function<void()>;
    using Clock = std::chrono::steady_clock;
    using TimerId = std::uint64_t;

    Reactor();
    ~Reactor();
    Reactor(const Reactor &) = delete;
    Reactor &operator=(const Reactor &) = delete;

    // Calls on_readable whenever the socket (or fd) has input. The socket must outlive the watch.
    void watch(zmq::socket_ref socket, Callback on_readable);
    void unwatch(zmq::socket_ref socket);
    void watch_fd(int fd, Callback on_readable);
    void unwatch_fd(int fd);
    // For a watched fd: also calls on_writable while the fd can take output (empty: stops).
    void when_writable(int fd, Callback on_writable);

    TimerId after(Clock::duration delay, Callback fn);
    TimerId every(Clock::duration period, Callback fn);
    void cancel(TimerId id);

    // Thread-safe: runs fn on the reactor's thread, in posting order.
    void post(Callback fn);

    // Runs until stop(), then runs what was posted before it; stop() is thread-safe and may be
    // called from a callback.
    void run();
    void stop();
    bool on_reactor_thread() const;

  private:
    struct Watch {
        void *socket = nullptr;
        int fd = -1;
        std::shared_ptr<Callback> fn;   // shared: a callback may unwatch itself while running
        std::shared_ptr<Callback> out;  // fds only: called when writable
        bool always_ready = false;      // epoll refused the fd (a regular file)
    };
    using WatchId = std::uint64_t;  // epoll's data: a watch removed meanwhile is not found

    void add(Watch w);
    void remove(std::unordered_map<WatchId, Watch>::iterator it);
    std::unordered_map<WatchId, Watch>::iterator find_fd(int fd);
    // Runs the callbacks of watch `id` (if it still exists) for these readiness bits.
    void dispatch(WatchId id, bool readable, bool writable);
    struct Timer {
        Clock::time_point due;
        Clock::duration period{};
        Callback fn;
    };

    bool drain_posted();  // runs what was posted; true if more was posted meanwhile
    int run_timers();     // returns the wait's timeout in ms until the next timer, -1 if none
    // Runs the callbacks of the ZeroMQ sockets among `ids` that are readable (their ids go into
    // `readable`) and of the always-ready descriptors.
    void run_sockets(const std::vector<WatchId> &ids, std::vector<WatchId> &readable);

    int epoll_fd_ = -1;
    int wake_fd_ = -1;  // eventfd: post() and stop() wake the wait
    std::unordered_map<WatchId, Watch> watches_;
    WatchId next_watch_ = 1;  // 0 is the wake fd
    bool ran_ = false;        // a callback ran since every socket was last looked at
    std::map<TimerId, Timer> timers_;
    std::multimap<Clock::time_point, TimerId> due_;
    TimerId next_timer_ = 1;

    std::mutex mu_;  // guards posted_ and stopping_ only
    std::deque<Callback> posted_;
    bool stopping_ = false;
    std::atomic<std::thread::id> thread_{};
};

}  // namespace zpmix
