/* A rank for the I/O forwarding tests (tests/tools/test_iof.cpp, tests/multinode):
 *   iof_rank [LINES]
 * Every rank writes "out RANK before" to stdout and "err RANK before" to stderr (then LINES more
 * stdout lines "line RANK I", for the benchmark), then rank 0 echoes each line of its stdin as
 * "echo: LINE" until its stdin ends and says "bye"; then all fence and finalize. Rank 1 also
 * checks the access rules: pulling another job is refused, its own job is not. Exits 1 when a
 * check failed. */
#include <pmix_tool.h> /* the IOF functions */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ignore(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                   pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)channel, (void)source, (void)payload, (void)info, (void)ninfo;
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
        pmix_proc_t mine;
        PMIX_LOAD_PROCID(&mine, me.nspace, PMIX_RANK_WILDCARD);
        /* Across nodes a job's output is the root broker's: a rank on another node is refused. */
        pmix_value_t *nodes = NULL;
        int across = PMIx_Get(&mine, PMIX_NUM_NODES, NULL, 0, &nodes) == PMIX_SUCCESS &&
                     nodes->data.uint32 > 1;
        if (nodes) PMIX_VALUE_RELEASE(nodes);
        rc = PMIx_IOF_pull(&mine, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, ignore, NULL, NULL);
        if (across && rc == PMIX_ERR_NOT_SUPPORTED) {
        } else if (rc <= 0 ||
                   PMIx_IOF_deregister((size_t)rc, NULL, 0, NULL, NULL) != PMIX_SUCCESS) {
            fprintf(stderr, "FAILED: pulling its own job: %s\n", PMIx_Error_string(rc));
            failed = 1;
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
