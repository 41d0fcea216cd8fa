// Where the `zpmix` process logs, and how: text or JSON lines ([log] format, --log-format), on
// stderr, appended to a file ([log] file, --log-file) or to syslog ([log] syslog, --log-syslog;
// RFC 3164 datagrams to [log] syslog_socket, /dev/log by default, so a site's journald or
// rsyslog takes them as any daemon's).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <mutex>

#include <spdlog/details/os.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "broker/cmd/commands.hpp"
#include "broker/config.hpp"

namespace zpmix::cli {

namespace {

// The message as a JSON string's contents: quotes, backslashes and control characters escaped.
class JsonMessage : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg &msg, const std::tm &,
                spdlog::memory_buf_t &dest) override {
        auto put = [&](std::string_view s) { dest.append(s.data(), s.data() + s.size()); };
        for (char c : msg.payload) {
            switch (c) {
                case '"':
                    put("\\\"");
                    break;
                case '\\':
                    put("\\\\");
                    break;
                case '\n':
                    put("\\n");
                    break;
                case '\t':
                    put("\\t");
                    break;
                default:
                    if (static_cast<unsigned char>(c) < 0x20) {
                        char u[8];
                        std::snprintf(u, sizeof u, "\\u%04x",
                                      static_cast<unsigned>(static_cast<unsigned char>(c)));
                        put(u);
                    } else {
                        dest.push_back(c);
                    }
            }
        }
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<JsonMessage>();
    }
};

// Syslog without openlog(): datagrams to a socket of our choosing, so the configured socket (and
// a test's) is honoured. A datagram the socket refuses is lost, as syslog(3) loses it.
class SyslogSink : public spdlog::sinks::base_sink<std::mutex> {
  public:
    explicit SyslogSink(const std::string &socket_path)
        : fd_(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
        if (fd_ < 0 || socket_path.size() >= sizeof addr_.sun_path) {
            if (fd_ >= 0) ::close(fd_);
            throw std::runtime_error("cannot log to syslog at " + socket_path);
        }
        addr_.sun_family = AF_UNIX;
        std::strcpy(addr_.sun_path, socket_path.c_str());
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        host_ = host;
    }
    ~SyslogSink() override { ::close(fd_); }

  protected:
    void sink_it_(const spdlog::details::log_msg &msg) override {
        spdlog::memory_buf_t line;
        formatter_->format(msg, line);
        std::string text(line.data(), line.size());
        while (!text.empty() && text.back() == '\n') text.pop_back();
        // RFC 3164: <facility*8 + severity>TIMESTAMP HOST TAG: MSG; facility daemon (3).
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        ::localtime_r(&now, &tm);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%b %e %H:%M:%S", &tm);
        const std::string dgram = fmt::format(
            "<{}>{} {} zpmix[{}]: {}", 3 * 8 + severity(msg.level), stamp, host_, ::getpid(), text);
        // Never blocks the broker: a datagram a full syslog socket does not take is lost.
        (void)::sendto(fd_, dgram.data(), dgram.size(), MSG_DONTWAIT,
                       reinterpret_cast<const sockaddr *>(&addr_), sizeof addr_);
    }
    void flush_() override {}

  private:
    static int severity(spdlog::level::level_enum l) {
        switch (l) {
            case spdlog::level::critical:
                return 2;
            case spdlog::level::err:
                return 3;
            case spdlog::level::warn:
                return 4;
            case spdlog::level::info:
                return 6;
            default:
                return 7;
        }
    }
    int fd_;
    sockaddr_un addr_{};
    std::string host_;
};

}  // namespace

void setup_logging(const std::string &name, const std::string &level, int verbose, int quiet,
                   const LogOptions &where) {
    if (where.format != "text" && where.format != "json")
        throw std::runtime_error("log format must be text or json, not " + where.format);
    spdlog::sink_ptr sink;
    if (where.syslog)
        sink = std::make_shared<SyslogSink>(where.syslog_socket);
    else if (!where.file.empty())
        sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(where.file);
    else
        sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto logger = std::make_shared<spdlog::logger>(name, sink);
    if (where.format == "json") {
        // One object per line, UTC with microseconds: what log pipelines parse unaided.
        auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
        f->add_flag<JsonMessage>('*').set_pattern(
            R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","process":"zpmix )" + name +
            R"(","pid":%P,"logger":"%n","msg":"%*"})");
        logger->set_formatter(std::move(f));
    } else if (where.syslog) {
        logger->set_pattern("%n %l: %v");  // syslog stamps the time and the process itself
    } else {
        logger->set_pattern("%H:%M:%S.%e zpmix %n %l: %v");
    }
    if (!where.file.empty() || where.syslog) logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
    int l = spdlog::level::from_str(level);
    l = std::clamp(l - verbose + quiet, 0, static_cast<int>(spdlog::level::off));
    spdlog::set_level(static_cast<spdlog::level::level_enum>(l));
}

void add_log_options(CLI::App &cmd, LogOptions &where) {
    cmd.add_option("--log-format", where.format, "Log as text or json lines ([log] format)")
        ->check(CLI::IsMember({"text", "json"}));
    cmd.add_option("--log-file", where.file, "Append the log to this file ([log] file)");
    cmd.add_flag("--log-syslog", where.syslog,
                 "Send the log to syslog ([log] syslog, at [log] syslog_socket)");
}

LogOptions log_options(const Config &config, const LogOptions &cli) {
    LogOptions out;
    out.format = cli.format.empty() ? config.log_format : cli.format;
    out.file = cli.file.empty() ? config.log_file : cli.file;
    out.syslog = cli.syslog || config.log_syslog;
    out.syslog_socket = config.log_syslog_socket;
    return out;
}

}  // namespace zpmix::cli
