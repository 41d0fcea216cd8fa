#pragma once
// The rendezvous file `<run_dir>/broker.json` tells tools and `zpmix run` where a broker
// listens. A standalone `zpmix broker` uses the per-user base directory, so `zpmix run` finds
// it by default; embedded brokers live in private subdirectories, where only the operators'
// commands (`zpmix ps`, `zpmix ctl`) look, to find the broker that runs a job.
//
// Trust: every directory and file found this way must be this user's and writable by no one else
// (as ssh treats its keys), and the broker behind a socket must run as this user (SO_PEERCRED),
// checked before a byte is sent. A base directory in /dev/shm or /tmp can be made first by anyone:
// what fails the checks is refused loudly (UntrustedPath), never taken for "no broker", which
// would start a broker among another user's files.
#include <cstdint>
#include <optional>
#include <stdexcept>
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

// A directory, file or socket that another user made or can change; what() names it, its owner
// or mode, and the remedy.
struct UntrustedPath : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws UntrustedPath unless `dir` is a real directory (not a link) of this user that no one
// else can write, under ancestors only root or this user can change (a world-writable one only
// if sticky, as /tmp). `dir` must exist (std::system_error otherwise).
void check_trusted_dir(const std::string &dir);
// The ancestors' part of check_trusted_dir: every directory above `path`, and every link on the
// way, belongs to root or this user, and others cannot write them unless they are sticky.
void check_trusted_ancestors(const std::string &path);
// What a file zpmix reads must be: a regular file of this user (or of root: `root_ok`, for a
// system-wide configuration) that no one else can write (`secret`, a key: nor read). A link is
// refused unless `follow_links` (then the file it leads to is checked).
struct FileTrust {
    bool secret = false;
    bool root_ok = false;
    bool follow_links = false;
};
// Throws UntrustedPath unless fd (opened from `path`) is such a file.
void check_trusted_file(int fd, const std::string &path, FileTrust trust = {});
// The whole content of a trusted file; nullopt when it does not exist. Throws UntrustedPath, or
// std::system_error when it cannot be read.
std::optional<std::string> read_trusted_file(const std::string &path, FileTrust trust = {});
// Empty when the peer of the connected unix socket fd runs as this user, else why not.
std::string ipc_peer_problem(int fd);
// For clients that connect with libzmq: an ipc:// uri's socket is this user's, in a directory
// others cannot change (so it stays the one checked), and whoever listens on it runs as this
// user (a probe connection's SO_PEERCRED). Throws UntrustedPath, or std::system_error when the
// kernel will not let us open the socket (EACCES, EPERM: final, where libzmq would retry until
// the deadline); other uris pass.
void check_ipc_endpoint(const std::string &uri);

// The per-user base directory: $XDG_RUNTIME_DIR/zpmix, else /dev/shm/zpmix-<uid> (a tmpfs),
// else /tmp/zpmix-<uid>.
std::string default_base_dir();

std::string rendezvous_path(const std::string &run_dir);

// Reads the rendezvous file of run_dir. A file whose broker process is gone is stale: it is
// removed (with the sockets it names) and nullopt returned, as for a missing directory, a missing
// file or a malformed one. Throws UntrustedPath when run_dir or the file fails the checks above,
// or the file names another user or sockets outside run_dir.
std::optional<RendezvousInfo> find_broker(const std::string &run_dir);

// Reads without judging liveness; nullopt when missing or malformed. The file must be a regular
// file of this user that others cannot write (UntrustedPath otherwise).
std::optional<RendezvousInfo> read_rendezvous(const std::string &path);
// Writes atomically (a new temporary file, never through a link, then rename), mode 0600.
void write_rendezvous(const std::string &path, const RendezvousInfo &info);
bool process_alive(std::int64_t pid);

// Every live broker of this user under base: the standalone one (<base>/broker.json) first, then
// those embedded in `zpmix run` (<base>/broker-<pid>-<n>/broker.json). Stale files are skipped,
// not removed: an embedded broker's directory is its own to clean. Throws UntrustedPath for an
// untrusted base; an untrusted broker-* entry is skipped with a warning.
std::vector<RendezvousInfo> find_brokers(const std::string &base);

// Every base directory this user's brokers may use, whatever XDG_RUNTIME_DIR each was started
// with: default_base_dir() first, then /run/user/<uid>/zpmix, /dev/shm/zpmix-<uid> and
// /tmp/zpmix-<uid>; only trusted directories of this user. Throws UntrustedPath when the first
// (the default) exists and is not trusted; another one that is not is skipped with a warning.
std::vector<std::string> user_base_dirs();
// find_brokers over every user_base_dirs(), each broker once (by its ROUTER address).
std::vector<RendezvousInfo> find_user_brokers();

}  // namespace zpmix
