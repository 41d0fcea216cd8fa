// PMIx_server_IOF_deliver: output the host read from its processes (on this node or others),
// for the tools and clients that pull it. It goes to the broker's `iof` as its own launcher's
// output does, so pulls get it with their cache size, buffering and drop policy, and the
// pullers' libraries add their tag and timestamp options as under `zpmix run`.
#include <string>

#include "actors/protocol/job.hpp"
#include "pmix.h"
#include "pmix_server.h"
#include "server/server_core.hpp"

using namespace zpmix;
using namespace zpmix::server;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                                  pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (source == nullptr || bo == nullptr || (bo->size > 0 && bo->bytes == nullptr))
        return PMIX_ERR_BAD_PARAM;
    if (!(channel & (PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL | PMIX_FWD_STDDIAG_CHANNEL)))
        return PMIX_ERR_NOT_SUPPORTED;  // stdin is not output
    const msg::Proc p = proc_of(*source);
    msg::Output out{p.nspace, p.rank,
                    static_cast<std::uint8_t>(channel & PMIX_FWD_STDOUT_CHANNEL ? 1 : 2),
                    std::string(bo->bytes, bo->size)};
    HostModule *host = c->host;
    return finish(
        *c, [host, out = std::move(out)] { host->tell("iof", out); }, cbfunc, cbdata);
}

}  // extern "C"
