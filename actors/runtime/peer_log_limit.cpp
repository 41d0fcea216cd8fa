#include "actors/runtime/peer_log_limit.hpp"

#include <fmt/format.h>

namespace zpmix {

namespace {

constexpr std::string_view kOthers = "other peers";

}  // namespace

void PeerLogLimit::configure(Settings s) {
    std::lock_guard lock(mu_);
    s_ = s;
}

PeerLogLimit::Clock::duration PeerLogLimit::interval() const {
    std::lock_guard lock(mu_);
    return s_.interval;
}

bool PeerLogLimit::allow(std::string_view peer, std::uint64_t &suppressed) {
    const auto now = Clock::now();
    std::lock_guard lock(mu_);
    auto it = peers_.find(std::string(peer));
    if (it == peers_.end()) {
        const std::string key(peers_.size() < s_.max_peers ? peer : kOthers);
        it = peers_.try_emplace(key, Count{now, 0, 0}).first;
    }
    Count &c = it->second;
    if (now - c.since >= s_.interval) {
        c.since = now;
        c.logged = 0;
    }
    if (now - all_.since >= s_.interval) {
        all_.since = now;
        all_.logged = 0;
    }
    if (c.logged >= s_.lines || all_.logged >= s_.overall) {
        ++c.suppressed;
        return false;
    }
    ++c.logged;
    ++all_.logged;
    suppressed = std::exchange(c.suppressed, 0);
    return true;
}

void PeerLogLimit::sweep(spdlog::logger &log) {
    const auto now = Clock::now();
    std::lock_guard lock(mu_);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(s_.interval).count();
    unsigned said = 0;  // this sweep's lines are bounded too: the rest in one
    std::uint64_t more_peers = 0, more_lines = 0;
    for (auto it = peers_.begin(); it != peers_.end();) {
        Count &c = it->second;
        if (now - c.since < s_.interval) {
            ++it;
            continue;
        }
        if (c.suppressed == 0) {  // quiet for an interval: forgotten
            it = peers_.erase(it);
            continue;
        }
        if (said++ < s_.overall)
            log.warn("{}: {} more log lines it caused were suppressed (at most {} every {} ms)",
                     it->first, c.suppressed, s_.lines, ms);
        else
            ++more_peers, more_lines += c.suppressed;
        c = Count{now, 0, 0};  // said: its next line starts a new interval
        ++it;
    }
    if (more_peers > 0)
        log.warn("{} more peers: {} more log lines they caused were suppressed", more_peers,
                 more_lines);
}

std::string PeerLogLimit::suffix(std::uint64_t suppressed) {
    return suppressed == 0 ? std::string() : fmt::format(" ({} more suppressed)", suppressed);
}

std::string peer_key(const PeerCredentials &cred, std::string_view routing_id) {
    if (cred.ipc) return fmt::format("pid {}", cred.pid);
    if (cred.tcp && !cred.address.empty()) return "tcp " + cred.address;
    std::string out = "peer ";
    for (unsigned char ch : routing_id) out += fmt::format("{:02x}", ch);
    return out;
}

}  // namespace zpmix
