/* The memory benchmark's rank: `hold FILE` initialises, puts a 64-byte card, takes part in one
 * collecting fence (so that the server holds every rank's data, as after an MPI_Init), then
 * rank 0 prints "ready" and every rank waits until FILE exists (at most 120 s) and finalizes.
 * tests/bench/run --memory reads the launcher's memory meanwhile. */
#include <pmix.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (argc < 2 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    char card[64];
    memset(card, 'x', sizeof card - 1);
    card[sizeof card - 1] = '\0';
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, card, PMIX_STRING);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (PMIx_Put(PMIX_GLOBAL, "hold.card", &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS ||
        PMIx_Fence(NULL, 0, &collect, 1) != PMIX_SUCCESS)
        return 1;
    PMIX_VALUE_DESTRUCT(&v);
    if (me.rank == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    for (int i = 0; i < 12000 && access(argv[1], F_OK) != 0; ++i) usleep(10000);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
