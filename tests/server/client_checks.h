/* What the server-library tests' clients (server_client.c, rm_client.c) share: the process's
 * name, its failed checks (each said on stderr with where and what), a barrier over its job and
 * a bounded wait for a flag an event handler sets. Standard API only. */
#ifndef ZPMIX_TESTS_SERVER_CLIENT_CHECKS_H
#define ZPMIX_TESTS_SERVER_CLIENT_CHECKS_H

#include <pmix.h>

#include <stdio.h>
#include <time.h>

static pmix_proc_t me;
static int failures;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "rank %u: %s:%d: %s\n", me.rank, __FILE__, __LINE__, #cond); \
            ++failures;                                                                  \
        }                                                                                \
    } while (0)
#define CHECK_STATUS(expr, want)                                                              \
    do {                                                                                      \
        pmix_status_t rc_ = (expr);                                                           \
        if (rc_ != (want)) {                                                                  \
            fprintf(stderr, "rank %u: %s:%d: %s = %s, not %s\n", me.rank, __FILE__, __LINE__, \
                    #expr, PMIx_Error_string(rc_), PMIx_Error_string(want));                  \
            ++failures;                                                                       \
        }                                                                                     \
    } while (0)
#define CHECK_RC(expr) CHECK_STATUS(expr, PMIX_SUCCESS)

/* A fence over the whole job, no data. */
static inline void barrier(void) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Fence(&all, 1, NULL, 0));
}

/* Until *flag is set, at most ms_max milliseconds. */
static inline void wait_for(_Atomic int *flag, int ms_max) {
    for (int ms = 0; !*flag && ms < ms_max; ++ms) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

#endif
