#pragma once
// FenceReducer (`fence`): PMIx_Fence as a reduction keyed by the participant set and fence id.
// It counts the contributions of this node's participants (and, once the broker tree exists, of
// its child brokers); when all are in, the root completes the fence: with collect it asks `modex`
// once for the participants' data, then encodes ONE FenceDone and sends those bytes to every
// local participant. A participant that ends before contributing fails the fence for the others.
// A contribution in the name of a rank this broker launched, from another process, is refused
// (PMIX_ERR_NO_PERMISSIONS; see LaunchedRanks).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/protocol/fence.hpp"
#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/server/launched_ranks.hpp"

namespace zpmix {

class FenceReducer : public Actor {
  public:
    FenceReducer(Reactor &reactor, Bus &bus);

  private:
    struct Fence {
        std::vector<msg::Proc> participants;  // canonical
        bool collect = false;
        std::map<std::string, std::uint32_t> sizes;  // of the namespaces named by a wildcard
        std::set<msg::Proc> arrived;                 // local contributors so far
        std::vector<std::string> routes;             // their routing ids, to answer
        std::size_t pending_children = 0;            // child brokers yet to report (no tree yet)
        Reactor::TimerId timer = 0;
        bool gathering = false;  // complete, waiting for modex's data
    };

    std::unordered_map<std::string, Fence> fences_;   // by fence_key
    std::map<std::uint64_t, std::string> gathering_;  // modex request id -> fence key
    std::set<msg::Proc> exited_;                      // until their namespace is deregistered
    LaunchedRanks ranks_;
    std::uint64_t next_request_ = 1;

    void contribute(const Envelope &env, msg::FenceContribute &m);
    void collected(const Envelope &env, msg::ModexCollected &m);
    void proc_exit(const Envelope &env, msg::ProcExit &m);
    void ns_register(const Envelope &env, msg::RegisterNamespace &m);
    void rank_spawned(const Envelope &env, msg::RankSpawned &m);
    void namespace_gone(const Envelope &env, msg::DeregisterNamespace &m);

    // How many of this node's processes take part, or -1 while a wildcard's size is unknown.
    long expected_local(const Fence &f) const;
    // A participant that ended before contributing, if any.
    const msg::Proc *missing_for_good(const Fence &f) const;
    void maybe_complete(const std::string &key, Fence &f);
    // Sends one FenceDone to every local contributor and forgets the fence.
    void finish(const std::string &key, std::int32_t status, std::vector<msg::ProcData> data = {});
};

}  // namespace zpmix
