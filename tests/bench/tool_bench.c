/* Tool benchmark: `tool_bench PID NSPACE ITERS` times, ITERS times, what a job monitor does once:
 * PMIx_tool_init with PMIX_SERVER_PIDINFO (find the server of that pid and connect), one
 * PMIx_Query_info of NSPACE's process table (PMIX_QUERY_PROC_TABLE), PMIx_tool_finalize. Prints
 * the median and p99 of connect, query and the whole, in microseconds, and the rows seen. NSPACE
 * "-": the first namespace the server lists (PMIX_QUERY_NAMESPACES), asked once. Standard API
 * only, so the same source builds against OpenPMIx. */
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

/* The value of `key` in query results: at the top (OpenPMIx's and zpmix's shape) or in
 * PMIX_QUERY_RESULTS (the standard's). */
static pmix_value_t *find(pmix_info_t *results, size_t n, const char *key) {
    for (size_t k = 0; k < n; ++k) {
        pmix_info_t *in = &results[k];
        size_t m = 1;
        if (PMIX_CHECK_KEY(in, PMIX_QUERY_RESULTS) && in->value.type == PMIX_DATA_ARRAY) {
            m = in->value.data.darray->size;
            in = (pmix_info_t *)in->value.data.darray->array;
        }
        for (size_t j = 0; j < m; ++j)
            if (PMIX_CHECK_KEY(&in[j], key)) return &in[j].value;
    }
    return NULL;
}

static pmix_status_t first_namespace(char *nspace) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t n = 0;
    rc = PMIx_Query_info(&q, 1, &results, &n);
    pmix_value_t *v = rc == PMIX_SUCCESS ? find(results, n, PMIX_QUERY_NAMESPACES) : NULL;
    if (v && v->type == PMIX_STRING && v->data.string) {
        strncpy(nspace, v->data.string, PMIX_MAX_NSLEN);
        char *comma = strchr(nspace, ',');
        if (comma) *comma = '\0';
    } else {
        fprintf(stderr, "no namespace listed: %s\n", PMIx_Error_string(rc));
        rc = PMIX_ERR_NOT_FOUND;
    }
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    pid_t pid = (pid_t)atoi(argv[1]);
    char nspace[PMIX_MAX_NSLEN + 1] = "";
    strncpy(nspace, argv[2], PMIX_MAX_NSLEN);
    int iters = atoi(argv[3]);
    double *connect = calloc(iters, sizeof(double)), *query = calloc(iters, sizeof(double)),
           *whole = calloc(iters, sizeof(double));
    size_t rows = 0;
    for (int i = 0; i < iters; ++i) {
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
        pmix_proc_t me;
        double t0 = now_us();
        pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
        double t1 = now_us();
        PMIX_INFO_DESTRUCT(&info);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "PMIx_tool_init: %s\n", PMIx_Error_string(rc));
            return 1;
        }
        if (strcmp(nspace, "-") == 0 && first_namespace(nspace) != PMIX_SUCCESS) return 1;
        pmix_query_t q;
        PMIX_QUERY_CONSTRUCT(&q);
        PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PROC_TABLE);
        PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
        pmix_info_t *results = NULL;
        size_t n = 0;
        double t2 = now_us();
        rc = PMIx_Query_info(&q, 1, &results, &n);
        double t3 = now_us();
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "PMIx_Query_info: %s\n", PMIx_Error_string(rc));
            return 1;
        }
        pmix_value_t *table = find(results, n, PMIX_QUERY_PROC_TABLE);
        if (table && table->type == PMIX_DATA_ARRAY) rows = table->data.darray->size;
        PMIX_INFO_FREE(results, n);
        PMIX_QUERY_DESTRUCT(&q);
        PMIx_tool_finalize();
        double t4 = now_us();
        connect[i] = t1 - t0;
        query[i] = t3 - t2;
        whole[i] = t4 - t0;
    }
    printf("rows %zu\n", rows);
    printf("connect median %.0f p99 %.0f us\n", percentile(connect, iters, 0.5),
           percentile(connect, iters, 0.99));
    printf("query median %.0f p99 %.0f us\n", percentile(query, iters, 0.5),
           percentile(query, iters, 0.99));
    printf("whole median %.0f p99 %.0f us\n", percentile(whole, iters, 0.5),
           percentile(whole, iters, 0.99));
    return 0;
}
