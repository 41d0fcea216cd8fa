#pragma once
// FenceBoard: the node-local fence of a job whose ranks all run on one node, in shared memory. A
// whole-namespace PMIx_Fence costs each rank a few atomic operations and one futex wait instead
// of two messages through the broker (tests/bench/RESULTS.md). The launcher creates it before the
// job's first rank and names it in the job information; every rank maps it at init. The whole
// story: docs/fences.md, "Fence boards".
//
// Invariants and limits:
// - Fence k counts its arrivals in ring cell k % kRing, one 64-bit word {fence number, count}; the
//   last arriver recycles the cell in the same compare-and-swap and wakes every waiter with one
//   FUTEX_WAKE. A rank more than kRing fences ahead gets PMIX_ERR_OUT_OF_RESOURCE.
// - Waiters sleep in kSlice slices, so that they notice a lost broker.
// - The broker marks the board failed from the first fence an ended rank had not arrived at: those
//   fail with PMIX_ERR_PROC_TERM_WO_SYNC.
// - Held collectives (a group construct or destruct) have a sequence and a ring of their own; the
//   completer checks that every rank named the same one and publishes kByBroker, or a status and
//   a value; a waiter past its deadline publishes PMIX_ERR_TIMEOUT instead.
// - Cards: each rank's latest commit (local and global scopes), double-buffered under a
//   generation count, with its count of commits sent; one above kCardMax stays with the broker.
// - Trust: the job's processes can write the board; LaunchedRanks guards messages, not memory.
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace zpmix {

class FenceBoard {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::uint32_t kRing = 64;            // whole-namespace fences in flight
    static constexpr std::uint32_t kCardMax = 16 * 1024;  // larger cards go through the broker
    static constexpr auto kSlice = std::chrono::milliseconds(100);  // between broker checks

    // Creates the board of a job of `ranks` ranks at `path` (a new file). An error text, or empty.
    static std::string create(const std::string &path, std::uint32_t ranks);
    // Maps the board at `path`; nullptr and an error text when it is missing or malformed, and
    // then `missing` (when given) says whether there was no file at all.
    static std::unique_ptr<FenceBoard> open(const std::string &path, std::string &error,
                                            bool *missing = nullptr);
    ~FenceBoard();
    FenceBoard(const FenceBoard &) = delete;
    FenceBoard &operator=(const FenceBoard &) = delete;

    std::uint32_t ranks() const { return ranks_; }
    // How many of its whole-namespace fences completed (they complete in order).
    std::uint32_t completed() const;

    // The broker: `rank` ended; every fence it had not arrived at fails with `status`.
    void rank_ended(std::uint32_t rank, std::int32_t status);
    // The broker: every fence not complete yet fails with `status`.
    void fail_all(std::int32_t status);

    // `rank` arrives at its whole-namespace fence `k`. PMIX_SUCCESS, or PMIX_ERR_OUT_OF_RESOURCE
    // when fence k - kRing is not complete yet (the rank ran too far ahead of the others).
    std::int32_t arrive(std::uint32_t rank, std::uint32_t k);
    // A held collective's published status when a rank needs the broker's usual path.
    static constexpr std::int32_t kByBroker = INT32_MIN;
    // `rank` arrives at held collective k, which it names `id` (31 bits), needing the broker's
    // path or not; `completer`: whether it is the last to arrive. PMIX_SUCCESS, or
    // PMIX_ERR_OUT_OF_RESOURCE as arrive().
    std::int32_t arrive_held(std::uint32_t rank, std::uint32_t k, std::uint32_t id, bool by_broker,
                             bool &completer);
    // Claims held collective k, to publish it: false when it is claimed already.
    bool claim(std::uint32_t k);
    // What the ranks said of held collective k: different ids, or the same, and whether any
    // needs the broker.
    enum class Ids { different, same, same_by_broker };
    Ids ids(std::uint32_t k, std::uint32_t id) const;
    // The claimer of held collective k: its status and value, for every rank.
    void publish(std::uint32_t k, std::int32_t status, std::uint64_t value);
    // As wait(), for held collective k: its published status (and value), or a failure; at the
    // deadline it claims and publishes PMIX_ERR_TIMEOUT, unless another rank claimed it first.
    std::int32_t wait_held(std::uint32_t k, Clock::time_point deadline,
                           const std::function<bool()> &alive, const std::atomic<bool> *stop,
                           std::uint64_t &value);
    // Waits until fence k completes (PMIX_SUCCESS) or fails (its status), `deadline` passes
    // (PMIX_ERR_TIMEOUT), `alive` says no after a slice (PMIX_ERR_LOST_CONNECTION), or `stop` is
    // set (PMIX_ERR_LOST_CONNECTION; wake() it).
    std::int32_t wait(std::uint32_t k, Clock::time_point deadline,
                      const std::function<bool()> &alive, const std::atomic<bool> *stop = nullptr);
    void wake();  // wakes every waiter, to look again

    // The caller's card: `commits` commits sent so far, the last of them `pieces` concatenated
    // (one fence-segment entry), or marked too big when they exceed kCardMax.
    void post_card(std::uint32_t rank, std::uint32_t commits,
                   std::initializer_list<std::string_view> pieces);
    struct Card {
        std::uint32_t commits = 0;  // 0: nothing committed yet
        bool too_big = false;       // ask the broker
    };
    // Appends rank's latest card to `out` (unless too big or absent).
    Card read_card(std::uint32_t rank, std::string &out) const;
    // What rank's latest card is, without copying it.
    Card peek(std::uint32_t rank) const;

  private:
    struct Header;
    struct Slot;
    struct Held;
    FenceBoard() = default;
    Slot &slot(std::uint32_t rank) const;
    // Counts one arrival in `cell` ({number, count}) for number k; `last`: it was the last, and
    // the cell moves on to k + kRing. False when the cell is still at k - kRing (still open).
    bool count_in(std::atomic<std::uint64_t> &cell, std::uint32_t k, bool &last) const;

    void *map_ = nullptr;
    std::size_t size_ = 0;
    Header *header_ = nullptr;
    std::atomic<std::uint64_t> *cells_ = nullptr;
    Held *held_ = nullptr;                       // kRing held collectives
    std::atomic<std::uint64_t> *ids_ = nullptr;  // by rank, kRing each: (k + 1) << 32 | id
    char *slots_ = nullptr;
    std::uint32_t ranks_ = 0;
};

}  // namespace zpmix
