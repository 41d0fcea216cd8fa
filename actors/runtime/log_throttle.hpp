#pragma once
// A bound on how often one kind of refusal is logged where no peer can be named (tcp handshakes;
// PeerLogLimit bounds what a known peer causes): a flood of connections must not fill the log. At
// most `burst` lines every `window`; the first line after a quiet spell says how many were left
// out.
#include <chrono>
#include <cstdint>
#include <string>

namespace zpmix {

class LogThrottle {
  public:
    using Clock = std::chrono::steady_clock;
    explicit LogThrottle(unsigned burst = 10, Clock::duration window = std::chrono::seconds(10))
        : burst_(burst), window_(window) {}

    // Whether to log a line now; if so, `left_out` is how many were not logged before it.
    bool allow(std::uint64_t &left_out) {
        const auto now = Clock::now();
        if (now - window_start_ >= window_) {
            window_start_ = now;
            logged_ = 0;
        }
        if (logged_ >= burst_) {
            ++left_out_;
            return false;
        }
        ++logged_;
        left_out = left_out_;
        left_out_ = 0;
        return true;
    }
    // " (N more suppressed)" when some were, for the end of the line (as PeerLogLimit's).
    static std::string suffix(std::uint64_t left_out) {
        return left_out == 0 ? std::string()
                             : " (" + std::to_string(left_out) + " more suppressed)";
    }

  private:
    unsigned burst_;
    Clock::duration window_;
    Clock::time_point window_start_{};
    unsigned logged_ = 0;
    std::uint64_t left_out_ = 0;
};

}  // namespace zpmix
