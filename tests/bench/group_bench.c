/* PMIx_Group_construct + PMIx_Group_destruct over the whole namespace, `iters` times (standard
 * API only: also built against OpenPMIx). Rank 0 prints "group_construct_destruct_median US" and
 * "group_construct_destruct_p99 US", or "group_construct_destruct unsupported STATUS" when the
 * first construct fails. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

int main(int argc, char **argv) {
    const int iters = argc > 1 ? atoi(argv[1]) : 200;
    pmix_proc_t me, all;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    double *t = calloc((size_t)iters, sizeof *t);
    int rc = 0;
    PMIx_Fence(NULL, 0, NULL, 0);
    for (int i = 0; i < iters; ++i) {
        const double t0 = now_us();
        pmix_status_t s = PMIx_Group_construct("bench", &all, 1, NULL, 0, NULL, NULL);
        if (s == PMIX_SUCCESS) s = PMIx_Group_destruct("bench", NULL, 0);
        if (s != PMIX_SUCCESS) {
            if (me.rank == 0)
                printf("group_construct_destruct unsupported %s\n", PMIx_Error_string(s));
            rc = i == 0 && s == PMIX_ERR_NOT_SUPPORTED ? 0 : 2;
            goto out;
        }
        t[i] = now_us() - t0;
    }
    if (me.rank == 0) {
        printf("group_construct_destruct_median %.2f\n", percentile(t, iters, 0.5));
        printf("group_construct_destruct_p99 %.2f\n", percentile(t, iters, 0.99));
    }
out:
    fflush(stdout);
    free(t);
    PMIx_Finalize(NULL, 0);
    return rc;
}
