#include "client/events/local_event.hpp"
#include "client/values/pmix_helpers.hpp"
#include "client/values/pmix_objects.hpp"

#include <cstring>
#include <stdexcept>

#include "actors/runtime/envelope.hpp"
#include "client/values/value_codec.hpp"

namespace zpmix::client {

msg::Proc to_msg(const pmix_proc_t &p) {
    return {std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank};
}

pmix_proc_t to_pmix(const msg::Proc &p) {
    pmix_proc_t out{};
    c::load_proc(&out, p.nspace.c_str(), p.rank);
    return out;
}

LocalEvent::~LocalEvent() {
    if (info != nullptr) c::array_free(PMIX_INFO, info, ninfo);
}

std::shared_ptr<LocalEvent> LocalEvent::from_wire(const msg::Event &ev) {
    auto out = std::make_shared<LocalEvent>();
    out->status = ev.status;
    out->source = to_pmix(ev.source);
    out->range = ev.range;
    out->affected = ev.affected;
    out->addressed_to = ev.custom_range;
    out->non_default = ev.non_default;
    out->enviro = ev.enviro;

    pmix_info_t *decoded = nullptr;
    size_t ndecoded = 0;
    if (!ev.info.empty()) {
        const pmix_status_t rc =
            c::decode_infos(ev.info.data(), ev.info.size(), &decoded, &ndecoded);
        if (rc != PMIX_SUCCESS) throw std::runtime_error("undecodable event info");
    }
    // The event's own fields travel as attributes too: handlers look for them in the info array.
    const size_t extra = (ev.affected.size() == 1 ? 1 : 0) + (ev.affected.size() > 1 ? 1 : 0) +
                         (ev.text.empty() ? 0 : 1) + (ev.timestamp != 0 ? 1 : 0);
    out->ninfo = ndecoded + extra;
    if (extra == 0) {  // the decoded array is the event's, as it is
        out->info = decoded;
        return out;
    }
    out->info = static_cast<pmix_info_t *>(c::array_create(PMIX_INFO, out->ninfo));
    size_t n = 0;
    for (; n < ndecoded; ++n) c::info_xfer(&out->info[n], &decoded[n]);
    if (decoded != nullptr) c::array_free(PMIX_INFO, decoded, ndecoded);
    if (ev.affected.size() == 1) {
        pmix_proc_t p = to_pmix(ev.affected[0]);
        c::info_load(&out->info[n++], PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC);
    } else if (ev.affected.size() > 1) {
        std::vector<pmix_proc_t> procs;
        for (const auto &p : ev.affected) procs.push_back(to_pmix(p));
        pmix_data_array_t arr{PMIX_PROC, procs.size(), procs.data()};
        c::info_load(&out->info[n++], PMIX_EVENT_AFFECTED_PROCS, &arr, PMIX_DATA_ARRAY);
    }
    if (!ev.text.empty())
        c::info_load(&out->info[n++], PMIX_EVENT_TEXT_MESSAGE, ev.text.c_str(), PMIX_STRING);
    if (ev.timestamp != 0) {
        time_t t = static_cast<time_t>(ev.timestamp);
        c::info_load(&out->info[n++], PMIX_EVENT_TIMESTAMP, &t, PMIX_TIME);
    }
    return out;
}

bool procs_of(const pmix_value_t &v, std::vector<msg::Proc> &out) {
    if (v.type == PMIX_PROC && v.data.proc != nullptr) {
        out.push_back(to_msg(*v.data.proc));
        return true;
    }
    if (v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr && v.data.darray->type == PMIX_PROC) {
        const auto *procs = static_cast<const pmix_proc_t *>(v.data.darray->array);
        for (size_t i = 0; i < v.data.darray->size; ++i) out.push_back(to_msg(procs[i]));
        return true;
    }
    return false;
}

pmix_status_t LocalEvent::to_wire(pmix_status_t status, const pmix_proc_t &source,
                                  pmix_data_range_t range, const pmix_info_t *info, size_t ninfo,
                                  msg::Event &out, bool &do_not_cache) {
    out.status = status;
    out.source = to_msg(source);
    out.range = range;
    do_not_cache = false;
    // Attributes that are fields of the wire event are not repeated in its info blob.
    std::vector<const pmix_info_t *> rest;
    for (size_t i = 0; i < ninfo; ++i) {
        const pmix_info_t &in = info[i];
        if (PMIX_CHECK_KEY(&in, PMIX_EVENT_CUSTOM_RANGE)) {
            procs_of(in.value, out.custom_range);
            if (out.custom_range.empty()) return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_AFFECTED_PROC) ||
                   PMIX_CHECK_KEY(&in, PMIX_EVENT_AFFECTED_PROCS)) {
            procs_of(in.value, out.affected);
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_NON_DEFAULT)) {
            out.non_default = (c::check_true(&in.value) == PMIX_BOOL_TRUE);
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_DO_NOT_CACHE)) {
            do_not_cache = (c::check_true(&in.value) == PMIX_BOOL_TRUE);
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_TEXT_MESSAGE)) {
            if (in.value.type == PMIX_STRING && in.value.data.string != nullptr)
                out.text = in.value.data.string;
        } else if (PMIX_CHECK_KEY(&in, PMIX_EVENT_TIMESTAMP)) {
            if (in.value.type == PMIX_TIME) out.timestamp = in.value.data.time;
        } else {
            rest.push_back(&in);
        }
    }
    if (range == PMIX_RANGE_CUSTOM && out.custom_range.empty()) return PMIX_ERR_BAD_PARAM;
    // PMIX_EVENT_CUSTOM_RANGE names the targets whatever the range, as OpenPMIx takes them (its
    // debuggerd example releases its target with PMIX_RANGE_LOCAL and them).
    if (!out.custom_range.empty()) out.range = PMIX_RANGE_CUSTOM;
    msgpack::sbuffer buf;
    c::Packer pk(buf);
    pk.pack_array(static_cast<uint32_t>(rest.size()));
    for (const pmix_info_t *in : rest)
        if (pmix_status_t rc = c::encode_info(pk, *in); rc != PMIX_SUCCESS) return rc;
    out.info.assign(buf.data(), buf.data() + buf.size());
    return PMIX_SUCCESS;
}

}  // namespace zpmix::client
