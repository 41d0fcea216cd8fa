#include "actors/protocol/shm/fence_board.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>

#include <pmix_common.h>

namespace zpmix {

namespace {
constexpr char kBoardMagic[8] = {'Z', 'P', 'M', 'X', 'B', 'O', 'R', 'D'};
constexpr std::uint32_t kBoardVersion = 2;
constexpr std::size_t kHeaderBytes = 128;
constexpr std::size_t kCellsBytes = FenceBoard::kRing * sizeof(std::uint64_t);
constexpr std::size_t kHeldBytes = 64;
constexpr std::size_t kHeldRingBytes = FenceBoard::kRing * kHeldBytes;
constexpr std::size_t kIdsBytes = FenceBoard::kRing * sizeof(std::uint64_t);  // per rank
constexpr std::size_t kSlotHeadBytes = 64;
constexpr std::size_t kSlotBytes = kSlotHeadBytes + 2 * std::size_t{FenceBoard::kCardMax};
constexpr std::uint32_t kTooBig = UINT32_MAX;  // a card's length when it is not on the board

std::size_t board_size(std::uint32_t ranks) {
    return kHeaderBytes + kCellsBytes + kHeldRingBytes +
           std::size_t{ranks} * (kIdsBytes + kSlotBytes);
}

// Fence numbers wrap: a is at or after b.
bool at_or_after(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::int32_t>(a - b) >= 0;
}

void futex_wake_all(std::atomic<std::uint32_t> *word) {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(word), FUTEX_WAKE, INT_MAX, nullptr,
              nullptr, 0);
}

// Sleeps while *word == seen, for at most `d`; false when the time ran out.
bool futex_wait(std::atomic<std::uint32_t> *word, std::uint32_t seen, std::chrono::nanoseconds d) {
    timespec ts{static_cast<time_t>(d.count() / 1000000000),
                static_cast<long>(d.count() % 1000000000)};
    const long rc = ::syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(word), FUTEX_WAIT, seen,
                              &ts, nullptr, 0);
    return rc == 0 || errno != ETIMEDOUT;
}
}  // namespace

struct FenceBoard::Header {
    char magic[8];
    std::uint32_t version;
    std::uint32_t ranks;
    std::uint32_t ring;
    std::uint32_t card_max;
    char pad[40];
    std::atomic<std::uint32_t> wake;       // the futex word: bumped on every completion and failure
    std::atomic<std::uint32_t> completed;  // fences complete, in order
    std::atomic<std::uint32_t> fail_from;  // with fail_status set: fences from this one fail
    std::atomic<std::int32_t> fail_status;
    std::atomic<std::uint32_t> held_fail_from;  // the same for held collectives
    std::atomic<std::int32_t> held_fail_status;
};

// Held collective k, in cell k % kRing: its arrivals ({number, count}, as a fence's cell), who
// claimed and who published it (k + 1 each), its outcome, and its completer ((k + 1) << 32 |
// (rank + 1)).
struct alignas(64) FenceBoard::Held {
    std::atomic<std::uint64_t> arrivals;
    std::atomic<std::uint32_t> claimed;
    std::atomic<std::uint32_t> done;
    std::atomic<std::int32_t> status;
    std::atomic<std::uint32_t> unused;
    std::atomic<std::uint64_t> completer;
    std::atomic<std::uint64_t> value;
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free &&
              std::atomic<std::uint64_t>::is_always_lock_free);

struct FenceBoard::Slot {
    std::atomic<std::uint32_t> arrived;       // whole-namespace fences this rank arrived at
    std::atomic<std::uint32_t> ended;         // the broker saw it end
    std::atomic<std::uint32_t> held_arrived;  // held collectives it arrived at
    std::atomic<std::uint32_t> unused;
    std::atomic<std::uint64_t> gen;  // cards posted; the latest is in buffer gen % 2
    std::atomic<std::uint32_t> length[2];
    std::atomic<std::uint32_t> commits[2];
    char *data(std::uint64_t buffer) {
        return reinterpret_cast<char *>(this) + kSlotHeadBytes + (buffer & 1) * kCardMax;
    }
};

std::string FenceBoard::create(const std::string &path, std::uint32_t ranks) {
    static_assert(sizeof(Header) <= kHeaderBytes && sizeof(Slot) <= kSlotHeadBytes &&
                  sizeof(Held) == kHeldBytes);  // held_[i] is cell i
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return path + ": " + std::strerror(errno);
    const std::size_t size = board_size(ranks);
    // Every page allocated now: a rank's store into a full tmpfs would be a SIGBUS.
    void *map = MAP_FAILED;
    int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (err == 0) {
        map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        err = errno;
    }
    ::close(fd);
    if (map == MAP_FAILED) {
        ::unlink(path.c_str());
        return path + ": " + std::strerror(err);
    }
    auto *h = new (map) Header{};
    std::memcpy(h->magic, kBoardMagic, sizeof kBoardMagic);
    h->version = kBoardVersion;
    h->ranks = ranks;
    h->ring = kRing;
    h->card_max = kCardMax;
    auto *cells =
        reinterpret_cast<std::atomic<std::uint64_t> *>(static_cast<char *>(map) + kHeaderBytes);
    for (std::uint32_t i = 0; i < kRing; ++i)
        new (&cells[i]) std::atomic<std::uint64_t>(std::uint64_t{i} << 32);  // fence i, none in
    char *held = static_cast<char *>(map) + kHeaderBytes + kCellsBytes;
    for (std::uint32_t i = 0; i < kRing; ++i) {
        auto *c = new (held + i * kHeldBytes) Held{};
        c->arrivals.store(std::uint64_t{i} << 32);  // collective i, none in
    }
    auto *ids = reinterpret_cast<std::atomic<std::uint64_t> *>(held + kHeldRingBytes);
    for (std::size_t i = 0; i < std::size_t{ranks} * kRing; ++i)
        new (&ids[i]) std::atomic<std::uint64_t>(0);
    char *slots = held + kHeldRingBytes + std::size_t{ranks} * kIdsBytes;
    for (std::uint32_t r = 0; r < ranks; ++r) new (slots + r * kSlotBytes) Slot{};
    ::munmap(map, size);
    return {};
}

std::unique_ptr<FenceBoard> FenceBoard::open(const std::string &path, std::string &error,
                                             bool *missing) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    const int err = errno;
    if (missing) *missing = fd < 0 && err == ENOENT;
    if (fd < 0) {
        error = path + ": " + std::strerror(err);
        return nullptr;
    }
    struct stat st {};
    Header h{};
    if (::fstat(fd, &st) != 0 || ::pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h) ||
        std::memcmp(h.magic, kBoardMagic, sizeof kBoardMagic) != 0 || h.version != kBoardVersion ||
        h.ring != kRing || h.card_max != kCardMax ||
        static_cast<std::size_t>(st.st_size) != board_size(h.ranks)) {
        ::close(fd);
        error = path + ": not a fence board of this release";
        return nullptr;
    }
    void *map = ::mmap(nullptr, board_size(h.ranks), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int map_err = errno;
    ::close(fd);
    if (map == MAP_FAILED) {
        error = path + ": " + std::strerror(map_err);
        return nullptr;
    }
    std::unique_ptr<FenceBoard> b(new FenceBoard);
    b->map_ = map;
    b->size_ = board_size(h.ranks);
    b->header_ = static_cast<Header *>(map);
    b->cells_ =
        reinterpret_cast<std::atomic<std::uint64_t> *>(static_cast<char *>(map) + kHeaderBytes);
    char *held = static_cast<char *>(map) + kHeaderBytes + kCellsBytes;
    b->held_ = reinterpret_cast<Held *>(held);
    b->ids_ = reinterpret_cast<std::atomic<std::uint64_t> *>(held + kHeldRingBytes);
    b->slots_ = held + kHeldRingBytes + std::size_t{h.ranks} * kIdsBytes;
    b->ranks_ = h.ranks;
    return b;
}

FenceBoard::~FenceBoard() {
    if (map_) ::munmap(map_, size_);
}

FenceBoard::Slot &FenceBoard::slot(std::uint32_t rank) const {
    return *reinterpret_cast<Slot *>(slots_ + std::size_t{rank} * kSlotBytes);
}

// ------------------------------------------------------------------ failure (the broker)

void FenceBoard::rank_ended(std::uint32_t rank, std::int32_t status) {
    if (rank >= ranks_) return;
    // It arrived at the fences below `arrived`: those may still complete without it (and the held
    // collectives below `held_arrived`, unless it was to complete one: its waiters see `ended`).
    Slot &s = slot(rank);
    s.ended.store(1, std::memory_order_release);
    Header &h = *header_;
    auto fail = [&](std::atomic<std::uint32_t> &from_word, std::atomic<std::int32_t> &status_word,
                    std::uint32_t from) {
        if (status_word.load(std::memory_order_relaxed) == 0 ||
            at_or_after(from_word.load(std::memory_order_relaxed), from))
            from_word.store(from, std::memory_order_relaxed);
        if (status_word.load(std::memory_order_relaxed) == 0)
            status_word.store(status, std::memory_order_release);
    };
    fail(h.fail_from, h.fail_status, s.arrived.load(std::memory_order_acquire));
    fail(h.held_fail_from, h.held_fail_status, s.held_arrived.load(std::memory_order_acquire));
    wake();
}

void FenceBoard::fail_all(std::int32_t status) {
    Header &h = *header_;
    h.fail_from.store(h.completed.load(std::memory_order_acquire), std::memory_order_relaxed);
    h.fail_status.store(status, std::memory_order_release);
    wake();
}

void FenceBoard::wake() {
    header_->wake.fetch_add(1, std::memory_order_release);
    futex_wake_all(&header_->wake);
}

// ------------------------------------------------------------------ the fence (the ranks)

bool FenceBoard::count_in(std::atomic<std::uint64_t> &cell, std::uint32_t k, bool &last) const {
    std::uint64_t v = cell.load(std::memory_order_acquire);
    for (;;) {
        const auto seq = static_cast<std::uint32_t>(v >> 32);
        const auto count = static_cast<std::uint32_t>(v);
        if (seq != k) return false;
        last = count + 1 == ranks_;
        const std::uint64_t next = last ? std::uint64_t{k + kRing} << 32 : v + 1;
        if (cell.compare_exchange_weak(v, next, std::memory_order_acq_rel)) return true;
    }
}

std::uint32_t FenceBoard::completed() const {
    return header_->completed.load(std::memory_order_acquire);
}

std::int32_t FenceBoard::arrive(std::uint32_t rank, std::uint32_t k) {
    bool last = false;
    if (!count_in(cells_[k % kRing], k, last)) return PMIX_ERR_OUT_OF_RESOURCE;
    slot(rank).arrived.store(k + 1, std::memory_order_release);
    if (last) {
        // Completions may be stored out of order; fence k+1 complete means fence k is too.
        std::uint32_t done = header_->completed.load(std::memory_order_relaxed);
        while (!at_or_after(done, k + 1) &&
               !header_->completed.compare_exchange_weak(done, k + 1, std::memory_order_acq_rel))
            ;
        wake();
    }
    return PMIX_SUCCESS;
}

std::int32_t FenceBoard::wait(std::uint32_t k, Clock::time_point deadline,
                              const std::function<bool()> &alive, const std::atomic<bool> *stop) {
    Header &h = *header_;
    for (;;) {
        const std::uint32_t seen = h.wake.load(std::memory_order_acquire);
        if (at_or_after(h.completed.load(std::memory_order_acquire), k + 1)) return PMIX_SUCCESS;
        if (const std::int32_t status = h.fail_status.load(std::memory_order_acquire);
            status != 0 && at_or_after(k, h.fail_from.load(std::memory_order_relaxed)))
            return status;
        if (stop && stop->load(std::memory_order_acquire)) return PMIX_ERR_LOST_CONNECTION;
        const auto now = Clock::now();
        if (now >= deadline) return PMIX_ERR_TIMEOUT;
        const auto slice = std::min<Clock::duration>(deadline - now, kSlice);
        if (!futex_wait(&h.wake, seen, slice) && !alive()) return PMIX_ERR_LOST_CONNECTION;
    }
}

// ------------------------------------------------------------------ held collectives

std::int32_t FenceBoard::arrive_held(std::uint32_t rank, std::uint32_t k, std::uint32_t id,
                                     bool by_broker, bool &completer) {
    Held &c = held_[k % kRing];
    const std::uint32_t said = (id & 0x7fffffffu) | (by_broker ? 0x80000000u : 0);
    ids_[std::size_t{rank} * kRing + k % kRing].store(std::uint64_t{k + 1} << 32 | said,
                                                      std::memory_order_release);
    if (!count_in(c.arrivals, k, completer)) return PMIX_ERR_OUT_OF_RESOURCE;
    slot(rank).held_arrived.store(k + 1, std::memory_order_release);
    if (completer)
        c.completer.store(std::uint64_t{k + 1} << 32 | (rank + 1), std::memory_order_release);
    return PMIX_SUCCESS;
}

bool FenceBoard::claim(std::uint32_t k) {
    std::atomic<std::uint32_t> &claimed = held_[k % kRing].claimed;
    std::uint32_t v = claimed.load(std::memory_order_acquire);
    while (v != k + 1)
        if (claimed.compare_exchange_weak(v, k + 1, std::memory_order_acq_rel)) return true;
    return false;
}

FenceBoard::Ids FenceBoard::ids(std::uint32_t k, std::uint32_t id) const {
    const std::uint64_t want = std::uint64_t{k + 1} << 32 | (id & 0x7fffffffu);
    bool by_broker = false;
    for (std::uint32_t r = 0; r < ranks_; ++r) {
        const std::uint64_t said =
            ids_[std::size_t{r} * kRing + k % kRing].load(std::memory_order_acquire);
        if ((said & ~std::uint64_t{0x80000000u}) != want) return Ids::different;
        by_broker = by_broker || (said & 0x80000000u) != 0;
    }
    return by_broker ? Ids::same_by_broker : Ids::same;
}

void FenceBoard::publish(std::uint32_t k, std::int32_t status, std::uint64_t value) {
    Held &c = held_[k % kRing];
    c.status.store(status, std::memory_order_relaxed);
    c.value.store(value, std::memory_order_relaxed);
    c.done.store(k + 1, std::memory_order_release);
    wake();
}

std::int32_t FenceBoard::wait_held(std::uint32_t k, Clock::time_point deadline,
                                   const std::function<bool()> &alive,
                                   const std::atomic<bool> *stop, std::uint64_t &value) {
    Header &h = *header_;
    Held &c = held_[k % kRing];
    for (;;) {
        const std::uint32_t seen = h.wake.load(std::memory_order_acquire);
        if (c.done.load(std::memory_order_acquire) == k + 1) {
            value = c.value.load(std::memory_order_relaxed);
            return c.status.load(std::memory_order_relaxed);
        }
        if (const std::int32_t status = h.held_fail_status.load(std::memory_order_acquire);
            status != 0 && at_or_after(k, h.held_fail_from.load(std::memory_order_relaxed)))
            return status;
        if (const std::uint64_t who = c.completer.load(std::memory_order_acquire);
            who >> 32 == k + 1 && (who & 0xffffffffu) != 0 &&
            slot(static_cast<std::uint32_t>(who & 0xffffffffu) - 1)
                    .ended.load(std::memory_order_acquire) != 0)
            return PMIX_ERR_PROC_TERM_WO_SYNC;  // it ended before publishing
        if (stop && stop->load(std::memory_order_acquire)) return PMIX_ERR_LOST_CONNECTION;
        const auto now = Clock::now();
        if (now >= deadline) {
            if (claim(k)) {
                publish(k, PMIX_ERR_TIMEOUT, 0);
                return PMIX_ERR_TIMEOUT;
            }
            deadline = now + kSlice;  // its claimer publishes it now
        }
        const auto slice = std::min<Clock::duration>(deadline - Clock::now(), kSlice);
        if (!futex_wait(&h.wake, seen, slice) && !alive()) return PMIX_ERR_LOST_CONNECTION;
    }
}

// ------------------------------------------------------------------ cards

void FenceBoard::post_card(std::uint32_t rank, std::uint32_t commits,
                           std::initializer_list<std::string_view> pieces) {
    Slot &s = slot(rank);
    // A reader of the card before the last may still copy the buffer written here: it checks gen
    // afterwards. The acquire keeps the writes below after this read of gen (an RMW rather than a
    // fence, which TSan does not model).
    const std::uint64_t gen = s.gen.fetch_add(0, std::memory_order_acquire) + 1;
    std::size_t total = 0;
    for (auto p : pieces) total += p.size();
    if (total > kCardMax) {
        s.length[gen & 1].store(kTooBig, std::memory_order_relaxed);
    } else {
        char *out = s.data(gen);
        for (auto p : pieces) {
            if (p.empty()) continue;  // its data() may be null, which memcpy may not take
            std::memcpy(out, p.data(), p.size());
            out += p.size();
        }
        s.length[gen & 1].store(static_cast<std::uint32_t>(total), std::memory_order_relaxed);
    }
    s.commits[gen & 1].store(commits, std::memory_order_relaxed);
    s.gen.store(gen, std::memory_order_release);
}

FenceBoard::Card FenceBoard::read_card(std::uint32_t rank, std::string &out) const {
    Slot &s = slot(rank);
    const std::size_t mark = out.size();
    for (;;) {
        const std::uint64_t gen = s.gen.load(std::memory_order_acquire);
        if (gen == 0) return {};
        Card card;
        card.commits = s.commits[gen & 1].load(std::memory_order_relaxed);
        const std::uint32_t length = s.length[gen & 1].load(std::memory_order_relaxed);
        card.too_big = length == kTooBig;
        if (!card.too_big) out.append(s.data(gen), std::min(length, kCardMax));
        // Unchanged generation: the owner did not start rewriting this buffer while we copied. The
        // release keeps the copy before this read of gen.
        if (s.gen.fetch_add(0, std::memory_order_release) == gen) return card;
        out.resize(mark);
    }
}

FenceBoard::Card FenceBoard::peek(std::uint32_t rank) const {
    Slot &s = slot(rank);
    for (;;) {
        const std::uint64_t gen = s.gen.load(std::memory_order_acquire);
        if (gen == 0) return {};
        const Card card{s.commits[gen & 1].load(std::memory_order_relaxed),
                        s.length[gen & 1].load(std::memory_order_relaxed) == kTooBig};
        if (s.gen.load(std::memory_order_acquire) == gen) return card;
    }
}

}  // namespace zpmix
