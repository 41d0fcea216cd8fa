#pragma once
// String arrays ("argv"), environment arrays, keys and namespaces, and the raw bytes of data
// buffers: what the zpmix_* helpers of the standard header's macros and PMIx_Data_load/unload/
// embed/copy_payload do (bindings/c/src/values_api.cpp exports them). Allocation as the standard
// has it: malloc'd strings and NULL-terminated arrays the caller frees.
#include <cstddef>

#include "pmix_common.h"

namespace zpmix::c {

// Copies at most `max` bytes of src into dst[max + 1], zero-filled (a key, a namespace).
void load_string(char *dst, const char *src, size_t max);
char *strdup_or_null(const char *s);
size_t nslen(const char *ns);
// What PMIX_LOAD_PROCID does.
inline void load_proc(pmix_proc_t *p, const char *nspace, pmix_rank_t rank) {
    load_string(p->nspace, nspace, PMIX_MAX_NSLEN);
    p->rank = rank;
}

int argv_count(char **argv);
pmix_status_t argv_insert(char ***argv, const char *arg, bool front);
pmix_status_t argv_append(char ***argv, const char *arg);
pmix_status_t argv_prepend(char ***argv, const char *arg);
pmix_status_t argv_append_unique(char ***argv, const char *arg);
void argv_free(char **argv);
char **argv_split(const char *src, int delimiter);
char **argv_split_with_empty(const char *src, int delimiter);
char *argv_join(char **argv, int delimiter);
char **argv_copy(char **argv);
// Sets NAME=VALUE in the environment array `*env`; with env == NULL, in the process environment.
pmix_status_t env_set(const char *name, const char *value, bool overwrite, char ***env);

void multicluster_nspace_construct(char *target, const char *cluster, const char *nspace);
void multicluster_nspace_parse(const char *target, char *cluster, char *nspace);

// A buffer takes `bytes` (malloc'd) as its whole content; unload hands back what is unread.
void data_buffer_load(pmix_data_buffer_t *b, char *bytes, size_t size);
void data_buffer_unload(pmix_data_buffer_t *b, char **bytes, size_t *size);
pmix_status_t data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload);
pmix_status_t data_unload(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload);
pmix_status_t data_embed(pmix_data_buffer_t *buffer, const pmix_byte_object_t *payload);
// Appends the unread part of `src` to `dest`.
pmix_status_t data_copy_payload(pmix_data_buffer_t *dest, pmix_data_buffer_t *src);

}  // namespace zpmix::c
