// zpmix: the table of PMIx data types. One row per type code: its name, the size of its C type,
// how a pmix_value_t holds it, and the operations on its objects. Every type-dependent operation
// (destruct, deep copy, compare, wire encoding and decoding, printing, value load/unload) looks
// its type up here (an array index) instead of switching over the code.
//
// Fixed-width numbers share one set of operations per C type (Number<T>): copied by memcpy of
// `size` bytes, compared by value, printed with the format of their kind. On the wire a number
// is msgpack's shortest form of its value, read back range-checked against the C type, so its
// wire width is `size` (floats and doubles keep their precision: float32/float64). Strings, byte
// objects and the structures have their own operations (pmix_type_ops.cpp).
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>

#include <msgpack.hpp>

#include "pmix_common.h"

namespace zpmix::c {

using Packer = msgpack::packer<msgpack::sbuffer>;

// Whether a cpuset's or topology's `source` names hwloc: the only kind zpmix can copy or send.
inline bool is_hwloc(const char *source) noexcept {
    return source != nullptr && std::strncmp(source, "hwloc", 5) == 0;
}

// How a pmix_value_t of a given type holds its payload.
enum class ValueHolding {
    none,         // PMIX_UNDEF
    inline_,      // inside the data union (numbers, strings, byte objects, envar, pointer)
    pointer,      // data.ptr points to one malloc'ed object of the type (proc, darray, ...)
    unsupported,  // cannot be carried by a value directly (info, app, ... : use a data array)
};

// The operations on one object of a type. Null entries take the plain-data default.
struct TypeOps {
    void (*destruct)(void *obj) noexcept = nullptr;  // release what obj owns (null: owns nothing)
    // Deep copy into zeroed `dst`; a partial copy on failure is released by destruct.
    // Null: memcpy of the row's size.
    pmix_status_t (*xfer)(void *dst, const void *src) noexcept = nullptr;
    pmix_value_cmp_t (*compare)(const void *a, const void *b) noexcept = nullptr;
    bool (*encodable)(const void *obj, int depth) = nullptr;  // null: always encodable
    void (*pack)(Packer &pk, const void *obj) = nullptr;
    // Decode into zeroed `dst`; a partial result on failure is released by destruct.
    pmix_status_t (*unpack)(const msgpack::object &o, void *dst, int depth) = nullptr;
    void (*print)(std::string &out, const void *obj) = nullptr;  // null: "<NAME>"
    // PMIx_Value_load from the caller's data, when it is not a pointer to one object.
    pmix_status_t (*load)(pmix_value_t *v, const void *data) noexcept = nullptr;
    // PMIx_Value_unload, when it is not a copy of a number into the caller's storage.
    pmix_status_t (*unload)(const pmix_value_t *v, void **data, size_t *sz) noexcept = nullptr;
};

struct DataType {
    pmix_data_type_t code;
    const char *name;  // as PMIx_Data_type_string returns it
    size_t size;       // sizeof the C type; 0: zpmix holds no object of this type
    ValueHolding holding;
    const TypeOps *ops;  // null exactly when size is 0
};

// The row of `t`; an unknown code gets a row named "UNKNOWN DATA TYPE" of size 0.
const DataType &data_type(pmix_data_type_t t) noexcept;
// Every row, in code order.
std::span<const DataType> data_types() noexcept;

inline size_t type_size(pmix_data_type_t t) noexcept {
    return data_type(t).size;
}
inline ValueHolding value_holding(pmix_data_type_t t) noexcept {
    return data_type(t).holding;
}

// ---- dispatch over the table (pmix_types.cpp) ----

// Release what `obj` owns and zero it.
void object_destruct(pmix_data_type_t t, void *obj) noexcept;
// Deep copy; on failure `dst` is left zeroed.
pmix_status_t object_xfer(pmix_data_type_t t, void *dst, const void *src) noexcept;
// Deep copy of `n` objects into a new malloc'ed array (NULL for n == 0).
pmix_status_t array_copy(pmix_data_type_t t, void **dst, const void *src, size_t n) noexcept;
pmix_value_cmp_t object_compare(pmix_data_type_t t, const void *a, const void *b) noexcept;
pmix_value_cmp_t array_compare(pmix_data_type_t t, const void *a, size_t na, const void *b,
                               size_t nb) noexcept;
// The object a value carries (for pointer-held types: data.ptr; else &data).
void *value_payload(const pmix_value_t *v) noexcept;

constexpr int kMaxDepth = 32;  // nesting of data arrays / values inside values on the wire
// False for what cannot cross processes (pointers, non-hwloc cpusets and topologies).
bool encodable(pmix_data_type_t t, const void *obj, int depth);
bool array_encodable(pmix_data_type_t t, const void *arr, size_t n, int depth);
void pack_object(Packer &pk, pmix_data_type_t t, const void *obj);
void pack_array_of(Packer &pk, pmix_data_type_t t, const void *arr, size_t n);
// Into zeroed `dst`; left zeroed on failure.
pmix_status_t unpack_object(const msgpack::object &o, pmix_data_type_t t, void *dst, int depth);
// [payload...] of type t into a new array; *n set only on success.
pmix_status_t unpack_array_of(const msgpack::object &o, pmix_data_type_t t, void **out, size_t *n,
                              int depth);
// The payload of `v` as text (PMIx_Value_string, without the standard's enum names).
void print_value(std::string &out, const pmix_value_t &v);

}  // namespace zpmix::c
