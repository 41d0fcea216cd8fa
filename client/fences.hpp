#pragma once
// ClientFences: a client's bookkeeping of its fences through the broker (a job's fences on its
// fence board are NodeFence's). A fence is open from its contribution until its FenceDone is
// handled or it is given up (timed out, failed, the broker lost). FenceDone carries no per-client
// request id: its fence key names the fence, which names the request it completes.
//
// The data a FenceDone names is handed to the store before the fence completes: a segment in an
// arena or a file is mapped then (an arena once, while any segment read from it lives), as the
// broker may reuse or remove it once this process contributes to a later fence over the same set.
// So each contribution reports in `done_through` the lowest fence id over its set that is still
// open here or whose arena segment the store may still read: the broker frees only the segments
// of fences below it.
//
// Thread-safe: its own lock guards the open fences and the segments held. An owner may call it
// holding its own lock; ClientFences calls nothing back. take() maps arenas: one thread at a time
// calls it (the connection's reader).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include <pmix_common.h>

#include "actors/protocol/fence.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/protocol/shm/segment_arena.hpp"
#include "client/store.hpp"

namespace zpmix::client {

class ClientFences {
  public:
    explicit ClientFences(ClientStore &store) : store_(store) {}
    ClientFences(const ClientFences &) = delete;
    ClientFences &operator=(const ClientFences &) = delete;

    // Opens m's fence, which request `id` (not 0) waits for, and fills in m.done_through; the
    // fence's key.
    std::string open(msg::FenceContribute &m, std::uint64_t id);
    // The request waiting for the fence named `key`; 0 when it is not open (given up here).
    std::uint64_t request(const std::string &key);
    // The fence named `key` is finished here: handled, failed or given up.
    void close(const std::string &key);
    // Hands the store the data of `done`, whose fence is open, and returns the fence's status
    // (PMIX_ERR_TIMEOUT when the fence was given up meanwhile and the data is in an arena: then
    // nothing here holds its region). One thread at a time.
    pmix_status_t take(msg::FenceDone &done);

  private:
    struct Open {
        std::uint64_t request;
        std::string set;  // msg::fence_set of the participants
        std::uint64_t fence_id;
    };

    ClientStore &store_;
    std::mutex mu_;                                 // guards what follows, down to arena_segments_
    std::unordered_map<std::string, Open> fences_;  // by fence key
    // The fence ids over each participant set still open.
    std::unordered_map<std::string, std::set<std::uint64_t>> open_;
    // The segments read from arenas, by set and fence id, while the store may still read them.
    std::unordered_map<std::string, std::map<std::uint64_t, std::weak_ptr<const FenceSegment>>>
        arena_segments_;
    // take()'s: the arenas mapped, while a segment read from one lives.
    std::unordered_map<std::string, std::weak_ptr<const ArenaMapping>> arenas_;

    std::shared_ptr<const ArenaMapping> arena(const std::string &path);
};

}  // namespace zpmix::client
