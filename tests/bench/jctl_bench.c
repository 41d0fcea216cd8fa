/* Job-control benchmark: `jctl_bench PID NSPACE ITERS` attaches a tool to the server of that pid
 * once (NSPACE "-": the first namespace it lists), then times ITERS job-control round trips:
 * PMIx_Job_control of NSPACE's whole job with PMIX_JOB_CTRL_PREEMPTIBLE false (a mark that changes
 * nothing: zpmix's jobctl keeps it, a host's job_control upcall answers it). Prints the median and
 * p99 in microseconds. */
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    pid_t pid = (pid_t)atoi(argv[1]);
    int iters = atoi(argv[3]);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    char nspace[PMIX_MAX_NSLEN + 1] = "";
    strncpy(nspace, argv[2], PMIX_MAX_NSLEN);
    if (strcmp(nspace, "-") == 0) {
        pmix_query_t q;
        PMIX_QUERY_CONSTRUCT(&q);
        PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
        pmix_info_t *results = NULL;
        size_t n = 0;
        rc = PMIx_Query_info(&q, 1, &results, &n);
        if (rc != PMIX_SUCCESS || n < 1 || results[0].value.type != PMIX_STRING) {
            fprintf(stderr, "no namespace listed: %s\n", PMIx_Error_string(rc));
            return 1;
        }
        strncpy(nspace, results[0].value.data.string, PMIX_MAX_NSLEN);
        char *comma = strchr(nspace, ',');
        if (comma) *comma = '\0';
        PMIX_INFO_FREE(results, n);
        PMIX_QUERY_DESTRUCT(&q);
    }
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
    pmix_info_t mark;
    bool no = false;
    PMIX_INFO_LOAD(&mark, PMIX_JOB_CTRL_PREEMPTIBLE, &no, PMIX_BOOL);
    double *rt = calloc(iters, sizeof(double));
    for (int i = 0; i < iters; ++i) {
        pmix_info_t *results = NULL;
        size_t n = 0;
        double t0 = now_us();
        rc = PMIx_Job_control(&job, 1, &mark, 1, &results, &n);
        rt[i] = now_us() - t0;
        if (results) PMIX_INFO_FREE(results, n);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "PMIx_Job_control: %s\n", PMIx_Error_string(rc));
            return 1;
        }
    }
    printf("job_control median %.0f p99 %.0f us\n", percentile(rt, iters, 0.5),
           percentile(rt, iters, 0.99));
    PMIX_INFO_DESTRUCT(&mark);
    PMIx_tool_finalize();
    return 0;
}
