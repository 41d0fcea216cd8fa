#pragma once
// HostModule (`host`): a resource manager's pmix_server_module_t as an actor of the broker that
// PMIx_server_init embeds in it. What the broker serves through its tree or its launcher under
// `zpmix run` comes here instead and goes to the host's upcall: a client's connection
// (client_connected2, else client_connected), its finalize (client_finalized) and its abort.
//
// Invariants and limits:
// - Upcalls run on the broker's thread. The host may call their callbacks from any thread,
//   before or after the upcall returns, and may call back into the library from inside an
//   upcall; a callback called twice, late or after finalize is logged and ignored
//   (completions.hpp).
// - An upcall the host left NULL is PMIX_ERR_NOT_SUPPORTED to the client at once, never a wait;
//   one that never calls back is bounded (kUpcallTimeout: PMIX_ERR_TIMEOUT to the client).
// - client_connected is called without a callback, as OpenPMIx does (hosts such as Slurm's
//   return PMIX_SUCCESS and never call back): its return accepts (PMIX_SUCCESS,
//   PMIX_OPERATION_SUCCEEDED) or refuses the client.
// - A client's server_object is the one the host registered it with (set_client).
// - fence_nb gets this node's part of a fence (one self-delimiting msgpack bin) and answers the
//   concatenation of every node's, in any order, which goes back to `fence` as its verdict. The
//   info array carries PMIX_COLLECT_DATA only when data is collected (Slurm reads its presence)
//   and the contributors' PMIX_TIMEOUT; the wait is bounded by that, else kUpcallTimeout.
// - notify_event gets a client's event whose range reaches beyond this node, as its handlers
//   would see it (status, source, range, the infos with the event's standard fields); without
//   the upcall it stays on this node.
// - publish, lookup and unpublish get a hosted client's requests in ranges beyond its node (the
//   node's ranges stay in the broker's own directory): publish the data as infos with PMIX_RANGE
//   and PMIX_PERSISTENCE, lookup the keys with PMIX_RANGE, PMIX_WAIT and PMIX_TIMEOUT, each with
//   the client's PMIX_USERID and PMIX_GRPID as the host registered it (mpirun's data server
//   matches on them, as OpenPMIx passes them); the infos and keys lent live until the host calls
//   back. Without the upcall: PMIX_ERR_NOT_SUPPORTED.
// - direct_modex answers the bytes the owner's node's PMIx_server_dmodex_request gave its host: a
//   packed msg::ProcData, the process's data as a reader on another node sees it.
#include <chrono>
#include <climits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "actors/protocol/host.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/runtime/actor.hpp"
#include "pmix_server.h"

namespace zpmix {
class NamespaceTable;
}

namespace zpmix::server {

struct Lent;  // what an upcall lends the host (host_module.cpp)

// The nodes' parts as a host concatenated them (each a msgpack bin: fence_nb's data, a group's
// PMIX_GROUP_ENDPT_DATA), as a verdict's array of them; none when they are not a sequence of bins.
std::optional<msg::Blob> nodes_parts(const std::string &parts);

class HostModule : public Actor {
  public:
    static constexpr auto kUpcallTimeout = std::chrono::seconds(300);  // Slurm's PMIxTimeout
    // register_events' key for a handler of every code (host_events.cpp).
    static constexpr std::int32_t kAllCodes = INT32_MIN;

    HostModule(Reactor &reactor, Bus &bus, const pmix_server_module_t &module);

    // Reactor thread: the host registered (or forgot, with nullptr and `forget`) a client.
    void set_client(const msg::Proc &proc, void *server_object, bool forget = false,
                    std::uint32_t uid = 0, std::uint32_t gid = 0);
    // Before the broker starts: where this node's processes are (the broker's namespace table,
    // and this node's name in it), for connect's participants.
    void set_node(const NamespaceTable *namespaces, std::string node);
    // Reactor thread: PMIx_server_dmodex_request.
    void dmodex_request(const msg::Proc &proc, pmix_dmodex_response_fn_t cbfunc, void *cbdata);
    // Reactor thread: a message of the host's (a registration) to one of the broker's actors.
    template <class Msg>
    void tell(const std::string &to, const Msg &m) {
        send(to, m);
    }
    // Reactor thread: the host's PMIx_Notify_event. An event of a group's invitation or membership
    // goes to the group actor (host_group.cpp), any other to the events actor.
    void publish(msg::Event event, bool no_cache);

  private:
    pmix_server_module_t module_;
    struct Client {
        void *server_object = nullptr;
        std::uint32_t uid = 0, gid = 0;  // as the host registered it
    };
    std::map<msg::Proc, Client> clients_;  // each registered client

    void connected(const Envelope &env, msg::HostClientConnected &m);
    void client_ended(const Envelope &env, msg::HostClientEnded &m);
    void abort(const Envelope &env, msg::HostAbort &m);
    void fence(const Envelope &env, msg::HostFence &m);
    void direct_modex(const Envelope &env, msg::HostDirectModex &m);
    void notify(const Envelope &env, msg::HostNotify &m);
    void publish(const Envelope &env, msg::HostPublish &hm);
    void lookup(const Envelope &env, msg::HostLookup &hm);
    void unpublish(const Envelope &env, msg::HostUnpublish &hm);
    // Handlers for environment events (host_events.cpp): the node's count of handlers for each
    // code (kAllCodes: for every code), and each client's handlers' codes, forgotten at its end.
    std::map<std::int32_t, std::size_t> event_codes_;
    std::map<msg::Proc, std::vector<std::vector<std::int32_t>>> client_event_codes_;
    void register_events(const Envelope &env, msg::HostRegisterEvents &m);
    void deregister_events(const Envelope &env, msg::HostDeregisterEvents &m);
    // Drops one handler's codes; deregister_events gets those no handler wants any more.
    void drop_event_codes(const std::vector<std::int32_t> &codes);
    void forget_event_codes(const msg::Proc &proc);  // the client ended

    // PMIx_Spawn of a hosted client (host_spawn.cpp): the spawn upcall.
    void spawn(const Envelope &env, msg::HostSpawn &m);

    // PMIx_Connect and PMIx_Disconnect of hosted clients (host_connect.cpp): this node's
    // participants collected, then the connect or disconnect upcall once. By the key of the
    // operation (which, and the procs named).
    struct ConnectOp {
        std::vector<msg::Proc> procs;  // as named
        bool disconnect = false;
        std::uint32_t timeout_ms = 0;
        std::set<msg::Proc> expected, arrived;  // this node's participants
        bool all_local = false;                 // this node runs every participant
        std::vector<Envelope> waiting;          // their requests
        Reactor::TimerId timer = 0;
    };
    std::map<std::string, ConnectOp> connects_;
    const NamespaceTable *namespaces_ = nullptr;
    std::string node_;
    void connect(const Envelope &env, msg::HostConnect &m);
    void call_connect(ConnectOp op);
    std::set<msg::Proc> local_participants(const std::vector<msg::Proc> &procs,
                                           bool &all_local) const;

    // Groups of the host's processes (host_group.cpp): the group upcall.
    void group(const Envelope &env, msg::HostGroup &m);

    // modex's answers to dmodex_request
    void modex_data(const Envelope &env, msg::ModexData &m);
    void modex_error(const Envelope &env, msg::ErrorReply &m);  // or another request's refusal
    void done(const Envelope &env, msg::Ok &m);

    // PMIx_server_dmodex_request: what a process of this node committed, for another node, to
    // the host's callback (the bytes direct_modex gets on that node).
    struct DmodexRequest {
        pmix_dmodex_response_fn_t cbfunc;
        void *cbdata;
    };
    std::map<std::uint64_t, DmodexRequest> dmodex_requests_;
    std::uint64_t next_request_ = 1;

    void *object_of(const msg::Proc &p) const;
    // The client's PMIX_USERID and PMIX_GRPID, as the host registered it.
    void add_identity(Lent &lent, const msg::Proc &proc) const;
    // A publish, lookup or unpublish the host has no upcall for: NOT_SUPPORTED to modex.
    void no_directory(const char *upcall, std::uint64_t id);
    // Waits for an op_cbfunc of the host: then answers `peer` (Ok, or its status) under `id`,
    // bounded by kUpcallTimeout. Returns the cbdata for the upcall.
    // `keep` lives until then (what the upcall lent the host).
    void *answer_when_done(const std::string &what, std::string peer, std::uint64_t id,
                           std::shared_ptr<void> keep = {});
    // An upcall returned: PMIX_SUCCESS waits for its callback; anything else is the answer now.
    void returned(pmix_status_t rc, void *cbdata, const std::string &what, const std::string &peer,
                  std::uint64_t id);
};

}  // namespace zpmix::server
