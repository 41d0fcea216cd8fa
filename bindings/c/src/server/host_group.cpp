// The host's group upcall: a construct or destruct of a group of the host's processes, once this
// node's members are in (msg::HostGroup, from the group actor). The host carries it across its
// nodes and may assign the context id (PMIX_GROUP_CONTEXT_ID among its results); asked for one
// (PMIX_GROUP_ASSIGN_CONTEXT_ID) and given none, the broker assigns it. Without the upcall the
// group actor hears so (no_upcall) and serves the group itself when every member runs here.
//
// A construct's directives carry this node's part as PMIX_GROUP_ENDPT_DATA, a byte object (one
// self-delimiting msgpack bin, as fence_nb's data), as OpenPMIx 4 hands it to PRRTE: the host
// gathers every node's and answers their concatenation under the same key among its results
// (PRRTE's group_release does), which goes back to the group actor as the nodes' parts.
//
// Also here: the host's PMIx_Notify_event of an invitation's or a membership's event, brought from
// another node, goes to the group actor, which keeps its invitations and groups by it (publish).
#include <chrono>
#include <memory>
#include <vector>

#include "client/events/local_event.hpp"  // procs_of
#include "client/values/value_codec.hpp"
#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_module.hpp"

namespace zpmix::server {

namespace {

// What the host's results say of a group: its context id (0: none) and the nodes' parts (the
// concatenated bins of PMIX_GROUP_ENDPT_DATA; empty: none).
struct GroupResults {
    pmix_status_t status = PMIX_SUCCESS;
    std::uint64_t context_id = 0;
    std::string parts;
};

GroupResults group_results(const std::string &infos) {
    GroupResults out;
    pmix_info_t *info = nullptr;
    std::size_t ninfo = 0;
    if (infos.empty()) return out;
    if (c::decode_infos(infos.data(), infos.size(), &info, &ninfo) != PMIX_SUCCESS) {
        out.status = PMIX_ERR_UNPACK_FAILURE;
        return out;
    }
    for (std::size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_CONTEXT_ID)) {
            pmix_status_t rc;
            PMIX_VALUE_GET_NUMBER(rc, &info[i].value, out.context_id, std::uint64_t);
            if (rc != PMIX_SUCCESS) out.context_id = 0;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ENDPT_DATA)) {
            const pmix_byte_object_t &bo = info[i].value.data.bo;
            if (info[i].value.type != PMIX_BYTE_OBJECT || (bo.size > 0 && bo.bytes == nullptr))
                out.status = PMIX_ERR_TYPE_MISMATCH;
            else if (bo.size > 0)
                out.parts.append(bo.bytes, bo.size);
        }
    PMIX_INFO_FREE(info, ninfo);
    return out;
}

}  // namespace

void HostModule::group(const Envelope &, msg::HostGroup &m) {
    const std::string key = m.key;
    if (!module_.group) return send("group", msg::HostGroupDone{key, PMIX_SUCCESS, true, 0, {}});
    auto answer = [this, key](pmix_status_t status, std::uint64_t context_id,
                              msg::Blob parts = {}) {
        send("group", msg::HostGroupDone{key, status, false, context_id, std::move(parts)});
    };
    struct GroupLent {
        std::vector<pmix_proc_t> procs;
        std::vector<pmix_info_t> directives;
        std::string grp;
        ~GroupLent() {
            for (auto &i : directives) PMIX_INFO_DESTRUCT(&i);
        }
    };
    auto lent = std::make_shared<GroupLent>();
    lent->grp = m.grp;
    for (const auto &p : m.members) {
        pmix_proc_t q;
        PMIX_LOAD_PROCID(&q, p.nspace.c_str(), p.rank);
        lent->procs.push_back(q);
    }
    lent->directives.reserve(3);
    if (m.assign_context_id) {
        bool yes = true;
        lent->directives.emplace_back();
        PMIX_INFO_LOAD(&lent->directives.back(), PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    }
    if (m.timeout_ms > 0) {
        int seconds = static_cast<int>((m.timeout_ms + 999) / 1000);
        lent->directives.emplace_back();
        PMIX_INFO_LOAD(&lent->directives.back(), PMIX_TIMEOUT, &seconds, PMIX_INT);
    }
    if (!m.part.empty()) {
        pmix_byte_object_t bo{m.part.data(), m.part.size()};
        lent->directives.emplace_back();
        PMIX_INFO_LOAD(&lent->directives.back(), PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    }
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata = expect(
        reactor(), [this, answer, timer, lent, key](pmix_status_t status, std::string infos) {
            reactor().cancel(*timer);
            if (status != PMIX_SUCCESS) return answer(status, 0);
            GroupResults r = group_results(infos);
            std::optional<msg::Blob> parts;
            if (r.status == PMIX_SUCCESS && !r.parts.empty() && !(parts = nodes_parts(r.parts)))
                r.status = PMIX_ERR_UNPACK_FAILURE;
            if (r.status != PMIX_SUCCESS) {
                log().error("group {}: the host's results do not decode ({})", key,
                            PMIx_Error_string(r.status));
                return answer(r.status, 0);
            }
            answer(PMIX_SUCCESS, r.context_id, parts ? std::move(*parts) : msg::Blob{});
        });
    const auto wait = m.timeout_ms > 0
                          ? std::chrono::milliseconds(m.timeout_ms) + std::chrono::seconds(1)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(kUpcallTimeout);
    *timer = reactor().after(wait, [this, cbdata, answer] {
        if (!give_up(cbdata)) return;
        log().warn("the host's group upcall did not call back in time");
        answer(PMIX_ERR_TIMEOUT, 0);
    });
    const pmix_status_t rc =
        module_.group(m.destruct ? PMIX_GROUP_DESTRUCT : PMIX_GROUP_CONSTRUCT, lent->grp.data(),
                      lent->procs.data(), lent->procs.size(),
                      lent->directives.empty() ? nullptr : lent->directives.data(),
                      lent->directives.size(), info_done, cbdata);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;  // its callback answers
    reactor().cancel(*timer);
    if (rc != PMIX_OPERATION_SUCCEEDED)
        log().info("the host's group upcall failed: {}", PMIx_Error_string(rc));
    answer(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, 0);
}

// The host delivers an invitation's or a membership's event from another node: the group actor
// keeps its state by it (group_invitations.cpp). Its group and membership are read out here, where
// the info codec is.
void HostModule::publish(msg::Event event, bool no_cache) {
    const bool group_event =
        event.status == PMIX_GROUP_INVITED || event.status == PMIX_GROUP_INVITE_ACCEPTED ||
        event.status == PMIX_GROUP_INVITE_DECLINED || event.status == PMIX_GROUP_INVITE_FAILED ||
        event.status == PMIX_GROUP_CONSTRUCT_COMPLETE ||
        event.status == PMIX_GROUP_CONSTRUCT_ABORT || event.status == PMIX_GROUP_LEFT;
    msg::HostGroupEvent m{std::move(event), no_cache, {}, {}};
    pmix_info_t *info = nullptr;
    std::size_t ninfo = 0;
    if (group_event && !m.event.info.empty() &&
        c::decode_infos(m.event.info.data(), m.event.info.size(), &info, &ninfo) == PMIX_SUCCESS) {
        for (std::size_t i = 0; i < ninfo; ++i)
            if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING &&
                info[i].value.data.string != nullptr)
                m.grp = info[i].value.data.string;
            else if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP))
                client::procs_of(info[i].value, m.members);
        PMIX_INFO_FREE(info, ninfo);
    }
    if (m.grp.empty()) return send("events", msg::NotifyEvent{std::move(m.event), m.no_cache});
    send("group", m);
}

}  // namespace zpmix::server
