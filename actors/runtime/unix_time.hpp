#pragma once
// Wall-clock time since the Unix epoch, as events, job rows and logs carry it.
#include <chrono>
#include <cstdint>

namespace zpmix {

inline std::int64_t unix_time_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

inline std::int64_t unix_time_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace zpmix
