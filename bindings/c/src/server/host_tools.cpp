// HostServices' tools (RFC0010): a tool's Hello that passed the broker's checks goes to the
// host's tool_connected upcall, with the name the tool gave itself (PMIX_NSPACE, PMIX_RANK, as
// OpenPMIx passes a tool's own name), its pid and uid. The host admits it under the name it gives
// (told to the tool in its Welcome) or refuses it. Without the upcall a tool is admitted under its
// own name.
//
// The name matters to Open MPI 4.1's mpirun: its tool_connected files a tool without one under a
// new job of mpirun's own, which never ends, and mpirun then waits for it forever after its job
// ended; a tool with a name it files under a job of that name, which mpirun does not wait for.
// (It then refuses every tool, PMIX_ERR_NOT_SUPPORTED.)
#include <sys/types.h>

#include <cstdlib>
#include <cstring>

#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_module.hpp"
#include "server/host_services.hpp"

namespace zpmix::server {

namespace {

// The Welcome of `open` naming the tool as the host did.
bool name_tool_in(msg::SessionOpen &open, const msg::Proc &name) {
    try {
        Envelope env = decode(open.welcome.data(), open.welcome.size());
        auto w = env.as<msg::Welcome>();
        w.tool = name;
        const zmq::message_t bytes = encode(msg::Welcome::type, env.id, w, env.from);
        const char *data = static_cast<const char *>(bytes.data());
        open.welcome.assign(data, data + bytes.size());
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

}  // namespace

void HostServices::tool_connected(const Envelope &, msg::HostToolConnected &m) {
    if (!module_.tool_connected) return send("broker", m.open);
    auto lent = std::make_shared<LentInfos>();
    lent->info.reserve(5);
    lent->add_string(PMIX_NSPACE, m.tool.nspace);
    lent->add(PMIX_RANK, static_cast<pmix_rank_t>(m.tool.rank), PMIX_PROC_RANK);
    lent->add(PMIX_PROC_PID, static_cast<pid_t>(m.peer_pid > 0 ? m.peer_pid : m.pid), PMIX_PID);
    if (m.uid >= 0) lent->add(PMIX_USERID, static_cast<std::uint32_t>(m.uid), PMIX_UINT32);
    auto open = std::make_shared<msg::SessionOpen>(std::move(m.open));
    const std::string peer = m.peer;
    const std::uint64_t id = m.id;
    const std::int64_t pid = m.pid;
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata = expect(reactor(), [this, timer, open, peer, id, pid, lent](pmix_status_t status,
                                                                              std::string name) {
        reactor().cancel(*timer);
        const auto nul = name.find('\0');
        if (status != PMIX_SUCCESS || nul == std::string::npos) {
            log().warn("the resource manager refused tool pid {}: {}", pid,
                       PMIx_Error_string(status == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : status));
            return send(peer,
                        msg::ErrorReply{status == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : status,
                                        "the resource manager refused this tool"},
                        id);
        }
        msg::Proc named{name.substr(0, nul), static_cast<std::uint32_t>(std::strtoul(
                                                 name.c_str() + nul + 1, nullptr, 10))};
        if (named.nspace.empty() || !name_tool_in(*open, named))
            log().warn("tool pid {}: the resource manager's name for it is not usable", pid);
        else
            log().info("the resource manager admitted tool pid {} as {}.{}", pid, named.nspace,
                       named.rank);
        send("broker", *open);
    });
    *timer = reactor().after(HostModule::kUpcallTimeout, [this, cbdata, peer, id] {
        if (!give_up(cbdata)) return;
        log().warn("the host's tool_connected upcall did not call back in time");
        send(peer, msg::ErrorReply{PMIX_ERR_TIMEOUT, "the resource manager did not admit the tool"},
             id);
    });
    module_.tool_connected(lent->infos(), lent->info.size(), tool_done, cbdata);
}

}  // namespace zpmix::server
