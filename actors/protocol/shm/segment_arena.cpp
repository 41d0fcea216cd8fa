#include "actors/protocol/shm/segment_arena.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <pmix_common.h>

#include "actors/protocol/shm/fence_segment.hpp"

namespace zpmix {

namespace {
// Regions start on cache lines: a reader's first touch of a segment is one line, not two.
constexpr std::uint64_t kAlign = 64;

std::uint64_t aligned(std::uint64_t n) {
    return (n + kAlign - 1) / kAlign * kAlign;
}
}  // namespace

std::unique_ptr<SegmentArena> SegmentArena::create(const std::string &path, std::uint64_t size,
                                                   std::string &error) {
    // 0400: the creator's descriptor may write, nobody who opens it later can.
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    if (fd < 0 && errno == EEXIST) {  // a leftover of an earlier broker in this directory
        ::unlink(path.c_str());
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    }
    if (fd < 0) {
        error = "cannot create " + path + ": " + std::strerror(errno);
        return nullptr;
    }
    // Every page is allocated now, so that storing into the mapping can never meet a full file
    // system (a SIGBUS): a full one fails here, and the set's segments take files instead. The
    // broker then copies a segment straight into its pages, with no write call and no page
    // cache lookup per page.
    int rc = ::ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : errno;
    if (rc == 0) rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    void *map =
        rc == 0 ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (rc == 0 && map == MAP_FAILED) rc = errno;
    ::close(fd);  // the mapping keeps the file
    if (rc != 0) {
        error = "cannot allocate " + path + ": " + std::strerror(rc);
        ::unlink(path.c_str());
        return nullptr;
    }
    return std::unique_ptr<SegmentArena>(new SegmentArena(path, static_cast<char *>(map), size));
}

SegmentArena::~SegmentArena() {
    ::munmap(map_, size_);
    ::unlink(path_.c_str());
}

std::optional<std::uint64_t> SegmentArena::place(std::uint64_t fence_id,
                                                 const FenceSegmentWriter &segment) {
    const std::uint64_t length = segment.size();
    std::optional<std::uint64_t> at;
    if (live_.empty()) {
        if (length <= size_) at = 0;
    } else {
        const std::uint64_t head = aligned(live_.back().offset + live_.back().length);
        const std::uint64_t tail = live_.front().offset;
        if (head > tail) {  // free: [head, size) and [0, tail)
            if (head <= size_ && length <= size_ - head)
                at = head;
            else if (length <= tail)
                at = 0;
        } else if (length <= tail - head) {  // wrapped: free is [head, tail)
            at = head;
        }
    }
    if (!at) return std::nullopt;
    segment.copy_to(map_ + *at);
    live_.push_back({fence_id, *at, length});
    return at;
}

void SegmentArena::release(std::uint64_t below) {
    while (!live_.empty() && live_.front().fence_id < below) live_.pop_front();
}

std::shared_ptr<const ArenaMapping> ArenaMapping::open(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw SegmentError(PMIX_ERR_NOT_FOUND,
                           "cannot open segment arena " + path + ": " + std::strerror(errno));
    struct stat st;
    const bool sized = ::fstat(fd, &st) == 0 && st.st_size > 0;
    void *map =
        sized ? ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0)
              : MAP_FAILED;
    const int err = errno;
    ::close(fd);  // the mapping keeps the file
    if (!sized) throw SegmentError(PMIX_ERR_UNPACK_FAILURE, "segment arena " + path + " is empty");
    if (map == MAP_FAILED)
        throw SegmentError(PMIX_ERR_NOMEM, "cannot map " + path + ": " + std::strerror(err));
    return std::shared_ptr<const ArenaMapping>(
        new ArenaMapping(map, static_cast<std::size_t>(st.st_size)));
}

ArenaMapping::~ArenaMapping() {
    ::munmap(map_, size_);
}

}  // namespace zpmix
