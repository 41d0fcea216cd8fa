// zpmix: process groups (RFC0033): PMIx_Group_construct, _destruct, _invite, _join and _leave,
// blocking and not. Each is one request to the broker's group tracker (msg::GroupContribute,
// GroupInvite, GroupJoin, GroupLeave); a construct or destruct over a whole job on one node meets
// on its fence board, and one request goes for all (meets_on_board). The whole story, with the
// directives honoured: docs/groups.md.
//
// Limits: an accepting join follows this process's events first (events_follow), so that it
// answers PMIX_GROUP_LEADER_FAILED (group_leader_failed). A directive not honoured is ignored, or
// PMIX_ERR_NOT_SUPPORTED when required. The results (PMIX_GROUP_CONTEXT_ID first, as OpenPMIx's
// callers read results[0], then PMIX_GROUP_MEMBERSHIP) are kept for PMIx_Get as
// {group, PMIX_RANK_WILDCARD}; each member's PMIX_GROUP_LOCAL_CID by the context id.
#include "client_group.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/protocol/fence.hpp"
#include "actors/protocol/group.hpp"
#include "actors/protocol/shm/fence_board.hpp"  // kByBroker
#include "client/events/handler_registry.hpp"   // kHandlerStatus
#include "client/values/value_codec.hpp"
#include "client_events.hpp"
#include "info_values.hpp"
#include "pmix.h"
#include "process.hpp"

namespace zpmix::c {

namespace {

// How long past the broker's own deadline (PMIX_TIMEOUT) the caller waits for its answer.
constexpr std::uint32_t kAnswerMarginMs = 5000;
// A group's membership the broker may name (beyond it, the answer is refused as malformed).
constexpr std::size_t kMaxMembers = std::size_t{1} << 24;

struct Known {
    std::vector<msg::Proc> members;
    bool on_board = false;  // constructed on the job's fence board: destructed there too
};
std::mutex groups_mu;
std::map<std::string, Known, std::less<>> groups;  // constructed, not destructed
std::map<std::string, std::uint64_t> calls;        // (kind, name, set) -> calls made
std::map<std::string, msg::Proc> joining;          // accepted, not formed: the inviter named
// Each member's PMIX_GROUP_LOCAL_CID (its PMIX_GROUP_INFO) by the group's context id: read with
// the PMIX_GROUP_CONTEXT_ID qualifier, also after the group is destructed (Open MPI's
// communicators read a peer's local cid so).
std::map<std::pair<std::size_t, msg::Proc>, std::size_t> local_cids;

// PMIX_TIMEOUT's seconds as ms (at most a day); PMIX_ERR_BAD_PARAM when not a count of seconds.
pmix_status_t timeout_ms_of(const pmix_info_t &i, std::uint32_t &timeout_ms) {
    pmix_status_t rc;
    int seconds = 0;
    PMIX_VALUE_GET_NUMBER(rc, &i.value, seconds, int);
    if (rc != PMIX_SUCCESS || seconds < 0) return PMIX_ERR_BAD_PARAM;
    timeout_ms = static_cast<std::uint32_t>(std::min(seconds, 86400)) * 1000u;
    return PMIX_SUCCESS;
}

std::uint64_t next_seq(bool destruct, const std::string &grp, const std::vector<msg::Proc> &set) {
    std::lock_guard lock(groups_mu);
    return calls[std::string(destruct ? "d" : "c") + grp + '\n' + msg::fence_set(set)]++;
}

// The request for a construct (procs given) or a destruct; PMIX_ERR_BAD_PARAM for bad arguments.
pmix_status_t make_request(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                           const pmix_info_t info[], size_t ninfo, bool destruct,
                           msg::GroupContribute &m, std::uint32_t &wait_ms) {
    if (grp == nullptr || grp[0] == '\0' || strnlen(grp, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN)
        return PMIX_ERR_BAD_PARAM;
    m.grp = grp;
    m.destruct = destruct;
    if (pmix_status_t rc = with_client(
            true, [&](client::Session &, const pmix_proc_t &me) { m.proc = to_msg(me); });
        rc != PMIX_SUCCESS)
        return rc;
    std::vector<msg::Proc> members;  // for the sequence: a destruct names none to the broker
    if (destruct) {
        std::lock_guard lock(groups_mu);
        auto g = groups.find(m.grp);
        if (g == groups.end()) return PMIX_ERR_NOT_FOUND;
        members = g->second.members;
    } else {
        if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
        for (size_t i = 0; i < nprocs; ++i) m.members.push_back(to_msg(procs[i]));
        m.members = msg::canonical_participants(std::move(m.members));
    }
    for (size_t n = 0; info != nullptr && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        if (is_key(i, PMIX_TIMEOUT)) {
            if (pmix_status_t rc = timeout_ms_of(i, m.timeout_ms); rc != PMIX_SUCCESS) return rc;
        } else if (is_key(i, PMIX_GROUP_LEADER)) {
            m.leader = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_GROUP_OPTIONAL)) {
            m.optional = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_GROUP_FT_COLLECTIVE)) {
            m.ft_collective = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_GROUP_NOTIFY_TERMINATION)) {
            m.notify_termination = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_GROUP_ASSIGN_CONTEXT_ID)) {
            m.assign_context_id = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_GROUP_LOCAL_ONLY)) {
            m.local_only = PMIX_INFO_TRUE(&i);
        } else if (!destruct && is_key(i, PMIX_GROUP_INFO)) {
            const pmix_data_array_t *a = i.value.data.darray;
            if (i.value.type != PMIX_DATA_ARRAY || a == nullptr || a->type != PMIX_INFO ||
                (a->size > 0 && a->array == nullptr))
                return PMIX_ERR_BAD_PARAM;
            msgpack::sbuffer buf;
            Packer pk(buf);
            if (pmix_status_t rc =
                    encode_infos(pk, static_cast<const pmix_info_t *>(a->array), a->size);
                rc != PMIX_SUCCESS)
                return rc;
            m.info.assign(buf.data(), buf.data() + buf.size());
        } else if (!destruct && is_key(i, PMIX_GROUP_ENDPT_DATA)) {
            if (i.value.type != PMIX_BYTE_OBJECT) return PMIX_ERR_BAD_PARAM;
            const pmix_byte_object_t &b = i.value.data.bo;
            if (b.size > 0 && b.bytes == nullptr) return PMIX_ERR_BAD_PARAM;
            m.endpoint.assign(b.bytes, b.bytes + b.size);
        } else if (PMIX_INFO_IS_REQUIRED(&i)) {
            return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    m.seq = next_seq(destruct, m.grp, destruct ? members : m.members);
    wait_ms = m.timeout_ms ? m.timeout_ms + kAnswerMarginMs : 0;
    return PMIX_SUCCESS;
}

pmix_status_t store(const pmix_proc_t &p, const char *key, const pmix_value_t &v) {
    return PMIx_Store_internal(&p, key, const_cast<pmix_value_t *>(&v));
}

// The membership as PMIX_GROUP_MEMBERSHIP's value (a data array of procs).
void load_membership(pmix_value_t &v, const std::vector<msg::Proc> &members) {
    pmix_proc_t *procs = nullptr;
    PMIX_PROC_CREATE(procs, members.size());
    for (size_t i = 0; i < members.size(); ++i)
        PMIX_LOAD_PROCID(&procs[i], members[i].nspace.c_str(), members[i].rank);
    pmix_data_array_t a{PMIX_PROC, members.size(), procs};
    PMIx_Value_load(&v, &a, PMIX_DATA_ARRAY);
    PMIX_PROC_FREE(procs, members.size());
}

// A construct's outcome, kept for PMIx_Get and the group's later use; the results for the caller.
pmix_status_t completed(const msg::GroupDone &d, pmix_info_t **results, size_t *nresults,
                        bool on_board = false) {
    if (results) *results = nullptr;
    if (nresults) *nresults = 0;
    auto membership = msg::to_procs(d.membership, kMaxMembers);
    if (!membership) return PMIX_ERR_UNPACK_FAILURE;
    pmix_proc_t whole;
    PMIX_LOAD_PROCID(&whole, d.grp.c_str(), PMIX_RANK_WILDCARD);
    // Every member's PMIX_GROUP_INFO, in the members' order, and its endpoint data.
    for (const auto &c : d.contributions) {
        if (!c.info.empty()) {
            pmix_info_t *infos = nullptr;
            size_t n = 0;
            if (pmix_status_t rc = decode_infos(c.info.data(), c.info.size(), &infos, &n);
                rc != PMIX_SUCCESS)
                return rc;
            for (size_t i = 0; i < n; ++i) {
                store(whole, infos[i].key, infos[i].value);
                pmix_status_t rc;
                std::size_t cid = 0;
                if (d.context_id && PMIX_CHECK_KEY(&infos[i], PMIX_GROUP_LOCAL_CID)) {
                    PMIX_VALUE_GET_NUMBER(rc, &infos[i].value, cid, std::size_t);
                    std::lock_guard lock(groups_mu);
                    if (rc == PMIX_SUCCESS) local_cids[{d.context_id, c.proc}] = cid;
                }
            }
            PMIX_INFO_FREE(infos, n);
        }
        if (!c.endpoint.empty()) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, c.proc.nspace.c_str(), c.proc.rank);
            pmix_value_t v;
            PMIX_VALUE_CONSTRUCT(&v);
            pmix_byte_object_t bo{const_cast<char *>(c.endpoint.data()), c.endpoint.size()};
            PMIx_Value_load(&v, &bo, PMIX_BYTE_OBJECT);
            store(p, PMIX_GROUP_ENDPT_DATA, v);
            PMIX_VALUE_DESTRUCT(&v);
        }
    }
    pmix_value_t members;
    PMIX_VALUE_CONSTRUCT(&members);
    load_membership(members, *membership);
    store(whole, PMIX_GROUP_MEMBERSHIP, members);
    if (d.context_id) {
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        size_t id = d.context_id;
        PMIx_Value_load(&v, &id, PMIX_SIZE);
        store(whole, PMIX_GROUP_CONTEXT_ID, v);
    }
    {
        std::lock_guard lock(groups_mu);
        groups[d.grp] = Known{std::move(*membership), on_board};
    }
    // The context id first: OpenPMIx's callers read it as results[0].
    if (results && nresults) {
        const size_t n = d.context_id ? 2 : 1;
        PMIX_INFO_CREATE(*results, n);
        if (d.context_id) {
            size_t id = d.context_id;
            PMIx_Info_load(&(*results)[0], PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
        }
        PMIX_LOAD_KEY((*results)[n - 1].key, PMIX_GROUP_MEMBERSHIP);
        PMIx_Value_xfer(&(*results)[n - 1].value, &members);
        *nresults = n;
    }
    PMIX_VALUE_DESTRUCT(&members);
    return PMIX_SUCCESS;
}

void destructed(const std::string &grp) {
    std::lock_guard lock(groups_mu);
    groups.erase(grp);
}

// The broker's answer: its status, and on success the GroupDone.
pmix_status_t done_of(pmix_status_t status, const Envelope *env, msg::GroupDone &d) {
    if (status != PMIX_SUCCESS) return status;
    try {
        d = env->as<msg::GroupDone>();
    } catch (const DecodeError &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return d.status == PMIX_ERR_PARTIAL_SUCCESS ? PMIX_SUCCESS : d.status;
}

// A construct over the caller's whole job (its wildcard, or every rank named) on one node meets
// on the job's fence board: its last arriver alone tells the broker (GroupContribute.for_all)
// and the others the outcome, one message through the broker instead of one per member. A
// destruct of a group constructed so does the same. Every member decides it alike from the
// members named (all must name the same). One that brings what only the broker's usual path
// carries (PMIX_GROUP_INFO, endpoint data, a leader, a construct that tolerates a member's end)
// says so as it arrives, and then every member takes that path (needs_broker).
bool meets_on_board(msg::GroupContribute &m) {
    if (!has_fence_board()) return false;
    if (m.destruct) {
        std::lock_guard lock(groups_mu);
        auto g = groups.find(m.grp);
        return g != groups.end() && g->second.on_board;
    }
    const msg::Proc whole{m.proc.nspace, msg::kWildcardRank};
    const std::uint32_t size = own_job_size();
    const bool all = (m.members.size() == 1 && m.members[0] == whole) ||
                     (size > 1 && m.members.size() == size &&
                      std::all_of(m.members.begin(), m.members.end(), [&](const msg::Proc &p) {
                          return p.nspace == m.proc.nspace && p.rank < size;
                      }));
    if (all) m.members = {whole};
    return all;
}

bool needs_broker(const msg::GroupContribute &m) {
    return m.leader || m.optional || m.ft_collective || !m.info.empty() || !m.endpoint.empty();
}

// Whether every member goes on to the broker's usual path after meeting on the board: a member
// needs it, or one ended before it arrived (the broker fails the construct, or, when a member
// asked it to tolerate that, completes it without it, as always).
bool to_broker(pmix_status_t board_status) {
    return board_status == FenceBoard::kByBroker || board_status == PMIX_ERR_PROC_TERM_WO_SYNC;
}

// The broker's part of a construct or destruct met on the board: the last arriver's request, for
// every member; its status and the context id.
BoardCompleter tell_broker(msg::GroupContribute m, std::uint32_t wait_ms) {
    m.for_all = true;
    return [m = std::move(m), wait_ms] {
        client::Session::Reply reply;
        const pmix_status_t rc = ask(m, wait_ms, reply);
        msg::GroupDone d;
        const pmix_status_t status = done_of(rc, rc == PMIX_SUCCESS ? &reply.env : nullptr, d);
        return std::pair<pmix_status_t, std::uint64_t>(status, d.context_id);
    };
}

// What a collective on the board is, as every member names it.
std::string board_what(const msg::GroupContribute &m) {
    return (m.destruct ? "destruct " : "construct ") + m.grp;
}

// How long a member waits on the board: PMIX_TIMEOUT, else the broker's bound for a construct
// ([broker] group_timeout_ms, which the launcher gives the ranks).
std::uint32_t board_timeout_ms(const msg::GroupContribute &m) {
    if (m.timeout_ms) return m.timeout_ms;
    const char *v = std::getenv("ZPMIX_GROUP_TIMEOUT_MS");
    return v ? static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10)) : 0;
}

// What every member of a construct met on the board keeps: its whole job, the context id.
msg::GroupDone board_done(const msg::GroupContribute &m, std::uint64_t context_id) {
    msg::GroupDone d;
    d.grp = m.grp;
    std::vector<msg::Proc> all;
    for (std::uint32_t r = 0; r < own_job_size(); ++r) all.push_back({m.proc.nspace, r});
    d.membership = msg::to_runs(all);
    d.context_id = context_id;
    d.notify_termination = m.notify_termination;
    return d;
}

// A construct's or join's results to its _nb callback. A member (results given) follows its
// events first (events_follow), so that a member leaving as soon as the group is formed changes
// the membership here too.
void answer_member(pmix_status_t status, pmix_info_t *results, size_t n, pmix_info_cbfunc_t cbfunc,
                   void *cbdata) {
    if (results == nullptr) return cbfunc(status, nullptr, 0, cbdata, nullptr, nullptr);
    events_follow([=] {
        cbfunc(status, results, n, cbdata, release_info_array,
               new std::pair<pmix_info_t *, size_t>(results, n));
    });
}

// A group event's PMIX_GROUP_ID (empty: none) and, into `membership`, its PMIX_GROUP_MEMBERSHIP.
std::string group_of(const msg::Event &ev,
                     std::optional<std::vector<msg::Proc>> *membership = nullptr) {
    pmix_info_t *infos = nullptr;
    size_t n = 0;
    if (decode_infos(ev.info.data(), ev.info.size(), &infos, &n) != PMIX_SUCCESS) return {};
    std::string grp;
    for (size_t i = 0; i < n; ++i) {
        const pmix_value_t &v = infos[i].value;
        if (is_key(infos[i], PMIX_GROUP_ID) && v.type == PMIX_STRING && v.data.string) {
            grp = v.data.string;
        } else if (membership && is_key(infos[i], PMIX_GROUP_MEMBERSHIP) &&
                   v.type == PMIX_DATA_ARRAY && v.data.darray && v.data.darray->type == PMIX_PROC) {
            const auto *procs = static_cast<const pmix_proc_t *>(v.data.darray->array);
            membership->emplace();
            for (size_t k = 0; k < v.data.darray->size; ++k)
                (*membership)->push_back(to_msg(procs[k]));
            std::sort((*membership)->begin(), (*membership)->end());
        }
    }
    PMIX_INFO_FREE(infos, n);
    return grp;
}

}  // namespace

std::optional<std::vector<msg::Proc>> group_members(std::string_view grp) {
    std::lock_guard lock(groups_mu);
    auto g = groups.find(grp);
    if (g == groups.end()) return std::nullopt;
    return g->second.members;
}

pmix_status_t group_names_of(const pmix_proc_t &p, pmix_value_t **val) {
    const msg::Proc who{std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank};
    std::vector<std::string> names;
    {
        std::lock_guard lock(groups_mu);
        for (const auto &[name, g] : groups)
            if (std::find(g.members.begin(), g.members.end(), who) != g.members.end())
                names.push_back(name);
    }
    if (names.empty()) return PMIX_ERR_NOT_FOUND;
    std::vector<char *> ptrs;
    for (auto &n : names) ptrs.push_back(n.data());
    pmix_data_array_t a{PMIX_STRING, ptrs.size(), ptrs.data()};
    PMIX_VALUE_CREATE(*val, 1);
    return PMIx_Value_load(*val, &a, PMIX_DATA_ARRAY);
}

std::optional<pmix_status_t> group_local_cid(const pmix_proc_t &p, const pmix_info_t info[],
                                             size_t ninfo, pmix_value_t **val) {
    std::optional<std::size_t> context;
    for (size_t i = 0; info && i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_CONTEXT_ID)) {
            pmix_status_t rc;
            std::size_t id = 0;
            PMIX_VALUE_GET_NUMBER(rc, &info[i].value, id, std::size_t);
            if (rc != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
            context = id;
        }
    if (!context) return std::nullopt;  // the plain key: as any other
    const msg::Proc who{std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank};
    std::size_t cid = 0;
    {
        std::lock_guard lock(groups_mu);
        auto it = local_cids.find({*context, who});
        if (it == local_cids.end()) return PMIX_ERR_NOT_FOUND;
        cid = it->second;
    }
    PMIX_VALUE_CREATE(*val, 1);
    return PMIx_Value_load(*val, &cid, PMIX_SIZE);
}

bool expand_groups(std::vector<msg::Proc> &procs) {
    std::vector<msg::Proc> out;
    bool any = false;
    for (const auto &p : procs) {
        auto members = group_members(p.nspace);
        if (!members) {
            out.push_back(p);
            continue;
        }
        any = true;
        if (p.rank == msg::kWildcardRank) {
            out.insert(out.end(), members->begin(), members->end());
        } else {
            if (p.rank >= members->size()) return false;
            out.push_back((*members)[p.rank]);
        }
    }
    if (any) procs = std::move(out);
    return true;
}

void group_membership_changed(const msg::Event &ev) {
    std::optional<std::vector<msg::Proc>> now;
    const std::string grp = group_of(ev, &now);
    std::vector<msg::Proc> members;
    {
        std::lock_guard lock(groups_mu);
        auto g = groups.find(grp);
        if (g == groups.end()) return;
        if (now)
            g->second.members = std::move(*now);
        else if (ev.status == PMIX_GROUP_LEFT && !ev.affected.empty())
            std::erase(g->second.members, ev.affected.front());
        members = g->second.members;
    }
    pmix_proc_t whole;
    PMIX_LOAD_PROCID(&whole, grp.c_str(), PMIX_RANK_WILDCARD);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    load_membership(v, members);
    store(whole, PMIX_GROUP_MEMBERSHIP, v);
    PMIX_VALUE_DESTRUCT(&v);
}

void group_leader_failed(const msg::Event &ev, const pmix_info_t *results, size_t nresults) {
    msg::GroupLeaderAnswer a;
    a.grp = group_of(ev);
    {
        std::lock_guard lock(groups_mu);
        auto j = joining.find(a.grp);
        if (j == joining.end()) return;  // not waiting for that group to form
        a.inviter = j->second;
    }
    a.failed = ev.source;
    // One info per handler, holding its status and what it returned (EventChain).
    for (size_t i = 0; i < nresults; ++i) {
        const pmix_value_t &v = results[i].value;
        if (v.type != PMIX_DATA_ARRAY || !v.data.darray || v.data.darray->type != PMIX_INFO)
            continue;
        const auto *items = static_cast<const pmix_info_t *>(v.data.darray->array);
        for (size_t k = 0; k < v.data.darray->size; ++k) {
            if (is_key(items[k], client::kHandlerStatus) && items[k].value.type == PMIX_STATUS)
                a.abort |= items[k].value.data.status == PMIX_GROUP_CONSTRUCT_ABORT;
            else if (is_key(items[k], PMIX_GROUP_LEADER))
                a.volunteer |= PMIX_INFO_TRUE(&items[k]);
        }
    }
    with_client(true, [&](client::Session &session, const pmix_proc_t &me) {
        a.proc = to_msg(me);
        session.notify(a);
    });
}

bool group_member(const pmix_proc_t &p, pmix_proc_t &member) {
    if (p.rank == PMIX_RANK_WILDCARD) return false;
    std::lock_guard lock(groups_mu);
    auto g = groups.find(std::string_view(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)));
    if (g == groups.end() || p.rank >= g->second.members.size()) return false;
    const msg::Proc &m = g->second.members[p.rank];
    PMIX_LOAD_PROCID(&member, m.nspace.c_str(), m.rank);
    return true;
}

}  // namespace zpmix::c

using namespace zpmix;
using namespace zpmix::c;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t directives[],
                                               size_t ndirs, pmix_info_t **results,
                                               size_t *nresults) {
    if (results) *results = nullptr;  // none, whichever way it fails
    if (nresults) *nresults = 0;
    msg::GroupContribute m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_request(grp, procs, nprocs, directives, ndirs, false, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    if (meets_on_board(m)) {
        std::uint64_t context_id = 0;
        if (auto rc = board_collective(board_what(m), needs_broker(m), board_timeout_ms(m),
                                       tell_broker(m, wait_ms), context_id);
            rc && !to_broker(*rc)) {
            if (*rc != PMIX_SUCCESS) return *rc;
            const pmix_status_t formed =
                completed(board_done(m, context_id), results, nresults, true);
            if (formed == PMIX_SUCCESS) events_follow();
            return formed;
        }
    }
    client::Session::Reply reply;
    const pmix_status_t rc = ask(m, wait_ms, reply);
    msg::GroupDone d;
    if (pmix_status_t s = done_of(rc, rc == PMIX_SUCCESS ? &reply.env : nullptr, d);
        s != PMIX_SUCCESS)
        return s;
    const pmix_status_t formed = completed(d, results, nresults);
    if (formed == PMIX_SUCCESS) events_follow();  // a member that leaves later changes it here
    return formed;
}

PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[],
                                                  size_t nprocs, const pmix_info_t info[],
                                                  size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                                  void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    msg::GroupContribute m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_request(grp, procs, nprocs, info, ninfo, false, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    auto by_broker = [m, wait_ms, cbfunc, cbdata] {
        return submit(m, wait_ms, [cbfunc, cbdata](pmix_status_t status, const Envelope *env) {
            msg::GroupDone d;
            status = done_of(status, env, d);
            pmix_info_t *results = nullptr;
            size_t n = 0;
            if (status == PMIX_SUCCESS) status = completed(d, &results, &n);
            answer_member(status, results, n, cbfunc, cbdata);
        });
    };
    if (meets_on_board(m) &&
        board_collective_nb(
            board_what(m), needs_broker(m), board_timeout_ms(m), tell_broker(m, wait_ms),
            [m, by_broker, cbfunc, cbdata](pmix_status_t status, std::uint64_t context_id) {
                if (to_broker(status)) {
                    if (pmix_status_t rc = by_broker(); rc != PMIX_SUCCESS)
                        cbfunc(rc, nullptr, 0, cbdata, nullptr, nullptr);
                    return;
                }
                pmix_info_t *results = nullptr;
                size_t n = 0;
                if (status == PMIX_SUCCESS)
                    status = completed(board_done(m, context_id), &results, &n, true);
                answer_member(status, results, n, cbfunc, cbdata);
            }))
        return PMIX_SUCCESS;
    return by_broker();
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[],
                                              size_t ninfo) {
    msg::GroupContribute m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_request(grp, nullptr, 0, info, ninfo, true, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    if (meets_on_board(m)) {
        std::uint64_t unused = 0;
        const auto rc = board_collective(board_what(m), false, board_timeout_ms(m),
                                         tell_broker(m, wait_ms), unused);
        if (rc == PMIX_SUCCESS) destructed(m.grp);
        // A member that ended before it arrived: every other goes to the broker, which destructs
        // without it as it always does.
        if (rc && *rc != PMIX_ERR_PROC_TERM_WO_SYNC) return *rc;
    }
    client::Session::Reply reply;
    const pmix_status_t rc = ask(m, wait_ms, reply);
    msg::GroupDone d;
    if (pmix_status_t s = done_of(rc, rc == PMIX_SUCCESS ? &reply.env : nullptr, d);
        s != PMIX_SUCCESS)
        return s;
    destructed(m.grp);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[],
                                                 size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                 void *cbdata) {
    msg::GroupContribute m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_request(grp, nullptr, 0, info, ninfo, true, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    auto by_broker = [m, wait_ms, cbfunc, cbdata] {
        return submit(m, wait_ms,
                      [cbfunc, cbdata, name = m.grp](pmix_status_t status, const Envelope *env) {
                          msg::GroupDone d;
                          status = done_of(status, env, d);
                          if (status == PMIX_SUCCESS) destructed(name);
                          if (cbfunc) cbfunc(status, cbdata);
                      });
    };
    // As the blocking destruct: a member that ended before it arrived sends the others to the
    // broker.
    if (meets_on_board(m) &&
        board_collective_nb(
            board_what(m), false, board_timeout_ms(m), tell_broker(m, wait_ms),
            [by_broker, cbfunc, cbdata, name = m.grp](pmix_status_t status, std::uint64_t) {
                if (status == PMIX_ERR_PROC_TERM_WO_SYNC) {
                    if (pmix_status_t rc = by_broker(); rc != PMIX_SUCCESS)
                        if (cbfunc) cbfunc(rc, cbdata);
                    return;
                }
                if (status == PMIX_SUCCESS) destructed(name);
                if (cbfunc) cbfunc(status, cbdata);
            }))
        return PMIX_SUCCESS;
    return by_broker();
}

}  // extern "C"

namespace {

// PMIX_TIMEOUT of `info` in ms (0: none); PMIX_ERR_BAD_PARAM when malformed. The other keys go
// to `other`, which refuses what it does not know when required.
template <class Other>
pmix_status_t read_directives(const pmix_info_t info[], size_t ninfo, std::uint32_t &timeout_ms,
                              Other other) {
    for (size_t n = 0; info != nullptr && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        if (is_key(i, PMIX_TIMEOUT)) {
            if (pmix_status_t rc = timeout_ms_of(i, timeout_ms); rc != PMIX_SUCCESS) return rc;
        } else if (!other(i) && PMIX_INFO_IS_REQUIRED(&i)) {
            return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    return PMIX_SUCCESS;
}

pmix_status_t make_invite(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                          const pmix_info_t info[], size_t ninfo, msg::GroupInvite &m,
                          std::uint32_t &wait_ms) {
    if (grp == nullptr || grp[0] == '\0' || strnlen(grp, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN ||
        procs == nullptr || nprocs == 0)
        return PMIX_ERR_BAD_PARAM;
    m.grp = grp;
    if (pmix_status_t rc = with_client(
            true, [&](client::Session &, const pmix_proc_t &me) { m.proc = to_msg(me); });
        rc != PMIX_SUCCESS)
        return rc;
    for (size_t i = 0; i < nprocs; ++i) m.invitees.push_back(to_msg(procs[i]));
    if (pmix_status_t rc = read_directives(info, ninfo, m.timeout_ms,
                                           [&](const pmix_info_t &i) {
                                               if (is_key(i, PMIX_GROUP_ASSIGN_CONTEXT_ID))
                                                   m.assign_context_id = PMIX_INFO_TRUE(&i);
                                               else if (is_key(i, PMIX_GROUP_NOTIFY_TERMINATION))
                                                   m.notify_termination = PMIX_INFO_TRUE(&i);
                                               else
                                                   return false;
                                               return true;
                                           });
        rc != PMIX_SUCCESS)
        return rc;
    wait_ms = m.timeout_ms ? m.timeout_ms + kAnswerMarginMs : 0;
    return PMIX_SUCCESS;
}

pmix_status_t make_join(const char grp[], const pmix_proc_t *leader, pmix_group_opt_t opt,
                        const pmix_info_t info[], size_t ninfo, msg::GroupJoin &m,
                        std::uint32_t &wait_ms) {
    if (grp == nullptr || grp[0] == '\0' || strnlen(grp, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN ||
        leader == nullptr || (opt != PMIX_GROUP_ACCEPT && opt != PMIX_GROUP_DECLINE))
        return PMIX_ERR_BAD_PARAM;
    m.grp = grp;
    m.leader = to_msg(*leader);
    m.accept = opt == PMIX_GROUP_ACCEPT;
    if (pmix_status_t rc = with_client(
            true, [&](client::Session &, const pmix_proc_t &me) { m.proc = to_msg(me); });
        rc != PMIX_SUCCESS)
        return rc;
    std::uint32_t timeout_ms = 0;
    if (pmix_status_t rc =
            read_directives(info, ninfo, timeout_ms, [](const pmix_info_t &) { return false; });
        rc != PMIX_SUCCESS)
        return rc;
    wait_ms = timeout_ms;
    return PMIX_SUCCESS;
}

// The outcome of an invite or join: a group formed (its results), a decline's acknowledgement,
// or why not. PMIX_ERR_PARTIAL_SUCCESS (the leader's, some invitees are not in) passes through.
pmix_status_t joined(pmix_status_t status, const Envelope *env, pmix_info_t **results,
                     size_t *nresults) {
    if (results) *results = nullptr;
    if (nresults) *nresults = 0;
    msg::GroupDone d;
    if (pmix_status_t s = done_of(status, env, d); s != PMIX_SUCCESS) return s;
    if (d.membership.empty()) return PMIX_SUCCESS;  // declined
    if (pmix_status_t rc = completed(d, results, nresults); rc != PMIX_SUCCESS) return rc;
    events_follow();  // a member now: see PMIx_Group_construct
    return d.status;
}

pmix_status_t make_leave(const char grp[], const pmix_info_t info[], size_t ninfo,
                         msg::GroupLeave &m, std::uint32_t &wait_ms) {
    if (grp == nullptr || grp[0] == '\0' || strnlen(grp, PMIX_MAX_NSLEN + 1) > PMIX_MAX_NSLEN)
        return PMIX_ERR_BAD_PARAM;
    m.grp = grp;
    if (pmix_status_t rc = with_client(
            true, [&](client::Session &, const pmix_proc_t &me) { m.proc = to_msg(me); });
        rc != PMIX_SUCCESS)
        return rc;
    if (!group_members(m.grp)) return PMIX_ERR_NOT_FOUND;
    return read_directives(info, ninfo, wait_ms, [](const pmix_info_t &) { return false; });
}

template <class Msg>
pmix_status_t join_call(const Msg &m, std::uint32_t wait_ms, pmix_info_t **results,
                        size_t *nresults) {
    client::Session::Reply reply;
    const pmix_status_t rc = ask(m, wait_ms, reply);
    return joined(rc, rc == PMIX_SUCCESS ? &reply.env : nullptr, results, nresults);
}

// `answered` runs once the broker answered (or the request failed), before the callback.
template <class Msg>
pmix_status_t join_call_nb(const Msg &m, std::uint32_t wait_ms, pmix_info_cbfunc_t cbfunc,
                           void *cbdata, std::function<void()> answered = {}) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    return submit(m, wait_ms,
                  [cbfunc, cbdata, answered](pmix_status_t status, const Envelope *env) {
                      if (answered) answered();
                      pmix_info_t *results = nullptr;
                      size_t n = 0;
                      status = joined(status, env, &results, &n);
                      answer_member(status, results, n, cbfunc, cbdata);
                  });
}

// While an accepting join waits, this process answers PMIX_GROUP_LEADER_FAILED for its group.
void await_group(const msg::GroupJoin &m) {
    std::lock_guard lock(groups_mu);
    joining[m.grp] = m.leader;
}
void awaited_group(const std::string &grp) {
    std::lock_guard lock(groups_mu);
    joining.erase(grp);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[],
                                            size_t nprocs, const pmix_info_t info[], size_t ninfo,
                                            pmix_info_t **results, size_t *nresult) {
    msg::GroupInvite m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_invite(grp, procs, nprocs, info, ninfo, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    return join_call(m, wait_ms, results, nresult);
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t info[],
                                               size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                               void *cbdata) {
    msg::GroupInvite m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_invite(grp, procs, nprocs, info, ninfo, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    return join_call_nb(m, wait_ms, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader,
                                          pmix_group_opt_t opt, const pmix_info_t info[],
                                          size_t ninfo, pmix_info_t **results, size_t *nresult) {
    msg::GroupJoin m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_join(grp, leader, opt, info, ninfo, m, wait_ms); rc != PMIX_SUCCESS)
        return rc;
    if (!m.accept) return join_call(m, wait_ms, results, nresult);
    events_follow();
    await_group(m);
    const pmix_status_t rc = join_call(m, wait_ms, results, nresult);
    awaited_group(m.grp);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                             pmix_group_opt_t opt, const pmix_info_t info[],
                                             size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                             void *cbdata) {
    msg::GroupJoin m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_join(grp, leader, opt, info, ninfo, m, wait_ms); rc != PMIX_SUCCESS)
        return rc;
    if (cbfunc == nullptr) {
        // As OpenPMIx allows (its asyncgroup example): the join goes ahead and the group is
        // known here once formed; its outcome is told by the group's events only.
        spdlog::info(
            "pmix: PMIx_Group_join_nb({}) without a callback: its outcome is not "
            "reported, only the group's events",
            m.grp);
        cbfunc = [](pmix_status_t, pmix_info_t *, size_t, void *, pmix_release_cbfunc_t release,
                    void *release_data) {
            if (release) release(release_data);
        };
    }
    if (!m.accept) return join_call_nb(m, wait_ms, cbfunc, cbdata);
    await_group(m);
    events_follow([m, wait_ms, cbfunc, cbdata] {
        const auto answered = [grp = m.grp] { awaited_group(grp); };
        if (pmix_status_t rc = join_call_nb(m, wait_ms, cbfunc, cbdata, answered);
            rc != PMIX_SUCCESS) {
            answered();
            cbfunc(rc, nullptr, 0, cbdata, nullptr, nullptr);
        }
    });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[],
                                           size_t ninfo) {
    msg::GroupLeave m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_leave(grp, info, ninfo, m, wait_ms); rc != PMIX_SUCCESS) return rc;
    client::Session::Reply reply;
    const pmix_status_t rc = ask(m, wait_ms, reply);
    if (rc == PMIX_SUCCESS) destructed(m.grp);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    msg::GroupLeave m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = make_leave(grp, info, ninfo, m, wait_ms); rc != PMIX_SUCCESS) return rc;
    return submit(m, wait_ms,
                  [cbfunc, cbdata, name = m.grp](pmix_status_t status, const Envelope *) {
                      if (status == PMIX_SUCCESS) destructed(name);
                      if (cbfunc) cbfunc(status, cbdata);
                  });
}

}  // extern "C"
