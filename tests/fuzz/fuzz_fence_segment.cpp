// Fence segments as a client meets them (client/session.cpp): bytes in a FenceDone
// (FenceSegment::parse), a file (FenceSegment::open) and a region of a segment arena
// (ArenaMapping::open, FenceSegment::in_arena). An input is [u32 offset][u32 length] (little
// endian: the region of the arena) and then the bytes, which are the segment, the file and the
// arena alike. Any input must give a segment whose entries lie within its bytes, or SegmentError.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/protocol/shm/segment_arena.hpp"

namespace {

using zpmix::FenceSegment;
using zpmix::SegmentError;

// Touches every byte an entry names (ASan checks the reads of a copy, a mapping faults past its
// file) and, when given, checks that the data lies within [lo, hi).
void walk(const FenceSegment &seg, const char *lo = nullptr, const char *hi = nullptr) {
    std::size_t sum = 0;
    for (const auto &e : seg.entries()) {
        for (char c : e.nspace) sum += static_cast<unsigned char>(c);
        if (e.data.empty()) __builtin_trap();
        if (lo && (e.data.data() < lo || e.data.data() + e.data.size() > hi)) __builtin_trap();
        for (char c : e.data) sum += static_cast<unsigned char>(c);
    }
    volatile std::size_t keep = sum;
    (void)keep;
}

// The bytes as a file: one memfd, rewritten for every input, named by its /proc path.
const std::string &file_with(std::string_view bytes) {
    static const int fd = [] {
        const int f = ::memfd_create("fuzz_fence_segment", MFD_CLOEXEC);
        if (f < 0) std::abort();
        return f;
    }();
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
        std::abort();
    return path;
}

std::uint32_t le32(const std::uint8_t *p) {
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
           std::uint32_t{p[3]} << 24;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 8) return 0;
    const std::uint64_t offset = le32(data), length = le32(data + 4);
    const std::string_view bytes(reinterpret_cast<const char *>(data) + 8, size - 8);
    try {
        walk(*FenceSegment::parse(bytes));
    } catch (const SegmentError &) {
    }
    const std::string &path = file_with(bytes);
    try {
        walk(*FenceSegment::open(path));
    } catch (const SegmentError &) {
    }
    try {
        auto arena = zpmix::ArenaMapping::open(path);
        const char *lo = arena->data();
        const char *hi = lo + arena->size();
        auto seg = FenceSegment::in_arena(arena, offset, length);
        // in_arena() accepted the region: it must lie within the arena.
        if (offset + length > static_cast<std::uint64_t>(hi - lo)) __builtin_trap();
        walk(*seg, lo + offset, lo + offset + length);
    } catch (const SegmentError &) {
    }
    return 0;
}
