/* A rank of test_root_restart.sh: fences, says "rank R fence1 STATUS", then waits (30 s at most)
 * for the file $RESTART_AWAY, fences again while the root broker is away ("rank R away STATUS"),
 * waits for $RESTART_GO, prints $RESTART_LINES lines "rank R line I", fences a third time ("rank
 * R fence2 STATUS") and exits 0 if the first and last fences succeeded. */
#define _GNU_SOURCE
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pmix_rank_t me;

/* Until `path` exists; 0 when it did within 30 s. */
static int wait_for(const char *path) {
    const struct timespec tick = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 1500; ++i) {
        if (access(path, F_OK) == 0) return 0;
        nanosleep(&tick, NULL);
    }
    return -1;
}

static pmix_status_t fence(const char *what) {
    const pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("rank %u %s %s\n", me, what, PMIx_Error_string(rc));
    fflush(stdout);
    return rc;
}

int main(void) {
    pmix_proc_t self;
    if (PMIx_Init(&self, NULL, 0) != PMIX_SUCCESS) return 10;
    me = self.rank;
    const char *away = getenv("RESTART_AWAY"), *go = getenv("RESTART_GO");
    const int lines = getenv("RESTART_LINES") ? atoi(getenv("RESTART_LINES")) : 0;
    if (!away || !go) return 11;
    if (fence("fence1") != PMIX_SUCCESS) return 12;
    if (wait_for(away) != 0) return 13;
    fence("away");
    if (wait_for(go) != 0) return 14;
    for (int i = 0; i < lines; ++i) printf("rank %u line %d\n", me, i);
    fflush(stdout);
    if (fence("fence2") != PMIX_SUCCESS) return 15;
    PMIx_Finalize(NULL, 0);
    return 0;
}
