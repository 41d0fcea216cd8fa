/* A rank that queries its own job (PMIx_Query_info from a client): `query_client FILE` checks
 * that the process table of its namespace lists every rank, its own with its pid, and that the
 * non-blocking form answers the same; then it prints "nspace NS rank R ready" and waits until
 * FILE exists (at most 120 s), so that tools can look at the job meanwhile. Exit 0 when every
 * check passed. */
#include <pmix.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../support/check.h"

/* The proc table's array: the one result of a one-key query, or NULL. */
static pmix_data_array_t *table_of(pmix_info_t *results, size_t n, const char *key) {
    if (n != 1 || !PMIX_CHECK_KEY(&results[0], key) || results[0].value.type != PMIX_DATA_ARRAY)
        return NULL;
    return results[0].value.data.darray;
}

static void check_table(pmix_data_array_t *t, const pmix_proc_t *me, uint32_t size,
                        const char *what) {
    CHECK(t != NULL && t->type == PMIX_PROC_INFO, "%s: no process table", what);
    if (t == NULL) return;
    CHECK(t->size == size, "%s: %zu rows for %u ranks", what, t->size, size);
    pmix_proc_info_t *rows = (pmix_proc_info_t *)t->array;
    int mine = 0;
    for (size_t i = 0; i < t->size; ++i)
        if (PMIX_CHECK_PROCID(&rows[i].proc, me)) {
            ++mine;
            CHECK(rows[i].pid == getpid(), "%s: my pid is %d, not %d", what, (int)rows[i].pid,
                  (int)getpid());
            CHECK(rows[i].state == PMIX_PROC_STATE_RUNNING, "%s: my state %d", what,
                  (int)rows[i].state);
            CHECK(rows[i].executable_name && strstr(rows[i].executable_name, "query_client"),
                  "%s: my executable is %s", what,
                  rows[i].executable_name ? rows[i].executable_name : "(none)");
        }
    CHECK(mine == 1, "%s: I am listed %d times", what, mine);
}

static volatile int nb_done = 0;
static pmix_status_t nb_status;
static size_t nb_rows;
static void nb_answer(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release, void *release_data) {
    (void)cbdata;
    nb_status = status;
    pmix_data_array_t *t = table_of(info, ninfo, PMIX_QUERY_PROC_TABLE);
    nb_rows = t ? t->size : 0;
    if (release) release(release_data);
    __atomic_store_n(&nb_done, 1, __ATOMIC_RELEASE);
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (argc < 2 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    uint32_t size = 0;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) == PMIX_SUCCESS) {
        size = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }

    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t arc;
    PMIX_ARGV_APPEND(arc, q.keys, PMIX_QUERY_PROC_TABLE);
    CHECK(arc == PMIX_SUCCESS, "argv");
    PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Query_info: %s", PMIx_Error_string(rc));
    check_table(table_of(results, nresults, PMIX_QUERY_PROC_TABLE), &me, size, "proc table");
    PMIX_INFO_FREE(results, nresults);

    rc = PMIx_Query_info_nb(&q, 1, nb_answer, NULL);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Query_info_nb: %s", PMIx_Error_string(rc));
    for (int i = 0; rc == PMIX_SUCCESS && i < 10000 && !__atomic_load_n(&nb_done, __ATOMIC_ACQUIRE);
         ++i)
        usleep(1000);
    CHECK(nb_done && nb_status == PMIX_SUCCESS && nb_rows == size, "non-blocking query: %s, %zu",
          PMIx_Error_string(nb_status), nb_rows);
    PMIX_QUERY_DESTRUCT(&q);

    /* The local table: this node's ranks only. */
    uint32_t local = 0;
    if (PMIx_Get(&wild, PMIX_LOCAL_SIZE, NULL, 0, &val) == PMIX_SUCCESS) {
        local = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(arc, q.keys, PMIX_QUERY_LOCAL_PROC_TABLE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS, "local table: %s", PMIx_Error_string(rc));
    check_table(table_of(results, nresults, PMIX_QUERY_LOCAL_PROC_TABLE), &me, local,
                "local proc table");
    PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);

    printf("nspace %s rank %u ready\n", me.nspace, me.rank);
    fflush(stdout);
    for (int i = 0; i < 12000 && access(argv[1], F_OK) != 0; ++i) usleep(10000);
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
