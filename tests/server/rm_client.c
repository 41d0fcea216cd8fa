/* A client of the server-library tests for what a resource manager serves (RFC0015, RFC0010):
 * standard API only. NO_HOST=1: the host left these upcalls NULL (what the library answers then).
 *   server_rm_client jobctl   every rank listens for PMIX_JCTRL_CHECKPOINT and
 *                             PMIX_JCTRL_PREEMPT_ALERT; rank 0 sends each job-control directive
 *                             for the job (one through PMIx_Job_control_nb); each reaches the
 *                             host (a KILL it refuses), whose result comes back with its status;
 *                             the host's checkpoint and preemption events reach every rank.
 *                             NO_HOST: each is PMIX_ERR_NOT_SUPPORTED at once, no event.
 *   server_rm_client query    rank 0 asks the namespaces (zpmix's answer), the allocation's
 *                             status and the job's process table (the host's: its own pid in its
 *                             row). NO_HOST: the namespaces only, PMIX_QUERY_PARTIAL_SUCCESS.
 *   server_rm_client log      rank 0 logs to stderr (zpmix's channel) and email (the host's).
 *                             NO_HOST: PMIX_ERR_NOT_SUPPORTED (nobody has email).
 *   server_rm_client monitor  rank 0 asks a heartbeat monitor (the host's, or zpmix's own)
 *   server_rm_client alert    rank 0 asks a heartbeat monitor of 1 s and never beats: zpmix's
 *                             own monitor trips and rank 0 hears its alert
 *   server_rm_client alloc    rank 0 asks 2 more nodes (PMIX_ALLOC_NEW): granted by the host
 *                             (PMIX_ALLOC_ID). NO_HOST: PMIX_ERR_NOT_SUPPORTED.
 *   server_rm_client ptable   rank 0 asks the job's process table: a row per rank, its own pid
 *                             in its row (the host's answer)
 *   server_rm_client tool HOW rank 0 runs server_rm_tool (next to it), which attaches to the
 *                             host's server by HOW (pid: the host's, its parent; nspace: this
 *                             job's; uri: this client's server; system: the node's system
 *                             server, PMIX_CONNECT_TO_SYSTEM; several, comma-separated, one
 *                             tool each in turn), with none of this client's environment;
 *                             `tool HOW iof`: the tool pulls the job's output, pushes input;
 *                             `tool HOW spawn`: the tool spawns a rank of `init`
 *   server_rm_client init     PMIx_Init and PMIx_Finalize only
 * Prints "rank R ok" when its scenario held; what went wrong on stderr. */
#include <pmix.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client_checks.h"

static bool no_host;

static _Atomic int heard_checkpoint, heard_preempt, heard_alert;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id;
    (void)source;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    if (status == PMIX_JCTRL_CHECKPOINT) heard_checkpoint = 1;
    if (status == PMIX_JCTRL_PREEMPT_ALERT) heard_preempt = 1;
    if (status == PMIX_MONITOR_HEARTBEAT_ALERT) heard_alert = 1;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* How many of `results` are the test host's job_control result ("host.jctrl.done" = "yes"). */
static int host_results_in(const pmix_info_t *results, size_t n) {
    int found = 0;
    for (size_t i = 0; i < n; ++i)
        found += PMIX_CHECK_KEY(&results[i], "host.jctrl.done") &&
                 results[i].value.type == PMIX_STRING &&
                 strcmp(results[i].value.data.string, "yes") == 0;
    return found;
}

/* One directive for the whole job; the host's result comes back with its status (also when it
 * refuses), none without the upcall. */
static pmix_status_t control(const char *key, const void *value, pmix_data_type_t type) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t dir;
    PMIX_INFO_LOAD(&dir, key, value, type);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Job_control(&all, 1, &dir, 1, &results, &nresults);
    PMIX_INFO_DESTRUCT(&dir);
    CHECK(host_results_in(results, nresults) == (no_host ? 0 : 1));
    if (results) PMIX_INFO_FREE(results, nresults);
    return rc;
}

struct nb_answer {
    _Atomic int done;
    pmix_status_t status;
    int host_results;
};

static void on_job_control(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                           pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    struct nb_answer *a = cbdata;
    a->status = status;
    a->host_results = host_results_in(info, ninfo);
    if (release_fn) release_fn(release_cbdata);
    a->done = 1;
}

/* The same through PMIx_Job_control_nb: the host's result reaches the callback. */
static pmix_status_t control_nb(const char *key, const void *value, pmix_data_type_t type) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t dir;
    PMIX_INFO_LOAD(&dir, key, value, type);
    struct nb_answer a = {0, PMIX_ERR_TIMEOUT, 0};
    pmix_status_t rc = PMIx_Job_control_nb(&all, 1, &dir, 1, on_job_control, &a);
    if (rc == PMIX_SUCCESS) {
        wait_for(&a.done, 10000);
        CHECK(a.done);
        CHECK(a.host_results == (no_host ? 0 : 1));
        rc = a.status;
    }
    PMIX_INFO_DESTRUCT(&dir);
    return rc;
}

static void job_control(void) {
    pmix_status_t codes[] = {PMIX_JCTRL_CHECKPOINT, PMIX_JCTRL_PREEMPT_ALERT};
    CHECK(PMIx_Register_event_handler(codes, 2, NULL, 0, on_event, NULL, NULL) >= 0);
    barrier(); /* every handler is registered */
    if (me.rank == 0) {
        const pmix_status_t ok = no_host ? PMIX_ERR_NOT_SUPPORTED : PMIX_SUCCESS;
        bool yes = true;
        int sig = SIGUSR1;
        CHECK_STATUS(control(PMIX_JOB_CTRL_PAUSE, &yes, PMIX_BOOL), ok);
        CHECK_STATUS(control_nb(PMIX_JOB_CTRL_RESUME, &yes, PMIX_BOOL), ok);
        CHECK_STATUS(control(PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT), ok);
        CHECK_STATUS(control(PMIX_JOB_CTRL_TERMINATE, &yes, PMIX_BOOL), ok);
        CHECK_STATUS(control(PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL),
                     no_host ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NO_PERMISSIONS);
        CHECK_STATUS(control(PMIX_JOB_CTRL_CHECKPOINT, "ckpt-1", PMIX_STRING), ok);
        CHECK_STATUS(control(PMIX_JOB_CTRL_CANCEL, "ckpt-1", PMIX_STRING), ok);
        CHECK_STATUS(control(PMIX_JOB_CTRL_RESTART, "ckpt-1", PMIX_STRING), ok);
        CHECK_STATUS(control(PMIX_JOB_CTRL_PROVISION, "node7", PMIX_STRING), ok);
        CHECK_STATUS(control(PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL), ok);
        pmix_data_array_t *methods;
        PMIX_DATA_ARRAY_CREATE(methods, 1, PMIX_INFO);
        PMIX_INFO_LOAD(&((pmix_info_t *)methods->array)[0], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig,
                       PMIX_INT);
        CHECK_STATUS(control(PMIX_JOB_CTRL_CHECKPOINT_METHOD, methods, PMIX_DATA_ARRAY), ok);
        PMIX_DATA_ARRAY_FREE(methods);
    }
    if (!no_host) {
        wait_for(&heard_checkpoint, 10000);
        wait_for(&heard_preempt, 10000);
        CHECK(heard_checkpoint && heard_preempt);
    }
    barrier();
    if (no_host) CHECK(!heard_checkpoint && !heard_preempt);
}

static const pmix_info_t *result_of(const pmix_info_t *results, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&results[i], key)) return &results[i];
    return NULL;
}

static void query(void) {
    if (me.rank != 0) return;
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_ALLOC_STATUS, PMIX_QUERY_PROC_TABLE, NULL};
    q.keys = keys;
    pmix_info_t qual;
    PMIX_INFO_LOAD(&qual, PMIX_NSPACE, me.nspace, PMIX_STRING);
    q.qualifiers = &qual;
    q.nqual = 1;
    pmix_info_t *results = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &results, &n);
    CHECK_STATUS(rc, no_host ? PMIX_QUERY_PARTIAL_SUCCESS : PMIX_SUCCESS);
    const pmix_info_t *ns = result_of(results, n, PMIX_QUERY_NAMESPACES);
    CHECK(ns && ns->value.type == PMIX_STRING && strstr(ns->value.data.string, me.nspace));
    const pmix_info_t *alloc = result_of(results, n, PMIX_QUERY_ALLOC_STATUS);
    const pmix_info_t *table = result_of(results, n, PMIX_QUERY_PROC_TABLE);
    if (no_host) {
        CHECK(alloc && alloc->value.type == PMIX_STATUS);
    } else {
        CHECK(alloc && alloc->value.type == PMIX_STRING &&
              strcmp(alloc->value.data.string, "host-alloc-ok") == 0);
        CHECK(table && table->value.type == PMIX_DATA_ARRAY &&
              table->value.data.darray->type == PMIX_PROC_INFO &&
              table->value.data.darray->size >= 1);
        if (table && table->value.type == PMIX_DATA_ARRAY) {
            const pmix_proc_info_t *rows = table->value.data.darray->array;
            CHECK(rows[0].pid == getpid());
        }
    }
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_INFO_DESTRUCT(&qual);
    q.keys = NULL;
    q.qualifiers = NULL;
}

static void proc_table(void) {
    if (me.rank != 0) return;
    pmix_value_t *size = NULL;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    CHECK_STATUS(PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &size), PMIX_SUCCESS);
    const size_t nranks = size ? size->data.uint32 : 0;
    if (size) PMIX_VALUE_RELEASE(size);
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {PMIX_QUERY_PROC_TABLE, NULL};
    q.keys = keys;
    pmix_info_t qual;
    PMIX_INFO_LOAD(&qual, PMIX_NSPACE, me.nspace, PMIX_STRING);
    q.qualifiers = &qual;
    q.nqual = 1;
    pmix_info_t *results = NULL;
    size_t n = 0;
    CHECK_STATUS(PMIx_Query_info(&q, 1, &results, &n), PMIX_SUCCESS);
    const pmix_info_t *table = result_of(results, n, PMIX_QUERY_PROC_TABLE);
    CHECK(table && table->value.type == PMIX_DATA_ARRAY &&
          table->value.data.darray->type == PMIX_PROC_INFO &&
          table->value.data.darray->size == nranks);
    if (table && table->value.type == PMIX_DATA_ARRAY &&
        table->value.data.darray->type == PMIX_PROC_INFO) {
        const pmix_proc_info_t *rows = table->value.data.darray->array;
        int mine = 0;
        for (size_t i = 0; i < table->value.data.darray->size; ++i)
            if (rows[i].proc.rank == me.rank && PMIX_CHECK_NSPACE(rows[i].proc.nspace, me.nspace))
                mine += rows[i].pid == getpid();
        CHECK(mine == 1);
        printf("rank %u proc table rows %zu\n", me.rank, table->value.data.darray->size);
    }
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_INFO_DESTRUCT(&qual);
}

static void log_both(void) {
    if (me.rank != 0) return;
    pmix_info_t data[2];
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDERR, "a line for zpmix's stderr\n", PMIX_STRING);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_EMAIL, "a mail for the host", PMIX_STRING);
    CHECK_STATUS(PMIx_Log(data, 2, NULL, 0), no_host ? PMIX_ERR_NOT_SUPPORTED : PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&data[0]);
    PMIX_INFO_DESTRUCT(&data[1]);
}

/* A heartbeat monitor of `seconds`, one drop. */
static pmix_status_t heartbeat_monitor(uint32_t seconds) {
    pmix_info_t mon, dirs[2];
    bool yes = true;
    uint32_t drops = 1;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_HEARTBEAT_TIME, &seconds, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[1], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    pmix_info_t *results = NULL;
    size_t n = 0;
    pmix_status_t rc =
        PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 2, &results, &n);
    if (results) PMIX_INFO_FREE(results, n);
    return rc;
}

static void monitor(void) {
    if (me.rank != 0) return;
    CHECK_STATUS(heartbeat_monitor(30), PMIX_SUCCESS);
    PMIx_Heartbeat();
}

static void alert(void) {
    if (me.rank != 0) return;
    pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT;
    CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL) >= 0);
    CHECK_STATUS(heartbeat_monitor(1), PMIX_SUCCESS);
    wait_for(&heard_alert, 10000);
    CHECK(heard_alert);
}

static void allocation(void) {
    if (me.rank != 0) return;
    pmix_info_t req;
    uint64_t nodes = 2;
    PMIX_INFO_LOAD(&req, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    pmix_info_t *results = NULL;
    size_t n = 0;
    CHECK_STATUS(PMIx_Allocation_request(PMIX_ALLOC_NEW, &req, 1, &results, &n),
                 no_host ? PMIX_ERR_NOT_SUPPORTED : PMIX_SUCCESS);
    if (!no_host)
        CHECK(n == 1 && PMIX_CHECK_KEY(&results[0], PMIX_ALLOC_ID) &&
              results[0].value.type == PMIX_STRING &&
              strcmp(results[0].value.data.string, "host-alloc-7") == 0);
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_INFO_DESTRUCT(&req);
}

extern char **environ;

/* The tool runs with none of this client's PMIx environment: it finds the server as told. */
static void run_tool(const char *self, const char *how, const char *what) {
    char tool[4096], arg[512] = "";
    snprintf(tool, sizeof tool, "%s", self);
    char *slash = strrchr(tool, '/');
    snprintf(slash ? slash + 1 : tool, sizeof tool - (size_t)(slash ? slash + 1 - tool : 0),
             "server_rm_tool");
    if (strcmp(how, "pid") == 0) {
        snprintf(arg, sizeof arg, "%d", (int)getppid());
    } else if (strcmp(how, "nspace") == 0) {
        snprintf(arg, sizeof arg, "%s", me.nspace);
    } else if (strcmp(how, "system") == 0) {
        snprintf(arg, sizeof arg, "-");
    } else {
        const char *uri = getenv("ZPMIX_URI"); /* as PMIx_server_setup_fork gave it */
        CHECK(uri != NULL);
        snprintf(arg, sizeof arg, "%s", uri ? uri : "");
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = environ; *e;) {
            if (strncmp(*e, "PMIX_", 5) == 0 || strncmp(*e, "ZPMIX_", 6) == 0) {
                char name[256];
                size_t n = strcspn(*e, "=");
                snprintf(name, sizeof name, "%.*s", (int)n, *e);
                unsetenv(name);
            } else {
                ++e;
            }
        }
        setenv("TOOL_JOB", me.nspace, 1);
        execl(tool, tool, how, arg, what, (char *)NULL);
        perror("execl");
        _exit(127);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "jobctl";
    no_host = getenv("NO_HOST") != NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (strcmp(mode, "jobctl") == 0)
        job_control();
    else if (strcmp(mode, "query") == 0)
        query();
    else if (strcmp(mode, "log") == 0)
        log_both();
    else if (strcmp(mode, "monitor") == 0)
        monitor();
    else if (strcmp(mode, "alert") == 0)
        alert();
    else if (strcmp(mode, "alloc") == 0)
        allocation();
    else if (strcmp(mode, "ptable") == 0)
        proc_table();
    else if (strcmp(mode, "init") == 0)
        ; /* PMIx_Init and PMIx_Finalize only: a job a tool spawned */
    else if (strcmp(mode, "tool") == 0 && argc > 2 && me.rank == 0) {
        char hows[64];
        snprintf(hows, sizeof hows, "%s", argv[2]);
        for (char *save = NULL, *how = strtok_r(hows, ",", &save); how;
             how = strtok_r(NULL, ",", &save))
            run_tool(argv[0], how, argc > 3 ? argv[3] : NULL);
    } else if (strcmp(mode, "tool") != 0 || argc <= 2) {
        fprintf(stderr, "server_rm_client: unknown mode %s\n", mode);
        return 2;
    }
    CHECK_STATUS(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    if (failures == 0) printf("rank %u ok\n", me.rank);
    return failures == 0 ? 0 : 1;
}
