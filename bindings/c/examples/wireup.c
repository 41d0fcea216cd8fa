/* The README's main job: every rank publishes a business card, the job exchanges them with one
 * collecting fence, and every rank checks every other rank's card. A plain PMIx program: it
 * builds against any PMIx implementation. */
#include <pmix.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CARD_KEY "wireup.card"

static int fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "wireup: %s: %s\n", what, PMIx_Error_string(rc));
    return 1;
}

int main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) return fail("PMIx_Init", rc);

    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    if ((rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS)
        return fail("PMIx_Get(PMIX_JOB_SIZE)", rc);
    uint32_t size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    char card[512];
    snprintf(card, sizeof card, "rank=%u host=%s pid=%d", me.rank, host, (int)getpid());
    pmix_value_t mine;
    PMIX_VALUE_LOAD(&mine, card, PMIX_STRING);
    if ((rc = PMIx_Put(PMIX_GLOBAL, CARD_KEY, &mine)) != PMIX_SUCCESS) return fail("PMIx_Put", rc);
    PMIX_VALUE_DESTRUCT(&mine);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) return fail("PMIx_Commit", rc);

    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) return fail("PMIx_Fence", rc);
    PMIX_INFO_DESTRUCT(&collect);

    /* Every peer's card must name that peer. */
    int bad = 0;
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        if ((rc = PMIx_Get(&peer, CARD_KEY, NULL, 0, &val)) != PMIX_SUCCESS) {
            fprintf(stderr, "wireup: rank %u: no card from rank %u: %s\n", me.rank, r,
                    PMIx_Error_string(rc));
            ++bad;
            continue;
        }
        char expect[32];
        int n = snprintf(expect, sizeof expect, "rank=%u ", r);
        if (val->type != PMIX_STRING || strncmp(val->data.string, expect, (size_t)n) != 0) {
            fprintf(stderr, "wireup: rank %u: wrong card for rank %u\n", me.rank, r);
            ++bad;
        }
        PMIX_VALUE_RELEASE(val);
    }
    printf("rank %u of %u (%s): %s, checked %u cards\n", me.rank, size, me.nspace,
           bad ? "FAILED" : "ok", size);

    rc = PMIx_Finalize(NULL, 0);
    return bad || rc != PMIX_SUCCESS ? 1 : 0;
}
