// zpmix: PMIx_Allocation_request(_nb): one request for the resource manager hosting the broker
// (its allocate upcall, actors/protocol/host_services.hpp). zpmix schedules nothing itself: under
// `zpmix run` the broker has no actor for it and answers PMIX_ERR_NOT_SUPPORTED.
#include "process.hpp"

#include <msgpack.hpp>

#include "actors/protocol/host_services.hpp"
#include "client/values/value_codec.hpp"
#include "info_values.hpp"
#include "pmix.h"

namespace zpmix::c {

namespace {

pmix_status_t allocation_message(pmix_alloc_directive_t directive, const pmix_info_t *info,
                                 size_t ninfo, msg::AllocationRequest &m) {
    m.directive = directive;
    msgpack::sbuffer buf;
    Packer pk(buf);
    if (pmix_status_t rc = encode_infos(pk, ninfo ? info : nullptr, ninfo); rc != PMIX_SUCCESS)
        return rc;
    m.info.assign(buf.data(), buf.data() + buf.size());
    for (size_t i = 0; info && i < ninfo; ++i)
        if (is_key(info[i], PMIX_TIMEOUT) && info[i].value.type == PMIX_INT &&
            info[i].value.data.integer > 0)
            m.timeout_ms = static_cast<std::uint32_t>(info[i].value.data.integer) * 1000;
    return PMIX_SUCCESS;
}

// The host's results from its reply; the status of the exchange otherwise.
pmix_status_t allocation_results(pmix_status_t status, const Envelope *env, pmix_info_t **out,
                                 size_t *nout) {
    *out = nullptr;
    *nout = 0;
    if (status != PMIX_SUCCESS || env == nullptr) return status;
    try {
        const auto r = env->as<msg::AllocationReply>();
        if (r.results.empty()) return PMIX_SUCCESS;
        return decode_infos(r.results.data(), r.results.size(), out, nout);
    } catch (const DecodeError &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
}

void free_allocation_results(void *cbdata) {
    auto *r = static_cast<std::pair<pmix_info_t *, size_t> *>(cbdata);
    if (r->first) PMIX_INFO_FREE(r->first, r->second);
    delete r;
}

}  // namespace

}  // namespace zpmix::c

using namespace zpmix;
using namespace zpmix::c;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                                  pmix_info_t *info, size_t ninfo,
                                                  pmix_info_t **results, size_t *nresults) {
    if (results == nullptr || nresults == nullptr) return PMIX_ERR_BAD_PARAM;
    *results = nullptr;
    *nresults = 0;
    msg::AllocationRequest m;
    if (pmix_status_t rc = allocation_message(directive, info, ninfo, m); rc != PMIX_SUCCESS)
        return rc;
    client::Session::Reply reply;
    const pmix_status_t rc = ask(m, m.timeout_ms, reply);
    return allocation_results(rc, rc == PMIX_SUCCESS ? &reply.env : nullptr, results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                                     pmix_info_t *info, size_t ninfo,
                                                     pmix_info_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    msg::AllocationRequest m;
    if (pmix_status_t rc = allocation_message(directive, info, ninfo, m); rc != PMIX_SUCCESS)
        return rc;
    return submit(m, m.timeout_ms, [cbfunc, cbdata](pmix_status_t status, const Envelope *env) {
        auto *r = new std::pair<pmix_info_t *, size_t>(nullptr, 0);
        status = allocation_results(status, env, &r->first, &r->second);
        cbfunc(status, r->first, r->second, cbdata, free_allocation_results, r);
    });
}

}  // extern "C"
