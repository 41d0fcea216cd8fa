// zpmix: msgpack wire form of PMIx values, infos and process IDs.
//
// A value is a 2-element array [type, payload]: `type` is the uint16 PMIx data type code and
// `payload` the natural msgpack form of the data (numbers as ints/floats, strings as str or nil,
// byte objects as bin, a proc as [nspace, rank], a data array as [elemtype, [payload...]] ...).
// PMIX_POINTER (and opaque non-hwloc cpusets/topologies) cannot cross processes: encoding
// returns PMIX_ERR_NOT_SUPPORTED without writing anything.
//
// Decoders allocate exactly like PMIx_Value_load (PMIX_VALUE_RELEASE / PMIX_INFO_FREE free the
// result) and return PMIX_ERR_UNPACK_FAILURE (wrong shapes or kinds) or PMIX_ERR_BAD_PARAM
// (unknown or non-transferable type codes, over-long keys) on malformed input, leaving the
// output zeroed. The byte-level decoders bound every declared size by the input length.
#pragma once

#include <cstddef>

#include <msgpack.hpp>

#include "pmix_common.h"

namespace zpmix::c {

using Packer = msgpack::packer<msgpack::sbuffer>;

// [type, payload]
pmix_status_t encode_value(Packer &pk, const pmix_value_t &value);
// [key, flags, value]
pmix_status_t encode_info(Packer &pk, const pmix_info_t &info);
// [nspace, rank]
pmix_status_t encode_proc(Packer &pk, const pmix_proc_t &proc);
// [info...]
pmix_status_t encode_infos(Packer &pk, const pmix_info_t *info, size_t ninfo);

// `out` is overwritten (not destructed first).
pmix_status_t decode_value(const msgpack::object &obj, pmix_value_t *out);
pmix_status_t decode_info(const msgpack::object &obj, pmix_info_t *out);
pmix_status_t decode_proc(const msgpack::object &obj, pmix_proc_t *out);
// *out = PMIX_INFO_CREATE'd array (NULL when empty), *nout its size.
pmix_status_t decode_infos(const msgpack::object &obj, pmix_info_t **out, size_t *nout);

// Same, from raw bytes (one complete msgpack object; trailing bytes are an error).
pmix_status_t decode_value(const char *data, size_t len, pmix_value_t *out);
pmix_status_t decode_info(const char *data, size_t len, pmix_info_t *out);
pmix_status_t decode_infos(const char *data, size_t len, pmix_info_t **out, size_t *nout);

}  // namespace zpmix::c
