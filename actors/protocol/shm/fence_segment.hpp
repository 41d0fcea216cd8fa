#pragma once
// A fence segment: the data a collecting fence gathered, written ONCE by the broker into its
// set's arena (segment_arena.hpp) or a file of its own in the job's session directory, and mapped
// read-only by every local participant, which decodes one participant's data only when it first
// reads it.
//
// Layout (native byte order: only processes of this node read it; offsets from the start):
//   header    "ZPMXFSEG", u32 version (1), u32 namespaces, u32 procs, u32 zero, u64 size
//   names     namespaces x {u32 offset, u32 length}: each namespace's name, without terminator
//   index     procs x {u32 namespace, u32 rank, u64 offset, u64 length}, by (namespace, rank)
//   then the names' bytes, then each proc's data: ONE msgpack array of [scope, blob], its blobs
//   as committed (each a msgpack map key -> [type, payload]; scope the PMIx scope it was put
//   with, 0 when unknown), copied verbatim: the writer decodes no value
// A reader finds any proc's data from the index alone. A newer writer bumps the version; a
// reader refuses a version it does not know rather than misread it.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "actors/protocol/modex.hpp"

namespace zpmix {

// A segment that is missing, truncated or malformed. `status` is the PMIx status for the fence:
// PMIX_ERR_NOT_FOUND when the file cannot be opened, PMIX_ERR_UNPACK_FAILURE when it is not a
// well-formed segment.
struct SegmentError : std::runtime_error {
    std::int32_t status;
    SegmentError(std::int32_t s, const std::string &what) : std::runtime_error(what), status(s) {}
};

// Lays out collected data as a segment, to write into a file or to send as bytes. The data must
// outlive the writer (its blobs are not copied until written).
class FenceSegmentWriter {
  public:
    explicit FenceSegmentWriter(const std::vector<msg::ProcData> &data);
    FenceSegmentWriter(const FenceSegmentWriter &) = delete;
    FenceSegmentWriter &operator=(const FenceSegmentWriter &) = delete;

    std::uint64_t size() const { return size_; }
    // Creates the file at `path`, read-only, with the segment (an old file of that name is
    // replaced, never rewritten). Returns an error text, empty on success.
    std::string write(const std::string &path) const;
    // Copies the segment to `out`, which has room for size() bytes.
    void copy_to(char *out) const;
    msg::Blob bytes() const;

  private:
    std::string write_at(int fd, std::uint64_t offset) const;  // an error text, or empty

    std::string prefix_;                                        // header, tables and names
    std::string framing_;                                       // the procs' msgpack framing
    std::vector<std::pair<const char *, std::size_t>> pieces_;  // in order, after the prefix
    std::uint64_t size_ = 0;
};

// A mapped segment, read-only. Its entries' views stay valid while it lives.
class ArenaMapping;

class FenceSegment {
  public:
    struct Entry {
        std::string_view nspace;
        std::uint32_t rank = 0;
        std::string_view data;  // one msgpack map, decoded by whoever reads it
    };

    // Maps the file (read-only) and reads and checks its header and index; throws SegmentError.
    static std::shared_ptr<const FenceSegment> open(const std::string &path);
    // The same checks over bytes in memory (copied into the segment).
    static std::shared_ptr<const FenceSegment> parse(std::string_view bytes);
    // The segment in `length` bytes at `offset` of a mapped arena, which it keeps mapped; the
    // same checks, and the region must lie within the arena.
    static std::shared_ptr<const FenceSegment> in_arena(std::shared_ptr<const ArenaMapping> arena,
                                                        std::uint64_t offset, std::uint64_t length);

    ~FenceSegment();
    FenceSegment(const FenceSegment &) = delete;
    FenceSegment &operator=(const FenceSegment &) = delete;

    const std::vector<Entry> &entries() const { return entries_; }

  private:
    FenceSegment() = default;
    // How many bytes from the start hold the header, tables and names, as far as `prefix` (the
    // first bytes of a segment of `size` bytes) tells; throws SegmentError when malformed.
    static std::size_t prefix_extent(const std::string &prefix, std::size_t size);
    // Fills entries_ from prefix_, with views of the procs' data in `data` (size bytes).
    void index(const char *data, std::size_t size);

    void *map_ = nullptr;  // the mapping, when opened from a file
    std::size_t map_size_ = 0;
    std::shared_ptr<const ArenaMapping> arena_;  // when read from an arena
    std::string prefix_;  // the index's bytes (all the bytes, when parsed from memory)
    std::vector<Entry> entries_;
};

}  // namespace zpmix
