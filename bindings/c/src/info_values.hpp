#pragma once
// Reading the caller's pmix_info_t arrays, as every API file of the binding does, and releasing
// the arrays the library hands to callbacks.
#include <string>
#include <utility>

#include "pmix_common.h"

namespace zpmix::c {

inline bool is_key(const pmix_info_t &i, const char *key) {
    return PMIX_CHECK_KEY(&i, key);
}

// A PMIX_STRING value's text; "" for a value of another type.
inline std::string string_of(const pmix_value_t &v) {
    return v.type == PMIX_STRING && v.data.string ? v.data.string : "";
}

// The release function of an info array the library passed to a pmix_info_cbfunc_t: its cbdata is
// a new std::pair of the array and its size.
inline void release_info_array(void *cbdata) {
    auto *r = static_cast<std::pair<pmix_info_t *, size_t> *>(cbdata);
    if (r->first) PMIX_INFO_FREE(r->first, r->second);
    delete r;
}

}  // namespace zpmix::c
