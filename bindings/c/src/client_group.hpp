#pragma once
// The groups this process constructed (client_group.cpp), for the calls that take a group as a
// target: PMIx_Fence over {group, PMIX_RANK_WILDCARD}, PMIx_Notify_event to a custom range that
// names a group, PMIx_Get by group rank.
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/protocol/common.hpp"
#include "actors/protocol/events.hpp"
#include "pmix_common.h"

namespace zpmix::c {

// The members of the group named `grp` (explicit ranks, ascending), when this process is one of
// them and the group is not destructed.
std::optional<std::vector<msg::Proc>> group_members(std::string_view grp);

// PMIx_Get of PMIX_GROUP_NAMES for a process: the groups known here (this process is in them)
// that hold it, an array of strings; PMIX_ERR_NOT_FOUND when none does.
pmix_status_t group_names_of(const pmix_proc_t &p, pmix_value_t **val);

// PMIx_Get of PMIX_GROUP_LOCAL_CID with the PMIX_GROUP_CONTEXT_ID qualifier: the local cid the
// member `p` gave in its PMIX_GROUP_INFO when the group of that context id was constructed (kept
// after the group is destructed). None without the qualifier.
std::optional<pmix_status_t> group_local_cid(const pmix_proc_t &p, const pmix_info_t info[],
                                             size_t ninfo, pmix_value_t **val);

// `procs` with every {group, rank} of a group of this process replaced by its members (the
// wildcard) or its member of that group rank; other procs as they are. False when a group rank
// is out of range.
bool expand_groups(std::vector<msg::Proc> &procs);

// The member of rank `p.rank` of the group named `p.nspace`, when this process is in that group
// (for PMIx_Get by group rank).
bool group_member(const pmix_proc_t &p, pmix_proc_t &member);

// PMIX_GROUP_LEFT (its affected proc left) or PMIX_GROUP_MEMBERSHIP_UPDATE (its
// PMIX_GROUP_MEMBERSHIP is the group's now) for a group of this process: its membership here
// follows, for the calls above and PMIx_Get of PMIX_GROUP_MEMBERSHIP. Once it is in a group, this
// process follows its events (client_events.hpp) whether or not it registered a handler.
void group_membership_changed(const msg::Event &ev);

// PMIX_GROUP_LEADER_FAILED once this process's handlers ran (`results`, EventChain::Done's): when
// it accepted an invitation to that group and waits for it to form, tells the invitation's broker
// whether a handler declared this process the new leader (PMIX_GROUP_LEADER true in its results)
// or aborted the construct (status PMIX_GROUP_CONSTRUCT_ABORT); see actors/group/group_tracker.hpp.
void group_leader_failed(const msg::Event &ev, const pmix_info_t *results, size_t nresults);

// (client_api.cpp) A held collective over the caller's whole job on its fence board (a job on one
// node; actors/protocol/shm/fence_board.hpp), named `what` (every rank names it alike), this rank
// needing the broker's usual path or not: every rank arrives, the last runs `complete` (the
// broker's part: a status and a value), whose outcome every rank returns, or
// FenceBoard::kByBroker when a rank needs the broker (every rank then takes that path). None
// without a board: the caller goes through the broker. The _nb form's `done` runs on the
// progress thread.
using BoardCompleter = std::function<std::pair<pmix_status_t, std::uint64_t>()>;
std::optional<pmix_status_t> board_collective(std::string_view what, bool by_broker,
                                              std::uint32_t timeout_ms,
                                              const BoardCompleter &complete, std::uint64_t &value);
bool board_collective_nb(std::string_view what, bool by_broker, std::uint32_t timeout_ms,
                         BoardCompleter complete,
                         std::function<void(pmix_status_t, std::uint64_t)> done);
// This process's job: its namespace's size, and whether it has a fence board.
std::uint32_t own_job_size();
bool has_fence_board();

}  // namespace zpmix::c
