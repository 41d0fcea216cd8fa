#pragma once
// Keeps every log line of the process (spdlog's default logger, and the loggers cloned from it
// afterwards) so a test can check what was reported. Call capture_log() before making the object
// whose log lines matter.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace zpmix::test {

class CaptureSink : public spdlog::sinks::base_sink<std::mutex> {
  public:
    bool contains(const std::string &text) {
        std::lock_guard lock(mutex_);
        for (const auto &l : lines_)
            if (l.find(text) != std::string::npos) return true;
        return false;
    }
    // Whether a line with the text is logged within the timeout.
    bool wait_for(const std::string &text, std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        return logged_.wait_for(lock, timeout, [&] {
            for (const auto &l : lines_)
                if (l.find(text) != std::string::npos) return true;
            return false;
        });
    }

  protected:
    void sink_it_(const spdlog::details::log_msg &m) override {
        lines_.emplace_back(m.payload.data(), m.payload.size());
        logged_.notify_all();
    }
    void flush_() override {}

  private:
    std::vector<std::string> lines_;
    std::condition_variable logged_;
};

inline std::shared_ptr<CaptureSink> capture_log() {
    static auto sink = [] {
        auto s = std::make_shared<CaptureSink>();
        auto logger = std::make_shared<spdlog::logger>(
            "zpmix", spdlog::sinks_init_list{s, std::make_shared<spdlog::sinks::stderr_sink_mt>()});
        spdlog::set_default_logger(logger);
        return s;
    }();
    return sink;
}

}  // namespace zpmix::test
