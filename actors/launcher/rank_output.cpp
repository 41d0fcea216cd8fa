#include "actors/launcher/rank_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "actors/runtime/address.hpp"

namespace zpmix {

namespace {

constexpr std::size_t kMaxChunk = 64 * 1024;  // a longer line is forwarded in pieces
constexpr std::size_t kReadSize = 64 * 1024;  // one read(2)
constexpr int kReadsPerTurn = 16;

}  // namespace

RankOutput::RankOutput(Reactor &reactor, const Bus &bus, const BrokerMap &brokers,
                       std::size_t window, Wiring wiring)
    : reactor_(reactor),
      bus_(bus),
      brokers_(brokers),
      window_(window),
      wiring_(std::move(wiring)) {}

RankOutput::~RankOutput() {
    for (auto &[nspace, job] : jobs_)
        for (auto &[rank, r] : job.ranks)
            for (int fd : {r.out.fd, r.err.fd})
                if (fd >= 0) ::close(fd);
}

void RankOutput::add(const std::string &nspace, std::uint32_t rank, int out, int err,
                     std::string node) {
    ::fcntl(out, F_SETFL, O_NONBLOCK);  // the reactor reads what is there, never waits
    ::fcntl(err, F_SETFL, O_NONBLOCK);
    Rank &r = jobs_[nspace].ranks[rank];
    r.out.fd = out;
    r.err.fd = err;
    r.node = std::move(node);
}

void RankOutput::watch(const std::string &nspace, std::uint32_t rank) {
    Rank *r = find(nspace, rank);
    if (!r) return;
    watch_pipe(nspace, rank, 1, r->out);
    watch_pipe(nspace, rank, 2, r->err);
}

void RankOutput::watch_pipe(const std::string &nspace, std::uint32_t rank, int which, Pipe &p) {
    if (p.fd < 0 || p.watched) return;
    p.watched = true;
    if (!jobs_.at(nspace).paused)
        reactor_.watch_fd(p.fd, [this, nspace, rank, which] { read(nspace, rank, which, false); });
}

void RankOutput::drain(const std::string &nspace, std::uint32_t rank) {
    read(nspace, rank, 1, true);
    read(nspace, rank, 2, true);
}

void RankOutput::drain(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (auto &[rank, r] : it->second.ranks) drain(nspace, rank);
}

void RankOutput::close(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (auto &[rank, r] : it->second.ranks)
        for (int which : {1, 2}) {
            Pipe &p = which == 1 ? r.out : r.err;
            if (p.fd < 0) continue;
            if (!p.partial.empty()) forward(nspace, rank, r, which, std::exchange(p.partial, {}));
            stop_reading(p, it->second.paused);
        }
    jobs_.erase(it);
    std::erase_if(flows_, [&](const auto &f) { return f.first.second == nspace; });
}

void RankOutput::discard(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (auto &[rank, r] : it->second.ranks) {
        stop_reading(r.out, it->second.paused);
        stop_reading(r.err, it->second.paused);
    }
    jobs_.erase(it);
    std::erase_if(flows_, [&](const auto &f) { return f.first.second == nspace; });
}

void RankOutput::acknowledged(const std::string &consumer, const std::string &nspace,
                              std::uint64_t bytes) {
    auto job = jobs_.find(nspace);
    if (job == jobs_.end()) return;  // over: nothing waits for it
    auto flow = flows_.find({flow_name(consumer), nspace});
    if (flow == flows_.end()) return;
    // Cumulative: a late or repeated ack changes nothing; one beyond what was sent is a bug of
    // the consumer's, and must not open the window further.
    flow->second.acked = std::max(flow->second.acked, std::min(bytes, flow->second.sent));
    resume(nspace, job->second);
}

void RankOutput::consumers_changed() {
    for (auto &[nspace, job] : jobs_) resume(nspace, job);
}

void RankOutput::consumers_restarted(std::uint32_t broker) {
    for (auto &[key, flow] : flows_)
        if (sender_broker(key.first) == broker) flow = Flow{};
    consumers_changed();
}

RankOutput::Rank *RankOutput::find(const std::string &nspace, std::uint32_t rank) {
    auto job = jobs_.find(nspace);
    if (job == jobs_.end()) return nullptr;
    auto it = job->second.ranks.find(rank);
    return it == job->second.ranks.end() ? nullptr : &it->second;
}

void RankOutput::read(const std::string &nspace, std::uint32_t rank, int which, bool drain) {
    auto job = jobs_.find(nspace);
    if (job == jobs_.end()) return;
    Rank *r = find(nspace, rank);
    if (!r) return;
    Pipe &p = which == 1 ? r->out : r->err;
    if (p.fd < 0) return;
    std::string &buf = p.partial;
    char chunk[kReadSize];
    std::size_t drained = 0;
    for (int rounds = 0; drain ? drained < kMaxDrain : rounds < kReadsPerTurn; ++rounds) {
        if (!drain && !open(nspace)) {
            pause(job->second);
            return;
        }
        const ssize_t n = ::read(p.fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) {  // EOF (or an error, which ends the stream the same way)
            if (!buf.empty()) forward(nspace, rank, *r, which, std::exchange(buf, {}));
            stop_reading(p, job->second.paused);
            return;
        }
        drained += static_cast<std::size_t>(n);
        buf.append(chunk, static_cast<std::size_t>(n));
        // Whole lines go out together; what follows the last newline waits for the rest of its
        // line, unless it is already longer than a piece.
        if (const auto nl = buf.rfind('\n'); nl != std::string::npos) {
            std::string rest = buf.substr(nl + 1);
            buf.resize(nl + 1);
            forward(nspace, rank, *r, which, std::exchange(buf, std::move(rest)));
        }
        while (buf.size() >= kMaxChunk) {
            forward(nspace, rank, *r, which, buf.substr(0, kMaxChunk));
            buf.erase(0, kMaxChunk);
        }
    }
}

void RankOutput::forward(const std::string &nspace, std::uint32_t rank, const Rank &r, int which,
                         std::string data) {
    const std::size_t n = data.size();
    const msg::Output out{nspace,          rank,   static_cast<std::uint8_t>(which),
                          std::move(data), r.node, brokers_.view()->rank};
    for (const auto &to : consumers(nspace)) {
        wiring_.send(to, out);
        flows_[{flow_name(to), nspace}].sent += n;
    }
}

std::vector<std::string> RankOutput::consumers(const std::string &nspace) const {
    std::vector<std::string> to;
    if (std::string requester = wiring_.requester_of(nspace); !requester.empty())
        to.push_back(std::move(requester));
    // In a tree the root's iof holds every job's output (actors/iof/iof_actor.hpp); a broker
    // without I/O forwarding (unit tests) has none.
    if (bus_.find("iof"))
        to.push_back(brokers_.view()->rank == 0 ? std::string("iof") : remote_address(0, "iof"));
    return to;
}

std::string RankOutput::flow_name(const std::string &address) const {
    const std::string own = remote_address(brokers_.view()->rank, "");
    return address.starts_with(own) ? address.substr(own.size()) : address;
}

bool RankOutput::open(const std::string &nspace) const {
    for (const auto &to : consumers(nspace)) {
        auto f = flows_.find({flow_name(to), nspace});
        if (f != flows_.end() && f->second.sent - f->second.acked >= window_) return false;
    }
    return true;
}

void RankOutput::pause(Job &job) {
    if (job.paused) return;
    job.paused = true;
    for (auto &[rank, r] : job.ranks)
        for (Pipe *p : {&r.out, &r.err})
            if (p->fd >= 0 && p->watched) reactor_.unwatch_fd(p->fd);
}

void RankOutput::resume(const std::string &nspace, Job &job) {
    if (!job.paused || !open(nspace)) return;
    job.paused = false;
    for (auto &[rank, r] : job.ranks)
        for (int which : {1, 2}) {
            Pipe &p = which == 1 ? r.out : r.err;
            if (p.fd < 0 || !p.watched) continue;
            reactor_.watch_fd(
                p.fd, [this, nspace, rank = rank, which] { read(nspace, rank, which, false); });
        }
}

void RankOutput::stop_reading(Pipe &p, bool paused) {
    if (p.fd < 0) return;
    if (p.watched && !paused) reactor_.unwatch_fd(p.fd);
    ::close(p.fd);
    p.fd = -1;
    p.watched = false;
}

std::string output_node(const msg::JobInfo &info, bool part, std::uint32_t rank) {
    const auto node = info.procs[rank].node_id;
    return !part || node >= info.nodes.size() ? std::string() : info.nodes[node];
}

}  // namespace zpmix
