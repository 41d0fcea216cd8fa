#include "actors/launcher/rank_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "actors/runtime/address.hpp"

namespace zpmix {

namespace {

constexpr std::size_t kMaxChunk = 64 * 1024;  // a longer line is forwarded in pieces

}  // namespace

RankOutput::RankOutput(Reactor &reactor, const Bus &bus, const BrokerMap &brokers, Wiring wiring)
    : reactor_(reactor), bus_(bus), brokers_(brokers), wiring_(std::move(wiring)) {}

RankOutput::~RankOutput() {
    for (auto &[nspace, ranks] : jobs_)
        for (auto &[rank, r] : ranks)
            for (int fd : {r.out.fd, r.err.fd})
                if (fd >= 0) ::close(fd);
}

void RankOutput::add(const std::string &nspace, std::uint32_t rank, int out, int err,
                     std::string node) {
    ::fcntl(out, F_SETFL, O_NONBLOCK);  // the reactor reads what is there, never waits
    ::fcntl(err, F_SETFL, O_NONBLOCK);
    Rank &r = jobs_[nspace][rank];
    r.out.fd = out;
    r.err.fd = err;
    r.node = std::move(node);
}

void RankOutput::watch(const std::string &nspace, std::uint32_t rank) {
    Rank *r = find(nspace, rank);
    if (!r) return;
    reactor_.watch_fd(r->out.fd, [this, nspace, rank] { read(nspace, rank, 1, false); });
    reactor_.watch_fd(r->err.fd, [this, nspace, rank] { read(nspace, rank, 2, false); });
}

void RankOutput::drain(const std::string &nspace, std::uint32_t rank) {
    read(nspace, rank, 1, true);
    read(nspace, rank, 2, true);
}

void RankOutput::drain(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (auto &[rank, r] : it->second) drain(nspace, rank);
}

void RankOutput::close(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (auto &[rank, r] : it->second)
        for (int which : {1, 2}) {
            Pipe &p = which == 1 ? r.out : r.err;
            if (p.fd < 0) continue;
            if (!p.partial.empty()) forward(nspace, rank, r, which, std::exchange(p.partial, {}));
            stop_reading(p);
        }
    jobs_.erase(it);
}

void RankOutput::discard(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    for (auto &[rank, r] : it->second) {
        stop_reading(r.out);
        stop_reading(r.err);
    }
    jobs_.erase(it);
}

RankOutput::Rank *RankOutput::find(const std::string &nspace, std::uint32_t rank) {
    auto job = jobs_.find(nspace);
    if (job == jobs_.end()) return nullptr;
    auto it = job->second.find(rank);
    return it == job->second.end() ? nullptr : &it->second;
}

void RankOutput::read(const std::string &nspace, std::uint32_t rank, int which, bool drain) {
    Rank *r = find(nspace, rank);
    if (!r) return;
    Pipe &p = which == 1 ? r->out : r->err;
    if (p.fd < 0) return;
    std::string &buf = p.partial;
    char chunk[16384];
    for (int rounds = 0; drain || rounds < 16; ++rounds) {
        const ssize_t n = ::read(p.fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) {  // EOF (or an error, which ends the stream the same way)
            if (!buf.empty()) forward(nspace, rank, *r, which, std::exchange(buf, {}));
            stop_reading(p);
            return;
        }
        buf.append(chunk, static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (std::size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
            forward(nspace, rank, *r, which, buf.substr(start, nl + 1 - start));
        buf.erase(0, start);
        while (buf.size() >= kMaxChunk) {
            forward(nspace, rank, *r, which, buf.substr(0, kMaxChunk));
            buf.erase(0, kMaxChunk);
        }
    }
}

void RankOutput::forward(const std::string &nspace, std::uint32_t rank, const Rank &r, int which,
                         std::string data) {
    const msg::Output out{nspace, rank, static_cast<std::uint8_t>(which), std::move(data), r.node};
    wiring_.to_requester(out);
    to_iof(out);
}

// In a tree the root's iof holds every job's output (actors/iof/iof_actor.hpp).
void RankOutput::to_iof(const msg::Output &m) {
    if (!bus_.find("iof")) return;  // a broker without I/O forwarding (unit tests)
    wiring_.send(brokers_.view()->rank == 0 ? std::string("iof") : remote_address(0, "iof"), m);
}

void RankOutput::stop_reading(Pipe &p) {
    if (p.fd < 0) return;
    reactor_.unwatch_fd(p.fd);
    ::close(p.fd);
    p.fd = -1;
}

std::string output_node(const msg::JobInfo &info, bool part, std::uint32_t rank) {
    const auto node = info.procs[rank].node_id;
    return !part || node >= info.nodes.size() ? std::string() : info.nodes[node];
}

}  // namespace zpmix
