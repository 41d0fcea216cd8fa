#pragma once
// The rendezvous file `<run_dir>/broker.json` tells tools and `zpmix run` where a broker
// listens. A standalone `zpmix broker` uses the per-user base directory, so `zpmix run` finds
// it by default; embedded brokers live in private subdirectories, where only the operators'
// commands (`zpmix ps`, `zpmix ctl`) look, to find the broker that runs a job.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zpmix {

struct RendezvousInfo {
    std::string uri;         // the broker's ROUTER (ipc://)
    std::string events_uri;  // its event publisher (XPUB)
    std::string tcp_uri;     // empty unless it listens on tcp
    std::int64_t pid = 0;
    std::int64_t uid = -1;
    std::uint32_t protocol = 0;
    std::string hostname;
    // A member of a standing tree: the tree's hosts, by broker rank (`zpmix run` runs jobs on
    // them through it); empty otherwise.
    std::vector<std::string> tree_hosts = {};
};

// The per-user base directory: $XDG_RUNTIME_DIR/zpmix, else /dev/shm/zpmix-<uid> (a tmpfs),
// else /tmp/zpmix-<uid>.
std::string default_base_dir();

std::string rendezvous_path(const std::string &run_dir);

// Reads the rendezvous file of run_dir. A file whose broker process is gone is stale: it is
// removed (with the sockets it names) and nullopt returned, as for a missing or unreadable one.
std::optional<RendezvousInfo> find_broker(const std::string &run_dir);

// Reads without judging liveness; nullopt when missing or malformed.
std::optional<RendezvousInfo> read_rendezvous(const std::string &path);
// Writes atomically (temporary file + rename), mode 0600.
void write_rendezvous(const std::string &path, const RendezvousInfo &info);
bool process_alive(std::int64_t pid);

// Every live broker of this user under base: the standalone one (<base>/broker.json) first, then
// those embedded in `zpmix run` (<base>/broker-<pid>-<n>/broker.json). Stale files are skipped,
// not removed: an embedded broker's directory is its own to clean.
std::vector<RendezvousInfo> find_brokers(const std::string &base);

// Every base directory this user's brokers may use, whatever XDG_RUNTIME_DIR each was started
// with: default_base_dir() first, then /run/user/<uid>/zpmix, /dev/shm/zpmix-<uid> and
// /tmp/zpmix-<uid>; only real directories of this user.
std::vector<std::string> user_base_dirs();
// find_brokers over every user_base_dirs(), each broker once (by its ROUTER address).
std::vector<RendezvousInfo> find_user_brokers();

}  // namespace zpmix
