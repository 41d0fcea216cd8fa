// HostServices' allocation requests (PMIx_Allocation_request): to the host's allocate upcall with
// the requester and the request's infos; its results go back as they came.
#include <msgpack.hpp>

#include "client/values/value_codec.hpp"
#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_services.hpp"

namespace zpmix::server {

void HostServices::allocate(const Envelope &env, msg::AllocationRequest &m) {
    if (!module_.allocate)
        return reply_error(
            env, PMIX_ERR_NOT_SUPPORTED,
            "the resource manager takes no allocation requests (no allocate upcall)");
    auto data = std::make_shared<Results>();
    if (!m.info.empty() &&
        c::decode_infos(m.info.data(), m.info.size(), &data->info, &data->ninfo) != PMIX_SUCCESS)
        return reply_error(env, PMIX_ERR_UNPACK_FAILURE, "the request's infos do not decode");
    pmix_proc_t requester;
    if (env.session && env.session->is_client())
        PMIX_LOAD_PROCID(&requester, env.session->nspace.c_str(), env.session->rank);
    else
        PMIX_LOAD_PROCID(&requester, "", PMIX_RANK_UNDEF);  // a tool
    const std::string to = env.from;
    const std::uint64_t id = env.id;
    auto answer = [this, to, id](pmix_status_t status, const Results &r) {
        if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED)
            return send(to, msg::ErrorReply{status, "the resource manager's allocate answered so"},
                        id);
        msgpack::sbuffer buf;
        c::Packer pk(buf);
        if (c::encode_infos(pk, r.ninfo ? r.info : nullptr, r.ninfo) != PMIX_SUCCESS)
            return send(to, msg::ErrorReply{PMIX_ERR_BAD_PARAM, "the results cannot be sent"}, id);
        send(to, msg::AllocationReply{msg::Blob(buf.data(), buf.data() + buf.size())}, id);
    };
    void *cbdata = expect_infos("allocate", wait_for(m.timeout_ms), answer, data);
    const pmix_status_t rc =
        module_.allocate(&requester, static_cast<pmix_alloc_directive_t>(m.directive), data->info,
                         data->ninfo, infos_done, cbdata);
    returned(rc, cbdata, [answer](pmix_status_t status) { answer(status, Results{}); });
}

}  // namespace zpmix::server
