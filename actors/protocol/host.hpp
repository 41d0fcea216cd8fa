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
