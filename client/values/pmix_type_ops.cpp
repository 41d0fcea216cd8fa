// zpmix: the operations of the PMIx data types that are not fixed-width numbers, each type's
// together: destruct, deep copy, compare, wire form (see value_codec.hpp), text, value load/unload.
#include "client/values/pmix_type_ops.hpp"
#include "client/values/pmix_helpers.hpp"
#include "client/values/pmix_objects.hpp"

#include <hwloc.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "client/values/wire_fields.hpp"
#include "pmix.h"

namespace zpmix::c {
namespace {

// ---------------------------------------------------------------- shared pieces

pmix_status_t dup_into(char **dst, const char *src) noexcept {
    *dst = nullptr;
    if (src == nullptr) return PMIX_SUCCESS;
    *dst = strdup(src);
    return *dst == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

pmix_status_t dup_bytes(pmix_byte_object_t *dst, const pmix_byte_object_t *src) noexcept {
    dst->bytes = nullptr;
    dst->size = 0;
    if (src->bytes == nullptr || src->size == 0) return PMIX_SUCCESS;
    dst->bytes = static_cast<char *>(malloc(src->size));
    if (dst->bytes == nullptr) return PMIX_ERR_NOMEM;
    memcpy(dst->bytes, src->bytes, src->size);
    dst->size = src->size;
    return PMIX_SUCCESS;
}

pmix_status_t dup_argv(char ***dst, char **src) noexcept {
    *dst = nullptr;
    if (src == nullptr) return PMIX_SUCCESS;
    *dst = argv_copy(src);
    return *dst == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

template <class T>
pmix_status_t dup_array(pmix_data_type_t t, T **dst, const T *src, size_t n) noexcept {
    *dst = nullptr;
    if (src == nullptr || n == 0) return PMIX_SUCCESS;
    void *copy = nullptr;
    pmix_status_t rc = array_copy(t, &copy, src, n);
    *dst = static_cast<T *>(copy);
    return rc;
}

pmix_value_cmp_t str(const char *a, const char *b) noexcept {
    if (a == b) return PMIX_EQUAL;
    if (a == nullptr) return PMIX_VALUE2_GREATER;
    if (b == nullptr) return PMIX_VALUE1_GREATER;
    return num(strcmp(a, b) > 0 ? 1 : (strcmp(a, b) < 0 ? -1 : 0), 0);
}

pmix_value_cmp_t bytes(const char *a, size_t na, const char *b, size_t nb) noexcept {
    if (na != nb) return num(na, nb);
    if (na == 0) return PMIX_EQUAL;
    int r = memcmp(a, b, na);
    return num(r > 0 ? 1 : (r < 0 ? -1 : 0), 0);
}

pmix_value_cmp_t argv(char **a, char **b) noexcept {
    int na = argv_count(a), nb = argv_count(b);
    if (na != nb) return num(na, nb);
    for (int i = 0; i < na; ++i) {
        pmix_value_cmp_t r = str(a[i], b[i]);
        if (r != PMIX_EQUAL) return r;
    }
    return PMIX_EQUAL;
}

#define ZPMIX_CMP(expr)                  \
    do {                                 \
        pmix_value_cmp_t _r = (expr);    \
        if (_r != PMIX_EQUAL) return _r; \
    } while (0)

template <class T>
pmix_status_t get_array_of(const msgpack::object &o, pmix_data_type_t t, T **out, size_t *n,
                           int depth) {
    void *arr = nullptr;
    pmix_status_t rc = unpack_array_of(o, t, &arr, n, depth);
    *out = static_cast<T *>(arr);
    return rc;
}

template <class T>
const T &as(const void *p) {
    return *static_cast<const T *>(p);
}

template <class T>
T &as(void *p) {
    return *static_cast<T *>(p);
}

void print_str(std::string &out, const char *s) {
    out += s == nullptr ? "NULL" : s;
}

// Structured types unload as a newly allocated deep copy.
pmix_status_t unload_copy(const pmix_value_t *v, void **data, size_t *sz) noexcept {
    pmix_status_t rc = array_copy(v->type, data, value_payload(v), 1);
    if (rc == PMIX_SUCCESS) *sz = type_size(v->type);
    return rc;
}

// ---------------------------------------------------------------- char *

namespace string_ops {
void destruct(void *o) noexcept {
    free(as<char *>(o));
}
pmix_status_t xfer(void *d, const void *s) noexcept {
    return dup_into(&as<char *>(d), as<char *>(s));
}
pmix_value_cmp_t compare(const void *a, const void *b) noexcept {
    return str(as<char *>(a), as<char *>(b));
}
void pack(Packer &pk, const void *o) {
    pack_str(pk, as<char *>(o));
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    return get_str(o, &as<char *>(d));
}
void print(std::string &out, const void *o) {
    print_str(out, as<char *>(o));
}
// The data is the string itself.
pmix_status_t load(pmix_value_t *v, const void *data) noexcept {
    v->data.string = strdup(static_cast<const char *>(data));
    return v->data.string == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}
pmix_status_t unload(const pmix_value_t *v, void **data, size_t *sz) noexcept {
    *data = nullptr;
    if (v->data.string == nullptr) return PMIX_SUCCESS;
    *data = strdup(v->data.string);
    if (*data == nullptr) return PMIX_ERR_NOMEM;
    *sz = strlen(v->data.string) + 1;
    return PMIX_SUCCESS;
}
}  // namespace string_ops

// ---------------------------------------------------------------- pmix_byte_object_t

namespace byte_object_ops {
void destruct(void *o) noexcept {
    free(as<pmix_byte_object_t>(o).bytes);
}
pmix_status_t xfer(void *d, const void *s) noexcept {
    return dup_bytes(&as<pmix_byte_object_t>(d), &as<pmix_byte_object_t>(s));
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_byte_object_t>(pa), &b = as<pmix_byte_object_t>(pb);
    return bytes(a.bytes, a.size, b.bytes, b.size);
}
void pack(Packer &pk, const void *o) {
    auto &b = as<pmix_byte_object_t>(o);
    pack_bin(pk, b.bytes, b.size);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &b = as<pmix_byte_object_t>(d);
    return get_bin(o, &b.bytes, &b.size);
}
void print(std::string &out, const void *o) {
    char buf[48];
    snprintf(buf, sizeof buf, "<%zu bytes>", as<pmix_byte_object_t>(o).size);
    out += buf;
}
// The bytes themselves, not the object.
pmix_status_t unload(const pmix_value_t *v, void **data, size_t *sz) noexcept {
    *data = nullptr;
    if (v->data.bo.size == 0 || v->data.bo.bytes == nullptr) return PMIX_SUCCESS;
    *data = malloc(v->data.bo.size);
    if (*data == nullptr) return PMIX_ERR_NOMEM;
    memcpy(*data, v->data.bo.bytes, v->data.bo.size);
    *sz = v->data.bo.size;
    return PMIX_SUCCESS;
}
}  // namespace byte_object_ops

// ---------------------------------------------------------------- void * (never crosses processes)

namespace pointer_ops {
pmix_value_cmp_t compare(const void *a, const void *b) noexcept {
    return as<void *>(a) == as<void *>(b) ? PMIX_EQUAL : PMIX_VALUE_COMPARISON_NOT_AVAIL;
}
bool encodable(const void *, int) {
    return false;
}
// The data is the pointer itself.
pmix_status_t load(pmix_value_t *v, const void *data) noexcept {
    v->data.ptr = const_cast<void *>(data);
    return PMIX_SUCCESS;
}
pmix_status_t unload(const pmix_value_t *v, void **data, size_t *sz) noexcept {
    *data = v->data.ptr;
    *sz = sizeof(void *);
    return PMIX_SUCCESS;
}
}  // namespace pointer_ops

// ---------------------------------------------------------------- struct timeval

namespace timeval_ops {
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<struct timeval>(pa), &b = as<struct timeval>(pb);
    ZPMIX_CMP(num(a.tv_sec, b.tv_sec));
    return num(a.tv_usec, b.tv_usec);
}
void pack(Packer &pk, const void *o) {
    pack_tv(pk, as<struct timeval>(o));
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    return get_tv(o, &as<struct timeval>(d));
}
void print(std::string &out, const void *o) {
    auto &tv = as<struct timeval>(o);
    char buf[64];
    snprintf(buf, sizeof buf, "%lld.%06ld", static_cast<long long>(tv.tv_sec),
             static_cast<long>(tv.tv_usec));
    out += buf;
}
}  // namespace timeval_ops

// ---------------------------------------------------------------- pmix_nspace_t

namespace nspace_ops {
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    int r = strncmp(static_cast<const char *>(pa), static_cast<const char *>(pb), PMIX_MAX_NSLEN);
    return num(r > 0 ? 1 : (r < 0 ? -1 : 0), 0);
}
void pack(Packer &pk, const void *o) {
    pack_strn(pk, static_cast<const char *>(o), PMIX_MAX_NSLEN);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    return get_fixed(o, static_cast<char *>(d), PMIX_MAX_NSLEN);
}
void print(std::string &out, const void *o) {
    out += static_cast<const char *>(o);
}
// The data is the namespace string.
pmix_status_t load(pmix_value_t *v, const void *data) noexcept {
    auto *ns = static_cast<pmix_nspace_t *>(calloc(1, sizeof(pmix_nspace_t)));
    if (ns == nullptr) return PMIX_ERR_NOMEM;
    load_string(*ns, static_cast<const char *>(data), PMIX_MAX_NSLEN);
    v->data.nspace = ns;
    return PMIX_SUCCESS;
}
}  // namespace nspace_ops

// ---------------------------------------------------------------- pmix_proc_t

namespace proc_ops {
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_proc_t>(pa), &b = as<pmix_proc_t>(pb);
    ZPMIX_CMP(nspace_ops::compare(a.nspace, b.nspace));
    return num(a.rank, b.rank);
}
void pack(Packer &pk, const void *o) {
    pack_proc(pk, as<pmix_proc_t>(o));
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    return get_proc(o, &as<pmix_proc_t>(d));
}
void print(std::string &out, const void *o) {
    auto &p = as<pmix_proc_t>(o);
    char buf[96];
    snprintf(buf, sizeof buf, "%.*s:%" PRIu32, 64, p.nspace, p.rank);
    out += buf;
}
}  // namespace proc_ops

// ---------------------------------------------------------------- pmix_value_t

namespace value_ops {
void destruct(void *o) noexcept {
    value_destruct(&as<pmix_value_t>(o));
}
pmix_status_t xfer(void *d, const void *s) noexcept {
    return value_xfer(&as<pmix_value_t>(d), &as<pmix_value_t>(s));
}
pmix_value_cmp_t compare(const void *a, const void *b) noexcept {
    return value_compare(const_cast<pmix_value_t *>(&as<pmix_value_t>(a)),
                         const_cast<pmix_value_t *>(&as<pmix_value_t>(b)));
}
bool encodable(const void *o, int depth) {
    return value_encodable(as<pmix_value_t>(o), depth + 1);
}
void pack(Packer &pk, const void *o) {
    pack_value(pk, as<pmix_value_t>(o));
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    return unpack_value(o, &as<pmix_value_t>(d), depth);
}
}  // namespace value_ops

// ---------------------------------------------------------------- pmix_info_t

namespace info_ops {
void destruct(void *o) noexcept {
    auto &i = as<pmix_info_t>(o);
    if (!PMIX_INFO_IS_PERSISTENT(&i)) value_destruct(&i.value);
}
pmix_status_t xfer(void *d, const void *s) noexcept {
    return info_xfer(&as<pmix_info_t>(d), &as<pmix_info_t>(s));
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_info_t>(pa), &b = as<pmix_info_t>(pb);
    ZPMIX_CMP(str(a.key, b.key));
    ZPMIX_CMP(num(a.flags, b.flags));
    return object_compare(PMIX_VALUE, &a.value, &b.value);
}
bool encodable(const void *o, int depth) {
    return value_encodable(as<pmix_info_t>(o).value, depth + 1);
}
void pack(Packer &pk, const void *o) {
    pack_info(pk, as<pmix_info_t>(o));
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    auto &i = as<pmix_info_t>(d);
    const msgpack::object *f = tuple(o, 3);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_fixed(f[0], i.key, PMIX_MAX_KEYLEN));
    ZPMIX_TRY(get_int(f[1], &i.flags));
    i.flags &= ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);  // we own the value
    return unpack_value(f[2], &i.value, depth + 1);
}
}  // namespace info_ops

// ---------------------------------------------------------------- pmix_pdata_t

namespace pdata_ops {
void destruct(void *o) noexcept {
    value_destruct(&as<pmix_pdata_t>(o).value);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_pdata_t>(pd);
    auto &s = as<pmix_pdata_t>(ps);
    memcpy(&d.proc, &s.proc, sizeof(d.proc));
    memcpy(d.key, s.key, sizeof(d.key));
    return value_xfer(&d.value, &s.value);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_pdata_t>(pa), &b = as<pmix_pdata_t>(pb);
    ZPMIX_CMP(object_compare(PMIX_PROC, &a.proc, &b.proc));
    ZPMIX_CMP(str(a.key, b.key));
    return object_compare(PMIX_VALUE, &a.value, &b.value);
}
bool encodable(const void *o, int depth) {
    return value_encodable(as<pmix_pdata_t>(o).value, depth + 1);
}
void pack(Packer &pk, const void *o) {
    auto &p = as<pmix_pdata_t>(o);
    pk.pack_array(3);
    pack_proc(pk, p.proc);
    pack_strn(pk, p.key, PMIX_MAX_KEYLEN);
    pack_value(pk, p.value);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    auto &p = as<pmix_pdata_t>(d);
    const msgpack::object *f = tuple(o, 3);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_proc(f[0], &p.proc));
    ZPMIX_TRY(get_fixed(f[1], p.key, PMIX_MAX_KEYLEN));
    return unpack_value(f[2], &p.value, depth + 1);
}
}  // namespace pdata_ops

// ---------------------------------------------------------------- pmix_app_t

namespace app_ops {
void destruct(void *o) noexcept {
    auto &a = as<pmix_app_t>(o);
    free(a.cmd);
    argv_free(a.argv);
    argv_free(a.env);
    free(a.cwd);
    array_free(PMIX_INFO, a.info, a.ninfo);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_app_t>(pd);
    auto &s = as<pmix_app_t>(ps);
    d.maxprocs = s.maxprocs;
    ZPMIX_TRY(dup_into(&d.cmd, s.cmd));
    ZPMIX_TRY(dup_argv(&d.argv, s.argv));
    ZPMIX_TRY(dup_argv(&d.env, s.env));
    ZPMIX_TRY(dup_into(&d.cwd, s.cwd));
    ZPMIX_TRY(dup_array(PMIX_INFO, &d.info, s.info, s.ninfo));
    d.ninfo = d.info == nullptr ? 0 : s.ninfo;
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_app_t>(pa), &b = as<pmix_app_t>(pb);
    ZPMIX_CMP(str(a.cmd, b.cmd));
    ZPMIX_CMP(argv(a.argv, b.argv));
    ZPMIX_CMP(argv(a.env, b.env));
    ZPMIX_CMP(str(a.cwd, b.cwd));
    ZPMIX_CMP(num(a.maxprocs, b.maxprocs));
    return array_compare(PMIX_INFO, a.info, a.ninfo, b.info, b.ninfo);
}
bool encodable(const void *o, int depth) {
    auto &a = as<pmix_app_t>(o);
    return array_encodable(PMIX_INFO, a.info, a.ninfo, depth + 1);
}
void pack(Packer &pk, const void *o) {
    auto &a = as<pmix_app_t>(o);
    pk.pack_array(6);
    pack_str(pk, a.cmd);
    pack_argv(pk, a.argv);
    pack_argv(pk, a.env);
    pack_str(pk, a.cwd);
    pk.pack_int(a.maxprocs);
    pack_array_of(pk, PMIX_INFO, a.info, a.ninfo);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    auto &a = as<pmix_app_t>(d);
    const msgpack::object *f = tuple(o, 6);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &a.cmd));
    ZPMIX_TRY(get_argv(f[1], &a.argv));
    ZPMIX_TRY(get_argv(f[2], &a.env));
    ZPMIX_TRY(get_str(f[3], &a.cwd));
    ZPMIX_TRY(get_int(f[4], &a.maxprocs));
    return get_array_of(f[5], PMIX_INFO, &a.info, &a.ninfo, depth);
}
}  // namespace app_ops

// ---------------------------------------------------------------- pmix_query_t

namespace query_ops {
void destruct(void *o) noexcept {
    auto &q = as<pmix_query_t>(o);
    argv_free(q.keys);
    array_free(PMIX_INFO, q.qualifiers, q.nqual);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_query_t>(pd);
    auto &s = as<pmix_query_t>(ps);
    ZPMIX_TRY(dup_argv(&d.keys, s.keys));
    ZPMIX_TRY(dup_array(PMIX_INFO, &d.qualifiers, s.qualifiers, s.nqual));
    d.nqual = d.qualifiers == nullptr ? 0 : s.nqual;
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_query_t>(pa), &b = as<pmix_query_t>(pb);
    ZPMIX_CMP(argv(a.keys, b.keys));
    return array_compare(PMIX_INFO, a.qualifiers, a.nqual, b.qualifiers, b.nqual);
}
bool encodable(const void *o, int depth) {
    auto &q = as<pmix_query_t>(o);
    return array_encodable(PMIX_INFO, q.qualifiers, q.nqual, depth + 1);
}
void pack(Packer &pk, const void *o) {
    auto &q = as<pmix_query_t>(o);
    pk.pack_array(2);
    pack_argv(pk, q.keys);
    pack_array_of(pk, PMIX_INFO, q.qualifiers, q.nqual);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    auto &q = as<pmix_query_t>(d);
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_argv(f[0], &q.keys));
    return get_array_of(f[1], PMIX_INFO, &q.qualifiers, &q.nqual, depth);
}
}  // namespace query_ops

// ---------------------------------------------------------------- pmix_proc_info_t

namespace proc_info_ops {
void destruct(void *o) noexcept {
    auto &p = as<pmix_proc_info_t>(o);
    free(p.hostname);
    free(p.executable_name);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_proc_info_t>(pd);
    auto &s = as<pmix_proc_info_t>(ps);
    memcpy(&d.proc, &s.proc, sizeof(d.proc));
    d.pid = s.pid;
    d.exit_code = s.exit_code;
    d.state = s.state;
    ZPMIX_TRY(dup_into(&d.hostname, s.hostname));
    return dup_into(&d.executable_name, s.executable_name);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_proc_info_t>(pa), &b = as<pmix_proc_info_t>(pb);
    ZPMIX_CMP(object_compare(PMIX_PROC, &a.proc, &b.proc));
    ZPMIX_CMP(str(a.hostname, b.hostname));
    ZPMIX_CMP(str(a.executable_name, b.executable_name));
    ZPMIX_CMP(num(a.pid, b.pid));
    ZPMIX_CMP(num(a.exit_code, b.exit_code));
    return num(a.state, b.state);
}
void pack(Packer &pk, const void *o) {
    auto &p = as<pmix_proc_info_t>(o);
    pk.pack_array(6);
    pack_proc(pk, p.proc);
    pack_str(pk, p.hostname);
    pack_str(pk, p.executable_name);
    pk.pack_int64(p.pid);
    pk.pack_int(p.exit_code);
    pk.pack_uint8(p.state);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &p = as<pmix_proc_info_t>(d);
    const msgpack::object *f = tuple(o, 6);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_proc(f[0], &p.proc));
    ZPMIX_TRY(get_str(f[1], &p.hostname));
    ZPMIX_TRY(get_str(f[2], &p.executable_name));
    ZPMIX_TRY(get_int(f[3], &p.pid));
    ZPMIX_TRY(get_int(f[4], &p.exit_code));
    return get_int(f[5], &p.state);
}
}  // namespace proc_info_ops

// ---------------------------------------------------------------- pmix_data_array_t

namespace data_array_ops {
void destruct(void *o) noexcept {
    data_array_destruct(&as<pmix_data_array_t>(o));
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_data_array_t>(pd);
    auto &s = as<pmix_data_array_t>(ps);
    d.type = s.type;
    d.size = 0;
    d.array = nullptr;
    if (s.array == nullptr || s.size == 0) return PMIX_SUCCESS;
    ZPMIX_TRY(array_copy(s.type, &d.array, s.array, s.size));
    d.size = s.size;
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_data_array_t>(pa), &b = as<pmix_data_array_t>(pb);
    if (a.type != b.type) return PMIX_VALUE_TYPE_DIFFERENT;
    return array_compare(a.type, a.array, a.size, b.array, b.size);
}
bool encodable(const void *o, int depth) {
    auto &d = as<pmix_data_array_t>(o);
    return array_encodable(d.type, d.array, d.size, depth + 1);
}
void pack(Packer &pk, const void *o) {
    auto &d = as<pmix_data_array_t>(o);
    pk.pack_array(2);
    pk.pack_uint16(d.type);
    pack_array_of(pk, d.type, d.array, d.size);
}
pmix_status_t unpack(const msgpack::object &o, void *pd, int depth) {
    auto &d = as<pmix_data_array_t>(pd);
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    pmix_data_type_t et = 0;
    ZPMIX_TRY(get_int(f[0], &et));
    d.type = et;
    bool empty = f[1].type == object_type::ARRAY && f[1].via.array.size == 0;
    if (et == PMIX_POINTER || (type_size(et) == 0 && !empty)) return PMIX_ERR_BAD_PARAM;
    return unpack_array_of(f[1], et, &d.array, &d.size, depth);
}
void print(std::string &out, const void *o) {
    auto &d = as<pmix_data_array_t>(o);
    char buf[128];
    snprintf(buf, sizeof buf, "<array of %zu %s>", d.size, data_type(d.type).name);
    out += buf;
}
}  // namespace data_array_ops

// ---------------------------------------------------------------- pmix_envar_t

namespace envar_ops {
void destruct(void *o) noexcept {
    auto &e = as<pmix_envar_t>(o);
    free(e.envar);
    free(e.value);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_envar_t>(pd);
    auto &s = as<pmix_envar_t>(ps);
    d.separator = s.separator;
    ZPMIX_TRY(dup_into(&d.envar, s.envar));
    return dup_into(&d.value, s.value);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_envar_t>(pa), &b = as<pmix_envar_t>(pb);
    ZPMIX_CMP(str(a.envar, b.envar));
    ZPMIX_CMP(str(a.value, b.value));
    return num(a.separator, b.separator);
}
void pack(Packer &pk, const void *o) {
    auto &e = as<pmix_envar_t>(o);
    pk.pack_array(3);
    pack_str(pk, e.envar);
    pack_str(pk, e.value);
    pk.pack_uint8(static_cast<uint8_t>(e.separator));
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &e = as<pmix_envar_t>(d);
    const msgpack::object *f = tuple(o, 3);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &e.envar));
    ZPMIX_TRY(get_str(f[1], &e.value));
    uint8_t sep = 0;
    ZPMIX_TRY(get_int(f[2], &sep));
    e.separator = static_cast<char>(sep);
    return PMIX_SUCCESS;
}
void print(std::string &out, const void *o) {
    auto &e = as<pmix_envar_t>(o);
    print_str(out, e.envar);
    out += "=";
    print_str(out, e.value);
}
}  // namespace envar_ops

// ---------------------------------------------------------------- pmix_coord_t

namespace coord_ops {
void destruct(void *o) noexcept {
    free(as<pmix_coord_t>(o).coord);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_coord_t>(pd);
    auto &s = as<pmix_coord_t>(ps);
    d.view = s.view;
    d.coord = nullptr;
    d.dims = 0;
    if (s.coord == nullptr || s.dims == 0) return PMIX_SUCCESS;
    d.coord = static_cast<uint32_t *>(calloc(s.dims, sizeof(uint32_t)));
    if (d.coord == nullptr) return PMIX_ERR_NOMEM;
    memcpy(d.coord, s.coord, s.dims * sizeof(uint32_t));
    d.dims = s.dims;
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_coord_t>(pa), &b = as<pmix_coord_t>(pb);
    ZPMIX_CMP(num(a.view, b.view));
    return array_compare(PMIX_UINT32, a.coord, a.dims, b.coord, b.dims);
}
void pack(Packer &pk, const void *o) {
    auto &c = as<pmix_coord_t>(o);
    pk.pack_array(2);
    pk.pack_uint8(c.view);
    pack_array_of(pk, PMIX_UINT32, c.coord, c.dims);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    auto &c = as<pmix_coord_t>(d);
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_int(f[0], &c.view));
    return get_array_of(f[1], PMIX_UINT32, &c.coord, &c.dims, depth);
}
}  // namespace coord_ops

// ---------------------------------------------------------------- pmix_regattr_t

namespace regattr_ops {
void destruct(void *o) noexcept {
    auto &r = as<pmix_regattr_t>(o);
    free(r.name);
    argv_free(r.description);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_regattr_t>(pd);
    auto &s = as<pmix_regattr_t>(ps);
    memcpy(d.string, s.string, sizeof(d.string));
    d.type = s.type;
    ZPMIX_TRY(dup_into(&d.name, s.name));
    return dup_argv(&d.description, s.description);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_regattr_t>(pa), &b = as<pmix_regattr_t>(pb);
    ZPMIX_CMP(str(a.name, b.name));
    ZPMIX_CMP(str(a.string, b.string));
    ZPMIX_CMP(num(a.type, b.type));
    return argv(a.description, b.description);
}
void pack(Packer &pk, const void *o) {
    auto &r = as<pmix_regattr_t>(o);
    pk.pack_array(4);
    pack_str(pk, r.name);
    pack_strn(pk, r.string, PMIX_MAX_KEYLEN);
    pk.pack_uint16(r.type);
    pack_argv(pk, r.description);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &r = as<pmix_regattr_t>(d);
    const msgpack::object *f = tuple(o, 4);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &r.name));
    ZPMIX_TRY(get_fixed(f[1], r.string, PMIX_MAX_KEYLEN));
    ZPMIX_TRY(get_int(f[2], &r.type));
    return get_argv(f[3], &r.description);
}
}  // namespace regattr_ops

// ---------------------------------------------------------------- pmix_cpuset_t (hwloc bitmaps)

namespace cpuset_ops {
void destruct(void *o) noexcept {
    cpuset_destruct(&as<pmix_cpuset_t>(o));
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_cpuset_t>(pd);
    auto &s = as<pmix_cpuset_t>(ps);
    d.bitmap = nullptr;
    ZPMIX_TRY(dup_into(&d.source, s.source));
    if (s.bitmap == nullptr) return PMIX_SUCCESS;
    if (!is_hwloc(s.source)) return PMIX_ERR_NOT_SUPPORTED;
    d.bitmap = hwloc_bitmap_dup(static_cast<hwloc_const_bitmap_t>(s.bitmap));
    return d.bitmap == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_cpuset_t>(pa), &b = as<pmix_cpuset_t>(pb);
    ZPMIX_CMP(str(a.source, b.source));
    if (a.bitmap == nullptr || b.bitmap == nullptr)
        return num(a.bitmap != nullptr, b.bitmap != nullptr);
    if (!is_hwloc(a.source)) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    int r = hwloc_bitmap_compare(static_cast<hwloc_const_bitmap_t>(a.bitmap),
                                 static_cast<hwloc_const_bitmap_t>(b.bitmap));
    return num(r > 0 ? 1 : (r < 0 ? -1 : 0), 0);
}
bool encodable(const void *o, int) {
    auto &c = as<pmix_cpuset_t>(o);
    return c.bitmap == nullptr || is_hwloc(c.source);
}
void pack(Packer &pk, const void *o) {
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
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &c = as<pmix_cpuset_t>(d);
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &c.source));
    if (f[1].type == object_type::NIL) return PMIX_SUCCESS;
    if (f[1].type != object_type::STR || !is_hwloc(c.source)) return kBad;
    std::string list(f[1].via.str.ptr, f[1].via.str.size);
    hwloc_bitmap_t bm = hwloc_bitmap_alloc();
    if (bm == nullptr) return PMIX_ERR_NOMEM;
    c.bitmap = bm;
    return hwloc_bitmap_list_sscanf(bm, list.c_str()) == 0 ? PMIX_SUCCESS : kBad;
}
}  // namespace cpuset_ops

// ---------------------------------------------------------------- pmix_topology_t (hwloc)

namespace topology_ops {
void destruct(void *o) noexcept {
    topology_destruct(&as<pmix_topology_t>(o));
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_topology_t>(pd);
    auto &s = as<pmix_topology_t>(ps);
    d.topology = nullptr;
    ZPMIX_TRY(dup_into(&d.source, s.source));
    if (s.topology == nullptr) return PMIX_SUCCESS;
    if (!is_hwloc(s.source)) return PMIX_ERR_NOT_SUPPORTED;
    hwloc_topology_t copy = nullptr;
    if (hwloc_topology_dup(&copy, static_cast<hwloc_topology_t>(s.topology)) != 0)
        return PMIX_ERR_NOMEM;
    d.topology = copy;
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_topology_t>(pa), &b = as<pmix_topology_t>(pb);
    ZPMIX_CMP(str(a.source, b.source));
    if (a.topology == b.topology) return PMIX_EQUAL;
    if (a.topology == nullptr || b.topology == nullptr)
        return num(a.topology != nullptr, b.topology != nullptr);
    return PMIX_VALUE_COMPARISON_NOT_AVAIL;
}
bool encodable(const void *o, int) {
    auto &c = as<pmix_topology_t>(o);
    return c.topology == nullptr || is_hwloc(c.source);
}
void pack(Packer &pk, const void *o) {
    auto &c = as<pmix_topology_t>(o);
    pk.pack_array(2);
    pack_str(pk, c.source);
    char *xml = nullptr;
    int len = 0;
    if (c.topology != nullptr &&
        hwloc_topology_export_xmlbuffer(static_cast<hwloc_topology_t>(c.topology), &xml, &len, 0) ==
            0) {
        size_t n = len > 0 ? static_cast<size_t>(len) - 1 : 0;  // without the NUL
        pk.pack_str(static_cast<uint32_t>(n));
        pk.pack_str_body(xml, static_cast<uint32_t>(n));
        hwloc_free_xmlbuffer(static_cast<hwloc_topology_t>(c.topology), xml);
    } else {
        pk.pack_nil();
    }
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &c = as<pmix_topology_t>(d);
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &c.source));
    if (f[1].type == object_type::NIL) return PMIX_SUCCESS;
    if (f[1].type != object_type::STR || !is_hwloc(c.source)) return kBad;
    std::string xml(f[1].via.str.ptr, f[1].via.str.size);
    hwloc_topology_t topo = nullptr;
    if (hwloc_topology_init(&topo) != 0) return PMIX_ERR_NOMEM;
    if (hwloc_topology_set_xmlbuffer(topo, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0 ||
        hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return kBad;
    }
    c.topology = topo;
    return PMIX_SUCCESS;
}
}  // namespace topology_ops

// ---------------------------------------------------------------- pmix_geometry_t

namespace geometry_ops {
void destruct(void *o) noexcept {
    auto &g = as<pmix_geometry_t>(o);
    free(g.uuid);
    free(g.osname);
    array_free(PMIX_COORD, g.coordinates, g.ncoords);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_geometry_t>(pd);
    auto &s = as<pmix_geometry_t>(ps);
    d.fabric = s.fabric;
    ZPMIX_TRY(dup_into(&d.uuid, s.uuid));
    ZPMIX_TRY(dup_into(&d.osname, s.osname));
    ZPMIX_TRY(dup_array(PMIX_COORD, &d.coordinates, s.coordinates, s.ncoords));
    d.ncoords = d.coordinates == nullptr ? 0 : s.ncoords;
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_geometry_t>(pa), &b = as<pmix_geometry_t>(pb);
    ZPMIX_CMP(num(a.fabric, b.fabric));
    ZPMIX_CMP(str(a.uuid, b.uuid));
    ZPMIX_CMP(str(a.osname, b.osname));
    return array_compare(PMIX_COORD, a.coordinates, a.ncoords, b.coordinates, b.ncoords);
}
void pack(Packer &pk, const void *o) {
    auto &g = as<pmix_geometry_t>(o);
    pk.pack_array(4);
    pk.pack_uint64(g.fabric);
    pack_str(pk, g.uuid);
    pack_str(pk, g.osname);
    pack_array_of(pk, PMIX_COORD, g.coordinates, g.ncoords);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    auto &g = as<pmix_geometry_t>(d);
    const msgpack::object *f = tuple(o, 4);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_int(f[0], &g.fabric));
    ZPMIX_TRY(get_str(f[1], &g.uuid));
    ZPMIX_TRY(get_str(f[2], &g.osname));
    return get_array_of(f[3], PMIX_COORD, &g.coordinates, &g.ncoords, depth);
}
}  // namespace geometry_ops

// ---------------------------------------------------------------- pmix_device_distance_t

namespace device_dist_ops {
void destruct(void *o) noexcept {
    auto &d = as<pmix_device_distance_t>(o);
    free(d.uuid);
    free(d.osname);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_device_distance_t>(pd);
    auto &s = as<pmix_device_distance_t>(ps);
    d.type = s.type;
    d.mindist = s.mindist;
    d.maxdist = s.maxdist;
    ZPMIX_TRY(dup_into(&d.uuid, s.uuid));
    return dup_into(&d.osname, s.osname);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_device_distance_t>(pa), &b = as<pmix_device_distance_t>(pb);
    ZPMIX_CMP(str(a.uuid, b.uuid));
    ZPMIX_CMP(str(a.osname, b.osname));
    ZPMIX_CMP(num(a.type, b.type));
    ZPMIX_CMP(num(a.mindist, b.mindist));
    return num(a.maxdist, b.maxdist);
}
void pack(Packer &pk, const void *o) {
    auto &d = as<pmix_device_distance_t>(o);
    pk.pack_array(5);
    pack_str(pk, d.uuid);
    pack_str(pk, d.osname);
    pk.pack_uint64(d.type);
    pk.pack_uint16(d.mindist);
    pk.pack_uint16(d.maxdist);
}
pmix_status_t unpack(const msgpack::object &o, void *pd, int) {
    auto &d = as<pmix_device_distance_t>(pd);
    const msgpack::object *f = tuple(o, 5);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &d.uuid));
    ZPMIX_TRY(get_str(f[1], &d.osname));
    ZPMIX_TRY(get_int(f[2], &d.type));
    ZPMIX_TRY(get_int(f[3], &d.mindist));
    return get_int(f[4], &d.maxdist);
}
}  // namespace device_dist_ops

// ---------------------------------------------------------------- pmix_endpoint_t

namespace endpoint_ops {
void destruct(void *o) noexcept {
    auto &e = as<pmix_endpoint_t>(o);
    free(e.uuid);
    free(e.osname);
    free(e.endpt.bytes);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_endpoint_t>(pd);
    auto &s = as<pmix_endpoint_t>(ps);
    ZPMIX_TRY(dup_into(&d.uuid, s.uuid));
    ZPMIX_TRY(dup_into(&d.osname, s.osname));
    return dup_bytes(&d.endpt, &s.endpt);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_endpoint_t>(pa), &b = as<pmix_endpoint_t>(pb);
    ZPMIX_CMP(str(a.uuid, b.uuid));
    ZPMIX_CMP(str(a.osname, b.osname));
    return bytes(a.endpt.bytes, a.endpt.size, b.endpt.bytes, b.endpt.size);
}
void pack(Packer &pk, const void *o) {
    auto &e = as<pmix_endpoint_t>(o);
    pk.pack_array(3);
    pack_str(pk, e.uuid);
    pack_str(pk, e.osname);
    pack_bin(pk, e.endpt.bytes, e.endpt.size);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &e = as<pmix_endpoint_t>(d);
    const msgpack::object *f = tuple(o, 3);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &e.uuid));
    ZPMIX_TRY(get_str(f[1], &e.osname));
    return get_bin(f[2], &e.endpt.bytes, &e.endpt.size);
}
}  // namespace endpoint_ops

// ---------------------------------------------------------------- pmix_proc_stats_t

namespace proc_stats_ops {
void destruct(void *o) noexcept {
    auto &s = as<pmix_proc_stats_t>(o);
    free(s.node);
    free(s.cmd);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_proc_stats_t>(pd);
    auto &s = as<pmix_proc_stats_t>(ps);
    memcpy(&d, &s, sizeof(d));
    d.node = d.cmd = nullptr;
    ZPMIX_TRY(dup_into(&d.node, s.node));
    return dup_into(&d.cmd, s.cmd);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_proc_stats_t>(pa), &b = as<pmix_proc_stats_t>(pb);
    ZPMIX_CMP(str(a.node, b.node));
    ZPMIX_CMP(object_compare(PMIX_PROC, &a.proc, &b.proc));
    ZPMIX_CMP(num(a.pid, b.pid));
    ZPMIX_CMP(str(a.cmd, b.cmd));
    ZPMIX_CMP(num(a.state, b.state));
    ZPMIX_CMP(object_compare(PMIX_TIMEVAL, &a.time, &b.time));
    ZPMIX_CMP(num(a.percent_cpu, b.percent_cpu));
    ZPMIX_CMP(num(a.priority, b.priority));
    ZPMIX_CMP(num(a.num_threads, b.num_threads));
    ZPMIX_CMP(num(a.pss, b.pss));
    ZPMIX_CMP(num(a.vsize, b.vsize));
    ZPMIX_CMP(num(a.rss, b.rss));
    ZPMIX_CMP(num(a.peak_vsize, b.peak_vsize));
    ZPMIX_CMP(num(a.processor, b.processor));
    return object_compare(PMIX_TIMEVAL, &a.sample_time, &b.sample_time);
}
void pack(Packer &pk, const void *o) {
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
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &s = as<pmix_proc_stats_t>(d);
    const msgpack::object *f = tuple(o, 15);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &s.node));
    ZPMIX_TRY(get_proc(f[1], &s.proc));
    ZPMIX_TRY(get_int(f[2], &s.pid));
    ZPMIX_TRY(get_str(f[3], &s.cmd));
    int8_t state = 0;
    ZPMIX_TRY(get_int(f[4], &state));
    s.state = static_cast<char>(state);
    ZPMIX_TRY(get_tv(f[5], &s.time));
    ZPMIX_TRY(get_float(f[6], &s.percent_cpu));
    ZPMIX_TRY(get_int(f[7], &s.priority));
    ZPMIX_TRY(get_int(f[8], &s.num_threads));
    ZPMIX_TRY(get_float(f[9], &s.pss));
    ZPMIX_TRY(get_float(f[10], &s.vsize));
    ZPMIX_TRY(get_float(f[11], &s.rss));
    ZPMIX_TRY(get_float(f[12], &s.peak_vsize));
    ZPMIX_TRY(get_int(f[13], &s.processor));
    return get_tv(f[14], &s.sample_time);
}
}  // namespace proc_stats_ops

// ---------------------------------------------------------------- pmix_disk_stats_t

namespace disk_stats_ops {
constexpr int kCounters = 11;  // num_reads_completed ... weighted_milliseconds_io
void destruct(void *o) noexcept {
    free(as<pmix_disk_stats_t>(o).disk);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_disk_stats_t>(pd);
    auto &s = as<pmix_disk_stats_t>(ps);
    memcpy(&d, &s, sizeof(d));
    return dup_into(&d.disk, s.disk);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_disk_stats_t>(pa), &b = as<pmix_disk_stats_t>(pb);
    ZPMIX_CMP(str(a.disk, b.disk));
    return array_compare(PMIX_UINT64, &a.num_reads_completed, kCounters, &b.num_reads_completed,
                         kCounters);
}
void pack(Packer &pk, const void *o) {
    auto &s = as<pmix_disk_stats_t>(o);
    pk.pack_array(1 + kCounters);
    pack_str(pk, s.disk);
    const uint64_t *f = &s.num_reads_completed;
    for (int i = 0; i < kCounters; ++i) pk.pack_uint64(f[i]);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &s = as<pmix_disk_stats_t>(d);
    const msgpack::object *f = tuple(o, 1 + kCounters);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &s.disk));
    uint64_t *v = &s.num_reads_completed;
    for (int i = 0; i < kCounters; ++i) ZPMIX_TRY(get_int(f[i + 1], &v[i]));
    return PMIX_SUCCESS;
}
}  // namespace disk_stats_ops

// ---------------------------------------------------------------- pmix_net_stats_t

namespace net_stats_ops {
constexpr int kCounters = 6;  // num_bytes_recvd ... num_send_errs
void destruct(void *o) noexcept {
    free(as<pmix_net_stats_t>(o).net_interface);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_net_stats_t>(pd);
    auto &s = as<pmix_net_stats_t>(ps);
    memcpy(&d, &s, sizeof(d));
    return dup_into(&d.net_interface, s.net_interface);
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_net_stats_t>(pa), &b = as<pmix_net_stats_t>(pb);
    ZPMIX_CMP(str(a.net_interface, b.net_interface));
    return array_compare(PMIX_UINT64, &a.num_bytes_recvd, kCounters, &b.num_bytes_recvd, kCounters);
}
void pack(Packer &pk, const void *o) {
    auto &s = as<pmix_net_stats_t>(o);
    pk.pack_array(1 + kCounters);
    pack_str(pk, s.net_interface);
    const uint64_t *f = &s.num_bytes_recvd;
    for (int i = 0; i < kCounters; ++i) pk.pack_uint64(f[i]);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &s = as<pmix_net_stats_t>(d);
    const msgpack::object *f = tuple(o, 1 + kCounters);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &s.net_interface));
    uint64_t *v = &s.num_bytes_recvd;
    for (int i = 0; i < kCounters; ++i) ZPMIX_TRY(get_int(f[i + 1], &v[i]));
    return PMIX_SUCCESS;
}
}  // namespace net_stats_ops

// ---------------------------------------------------------------- pmix_node_stats_t

namespace node_stats_ops {
constexpr int kLoads = 11;  // la ... mapped
void destruct(void *o) noexcept {
    auto &s = as<pmix_node_stats_t>(o);
    free(s.node);
    array_free(PMIX_DISK_STATS, s.diskstats, s.ndiskstats);
    array_free(PMIX_NET_STATS, s.netstats, s.nnetstats);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_node_stats_t>(pd);
    auto &s = as<pmix_node_stats_t>(ps);
    memcpy(&d, &s, sizeof(d));
    d.node = nullptr;
    d.diskstats = nullptr;
    d.netstats = nullptr;
    d.ndiskstats = d.nnetstats = 0;
    ZPMIX_TRY(dup_into(&d.node, s.node));
    ZPMIX_TRY(dup_array(PMIX_DISK_STATS, &d.diskstats, s.diskstats, s.ndiskstats));
    d.ndiskstats = d.diskstats == nullptr ? 0 : s.ndiskstats;
    ZPMIX_TRY(dup_array(PMIX_NET_STATS, &d.netstats, s.netstats, s.nnetstats));
    d.nnetstats = d.netstats == nullptr ? 0 : s.nnetstats;
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_node_stats_t>(pa), &b = as<pmix_node_stats_t>(pb);
    ZPMIX_CMP(str(a.node, b.node));
    ZPMIX_CMP(array_compare(PMIX_FLOAT, &a.la, kLoads, &b.la, kLoads));
    ZPMIX_CMP(object_compare(PMIX_TIMEVAL, &a.sample_time, &b.sample_time));
    ZPMIX_CMP(array_compare(PMIX_DISK_STATS, a.diskstats, a.ndiskstats, b.diskstats, b.ndiskstats));
    return array_compare(PMIX_NET_STATS, a.netstats, a.nnetstats, b.netstats, b.nnetstats);
}
void pack(Packer &pk, const void *o) {
    auto &s = as<pmix_node_stats_t>(o);
    pk.pack_array(4 + kLoads);
    pack_str(pk, s.node);
    const float *f = &s.la;
    for (int i = 0; i < kLoads; ++i) pack_real(pk, f[i]);
    pack_tv(pk, s.sample_time);
    pack_array_of(pk, PMIX_DISK_STATS, s.diskstats, s.ndiskstats);
    pack_array_of(pk, PMIX_NET_STATS, s.netstats, s.nnetstats);
}
pmix_status_t unpack(const msgpack::object &o, void *d, int depth) {
    auto &s = as<pmix_node_stats_t>(d);
    const msgpack::object *f = tuple(o, 4 + kLoads);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_str(f[0], &s.node));
    float *v = &s.la;
    for (int i = 0; i < kLoads; ++i) ZPMIX_TRY(get_float(f[i + 1], &v[i]));
    ZPMIX_TRY(get_tv(f[12], &s.sample_time));
    ZPMIX_TRY(get_array_of(f[13], PMIX_DISK_STATS, &s.diskstats, &s.ndiskstats, depth));
    return get_array_of(f[14], PMIX_NET_STATS, &s.netstats, &s.nnetstats, depth);
}
}  // namespace node_stats_ops

// ---------------------------------------------------------------- pmix_data_buffer_t

namespace data_buffer_ops {
// Where unpacking had got to, when the pointer is inside the buffer.
size_t unpacked(const pmix_data_buffer_t &b) noexcept {
    if (b.base_ptr != nullptr && b.unpack_ptr >= b.base_ptr &&
        b.unpack_ptr <= b.base_ptr + b.bytes_used)
        return static_cast<size_t>(b.unpack_ptr - b.base_ptr);
    return 0;
}
void destruct(void *o) noexcept {
    free(as<pmix_data_buffer_t>(o).base_ptr);
}
pmix_status_t xfer(void *pd, const void *ps) noexcept {
    auto &d = as<pmix_data_buffer_t>(pd);
    auto &s = as<pmix_data_buffer_t>(ps);
    memset(&d, 0, sizeof(d));
    if (s.base_ptr == nullptr || s.bytes_used == 0) return PMIX_SUCCESS;
    d.base_ptr = static_cast<char *>(malloc(s.bytes_used));
    if (d.base_ptr == nullptr) return PMIX_ERR_NOMEM;
    memcpy(d.base_ptr, s.base_ptr, s.bytes_used);
    d.bytes_allocated = d.bytes_used = s.bytes_used;
    d.pack_ptr = d.base_ptr + s.bytes_used;
    d.unpack_ptr = d.base_ptr + unpacked(s);
    return PMIX_SUCCESS;
}
pmix_value_cmp_t compare(const void *pa, const void *pb) noexcept {
    auto &a = as<pmix_data_buffer_t>(pa), &b = as<pmix_data_buffer_t>(pb);
    return bytes(a.base_ptr, a.bytes_used, b.base_ptr, b.bytes_used);
}
void pack(Packer &pk, const void *o) {
    auto &b = as<pmix_data_buffer_t>(o);
    pk.pack_array(2);
    pack_bin(pk, b.base_ptr, b.bytes_used);
    pk.pack_uint64(unpacked(b));
}
pmix_status_t unpack(const msgpack::object &o, void *d, int) {
    auto &b = as<pmix_data_buffer_t>(d);
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    size_t size = 0, off = 0;
    ZPMIX_TRY(get_bin(f[0], &b.base_ptr, &size));
    ZPMIX_TRY(get_int(f[1], &off));
    if (off > size) return kBad;
    b.bytes_allocated = b.bytes_used = size;
    b.pack_ptr = b.base_ptr == nullptr ? nullptr : b.base_ptr + size;
    b.unpack_ptr = b.base_ptr == nullptr ? nullptr : b.base_ptr + off;
    return PMIX_SUCCESS;
}
}  // namespace data_buffer_ops

}  // namespace

// ---------------------------------------------------------------- values and infos on the wire

bool value_encodable(const pmix_value_t &v, int depth) {
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

pmix_status_t unpack_value(const msgpack::object &o, pmix_value_t *v, int depth) {
    memset(v, 0, sizeof(*v));
    if (depth > kMaxDepth) return kBad;
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    pmix_data_type_t t = 0;
    ZPMIX_TRY(get_int(f[0], &t));
    const DataType &d = data_type(t);
    if (d.holding == ValueHolding::unsupported) return PMIX_ERR_BAD_PARAM;
    if (d.holding == ValueHolding::none) return f[1].type == object_type::NIL ? PMIX_SUCCESS : kBad;
    if (d.ops->unpack == nullptr) return PMIX_ERR_BAD_PARAM;  // a pointer
    if (d.holding == ValueHolding::pointer) {
        v->type = t;
        if (f[1].type == object_type::NIL) return PMIX_SUCCESS;
        void *obj = array_create(t, 1);
        if (obj == nullptr) return PMIX_ERR_NOMEM;
        pmix_status_t rc = unpack_object(f[1], t, obj, depth + 1);
        if (rc != PMIX_SUCCESS) {
            free(obj);  // unpack_object left it zeroed
            v->type = PMIX_UNDEF;
            return rc;
        }
        v->data.ptr = obj;
        return PMIX_SUCCESS;
    }
    pmix_status_t rc = unpack_object(f[1], t, &v->data, depth + 1);
    if (rc == PMIX_SUCCESS) v->type = t;
    return rc;
}

// ---------------------------------------------------------------- the operations, by type

#define OPS(ns, ...)        \
    const TypeOps ns##Ops { \
        __VA_ARGS__         \
    }

OPS(kString, .destruct = string_ops::destruct, .xfer = string_ops::xfer,
    .compare = string_ops::compare, .pack = string_ops::pack, .unpack = string_ops::unpack,
    .print = string_ops::print, .load = string_ops::load, .unload = string_ops::unload);
OPS(kByteObject, .destruct = byte_object_ops::destruct, .xfer = byte_object_ops::xfer,
    .compare = byte_object_ops::compare, .pack = byte_object_ops::pack,
    .unpack = byte_object_ops::unpack, .print = byte_object_ops::print,
    .unload = byte_object_ops::unload);
OPS(kPointer, .compare = pointer_ops::compare, .encodable = pointer_ops::encodable,
    .load = pointer_ops::load, .unload = pointer_ops::unload);
OPS(kTimeval, .compare = timeval_ops::compare, .pack = timeval_ops::pack,
    .unpack = timeval_ops::unpack, .print = timeval_ops::print);
OPS(kNspace, .compare = nspace_ops::compare, .pack = nspace_ops::pack, .unpack = nspace_ops::unpack,
    .print = nspace_ops::print, .load = nspace_ops::load);
OPS(kProc, .compare = proc_ops::compare, .pack = proc_ops::pack, .unpack = proc_ops::unpack,
    .print = proc_ops::print);
OPS(kValue, .destruct = value_ops::destruct, .xfer = value_ops::xfer, .compare = value_ops::compare,
    .encodable = value_ops::encodable, .pack = value_ops::pack, .unpack = value_ops::unpack);
OPS(kInfo, .destruct = info_ops::destruct, .xfer = info_ops::xfer, .compare = info_ops::compare,
    .encodable = info_ops::encodable, .pack = info_ops::pack, .unpack = info_ops::unpack);
OPS(kPdata, .destruct = pdata_ops::destruct, .xfer = pdata_ops::xfer, .compare = pdata_ops::compare,
    .encodable = pdata_ops::encodable, .pack = pdata_ops::pack, .unpack = pdata_ops::unpack);
OPS(kApp, .destruct = app_ops::destruct, .xfer = app_ops::xfer, .compare = app_ops::compare,
    .encodable = app_ops::encodable, .pack = app_ops::pack, .unpack = app_ops::unpack);
OPS(kQuery, .destruct = query_ops::destruct, .xfer = query_ops::xfer, .compare = query_ops::compare,
    .encodable = query_ops::encodable, .pack = query_ops::pack, .unpack = query_ops::unpack);
OPS(kProcInfo, .destruct = proc_info_ops::destruct, .xfer = proc_info_ops::xfer,
    .compare = proc_info_ops::compare, .pack = proc_info_ops::pack,
    .unpack = proc_info_ops::unpack);
OPS(kDataArray, .destruct = data_array_ops::destruct, .xfer = data_array_ops::xfer,
    .compare = data_array_ops::compare, .encodable = data_array_ops::encodable,
    .pack = data_array_ops::pack, .unpack = data_array_ops::unpack, .print = data_array_ops::print);
OPS(kEnvar, .destruct = envar_ops::destruct, .xfer = envar_ops::xfer, .compare = envar_ops::compare,
    .pack = envar_ops::pack, .unpack = envar_ops::unpack, .print = envar_ops::print,
    .unload = unload_copy);
OPS(kCoord, .destruct = coord_ops::destruct, .xfer = coord_ops::xfer, .compare = coord_ops::compare,
    .pack = coord_ops::pack, .unpack = coord_ops::unpack);
OPS(kRegattr, .destruct = regattr_ops::destruct, .xfer = regattr_ops::xfer,
    .compare = regattr_ops::compare, .pack = regattr_ops::pack, .unpack = regattr_ops::unpack);
OPS(kCpuset, .destruct = cpuset_ops::destruct, .xfer = cpuset_ops::xfer,
    .compare = cpuset_ops::compare, .encodable = cpuset_ops::encodable, .pack = cpuset_ops::pack,
    .unpack = cpuset_ops::unpack);
OPS(kTopology, .destruct = topology_ops::destruct, .xfer = topology_ops::xfer,
    .compare = topology_ops::compare, .encodable = topology_ops::encodable,
    .pack = topology_ops::pack, .unpack = topology_ops::unpack);
OPS(kGeometry, .destruct = geometry_ops::destruct, .xfer = geometry_ops::xfer,
    .compare = geometry_ops::compare, .pack = geometry_ops::pack, .unpack = geometry_ops::unpack);
OPS(kDeviceDist, .destruct = device_dist_ops::destruct, .xfer = device_dist_ops::xfer,
    .compare = device_dist_ops::compare, .pack = device_dist_ops::pack,
    .unpack = device_dist_ops::unpack);
OPS(kEndpoint, .destruct = endpoint_ops::destruct, .xfer = endpoint_ops::xfer,
    .compare = endpoint_ops::compare, .pack = endpoint_ops::pack, .unpack = endpoint_ops::unpack);
OPS(kProcStats, .destruct = proc_stats_ops::destruct, .xfer = proc_stats_ops::xfer,
    .compare = proc_stats_ops::compare, .pack = proc_stats_ops::pack,
    .unpack = proc_stats_ops::unpack);
OPS(kDiskStats, .destruct = disk_stats_ops::destruct, .xfer = disk_stats_ops::xfer,
    .compare = disk_stats_ops::compare, .pack = disk_stats_ops::pack,
    .unpack = disk_stats_ops::unpack);
OPS(kNetStats, .destruct = net_stats_ops::destruct, .xfer = net_stats_ops::xfer,
    .compare = net_stats_ops::compare, .pack = net_stats_ops::pack,
    .unpack = net_stats_ops::unpack);
OPS(kNodeStats, .destruct = node_stats_ops::destruct, .xfer = node_stats_ops::xfer,
    .compare = node_stats_ops::compare, .pack = node_stats_ops::pack,
    .unpack = node_stats_ops::unpack);
OPS(kDataBuffer, .destruct = data_buffer_ops::destruct, .xfer = data_buffer_ops::xfer,
    .compare = data_buffer_ops::compare, .pack = data_buffer_ops::pack,
    .unpack = data_buffer_ops::unpack);

#undef OPS

}  // namespace zpmix::c
