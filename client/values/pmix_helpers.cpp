// zpmix: string-array ("argv"), environment, key/namespace and data-buffer helpers.
#include <cstdlib>
#include <cstring>

#include "client/values/pmix_helpers.hpp"
#include "pmix.h"

namespace zpmix::c {

void load_string(char *dst, const char *src, size_t max) {
    memset(dst, 0, max + 1);
    if (src == nullptr) return;
    size_t n = strnlen(src, max);
    memcpy(dst, src, n);
}

char *strdup_or_null(const char *s) {
    return s == nullptr ? nullptr : strdup(s);
}

size_t nslen(const char *ns) {
    return ns == nullptr ? 0 : strnlen(ns, PMIX_MAX_NSLEN + 1);
}

int argv_count(char **argv) {
    int n = 0;
    if (argv != nullptr)
        while (argv[n] != nullptr) ++n;
    return n;
}

pmix_status_t argv_insert(char ***argv, const char *arg, bool front) {
    if (argv == nullptr || arg == nullptr) return PMIX_ERR_BAD_PARAM;
    int n = argv_count(*argv);
    char *copy = strdup(arg);
    if (copy == nullptr) return PMIX_ERR_NOMEM;
    auto **grown =
        static_cast<char **>(realloc(*argv, (static_cast<size_t>(n) + 2) * sizeof(char *)));
    if (grown == nullptr) {
        free(copy);
        return PMIX_ERR_NOMEM;
    }
    if (front) {
        memmove(grown + 1, grown, static_cast<size_t>(n) * sizeof(char *));
        grown[0] = copy;
    } else {
        grown[n] = copy;
    }
    grown[n + 1] = nullptr;
    *argv = grown;
    return PMIX_SUCCESS;
}

pmix_status_t argv_append(char ***argv, const char *arg) {
    return argv_insert(argv, arg, false);
}

pmix_status_t argv_prepend(char ***argv, const char *arg) {
    return argv_insert(argv, arg, true);
}

pmix_status_t argv_append_unique(char ***argv, const char *arg) {
    if (argv == nullptr || arg == nullptr) return PMIX_ERR_BAD_PARAM;
    for (int i = 0; *argv != nullptr && (*argv)[i] != nullptr; ++i)
        if (strcmp((*argv)[i], arg) == 0) return PMIX_SUCCESS;
    return argv_insert(argv, arg, false);
}

void argv_free(char **argv) {
    if (argv == nullptr) return;
    for (int i = 0; argv[i] != nullptr; ++i) free(argv[i]);
    free(argv);
}

// Splits at `delimiter`, keeping empty fields or dropping them.
char **split_fields(const char *src, int delimiter, bool keep_empty) {
    char **out = nullptr;
    if (src == nullptr) return nullptr;
    const char *p = src;
    while (*p != '\0' || keep_empty) {
        const char *end = strchr(p, delimiter);
        size_t len = end == nullptr ? strlen(p) : static_cast<size_t>(end - p);
        if (len > 0 || keep_empty) {
            char *field = strndup(p, len);
            if (field == nullptr || argv_insert(&out, field, false) != PMIX_SUCCESS) {
                free(field);
                argv_free(out);
                return nullptr;
            }
            free(field);
        }
        if (end == nullptr) break;
        p = end + 1;
    }
    return out;
}

char **argv_split(const char *src, int delimiter) {
    return split_fields(src, delimiter, false);
}

char **argv_split_with_empty(const char *src, int delimiter) {
    return split_fields(src, delimiter, true);
}

char *argv_join(char **argv, int delimiter) {
    int n = argv_count(argv);
    size_t total = 1;
    for (int i = 0; i < n; ++i) total += strlen(argv[i]) + 1;
    auto *out = static_cast<char *>(malloc(total));
    if (out == nullptr) return nullptr;
    char *w = out;
    for (int i = 0; i < n; ++i) {
        if (i > 0) *w++ = static_cast<char>(delimiter);
        size_t len = strlen(argv[i]);
        memcpy(w, argv[i], len);
        w += len;
    }
    *w = '\0';
    return out;
}

char **argv_copy(char **argv) {
    if (argv == nullptr) return nullptr;
    int n = argv_count(argv);
    auto **out = static_cast<char **>(calloc(static_cast<size_t>(n) + 1, sizeof(char *)));
    if (out == nullptr) return nullptr;
    for (int i = 0; i < n; ++i) {
        out[i] = strdup(argv[i]);
        if (out[i] == nullptr) {
            argv_free(out);
            return nullptr;
        }
    }
    return out;
}

// Sets NAME=VALUE in the environment array `*env`; with env == NULL, in the process environment.
pmix_status_t env_set(const char *name, const char *value, bool overwrite, char ***env) {
    if (name == nullptr) return PMIX_ERR_BAD_PARAM;
    if (env == nullptr)
        return setenv(name, value == nullptr ? "" : value, overwrite) == 0 ? PMIX_SUCCESS
                                                                           : PMIX_ERR_BAD_PARAM;
    size_t nlen = strlen(name), vlen = value == nullptr ? 0 : strlen(value);
    auto *entry = static_cast<char *>(malloc(nlen + vlen + 2));
    if (entry == nullptr) return PMIX_ERR_NOMEM;
    memcpy(entry, name, nlen);
    entry[nlen] = '=';
    if (vlen > 0) memcpy(entry + nlen + 1, value, vlen);
    entry[nlen + 1 + vlen] = '\0';
    for (int i = 0; *env != nullptr && (*env)[i] != nullptr; ++i) {
        if (strncmp((*env)[i], name, nlen) == 0 && (*env)[i][nlen] == '=') {
            if (!overwrite) {
                free(entry);
                return PMIX_ERR_EXISTS;
            }
            free((*env)[i]);
            (*env)[i] = entry;
            return PMIX_SUCCESS;
        }
    }
    pmix_status_t rc = argv_insert(env, entry, false);
    free(entry);
    return rc;
}

void multicluster_nspace_construct(char *target, const char *cluster, const char *nspace) {
    memset(target, 0, PMIX_MAX_NSLEN + 1);
    size_t clen = strnlen(cluster, PMIX_MAX_NSLEN);
    memcpy(target, cluster, clen);
    if (clen < PMIX_MAX_NSLEN) {
        target[clen] = ':';
        size_t nlen = strnlen(nspace, PMIX_MAX_NSLEN - clen - 1);
        memcpy(target + clen + 1, nspace, nlen);
    }
}

void multicluster_nspace_parse(const char *target, char *cluster, char *nspace) {
    memset(cluster, 0, PMIX_MAX_NSLEN + 1);
    memset(nspace, 0, PMIX_MAX_NSLEN + 1);
    size_t len = strnlen(target, PMIX_MAX_NSLEN);
    const char *colon = static_cast<const char *>(memchr(target, ':', len));
    if (colon == nullptr) {
        memcpy(nspace, target, len);
        return;
    }
    memcpy(cluster, target, static_cast<size_t>(colon - target));
    memcpy(nspace, colon + 1, len - static_cast<size_t>(colon - target) - 1);
}

// ---- data buffers ----

void data_buffer_load(pmix_data_buffer_t *b, char *bytes, size_t size) {
    if (b == nullptr) return;
    free(b->base_ptr);
    b->base_ptr = b->unpack_ptr = bytes;
    b->bytes_allocated = b->bytes_used = bytes == nullptr ? 0 : size;
    b->pack_ptr = bytes == nullptr ? nullptr : bytes + size;
}

void data_buffer_unload(pmix_data_buffer_t *b, char **bytes, size_t *size) {
    *bytes = nullptr;
    *size = 0;
    if (b == nullptr || b->base_ptr == nullptr) return;
    size_t off = static_cast<size_t>(b->unpack_ptr - b->base_ptr);
    size_t left = b->bytes_used > off ? b->bytes_used - off : 0;
    if (off == 0) {
        *bytes = b->base_ptr;  // hand over the whole allocation
        *size = left;
    } else if (left > 0) {
        *bytes = static_cast<char *>(malloc(left));
        if (*bytes != nullptr) {
            memcpy(*bytes, b->unpack_ptr, left);
            *size = left;
        }
        free(b->base_ptr);
    } else {
        free(b->base_ptr);
    }
    memset(b, 0, sizeof(*b));
}

pmix_status_t data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload) {
    if (buffer == nullptr || payload == nullptr) return PMIX_ERR_BAD_PARAM;
    data_buffer_load(buffer, payload->bytes, payload->size);
    payload->bytes = nullptr;
    payload->size = 0;
    return PMIX_SUCCESS;
}

pmix_status_t data_unload(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload) {
    if (buffer == nullptr || payload == nullptr) return PMIX_ERR_BAD_PARAM;
    data_buffer_unload(buffer, &payload->bytes, &payload->size);
    return PMIX_SUCCESS;
}

pmix_status_t data_embed(pmix_data_buffer_t *buffer, const pmix_byte_object_t *payload) {
    if (buffer == nullptr || payload == nullptr) return PMIX_ERR_BAD_PARAM;
    char *copy = nullptr;
    if (payload->size > 0) {
        copy = static_cast<char *>(malloc(payload->size));
        if (copy == nullptr) return PMIX_ERR_NOMEM;
        memcpy(copy, payload->bytes, payload->size);
    }
    data_buffer_load(buffer, copy, payload->size);
    return PMIX_SUCCESS;
}

// Appends the unread part of `src` to `dest`.
pmix_status_t data_copy_payload(pmix_data_buffer_t *dest, pmix_data_buffer_t *src) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    if (src->base_ptr == nullptr) return PMIX_SUCCESS;
    size_t off = static_cast<size_t>(src->unpack_ptr - src->base_ptr);
    size_t add = src->bytes_used > off ? src->bytes_used - off : 0;
    if (add == 0) return PMIX_SUCCESS;
    size_t doff =
        dest->base_ptr == nullptr ? 0 : static_cast<size_t>(dest->unpack_ptr - dest->base_ptr);
    auto *grown = static_cast<char *>(realloc(dest->base_ptr, dest->bytes_used + add));
    if (grown == nullptr) return PMIX_ERR_NOMEM;
    memcpy(grown + dest->bytes_used, src->unpack_ptr, add);
    dest->base_ptr = grown;
    dest->bytes_used += add;
    dest->bytes_allocated = dest->bytes_used;
    dest->pack_ptr = grown + dest->bytes_used;
    dest->unpack_ptr = grown + doff;
    return PMIX_SUCCESS;
}

}  // namespace zpmix::c
