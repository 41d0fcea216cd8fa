/* A tool of the server-library tests (tests/server): attaches to a host's server as to
 * `zpmix broker`, standard API only.
 *   server_rm_tool pid PID | nspace NSPACE | uri URI | system - [iof|query|spawn|daemons]
 *                                      how it finds the server (system: PMIX_CONNECT_TO_SYSTEM)
 * It says the name it got ("tool named NSPACE.RANK"), queries the job's process table (the job:
 * $TOOL_JOB, else host-job; "tool proc table STATUS rows N with pids P"), pauses the job through
 * job control ("tool pause: STATUS host results N", N the host's results that came back; not with
 * query), and finalizes. A refused attachment: "tool refused: STATUS", exit 0. With iof instead: it
 * pulls the job's stdout, tagged ("tool got: DATA" for what the host delivers), and pushes a line
 * to rank 0's stdin ("tool push: STATUS"); NO_HOST set: no output is waited for. With spawn
 * instead: it spawns one rank of `server_rm_client init` ("tool spawn: STATUS nspace NSPACE"); with
 * daemons, the same as debugger daemons of the job (one per node). */
#include <pmix_tool.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Atomic int got;
static const char *job = "host-job"; /* TOOL_JOB: the job it looks at */

static void on_output(size_t id, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)id;
    (void)channel;
    (void)info;
    (void)ninfo;
    printf("tool got from %u: %.*s", source->rank, (int)payload->size, payload->bytes);
    fflush(stdout);
    got = 1;
}

/* Pulls host-job's stdout (tagged) until the host delivered some, pushes a line to rank 0. */
static int iof(void) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, job, PMIX_RANK_WILDCARD);
    pmix_info_t tag;
    bool yes = true;
    PMIX_INFO_LOAD(&tag, PMIX_IOF_TAG_OUTPUT, &yes, PMIX_BOOL);
    pmix_status_t rc =
        PMIx_IOF_pull(&all, 1, &tag, 1, PMIX_FWD_STDOUT_CHANNEL, on_output, NULL, NULL);
    printf("tool pull: %s\n", PMIx_Error_string(rc < 0 ? rc : PMIX_SUCCESS));
    const int no_host = getenv("NO_HOST") != NULL; /* no iof_pull: nothing will come */
    for (int ms = 0; !no_host && !got && ms < 10000; ++ms) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    pmix_proc_t rank0;
    PMIX_LOAD_PROCID(&rank0, job, 0);
    char line[] = "input for rank 0\n";
    pmix_byte_object_t bo = {line, sizeof line - 1};
    rc = PMIx_IOF_push(&rank0, 1, &bo, NULL, 0, NULL, NULL);
    printf("tool push: %s\n", PMIx_Error_string(rc));
    fflush(stdout);
    PMIX_INFO_DESTRUCT(&tag);
    return got || no_host ? 0 : 1;
}

/* PMIx_Spawn of one rank of server_rm_client (next to this program) in its mode "init". */
static int spawn(const char *self, bool daemons) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s", self);
    char *slash = strrchr(cmd, '/');
    snprintf(slash ? slash + 1 : cmd, sizeof cmd - (size_t)(slash ? slash + 1 - cmd : 0),
             "server_rm_client");
    char mode[] = "init";
    char *args[] = {cmd, mode, NULL};
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = cmd;
    app.argv = args;
    app.maxprocs = 1;
    pmix_nspace_t child = "";
    /* As a debugger co-launches its daemons: one per node of the job it debugs. */
    pmix_info_t info[3];
    bool yes = true;
    uint16_t per_node = 1;
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, job, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info[0], PMIX_DEBUGGER_DAEMONS, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_DEBUG_TARGET, &target, PMIX_PROC);
    PMIX_INFO_LOAD(&info[2], PMIX_DEBUG_DAEMONS_PER_NODE, &per_node, PMIX_UINT16);
    pmix_status_t rc = PMIx_Spawn(daemons ? info : NULL, daemons ? 3 : 0, &app, 1, child);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    printf("tool spawn: %s nspace %s\n", PMIx_Error_string(rc), child);
    fflush(stdout);
    return rc == PMIX_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: server_rm_tool pid PID | nspace NSPACE | uri URI\n");
        return 2;
    }
    pmix_info_t attach;
    pid_t pid = (pid_t)atoi(argv[2]);
    bool yes_system = true;
    if (strcmp(argv[1], "pid") == 0)
        PMIX_INFO_LOAD(&attach, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    else if (strcmp(argv[1], "nspace") == 0)
        PMIX_INFO_LOAD(&attach, PMIX_SERVER_NSPACE, argv[2], PMIX_STRING);
    else if (strcmp(argv[1], "system") == 0)
        PMIX_INFO_LOAD(&attach, PMIX_CONNECT_TO_SYSTEM, &yes_system, PMIX_BOOL);
    else
        PMIX_INFO_LOAD(&attach, PMIX_SERVER_URI, argv[2], PMIX_STRING);
    if (getenv("TOOL_JOB")) job = getenv("TOOL_JOB");
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, &attach, 1);
    PMIX_INFO_DESTRUCT(&attach);
    if (rc != PMIX_SUCCESS) {
        printf("tool refused: %s\n", PMIx_Error_string(rc));
        return 0;
    }
    printf("tool named %s.%u\n", me.nspace, me.rank);
    if (argc > 3 && strcmp(argv[3], "iof") == 0) {
        int bad = iof();
        return PMIx_tool_finalize() == PMIX_SUCCESS ? bad : 1;
    }
    if (argc > 3 && (strcmp(argv[3], "spawn") == 0 || strcmp(argv[3], "daemons") == 0)) {
        int bad = spawn(argv[0], strcmp(argv[3], "daemons") == 0);
        return PMIx_tool_finalize() == PMIX_SUCCESS ? bad : 1;
    }

    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {PMIX_QUERY_PROC_TABLE, NULL};
    q.keys = keys;
    pmix_info_t qual;
    PMIX_INFO_LOAD(&qual, PMIX_NSPACE, job, PMIX_STRING);
    q.qualifiers = &qual;
    q.nqual = 1;
    pmix_info_t *results = NULL;
    size_t n = 0;
    rc = PMIx_Query_info(&q, 1, &results, &n);
    size_t rows = 0;
    int pids = 0;
    if (rc == PMIX_SUCCESS && n == 1 && results[0].value.type == PMIX_DATA_ARRAY &&
        results[0].value.data.darray->type == PMIX_PROC_INFO) {
        rows = results[0].value.data.darray->size;
        const pmix_proc_info_t *p = results[0].value.data.darray->array;
        for (size_t i = 0; i < rows; ++i) pids += p[i].pid > 0;
    }
    printf("tool proc table %s rows %zu with pids %d\n", PMIx_Error_string(rc), rows, pids);
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_INFO_DESTRUCT(&qual);
    if (argc > 3 && strcmp(argv[3], "query") == 0)
        return PMIx_tool_finalize() == PMIX_SUCCESS ? 0 : 1;

    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, job, PMIX_RANK_WILDCARD);
    pmix_info_t pause;
    bool yes = true;
    PMIX_INFO_LOAD(&pause, PMIX_JOB_CTRL_PAUSE, &yes, PMIX_BOOL);
    results = NULL;
    n = 0;
    rc = PMIx_Job_control(&target, 1, &pause, 1, &results, &n);
    int host_results = 0; /* the test host's result ("host.jctrl.done") */
    for (size_t i = 0; i < n; ++i) host_results += PMIX_CHECK_KEY(&results[i], "host.jctrl.done");
    if (results) PMIX_INFO_FREE(results, n);
    printf("tool pause: %s host results %d\n", PMIx_Error_string(rc), host_results);
    fflush(stdout);
    rc = PMIx_tool_finalize();
    return rc == PMIX_SUCCESS ? 0 : 1;
}
