// zpmix: msgpack encoding/decoding of PMIx values (see value_codec.hpp for the wire form).
#include "actors/client/value_codec.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <string>

#include "actors/client/pmix_objects.hpp"
#include "pmix.h"

namespace zpmix::c {
namespace {

constexpr int kMaxDepth = 32;  // nesting of data arrays / values inside values

bool is_hwloc(const char *s) {
    return s != nullptr && strncmp(s, "hwloc", 5) == 0;
}

// ---------------------------------------------------------------- encodability pre-check

bool encodable(pmix_data_type_t t, const void *obj, int depth);

bool encodable_array(pmix_data_type_t t, const void *arr, size_t n, int depth) {
    if (n == 0 || arr == nullptr) return true;
    size_t sz = type_size(t);
    for (size_t i = 0; i < n; ++i)
        if (!encodable(t, static_cast<const char *>(arr) + i * sz, depth)) return false;
    return true;
}

bool encodable_value(const pmix_value_t &v, int depth) {
    switch (value_holding(v.type)) {
        case ValueHolding::none:
            return true;
        case ValueHolding::unsupported:
            return false;
        case ValueHolding::pointer:
            return v.data.ptr == nullptr || encodable(v.type, v.data.ptr, depth);
        default:
            return encodable(v.type, &v.data, depth);
    }
}

bool encodable(pmix_data_type_t t, const void *obj, int depth) {
    if (depth > kMaxDepth) return false;
    switch (t) {
        case PMIX_POINTER:
            return false;
        case PMIX_VALUE:
            return encodable_value(*static_cast<const pmix_value_t *>(obj), depth + 1);
        case PMIX_INFO:
            return encodable_value(static_cast<const pmix_info_t *>(obj)->value, depth + 1);
        case PMIX_PDATA:
            return encodable_value(static_cast<const pmix_pdata_t *>(obj)->value, depth + 1);
        case PMIX_APP: {
            auto *a = static_cast<const pmix_app_t *>(obj);
            return encodable_array(PMIX_INFO, a->info, a->ninfo, depth + 1);
        }
        case PMIX_QUERY: {
            auto *q = static_cast<const pmix_query_t *>(obj);
            return encodable_array(PMIX_INFO, q->qualifiers, q->nqual, depth + 1);
        }
        case PMIX_DATA_ARRAY: {
            auto *d = static_cast<const pmix_data_array_t *>(obj);
            return encodable_array(d->type, d->array, d->size, depth + 1);
        }
        case PMIX_PROC_CPUSET: {
            auto *c = static_cast<const pmix_cpuset_t *>(obj);
            return c->bitmap == nullptr || is_hwloc(c->source);
        }
        case PMIX_TOPO: {
            auto *c = static_cast<const pmix_topology_t *>(obj);
            return c->topology == nullptr || is_hwloc(c->source);
        }
        default:
            return type_size(t) != 0;
    }
}

// ---------------------------------------------------------------- packing

// msgpack-c packs an integral float as an integer, after checking it against
// float(UINT64_MAX): that rounds up to 2^64, so 2^64 itself passes and its conversion to
// uint64_t is undefined behaviour. 2^64 goes in float format here (the decoders take both).
template <class F>
void pack_real(Packer &pk, F v) {
    constexpr bool single = sizeof(F) == sizeof(uint32_t);
    if (v != static_cast<F>(0x1p64)) {
        if constexpr (single)
            pk.pack_float(v);
        else
            pk.pack_double(v);
        return;
    }
    std::conditional_t<single, uint32_t, uint64_t> bits;
    std::memcpy(&bits, &v, sizeof bits);
    char buf[1 + sizeof bits];
    buf[0] = static_cast<char>(single ? 0xca : 0xcb);
    for (size_t i = 0; i < sizeof bits; ++i)
        buf[1 + i] = static_cast<char>(bits >> (8 * (sizeof bits - 1 - i)));
    pk.pack_bin_body(buf, sizeof buf);  // the bytes as they are
}

void pack_str(Packer &pk, const char *s) {
    if (s == nullptr) {
        pk.pack_nil();
        return;
    }
    size_t n = strlen(s);
    pk.pack_str(static_cast<uint32_t>(n));
    pk.pack_str_body(s, static_cast<uint32_t>(n));
}

void pack_strn(Packer &pk, const char *s, size_t max) {
    size_t n = strnlen(s, max);
    pk.pack_str(static_cast<uint32_t>(n));
    pk.pack_str_body(s, static_cast<uint32_t>(n));
}

void pack_bin(Packer &pk, const char *p, size_t n) {
    if (p == nullptr) n = 0;
    pk.pack_bin(static_cast<uint32_t>(n));
    if (n > 0) pk.pack_bin_body(p, static_cast<uint32_t>(n));
}

void pack_argv(Packer &pk, char **argv) {
    if (argv == nullptr) {
        pk.pack_nil();
        return;
    }
    int n = zpmix_argv_count(argv);
    pk.pack_array(static_cast<uint32_t>(n));
    for (int i = 0; i < n; ++i) pack_str(pk, argv[i]);
}

void pack_tv(Packer &pk, const struct timeval &tv) {
    pk.pack_array(2);
    pk.pack_int64(static_cast<int64_t>(tv.tv_sec));
    pk.pack_int64(static_cast<int64_t>(tv.tv_usec));
}

void pack_proc(Packer &pk, const pmix_proc_t &p) {
    pk.pack_array(2);
    pack_strn(pk, p.nspace, PMIX_MAX_NSLEN);
    pk.pack_uint32(p.rank);
}

void pack_object(Packer &pk, pmix_data_type_t t, const void *obj);

void pack_array_of(Packer &pk, pmix_data_type_t t, const void *arr, size_t n) {
    if (arr == nullptr) n = 0;
    pk.pack_array(static_cast<uint32_t>(n));
    size_t sz = type_size(t);
    for (size_t i = 0; i < n; ++i) pack_object(pk, t, static_cast<const char *>(arr) + i * sz);
}

void pack_value(Packer &pk, const pmix_value_t &v) {
    pk.pack_array(2);
    pk.pack_uint16(v.type);
    switch (value_holding(v.type)) {
        case ValueHolding::none:
            pk.pack_nil();
            break;
        case ValueHolding::pointer:
            if (v.data.ptr == nullptr)
                pk.pack_nil();
            else
                pack_object(pk, v.type, v.data.ptr);
            break;
        default:
            pack_object(pk, v.type, &v.data);
            break;
    }
}

void pack_info(Packer &pk, const pmix_info_t &i) {
    pk.pack_array(3);
    pack_strn(pk, i.key, PMIX_MAX_KEYLEN);
    pk.pack_uint32(i.flags);
    pack_value(pk, i.value);
}

template <class T>
const T &as(const void *p) {
    return *static_cast<const T *>(p);
}

void pack_object(Packer &pk, pmix_data_type_t t, const void *o) {
    switch (t) {
        case PMIX_BOOL:
            pk.pack(as<bool>(o));
            break;
        case PMIX_BYTE:
        case PMIX_UINT8:
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_COMMAND:
        case PMIX_PROC_STATE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_JOB_STATE:
        case PMIX_LINK_STATE:
            pk.pack_uint8(as<uint8_t>(o));
            break;
        case PMIX_UINT16:
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE:
            pk.pack_uint16(as<uint16_t>(o));
            break;
        case PMIX_UINT32:
        case PMIX_PROC_RANK:
        case PMIX_INFO_DIRECTIVES:
            pk.pack_uint32(as<uint32_t>(o));
            break;
        case PMIX_UINT64:
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST:
            pk.pack_uint64(as<uint64_t>(o));
            break;
        case PMIX_SIZE:
            pk.pack_uint64(as<size_t>(o));
            break;
        case PMIX_UINT:
            pk.pack_unsigned_int(as<unsigned int>(o));
            break;
        case PMIX_INT:
        case PMIX_STATUS:
            pk.pack_int(as<int>(o));
            break;
        case PMIX_INT8:
            pk.pack_int8(as<int8_t>(o));
            break;
        case PMIX_INT16:
            pk.pack_int16(as<int16_t>(o));
            break;
        case PMIX_INT32:
            pk.pack_int32(as<int32_t>(o));
            break;
        case PMIX_INT64:
            pk.pack_int64(as<int64_t>(o));
            break;
        case PMIX_PID:
            pk.pack_int64(as<pid_t>(o));
            break;
        case PMIX_TIME:
            pk.pack_int64(static_cast<int64_t>(as<time_t>(o)));
            break;
        case PMIX_FLOAT:
            pack_real(pk, as<float>(o));
            break;
        case PMIX_DOUBLE:
            pack_real(pk, as<double>(o));
            break;
        case PMIX_TIMEVAL:
            pack_tv(pk, as<struct timeval>(o));
            break;
        case PMIX_STRING:
            pack_str(pk, as<char *>(o));
            break;
        case PMIX_PROC_NSPACE:
            pack_strn(pk, static_cast<const char *>(o), PMIX_MAX_NSLEN);
            break;
        case PMIX_PROC:
            pack_proc(pk, as<pmix_proc_t>(o));
            break;
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT: {
            auto &b = as<pmix_byte_object_t>(o);
            pack_bin(pk, b.bytes, b.size);
            break;
        }
        case PMIX_VALUE:
            pack_value(pk, as<pmix_value_t>(o));
            break;
        case PMIX_INFO:
            pack_info(pk, as<pmix_info_t>(o));
            break;
        case PMIX_PDATA: {
            auto &p = as<pmix_pdata_t>(o);
            pk.pack_array(3);
            pack_proc(pk, p.proc);
            pack_strn(pk, p.key, PMIX_MAX_KEYLEN);
            pack_value(pk, p.value);
            break;
        }
        case PMIX_APP: {
            auto &a = as<pmix_app_t>(o);
            pk.pack_array(6);
            pack_str(pk, a.cmd);
            pack_argv(pk, a.argv);
            pack_argv(pk, a.env);
            pack_str(pk, a.cwd);
            pk.pack_int(a.maxprocs);
            pack_array_of(pk, PMIX_INFO, a.info, a.ninfo);
            break;
        }
        case PMIX_QUERY: {
            auto &q = as<pmix_query_t>(o);
            pk.pack_array(2);
            pack_argv(pk, q.keys);
            pack_array_of(pk, PMIX_INFO, q.qualifiers, q.nqual);
            break;
        }
        case PMIX_PROC_INFO: {
            auto &p = as<pmix_proc_info_t>(o);
            pk.pack_array(6);
            pack_proc(pk, p.proc);
            pack_str(pk, p.hostname);
            pack_str(pk, p.executable_name);
            pk.pack_int64(p.pid);
            pk.pack_int(p.exit_code);
            pk.pack_uint8(p.state);
            break;
        }
        case PMIX_DATA_ARRAY: {
            auto &d = as<pmix_data_array_t>(o);
            pk.pack_array(2);
            pk.pack_uint16(d.type);
            pack_array_of(pk, d.type, d.array, d.size);
            break;
        }
        case PMIX_ENVAR: {
            auto &e = as<pmix_envar_t>(o);
            pk.pack_array(3);
            pack_str(pk, e.envar);
            pack_str(pk, e.value);
            pk.pack_uint8(static_cast<uint8_t>(e.separator));
            break;
        }
        case PMIX_COORD: {
            auto &c = as<pmix_coord_t>(o);
            pk.pack_array(2);
            pk.pack_uint8(c.view);
            pack_array_of(pk, PMIX_UINT32, c.coord, c.dims);
            break;
        }
        case PMIX_REGATTR: {
            auto &r = as<pmix_regattr_t>(o);
            pk.pack_array(4);
            pack_str(pk, r.name);
            pack_strn(pk, r.string, PMIX_MAX_KEYLEN);
            pk.pack_uint16(r.type);
            pack_argv(pk, r.description);
            break;
        }
        case PMIX_PROC_CPUSET: {
            auto &c = as<pmix_cpuset_t>(o);
            pk.pack_array(2);
            pack_str(pk, c.source);
            char *s = nullptr;
            if (c.bitmap != nullptr &&
                hwloc_bitmap_list_asprintf(&s, static_cast<hwloc_const_bitmap_t>(c.bitmap)) >= 0) {
                pack_str(pk, s);
                free(s);
            } else {
                pk.pack_nil();
            }
            break;
        }
        case PMIX_TOPO: {
            auto &c = as<pmix_topology_t>(o);
            pk.pack_array(2);
            pack_str(pk, c.source);
            char *xml = nullptr;
            int len = 0;
            if (c.topology != nullptr &&
                hwloc_topology_export_xmlbuffer(static_cast<hwloc_topology_t>(c.topology), &xml,
                                                &len, 0) == 0) {
                size_t n = len > 0 ? static_cast<size_t>(len) - 1 : 0;  // without the NUL
                pk.pack_str(static_cast<uint32_t>(n));
                pk.pack_str_body(xml, static_cast<uint32_t>(n));
                hwloc_free_xmlbuffer(static_cast<hwloc_topology_t>(c.topology), xml);
            } else {
                pk.pack_nil();
            }
            break;
        }
        case PMIX_GEOMETRY: {
            auto &g = as<pmix_geometry_t>(o);
            pk.pack_array(4);
            pk.pack_uint64(g.fabric);
            pack_str(pk, g.uuid);
            pack_str(pk, g.osname);
            pack_array_of(pk, PMIX_COORD, g.coordinates, g.ncoords);
            break;
        }
        case PMIX_DEVICE_DIST: {
            auto &d = as<pmix_device_distance_t>(o);
            pk.pack_array(5);
            pack_str(pk, d.uuid);
            pack_str(pk, d.osname);
            pk.pack_uint64(d.type);
            pk.pack_uint16(d.mindist);
            pk.pack_uint16(d.maxdist);
            break;
        }
        case PMIX_ENDPOINT: {
            auto &e = as<pmix_endpoint_t>(o);
            pk.pack_array(3);
            pack_str(pk, e.uuid);
            pack_str(pk, e.osname);
            pack_bin(pk, e.endpt.bytes, e.endpt.size);
            break;
        }
        case PMIX_PROC_STATS: {
            auto &s = as<pmix_proc_stats_t>(o);
            pk.pack_array(15);
            pack_str(pk, s.node);
            pack_proc(pk, s.proc);
            pk.pack_int64(s.pid);
            pack_str(pk, s.cmd);
            pk.pack_int8(static_cast<int8_t>(s.state));
            pack_tv(pk, s.time);
            pack_real(pk, s.percent_cpu);
            pk.pack_int32(s.priority);
            pk.pack_uint16(s.num_threads);
            pack_real(pk, s.pss);
            pack_real(pk, s.vsize);
            pack_real(pk, s.rss);
            pack_real(pk, s.peak_vsize);
            pk.pack_uint16(s.processor);
            pack_tv(pk, s.sample_time);
            break;
        }
        case PMIX_DISK_STATS: {
            auto &s = as<pmix_disk_stats_t>(o);
            pk.pack_array(12);
            pack_str(pk, s.disk);
            const uint64_t *f = &s.num_reads_completed;
            for (int i = 0; i < 11; ++i) pk.pack_uint64(f[i]);
            break;
        }
        case PMIX_NET_STATS: {
            auto &s = as<pmix_net_stats_t>(o);
            pk.pack_array(7);
            pack_str(pk, s.net_interface);
            const uint64_t *f = &s.num_bytes_recvd;
            for (int i = 0; i < 6; ++i) pk.pack_uint64(f[i]);
            break;
        }
        case PMIX_NODE_STATS: {
            auto &s = as<pmix_node_stats_t>(o);
            pk.pack_array(15);
            pack_str(pk, s.node);
            const float *f = &s.la;
            for (int i = 0; i < 11; ++i) pack_real(pk, f[i]);
            pack_tv(pk, s.sample_time);
            pack_array_of(pk, PMIX_DISK_STATS, s.diskstats, s.ndiskstats);
            pack_array_of(pk, PMIX_NET_STATS, s.netstats, s.nnetstats);
            break;
        }
        case PMIX_DATA_BUFFER: {
            auto &b = as<pmix_data_buffer_t>(o);
            pk.pack_array(2);
            pack_bin(pk, b.base_ptr, b.bytes_used);
            size_t off = 0;
            if (b.base_ptr != nullptr && b.unpack_ptr >= b.base_ptr &&
                b.unpack_ptr <= b.base_ptr + b.bytes_used)
                off = static_cast<size_t>(b.unpack_ptr - b.base_ptr);
            pk.pack_uint64(off);
            break;
        }
        default:
            pk.pack_nil();
            break;  // unreachable: rejected by encodable()
    }
}

// ---------------------------------------------------------------- unpacking

using msgpack::type::object_type;
constexpr pmix_status_t kBad = PMIX_ERR_UNPACK_FAILURE;

#define ZTRY(expr)                           \
    do {                                     \
        pmix_status_t _rc = (expr);          \
        if (_rc != PMIX_SUCCESS) return _rc; \
    } while (0)

const msgpack::object *tuple(const msgpack::object &o, uint32_t n) {
    if (o.type != object_type::ARRAY || o.via.array.size != n) return nullptr;
    return o.via.array.ptr;
}

template <class T>
pmix_status_t get_int(const msgpack::object &o, T *out) {
    if (o.type == object_type::POSITIVE_INTEGER) {
        if (o.via.u64 > static_cast<uint64_t>(std::numeric_limits<T>::max())) return kBad;
        *out = static_cast<T>(o.via.u64);
        return PMIX_SUCCESS;
    }
    if (o.type == object_type::NEGATIVE_INTEGER && std::numeric_limits<T>::is_signed) {
        if (o.via.i64 < static_cast<int64_t>(std::numeric_limits<T>::min())) return kBad;
        *out = static_cast<T>(o.via.i64);
        return PMIX_SUCCESS;
    }
    return kBad;
}

// msgpack-cxx packs integral floating-point values as integers, so accept those too
pmix_status_t get_float(const msgpack::object &o, double *out) {
    switch (o.type) {
        case object_type::FLOAT32:
        case object_type::FLOAT64:
            *out = o.via.f64;
            return PMIX_SUCCESS;
        case object_type::POSITIVE_INTEGER:
            *out = static_cast<double>(o.via.u64);
            return PMIX_SUCCESS;
        case object_type::NEGATIVE_INTEGER:
            *out = static_cast<double>(o.via.i64);
            return PMIX_SUCCESS;
        default:
            return kBad;
    }
}

pmix_status_t get_float(const msgpack::object &o, float *out) {
    double d = 0;
    ZTRY(get_float(o, &d));
    *out = static_cast<float>(d);
    return PMIX_SUCCESS;
}

// nil -> NULL, str -> malloc'ed copy
pmix_status_t get_str(const msgpack::object &o, char **out) {
    *out = nullptr;
    if (o.type == object_type::NIL) return PMIX_SUCCESS;
    if (o.type != object_type::STR) return kBad;
    // msgpack strings are not NUL-terminated: copy exactly size bytes (strndup would scan on).
    const std::size_t n = o.via.str.size;
    *out = static_cast<char *>(std::malloc(n + 1));
    if (*out == nullptr) return PMIX_ERR_NOMEM;
    if (n > 0) std::memcpy(*out, o.via.str.ptr, n);
    (*out)[n] = '\0';
    return PMIX_SUCCESS;
}

// str into a fixed char[max+1]
pmix_status_t get_fixed(const msgpack::object &o, char *dst, size_t max) {
    if (o.type != object_type::STR) return kBad;
    if (o.via.str.size > max) return PMIX_ERR_BAD_PARAM;
    memset(dst, 0, max + 1);
    if (o.via.str.size > 0) memcpy(dst, o.via.str.ptr, o.via.str.size);
    return PMIX_SUCCESS;
}

pmix_status_t get_bin(const msgpack::object &o, char **bytes, size_t *size) {
    *bytes = nullptr;
    *size = 0;
    if (o.type == object_type::NIL) return PMIX_SUCCESS;
    if (o.type != object_type::BIN) return kBad;
    if (o.via.bin.size == 0) return PMIX_SUCCESS;
    *bytes = static_cast<char *>(malloc(o.via.bin.size));
    if (*bytes == nullptr) return PMIX_ERR_NOMEM;
    memcpy(*bytes, o.via.bin.ptr, o.via.bin.size);
    *size = o.via.bin.size;
    return PMIX_SUCCESS;
}

pmix_status_t get_argv(const msgpack::object &o, char ***out) {
    *out = nullptr;
    if (o.type == object_type::NIL) return PMIX_SUCCESS;
    if (o.type != object_type::ARRAY) return kBad;
    uint32_t n = o.via.array.size;
    auto **argv = static_cast<char **>(calloc(static_cast<size_t>(n) + 1, sizeof(char *)));
    if (argv == nullptr) return PMIX_ERR_NOMEM;
    *out = argv;  // the caller's destruct frees a partial result
    for (uint32_t i = 0; i < n; ++i) {
        if (o.via.array.ptr[i].type != object_type::STR) return kBad;
        ZTRY(get_str(o.via.array.ptr[i], &argv[i]));
    }
    return PMIX_SUCCESS;
}

pmix_status_t get_tv(const msgpack::object &o, struct timeval *tv) {
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZTRY(get_int(f[0], &tv->tv_sec));
    return get_int(f[1], &tv->tv_usec);
}

pmix_status_t get_proc(const msgpack::object &o, pmix_proc_t *p) {
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZTRY(get_fixed(f[0], p->nspace, PMIX_MAX_NSLEN));
    return get_int(f[1], &p->rank);
}

pmix_status_t get_object(const msgpack::object &o, pmix_data_type_t t, void *dst, int depth);

// [payload...] of type t into a new array; *n set only on success
template <class T>
pmix_status_t get_array_of(const msgpack::object &o, pmix_data_type_t t, T **out, size_t *n,
                           int depth) {
    *out = nullptr;
    *n = 0;
    if (o.type != object_type::ARRAY) return kBad;
    uint32_t cnt = o.via.array.size;
    if (cnt == 0) return PMIX_SUCCESS;
    size_t sz = type_size(t);
    auto *arr = static_cast<char *>(zpmix_array_create(t, cnt));
    if (arr == nullptr) return PMIX_ERR_NOMEM;
    for (uint32_t i = 0; i < cnt; ++i) {
        pmix_status_t rc = get_object(o.via.array.ptr[i], t, arr + i * sz, depth + 1);
        if (rc != PMIX_SUCCESS) {
            zpmix_array_free(t, arr, cnt);
            return rc;
        }
    }
    *out = reinterpret_cast<T *>(arr);
    *n = cnt;
    return PMIX_SUCCESS;
}

pmix_status_t get_value(const msgpack::object &o, pmix_value_t *v, int depth) {
    memset(v, 0, sizeof(*v));
    if (depth > kMaxDepth) return kBad;
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    pmix_data_type_t t = 0;
    ZTRY(get_int(f[0], &t));
    ValueHolding h = value_holding(t);
    if (h == ValueHolding::unsupported || t == PMIX_POINTER) return PMIX_ERR_BAD_PARAM;
    if (h == ValueHolding::none) return f[1].type == object_type::NIL ? PMIX_SUCCESS : kBad;
    if (h == ValueHolding::pointer) {
        v->type = t;
        if (f[1].type == object_type::NIL) return PMIX_SUCCESS;
        void *obj = zpmix_array_create(t, 1);
        if (obj == nullptr) return PMIX_ERR_NOMEM;
        pmix_status_t rc = get_object(f[1], t, obj, depth + 1);
        if (rc != PMIX_SUCCESS) {
            free(obj);  // get_object left it zeroed
            v->type = PMIX_UNDEF;
            return rc;
        }
        v->data.ptr = obj;
        return PMIX_SUCCESS;
    }
    pmix_status_t rc = get_object(f[1], t, &v->data, depth + 1);
    if (rc == PMIX_SUCCESS) v->type = t;
    return rc;
}

pmix_status_t get_info(const msgpack::object &o, pmix_info_t *i, int depth) {
    const msgpack::object *f = tuple(o, 3);
    if (f == nullptr) return kBad;
    ZTRY(get_fixed(f[0], i->key, PMIX_MAX_KEYLEN));
    ZTRY(get_int(f[1], &i->flags));
    i->flags &= ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);  // we own the value
    return get_value(f[2], &i->value, depth + 1);
}

// Decodes into zeroed `dst`; partial results are released by the caller (object_destruct).
pmix_status_t get_object_impl(const msgpack::object &o, pmix_data_type_t t, void *dst, int depth) {
    if (depth > kMaxDepth) return kBad;
    switch (t) {
        case PMIX_BOOL:
            if (o.type != object_type::BOOLEAN) return kBad;
            *static_cast<bool *>(dst) = o.via.boolean;
            return PMIX_SUCCESS;
        case PMIX_BYTE:
        case PMIX_UINT8:
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_COMMAND:
        case PMIX_PROC_STATE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_JOB_STATE:
        case PMIX_LINK_STATE:
            return get_int(o, static_cast<uint8_t *>(dst));
        case PMIX_UINT16:
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE:
            return get_int(o, static_cast<uint16_t *>(dst));
        case PMIX_UINT32:
        case PMIX_PROC_RANK:
        case PMIX_INFO_DIRECTIVES:
            return get_int(o, static_cast<uint32_t *>(dst));
        case PMIX_UINT64:
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST:
            return get_int(o, static_cast<uint64_t *>(dst));
        case PMIX_SIZE:
            return get_int(o, static_cast<size_t *>(dst));
        case PMIX_UINT:
            return get_int(o, static_cast<unsigned int *>(dst));
        case PMIX_INT:
        case PMIX_STATUS:
            return get_int(o, static_cast<int *>(dst));
        case PMIX_INT8:
            return get_int(o, static_cast<int8_t *>(dst));
        case PMIX_INT16:
            return get_int(o, static_cast<int16_t *>(dst));
        case PMIX_INT32:
            return get_int(o, static_cast<int32_t *>(dst));
        case PMIX_INT64:
            return get_int(o, static_cast<int64_t *>(dst));
        case PMIX_PID:
            return get_int(o, static_cast<pid_t *>(dst));
        case PMIX_TIME:
            return get_int(o, static_cast<time_t *>(dst));
        case PMIX_FLOAT:
            return get_float(o, static_cast<float *>(dst));
        case PMIX_DOUBLE:
            return get_float(o, static_cast<double *>(dst));
        case PMIX_TIMEVAL:
            return get_tv(o, static_cast<struct timeval *>(dst));
        case PMIX_STRING:
            return get_str(o, static_cast<char **>(dst));
        case PMIX_PROC_NSPACE:
            return get_fixed(o, static_cast<char *>(dst), PMIX_MAX_NSLEN);
        case PMIX_PROC:
            return get_proc(o, static_cast<pmix_proc_t *>(dst));
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT: {
            auto *b = static_cast<pmix_byte_object_t *>(dst);
            return get_bin(o, &b->bytes, &b->size);
        }
        case PMIX_VALUE:
            return get_value(o, static_cast<pmix_value_t *>(dst), depth);
        case PMIX_INFO:
            return get_info(o, static_cast<pmix_info_t *>(dst), depth);
        case PMIX_PDATA: {
            auto *p = static_cast<pmix_pdata_t *>(dst);
            const msgpack::object *f = tuple(o, 3);
            if (f == nullptr) return kBad;
            ZTRY(get_proc(f[0], &p->proc));
            ZTRY(get_fixed(f[1], p->key, PMIX_MAX_KEYLEN));
            return get_value(f[2], &p->value, depth + 1);
        }
        case PMIX_APP: {
            auto *a = static_cast<pmix_app_t *>(dst);
            const msgpack::object *f = tuple(o, 6);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &a->cmd));
            ZTRY(get_argv(f[1], &a->argv));
            ZTRY(get_argv(f[2], &a->env));
            ZTRY(get_str(f[3], &a->cwd));
            ZTRY(get_int(f[4], &a->maxprocs));
            return get_array_of(f[5], PMIX_INFO, &a->info, &a->ninfo, depth);
        }
        case PMIX_QUERY: {
            auto *q = static_cast<pmix_query_t *>(dst);
            const msgpack::object *f = tuple(o, 2);
            if (f == nullptr) return kBad;
            ZTRY(get_argv(f[0], &q->keys));
            return get_array_of(f[1], PMIX_INFO, &q->qualifiers, &q->nqual, depth);
        }
        case PMIX_PROC_INFO: {
            auto *p = static_cast<pmix_proc_info_t *>(dst);
            const msgpack::object *f = tuple(o, 6);
            if (f == nullptr) return kBad;
            ZTRY(get_proc(f[0], &p->proc));
            ZTRY(get_str(f[1], &p->hostname));
            ZTRY(get_str(f[2], &p->executable_name));
            ZTRY(get_int(f[3], &p->pid));
            ZTRY(get_int(f[4], &p->exit_code));
            return get_int(f[5], &p->state);
        }
        case PMIX_DATA_ARRAY: {
            auto *d = static_cast<pmix_data_array_t *>(dst);
            const msgpack::object *f = tuple(o, 2);
            if (f == nullptr) return kBad;
            pmix_data_type_t et = 0;
            ZTRY(get_int(f[0], &et));
            d->type = et;
            bool empty = f[1].type == object_type::ARRAY && f[1].via.array.size == 0;
            if (et == PMIX_POINTER || (type_size(et) == 0 && !empty)) return PMIX_ERR_BAD_PARAM;
            return get_array_of(f[1], et, &d->array, &d->size, depth);
        }
        case PMIX_ENVAR: {
            auto *e = static_cast<pmix_envar_t *>(dst);
            const msgpack::object *f = tuple(o, 3);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &e->envar));
            ZTRY(get_str(f[1], &e->value));
            uint8_t sep = 0;
            ZTRY(get_int(f[2], &sep));
            e->separator = static_cast<char>(sep);
            return PMIX_SUCCESS;
        }
        case PMIX_COORD: {
            auto *c = static_cast<pmix_coord_t *>(dst);
            const msgpack::object *f = tuple(o, 2);
            if (f == nullptr) return kBad;
            ZTRY(get_int(f[0], &c->view));
            return get_array_of(f[1], PMIX_UINT32, &c->coord, &c->dims, depth);
        }
        case PMIX_REGATTR: {
            auto *r = static_cast<pmix_regattr_t *>(dst);
            const msgpack::object *f = tuple(o, 4);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &r->name));
            ZTRY(get_fixed(f[1], r->string, PMIX_MAX_KEYLEN));
            ZTRY(get_int(f[2], &r->type));
            return get_argv(f[3], &r->description);
        }
        case PMIX_PROC_CPUSET: {
            auto *c = static_cast<pmix_cpuset_t *>(dst);
            const msgpack::object *f = tuple(o, 2);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &c->source));
            if (f[1].type == object_type::NIL) return PMIX_SUCCESS;
            if (f[1].type != object_type::STR || !is_hwloc(c->source)) return kBad;
            std::string list(f[1].via.str.ptr, f[1].via.str.size);
            hwloc_bitmap_t bm = hwloc_bitmap_alloc();
            if (bm == nullptr) return PMIX_ERR_NOMEM;
            c->bitmap = bm;
            return hwloc_bitmap_list_sscanf(bm, list.c_str()) == 0 ? PMIX_SUCCESS : kBad;
        }
        case PMIX_TOPO: {
            auto *c = static_cast<pmix_topology_t *>(dst);
            const msgpack::object *f = tuple(o, 2);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &c->source));
            if (f[1].type == object_type::NIL) return PMIX_SUCCESS;
            if (f[1].type != object_type::STR || !is_hwloc(c->source)) return kBad;
            std::string xml(f[1].via.str.ptr, f[1].via.str.size);
            hwloc_topology_t topo = nullptr;
            if (hwloc_topology_init(&topo) != 0) return PMIX_ERR_NOMEM;
            if (hwloc_topology_set_xmlbuffer(topo, xml.c_str(), static_cast<int>(xml.size() + 1)) !=
                    0 ||
                hwloc_topology_load(topo) != 0) {
                hwloc_topology_destroy(topo);
                return kBad;
            }
            c->topology = topo;
            return PMIX_SUCCESS;
        }
        case PMIX_GEOMETRY: {
            auto *g = static_cast<pmix_geometry_t *>(dst);
            const msgpack::object *f = tuple(o, 4);
            if (f == nullptr) return kBad;
            ZTRY(get_int(f[0], &g->fabric));
            ZTRY(get_str(f[1], &g->uuid));
            ZTRY(get_str(f[2], &g->osname));
            return get_array_of(f[3], PMIX_COORD, &g->coordinates, &g->ncoords, depth);
        }
        case PMIX_DEVICE_DIST: {
            auto *d = static_cast<pmix_device_distance_t *>(dst);
            const msgpack::object *f = tuple(o, 5);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &d->uuid));
            ZTRY(get_str(f[1], &d->osname));
            ZTRY(get_int(f[2], &d->type));
            ZTRY(get_int(f[3], &d->mindist));
            return get_int(f[4], &d->maxdist);
        }
        case PMIX_ENDPOINT: {
            auto *e = static_cast<pmix_endpoint_t *>(dst);
            const msgpack::object *f = tuple(o, 3);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &e->uuid));
            ZTRY(get_str(f[1], &e->osname));
            return get_bin(f[2], &e->endpt.bytes, &e->endpt.size);
        }
        case PMIX_PROC_STATS: {
            auto *s = static_cast<pmix_proc_stats_t *>(dst);
            const msgpack::object *f = tuple(o, 15);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &s->node));
            ZTRY(get_proc(f[1], &s->proc));
            ZTRY(get_int(f[2], &s->pid));
            ZTRY(get_str(f[3], &s->cmd));
            int8_t state = 0;
            ZTRY(get_int(f[4], &state));
            s->state = static_cast<char>(state);
            ZTRY(get_tv(f[5], &s->time));
            ZTRY(get_float(f[6], &s->percent_cpu));
            ZTRY(get_int(f[7], &s->priority));
            ZTRY(get_int(f[8], &s->num_threads));
            ZTRY(get_float(f[9], &s->pss));
            ZTRY(get_float(f[10], &s->vsize));
            ZTRY(get_float(f[11], &s->rss));
            ZTRY(get_float(f[12], &s->peak_vsize));
            ZTRY(get_int(f[13], &s->processor));
            return get_tv(f[14], &s->sample_time);
        }
        case PMIX_DISK_STATS: {
            auto *s = static_cast<pmix_disk_stats_t *>(dst);
            const msgpack::object *f = tuple(o, 12);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &s->disk));
            uint64_t *v = &s->num_reads_completed;
            for (int i = 0; i < 11; ++i) ZTRY(get_int(f[i + 1], &v[i]));
            return PMIX_SUCCESS;
        }
        case PMIX_NET_STATS: {
            auto *s = static_cast<pmix_net_stats_t *>(dst);
            const msgpack::object *f = tuple(o, 7);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &s->net_interface));
            uint64_t *v = &s->num_bytes_recvd;
            for (int i = 0; i < 6; ++i) ZTRY(get_int(f[i + 1], &v[i]));
            return PMIX_SUCCESS;
        }
        case PMIX_NODE_STATS: {
            auto *s = static_cast<pmix_node_stats_t *>(dst);
            const msgpack::object *f = tuple(o, 15);
            if (f == nullptr) return kBad;
            ZTRY(get_str(f[0], &s->node));
            float *v = &s->la;
            for (int i = 0; i < 11; ++i) ZTRY(get_float(f[i + 1], &v[i]));
            ZTRY(get_tv(f[12], &s->sample_time));
            ZTRY(get_array_of(f[13], PMIX_DISK_STATS, &s->diskstats, &s->ndiskstats, depth));
            return get_array_of(f[14], PMIX_NET_STATS, &s->netstats, &s->nnetstats, depth);
        }
        case PMIX_DATA_BUFFER: {
            auto *b = static_cast<pmix_data_buffer_t *>(dst);
            const msgpack::object *f = tuple(o, 2);
            if (f == nullptr) return kBad;
            size_t size = 0, off = 0;
            ZTRY(get_bin(f[0], &b->base_ptr, &size));
            ZTRY(get_int(f[1], &off));
            if (off > size) return kBad;
            b->bytes_allocated = b->bytes_used = size;
            b->pack_ptr = b->base_ptr == nullptr ? nullptr : b->base_ptr + size;
            b->unpack_ptr = b->base_ptr == nullptr ? nullptr : b->base_ptr + off;
            return PMIX_SUCCESS;
        }
        default:
            return PMIX_ERR_BAD_PARAM;  // POINTER, unknown codes
    }
}

pmix_status_t get_object(const msgpack::object &o, pmix_data_type_t t, void *dst, int depth) {
    pmix_status_t rc = get_object_impl(o, t, dst, depth);
    if (rc != PMIX_SUCCESS) object_destruct(t, dst);
    return rc;
}

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
    if (!encodable_value(value, 0)) return PMIX_ERR_NOT_SUPPORTED;
    pack_value(pk, value);
    return PMIX_SUCCESS;
}

pmix_status_t encode_info(Packer &pk, const pmix_info_t &info) {
    if (!encodable_value(info.value, 0)) return PMIX_ERR_NOT_SUPPORTED;
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
    if (!encodable_array(PMIX_INFO, info, ninfo, 0)) return PMIX_ERR_NOT_SUPPORTED;
    pack_array_of(pk, PMIX_INFO, info, ninfo);
    return PMIX_SUCCESS;
}

pmix_status_t decode_value(const msgpack::object &obj, pmix_value_t *out) {
    if (out == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_status_t rc = get_value(obj, out, 0);
    if (rc != PMIX_SUCCESS) PMIx_Value_destruct(out);
    return rc;
}

pmix_status_t decode_info(const msgpack::object &obj, pmix_info_t *out) {
    if (out == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(out, 0, sizeof(*out));
    return get_object(obj, PMIX_INFO, out, 0);
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
    return get_array_of(obj, PMIX_INFO, out, nout, 0);
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
