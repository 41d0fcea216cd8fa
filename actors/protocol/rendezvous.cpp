#include "actors/protocol/rendezvous.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace zpmix {

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
    std::ifstream in(path);
    if (!in) return std::nullopt;
    try {
        const auto j = nlohmann::json::parse(in);
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
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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
        auto info = read_rendezvous(rendezvous_path(dir));
        if (info && process_alive(info->pid)) out.push_back(*info);
    }
    return out;
}

std::vector<std::string> user_base_dirs() {
    const std::string uid = std::to_string(::getuid());
    std::vector<std::string> out;
    for (std::string dir : {default_base_dir(), "/run/user/" + uid + "/zpmix",
                            "/dev/shm/zpmix-" + uid, "/tmp/zpmix-" + uid}) {
        struct stat st {};
        // Only a real directory of ours: never follow a link another user planted.
        if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
            continue;
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
