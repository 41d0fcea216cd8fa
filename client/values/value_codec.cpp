// zpmix: msgpack encoding/decoding of PMIx values (see value_codec.hpp for the wire form): the
// entry points, over the type table's wire operations (pmix_types.hpp).
#include "client/values/value_codec.hpp"
#include "client/values/pmix_objects.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "client/values/pmix_type_ops.hpp"
#include "client/values/wire_fields.hpp"
#include "pmix.h"

namespace zpmix::c {
namespace {

// Unpacks exactly one object from [data, data+len), bounding every declared size by len.
template <class F>
pmix_status_t from_bytes(const char *data, size_t len, F &&decode) {
    if (data == nullptr && len != 0) return PMIX_ERR_BAD_PARAM;
    try {
        size_t lim = len;  // every element takes at least one byte of input
        msgpack::unpack_limit limit(lim, lim, lim, lim, lim, kMaxDepth * 4);
        size_t off = 0;
        bool referenced = false;
        // Sized to the input: a small blob costs one small chunk, not msgpack-c's default 8 KiB.
        msgpack::zone zone(std::min<size_t>(8192, 4 * len + 256));
        // strings/bins reference `data` (no copy); decoders copy exactly once into malloc'ed memory
        const msgpack::object obj = msgpack::unpack(
            zone, data, len, off, referenced,
            [](msgpack::type::object_type, std::size_t, void *) { return true; }, nullptr, limit);
        if (off != len) return kBad;
        return decode(obj);
    } catch (const std::bad_alloc &) {
        return PMIX_ERR_NOMEM;
    } catch (...) {
        return kBad;
    }
}

}  // namespace

// ---------------------------------------------------------------- public API

pmix_status_t encode_value(Packer &pk, const pmix_value_t &value) {
    if (!value_encodable(value, 0)) return PMIX_ERR_NOT_SUPPORTED;
    pack_value(pk, value);
    return PMIX_SUCCESS;
}

pmix_status_t encode_info(Packer &pk, const pmix_info_t &info) {
    if (!value_encodable(info.value, 0)) return PMIX_ERR_NOT_SUPPORTED;
    pack_info(pk, info);
    return PMIX_SUCCESS;
}

pmix_status_t encode_proc(Packer &pk, const pmix_proc_t &proc) {
    pack_proc(pk, proc);
    return PMIX_SUCCESS;
}

pmix_status_t encode_infos(Packer &pk, const pmix_info_t *info, size_t ninfo) {
    if (info == nullptr && ninfo != 0) return PMIX_ERR_BAD_PARAM;
    if (ninfo > std::numeric_limits<uint32_t>::max()) return PMIX_ERR_BAD_PARAM;
    if (!array_encodable(PMIX_INFO, info, ninfo, 0)) return PMIX_ERR_NOT_SUPPORTED;
    pack_array_of(pk, PMIX_INFO, info, ninfo);
    return PMIX_SUCCESS;
}

pmix_status_t decode_value(const msgpack::object &obj, pmix_value_t *out) {
    if (out == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_status_t rc = unpack_value(obj, out, 0);
    if (rc != PMIX_SUCCESS) value_destruct(out);
    return rc;
}

pmix_status_t decode_info(const msgpack::object &obj, pmix_info_t *out) {
    if (out == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(out, 0, sizeof(*out));
    return unpack_object(obj, PMIX_INFO, out, 0);
}

pmix_status_t decode_proc(const msgpack::object &obj, pmix_proc_t *out) {
    if (out == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(out, 0, sizeof(*out));
    pmix_status_t rc = get_proc(obj, out);
    if (rc != PMIX_SUCCESS) memset(out, 0, sizeof(*out));
    return rc;
}

pmix_status_t decode_infos(const msgpack::object &obj, pmix_info_t **out, size_t *nout) {
    if (out == nullptr || nout == nullptr) return PMIX_ERR_BAD_PARAM;
    void *arr = nullptr;
    pmix_status_t rc = unpack_array_of(obj, PMIX_INFO, &arr, nout, 0);
    *out = static_cast<pmix_info_t *>(arr);
    return rc;
}

pmix_status_t decode_value(const char *data, size_t len, pmix_value_t *out) {
    if (out == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(out, 0, sizeof(*out));
    return from_bytes(data, len, [&](const msgpack::object &o) { return decode_value(o, out); });
}

pmix_status_t decode_info(const char *data, size_t len, pmix_info_t *out) {
    if (out == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(out, 0, sizeof(*out));
    return from_bytes(data, len, [&](const msgpack::object &o) { return decode_info(o, out); });
}

pmix_status_t decode_infos(const char *data, size_t len, pmix_info_t **out, size_t *nout) {
    if (out == nullptr || nout == nullptr) return PMIX_ERR_BAD_PARAM;
    *out = nullptr;
    *nout = 0;
    return from_bytes(data, len,
                      [&](const msgpack::object &o) { return decode_infos(o, out, nout); });
}

}  // namespace zpmix::c
