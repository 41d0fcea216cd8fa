#pragma once
// The rendezvous file `<run_dir>/broker.json` tells tools and `zpmix run` where a broker
// listens. A standalone `zpmix broker` uses the per-user base directory, so `zpmix run` finds
// it by default; embedded brokers live in private subdirectories nobody looks into.
#include <cstdint>
#include <optional>
#include <string>

namespace zpmix {

struct RendezvousInfo {
    std::string uri;         // the broker's ROUTER (ipc://)
    std::string events_uri;  // its event publisher (XPUB)
    std::string tcp_uri;     // empty unless it listens on tcp
    std::int64_t pid = 0;
    std::int64_t uid = -1;
    std::uint32_t protocol = 0;
    std::string hostname;
};

std::string rendezvous_path(const std::string &run_dir);

// Reads the rendezvous file of run_dir. A file whose broker process is gone is stale: it is
// removed (with the sockets it names) and nullopt returned, as for a missing or unreadable one.
std::optional<RendezvousInfo> find_broker(const std::string &run_dir);

// Reads without judging liveness; nullopt when missing or malformed.
std::optional<RendezvousInfo> read_rendezvous(const std::string &path);
// Writes atomically (temporary file + rename), mode 0600.
void write_rendezvous(const std::string &path, const RendezvousInfo &info);
bool process_alive(std::int64_t pid);

}  // namespace zpmix
