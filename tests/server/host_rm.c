/* The test host's job control, monitoring, queries and logging, as a resource manager provides
 * them (RFC0015, RFC0010). Each upcall says what it got on stdout ("nodeK: upcall <name> ...")
 * for the tests, and answers from inside the upcall:
 *   job_control  one line per directive; a checkpoint request raises PMIX_JCTRL_CHECKPOINT and a
 *                preemptible mark PMIX_JCTRL_PREEMPT_ALERT to the targets, as a host that acts
 *                on them would; a PMIX_JOB_CTRL_KILL is refused (PMIX_ERR_NO_PERMISSIONS)
 *   monitor      accepts heartbeat and file monitors
 *   query        PMIX_QUERY_ALLOC_STATUS ("host-alloc-ok") and the job's process tables, whole
 *                and this node's (its ranks' pids as this host started them)
 *   log          every entry, accepted
 *   allocate     grants each request as allocation "host-alloc-7" (PMIX_ALLOC_ID)
 *   iof_pull     hands the library a line of rank 1's output (PMIx_server_IOF_deliver); with
 *                --forward-io nothing: the ranks' own output is delivered as it comes
 *   push_stdin   says what came, accepted; with --forward-io writes it to rank 0's stdin
 *   tool_connected  names each tool "host-tool-N" (N from 1), or refuses it with
 *                PMIX_ERR_NO_PERMISSIONS when HOST_REFUSE_TOOLS is set */
#include "host_rm.h"

#include <pmix.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *requester_name(const pmix_proc_t *p, char *buf, size_t n) {
    if (!p || p->nspace[0] == '\0')
        snprintf(buf, n, "(none)");
    else
        snprintf(buf, n, "%s.%u", p->nspace, p->rank);
    return buf;
}

/* An event to the targets (a wildcard rank: the whole job), as the host raises it. */
static void raise_to(pmix_status_t code, const pmix_proc_t targets[], size_t ntargets) {
    pmix_info_t info[2];
    pmix_data_array_t darray = {.type = PMIX_PROC, .size = ntargets, .array = (void *)targets};
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_CUSTOM_RANGE, &darray, PMIX_DATA_ARRAY);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_AFFECTED_PROCS, &darray, PMIX_DATA_ARRAY);
    pmix_proc_t source;
    PMIX_LOAD_PROCID(&source, "host-rm", 0);
    pmix_status_t rc = PMIx_Notify_event(code, &source, PMIX_RANGE_CUSTOM, info, 2, NULL, NULL);
    say("raised %s: %s\n", PMIx_Error_string(code), PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

static pmix_status_t job_control_fn(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                    size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata) {
    char who[PMIX_MAX_NSLEN + 16];
    requester_name(requestor, who, sizeof who);
    pmix_status_t status = PMIX_SUCCESS;
    bool checkpoint = false, preempt = false;
    for (size_t i = 0; i < ndirs; ++i) {
        const pmix_info_t *d = &directives[i];
        char value[128] = "";
        if (d->value.type == PMIX_STRING)
            snprintf(value, sizeof value, "%s", d->value.data.string);
        else if (d->value.type == PMIX_BOOL)
            snprintf(value, sizeof value, "%s", d->value.data.flag ? "true" : "false");
        else if (d->value.type == PMIX_INT)
            snprintf(value, sizeof value, "%d", d->value.data.integer);
        else if (d->value.type == PMIX_DATA_ARRAY && d->value.data.darray &&
                 d->value.data.darray->type == PMIX_INFO && d->value.data.darray->size > 0)
            snprintf(value, sizeof value, "[%.100s]",
                     ((pmix_info_t *)d->value.data.darray->array)[0].key);
        say("upcall job_control from %s targets %zu %s=%s\n", who, ntargets, d->key, value);
        if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_KILL)) status = PMIX_ERR_NO_PERMISSIONS;
        if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_CHECKPOINT)) checkpoint = true;
        if (PMIX_CHECK_KEY(d, PMIX_JOB_CTRL_PREEMPTIBLE) && PMIX_INFO_TRUE(d)) preempt = true;
    }
    if (checkpoint) raise_to(PMIX_JCTRL_CHECKPOINT, targets, ntargets);
    if (preempt) raise_to(PMIX_JCTRL_PREEMPT_ALERT, targets, ntargets);
    /* From inside the upcall, with a result. */
    pmix_info_t result;
    PMIX_INFO_LOAD(&result, "host.jctrl.done", "yes", PMIX_STRING);
    cbfunc(status, &result, 1, cbdata, NULL, NULL);
    PMIX_INFO_DESTRUCT(&result);
    return PMIX_SUCCESS;
}

static pmix_status_t monitor_fn(const pmix_proc_t *requestor, const pmix_info_t *monitor,
                                pmix_status_t error, const pmix_info_t directives[], size_t ndirs,
                                pmix_info_cbfunc_t cbfunc, void *cbdata) {
    char who[PMIX_MAX_NSLEN + 16];
    uint32_t time = 0, drops = 0;
    for (size_t i = 0; i < ndirs; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_MONITOR_HEARTBEAT_TIME) ||
            PMIX_CHECK_KEY(&directives[i], PMIX_MONITOR_FILE_CHECK_TIME))
            time = directives[i].value.data.uint32;
        if (PMIX_CHECK_KEY(&directives[i], PMIX_MONITOR_HEARTBEAT_DROPS) ||
            PMIX_CHECK_KEY(&directives[i], PMIX_MONITOR_FILE_DROPS))
            drops = directives[i].value.data.uint32;
    }
    say("upcall monitor from %s %s code %d time %u drops %u\n",
        requester_name(requestor, who, sizeof who), monitor->key, error, time, drops);
    cbfunc(PMIX_SUCCESS, NULL, 0, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

static pmix_status_t query_fn(pmix_proc_t *requestor, pmix_query_t *queries, size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    char who[PMIX_MAX_NSLEN + 16];
    requester_name(requestor, who, sizeof who);
    pmix_info_t *results;
    size_t n = 0, cap = 8;
    PMIX_INFO_CREATE(results, cap);
    for (size_t q = 0; q < nqueries; ++q) {
        const char *nspace = NULL;
        for (size_t k = 0; k < queries[q].nqual; ++k)
            if (PMIX_CHECK_KEY(&queries[q].qualifiers[k], PMIX_NSPACE))
                nspace = queries[q].qualifiers[k].value.data.string;
        for (char **key = queries[q].keys; key && *key && n < cap; ++key) {
            say("upcall query from %s %s nspace %s\n", who, *key, nspace ? nspace : "(none)");
            if (strcmp(*key, PMIX_QUERY_ALLOC_STATUS) == 0) {
                PMIX_INFO_LOAD(&results[n++], PMIX_QUERY_ALLOC_STATUS, "host-alloc-ok",
                               PMIX_STRING);
            } else if (strcmp(*key, PMIX_QUERY_PROC_TABLE) == 0 ||
                       strcmp(*key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0) {
                /* Every rank of the job (the local table: of this node): where it runs and what;
                 * the pids of this node's (a rank not started yet, or on the other node, has
                 * none here). */
                bool local = strcmp(*key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0;
                int nrows = 0;
                for (int r = 0; r < host_job_size(); ++r) nrows += !local || host_runs_here(r);
                pmix_data_array_t darray;
                PMIX_DATA_ARRAY_CONSTRUCT(&darray, (size_t)nrows, PMIX_PROC_INFO);
                pmix_proc_info_t *rows = darray.array;
                for (int r = 0, i = 0; r < host_job_size(); ++r) {
                    if (local && !host_runs_here(r)) continue;
                    PMIX_LOAD_PROCID(&rows[i].proc, nspace ? nspace : "host-job", (pmix_rank_t)r);
                    rows[i].hostname = strdup(host_node_of(r));
                    rows[i].executable_name = strdup(host_program());
                    rows[i].pid = host_pid_of(r);
                    rows[i].state =
                        rows[i].pid > 0 ? PMIX_PROC_STATE_RUNNING : PMIX_PROC_STATE_UNDEF;
                    ++i;
                }
                PMIX_INFO_LOAD(&results[n++], *key, &darray, PMIX_DATA_ARRAY);
                PMIX_DATA_ARRAY_DESTRUCT(&darray);
            }
        }
    }
    cbfunc(n ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, results, n, cbdata, NULL, NULL);
    PMIX_INFO_FREE(results, cap);
    return PMIX_SUCCESS;
}

static void log_fn(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                   const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                   void *cbdata) {
    (void)directives;
    for (size_t i = 0; i < ndata; ++i)
        say("upcall log from %u %s=%s dirs %zu\n", client->rank, data[i].key,
            data[i].value.type == PMIX_STRING ? data[i].value.data.string : "?", ndirs);
    if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
}

/* A pull of the job's output: the host hands the library a line of rank 1's (from inside the
 * upcall, as a host relaying what its daemons read). */
static pmix_status_t iof_pull_fn(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata) {
    (void)directives;
    say("upcall iof_pull nprocs %zu rank %d channels %d dirs %zu\n", nprocs,
        nprocs ? (int)procs[0].rank : -1, (int)channels, ndirs);
    (void)cbfunc;
    (void)cbdata;
    if (host_forwards_io()) return PMIX_OPERATION_SUCCEEDED; /* the ranks' own output comes */
    pmix_proc_t source;
    PMIX_LOAD_PROCID(&source, nprocs ? procs[0].nspace : "host-job", 1);
    char line[] = "output of rank 1 through the host\n";
    pmix_byte_object_t bo = {line, sizeof line - 1};
    pmix_status_t rc =
        PMIx_server_IOF_deliver(&source, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0, NULL, NULL);
    say("delivered: %s\n", PMIx_Error_string(rc));
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t push_stdin_fn(const pmix_proc_t *source, const pmix_proc_t targets[],
                                   size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                   const pmix_byte_object_t *bo, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata) {
    say("upcall push_stdin from %s targets %zu rank %d bytes %zu dirs %zu\n",
        source->nspace[0] ? source->nspace : "(tool)", ntargets,
        ntargets ? (int)targets[0].rank : -1, bo ? bo->size : 0, ndirs);
    bool complete = false;
    for (size_t i = 0; i < ndirs; ++i)
        if (PMIX_CHECK_KEY(&directives[i], PMIX_IOF_COMPLETE))
            complete = PMIX_INFO_TRUE(&directives[i]);
    host_push_stdin(targets, ntargets, bo, complete);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

/* An allocation request: granted, as allocation "host-alloc-7". */
static pmix_status_t allocate_fn(const pmix_proc_t *client, pmix_alloc_directive_t directive,
                                 const pmix_info_t data[], size_t ndata, pmix_info_cbfunc_t cbfunc,
                                 void *cbdata) {
    char who[PMIX_MAX_NSLEN + 16];
    say("upcall allocate from %s directive %d ndata %zu first %s\n",
        requester_name(client, who, sizeof who), (int)directive, ndata,
        ndata ? data[0].key : "(none)");
    pmix_info_t result;
    PMIX_INFO_LOAD(&result, PMIX_ALLOC_ID, "host-alloc-7", PMIX_STRING);
    cbfunc(PMIX_SUCCESS, &result, 1, cbdata, NULL, NULL);
    PMIX_INFO_DESTRUCT(&result);
    return PMIX_SUCCESS;
}

static int tools;

static void tool_connected_fn(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                              void *cbdata) {
    const char *named = "(none)";
    int pid = 0;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && info[i].value.type == PMIX_STRING)
            named = info[i].value.data.string;
        if (PMIX_CHECK_KEY(&info[i], PMIX_PROC_PID) && info[i].value.type == PMIX_PID)
            pid = (int)info[i].value.data.pid;
    }
    const bool refuse = getenv("HOST_REFUSE_TOOLS") != NULL;
    say("upcall tool_connected %s pid-known %d%s\n",
        strncmp(named, "tool.", 5) == 0 ? "tool.*" : named, pid > 0, refuse ? " refused" : "");
    if (refuse) {
        cbfunc(PMIX_ERR_NO_PERMISSIONS, NULL, cbdata);
        return;
    }
    pmix_proc_t name;
    char nspace[32];
    snprintf(nspace, sizeof nspace, "host-tool-%d", ++tools);
    PMIX_LOAD_PROCID(&name, nspace, 0);
    cbfunc(PMIX_SUCCESS, &name, cbdata);
}

void rm_upcalls(pmix_server_module_t *module) {
    module->tool_connected = tool_connected_fn;
    module->iof_pull = iof_pull_fn;
    module->allocate = allocate_fn;
    module->push_stdin = push_stdin_fn;
    module->job_control = job_control_fn;
    module->monitor = monitor_fn;
    module->query = query_fn;
    module->log = log_fn;
}
