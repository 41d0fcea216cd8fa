#pragma once
// The bytes read from a ZMTP peer and not yet consumed, for the client's connection and the
// broker's listener. It grows geometrically: a message of n bytes read chunk by chunk costs O(n)
// bytes copied (growing by one chunk at a time copied the whole message each time, and a 16 MiB
// answer took seconds).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

namespace zpmix::zmtp {

class ReadBuffer {
  public:
    // Makes room for at least `chunk` bytes at tail(): moves the unconsumed bytes to the front
    // when no more than were consumed before them (so each byte moves at most once per byte
    // consumed), else grows to twice the capacity or more.
    void reserve(std::size_t chunk) {
        if (cap_ - end_ >= chunk) return;
        const std::size_t used = end_ - pos_;
        if (pos_ >= used && used + chunk <= cap_) {
            std::memmove(buf_.get(), buf_.get() + pos_, used);
        } else {
            const std::size_t cap = std::max(used + chunk, 2 * cap_);
            std::unique_ptr<char[]> fresh(new char[cap]);  // not zero-filled
            if (used > 0) std::memcpy(fresh.get(), buf_.get() + pos_, used);
            buf_ = std::move(fresh);
            cap_ = cap;
            ++grows_;
        }
        copied_ += used;
        pos_ = 0;
        end_ = used;
    }
    char *tail() { return buf_.get() + end_; }
    std::size_t room() const { return cap_ - end_; }
    void wrote(std::size_t n) { end_ += n; }

    // The unconsumed bytes: valid until the next reserve().
    const char *data() const { return buf_.get() + pos_; }
    std::size_t size() const { return end_ - pos_; }
    void consume(std::size_t n) {
        pos_ += n;
        if (pos_ == end_) pos_ = end_ = 0;
    }

    std::size_t capacity() const { return cap_; }
    // For tests: bytes copied by moves and growth, and the number of growths, since creation.
    std::size_t copied() const { return copied_; }
    std::size_t grows() const { return grows_; }

  private:
    std::unique_ptr<char[]> buf_;
    std::size_t cap_ = 0, pos_ = 0, end_ = 0;
    std::size_t copied_ = 0, grows_ = 0;
};

}  // namespace zpmix::zmtp
