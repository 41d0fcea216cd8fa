#include "actors/protocol/shm/fence_segment.hpp"

#include "actors/protocol/shm/segment_arena.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <pmix_common.h>

namespace zpmix {

namespace {

constexpr char kSegmentMagic[8] = {'Z', 'P', 'M', 'X', 'F', 'S', 'E', 'G'};
constexpr std::uint32_t kSegmentVersion = 1;

struct Header {
    char magic[8];
    std::uint32_t version;
    std::uint32_t nspaces;
    std::uint32_t procs;
    std::uint32_t zero;
    std::uint64_t size;
};
struct NameEntry {
    std::uint32_t offset;
    std::uint32_t length;
};
struct ProcEntry {
    std::uint32_t nspace;
    std::uint32_t rank;
    std::uint64_t offset;
    std::uint64_t length;
};
static_assert(sizeof(Header) == 32 && sizeof(NameEntry) == 8 && sizeof(ProcEntry) == 24);

// Appends the msgpack header of an array of `n` elements.
void put_array_header(std::size_t n, std::string &out) {
    if (n < 16) {
        out += static_cast<char>(0x90 | n);
    } else if (n <= 0xffff) {
        out += {static_cast<char>(0xdc), static_cast<char>(n >> 8), static_cast<char>(n)};
    } else {
        out += {static_cast<char>(0xdd), static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                static_cast<char>(n >> 8), static_cast<char>(n)};
    }
}

// Writes every iovec fully at `offset` (pwritev may stop short, and takes at most IOV_MAX at a
// time).
bool write_all(int fd, std::vector<iovec> iov, std::uint64_t offset) {
    std::size_t first = 0;
    while (first < iov.size()) {
        const int n = static_cast<int>(std::min<std::size_t>(iov.size() - first, IOV_MAX));
        ssize_t done = ::pwritev(fd, &iov[first], n, static_cast<off_t>(offset));
        if (done < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        offset += static_cast<std::uint64_t>(done);
        auto left = static_cast<std::size_t>(done);
        while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
        if (left > 0) {
            iov[first].iov_base = static_cast<char *>(iov[first].iov_base) + left;
            iov[first].iov_len -= left;
        }
    }
    return true;
}

template <class T>
T read_at(const char *base, std::size_t offset) {
    T v;
    std::memcpy(&v, base + offset, sizeof v);
    return v;
}

[[noreturn]] void malformed(const std::string &why) {
    throw SegmentError(PMIX_ERR_UNPACK_FAILURE, "malformed fence segment: " + why);
}

}  // namespace

FenceSegmentWriter::FenceSegmentWriter(const std::vector<msg::ProcData> &data) {
    std::map<std::string_view, std::uint32_t> names;
    for (const auto &d : data) names.emplace(d.proc.nspace, 0);
    std::uint32_t next = 0;
    for (auto &[name, index] : names) index = next++;

    std::vector<const msg::ProcData *> order;
    for (const auto &d : data) order.push_back(&d);
    std::sort(order.begin(), order.end(),
              [](const msg::ProcData *a, const msg::ProcData *b) { return a->proc < b->proc; });

    // Each proc's data: an array of [scope, blob], the blobs copied as they are.
    std::size_t framing = 0;
    for (const auto *d : order) framing += 5 + 2 * d->blobs.size();
    framing_.reserve(framing);  // the pieces point into it: it never reallocates
    std::vector<std::uint64_t> lengths(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        const msg::ProcData &d = *order[i];
        std::size_t blobs = 0;
        for (const auto &blob : d.blobs) blobs += blob.empty() ? 0 : 1;
        const std::size_t at = framing_.size();
        put_array_header(blobs, framing_);
        pieces_.emplace_back(framing_.data() + at, framing_.size() - at);
        lengths[i] = framing_.size() - at;
        for (std::size_t b = 0; b < d.blobs.size(); ++b) {
            if (d.blobs[b].empty()) continue;
            const std::uint8_t scope = b < d.scopes.size() && d.scopes[b] < 0x80 ? d.scopes[b] : 0;
            const std::size_t pair = framing_.size();
            framing_ += static_cast<char>(0x92);   // [scope, blob]
            framing_ += static_cast<char>(scope);  // a positive fixint
            pieces_.emplace_back(framing_.data() + pair, 2);
            pieces_.emplace_back(d.blobs[b].data(), d.blobs[b].size());
            lengths[i] += 2 + d.blobs[b].size();
        }
    }

    // The prefix: header, name table, index and names; the data follows.
    const std::uint64_t tables =
        sizeof(Header) + sizeof(NameEntry) * names.size() + sizeof(ProcEntry) * order.size();
    std::uint64_t names_len = 0;
    for (const auto &[name, index] : names) names_len += name.size();
    prefix_.assign(tables + names_len, '\0');
    std::uint64_t at = tables;
    std::size_t slot = sizeof(Header);
    for (const auto &[name, index] : names) {
        const NameEntry e{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(name.size())};
        std::memcpy(&prefix_[slot], &e, sizeof e);
        std::memcpy(&prefix_[at], name.data(), name.size());
        slot += sizeof e;
        at += name.size();
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
        const ProcEntry e{names.at(order[i]->proc.nspace), order[i]->proc.rank, at, lengths[i]};
        std::memcpy(&prefix_[slot], &e, sizeof e);
        slot += sizeof e;
        at += lengths[i];
    }
    Header h{};
    std::memcpy(h.magic, kSegmentMagic, sizeof kSegmentMagic);
    h.version = kSegmentVersion;
    h.nspaces = static_cast<std::uint32_t>(names.size());
    h.procs = static_cast<std::uint32_t>(order.size());
    h.size = at;
    std::memcpy(prefix_.data(), &h, sizeof h);
    size_ = at;
}

std::string FenceSegmentWriter::write(const std::string &path) const {
    // Read-only from birth: nobody rewrites a segment that readers may have mapped.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    if (fd < 0 && errno == EEXIST) {  // a leftover of an earlier broker in this directory
        ::unlink(path.c_str());
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    }
    if (fd < 0) return "cannot create " + path + ": " + std::strerror(errno);
    std::string err = write_at(fd, 0);
    ::close(fd);
    if (!err.empty()) {
        ::unlink(path.c_str());
        return "cannot write " + path + ": " + err;
    }
    return {};
}

std::string FenceSegmentWriter::write_at(int fd, std::uint64_t offset) const {
    std::vector<iovec> iov{{const_cast<char *>(prefix_.data()), prefix_.size()}};
    for (const auto &[data, len] : pieces_) iov.push_back({const_cast<char *>(data), len});
    if (!write_all(fd, std::move(iov), offset)) return std::strerror(errno);
    return {};
}

void FenceSegmentWriter::copy_to(char *out) const {
    out = std::copy(prefix_.begin(), prefix_.end(), out);
    for (const auto &[data, len] : pieces_) out = std::copy(data, data + len, out);
}

msg::Blob FenceSegmentWriter::bytes() const {
    msg::Blob out(size_);
    copy_to(out.data());
    return out;
}

std::shared_ptr<const FenceSegment> FenceSegment::open(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw SegmentError(PMIX_ERR_NOT_FOUND,
                           "cannot open fence segment " + path + ": " + std::strerror(errno));
    struct FdCloser {
        int fd;
        ~FdCloser() { ::close(fd); }  // the mapping keeps the file
    } closer{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Header)))
        malformed(path + " is shorter than its header");
    const auto size = static_cast<std::size_t>(st.st_size);
    std::shared_ptr<FenceSegment> seg(new FenceSegment);
    // The index is read, not touched through the mapping: a page the process never touches is
    // never mapped, so unmapping a segment whose data was not read costs next to nothing.
    std::string &prefix = seg->prefix_;
    for (std::size_t need = std::min<std::size_t>(size, 4096); need > prefix.size();
         need = prefix_extent(prefix, size)) {
        const std::size_t have = prefix.size();
        prefix.resize(need);
        const ssize_t n = ::pread(fd, prefix.data() + have, need - have, static_cast<off_t>(have));
        if (n != static_cast<ssize_t>(need - have)) malformed(path + " is shorter than its index");
    }
    void *map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        throw SegmentError(PMIX_ERR_NOMEM, "cannot map " + path + ": " + std::strerror(errno));
    seg->map_ = map;
    seg->map_size_ = size;
    seg->index(static_cast<const char *>(map), size);
    return seg;
}

std::shared_ptr<const FenceSegment> FenceSegment::parse(std::string_view bytes) {
    std::shared_ptr<FenceSegment> seg(new FenceSegment);
    seg->prefix_.assign(bytes);
    seg->index(seg->prefix_.data(), seg->prefix_.size());
    return seg;
}

std::shared_ptr<const FenceSegment> FenceSegment::in_arena(
    std::shared_ptr<const ArenaMapping> arena, std::uint64_t offset, std::uint64_t length) {
    if (offset > arena->size() || length > arena->size() - offset)
        malformed("its region runs past the end of its arena");
    const char *data = arena->data() + offset;
    const auto size = static_cast<std::size_t>(length);
    std::shared_ptr<FenceSegment> seg(new FenceSegment);
    // The index is copied out of the shared mapping before it is checked, so what is checked is
    // what is used.
    std::string &prefix = seg->prefix_;
    for (std::size_t need = std::min<std::size_t>(size, sizeof(Header)); need > prefix.size();
         need = prefix_extent(prefix, size))
        prefix.assign(data, need);
    seg->index(data, size);
    seg->arena_ = std::move(arena);
    return seg;
}

FenceSegment::~FenceSegment() {
    if (map_) ::munmap(map_, map_size_);
}

std::size_t FenceSegment::prefix_extent(const std::string &prefix, std::size_t size) {
    if (size < sizeof(Header) || prefix.size() < sizeof(Header))
        malformed("shorter than its header");
    const auto h = read_at<Header>(prefix.data(), 0);
    if (std::memcmp(h.magic, kSegmentMagic, sizeof kSegmentMagic) != 0)
        malformed("not a fence segment");
    if (h.version != kSegmentVersion)
        malformed("version " + std::to_string(h.version) + " is unknown");
    if (h.size != size)
        malformed("holds " + std::to_string(size) + " bytes, its header says " +
                  std::to_string(h.size));
    const std::uint64_t tables = sizeof(Header) + std::uint64_t{sizeof(NameEntry)} * h.nspaces +
                                 std::uint64_t{sizeof(ProcEntry)} * h.procs;
    if (tables > size) malformed("its index runs past its end");
    if (tables > prefix.size()) return static_cast<std::size_t>(tables);
    std::uint64_t end = tables;
    for (std::uint32_t i = 0; i < h.nspaces; ++i) {
        const auto e = read_at<NameEntry>(prefix.data(), sizeof(Header) + sizeof(NameEntry) * i);
        if (e.offset > size || e.length > size - e.offset)
            malformed("a namespace name runs past its end");
        end = std::max<std::uint64_t>(end, std::uint64_t{e.offset} + e.length);
    }
    return static_cast<std::size_t>(end);
}

void FenceSegment::index(const char *data, std::size_t size) {
    if (prefix_extent(prefix_, size) > prefix_.size()) malformed("its index is incomplete");
    const char *base = prefix_.data();
    const auto h = read_at<Header>(base, 0);
    std::vector<std::string_view> names(h.nspaces);
    for (std::uint32_t i = 0; i < h.nspaces; ++i) {
        const auto e = read_at<NameEntry>(base, sizeof(Header) + sizeof(NameEntry) * i);
        names[i] = std::string_view(base + e.offset, e.length);
    }
    entries_.reserve(h.procs);
    const std::size_t first = sizeof(Header) + sizeof(NameEntry) * h.nspaces;
    for (std::uint32_t i = 0; i < h.procs; ++i) {
        const auto e = read_at<ProcEntry>(base, first + sizeof(ProcEntry) * i);
        if (e.nspace >= h.nspaces) malformed("a process names no namespace of the segment");
        if (e.offset > size || e.length > size - e.offset || e.length == 0)
            malformed("the data of a process runs past its end");
        entries_.push_back({names[e.nspace], e.rank,
                            std::string_view(data + e.offset, static_cast<std::size_t>(e.length))});
    }
}

}  // namespace zpmix
