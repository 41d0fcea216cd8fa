// The exported value, info, argv and data-buffer functions of the C API (pmix.h, and the
// zpmix_* helpers the standard header's macros call), over libpmix's engine (client/values/).
#include "client/values/data_buffer.hpp"
#include "client/values/pmix_helpers.hpp"
#include "client/values/pmix_objects.hpp"
#include "client/values/pmix_types.hpp"
#include "pmix.h"

using namespace zpmix::c;

extern "C" {

PMIX_EXPORT void zpmix_load_string(char *dst, const char *src, size_t max) {
    load_string(dst, src, max);
}

PMIX_EXPORT char *zpmix_strdup(const char *s) {
    return strdup_or_null(s);
}

PMIX_EXPORT size_t zpmix_nslen(const char *ns) {
    return nslen(ns);
}

PMIX_EXPORT int zpmix_argv_count(char **argv) {
    return argv_count(argv);
}

PMIX_EXPORT pmix_status_t zpmix_argv_append(char ***argv, const char *arg) {
    return argv_append(argv, arg);
}

PMIX_EXPORT pmix_status_t zpmix_argv_prepend(char ***argv, const char *arg) {
    return argv_prepend(argv, arg);
}

PMIX_EXPORT pmix_status_t zpmix_argv_append_unique(char ***argv, const char *arg) {
    return argv_append_unique(argv, arg);
}

PMIX_EXPORT void zpmix_argv_free(char **argv) {
    argv_free(argv);
}

PMIX_EXPORT char **zpmix_argv_split(const char *src, int delimiter) {
    return argv_split(src, delimiter);
}

PMIX_EXPORT char **zpmix_argv_split_with_empty(const char *src, int delimiter) {
    return argv_split_with_empty(src, delimiter);
}

PMIX_EXPORT char *zpmix_argv_join(char **argv, int delimiter) {
    return argv_join(argv, delimiter);
}

PMIX_EXPORT char **zpmix_argv_copy(char **argv) {
    return argv_copy(argv);
}

PMIX_EXPORT pmix_status_t zpmix_setenv(const char *name, const char *value, bool overwrite,
                                       char ***env) {
    return env_set(name, value, overwrite, env);
}

PMIX_EXPORT void zpmix_multicluster_nspace_construct(char *target, const char *cluster,
                                                     const char *nspace) {
    multicluster_nspace_construct(target, cluster, nspace);
}

PMIX_EXPORT void zpmix_multicluster_nspace_parse(const char *target, char *cluster, char *nspace) {
    multicluster_nspace_parse(target, cluster, nspace);
}

PMIX_EXPORT void zpmix_data_buffer_load(pmix_data_buffer_t *b, char *bytes, size_t size) {
    data_buffer_load(b, bytes, size);
}

PMIX_EXPORT void zpmix_data_buffer_unload(pmix_data_buffer_t *b, char **bytes, size_t *size) {
    data_buffer_unload(b, bytes, size);
}

PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload) {
    return data_load(buffer, payload);
}

PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer,
                                           pmix_byte_object_t *payload) {
    return data_unload(buffer, payload);
}

PMIX_EXPORT pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer,
                                          const pmix_byte_object_t *payload) {
    return data_embed(buffer, payload);
}

PMIX_EXPORT pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest,
                                                 pmix_data_buffer_t *src) {
    return data_copy_payload(dest, src);
}

PMIX_EXPORT size_t zpmix_type_size(pmix_data_type_t type) {
    return type_size(type);
}

PMIX_EXPORT void *zpmix_array_create(pmix_data_type_t type, size_t n) {
    return array_create(type, n);
}

PMIX_EXPORT void zpmix_object_destruct(pmix_data_type_t type, void *obj) {
    object_destruct(type, obj);
}

PMIX_EXPORT void zpmix_array_free(pmix_data_type_t type, void *array, size_t n) {
    array_free(type, array, n);
}

PMIX_EXPORT pmix_status_t zpmix_object_xfer(pmix_data_type_t type, void *dst, const void *src) {
    return object_xfer(type, dst, src);
}

PMIX_EXPORT pmix_coord_t *zpmix_coord_create(size_t dims, size_t n) {
    return coord_create(dims, n);
}

PMIX_EXPORT pmix_status_t zpmix_data_array_construct(pmix_data_array_t *array, size_t n,
                                                     pmix_data_type_t type) {
    return data_array_construct(array, n, type);
}

PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t *d) {
    data_array_destruct(d);
}

PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t *v) {
    value_destruct(v);
}

PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t *v, const void *data,
                                          pmix_data_type_t type) {
    return value_load(v, data, type);
}

PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t *v, void **data, size_t *sz) {
    return value_unload(v, data, sz);
}

PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src) {
    return value_xfer(dest, src);
}

PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2) {
    return value_compare(v1, v2);
}

PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                                         pmix_data_type_t type) {
    return info_load(info, key, data, type);
}

PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src) {
    return info_xfer(dest, src);
}

PMIX_EXPORT pmix_boolean_t zpmix_check_true(const pmix_value_t *value) {
    return check_true(value);
}

PMIX_EXPORT void *PMIx_Info_list_start(void) {
    return info_list_start();
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                             pmix_data_type_t type) {
    return info_list_add(ptr, key, value, type);
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info) {
    return info_list_insert(ptr, info);
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info) {
    return info_list_xfer(ptr, info);
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par) {
    return info_list_convert(ptr, par);
}

PMIX_EXPORT void PMIx_Info_list_release(void *ptr) {
    info_list_release(ptr);
}

PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset) {
    cpuset_destruct(cpuset);
}

PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo) {
    topology_destruct(topo);
}

PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string,
                                                   pmix_cpuset_t *cpuset) {
    return parse_cpuset_string(cpuset_string, cpuset);
}

PMIX_EXPORT pmix_status_t PMIx_Data_pack(const pmix_proc_t *, pmix_data_buffer_t *buffer, void *src,
                                         int32_t num_vals, pmix_data_type_t type) {
    return data_pack(buffer, src, num_vals, type);
}

PMIX_EXPORT pmix_status_t PMIx_Data_unpack(const pmix_proc_t *, pmix_data_buffer_t *buffer,
                                           void *dest, int32_t *max_num_values,
                                           pmix_data_type_t type) {
    return data_unpack(buffer, dest, max_num_values, type);
}

PMIX_EXPORT pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type) {
    return data_copy(dest, src, type);
}

PMIX_EXPORT pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src,
                                          pmix_data_type_t type) {
    return data_print(output, prefix, src, type);
}

PMIX_EXPORT bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                                    size_t *nbytes) {
    return data_compress(inbytes, size, outbytes, nbytes);
}

PMIX_EXPORT bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                                      size_t *nbytes) {
    return data_decompress(inbytes, size, outbytes, nbytes);
}

}  // extern "C"
