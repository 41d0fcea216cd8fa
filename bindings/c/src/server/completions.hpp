#pragma once
// What the host's callbacks complete. An upcall that takes a callback gets, as its cbdata, the id
// of an expected completion (never a pointer of ours); the host may call the callback from any
// thread, before or after the upcall returns. The first call runs the completion on its reactor's
// thread; a second call, or one for an id given up (its timeout passed, the server finalized),
// finds nothing: it is logged and ignored, never a crash.
#include <cstdint>
#include <functional>
#include <string>

#include "actors/runtime/reactor.hpp"
#include "pmix_common.h"

namespace zpmix::server {

// What a callback brings: its status and, for those that carry bytes (modex), the bytes.
using Completion = std::function<void(pmix_status_t, std::string data)>;

// Expects one callback; its cbdata.
void *expect(Reactor &reactor, Completion done);
// Gives up an expected callback (its timeout passed): a later call is logged and ignored. True
// when it was still expected.
bool give_up(void *cbdata);
// Gives up every expected callback (PMIx_server_finalize).
void give_up_all();

// The C callbacks hosts call, for the upcalls' cbfunc arguments.
void op_done(pmix_status_t status, void *cbdata);
void modex_done(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                pmix_release_cbfunc_t release, void *release_cbdata);
// Brings the infos (the value codec's encode_infos) as the data; the host's release runs after.
void info_done(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
               pmix_release_cbfunc_t release, void *release_cbdata);
// Brings the new job's namespace as the data.
void spawn_done(pmix_status_t status, char nspace[], void *cbdata);
// Brings the found data as the bytes of a msg::LookupReply (its values in the wire form).
void lookup_done(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata);
// Brings the tool's name the host gave (tool_connected): "<nspace>\0<rank>", none when refused.
void tool_done(pmix_status_t status, pmix_proc_t *proc, void *cbdata);
// Brings the results as the bytes of their wire form (c::encode_infos; decode_infos reads them).
void infos_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                pmix_release_cbfunc_t release, void *release_cbdata);

}  // namespace zpmix::server
