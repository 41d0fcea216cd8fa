#pragma once
// A segment arena: one file per participant set in the session directory, into which the broker
// writes that set's fence segments in turn (a ring), and which every local participant maps once.
// A collecting fence then costs no file creation, mapping, unmapping or page allocation at either
// end: the broker writes into pages it wrote before, and the clients' mappings already show them.
//
// A region is written again only once every local participant has finished with the segment in
// it: a client reports in `done_through` the lowest fence id over the set whose arena segment it
// still reads from (a later segment replaces an earlier one's unread data, so in steady state a
// client holds one), and the FenceReducer releases below the least of its contributors'.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

namespace zpmix {

class FenceSegmentWriter;

// The broker's end: the file, and which of its regions hold segments still read.
class SegmentArena {
  public:
    // Creates the file (`size` bytes, all allocated, read-only for any other opener) and maps
    // it; nullptr, with the reason in `error`, when it cannot.
    static std::unique_ptr<SegmentArena> create(const std::string &path, std::uint64_t size,
                                                std::string &error);
    ~SegmentArena();  // removes the file (mappings outlive it)
    SegmentArena(const SegmentArena &) = delete;
    SegmentArena &operator=(const SegmentArena &) = delete;

    // Copies fence `fence_id`'s segment into free space and returns its offset; nullopt when no
    // free stretch is large enough.
    std::optional<std::uint64_t> place(std::uint64_t fence_id, const FenceSegmentWriter &segment);
    // The regions of fences below `below` are free again.
    void release(std::uint64_t below);
    bool empty() const { return live_.empty(); }
    const std::string &path() const { return path_; }
    std::uint64_t size() const { return size_; }

  private:
    struct Region {
        std::uint64_t fence_id, offset, length;
    };
    SegmentArena(std::string path, char *map, std::uint64_t size)
        : path_(std::move(path)), map_(map), size_(size) {}

    std::string path_;
    char *map_;  // the whole file, writable
    std::uint64_t size_;
    std::deque<Region> live_;  // in the order written: the ring runs from front to back
};

// A client's read-only mapping of an arena, kept while a segment read from it lives.
class ArenaMapping {
  public:
    // Maps the whole file; throws SegmentError (PMIX_ERR_NOT_FOUND when it cannot be opened).
    static std::shared_ptr<const ArenaMapping> open(const std::string &path);
    ~ArenaMapping();
    ArenaMapping(const ArenaMapping &) = delete;
    ArenaMapping &operator=(const ArenaMapping &) = delete;

    const char *data() const { return static_cast<const char *>(map_); }
    std::size_t size() const { return size_; }

  private:
    ArenaMapping(void *map, std::size_t size) : map_(map), size_(size) {}
    void *map_;
    std::size_t size_;
};

}  // namespace zpmix
