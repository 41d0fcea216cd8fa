#pragma once
// The standard's value, info, data-array, info-list, cpuset and topology operations (what
// PMIx_Value_load, PMIx_Info_xfer, PMIx_Info_list_* ... do; bindings/c/src/values_api.cpp exports
// them), over the type table (pmix_types.hpp). libpmix's engine calls these, never the exported
// names, so that it links without the C API.
#include <cstddef>

#include "pmix_common.h"

namespace zpmix::c {

// calloc'd arrays of n objects of `type` (an info array's last entry marked as its end), and
// their release with every object's destruct.
void *array_create(pmix_data_type_t type, size_t n);
void array_free(pmix_data_type_t type, void *array, size_t n);
pmix_coord_t *coord_create(size_t dims, size_t n);
pmix_status_t data_array_construct(pmix_data_array_t *array, size_t n, pmix_data_type_t type);
void data_array_destruct(pmix_data_array_t *d);

void value_destruct(pmix_value_t *v);
pmix_status_t value_load(pmix_value_t *v, const void *data, pmix_data_type_t type);
pmix_status_t value_unload(pmix_value_t *v, void **data, size_t *sz);
pmix_status_t value_xfer(pmix_value_t *dest, const pmix_value_t *src);
pmix_value_cmp_t value_compare(pmix_value_t *v1, pmix_value_t *v2);
pmix_status_t info_load(pmix_info_t *info, const char *key, const void *data,
                        pmix_data_type_t type);
pmix_status_t info_xfer(pmix_info_t *dest, const pmix_info_t *src);
// True for no type (presence), a true bool or a "true"-like string.
pmix_boolean_t check_true(const pmix_value_t *value);

// Info lists: owned entries are deep copies, inserted ones are borrowed.
void *info_list_start();
pmix_status_t info_list_add(void *ptr, const char *key, const void *value, pmix_data_type_t type);
pmix_status_t info_list_insert(void *ptr, pmix_info_t *info);
pmix_status_t info_list_xfer(void *ptr, const pmix_info_t *info);
pmix_status_t info_list_convert(void *ptr, pmix_data_array_t *par);
void info_list_release(void *ptr);

// Cpusets and topologies (hwloc).
void cpuset_destruct(pmix_cpuset_t *cpuset);
void topology_destruct(pmix_topology_t *topo);
// PMIx_Load_topology's answer, which topology_destruct leaves alone: the library's topology and
// its static source string.
void set_shared_topology(const void *topology, const char *source);
pmix_status_t parse_cpuset_string(const char *cpuset_string, pmix_cpuset_t *cpuset);

}  // namespace zpmix::c
