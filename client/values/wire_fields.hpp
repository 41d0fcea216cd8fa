// zpmix: the msgpack fields PMIx objects are made of on the wire (see value_codec.hpp): strings,
// byte strings, argv lists, timevals, procs and numbers, written and read with bounds checks.
// Readers write into zeroed storage; what they allocate on failure the object's destruct frees.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include <msgpack.hpp>

#include "client/values/pmix_helpers.hpp"
#include "pmix.h"

namespace zpmix::c {

using Packer = msgpack::packer<msgpack::sbuffer>;

// msgpack-c packs an integral float as an integer, after checking it against
// float(UINT64_MAX): that rounds up to 2^64, so 2^64 itself passes and its conversion to
// uint64_t is undefined behaviour. 2^64 goes in float format here (the decoders take both).
template <class F>
inline void pack_real(Packer &pk, F v) {
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

inline void pack_str(Packer &pk, const char *s) {
    if (s == nullptr) {
        pk.pack_nil();
        return;
    }
    size_t n = strlen(s);
    pk.pack_str(static_cast<uint32_t>(n));
    pk.pack_str_body(s, static_cast<uint32_t>(n));
}

inline void pack_strn(Packer &pk, const char *s, size_t max) {
    size_t n = strnlen(s, max);
    pk.pack_str(static_cast<uint32_t>(n));
    pk.pack_str_body(s, static_cast<uint32_t>(n));
}

inline void pack_bin(Packer &pk, const char *p, size_t n) {
    if (p == nullptr) n = 0;
    pk.pack_bin(static_cast<uint32_t>(n));
    if (n > 0) pk.pack_bin_body(p, static_cast<uint32_t>(n));
}

inline void pack_argv(Packer &pk, char **argv) {
    if (argv == nullptr) {
        pk.pack_nil();
        return;
    }
    int n = argv_count(argv);
    pk.pack_array(static_cast<uint32_t>(n));
    for (int i = 0; i < n; ++i) pack_str(pk, argv[i]);
}

inline void pack_tv(Packer &pk, const struct timeval &tv) {
    pk.pack_array(2);
    pk.pack_int64(static_cast<int64_t>(tv.tv_sec));
    pk.pack_int64(static_cast<int64_t>(tv.tv_usec));
}

inline void pack_proc(Packer &pk, const pmix_proc_t &p) {
    pk.pack_array(2);
    pack_strn(pk, p.nspace, PMIX_MAX_NSLEN);
    pk.pack_uint32(p.rank);
}

// ---------------------------------------------------------------- reading

using msgpack::type::object_type;
inline constexpr pmix_status_t kBad = PMIX_ERR_UNPACK_FAILURE;

#define ZPMIX_TRY(expr)                      \
    do {                                     \
        pmix_status_t _rc = (expr);          \
        if (_rc != PMIX_SUCCESS) return _rc; \
    } while (0)

inline const msgpack::object *tuple(const msgpack::object &o, uint32_t n) {
    if (o.type != object_type::ARRAY || o.via.array.size != n) return nullptr;
    return o.via.array.ptr;
}

template <class T>
inline pmix_status_t get_int(const msgpack::object &o, T *out) {
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
inline pmix_status_t get_float(const msgpack::object &o, double *out) {
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

inline pmix_status_t get_float(const msgpack::object &o, float *out) {
    double d = 0;
    ZPMIX_TRY(get_float(o, &d));
    *out = static_cast<float>(d);
    return PMIX_SUCCESS;
}

// nil -> NULL, str -> malloc'ed copy
inline pmix_status_t get_str(const msgpack::object &o, char **out) {
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
inline pmix_status_t get_fixed(const msgpack::object &o, char *dst, size_t max) {
    if (o.type != object_type::STR) return kBad;
    if (o.via.str.size > max) return PMIX_ERR_BAD_PARAM;
    memset(dst, 0, max + 1);
    if (o.via.str.size > 0) memcpy(dst, o.via.str.ptr, o.via.str.size);
    return PMIX_SUCCESS;
}

inline pmix_status_t get_bin(const msgpack::object &o, char **bytes, size_t *size) {
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

inline pmix_status_t get_argv(const msgpack::object &o, char ***out) {
    *out = nullptr;
    if (o.type == object_type::NIL) return PMIX_SUCCESS;
    if (o.type != object_type::ARRAY) return kBad;
    uint32_t n = o.via.array.size;
    auto **argv = static_cast<char **>(calloc(static_cast<size_t>(n) + 1, sizeof(char *)));
    if (argv == nullptr) return PMIX_ERR_NOMEM;
    *out = argv;  // the caller's destruct frees a partial result
    for (uint32_t i = 0; i < n; ++i) {
        if (o.via.array.ptr[i].type != object_type::STR) return kBad;
        ZPMIX_TRY(get_str(o.via.array.ptr[i], &argv[i]));
    }
    return PMIX_SUCCESS;
}

inline pmix_status_t get_tv(const msgpack::object &o, struct timeval *tv) {
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_int(f[0], &tv->tv_sec));
    return get_int(f[1], &tv->tv_usec);
}

inline pmix_status_t get_proc(const msgpack::object &o, pmix_proc_t *p) {
    const msgpack::object *f = tuple(o, 2);
    if (f == nullptr) return kBad;
    ZPMIX_TRY(get_fixed(f[0], p->nspace, PMIX_MAX_NSLEN));
    return get_int(f[1], &p->rank);
}

}  // namespace zpmix::c
