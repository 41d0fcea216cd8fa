#pragma once
// LaunchedRanks: whether a process may be the rank of a namespace registered on this broker that
// it claims to be, so that the registry can refuse the Hello of a process that claims a rank it
// is not: every later message of a session is then its own rank's.
//
// The launcher registers a namespace (ns.register) before its ranks start, then reports each
// rank's pid (ns.spawned) into the namespace table; the kernel vouches for the pid of every ipc
// peer's message
// (Envelope::peer). A sender may act as a proc when it is that rank's process or one of its
// descendants (a rank may be a wrapper script that runs the real program as its child). An ipc
// peer whose pid the kernel does not give (0: it runs outside the broker's pid namespace, as a
// process of the host is to a broker in a container) is refused: it is none of the ranks this
// broker launched, which all run inside it, and nothing about it can be checked. Nothing can be
// checked, and everything is allowed, when the sender is a tcp peer (its Hello proved the job's
// secret) or one of the broker's own actors, or the namespace has no pids (ranks this broker did
// not launch).
//
// A rank can start and connect before the launcher's thread has reported its pid (the launcher
// may be descheduled right after the spawn). Such a sender, a process of this broker's that is no
// reported rank, is neither allowed nor refused: the check says `later`, and the registry asks
// again after the next report (after_next_spawn).
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/envelope.hpp"

namespace zpmix {

class LaunchedRanks {
  public:
    enum class Verdict { allowed, refused, later };
    // Whether the sender of a message (its kernel credentials) may act as rank `rank` of `job`
    // (null: a namespace this broker does not know, whose ranks cannot be checked).
    Verdict may_act_as(const PeerCredentials &sender, const NamespaceRecord *job,
                       std::uint32_t rank);
    // Runs `retry` once the next rank of `nspace` is reported spawned; dropped if it goes first.
    void after_next_spawn(const std::string &nspace, std::function<void()> retry);
    void spawned(const std::string &nspace);  // a rank of it was: runs its retries
    void gone(const std::string &nspace);     // drops its retries

  private:
    static constexpr std::size_t kMaxWaiting = 1024;  // retries kept per namespace
    // (sender pid, rank pid) -> whether the sender descends from the rank: the walk up the
    // process tree is done once per pair, not per fence.
    struct PairHash {
        std::size_t operator()(const std::pair<std::int64_t, std::int64_t> &p) const noexcept {
            return std::hash<std::int64_t>{}(p.first * 1000003 ^ p.second);
        }
    };
    std::unordered_map<std::pair<std::int64_t, std::int64_t>, bool, PairHash> descends_;
    std::unordered_map<std::string, std::vector<std::function<void()>>> waiting_;  // by nspace
};

// Whether process `pid` is `ancestor` or one of its descendants (walks /proc/<pid>/stat).
bool descends_from(std::int64_t pid, std::int64_t ancestor);

}  // namespace zpmix
