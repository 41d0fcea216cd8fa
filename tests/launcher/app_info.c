/* app_info LABEL: a rank of a (maybe MPMD) job prints what PMIx tells it of its app, in one line:
 *   "LABEL rank R appnum A apps N app_size S app_rank K appldr L job_size J last_appnum Z"
 * (Z: PMIX_APPNUM of the job's last rank, another rank's), then fences with the whole job and
 * finalizes. A key it cannot get prints as -1; exit status 1 if PMIx_Init fails. */
#include <pmix.h>
#include <stdio.h>

static long get_number(const pmix_proc_t *proc, const char *key) {
    pmix_value_t *v = NULL;
    long n = -1;
    if (PMIx_Get(proc, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL) return -1;
    if (v->type == PMIX_UINT32)
        n = (long)v->data.uint32;
    else if (v->type == PMIX_PROC_RANK)
        n = (long)v->data.rank;
    else if (v->type == PMIX_UINT16)
        n = (long)v->data.uint16;
    PMIX_VALUE_RELEASE(v);
    return n;
}

int main(int argc, char **argv) {
    pmix_proc_t me, job, last;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    const long size = get_number(&job, PMIX_JOB_SIZE);
    PMIX_LOAD_PROCID(&last, me.nspace, size > 0 ? (pmix_rank_t)(size - 1) : 0);
    printf(
        "%s rank %u appnum %ld apps %ld app_size %ld app_rank %ld appldr %ld job_size %ld "
        "last_appnum %ld\n",
        argc > 1 ? argv[1] : "-", me.rank, get_number(&me, PMIX_APPNUM),
        get_number(&job, PMIX_JOB_NUM_APPS), get_number(&job, PMIX_APP_SIZE),
        get_number(&me, PMIX_APP_RANK), get_number(&job, PMIX_APPLDR), size,
        get_number(&last, PMIX_APPNUM));
    fflush(stdout);
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
