/* no_finalize: a PMIx rank that leaves without PMIx_Finalize. Rank 0 exits 0 at once after
 * PMIx_Init; the others print "waiting", then wait (at most 60 s) for a fence that rank 0 never
 * joins, as a real job's peers would. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 2;
    if (me.rank == 0) return 0;
    printf("waiting %u\n", me.rank);
    fflush(stdout);
    pmix_info_t info;
    int timeout = 60;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIx_Fence(NULL, 0, &info, 1);
    PMIx_Finalize(NULL, 0);
    return 0;
}
