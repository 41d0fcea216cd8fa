#include "broker/cmd/run/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <pmix_common.h>
#include <spdlog/spdlog.h>

namespace zpmix::cli::run {

int fail(const std::string &message, int status) {
    std::cerr << "zpmix run: " << message << "\n";
    return status;
}

int exit_status_of(std::int32_t error) {
    switch (error) {
        case PMIX_ERR_JOB_EXE_NOT_FOUND:
        case PMIX_ERR_NOT_FOUND:  // brokers before PMIX_ERR_JOB_EXE_NOT_FOUND
            return kNotFound;
        case PMIX_ERR_JOB_APP_NOT_EXECUTABLE:
            return kNotExecutable;
        default:
            return kFailed;
    }
}

namespace {

void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // stdout closed: the output is dropped, the job goes on
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

}  // namespace

// ---- --output-filename ---------------------------------------------------------------------

OutputFiles::~OutputFiles() {
    for (auto &[key, fd] : files_)
        if (fd >= 0) ::close(fd);
}

bool OutputFiles::open(const std::string &nspace, std::uint32_t rank, int stream) {
    int &fd = files_.try_emplace({nspace, rank, stream}, -1).first->second;
    if (fd >= 0) return true;
    if (fd == kFailed) return false;  // said once
    if (!jobs_.contains(nspace)) jobs_[nspace] = jobs_.size() + 1;
    const std::string d = fmt::format("{}/{}/rank.{}", dir_, jobs_[nspace], rank);
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    const std::string path = d + (stream == 1 ? "/stdout" : "/stderr");
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        fd = kFailed;
        std::cerr << "zpmix run: --output-filename: cannot open " << path << ": " << strerror(errno)
                  << "\n";
        return false;
    }
    return true;
}

void OutputFiles::write(const std::string &nspace, std::uint32_t rank, int stream,
                        std::string_view data) {
    if (!enabled() || !open(nspace, rank, stream)) return;
    write_all(files_[{nspace, rank, stream}], data);
}

// ---- The job's output and end --------------------------------------------------------------

bool JobOutput::open_files(const std::string &nspace, std::uint32_t np) {
    if (files_.enabled())
        for (std::uint32_t r = 0; r < np; ++r)
            if (!files_.open(nspace, r, 1) || !files_.open(nspace, r, 2)) return false;
    return true;
}

void JobOutput::print(msg::Output out) {
    const int fd = out.fd == 2 ? 2 : 1;
    const std::size_t raw = out.data.size();  // the files get it untagged
    bool &inside = mid_line_[{out.nspace, out.rank, fd}];
    // A job across nodes (the launched one or one it spawned) names the rank's node too:
    // [nspace,rank,node]<stream>:
    if (tag_ && !inside)
        out.data = fmt::format("[{},{}{}]<{}>: ", out.nspace, out.rank,
                               out.node.empty() ? std::string() : "," + out.node,
                               fd == 1 ? "stdout" : "stderr") +
                   out.data;
    inside = !out.data.ends_with('\n');
    files_.write(out.nspace, out.rank, fd,
                 tag_ ? std::string_view(out.data).substr(out.data.size() - raw)
                      : std::string_view(out.data));
    write_all(fd, out.data);
}

std::optional<int> JobOutput::ended(const msg::JobEnded &e, const std::string &launched) {
    if (e.nspace != launched) {  // a job it spawned, over before it
        spdlog::debug("spawned job {} ended with status {}", e.nspace, e.status);
        if (!e.message.empty())
            std::cerr << "zpmix run: spawned job " << e.nspace << ": " << e.message << "\n";
        return std::nullopt;
    }
    if (!e.message.empty()) std::cerr << "zpmix run: " << e.message << "\n";
    return e.status;
}

}  // namespace zpmix::cli::run
