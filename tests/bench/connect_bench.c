/* PMIx_Connect + PMIx_Disconnect over every rank of the job, each named (as Open MPI names the
 * processes it connects), built against zpmix and against OpenPMIx and run under each one's
 * launcher. Rank 0 prints "connect_disconnect_median <us>" and "connect_disconnect_p99 <us>". */
#include <pmix.h>

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

static void check(pmix_status_t rc, const char *what) {
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "connect_bench: %s failed: %s\n", what, PMIx_Error_string(rc));
        exit(1);
    }
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 100;
    pmix_proc_t me;
    check(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    check(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(job size)");
    uint32_t size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    pmix_proc_t *procs = malloc(sizeof(pmix_proc_t) * size);
    for (uint32_t r = 0; r < size; ++r) PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    check(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
    double *t = malloc(sizeof(double) * iters);
    for (int i = 0; i < iters; ++i) {
        double t0 = now_us();
        check(PMIx_Connect(procs, size, NULL, 0), "PMIx_Connect");
        check(PMIx_Disconnect(procs, size, NULL, 0), "PMIx_Disconnect");
        t[i] = now_us() - t0;
    }
    if (me.rank == 0) {
        printf("connect_disconnect_median %.2f\n", percentile(t, iters, 0.5));
        printf("connect_disconnect_p99 %.2f\n", percentile(t, iters, 0.99));
    }
    check(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
    free(t);
    free(procs);
    check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
