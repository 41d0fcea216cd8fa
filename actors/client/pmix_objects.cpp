// zpmix: ownership-aware handling of every PMIx data type: sizes, deep copy, destruct,
// compare, and the PMIx_Value_* / PMIx_Info_* / PMIx_Data_array_* / info-list functions.
#include <hwloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "actors/client/pmix_objects.hpp"
#include "pmix.h"

namespace zpmix::c {

size_t type_size(pmix_data_type_t t) noexcept {
    switch (t) {
        case PMIX_BOOL:
            return sizeof(bool);
        case PMIX_BYTE:
            return sizeof(uint8_t);
        case PMIX_STRING:
            return sizeof(char *);
        case PMIX_SIZE:
            return sizeof(size_t);
        case PMIX_PID:
            return sizeof(pid_t);
        case PMIX_INT:
            return sizeof(int);
        case PMIX_INT8:
            return sizeof(int8_t);
        case PMIX_INT16:
            return sizeof(int16_t);
        case PMIX_INT32:
            return sizeof(int32_t);
        case PMIX_INT64:
            return sizeof(int64_t);
        case PMIX_UINT:
            return sizeof(unsigned int);
        case PMIX_UINT8:
            return sizeof(uint8_t);
        case PMIX_UINT16:
            return sizeof(uint16_t);
        case PMIX_UINT32:
            return sizeof(uint32_t);
        case PMIX_UINT64:
            return sizeof(uint64_t);
        case PMIX_FLOAT:
            return sizeof(float);
        case PMIX_DOUBLE:
            return sizeof(double);
        case PMIX_TIMEVAL:
            return sizeof(struct timeval);
        case PMIX_TIME:
            return sizeof(time_t);
        case PMIX_STATUS:
            return sizeof(pmix_status_t);
        case PMIX_VALUE:
            return sizeof(pmix_value_t);
        case PMIX_PROC:
            return sizeof(pmix_proc_t);
        case PMIX_APP:
            return sizeof(pmix_app_t);
        case PMIX_INFO:
            return sizeof(pmix_info_t);
        case PMIX_PDATA:
            return sizeof(pmix_pdata_t);
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT:
            return sizeof(pmix_byte_object_t);
        case PMIX_PERSIST:
            return sizeof(pmix_persistence_t);
        case PMIX_POINTER:
            return sizeof(void *);
        case PMIX_SCOPE:
            return sizeof(pmix_scope_t);
        case PMIX_DATA_RANGE:
            return sizeof(pmix_data_range_t);
        case PMIX_COMMAND:
            return sizeof(uint8_t);
        case PMIX_INFO_DIRECTIVES:
            return sizeof(pmix_info_directives_t);
        case PMIX_DATA_TYPE:
            return sizeof(pmix_data_type_t);
        case PMIX_PROC_STATE:
            return sizeof(pmix_proc_state_t);
        case PMIX_PROC_INFO:
            return sizeof(pmix_proc_info_t);
        case PMIX_DATA_ARRAY:
            return sizeof(pmix_data_array_t);
        case PMIX_PROC_RANK:
            return sizeof(pmix_rank_t);
        case PMIX_QUERY:
            return sizeof(pmix_query_t);
        case PMIX_ALLOC_DIRECTIVE:
            return sizeof(pmix_alloc_directive_t);
        case PMIX_IOF_CHANNEL:
            return sizeof(pmix_iof_channel_t);
        case PMIX_ENVAR:
            return sizeof(pmix_envar_t);
        case PMIX_COORD:
            return sizeof(pmix_coord_t);
        case PMIX_REGATTR:
            return sizeof(pmix_regattr_t);
        case PMIX_JOB_STATE:
            return sizeof(pmix_job_state_t);
        case PMIX_LINK_STATE:
            return sizeof(pmix_link_state_t);
        case PMIX_PROC_CPUSET:
            return sizeof(pmix_cpuset_t);
        case PMIX_GEOMETRY:
            return sizeof(pmix_geometry_t);
        case PMIX_DEVICE_DIST:
            return sizeof(pmix_device_distance_t);
        case PMIX_ENDPOINT:
            return sizeof(pmix_endpoint_t);
        case PMIX_TOPO:
            return sizeof(pmix_topology_t);
        case PMIX_DEVTYPE:
            return sizeof(pmix_device_type_t);
        case PMIX_LOCTYPE:
            return sizeof(pmix_locality_t);
        case PMIX_PROC_NSPACE:
            return sizeof(pmix_nspace_t);
        case PMIX_PROC_STATS:
            return sizeof(pmix_proc_stats_t);
        case PMIX_DISK_STATS:
            return sizeof(pmix_disk_stats_t);
        case PMIX_NET_STATS:
            return sizeof(pmix_net_stats_t);
        case PMIX_NODE_STATS:
            return sizeof(pmix_node_stats_t);
        case PMIX_DATA_BUFFER:
            return sizeof(pmix_data_buffer_t);
        case PMIX_STOR_MEDIUM:
            return sizeof(pmix_storage_medium_t);
        case PMIX_STOR_ACCESS:
            return sizeof(pmix_storage_accessibility_t);
        case PMIX_STOR_PERSIST:
            return sizeof(pmix_storage_persistence_t);
        case PMIX_STOR_ACCESS_TYPE:
            return sizeof(pmix_storage_access_type_t);
        default:
            return 0;
    }
}

ValueHolding value_holding(pmix_data_type_t t) noexcept {
    switch (t) {
        case PMIX_UNDEF:
            return ValueHolding::none;
        case PMIX_VALUE:
        case PMIX_APP:
        case PMIX_INFO:
        case PMIX_PDATA:
        case PMIX_QUERY:
            return ValueHolding::unsupported;
        case PMIX_PROC:
        case PMIX_PROC_INFO:
        case PMIX_DATA_ARRAY:
        case PMIX_COORD:
        case PMIX_REGATTR:
        case PMIX_PROC_CPUSET:
        case PMIX_GEOMETRY:
        case PMIX_DEVICE_DIST:
        case PMIX_ENDPOINT:
        case PMIX_TOPO:
        case PMIX_PROC_NSPACE:
        case PMIX_PROC_STATS:
        case PMIX_DISK_STATS:
        case PMIX_NET_STATS:
        case PMIX_NODE_STATS:
        case PMIX_DATA_BUFFER:
            return ValueHolding::pointer;
        default:
            return type_size(t) == 0 ? ValueHolding::unsupported : ValueHolding::inline_;
    }
}

char *dup_str(const char *s) noexcept {
    return s == nullptr ? nullptr : strdup(s);
}

static bool is_hwloc(const char *source) noexcept {
    return source != nullptr && strncmp(source, "hwloc", 5) == 0;
}

// ---- destruct ----

void object_destruct(pmix_data_type_t t, void *obj) noexcept {
    if (obj == nullptr) return;
    switch (t) {
        case PMIX_STRING:
            free(*static_cast<char **>(obj));
            break;
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT:
            free(static_cast<pmix_byte_object_t *>(obj)->bytes);
            break;
        case PMIX_VALUE:
            PMIx_Value_destruct(static_cast<pmix_value_t *>(obj));
            break;
        case PMIX_INFO: {
            auto *i = static_cast<pmix_info_t *>(obj);
            if (!PMIX_INFO_IS_PERSISTENT(i)) PMIx_Value_destruct(&i->value);
            break;
        }
        case PMIX_PDATA:
            PMIx_Value_destruct(&static_cast<pmix_pdata_t *>(obj)->value);
            break;
        case PMIX_APP: {
            auto *a = static_cast<pmix_app_t *>(obj);
            free(a->cmd);
            zpmix_argv_free(a->argv);
            zpmix_argv_free(a->env);
            free(a->cwd);
            zpmix_array_free(PMIX_INFO, a->info, a->ninfo);
            break;
        }
        case PMIX_QUERY: {
            auto *q = static_cast<pmix_query_t *>(obj);
            zpmix_argv_free(q->keys);
            zpmix_array_free(PMIX_INFO, q->qualifiers, q->nqual);
            break;
        }
        case PMIX_PROC_INFO: {
            auto *p = static_cast<pmix_proc_info_t *>(obj);
            free(p->hostname);
            free(p->executable_name);
            break;
        }
        case PMIX_DATA_ARRAY:
            PMIx_Data_array_destruct(static_cast<pmix_data_array_t *>(obj));
            break;
        case PMIX_ENVAR: {
            auto *e = static_cast<pmix_envar_t *>(obj);
            free(e->envar);
            free(e->value);
            break;
        }
        case PMIX_COORD:
            free(static_cast<pmix_coord_t *>(obj)->coord);
            break;
        case PMIX_REGATTR: {
            auto *r = static_cast<pmix_regattr_t *>(obj);
            free(r->name);
            zpmix_argv_free(r->description);
            break;
        }
        case PMIX_PROC_CPUSET:
            PMIx_Cpuset_destruct(static_cast<pmix_cpuset_t *>(obj));
            break;
        case PMIX_TOPO:
            PMIx_Topology_destruct(static_cast<pmix_topology_t *>(obj));
            break;
        case PMIX_GEOMETRY: {
            auto *g = static_cast<pmix_geometry_t *>(obj);
            free(g->uuid);
            free(g->osname);
            zpmix_array_free(PMIX_COORD, g->coordinates, g->ncoords);
            break;
        }
        case PMIX_DEVICE_DIST: {
            auto *d = static_cast<pmix_device_distance_t *>(obj);
            free(d->uuid);
            free(d->osname);
            break;
        }
        case PMIX_ENDPOINT: {
            auto *e = static_cast<pmix_endpoint_t *>(obj);
            free(e->uuid);
            free(e->osname);
            free(e->endpt.bytes);
            break;
        }
        case PMIX_PROC_STATS: {
            auto *s = static_cast<pmix_proc_stats_t *>(obj);
            free(s->node);
            free(s->cmd);
            break;
        }
        case PMIX_DISK_STATS:
            free(static_cast<pmix_disk_stats_t *>(obj)->disk);
            break;
        case PMIX_NET_STATS:
            free(static_cast<pmix_net_stats_t *>(obj)->net_interface);
            break;
        case PMIX_NODE_STATS: {
            auto *s = static_cast<pmix_node_stats_t *>(obj);
            free(s->node);
            zpmix_array_free(PMIX_DISK_STATS, s->diskstats, s->ndiskstats);
            zpmix_array_free(PMIX_NET_STATS, s->netstats, s->nnetstats);
            break;
        }
        case PMIX_DATA_BUFFER:
            free(static_cast<pmix_data_buffer_t *>(obj)->base_ptr);
            break;
        default:
            break;  // plain data
    }
    size_t sz = type_size(t);
    if (sz != 0) memset(obj, 0, sz);
}

// ---- deep copy ----

static pmix_status_t dup_into(char **dst, const char *src) noexcept {
    *dst = nullptr;
    if (src == nullptr) return PMIX_SUCCESS;
    *dst = strdup(src);
    return *dst == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

static pmix_status_t dup_bytes(pmix_byte_object_t *dst, const pmix_byte_object_t *src) noexcept {
    dst->bytes = nullptr;
    dst->size = 0;
    if (src->bytes == nullptr || src->size == 0) return PMIX_SUCCESS;
    dst->bytes = static_cast<char *>(malloc(src->size));
    if (dst->bytes == nullptr) return PMIX_ERR_NOMEM;
    memcpy(dst->bytes, src->bytes, src->size);
    dst->size = src->size;
    return PMIX_SUCCESS;
}

static pmix_status_t dup_argv(char ***dst, char **src) noexcept {
    *dst = nullptr;
    if (src == nullptr) return PMIX_SUCCESS;
    *dst = zpmix_argv_copy(src);
    return *dst == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

template <class T>
static pmix_status_t dup_array(pmix_data_type_t t, T **dst, const T *src, size_t n) noexcept {
    *dst = nullptr;
    if (src == nullptr || n == 0) return PMIX_SUCCESS;
    void *copy = nullptr;
    pmix_status_t rc = array_copy(t, &copy, src, n);
    *dst = static_cast<T *>(copy);
    return rc;
}

#define ZPMIX_TRY(expr)                      \
    do {                                     \
        pmix_status_t _rc = (expr);          \
        if (_rc != PMIX_SUCCESS) return _rc; \
    } while (0)

// Copies into `dst` (already zeroed by the caller or irrelevant); on failure `dst` may hold a
// partial copy which object_destruct() releases.
static pmix_status_t xfer_impl(pmix_data_type_t t, void *dst, const void *src) noexcept {
    switch (t) {
        case PMIX_STRING:
            return dup_into(static_cast<char **>(dst), *static_cast<char *const *>(src));
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT:
            return dup_bytes(static_cast<pmix_byte_object_t *>(dst),
                             static_cast<const pmix_byte_object_t *>(src));
        case PMIX_VALUE:
            return PMIx_Value_xfer(static_cast<pmix_value_t *>(dst),
                                   static_cast<const pmix_value_t *>(src));
        case PMIX_INFO:
            return PMIx_Info_xfer(static_cast<pmix_info_t *>(dst),
                                  static_cast<const pmix_info_t *>(src));
        case PMIX_PDATA: {
            auto *d = static_cast<pmix_pdata_t *>(dst);
            auto *s = static_cast<const pmix_pdata_t *>(src);
            memcpy(&d->proc, &s->proc, sizeof(d->proc));
            memcpy(d->key, s->key, sizeof(d->key));
            return PMIx_Value_xfer(&d->value, &s->value);
        }
        case PMIX_APP: {
            auto *d = static_cast<pmix_app_t *>(dst);
            auto *s = static_cast<const pmix_app_t *>(src);
            d->maxprocs = s->maxprocs;
            ZPMIX_TRY(dup_into(&d->cmd, s->cmd));
            ZPMIX_TRY(dup_argv(&d->argv, s->argv));
            ZPMIX_TRY(dup_argv(&d->env, s->env));
            ZPMIX_TRY(dup_into(&d->cwd, s->cwd));
            ZPMIX_TRY(dup_array(PMIX_INFO, &d->info, s->info, s->ninfo));
            d->ninfo = d->info == nullptr ? 0 : s->ninfo;
            return PMIX_SUCCESS;
        }
        case PMIX_QUERY: {
            auto *d = static_cast<pmix_query_t *>(dst);
            auto *s = static_cast<const pmix_query_t *>(src);
            ZPMIX_TRY(dup_argv(&d->keys, s->keys));
            ZPMIX_TRY(dup_array(PMIX_INFO, &d->qualifiers, s->qualifiers, s->nqual));
            d->nqual = d->qualifiers == nullptr ? 0 : s->nqual;
            return PMIX_SUCCESS;
        }
        case PMIX_PROC_INFO: {
            auto *d = static_cast<pmix_proc_info_t *>(dst);
            auto *s = static_cast<const pmix_proc_info_t *>(src);
            memcpy(&d->proc, &s->proc, sizeof(d->proc));
            d->pid = s->pid;
            d->exit_code = s->exit_code;
            d->state = s->state;
            ZPMIX_TRY(dup_into(&d->hostname, s->hostname));
            return dup_into(&d->executable_name, s->executable_name);
        }
        case PMIX_DATA_ARRAY: {
            auto *d = static_cast<pmix_data_array_t *>(dst);
            auto *s = static_cast<const pmix_data_array_t *>(src);
            d->type = s->type;
            d->size = 0;
            d->array = nullptr;
            if (s->array == nullptr || s->size == 0) return PMIX_SUCCESS;
            ZPMIX_TRY(array_copy(s->type, &d->array, s->array, s->size));
            d->size = s->size;
            return PMIX_SUCCESS;
        }
        case PMIX_ENVAR: {
            auto *d = static_cast<pmix_envar_t *>(dst);
            auto *s = static_cast<const pmix_envar_t *>(src);
            d->separator = s->separator;
            ZPMIX_TRY(dup_into(&d->envar, s->envar));
            return dup_into(&d->value, s->value);
        }
        case PMIX_COORD: {
            auto *d = static_cast<pmix_coord_t *>(dst);
            auto *s = static_cast<const pmix_coord_t *>(src);
            d->view = s->view;
            d->coord = nullptr;
            d->dims = 0;
            if (s->coord == nullptr || s->dims == 0) return PMIX_SUCCESS;
            d->coord = static_cast<uint32_t *>(calloc(s->dims, sizeof(uint32_t)));
            if (d->coord == nullptr) return PMIX_ERR_NOMEM;
            memcpy(d->coord, s->coord, s->dims * sizeof(uint32_t));
            d->dims = s->dims;
            return PMIX_SUCCESS;
        }
        case PMIX_REGATTR: {
            auto *d = static_cast<pmix_regattr_t *>(dst);
            auto *s = static_cast<const pmix_regattr_t *>(src);
            memcpy(d->string, s->string, sizeof(d->string));
            d->type = s->type;
            ZPMIX_TRY(dup_into(&d->name, s->name));
            return dup_argv(&d->description, s->description);
        }
        case PMIX_PROC_CPUSET: {
            auto *d = static_cast<pmix_cpuset_t *>(dst);
            auto *s = static_cast<const pmix_cpuset_t *>(src);
            d->bitmap = nullptr;
            ZPMIX_TRY(dup_into(&d->source, s->source));
            if (s->bitmap == nullptr) return PMIX_SUCCESS;
            if (!is_hwloc(s->source)) return PMIX_ERR_NOT_SUPPORTED;
            d->bitmap = hwloc_bitmap_dup(static_cast<hwloc_const_bitmap_t>(s->bitmap));
            return d->bitmap == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
        }
        case PMIX_TOPO: {
            auto *d = static_cast<pmix_topology_t *>(dst);
            auto *s = static_cast<const pmix_topology_t *>(src);
            d->topology = nullptr;
            ZPMIX_TRY(dup_into(&d->source, s->source));
            if (s->topology == nullptr) return PMIX_SUCCESS;
            if (!is_hwloc(s->source)) return PMIX_ERR_NOT_SUPPORTED;
            hwloc_topology_t copy = nullptr;
            if (hwloc_topology_dup(&copy, static_cast<hwloc_topology_t>(s->topology)) != 0)
                return PMIX_ERR_NOMEM;
            d->topology = copy;
            return PMIX_SUCCESS;
        }
        case PMIX_GEOMETRY: {
            auto *d = static_cast<pmix_geometry_t *>(dst);
            auto *s = static_cast<const pmix_geometry_t *>(src);
            d->fabric = s->fabric;
            ZPMIX_TRY(dup_into(&d->uuid, s->uuid));
            ZPMIX_TRY(dup_into(&d->osname, s->osname));
            ZPMIX_TRY(dup_array(PMIX_COORD, &d->coordinates, s->coordinates, s->ncoords));
            d->ncoords = d->coordinates == nullptr ? 0 : s->ncoords;
            return PMIX_SUCCESS;
        }
        case PMIX_DEVICE_DIST: {
            auto *d = static_cast<pmix_device_distance_t *>(dst);
            auto *s = static_cast<const pmix_device_distance_t *>(src);
            d->type = s->type;
            d->mindist = s->mindist;
            d->maxdist = s->maxdist;
            ZPMIX_TRY(dup_into(&d->uuid, s->uuid));
            return dup_into(&d->osname, s->osname);
        }
        case PMIX_ENDPOINT: {
            auto *d = static_cast<pmix_endpoint_t *>(dst);
            auto *s = static_cast<const pmix_endpoint_t *>(src);
            ZPMIX_TRY(dup_into(&d->uuid, s->uuid));
            ZPMIX_TRY(dup_into(&d->osname, s->osname));
            return dup_bytes(&d->endpt, &s->endpt);
        }
        case PMIX_PROC_STATS: {
            auto *d = static_cast<pmix_proc_stats_t *>(dst);
            auto *s = static_cast<const pmix_proc_stats_t *>(src);
            memcpy(d, s, sizeof(*d));
            d->node = d->cmd = nullptr;
            ZPMIX_TRY(dup_into(&d->node, s->node));
            return dup_into(&d->cmd, s->cmd);
        }
        case PMIX_DISK_STATS: {
            auto *d = static_cast<pmix_disk_stats_t *>(dst);
            auto *s = static_cast<const pmix_disk_stats_t *>(src);
            memcpy(d, s, sizeof(*d));
            return dup_into(&d->disk, s->disk);
        }
        case PMIX_NET_STATS: {
            auto *d = static_cast<pmix_net_stats_t *>(dst);
            auto *s = static_cast<const pmix_net_stats_t *>(src);
            memcpy(d, s, sizeof(*d));
            return dup_into(&d->net_interface, s->net_interface);
        }
        case PMIX_NODE_STATS: {
            auto *d = static_cast<pmix_node_stats_t *>(dst);
            auto *s = static_cast<const pmix_node_stats_t *>(src);
            memcpy(d, s, sizeof(*d));
            d->node = nullptr;
            d->diskstats = nullptr;
            d->netstats = nullptr;
            d->ndiskstats = d->nnetstats = 0;
            ZPMIX_TRY(dup_into(&d->node, s->node));
            ZPMIX_TRY(dup_array(PMIX_DISK_STATS, &d->diskstats, s->diskstats, s->ndiskstats));
            d->ndiskstats = d->diskstats == nullptr ? 0 : s->ndiskstats;
            ZPMIX_TRY(dup_array(PMIX_NET_STATS, &d->netstats, s->netstats, s->nnetstats));
            d->nnetstats = d->netstats == nullptr ? 0 : s->nnetstats;
            return PMIX_SUCCESS;
        }
        case PMIX_DATA_BUFFER: {
            auto *d = static_cast<pmix_data_buffer_t *>(dst);
            auto *s = static_cast<const pmix_data_buffer_t *>(src);
            memset(d, 0, sizeof(*d));
            if (s->base_ptr == nullptr || s->bytes_used == 0) return PMIX_SUCCESS;
            d->base_ptr = static_cast<char *>(malloc(s->bytes_used));
            if (d->base_ptr == nullptr) return PMIX_ERR_NOMEM;
            memcpy(d->base_ptr, s->base_ptr, s->bytes_used);
            d->bytes_allocated = d->bytes_used = s->bytes_used;
            d->pack_ptr = d->base_ptr + s->bytes_used;
            size_t off = 0;
            if (s->unpack_ptr >= s->base_ptr && s->unpack_ptr <= s->base_ptr + s->bytes_used)
                off = static_cast<size_t>(s->unpack_ptr - s->base_ptr);
            d->unpack_ptr = d->base_ptr + off;
            return PMIX_SUCCESS;
        }
        default: {
            size_t sz = type_size(t);
            if (sz == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
            memcpy(dst, src, sz);  // plain data (numbers, proc, nspace, pointer)
            return PMIX_SUCCESS;
        }
    }
}

pmix_status_t object_xfer(pmix_data_type_t t, void *dst, const void *src) noexcept {
    size_t sz = type_size(t);
    if (sz == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (dst == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    memset(dst, 0, sz);
    pmix_status_t rc = xfer_impl(t, dst, src);
    if (rc != PMIX_SUCCESS) object_destruct(t, dst);
    return rc;
}

pmix_status_t array_copy(pmix_data_type_t t, void **dst, const void *src, size_t n) noexcept {
    *dst = nullptr;
    size_t sz = type_size(t);
    if (sz == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (n == 0 || src == nullptr) return PMIX_SUCCESS;
    auto *out = static_cast<char *>(zpmix_array_create(t, n));
    if (out == nullptr) return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; ++i) {
        pmix_status_t rc = object_xfer(t, out + i * sz, static_cast<const char *>(src) + i * sz);
        if (rc != PMIX_SUCCESS) {
            zpmix_array_free(t, out, i);
            return rc;
        }
    }
    *dst = out;
    return PMIX_SUCCESS;
}

// ---- compare ----

template <class T>
static pmix_value_cmp_t num(T a, T b) noexcept {
    if (a == b) return PMIX_EQUAL;
    return a > b ? PMIX_VALUE1_GREATER : PMIX_VALUE2_GREATER;
}

static pmix_value_cmp_t str(const char *a, const char *b) noexcept {
    if (a == b) return PMIX_EQUAL;
    if (a == nullptr) return PMIX_VALUE2_GREATER;
    if (b == nullptr) return PMIX_VALUE1_GREATER;
    return num(strcmp(a, b) > 0 ? 1 : (strcmp(a, b) < 0 ? -1 : 0), 0);
}

static pmix_value_cmp_t bytes(const char *a, size_t na, const char *b, size_t nb) noexcept {
    if (na != nb) return num(na, nb);
    if (na == 0) return PMIX_EQUAL;
    int r = memcmp(a, b, na);
    return num(r > 0 ? 1 : (r < 0 ? -1 : 0), 0);
}

static pmix_value_cmp_t argv(char **a, char **b) noexcept {
    int na = zpmix_argv_count(a), nb = zpmix_argv_count(b);
    if (na != nb) return num(na, nb);
    for (int i = 0; i < na; ++i) {
        pmix_value_cmp_t r = str(a[i], b[i]);
        if (r != PMIX_EQUAL) return r;
    }
    return PMIX_EQUAL;
}

static pmix_value_cmp_t arrays(pmix_data_type_t t, const void *a, size_t na, const void *b,
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

#define ZPMIX_CMP(expr)                  \
    do {                                 \
        pmix_value_cmp_t _r = (expr);    \
        if (_r != PMIX_EQUAL) return _r; \
    } while (0)

pmix_value_cmp_t object_compare(pmix_data_type_t t, const void *pa, const void *pb) noexcept {
    if (pa == pb) return PMIX_EQUAL;
    if (pa == nullptr || pb == nullptr)
        return pa == nullptr ? PMIX_VALUE2_GREATER : PMIX_VALUE1_GREATER;
#define AS(T)                             \
    auto *a = static_cast<const T *>(pa); \
    auto *b = static_cast<const T *>(pb)
    switch (t) {
        case PMIX_BOOL: {
            AS(bool);
            return num(*a, *b);
        }
        case PMIX_BYTE:
        case PMIX_UINT8:
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_COMMAND:
        case PMIX_PROC_STATE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_JOB_STATE:
        case PMIX_LINK_STATE: {
            AS(uint8_t);
            return num(*a, *b);
        }
        case PMIX_SIZE: {
            AS(size_t);
            return num(*a, *b);
        }
        case PMIX_PID: {
            AS(pid_t);
            return num(*a, *b);
        }
        case PMIX_INT:
        case PMIX_STATUS: {
            AS(int);
            return num(*a, *b);
        }
        case PMIX_INT8: {
            AS(int8_t);
            return num(*a, *b);
        }
        case PMIX_INT16: {
            AS(int16_t);
            return num(*a, *b);
        }
        case PMIX_INT32: {
            AS(int32_t);
            return num(*a, *b);
        }
        case PMIX_INT64: {
            AS(int64_t);
            return num(*a, *b);
        }
        case PMIX_UINT: {
            AS(unsigned int);
            return num(*a, *b);
        }
        case PMIX_UINT16:
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE: {
            AS(uint16_t);
            return num(*a, *b);
        }
        case PMIX_UINT32:
        case PMIX_PROC_RANK:
        case PMIX_INFO_DIRECTIVES: {
            AS(uint32_t);
            return num(*a, *b);
        }
        case PMIX_UINT64:
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST: {
            AS(uint64_t);
            return num(*a, *b);
        }
        case PMIX_FLOAT: {
            AS(float);
            return num(*a, *b);
        }
        case PMIX_DOUBLE: {
            AS(double);
            return num(*a, *b);
        }
        case PMIX_TIME: {
            AS(time_t);
            return num(*a, *b);
        }
        case PMIX_TIMEVAL: {
            AS(struct timeval);
            ZPMIX_CMP(num(a->tv_sec, b->tv_sec));
            return num(a->tv_usec, b->tv_usec);
        }
        case PMIX_STRING: {
            AS(char *const);
            return str(*a, *b);
        }
        case PMIX_POINTER: {
            AS(void *const);
            return *a == *b ? PMIX_EQUAL : PMIX_VALUE_COMPARISON_NOT_AVAIL;
        }
        case PMIX_PROC_NSPACE: {
            AS(char);
            int r = strncmp(a, b, PMIX_MAX_NSLEN);
            return num(r > 0 ? 1 : (r < 0 ? -1 : 0), 0);
        }
        case PMIX_PROC: {
            AS(pmix_proc_t);
            ZPMIX_CMP(object_compare(PMIX_PROC_NSPACE, a->nspace, b->nspace));
            return num(a->rank, b->rank);
        }
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT: {
            AS(pmix_byte_object_t);
            return bytes(a->bytes, a->size, b->bytes, b->size);
        }
        case PMIX_VALUE: {
            AS(pmix_value_t);
            return PMIx_Value_compare(const_cast<pmix_value_t *>(a), const_cast<pmix_value_t *>(b));
        }
        case PMIX_INFO: {
            AS(pmix_info_t);
            ZPMIX_CMP(str(a->key, b->key));
            ZPMIX_CMP(num(a->flags, b->flags));
            return object_compare(PMIX_VALUE, &a->value, &b->value);
        }
        case PMIX_PDATA: {
            AS(pmix_pdata_t);
            ZPMIX_CMP(object_compare(PMIX_PROC, &a->proc, &b->proc));
            ZPMIX_CMP(str(a->key, b->key));
            return object_compare(PMIX_VALUE, &a->value, &b->value);
        }
        case PMIX_APP: {
            AS(pmix_app_t);
            ZPMIX_CMP(str(a->cmd, b->cmd));
            ZPMIX_CMP(argv(a->argv, b->argv));
            ZPMIX_CMP(argv(a->env, b->env));
            ZPMIX_CMP(str(a->cwd, b->cwd));
            ZPMIX_CMP(num(a->maxprocs, b->maxprocs));
            return arrays(PMIX_INFO, a->info, a->ninfo, b->info, b->ninfo);
        }
        case PMIX_QUERY: {
            AS(pmix_query_t);
            ZPMIX_CMP(argv(a->keys, b->keys));
            return arrays(PMIX_INFO, a->qualifiers, a->nqual, b->qualifiers, b->nqual);
        }
        case PMIX_PROC_INFO: {
            AS(pmix_proc_info_t);
            ZPMIX_CMP(object_compare(PMIX_PROC, &a->proc, &b->proc));
            ZPMIX_CMP(str(a->hostname, b->hostname));
            ZPMIX_CMP(str(a->executable_name, b->executable_name));
            ZPMIX_CMP(num(a->pid, b->pid));
            ZPMIX_CMP(num(a->exit_code, b->exit_code));
            return num(a->state, b->state);
        }
        case PMIX_DATA_ARRAY: {
            AS(pmix_data_array_t);
            if (a->type != b->type) return PMIX_VALUE_TYPE_DIFFERENT;
            return arrays(a->type, a->array, a->size, b->array, b->size);
        }
        case PMIX_ENVAR: {
            AS(pmix_envar_t);
            ZPMIX_CMP(str(a->envar, b->envar));
            ZPMIX_CMP(str(a->value, b->value));
            return num(a->separator, b->separator);
        }
        case PMIX_COORD: {
            AS(pmix_coord_t);
            ZPMIX_CMP(num(a->view, b->view));
            return arrays(PMIX_UINT32, a->coord, a->dims, b->coord, b->dims);
        }
        case PMIX_REGATTR: {
            AS(pmix_regattr_t);
            ZPMIX_CMP(str(a->name, b->name));
            ZPMIX_CMP(str(a->string, b->string));
            ZPMIX_CMP(num(a->type, b->type));
            return argv(a->description, b->description);
        }
        case PMIX_PROC_CPUSET: {
            AS(pmix_cpuset_t);
            ZPMIX_CMP(str(a->source, b->source));
            if (a->bitmap == nullptr || b->bitmap == nullptr)
                return num(a->bitmap != nullptr, b->bitmap != nullptr);
            if (!is_hwloc(a->source)) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
            int r = hwloc_bitmap_compare(static_cast<hwloc_const_bitmap_t>(a->bitmap),
                                         static_cast<hwloc_const_bitmap_t>(b->bitmap));
            return num(r > 0 ? 1 : (r < 0 ? -1 : 0), 0);
        }
        case PMIX_TOPO: {
            AS(pmix_topology_t);
            ZPMIX_CMP(str(a->source, b->source));
            if (a->topology == b->topology) return PMIX_EQUAL;
            if (a->topology == nullptr || b->topology == nullptr)
                return num(a->topology != nullptr, b->topology != nullptr);
            return PMIX_VALUE_COMPARISON_NOT_AVAIL;
        }
        case PMIX_GEOMETRY: {
            AS(pmix_geometry_t);
            ZPMIX_CMP(num(a->fabric, b->fabric));
            ZPMIX_CMP(str(a->uuid, b->uuid));
            ZPMIX_CMP(str(a->osname, b->osname));
            return arrays(PMIX_COORD, a->coordinates, a->ncoords, b->coordinates, b->ncoords);
        }
        case PMIX_DEVICE_DIST: {
            AS(pmix_device_distance_t);
            ZPMIX_CMP(str(a->uuid, b->uuid));
            ZPMIX_CMP(str(a->osname, b->osname));
            ZPMIX_CMP(num(a->type, b->type));
            ZPMIX_CMP(num(a->mindist, b->mindist));
            return num(a->maxdist, b->maxdist);
        }
        case PMIX_ENDPOINT: {
            AS(pmix_endpoint_t);
            ZPMIX_CMP(str(a->uuid, b->uuid));
            ZPMIX_CMP(str(a->osname, b->osname));
            return bytes(a->endpt.bytes, a->endpt.size, b->endpt.bytes, b->endpt.size);
        }
        case PMIX_PROC_STATS: {
            AS(pmix_proc_stats_t);
            ZPMIX_CMP(str(a->node, b->node));
            ZPMIX_CMP(object_compare(PMIX_PROC, &a->proc, &b->proc));
            ZPMIX_CMP(num(a->pid, b->pid));
            ZPMIX_CMP(str(a->cmd, b->cmd));
            ZPMIX_CMP(num(a->state, b->state));
            ZPMIX_CMP(object_compare(PMIX_TIMEVAL, &a->time, &b->time));
            ZPMIX_CMP(num(a->percent_cpu, b->percent_cpu));
            ZPMIX_CMP(num(a->priority, b->priority));
            ZPMIX_CMP(num(a->num_threads, b->num_threads));
            ZPMIX_CMP(num(a->pss, b->pss));
            ZPMIX_CMP(num(a->vsize, b->vsize));
            ZPMIX_CMP(num(a->rss, b->rss));
            ZPMIX_CMP(num(a->peak_vsize, b->peak_vsize));
            ZPMIX_CMP(num(a->processor, b->processor));
            return object_compare(PMIX_TIMEVAL, &a->sample_time, &b->sample_time);
        }
        case PMIX_DISK_STATS: {
            AS(pmix_disk_stats_t);
            ZPMIX_CMP(str(a->disk, b->disk));
            const uint64_t *fa = &a->num_reads_completed, *fb = &b->num_reads_completed;
            return arrays(PMIX_UINT64, fa, 11, fb, 11);
        }
        case PMIX_NET_STATS: {
            AS(pmix_net_stats_t);
            ZPMIX_CMP(str(a->net_interface, b->net_interface));
            return arrays(PMIX_UINT64, &a->num_bytes_recvd, 6, &b->num_bytes_recvd, 6);
        }
        case PMIX_NODE_STATS: {
            AS(pmix_node_stats_t);
            ZPMIX_CMP(str(a->node, b->node));
            ZPMIX_CMP(arrays(PMIX_FLOAT, &a->la, 11, &b->la, 11));
            ZPMIX_CMP(object_compare(PMIX_TIMEVAL, &a->sample_time, &b->sample_time));
            ZPMIX_CMP(
                arrays(PMIX_DISK_STATS, a->diskstats, a->ndiskstats, b->diskstats, b->ndiskstats));
            return arrays(PMIX_NET_STATS, a->netstats, a->nnetstats, b->netstats, b->nnetstats);
        }
        case PMIX_DATA_BUFFER: {
            AS(pmix_data_buffer_t);
            return bytes(a->base_ptr, a->bytes_used, b->base_ptr, b->bytes_used);
        }
        default:
            return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
#undef AS
}

void *value_payload(const pmix_value_t *v) noexcept {
    auto *mv = const_cast<pmix_value_t *>(v);
    return value_holding(v->type) == ValueHolding::pointer ? mv->data.ptr
                                                           : static_cast<void *>(&mv->data);
}

}  // namespace zpmix::c

using namespace zpmix::c;

// ---- exported C API ----

extern "C" {

PMIX_EXPORT size_t zpmix_type_size(pmix_data_type_t type) {
    return type_size(type);
}

PMIX_EXPORT void *zpmix_array_create(pmix_data_type_t type, size_t n) {
    size_t sz = type_size(type);
    if (n == 0 || sz == 0) return nullptr;
    void *p = calloc(n, sz);
    if (p != nullptr && type == PMIX_INFO) PMIX_INFO_SET_END(static_cast<pmix_info_t *>(p) + n - 1);
    return p;
}

PMIX_EXPORT void zpmix_object_destruct(pmix_data_type_t type, void *obj) {
    object_destruct(type, obj);
}

PMIX_EXPORT void zpmix_array_free(pmix_data_type_t type, void *array, size_t n) {
    if (array == nullptr) return;
    size_t sz = type_size(type);
    if (sz != 0)
        for (size_t i = 0; i < n; ++i) object_destruct(type, static_cast<char *>(array) + i * sz);
    free(array);
}

PMIX_EXPORT pmix_status_t zpmix_object_xfer(pmix_data_type_t type, void *dst, const void *src) {
    return object_xfer(type, dst, src);
}

PMIX_EXPORT pmix_coord_t *zpmix_coord_create(size_t dims, size_t n) {
    auto *c = static_cast<pmix_coord_t *>(zpmix_array_create(PMIX_COORD, n));
    if (c == nullptr || dims == 0) return c;
    for (size_t i = 0; i < n; ++i) {
        c[i].coord = static_cast<uint32_t *>(calloc(dims, sizeof(uint32_t)));
        if (c[i].coord == nullptr) {
            zpmix_array_free(PMIX_COORD, c, n);
            return nullptr;
        }
        c[i].dims = dims;
    }
    return c;
}

PMIX_EXPORT pmix_status_t zpmix_data_array_construct(pmix_data_array_t *array, size_t n,
                                                     pmix_data_type_t type) {
    array->type = type;
    array->size = 0;
    array->array = nullptr;
    if (n == 0) return PMIX_SUCCESS;
    if (type_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    array->array = zpmix_array_create(type, n);
    if (array->array == nullptr) return PMIX_ERR_NOMEM;
    array->size = n;
    return PMIX_SUCCESS;
}

PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t *d) {
    if (d == nullptr) return;
    zpmix_array_free(d->type, d->array, d->size);
    d->array = nullptr;
    d->size = 0;
}

PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t *v) {
    if (v == nullptr) return;
    switch (value_holding(v->type)) {
        case ValueHolding::pointer:
            if (v->data.ptr != nullptr) {
                object_destruct(v->type, v->data.ptr);
                free(v->data.ptr);
            }
            break;
        case ValueHolding::inline_:
            if (v->type != PMIX_POINTER) object_destruct(v->type, &v->data);
            break;
        default:
            break;
    }
    memset(&v->data, 0, sizeof(v->data));
    v->type = PMIX_UNDEF;
}

PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t *v, const void *data,
                                          pmix_data_type_t type) {
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
    switch (type) {
        case PMIX_STRING:
            v->data.string = strdup(static_cast<const char *>(data));
            return v->data.string == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
        case PMIX_POINTER:
            v->data.ptr = const_cast<void *>(data);
            return PMIX_SUCCESS;
        case PMIX_PROC_NSPACE: {
            auto *ns = static_cast<pmix_nspace_t *>(calloc(1, sizeof(pmix_nspace_t)));
            if (ns == nullptr) return PMIX_ERR_NOMEM;
            zpmix_load_string(*ns, static_cast<const char *>(data), PMIX_MAX_NSLEN);
            v->data.nspace = ns;
            return PMIX_SUCCESS;
        }
        default:
            break;
    }
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

PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t *v, void **data, size_t *sz) {
    if (v == nullptr || data == nullptr || sz == nullptr) return PMIX_ERR_BAD_PARAM;
    *sz = 0;
    ValueHolding h = value_holding(v->type);
    if (h == ValueHolding::none || h == ValueHolding::unsupported)
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    switch (v->type) {
        case PMIX_STRING:
            *data = nullptr;
            if (v->data.string == nullptr) return PMIX_SUCCESS;
            *data = strdup(v->data.string);
            if (*data == nullptr) return PMIX_ERR_NOMEM;
            *sz = strlen(v->data.string) + 1;
            return PMIX_SUCCESS;
        case PMIX_POINTER:
            *data = v->data.ptr;
            *sz = sizeof(void *);
            return PMIX_SUCCESS;
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT:
            *data = nullptr;
            if (v->data.bo.size == 0 || v->data.bo.bytes == nullptr) return PMIX_SUCCESS;
            *data = malloc(v->data.bo.size);
            if (*data == nullptr) return PMIX_ERR_NOMEM;
            memcpy(*data, v->data.bo.bytes, v->data.bo.size);
            *sz = v->data.bo.size;
            return PMIX_SUCCESS;
        default:
            break;
    }
    if (h == ValueHolding::pointer || v->type == PMIX_ENVAR) {
        // structured data: hand back a newly allocated deep copy
        pmix_status_t rc = array_copy(v->type, data, value_payload(v), 1);
        if (rc == PMIX_SUCCESS) *sz = type_size(v->type);
        return rc;
    }
    // scalars: copy into the caller's storage at *data (allocated here if *data is NULL)
    size_t n = type_size(v->type);
    if (*data == nullptr) {
        *data = malloc(n);
        if (*data == nullptr) return PMIX_ERR_NOMEM;
    }
    memcpy(*data, &v->data, n);
    *sz = n;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src) {
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

PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2) {
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

PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                                         pmix_data_type_t type) {
    if (info == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
    PMIX_LOAD_KEY(info->key, key);
    // Programs load infos they never constructed (OpenPMIx clears the flags here too): stack
    // garbage in the flags could mark it PERSISTENT, and its destruct would then leak the value.
    info->flags = 0;
    return PMIx_Value_load(&info->value, data, type);
}

PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    memcpy(dest->key, src->key, sizeof(dest->key));
    dest->key[PMIX_MAX_KEYLEN] = '\0';
    dest->flags = src->flags & ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
    return PMIx_Value_xfer(&dest->value, &src->value);
}

PMIX_EXPORT pmix_boolean_t zpmix_check_true(const pmix_value_t *value) {
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
        PMIX_INFO_FREE(fresh, 1);
        return PMIX_ERR_NOMEM;
    }
}
}  // namespace

PMIX_EXPORT void *PMIx_Info_list_start(void) {
    return new (std::nothrow) InfoList();
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                             pmix_data_type_t type) {
    if (ptr == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *info = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    if (info == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = PMIx_Info_load(info, key, value, type);
    if (rc != PMIX_SUCCESS) {
        PMIX_INFO_FREE(info, 1);
        return rc;
    }
    return list_push_owned(ptr, info);
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info) {
    if (ptr == nullptr || info == nullptr) return PMIX_ERR_BAD_PARAM;
    try {
        static_cast<InfoList *>(ptr)->push_back({info, false});
    } catch (...) {
        return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info) {
    if (ptr == nullptr || info == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *copy = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    if (copy == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = PMIx_Info_xfer(copy, info);
    if (rc != PMIX_SUCCESS) {
        PMIX_INFO_FREE(copy, 1);
        return rc;
    }
    return list_push_owned(ptr, copy);
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par) {
    if (ptr == nullptr || par == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *list = static_cast<InfoList *>(ptr);
    PMIX_DATA_ARRAY_INIT(par, PMIX_INFO);
    if (list->empty()) return PMIX_ERR_EMPTY;
    auto *arr = static_cast<pmix_info_t *>(zpmix_array_create(PMIX_INFO, list->size()));
    if (arr == nullptr) return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < list->size(); ++i) {
        pmix_status_t rc = PMIx_Info_xfer(&arr[i], (*list)[i].info);
        if (rc != PMIX_SUCCESS) {
            zpmix_array_free(PMIX_INFO, arr, list->size());
            return rc;
        }
    }
    PMIX_INFO_SET_END(&arr[list->size() - 1]);
    par->array = arr;
    par->size = list->size();
    return PMIX_SUCCESS;
}

PMIX_EXPORT void PMIx_Info_list_release(void *ptr) {
    auto *list = static_cast<InfoList *>(ptr);
    if (list == nullptr) return;
    for (auto &item : *list)
        if (item.owned) zpmix_array_free(PMIX_INFO, item.info, 1);
    delete list;
}

// ---- cpusets and topologies (hwloc) ----

PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset) {
    if (cpuset == nullptr) return;
    if (cpuset->bitmap != nullptr && is_hwloc(cpuset->source))
        hwloc_bitmap_free(static_cast<hwloc_bitmap_t>(cpuset->bitmap));
    free(cpuset->source);
    cpuset->source = nullptr;
    cpuset->bitmap = nullptr;
}

PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo) {
    if (topo == nullptr) return;
    if (topo->topology != nullptr && is_hwloc(topo->source))
        hwloc_topology_destroy(static_cast<hwloc_topology_t>(topo->topology));
    free(topo->source);
    topo->source = nullptr;
    topo->topology = nullptr;
}

PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string,
                                                   pmix_cpuset_t *cpuset) {
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

}  // extern "C"
