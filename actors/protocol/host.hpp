#pragma once
// Between the broker's actors and the `host` actor: the resource manager that embeds zpmix as its
// PMIx server library (pmix_server.h; bindings/c/src/server/). What the broker serves through its
// tree or its launcher under `zpmix run` goes to the host's upcalls here instead: a client's
// connection and end, its abort, and (the host's own registrations) its namespaces and clients.
// Every request the host answers is answered to its asker by the host actor, as the asker would
// have answered it (an Ok, or an ErrorReply with the status).
#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/common.hpp"
#include "actors/protocol/events.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/map.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/session.hpp"

namespace zpmix::msg {

// host -> registry: a client the host will start (PMIx_server_register_client): only a process
// of `uid` that holds its namespace's secret (from PMIx_server_setup_fork) is this rank.
struct RegisterClient {
    static constexpr const char *type = "ns.client";
    Proc proc;
    std::uint32_t uid = 0, gid = 0;
    ZPMIX_MSG_MAP(proc, uid, gid);
};
// host -> registry: PMIx_server_deregister_client; a rank still connected has ended.
struct DeregisterClient {
    static constexpr const char *type = "ns.unclient";
    Proc proc;
    ZPMIX_MSG_MAP(proc);
};

// registry -> host: a registered client's Hello passed the registry's checks; the host's
// client_connected upcall decides. Accepted: `open` goes to the dispatcher (the session and the
// Welcome); refused: an ErrorReply to `peer`, answering the Hello (`id`).
struct HostClientConnected {
    static constexpr const char *type = "host.connected";
    Proc proc;
    std::string peer;
    std::uint64_t id = 0;
    SessionOpen open;
    ZPMIX_MSG_MAP(proc, peer, id, open);
};
// registry -> host: the client finalized (client_finalized), or its connection ended without
// (`finalized` false: the host hears of it as an abnormal end). A PMIx_Finalize is answered to
// `peer` under `id` once the host called back, as OpenPMIx does: the client does not exit before
// its host knows it finalized (mpirun takes an exit before that for an abnormal end).
struct HostClientEnded {
    static constexpr const char *type = "host.client_ended";
    Proc proc;
    bool finalized = true;
    std::string peer;  // empty: nobody waits
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(proc, finalized, peer, id);
};
// registry -> host: a client's PMIx_Abort (the abort upcall), answered to `peer` under `id`.
struct HostAbort {
    static constexpr const char *type = "host.abort";
    Proc proc;
    std::int32_t status = 0;
    std::string message;
    std::vector<Proc> procs;  // empty: the caller's whole namespace
    std::string peer;
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(proc, status, message, procs, peer, id);
};

// fence -> host: this node's part of a fence whose participants span the host's nodes, once every
// participant here contributed: the host's fence_nb gathers every node's. `part` is one msgpack
// bin holding the packed FencePart, self-delimiting, so that the host may concatenate the nodes'
// parts in any order.
struct HostFence {
    static constexpr const char *type = "host.fence";
    std::string key;
    std::vector<Proc> participants;
    bool collect = false;
    Blob part;
    std::uint32_t timeout_ms = 0;
    ZPMIX_MSG_MAP(key, participants, collect, part, timeout_ms);
};
// host -> fence: fence_nb's answer: every node's part as a reduction's verdict (an array of the
// parts' bins), or why there is none.
struct HostFenceDone {
    static constexpr const char *type = "host.fence_done";
    std::string key;
    std::int32_t status = 0;
    Blob result;
    ZPMIX_MSG_MAP(key, status, result);
};

// modex -> host: a local client's Get of a process on another of the host's nodes (direct_modex),
// answered to modex under the same id: a ModexData (the bytes the owner's node's
// PMIx_server_dmodex_request gave its host, a packed ProcData) or an ErrorReply.
struct HostDirectModex {
    static constexpr const char *type = "host.dmodex";
    Proc proc;
    std::uint32_t timeout_ms = 0;
    ZPMIX_MSG_MAP(proc, timeout_ms);
};

// events -> host: a client's event whose range reaches beyond this node (notify_event): the host
// carries it to its other nodes, whose hosts hand it to their libraries (PMIx_Notify_event, which
// in a host's process publishes it with the source it names).
struct HostNotify {
    static constexpr const char *type = "host.notify";
    Event event;
    ZPMIX_MSG_MAP(event);
};

// events -> host: a hosted client registered a handler for environment events (`codes`; none:
// every code): the host's register_events upcall hears of the codes no handler of the node wanted
// yet. Answered to events under the same id: an Ok, or an ErrorReply (PMIX_ERR_NOT_SUPPORTED
// without the upcall), which fails the registration.
struct HostRegisterEvents {
    static constexpr const char *type = "host.register_events";
    Proc proc;
    std::vector<std::int32_t> codes;
    ZPMIX_MSG_MAP(proc, codes);
};
// events -> host: that handler is gone; the codes no handler of the node wants any more go to
// deregister_events. Unanswered.
struct HostDeregisterEvents {
    static constexpr const char *type = "host.deregister_events";
    Proc proc;
    std::vector<std::int32_t> codes;
    ZPMIX_MSG_MAP(proc, codes);
};

// launcher -> host: a hosted client's or a tool's PMIx_Spawn (the spawn upcall), answered to `peer`
// under `id` as the launcher would: a LaunchReply with the new namespace (no pids: the host started
// them), or an ErrorReply (PMIX_ERR_NOT_SUPPORTED without the upcall).
struct HostSpawn {
    static constexpr const char *type = "host.spawn";
    Spawn request;
    std::string peer;
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(request, peer, id);
};

// Client -> host: a hosted client's part of PMIx_Connect (or PMIx_Disconnect) over `procs` (as it
// named them). Once every participant of this node called it, the host's connect (disconnect)
// upcall runs once for the node; each is answered (Ok, or an ErrorReply) when it called back.
// Without the upcall the node serves it when every participant runs here, else
// PMIX_ERR_NOT_SUPPORTED.
struct HostConnect {
    static constexpr const char *type = "host.connect";
    Proc proc;
    std::vector<Proc> procs;
    bool disconnect = false;
    std::uint32_t timeout_ms = 0;
    ZPMIX_MSG_MAP(proc, procs, disconnect, timeout_ms);
};
inline const Proc *acting_proc(const HostConnect &m) {
    return &m.proc;
}

// group -> host: a construct or destruct of a group of a host's processes, once this node's
// members are in (the group upcall): answered by HostGroupDone. Without the upcall `no_upcall`
// says so, and the group actor serves the group itself when every member runs on this node.
// A construct's `part` is this node's GroupPart (its members' contributions that say something,
// the members left out, a proposed context id) as one msgpack bin, self-delimiting as a fence's
// part is: the upcall's PMIX_GROUP_ENDPT_DATA, which the host concatenates with the other nodes'.
struct HostGroup {
    static constexpr const char *type = "host.group";
    std::string key;
    std::string grp;
    bool destruct = false;
    std::vector<Proc> members;
    std::uint32_t timeout_ms = 0;
    bool assign_context_id = false;
    Blob part;
    ZPMIX_MSG_MAP(key, grp, destruct, members, timeout_ms, assign_context_id, part);
};
// `parts`: every node's parts as the host gave them back (its results' PMIX_GROUP_ENDPT_DATA), as
// a reduction's verdict (an array of the parts' bins); empty when it gave none.
struct HostGroupDone {
    static constexpr const char *type = "host.group_done";
    std::string key;
    std::int32_t status = 0;
    bool no_upcall = false;
    std::uint64_t context_id = 0;  // 0: the host gave none
    Blob parts;
    ZPMIX_MSG_MAP(key, status, no_upcall, context_id, parts);
};

// The host's PMIx_Notify_event -> group: an event of an invitation or of a group's membership
// (PMIX_GROUP_INVITED, PMIX_GROUP_INVITE_ACCEPTED, _DECLINED, _FAILED,
// PMIX_GROUP_CONSTRUCT_COMPLETE, _CONSTRUCT_ABORT, PMIX_GROUP_LEFT) that the host carried from
// another of its nodes (its notify_event upcall there), with its PMIX_GROUP_ID and
// PMIX_GROUP_MEMBERSHIP read out. The group actor keeps its invitations and groups by it
// (group_invitations.cpp) and publishes it as the events actor would, except an answer it takes in:
// the leader hears that from its invitation.
struct HostGroupEvent {
    static constexpr const char *type = "host.group_event";
    Event event;
    bool no_cache = false;
    std::string grp;
    std::vector<Proc> members;
    ZPMIX_MSG_MAP(event, no_cache, grp, members);
};

// modex -> host: a hosted client's publish, lookup or unpublish in a range beyond its node (the
// host's publish, lookup and unpublish upcalls), answered to modex under the same id: an Ok, a
// LookupReply, or an ErrorReply.
struct HostPublish {
    static constexpr const char *type = "host.publish";
    Publish request;
    ZPMIX_MSG_MAP(request);
};
struct HostLookup {
    static constexpr const char *type = "host.lookup";
    Lookup request;
    ZPMIX_MSG_MAP(request);
};
struct HostUnpublish {
    static constexpr const char *type = "host.unpublish";
    Unpublish request;
    ZPMIX_MSG_MAP(request);
};

}  // namespace zpmix::msg
