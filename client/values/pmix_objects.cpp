// What PMIx_Value_*, PMIx_Info_*, PMIx_Data_array_*, the info lists and the zpmix_* object helpers
// do (pmix_objects.hpp), over the type table (pmix_types.hpp).
#include <hwloc.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <vector>

#include "client/values/pmix_helpers.hpp"
#include "client/values/pmix_objects.hpp"
#include "client/values/pmix_types.hpp"
#include "pmix.h"

namespace zpmix::c {

void *array_create(pmix_data_type_t type, size_t n) {
    size_t sz = type_size(type);
    if (n == 0 || sz == 0) return nullptr;
    void *p = calloc(n, sz);
    if (p != nullptr && type == PMIX_INFO) PMIX_INFO_SET_END(static_cast<pmix_info_t *>(p) + n - 1);
    return p;
}

void array_free(pmix_data_type_t type, void *array, size_t n) {
    if (array == nullptr) return;
    size_t sz = type_size(type);
    if (sz != 0)
        for (size_t i = 0; i < n; ++i) object_destruct(type, static_cast<char *>(array) + i * sz);
    free(array);
}

pmix_coord_t *coord_create(size_t dims, size_t n) {
    auto *c = static_cast<pmix_coord_t *>(array_create(PMIX_COORD, n));
    if (c == nullptr || dims == 0) return c;
    for (size_t i = 0; i < n; ++i) {
        c[i].coord = static_cast<uint32_t *>(calloc(dims, sizeof(uint32_t)));
        if (c[i].coord == nullptr) {
            array_free(PMIX_COORD, c, n);
            return nullptr;
        }
        c[i].dims = dims;
    }
    return c;
}

pmix_status_t data_array_construct(pmix_data_array_t *array, size_t n, pmix_data_type_t type) {
    array->type = type;
    array->size = 0;
    array->array = nullptr;
    if (n == 0) return PMIX_SUCCESS;
    if (type_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    array->array = array_create(type, n);
    if (array->array == nullptr) return PMIX_ERR_NOMEM;
    array->size = n;
    return PMIX_SUCCESS;
}

void data_array_destruct(pmix_data_array_t *d) {
    if (d == nullptr) return;
    array_free(d->type, d->array, d->size);
    d->array = nullptr;
    d->size = 0;
}

void value_destruct(pmix_value_t *v) {
    if (v == nullptr) return;
    switch (value_holding(v->type)) {
        case ValueHolding::pointer:
            if (v->data.ptr != nullptr) {
                object_destruct(v->type, v->data.ptr);
                free(v->data.ptr);
            }
            break;
        case ValueHolding::inline_:
            object_destruct(v->type, &v->data);
            break;
        default:
            break;
    }
    memset(&v->data, 0, sizeof(v->data));
    v->type = PMIX_UNDEF;
}

pmix_status_t value_load(pmix_value_t *v, const void *data, pmix_data_type_t type) {
    if (v == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(&v->data, 0, sizeof(v->data));
    v->type = PMIX_UNDEF;
    ValueHolding h = value_holding(type);
    if (h == ValueHolding::unsupported) return PMIX_ERR_NOT_SUPPORTED;
    v->type = type;
    if (data == nullptr) {
        if (type == PMIX_BOOL) v->data.flag = true;  // presence of a flag means "true"
        return PMIX_SUCCESS;
    }
    const DataType &d = data_type(type);
    if (d.ops != nullptr && d.ops->load != nullptr) return d.ops->load(v, data);
    if (h == ValueHolding::pointer) {
        void *copy = nullptr;
        pmix_status_t rc = array_copy(type, &copy, data, 1);
        if (rc != PMIX_SUCCESS) {
            v->type = PMIX_UNDEF;
            return rc;
        }
        v->data.ptr = copy;
        return PMIX_SUCCESS;
    }
    pmix_status_t rc = object_xfer(type, &v->data, data);
    if (rc != PMIX_SUCCESS) v->type = PMIX_UNDEF;
    return rc;
}

pmix_status_t value_unload(pmix_value_t *v, void **data, size_t *sz) {
    if (v == nullptr || data == nullptr || sz == nullptr) return PMIX_ERR_BAD_PARAM;
    *sz = 0;
    ValueHolding h = value_holding(v->type);
    if (h == ValueHolding::none || h == ValueHolding::unsupported)
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    const DataType &d = data_type(v->type);
    if (d.ops->unload != nullptr) return d.ops->unload(v, data, sz);
    if (h == ValueHolding::pointer) {
        // structured data: hand back a newly allocated deep copy
        pmix_status_t rc = array_copy(v->type, data, value_payload(v), 1);
        if (rc == PMIX_SUCCESS) *sz = d.size;
        return rc;
    }
    // scalars: copy into the caller's storage at *data (allocated here if *data is NULL)
    size_t n = d.size;
    if (*data == nullptr) {
        *data = malloc(n);
        if (*data == nullptr) return PMIX_ERR_NOMEM;
    }
    memcpy(*data, &v->data, n);
    *sz = n;
    return PMIX_SUCCESS;
}

pmix_status_t value_xfer(pmix_value_t *dest, const pmix_value_t *src) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(dest, 0, sizeof(*dest));
    ValueHolding h = value_holding(src->type);
    if (h == ValueHolding::unsupported) return PMIX_ERR_NOT_SUPPORTED;
    if (h == ValueHolding::none) return PMIX_SUCCESS;
    if (h == ValueHolding::pointer) {
        dest->type = src->type;
        if (src->data.ptr == nullptr) return PMIX_SUCCESS;
        pmix_status_t rc = array_copy(src->type, &dest->data.ptr, src->data.ptr, 1);
        if (rc != PMIX_SUCCESS) dest->type = PMIX_UNDEF;
        return rc;
    }
    pmix_status_t rc = object_xfer(src->type, &dest->data, &src->data);
    if (rc == PMIX_SUCCESS) dest->type = src->type;
    return rc;
}

pmix_value_cmp_t value_compare(pmix_value_t *v1, pmix_value_t *v2) {
    if (v1 == nullptr || v2 == nullptr) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    if (v1->type != v2->type) return PMIX_VALUE_TYPE_DIFFERENT;
    switch (value_holding(v1->type)) {
        case ValueHolding::none:
            return PMIX_EQUAL;
        case ValueHolding::unsupported:
            return PMIX_VALUE_COMPARISON_NOT_AVAIL;
        default:
            return object_compare(v1->type, value_payload(v1), value_payload(v2));
    }
}

pmix_status_t info_load(pmix_info_t *info, const char *key, const void *data,
                        pmix_data_type_t type) {
    if (info == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
    load_string(info->key, key, PMIX_MAX_KEYLEN);
    // Programs load infos they never constructed (OpenPMIx clears the flags here too): stack
    // garbage in the flags could mark it PERSISTENT, and its destruct would then leak the value.
    info->flags = 0;
    return value_load(&info->value, data, type);
}

pmix_status_t info_xfer(pmix_info_t *dest, const pmix_info_t *src) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    memcpy(dest->key, src->key, sizeof(dest->key));
    dest->key[PMIX_MAX_KEYLEN] = '\0';
    dest->flags = src->flags & ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
    return value_xfer(&dest->value, &src->value);
}

pmix_boolean_t check_true(const pmix_value_t *value) {
    if (value == nullptr) return PMIX_NON_BOOL;
    if (value->type == PMIX_UNDEF) return PMIX_BOOL_TRUE;
    if (value->type == PMIX_BOOL) return value->data.flag ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    if (value->type == PMIX_STRING && value->data.string != nullptr) {
        const char *s = value->data.string;
        for (const char *t : {"true", "yes", "on", "1"})
            if (strcasecmp(s, t) == 0) return PMIX_BOOL_TRUE;
        for (const char *f : {"false", "no", "off", "0"})
            if (strcasecmp(s, f) == 0) return PMIX_BOOL_FALSE;
    }
    return PMIX_NON_BOOL;
}

// ---- info lists: owned entries are deep copies, inserted ones are borrowed ----

namespace {
struct InfoListItem {
    pmix_info_t *info;
    bool owned;
};
using InfoList = std::vector<InfoListItem>;

pmix_status_t list_push_owned(void *ptr, pmix_info_t *fresh) {
    try {
        static_cast<InfoList *>(ptr)->push_back({fresh, true});
        return PMIX_SUCCESS;
    } catch (...) {
        array_free(PMIX_INFO, fresh, 1);
        return PMIX_ERR_NOMEM;
    }
}
}  // namespace

void *info_list_start(void) {
    return new (std::nothrow) InfoList();
}

pmix_status_t info_list_add(void *ptr, const char *key, const void *value, pmix_data_type_t type) {
    if (ptr == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *info = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    if (info == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = info_load(info, key, value, type);
    if (rc != PMIX_SUCCESS) {
        array_free(PMIX_INFO, info, 1);
        return rc;
    }
    return list_push_owned(ptr, info);
}

pmix_status_t info_list_insert(void *ptr, pmix_info_t *info) {
    if (ptr == nullptr || info == nullptr) return PMIX_ERR_BAD_PARAM;
    try {
        static_cast<InfoList *>(ptr)->push_back({info, false});
    } catch (...) {
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

pmix_status_t info_list_xfer(void *ptr, const pmix_info_t *info) {
    if (ptr == nullptr || info == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *copy = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    if (copy == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = info_xfer(copy, info);
    if (rc != PMIX_SUCCESS) {
        array_free(PMIX_INFO, copy, 1);
        return rc;
    }
    return list_push_owned(ptr, copy);
}

pmix_status_t info_list_convert(void *ptr, pmix_data_array_t *par) {
    if (ptr == nullptr || par == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *list = static_cast<InfoList *>(ptr);
    PMIX_DATA_ARRAY_INIT(par, PMIX_INFO);
    if (list->empty()) return PMIX_ERR_EMPTY;
    auto *arr = static_cast<pmix_info_t *>(array_create(PMIX_INFO, list->size()));
    if (arr == nullptr) return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < list->size(); ++i) {
        pmix_status_t rc = info_xfer(&arr[i], (*list)[i].info);
        if (rc != PMIX_SUCCESS) {
            array_free(PMIX_INFO, arr, list->size());
            return rc;
        }
    }
    PMIX_INFO_SET_END(&arr[list->size() - 1]);
    par->array = arr;
    par->size = list->size();
    return PMIX_SUCCESS;
}

void info_list_release(void *ptr) {
    auto *list = static_cast<InfoList *>(ptr);
    if (list == nullptr) return;
    for (auto &item : *list)
        if (item.owned) array_free(PMIX_INFO, item.info, 1);
    delete list;
}

// ---- cpusets and topologies (hwloc) ----

void cpuset_destruct(pmix_cpuset_t *cpuset) {
    if (cpuset == nullptr) return;
    if (cpuset->bitmap != nullptr && is_hwloc(cpuset->source))
        hwloc_bitmap_free(static_cast<hwloc_bitmap_t>(cpuset->bitmap));
    free(cpuset->source);
    cpuset->source = nullptr;
    cpuset->bitmap = nullptr;
}

namespace {
std::atomic<const void *> shared_topology{nullptr};
std::atomic<const char *> shared_topology_source{nullptr};
}  // namespace

void set_shared_topology(const void *topology, const char *source) {
    shared_topology = topology;
    shared_topology_source = source;
}

void topology_destruct(pmix_topology_t *topo) {
    if (topo == nullptr) return;
    // The library's own (PMIx_Load_topology's answer) lives until the process ends; a caller
    // that destructs it, as zpmix's earlier releases asked, only lets go of it.
    const bool shared = topo->topology != nullptr && topo->topology == shared_topology.load();
    if (topo->topology != nullptr && !shared && is_hwloc(topo->source))
        hwloc_topology_destroy(static_cast<hwloc_topology_t>(topo->topology));
    if (topo->source != shared_topology_source.load()) free(topo->source);
    topo->source = nullptr;
    topo->topology = nullptr;
}

pmix_status_t parse_cpuset_string(const char *cpuset_string, pmix_cpuset_t *cpuset) {
    if (cpuset_string == nullptr || cpuset == nullptr) return PMIX_ERR_BAD_PARAM;
    const char *colon = strchr(cpuset_string, ':');
    if (colon == nullptr) return PMIX_ERR_BAD_PARAM;
    std::string_view source(cpuset_string, static_cast<size_t>(colon - cpuset_string));
    if (source != "hwloc") return PMIX_ERR_NOT_SUPPORTED;
    hwloc_bitmap_t bm = hwloc_bitmap_alloc();
    if (bm == nullptr) return PMIX_ERR_NOMEM;
    if (hwloc_bitmap_list_sscanf(bm, colon + 1) != 0) {
        hwloc_bitmap_free(bm);
        return PMIX_ERR_BAD_PARAM;
    }
    cpuset->source = strdup("hwloc");
    cpuset->bitmap = bm;
    return PMIX_SUCCESS;
}

}  // namespace zpmix::c
