// HostServices' I/O forwarding: a pull of a hosted job's output is told to the host's iof_pull
// upcall (the host then hands that output to PMIx_server_IOF_deliver, which the broker's `iof`
// serves to its pullers with their cache and buffering); input for a hosted job's ranks goes to
// its push_stdin upcall.
#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_services.hpp"

namespace zpmix::server {

void HostServices::iof_pull(const Envelope &, msg::HostIofPull &m) {
    if (!module_.iof_pull) return;  // what the host delivers anyway is served
    auto lent = std::make_shared<LentInfos>();
    for (const auto &p : m.procs) lent->procs.push_back(host_proc(p));
    void *cbdata = expect_op(
        "iof_pull", wait_for(0),
        [this](pmix_status_t status) {
            if (status != PMIX_SUCCESS)
                log().info("the host's iof_pull answered {}", PMIx_Error_string(status));
        },
        lent);
    const pmix_status_t rc =
        module_.iof_pull(lent->procs.data(), lent->procs.size(), nullptr, 0,
                         static_cast<pmix_iof_channel_t>(m.channels), op_done, cbdata);
    returned(rc, cbdata, [this](pmix_status_t status) {
        if (status != PMIX_SUCCESS)
            log().info("the host's iof_pull refused: {}", PMIx_Error_string(status));
    });
}

void HostServices::push_stdin(const Envelope &, msg::HostStdin &m) {
    const std::string peer = m.peer;
    const std::uint64_t id = m.id;
    auto answer = [this, peer, id](pmix_status_t status) {
        if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED)
            return send(peer, msg::Ok{}, id);
        send(peer, msg::ErrorReply{status, "the resource manager did not take the input"}, id);
    };
    if (!module_.push_stdin) return answer(PMIX_ERR_NOT_SUPPORTED);
    struct Input {
        LentInfos lent;
        std::string data;
        pmix_byte_object_t bo{};
    };
    auto in = std::make_shared<Input>();
    for (const auto &p : m.targets) in->lent.procs.push_back(host_proc(p));
    in->data = std::move(m.data);
    in->bo.bytes = in->data.empty() ? nullptr : in->data.data();
    in->bo.size = in->data.size();
    in->lent.info.reserve(1);
    if (m.eof) in->lent.add(PMIX_IOF_COMPLETE, true, PMIX_BOOL);
    pmix_proc_t source = host_proc(m.source);
    void *cbdata = expect_op("push_stdin", wait_for(0), answer, in);
    const pmix_status_t rc =
        module_.push_stdin(&source, in->lent.procs.data(), in->lent.procs.size(), in->lent.infos(),
                           in->lent.info.size(), &in->bo, op_done, cbdata);
    returned(rc, cbdata, answer);
}

}  // namespace zpmix::server
