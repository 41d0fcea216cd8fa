#include "actors/protocol/rendezvous.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace zpmix {

namespace fs = std::filesystem;

namespace {

std::string mode_text(mode_t mode) {
    return fmt::format("{:04o}", mode & 07777);
}

[[noreturn]] void untrusted(const std::string &path, const std::string &why) {
    throw UntrustedPath("refusing " + path + ": " + why +
                        "; zpmix trusts only what this user alone can change (remove it or make "
                        "it private, or set XDG_RUNTIME_DIR to a private directory)");
}

// The group is this user's own (its primary group, with no other member): its write permission
// gives no one else anything, as for umask 002 users.
bool private_group(gid_t gid) {
    if (gid != ::getgid()) return false;
    std::vector<char> buf(16384), pbuf(16384);
    group g{};
    group *gr = nullptr;
    passwd pw{};
    passwd *pr = nullptr;
    if (::getgrgid_r(gid, &g, buf.data(), buf.size(), &gr) != 0 || !gr) return false;
    if (::getpwuid_r(::getuid(), &pw, pbuf.data(), pbuf.size(), &pr) != 0 || !pr) return false;
    for (char **m = gr->gr_mem; m && *m; ++m)
        if (std::strcmp(*m, pr->pw_name) != 0) return false;
    return true;
}

bool owner_ok(uid_t uid) {
    return uid == 0 || uid == ::getuid();
}

// Why others than the owner can add, remove or rename entries of this directory; empty if none
// can (sticky: only an entry's owner may remove or rename it).
std::string others_can_write(const struct stat &st) {
    if (st.st_mode & S_ISVTX) return {};
    if (st.st_mode & S_IWOTH) return "everyone can write it (mode " + mode_text(st.st_mode) + ")";
    if ((st.st_mode & S_IWGRP) && !private_group(st.st_gid))
        return "group " + std::to_string(st.st_gid) + " can write it (mode " +
               mode_text(st.st_mode) + ")";
    return {};
}

std::string owner_text(uid_t uid) {
    return "it belongs to uid " + std::to_string(uid) + ", not to this user (uid " +
           std::to_string(::getuid()) + ")";
}

}  // namespace

namespace {

// Why a rendezvous file is not what a broker of ours writes in `run_dir` (its uid, its sockets
// beside the file); empty when it is.
std::string not_its_own(const RendezvousInfo &info, const std::string &run_dir) {
    const fs::path dir = fs::absolute(run_dir).lexically_normal();
    auto beside = [&](const std::string &uri, const char *name) {
        return uri.starts_with("ipc://") &&
               fs::path(uri.substr(6)).lexically_normal() == (dir / name).lexically_normal();
    };
    if (info.uid != static_cast<std::int64_t>(::getuid()))
        return "it names uid " + std::to_string(info.uid) + ", not this user (uid " +
               std::to_string(::getuid()) + ")";
    if (!beside(info.uri, "broker.sock") ||
        (!info.events_uri.empty() && !beside(info.events_uri, "events.sock")) ||
        (!info.tcp_uri.empty() && !info.tcp_uri.starts_with("tcp://")))
        return "it names sockets (" + info.uri + ", " + info.events_uri +
               ") that are not those of its directory";
    return {};
}

}  // namespace

void check_trusted_ancestors(const std::string &path) {
    const fs::path abs = fs::absolute(path).lexically_normal();
    // The links on the way, as named: root's or ours (nobody else can point them elsewhere).
    fs::path prefix;
    for (auto it = abs.begin(); it != abs.end(); ++it) {
        prefix /= *it;
        if (std::next(it) == abs.end()) break;  // the path itself is the caller's to check
        struct stat st {};
        if (::lstat(prefix.c_str(), &st) != 0) break;
        if (S_ISLNK(st.st_mode) && !owner_ok(st.st_uid))
            untrusted(prefix.string(),
                      "this link on the way to " + path + " " + owner_text(st.st_uid).substr(3));
    }
    // The directories it resolves to: root's or ours, and no one else may change them.
    std::error_code ec;
    const fs::path parent = fs::canonical(abs.parent_path(), ec);
    if (ec) return;  // nothing there: the caller finds nothing
    fs::path dir;
    for (const auto &part : parent) {
        dir /= part;
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0) return;
        if (!owner_ok(st.st_uid))
            untrusted(path, "its directory " + dir.string() + " belongs to uid " +
                                std::to_string(st.st_uid) + ", neither root nor this user");
        if (auto why = others_can_write(st); !why.empty())
            untrusted(path, "its directory " + dir.string() + " is not sticky and " + why);
    }
}

void check_trusted_dir(const std::string &dir) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0)
        throw std::system_error(errno, std::generic_category(), "stat " + dir);
    if (S_ISLNK(st.st_mode)) untrusted(dir, "it is a symbolic link, not a directory");
    if (!S_ISDIR(st.st_mode)) untrusted(dir, "it is not a directory");
    if (st.st_uid != ::getuid()) untrusted(dir, owner_text(st.st_uid));
    if (st.st_mode & 022)
        untrusted(dir, "others can write it (mode " + mode_text(st.st_mode) + ")");
    check_trusted_ancestors(dir);
}

void check_trusted_file(int fd, const std::string &path, FileTrust trust) {
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw std::system_error(errno, std::generic_category(), "stat " + path);
    if (!S_ISREG(st.st_mode)) untrusted(path, "it is not a regular file");
    if (st.st_uid != ::getuid() && !(trust.root_ok && st.st_uid == 0))
        untrusted(path, owner_text(st.st_uid));
    if (st.st_mode & (trust.secret ? 077 : 022))
        untrusted(path, std::string(trust.secret ? "others can read or write it"
                                                 : "others can write it") +
                            " (mode " + mode_text(st.st_mode) + ")");
}

std::optional<std::string> read_trusted_file(const std::string &path, FileTrust trust) {
    // O_NONBLOCK: a fifo planted in its place does not hang the open.
    const int fd = ::open(
        path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (trust.follow_links ? 0 : O_NOFOLLOW));
    if (fd < 0) {
        if (errno == ENOENT) return std::nullopt;
        if (errno == ELOOP) untrusted(path, "it is a symbolic link");
        throw std::system_error(errno, std::generic_category(), "open " + path);
    }
    std::string text;
    try {
        check_trusted_file(fd, path, trust);
        char buf[4096];
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw std::system_error(errno, std::generic_category(), "read " + path);
            if (n == 0) break;
            text.append(buf, static_cast<std::size_t>(n));
            if (text.size() > (std::size_t{1} << 20))
                throw std::runtime_error(path + ": over 1 MiB, not a zpmix file");
        }
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return text;
}

std::string ipc_peer_problem(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return std::string("cannot tell who listens there (SO_PEERCRED: ") + strerror(errno) + ")";
    if (cred.uid != ::getuid())
        return "the process listening there (pid " + std::to_string(cred.pid) + ") runs as uid " +
               std::to_string(cred.uid) + ", not as this user (uid " + std::to_string(::getuid()) +
               ")";
    return {};
}

void check_ipc_endpoint(const std::string &uri) {
    if (!uri.starts_with("ipc://")) return;
    const std::string path = uri.substr(6);
    struct stat st {};
    // Nothing there: the connection fails (and may be tried again). A directory on the way we may
    // not search is final.
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == EACCES || errno == EPERM)
            throw std::system_error(errno, std::generic_category(), "cannot connect to " + uri);
        return;
    }
    if (!S_ISSOCK(st.st_mode)) untrusted(path, "it is not a socket");
    if (st.st_uid != ::getuid()) untrusted(path, "this socket " + owner_text(st.st_uid).substr(3));
    check_trusted_ancestors(path);
    sockaddr_un a{};
    if (path.size() >= sizeof a.sun_path) return;
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    const timeval limit{5, 0};  // a listener whose backlog is full
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    std::string problem;
    int denied = 0;  // a socket we may not open (its mode): final, as a refusal
    if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0)
        problem = ipc_peer_problem(fd);
    else if (errno == EACCES || errno == EPERM)
        denied = errno;
    ::close(fd);
    if (denied)
        throw std::system_error(denied, std::generic_category(), "cannot connect to " + uri);
    if (!problem.empty()) untrusted(path, problem);
}

std::string default_base_dir() {
    if (const char *xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg)
        return std::string(xdg) + "/zpmix";
    // Runtime files belong on a tmpfs, as systemd's /run/user: on a disk file system (ext4
    // with discard, say) each rmdir of a job's session directories costs milliseconds.
    struct statfs fs;
    if (::statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
        ::access("/dev/shm", W_OK) == 0)
        return "/dev/shm/zpmix-" + std::to_string(::getuid());
    return "/tmp/zpmix-" + std::to_string(::getuid());
}

std::string rendezvous_path(const std::string &run_dir) {
    return run_dir + "/broker.json";
}

bool process_alive(std::int64_t pid) {
    if (pid <= 0) return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::optional<RendezvousInfo> read_rendezvous(const std::string &path) {
    std::optional<std::string> text;
    try {
        text = read_trusted_file(path);
    } catch (const UntrustedPath &) {
        throw;
    } catch (const std::exception &e) {
        spdlog::warn("ignoring unreadable rendezvous file {}: {}", path, e.what());
        return std::nullopt;
    }
    if (!text) return std::nullopt;
    try {
        const auto j = nlohmann::json::parse(*text);
        RendezvousInfo r;
        r.uri = j.at("uri").get<std::string>();
        r.events_uri = j.value("events_uri", "");
        r.tcp_uri = j.value("tcp_uri", "");
        r.pid = j.at("pid").get<std::int64_t>();
        r.uid = j.value("uid", std::int64_t{-1});
        r.protocol = j.value("protocol", 0u);
        r.hostname = j.value("hostname", "");
        r.tree_hosts = j.value("tree_hosts", std::vector<std::string>{});
        return r;
    } catch (const std::exception &e) {
        spdlog::warn("ignoring malformed rendezvous file {}: {}", path, e.what());
        return std::nullopt;
    }
}

void write_rendezvous(const std::string &path, const RendezvousInfo &r) {
    nlohmann::json j = {
        {"uri", r.uri}, {"events_uri", r.events_uri}, {"tcp_uri", r.tcp_uri},  {"pid", r.pid},
        {"uid", r.uid}, {"protocol", r.protocol},     {"hostname", r.hostname}};
    if (!r.tree_hosts.empty()) j["tree_hosts"] = r.tree_hosts;
    const std::string text = j.dump(2) + "\n";
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    ::unlink(tmp.c_str());  // an earlier process's of our pid
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "create " + tmp);
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw std::system_error(err, std::generic_category(), "write " + path);
    }
}

std::optional<RendezvousInfo> find_broker(const std::string &run_dir) {
    struct stat st {};
    if (::lstat(run_dir.c_str(), &st) != 0 && errno == ENOENT) return std::nullopt;
    check_trusted_dir(run_dir);
    const std::string path = rendezvous_path(run_dir);
    auto info = read_rendezvous(path);
    if (!info) return std::nullopt;
    if (!process_alive(info->pid)) {
        spdlog::info("removing stale rendezvous file {} (broker pid {} is gone)", path, info->pid);
        ::unlink(path.c_str());
        for (const char *sock : {"/broker.sock", "/events.sock"})
            ::unlink((run_dir + sock).c_str());
        return std::nullopt;
    }
    if (auto why = not_its_own(*info, run_dir); !why.empty()) untrusted(path, why);
    return info;
}

}  // namespace zpmix

namespace zpmix {

std::vector<RendezvousInfo> find_brokers(const std::string &base) {
    std::vector<RendezvousInfo> out;
    if (auto standalone = find_broker(base)) out.push_back(*standalone);
    std::vector<std::string> dirs;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(base, ec))
        if (entry.path().filename().string().starts_with("broker-")) dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());  // a stable order for `zpmix ps`
    for (const auto &dir : dirs) {
        try {
            check_trusted_dir(dir);
            auto info = read_rendezvous(rendezvous_path(dir));
            if (!info || !process_alive(info->pid)) continue;
            if (auto why = not_its_own(*info, dir); !why.empty())
                untrusted(rendezvous_path(dir), why);
            out.push_back(*info);
        } catch (const UntrustedPath &e) {
            spdlog::warn("{}", e.what());
        } catch (const std::exception &) {  // gone meanwhile
        }
    }
    return out;
}

std::vector<std::string> user_base_dirs() {
    const std::string uid = std::to_string(::getuid());
    std::vector<std::string> out;
    const std::string first = default_base_dir();
    for (std::string dir :
         {first, "/run/user/" + uid + "/zpmix", "/dev/shm/zpmix-" + uid, "/tmp/zpmix-" + uid}) {
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0) continue;
        try {
            check_trusted_dir(dir);
        } catch (const UntrustedPath &e) {
            if (dir == first) throw;
            spdlog::warn("{}", e.what());
            continue;
        }
        if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(std::move(dir));
    }
    return out;
}

std::vector<RendezvousInfo> find_user_brokers() {
    std::vector<RendezvousInfo> out;
    for (const auto &base : user_base_dirs())
        for (auto &b : find_brokers(base))
            if (std::none_of(out.begin(), out.end(), [&](const auto &o) { return o.uri == b.uri; }))
                out.push_back(std::move(b));
    return out;
}

}  // namespace zpmix
