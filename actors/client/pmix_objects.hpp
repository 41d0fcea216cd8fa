// zpmix: internal per-type object operations shared by the C helpers and the codec.
#pragma once

#include <cstddef>
#include <string_view>

#include "pmix_common.h"

namespace zpmix::c {

// How a pmix_value_t of a given type holds its payload.
enum class ValueHolding {
    none,         // PMIX_UNDEF
    inline_,      // inside the data union (numbers, strings, byte objects, envar, pointer)
    pointer,      // data.ptr points to one malloc'ed object of the type (proc, darray, ...)
    unsupported,  // cannot be carried by a value directly (info, app, ... : use a data array)
};

// Size of one object of PMIx data type `t` (0 = unknown type).
size_t type_size(pmix_data_type_t t) noexcept;
ValueHolding value_holding(pmix_data_type_t t) noexcept;
// Release what `obj` owns and zero it.
void object_destruct(pmix_data_type_t t, void *obj) noexcept;
// Deep copy; on failure `dst` is left zeroed.
pmix_status_t object_xfer(pmix_data_type_t t, void *dst, const void *src) noexcept;
// Deep copy of `n` objects into a new malloc'ed array (NULL for n == 0).
pmix_status_t array_copy(pmix_data_type_t t, void **dst, const void *src, size_t n) noexcept;
pmix_value_cmp_t object_compare(pmix_data_type_t t, const void *a, const void *b) noexcept;
// The object a value carries (for pointer-held types: data.ptr; else &data).
void *value_payload(const pmix_value_t *v) noexcept;
char *dup_str(const char *s) noexcept;

}  // namespace zpmix::c
