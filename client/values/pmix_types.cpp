// zpmix: the table of PMIx data types, the operations of the fixed-width numbers, and the
// dispatch of every object operation through the table.
#include "client/values/pmix_types.hpp"
#include "client/values/pmix_objects.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "client/values/pmix_type_ops.hpp"
#include "client/values/wire_fields.hpp"
#include "pmix.h"

namespace zpmix::c {
namespace {

// ---------------------------------------------------------------- fixed-width numbers

template <class T>
struct Number {
    static T get(const void *o) noexcept { return *static_cast<const T *>(o); }

    static pmix_value_cmp_t compare(const void *a, const void *b) noexcept {
        return num(get(a), get(b));
    }

    static void pack(Packer &pk, const void *o) {
        T x = get(o);
        if constexpr (std::is_same_v<T, bool>)
            pk.pack(x);
        else if constexpr (std::is_floating_point_v<T>)
            pack_real(pk, x);
        else if constexpr (std::is_signed_v<T> && sizeof(T) == 1)
            pk.pack_int8(x);
        else if constexpr (std::is_signed_v<T> && sizeof(T) == 2)
            pk.pack_int16(x);
        else if constexpr (std::is_signed_v<T> && sizeof(T) == 4)
            pk.pack_int32(x);
        else if constexpr (std::is_signed_v<T>)
            pk.pack_int64(x);
        else if constexpr (sizeof(T) == 1)
            pk.pack_uint8(x);
        else if constexpr (sizeof(T) == 2)
            pk.pack_uint16(x);
        else if constexpr (sizeof(T) == 4)
            pk.pack_uint32(x);
        else
            pk.pack_uint64(x);
    }

    static pmix_status_t unpack(const msgpack::object &o, void *dst, int) {
        auto *out = static_cast<T *>(dst);
        if constexpr (std::is_same_v<T, bool>) {
            if (o.type != object_type::BOOLEAN) return kBad;
            *out = o.via.boolean;
            return PMIX_SUCCESS;
        } else if constexpr (std::is_floating_point_v<T>) {
            return get_float(o, out);
        } else {
            return get_int(o, out);
        }
    }

    static void print(std::string &out, const void *o) {
        T x = get(o);
        if constexpr (std::is_same_v<T, bool>) {
            out += x ? "true" : "false";
            return;
        }
        char buf[128];  // a double's "%f" takes up to 317 characters: the first 127 are shown
        if constexpr (std::is_floating_point_v<T>)
            snprintf(buf, sizeof buf, "%f", static_cast<double>(x));
        else if constexpr (std::is_signed_v<T>)
            snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
        else
            snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(x));
        out += buf;
    }
};

// A number PMIx_Value_string prints as its value.
template <class T>
constexpr TypeOps kNumber{.compare = Number<T>::compare,
                          .pack = Number<T>::pack,
                          .unpack = Number<T>::unpack,
                          .print = Number<T>::print};
// A code (state, scope, directive ...): printed by name in libpmix, or as "<TYPE>".
template <class T>
constexpr TypeOps kCode{
    .compare = Number<T>::compare, .pack = Number<T>::pack, .unpack = Number<T>::unpack};

// ---------------------------------------------------------------- the table

using enum ValueHolding;

// The name is the code's macro name.
#define ROW(code, T, holding, ops) \
    { code, #code, sizeof(T), holding, ops }
#define NO_OBJECT(code) \
    { code, #code, 0, unsupported, nullptr }

constexpr DataType kTypes[] = {
    {PMIX_UNDEF, "PMIX_UNDEF", 0, none, nullptr},
    ROW(PMIX_BOOL, bool, inline_, &kNumber<bool>),
    ROW(PMIX_BYTE, uint8_t, inline_, &kNumber<uint8_t>),
    ROW(PMIX_STRING, char *, inline_, &kStringOps),
    ROW(PMIX_SIZE, size_t, inline_, &kNumber<size_t>),
    ROW(PMIX_PID, pid_t, inline_, &kNumber<pid_t>),
    ROW(PMIX_INT, int, inline_, &kNumber<int>),
    ROW(PMIX_INT8, int8_t, inline_, &kNumber<int8_t>),
    ROW(PMIX_INT16, int16_t, inline_, &kNumber<int16_t>),
    ROW(PMIX_INT32, int32_t, inline_, &kNumber<int32_t>),
    ROW(PMIX_INT64, int64_t, inline_, &kNumber<int64_t>),
    ROW(PMIX_UINT, unsigned int, inline_, &kNumber<unsigned int>),
    ROW(PMIX_UINT8, uint8_t, inline_, &kNumber<uint8_t>),
    ROW(PMIX_UINT16, uint16_t, inline_, &kNumber<uint16_t>),
    ROW(PMIX_UINT32, uint32_t, inline_, &kNumber<uint32_t>),
    ROW(PMIX_UINT64, uint64_t, inline_, &kNumber<uint64_t>),
    ROW(PMIX_FLOAT, float, inline_, &kNumber<float>),
    ROW(PMIX_DOUBLE, double, inline_, &kNumber<double>),
    ROW(PMIX_TIMEVAL, struct timeval, inline_, &kTimevalOps),
    ROW(PMIX_TIME, time_t, inline_, &kNumber<time_t>),
    ROW(PMIX_STATUS, pmix_status_t, inline_, &kCode<pmix_status_t>),
    ROW(PMIX_VALUE, pmix_value_t, unsupported, &kValueOps),
    ROW(PMIX_PROC, pmix_proc_t, pointer, &kProcOps),
    ROW(PMIX_APP, pmix_app_t, unsupported, &kAppOps),
    ROW(PMIX_INFO, pmix_info_t, unsupported, &kInfoOps),
    ROW(PMIX_PDATA, pmix_pdata_t, unsupported, &kPdataOps),
    NO_OBJECT(PMIX_BUFFER),
    ROW(PMIX_BYTE_OBJECT, pmix_byte_object_t, inline_, &kByteObjectOps),
    NO_OBJECT(PMIX_KVAL),
    ROW(PMIX_PERSIST, pmix_persistence_t, inline_, &kCode<pmix_persistence_t>),
    ROW(PMIX_POINTER, void *, inline_, &kPointerOps),
    ROW(PMIX_SCOPE, pmix_scope_t, inline_, &kCode<pmix_scope_t>),
    ROW(PMIX_DATA_RANGE, pmix_data_range_t, inline_, &kCode<pmix_data_range_t>),
    ROW(PMIX_COMMAND, uint8_t, inline_, &kCode<uint8_t>),
    ROW(PMIX_INFO_DIRECTIVES, pmix_info_directives_t, inline_, &kCode<pmix_info_directives_t>),
    ROW(PMIX_DATA_TYPE, pmix_data_type_t, inline_, &kCode<pmix_data_type_t>),
    ROW(PMIX_PROC_STATE, pmix_proc_state_t, inline_, &kCode<pmix_proc_state_t>),
    ROW(PMIX_PROC_INFO, pmix_proc_info_t, pointer, &kProcInfoOps),
    ROW(PMIX_DATA_ARRAY, pmix_data_array_t, pointer, &kDataArrayOps),
    ROW(PMIX_PROC_RANK, pmix_rank_t, inline_, &kNumber<pmix_rank_t>),
    ROW(PMIX_QUERY, pmix_query_t, unsupported, &kQueryOps),
    ROW(PMIX_COMPRESSED_STRING, pmix_byte_object_t, inline_, &kByteObjectOps),
    ROW(PMIX_ALLOC_DIRECTIVE, pmix_alloc_directive_t, inline_, &kCode<pmix_alloc_directive_t>),
    ROW(PMIX_IOF_CHANNEL, pmix_iof_channel_t, inline_, &kCode<pmix_iof_channel_t>),
    ROW(PMIX_ENVAR, pmix_envar_t, inline_, &kEnvarOps),
    ROW(PMIX_COORD, pmix_coord_t, pointer, &kCoordOps),
    ROW(PMIX_REGATTR, pmix_regattr_t, pointer, &kRegattrOps),
    ROW(PMIX_REGEX, pmix_byte_object_t, inline_, &kByteObjectOps),
    ROW(PMIX_JOB_STATE, pmix_job_state_t, inline_, &kCode<pmix_job_state_t>),
    ROW(PMIX_LINK_STATE, pmix_link_state_t, inline_, &kCode<pmix_link_state_t>),
    ROW(PMIX_PROC_CPUSET, pmix_cpuset_t, pointer, &kCpusetOps),
    ROW(PMIX_GEOMETRY, pmix_geometry_t, pointer, &kGeometryOps),
    ROW(PMIX_DEVICE_DIST, pmix_device_distance_t, pointer, &kDeviceDistOps),
    ROW(PMIX_ENDPOINT, pmix_endpoint_t, pointer, &kEndpointOps),
    ROW(PMIX_TOPO, pmix_topology_t, pointer, &kTopologyOps),
    ROW(PMIX_DEVTYPE, pmix_device_type_t, inline_, &kCode<pmix_device_type_t>),
    ROW(PMIX_LOCTYPE, pmix_locality_t, inline_, &kCode<pmix_locality_t>),
    ROW(PMIX_COMPRESSED_BYTE_OBJECT, pmix_byte_object_t, inline_, &kByteObjectOps),
    ROW(PMIX_PROC_NSPACE, pmix_nspace_t, pointer, &kNspaceOps),
    ROW(PMIX_PROC_STATS, pmix_proc_stats_t, pointer, &kProcStatsOps),
    ROW(PMIX_DISK_STATS, pmix_disk_stats_t, pointer, &kDiskStatsOps),
    ROW(PMIX_NET_STATS, pmix_net_stats_t, pointer, &kNetStatsOps),
    ROW(PMIX_NODE_STATS, pmix_node_stats_t, pointer, &kNodeStatsOps),
    ROW(PMIX_DATA_BUFFER, pmix_data_buffer_t, pointer, &kDataBufferOps),
    ROW(PMIX_STOR_MEDIUM, pmix_storage_medium_t, inline_, &kCode<pmix_storage_medium_t>),
    ROW(PMIX_STOR_ACCESS, pmix_storage_accessibility_t, inline_,
        &kCode<pmix_storage_accessibility_t>),
    ROW(PMIX_STOR_PERSIST, pmix_storage_persistence_t, inline_, &kCode<pmix_storage_persistence_t>),
    ROW(PMIX_STOR_ACCESS_TYPE, pmix_storage_access_type_t, inline_,
        &kCode<pmix_storage_access_type_t>),
};

#undef ROW
#undef NO_OBJECT

constexpr DataType kUnknown{0, "UNKNOWN DATA TYPE", 0, unsupported, nullptr};

constexpr size_t kCodes = PMIX_STOR_ACCESS_TYPE + 1;

// Row index by code (kNoRow: no row).
constexpr uint8_t kNoRow = 0xff;
constexpr auto kIndex = [] {
    std::array<uint8_t, kCodes> index{};
    index.fill(kNoRow);
    for (size_t i = 0; i < std::size(kTypes); ++i) index[kTypes[i].code] = static_cast<uint8_t>(i);
    return index;
}();

static_assert(std::size(kTypes) < kNoRow);
static_assert(kTypes[std::size(kTypes) - 1].code == kCodes - 1);

}  // namespace

const DataType &data_type(pmix_data_type_t t) noexcept {
    if (t >= kCodes || kIndex[t] == kNoRow) return kUnknown;
    return kTypes[kIndex[t]];
}

std::span<const DataType> data_types() noexcept {
    return kTypes;
}

// ---------------------------------------------------------------- memory

void object_destruct(pmix_data_type_t t, void *obj) noexcept {
    if (obj == nullptr) return;
    const DataType &d = data_type(t);
    if (d.ops != nullptr && d.ops->destruct != nullptr) d.ops->destruct(obj);
    if (d.size != 0) memset(obj, 0, d.size);
}

pmix_status_t object_xfer(pmix_data_type_t t, void *dst, const void *src) noexcept {
    const DataType &d = data_type(t);
    if (d.size == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (dst == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(dst, 0, d.size);
    if (d.ops->xfer == nullptr) {
        memcpy(dst, src, d.size);
        return PMIX_SUCCESS;
    }
    pmix_status_t rc = d.ops->xfer(dst, src);
    if (rc != PMIX_SUCCESS) object_destruct(t, dst);
    return rc;
}

pmix_status_t array_copy(pmix_data_type_t t, void **dst, const void *src, size_t n) noexcept {
    *dst = nullptr;
    size_t sz = type_size(t);
    if (sz == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (n == 0 || src == nullptr) return PMIX_SUCCESS;
    auto *out = static_cast<char *>(array_create(t, n));
    if (out == nullptr) return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; ++i) {
        pmix_status_t rc = object_xfer(t, out + i * sz, static_cast<const char *>(src) + i * sz);
        if (rc != PMIX_SUCCESS) {
            array_free(t, out, i);
            return rc;
        }
    }
    *dst = out;
    return PMIX_SUCCESS;
}

pmix_value_cmp_t object_compare(pmix_data_type_t t, const void *a, const void *b) noexcept {
    if (a == b) return PMIX_EQUAL;
    if (a == nullptr || b == nullptr)
        return a == nullptr ? PMIX_VALUE2_GREATER : PMIX_VALUE1_GREATER;
    const DataType &d = data_type(t);
    if (d.ops == nullptr || d.ops->compare == nullptr) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    return d.ops->compare(a, b);
}

pmix_value_cmp_t array_compare(pmix_data_type_t t, const void *a, size_t na, const void *b,
                               size_t nb) noexcept {
    if (na != nb) return num(na, nb);
    size_t sz = type_size(t);
    for (size_t i = 0; i < na; ++i) {
        pmix_value_cmp_t r = object_compare(t, static_cast<const char *>(a) + i * sz,
                                            static_cast<const char *>(b) + i * sz);
        if (r != PMIX_EQUAL) return r;
    }
    return PMIX_EQUAL;
}

void *value_payload(const pmix_value_t *v) noexcept {
    auto *mv = const_cast<pmix_value_t *>(v);
    return value_holding(v->type) == pointer ? mv->data.ptr : static_cast<void *>(&mv->data);
}

// ---------------------------------------------------------------- wire

bool encodable(pmix_data_type_t t, const void *obj, int depth) {
    if (depth > kMaxDepth) return false;
    const DataType &d = data_type(t);
    if (d.size == 0) return false;
    return d.ops->encodable == nullptr || d.ops->encodable(obj, depth);
}

bool array_encodable(pmix_data_type_t t, const void *arr, size_t n, int depth) {
    if (n == 0 || arr == nullptr) return true;
    size_t sz = type_size(t);
    for (size_t i = 0; i < n; ++i)
        if (!encodable(t, static_cast<const char *>(arr) + i * sz, depth)) return false;
    return true;
}

void pack_object(Packer &pk, pmix_data_type_t t, const void *obj) {
    const DataType &d = data_type(t);
    if (d.ops == nullptr || d.ops->pack == nullptr)
        pk.pack_nil();  // unreachable: rejected by encodable()
    else
        d.ops->pack(pk, obj);
}

void pack_array_of(Packer &pk, pmix_data_type_t t, const void *arr, size_t n) {
    if (arr == nullptr) n = 0;
    pk.pack_array(static_cast<uint32_t>(n));
    size_t sz = type_size(t);
    for (size_t i = 0; i < n; ++i) pack_object(pk, t, static_cast<const char *>(arr) + i * sz);
}

pmix_status_t unpack_object(const msgpack::object &o, pmix_data_type_t t, void *dst, int depth) {
    if (depth > kMaxDepth) return kBad;
    const DataType &d = data_type(t);
    if (d.ops == nullptr || d.ops->unpack == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_status_t rc = d.ops->unpack(o, dst, depth);
    if (rc != PMIX_SUCCESS) object_destruct(t, dst);
    return rc;
}

pmix_status_t unpack_array_of(const msgpack::object &o, pmix_data_type_t t, void **out, size_t *n,
                              int depth) {
    *out = nullptr;
    *n = 0;
    if (o.type != object_type::ARRAY) return kBad;
    uint32_t cnt = o.via.array.size;
    if (cnt == 0) return PMIX_SUCCESS;
    size_t sz = type_size(t);
    auto *arr = static_cast<char *>(array_create(t, cnt));
    if (arr == nullptr) return PMIX_ERR_NOMEM;
    for (uint32_t i = 0; i < cnt; ++i) {
        pmix_status_t rc = unpack_object(o.via.array.ptr[i], t, arr + i * sz, depth + 1);
        if (rc != PMIX_SUCCESS) {
            array_free(t, arr, cnt);
            return rc;
        }
    }
    *out = arr;
    *n = cnt;
    return PMIX_SUCCESS;
}

// ---------------------------------------------------------------- text

void print_value(std::string &out, const pmix_value_t &v) {
    const DataType &d = data_type(v.type);
    if (d.holding == none) {
        out += "UNDEF";
    } else if (d.ops == nullptr || d.ops->print == nullptr) {
        out += '<';
        out += d.name;
        out += '>';
    } else if (d.holding == pointer && v.data.ptr == nullptr) {
        out += "NULL";
    } else {
        d.ops->print(out, value_payload(&v));
    }
}

}  // namespace zpmix::c
