#include "actors/launcher/stdin_forwarding.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include <pmix_common.h>

#include "actors/runtime/address.hpp"

namespace zpmix {

StdinForwarding::StdinForwarding(Reactor &reactor, const BrokerMap &brokers, Wiring wiring)
    : reactor_(reactor), brokers_(brokers), wiring_(std::move(wiring)) {}

StdinForwarding::~StdinForwarding() {
    for (auto &[nspace, job] : jobs_)
        for (auto &r : job.ranks)
            if (r.in >= 0) ::close(r.in);
}

void StdinForwarding::open(const std::string &nspace, std::uint32_t size, std::int64_t target) {
    Job &job = jobs_[nspace];
    job.target = target;
    job.ranks.resize(size);
}

bool StdinForwarding::is_stdin_rank(const std::string &nspace, std::uint32_t rank) const {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return false;
    const std::int64_t target = it->second.target;
    return target == msg::kStdinAll || target == static_cast<std::int64_t>(rank);
}

void StdinForwarding::add(const std::string &nspace, std::uint32_t rank, int in) {
    Rank &r = jobs_.at(nspace).ranks.at(rank);
    r.in = in;
    r.reads_input = true;
    ::fcntl(r.in, F_SETFL, O_NONBLOCK);  // a rank that does not read never blocks us
}

// This node's stdin ranks take it; the root passes on what is another broker's, and the answer
// back.
void StdinForwarding::input(const Envelope &env, msg::Input &m) {
    const auto view = brokers_.view();
    if (m.broker != view->rank) {
        if (is_remote_address(env.from) || m.broker >= view->size())
            return wiring_.refuse(env, PMIX_ERR_BAD_PARAM, fmt::format("no broker {}", m.broker));
        const std::uint64_t id = wiring_.relay_id();
        relays_[id] = env;
        wiring_.pass_on(m.broker, m, id);
        return;
    }
    auto it = jobs_.find(m.nspace);
    // A job over (or never here) takes nothing: the piece is dropped, as a closed pipe drops it.
    if (it == jobs_.end()) return wiring_.answer(env, msg::InputTaken{PMIX_ERR_NOT_FOUND});
    Job &job = it->second;
    if (job.waiting) {
        if (job.queue.size() >= 64)
            return wiring_.refuse(env, PMIX_ERR_OUT_OF_RESOURCE, "too many Inputs waiting");
        job.queue.push_back(env);
        return;
    }
    take(env, m);
}

void StdinForwarding::relayed(const Envelope &env, msg::InputTaken &m) {
    auto node = relays_.extract(env.id);
    if (!node.empty()) wiring_.answer(node.mapped(), m);
}

void StdinForwarding::take(const Envelope &env, msg::Input &m) {
    Job &job = jobs_.at(m.nspace);
    for (auto r : m.ranks)
        if (r >= job.ranks.size() || !job.ranks[r].reads_input) {
            wiring_.answer(env, msg::InputTaken{PMIX_ERR_NOT_SUPPORTED});
            return next(job);
        }
    auto append = [&](Rank &r) {
        if (r.in < 0) return;
        r.unwritten += m.data;
        r.close_after = r.close_after || m.eof;
    };
    if (m.ranks.empty())
        for (auto &r : job.ranks) append(r);
    for (auto r : m.ranks) append(job.ranks[r]);
    job.waiting = env;
    flush(m.nspace);
}

void StdinForwarding::flush(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    job.retry = 0;
    bool pending = false;
    for (auto &r : job.ranks) {
        while (r.in >= 0 && !r.unwritten.empty()) {
            const ssize_t n = ::write(r.in, r.unwritten.data(), r.unwritten.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno == EAGAIN) break;
            if (n <= 0) {  // it closed its stdin: what it did not read is lost
                close_rank(r);
                break;
            }
            r.unwritten.erase(0, static_cast<std::size_t>(n));
        }
        if (r.in >= 0 && !r.unwritten.empty()) pending = true;
    }
    // The reactor watches readers only: a full pipe is tried again shortly.
    if (pending) {
        job.retry =
            reactor_.after(std::chrono::milliseconds(10), [this, nspace] { flush(nspace); });
        return;
    }
    for (auto &r : job.ranks)
        if (r.close_after) close_rank(r);
    if (job.waiting) wiring_.answer(*std::exchange(job.waiting, std::nullopt), msg::InputTaken{});
    next(job);
}

void StdinForwarding::next(Job &job) {
    if (job.queue.empty()) return;
    Envelope queued = std::move(job.queue.front());
    job.queue.pop_front();
    auto m = queued.as<msg::Input>();
    take(queued, m);
}

void StdinForwarding::rank_ended(const std::string &nspace, std::uint32_t rank) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end() || rank >= it->second.ranks.size()) return;
    close_rank(it->second.ranks[rank]);
    if (it->second.waiting) flush(nspace);  // what it was to read is dropped
}

void StdinForwarding::close(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    for (auto &r : job.ranks) close_rank(r);
    if (job.retry) reactor_.cancel(job.retry);
    if (job.waiting) flush(nspace);
}

void StdinForwarding::forget(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (auto &r : it->second.ranks) close_rank(r);
    if (it->second.retry) reactor_.cancel(it->second.retry);
    jobs_.erase(it);
}

void StdinForwarding::close_rank(Rank &r) {
    if (r.in >= 0) ::close(r.in);
    r.in = -1;
    r.unwritten.clear();
    r.close_after = false;
}

}  // namespace zpmix
