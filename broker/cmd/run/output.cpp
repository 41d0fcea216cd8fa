#include "broker/cmd/run/output.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

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

// ---- The writer thread ---------------------------------------------------------------------

struct OutputWriter::State {
    std::mutex mu;
    std::condition_variable cv;  // the thread: something queued, or stop; flush(): all written
    std::deque<Piece> queue;
    bool writing = false;  // the thread holds a piece
    bool stop = false;
    std::map<Flow, std::uint64_t> written;
    int event_fd = -1;
};

OutputWriter::OutputWriter() : state_(std::make_shared<State>()) {
    event_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    state_->event_fd = ::dup(event_fd_);  // the thread's own: it may outlive this object
    std::thread([st = state_] {
        std::unique_lock lock(st->mu);
        for (;;) {
            st->cv.wait(lock, [&] { return st->stop || !st->queue.empty(); });
            if (st->queue.empty()) break;
            Piece p = std::move(st->queue.front());
            st->queue.pop_front();
            st->writing = true;
            lock.unlock();
            write_all(p.fd, p.data);
            lock.lock();
            st->writing = false;
            st->written[p.flow] += p.credit;
            const std::uint64_t one = 1;
            (void)!::write(st->event_fd, &one, sizeof one);
            st->cv.notify_all();
        }
        ::close(st->event_fd);
    }).detach();
}

OutputWriter::~OutputWriter() {
    {
        std::lock_guard lock(state_->mu);
        state_->stop = true;
        state_->queue.clear();
    }
    state_->cv.notify_all();
    ::close(event_fd_);
}

void OutputWriter::write(int fd, std::string data, const Flow &flow, std::uint64_t credit) {
    {
        std::lock_guard lock(state_->mu);
        state_->queue.push_back(Piece{fd, std::move(data), flow, credit});
    }
    state_->cv.notify_all();
}

std::map<OutputWriter::Flow, std::uint64_t> OutputWriter::written() {
    std::uint64_t n;
    (void)!::read(event_fd_, &n, sizeof n);
    std::lock_guard lock(state_->mu);
    return std::exchange(state_->written, {});
}

void OutputWriter::flush() {
    std::unique_lock lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->queue.empty() && !state_->writing; });
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
    const std::uint64_t raw = out.data.size();
    files_.write(out.nspace, out.rank, fd, out.data);  // untagged
    bool &inside = mid_line_[{out.nspace, out.rank, fd}];
    std::string text;
    if (!tag_ && !timestamp_) {
        text = std::move(out.data);
    } else {
        // A job across nodes (the launched one or one it spawned) names the rank's node too:
        // [nspace,rank,node]<stream>:
        std::string tag;
        if (timestamp_) {
            const std::time_t now = std::time(nullptr);
            char when[32] = {};
            if (::ctime_r(&now, when)) tag = std::string(when, ::strcspn(when, "\n"));
        }
        if (tag_)
            tag += fmt::format("[{},{}{}]", out.nspace, out.rank,
                               out.node.empty() ? std::string() : "," + out.node);
        tag += fd == 1 ? "<stdout>: " : "<stderr>: ";
        std::string_view rest = out.data;
        text.reserve(rest.size() + tag.size());
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            const auto line = rest.substr(0, nl == std::string_view::npos ? rest.size() : nl + 1);
            rest.remove_prefix(line.size());
            if (!inside) text += tag;
            text += line;
            inside = !line.ends_with('\n');
        }
    }
    writer_.write(fd, std::move(text), {out.broker, out.nspace}, raw);
}

std::vector<msg::OutputAck> JobOutput::written() {
    std::vector<msg::OutputAck> acks;
    for (auto &[flow, bytes] : writer_.written()) {
        auto &[done, acked] = flows_[flow];
        done += bytes;
        if (done - acked < msg::kOutputAckBytes) continue;
        acked = done;
        acks.push_back(msg::OutputAck{flow.second, flow.first, done});
    }
    return acks;
}

std::optional<int> JobOutput::ended(const msg::JobEnded &e, const std::string &launched) {
    if (e.nspace != launched) {  // a job it spawned, over before it
        spdlog::debug("spawned job {} ended with status {}", e.nspace, e.status);
        if (!e.message.empty())
            std::cerr << "zpmix run: spawned job " << e.nspace << ": " << e.message << "\n";
        return std::nullopt;
    }
    writer_.flush();  // the job's output before what we say of its end
    if (!e.message.empty()) std::cerr << "zpmix run: " << e.message << "\n";
    return e.status;
}

}  // namespace zpmix::cli::run
