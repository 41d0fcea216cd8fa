#pragma once
// NodeFence: a client's end of its job's fence board (actors/protocol/shm/fence_board.hpp), for a
// job whose ranks all run on one node. Its whole-namespace fences meet on the board; every other
// fence goes through the broker.
//
// PMIx_Commit still sends the commit to the broker (for direct modex, other jobs and tools) and
// also posts it on the board as this rank's card, counting the commits; the two happen under one
// lock, so the count on the board is the count the broker will have. A collecting fence tells
// the store that the other ranks' cards are on the board, copied on their first Get; a card too big
// for the board (fetched at once), and a direct-modex Get of a rank of the job, are asked of the
// broker together with the owner's commit count seen on the board, so that the broker answers from
// that commit or a later one, never from an older one it still holds. A Get that misses after a
// data-less fence reads the owner's card off the board first (no round trip to the broker, whose
// answer at N ranks on fewer cores waits for its turn), and asks the broker only if the key is not
// there.
//
// Non-blocking fences arrive at once on the caller's thread (so a Commit before them counts) and
// are waited for, in order, by one waiter thread, started on the first; their callbacks run on
// the client's progress thread.
//
// Held collectives (FenceBoard): a whole-namespace group construct or destruct arrives as a
// fence does; its last arriver runs the broker's part (`Completer`) and publishes the outcome,
// which every rank returns.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <pmix_common.h>

#include "actors/protocol/modex.hpp"
#include "actors/protocol/shm/fence_board.hpp"
#include "client/session.hpp"
#include "client/store.hpp"

namespace zpmix::client {

class NodeFence {
  public:
    NodeFence(std::unique_ptr<FenceBoard> board, Session &session, ClientStore &store,
              msg::Proc me);
    ~NodeFence();  // fails the non-blocking fences still waiting (PMIX_ERR_LOST_CONNECTION)
    NodeFence(const NodeFence &) = delete;
    NodeFence &operator=(const NodeFence &) = delete;

    // PMIx_Commit: `m` goes to the broker and onto the board.
    void commit(const msg::Commit &m);
    // This rank's whole-namespace fence number k (0 = no timeout).
    pmix_status_t fence(std::uint32_t k, bool collect, std::uint32_t timeout_ms);
    void fence_nb(std::uint32_t k, bool collect, std::uint32_t timeout_ms,
                  std::function<void(pmix_status_t)> done);
    // The broker's part of a held collective: its status and value (blocking; the completer's).
    using Completer = std::function<std::pair<pmix_status_t, std::uint64_t>()>;
    // This rank's held collective k, which it names `id` (every rank must name it alike), needing
    // the broker's usual path or not, within timeout_ms (0: none): the completer's status (or
    // FenceBoard::kByBroker: every rank takes that path), its value in `value`.
    pmix_status_t collective(std::uint32_t k, std::uint32_t id, bool by_broker,
                             std::uint32_t timeout_ms, const Completer &complete,
                             std::uint64_t &value);
    // Non-blocking: arrives now; `done` runs on the progress thread (the completer's part on the
    // waiter thread).
    void collective_nb(std::uint32_t k, std::uint32_t id, bool by_broker, std::uint32_t timeout_ms,
                       Completer complete, std::function<void(pmix_status_t, std::uint64_t)> done);
    // For a direct-modex Get of `rank` of this job: the commits its answer must include.
    std::uint32_t commits_of(std::uint32_t rank) const { return board_->peek(rank).commits; }
    // Before a direct-modex Get of `rank` of this job: its card on the board, if it posted one
    // that fits, is handed to the store to read, as a collecting fence does. False when there is
    // none: only the broker can answer.
    bool offer_card(std::uint32_t rank);

  private:
    // The completer's part: the broker's, unless another rank claimed the collective (it timed
    // out) or the ranks named different ones.
    void complete_held(std::uint32_t k, std::uint32_t id, const Completer &complete);

    struct Waiting {
        std::uint32_t k = 0;
        bool collect = false;
        std::uint32_t timeout_ms = 0;
        FenceBoard::Clock::time_point deadline{};
        std::function<void(pmix_status_t)> done{};
        // A held collective's: whether this rank completes it, how, and who hears of it.
        bool held = false, completer = false;
        std::uint32_t id = 0;
        Completer complete{};
        std::function<void(pmix_status_t, std::uint64_t)> held_done{};
    };

    std::shared_ptr<FenceBoard> board_;  // and the store, while it has cards to read there
    Session &session_;
    ClientStore &store_;
    const msg::Proc me_;

    std::mutex commit_mu_;  // a commit's send and its card, in one order
    std::uint32_t commits_ = 0;

    std::mutex mu_;  // guards the waiter's queue
    std::condition_variable queued_;
    std::deque<Waiting> queue_;
    std::atomic<bool> stop_{false};
    std::thread waiter_;

    pmix_status_t wait(std::uint32_t k, FenceBoard::Clock::time_point deadline);
    // Gives the store every other rank's card once a collecting fence completed.
    pmix_status_t gather(std::uint32_t timeout_ms);
    void run_waiter();
};

}  // namespace zpmix::client
