#pragma once
// Reading the caller's pmix_info_t arrays, as every API file of the binding does.
#include <string>

#include "pmix_common.h"

namespace zpmix::c {

inline bool is_key(const pmix_info_t &i, const char *key) {
    return PMIX_CHECK_KEY(&i, key);
}

// A PMIX_STRING value's text; "" for a value of another type.
inline std::string string_of(const pmix_value_t &v) {
    return v.type == PMIX_STRING && v.data.string ? v.data.string : "";
}

}  // namespace zpmix::c
