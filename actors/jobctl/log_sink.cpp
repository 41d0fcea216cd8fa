#include "actors/jobctl/log_sink.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <pmix_common.h>

#include "actors/protocol/host_services.hpp"

namespace zpmix {

namespace {

constexpr std::size_t kMaxText = 8192;  // longer texts are cut: one line, one datagram

bool write_all(int fd, const std::string &s) {
    for (std::size_t off = 0; off < s.size();) {
        const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        off += static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace

LogSink::LogSink(Reactor &reactor, Bus &bus, Settings settings)
    : Actor("log", reactor, bus), settings_(std::move(settings)) {
    on(&LogSink::log_request, Access::session | Access::operator_);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    host_ = host;
    syslog_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

LogSink::~LogSink() {
    if (syslog_fd_ >= 0) ::close(syslog_fd_);
}

void LogSink::log_request(const Envelope &env, msg::Log &m) {
    if (m.entries.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, "nothing to log");
    std::int64_t ts = m.timestamp;
    if (ts == 0 && m.generate_timestamp) ts = std::time(nullptr);
    std::string prefix = m.source.nspace + ":" + std::to_string(m.source.rank);
    if (ts != 0) {
        char buf[64];
        const std::time_t t = static_cast<std::time_t>(ts);
        std::tm tm{};
        ::localtime_r(&t, &tm);
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
        prefix = std::string(buf) + " " + prefix;
    }
    int status = PMIX_SUCCESS;
    bool logged = false;
    std::vector<msg::LogEntry> for_host;
    for (const auto &e : m.entries) {
        const int rc = write_entry(m, e, prefix);
        if (rc == PMIX_SUCCESS) {
            logged = true;
            if (m.once) break;
        } else if (rc == PMIX_ERR_NOT_SUPPORTED && settings_.to_host) {
            for_host.push_back(e);
        } else if (status == PMIX_SUCCESS) {
            status = rc;
        }
    }
    if (m.once && logged) status = PMIX_SUCCESS;
    if (!for_host.empty() && !(m.once && logged)) {
        if (ts != 0) m.timestamp = ts;
        m.entries = std::move(for_host);
        return send("hostsvc", msg::HostLog{std::move(m), logged, status, env.from, env.id});
    }
    if (status != PMIX_SUCCESS)
        return reply_error(env, status,
                           logged ? "some channels failed" : "no channel could log the data");
    reply(env, msg::Ok{});
}

int LogSink::write_entry(const msg::Log &m, const msg::LogEntry &e, const std::string &prefix) {
    std::string text = e.text.substr(0, kMaxText);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (e.channel == "stderr" || e.channel == "stdout") {
        // One write per line, so that lines of concurrent writers never interleave.
        return write_all(e.channel == "stderr" ? 2 : 1, "[" + prefix + "] " + text + "\n")
                   ? PMIX_SUCCESS
                   : PMIX_ERR_SYS_OTHER;
    }
    if (e.channel == "syslog") {
        if (syslog_fd_ < 0) return PMIX_ERR_SYS_OTHER;
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        if (settings_.syslog_socket.size() >= sizeof addr.sun_path) return PMIX_ERR_BAD_PARAM;
        std::strcpy(addr.sun_path, settings_.syslog_socket.c_str());
        // RFC 3164: <facility*8 + severity>TIMESTAMP HOST TAG: MSG; facility user (1).
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        ::localtime_r(&now, &tm);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%b %e %H:%M:%S", &tm);
        const int pri = 8 + std::clamp(m.syslog_priority, 0, 7);
        const std::string dgram = fmt::format("<{}>{} {} zpmix[{}]: [{}] {}", pri, stamp, host_,
                                              ::getpid(), prefix, text);
        if (::sendto(syslog_fd_, dgram.data(), dgram.size(), 0,
                     reinterpret_cast<const sockaddr *>(&addr), sizeof addr) < 0) {
            log().warn("syslog {}: {}", settings_.syslog_socket, strerror(errno));
            return PMIX_ERR_UNREACH;
        }
        return PMIX_SUCCESS;
    }
    return PMIX_ERR_NOT_SUPPORTED;  // email, and any channel we do not have
}

}  // namespace zpmix
