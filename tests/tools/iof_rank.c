/* A rank for the I/O forwarding tests (tests/tools/test_iof.cpp, tests/multinode):
 *   iof_rank [LINES]
 * Every rank writes "out RANK before" to stdout and "err RANK before" to stderr (then LINES more
 * stdout lines "line RANK I", for the benchmark), then rank 0 echoes each line of its stdin as
 * "echo: LINE" until its stdin ends and says "bye"; then all fence and finalize. Rank 1 also
 * checks the access rules: pulling another job is refused; pulling its own job is not, and gets its
 * own "before" line (from its broker, or across nodes relayed from the root's). Exits 1 when a
 * check failed. */
#include <pmix_tool.h> /* the IOF functions */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void ignore(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                   pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)channel, (void)source, (void)payload, (void)info, (void)ninfo;
}

/* Rank 1's pull of its own job: whether its own "before" line came back. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int own_line_seen = 0;

static void own(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)channel, (void)info, (void)ninfo;
    pthread_mutex_lock(&mu);
    if (source->rank == 1 && payload->size >= 13 && memcmp(payload->bytes, "out 1 before", 12) == 0)
        own_line_seen = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 2;
    int failed = 0;
    if (me.rank == 0) printf("nspace %s\n", me.nspace);
    printf("out %u before\n", me.rank);
    fflush(stdout);
    fprintf(stderr, "err %u before\n", me.rank);
    long lines = argc > 1 ? atol(argv[1]) : 0;
    for (long i = 0; i < lines; ++i) printf("line %u %ld\n", me.rank, i);
    fflush(stdout);
    if (me.rank == 1) {
        pmix_proc_t other;
        PMIX_LOAD_PROCID(&other, "not-my-job", PMIX_RANK_WILDCARD);
        pmix_status_t rc =
            PMIx_IOF_pull(&other, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, ignore, NULL, NULL);
        if (rc != PMIX_ERR_NO_PERMISSIONS) {
            fprintf(stderr, "FAILED: pulling another job: %s\n", PMIx_Error_string(rc));
            failed = 1;
        }
        /* Its own job: on one node from its broker, across nodes relayed from the root's (which
         * holds every job's output); either way its "before" line comes from the cache. */
        pmix_proc_t mine;
        PMIX_LOAD_PROCID(&mine, me.nspace, PMIX_RANK_WILDCARD);
        rc = PMIx_IOF_pull(&mine, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, own, NULL, NULL);
        if (rc <= 0) {
            fprintf(stderr, "FAILED: pulling its own job: %s\n", PMIx_Error_string(rc));
            failed = 1;
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 20;
            pthread_mutex_lock(&mu);
            while (!own_line_seen && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
            }
            pthread_mutex_unlock(&mu);
            if (!own_line_seen) {
                fprintf(stderr, "FAILED: its own line did not come back through the pull\n");
                failed = 1;
            }
            if (PMIx_IOF_deregister((size_t)rc, NULL, 0, NULL, NULL) != PMIX_SUCCESS) {
                fprintf(stderr, "FAILED: deregistering its pull\n");
                failed = 1;
            }
        }
    }
    if (me.rank == 0) {
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            printf("echo: %s", line);
            fflush(stdout);
        }
        printf("bye\n");
        fflush(stdout);
    }
    if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) failed = 1;
    PMIx_Finalize(NULL, 0);
    return failed;
}
