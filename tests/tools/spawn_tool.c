/* A tool of the standard API that runs a job through the standalone broker as `zpmix run` would,
 * and says what it got (tests/tools/test_iof.cpp, test_tools.cpp):
 *   spawn_tool before|after|example|launcher NP PROG [ARGS...]
 * PMIx_Spawn of NP ranks of PROG with PMIX_NOTIFY_COMPLETION, PMIX_FWD_STDOUT and
 * PMIX_FWD_STDERR; pulls the job's output (PMIx_IOF_pull) at once (`before`) or once the job
 * ended (`after`: the broker keeps it for the tool that spawned the job), waits (20 s at most)
 * for PMIX_EVENT_JOB_END, then deregisters the pull, which delivers what is left. Prints each
 * line of output as "stdout: LINE" or "stderr: LINE", then "exit STATUS" (PMIX_EXIT_CODE of the
 * event), and exits 0; "FAILED: ..." and 1 otherwise.
 * `example` spawns as OpenPMIx's tool example does: no directive, and its handler registered for
 * PMIX_ERR_JOB_TERMINATED with PMIX_EVENT_AFFECTED_PROC naming the tool's own namespace and
 * PMIX_EVENT_RETURN_OBJECT. `launcher` as its launcher example: PMIX_MAPBY and
 * PMIX_NOTIFY_COMPLETION in the app's info, none for the job, and one handler for six codes. Both
 * print "exit STATUS affected NSPACE" (the event's PMIX_EVENT_AFFECTED_PROC) and pull nothing. */
#include <pmix_tool.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../support/check.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static char job[PMIX_MAX_NSLEN + 1];
/* Every job end heard (it may come before PMIx_Spawn returns): its namespace, exit code and
 * PMIX_JOB_TERM_STATUS. */
#define MAX_ENDS 8
static struct {
    char nspace[PMIX_MAX_NSLEN + 1];
    int exit_code;
    pmix_status_t term;
} ends[MAX_ENDS];
static int nends = 0;

/* What the handler was registered with as PMIX_EVENT_RETURN_OBJECT (example and launcher). */
static int return_object;
static int returned = 1;

static void on_end(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    if (!returned)
        for (size_t i = 0; i < ninfo; ++i)
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) &&
                info[i].value.type == PMIX_POINTER && info[i].value.data.ptr == &return_object)
                returned = 1;
    if (nends < MAX_ENDS) {
        ends[nends].nspace[0] = '\0';
        ends[nends].exit_code = -1;
        ends[nends].term = PMIX_ERROR;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                info[i].value.type == PMIX_PROC)
                PMIX_LOAD_NSPACE(ends[nends].nspace, info[i].value.data.proc->nspace);
            else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
                ends[nends].exit_code = info[i].value.data.integer;
            else if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS) &&
                     info[i].value.type == PMIX_STATUS)
                ends[nends].term = info[i].value.data.status;
        }
        ++nends;
        pthread_cond_broadcast(&cv);
    }
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* The end of `job` heard so far, or -1. Called with mu held. */
static int end_of_job(void) {
    for (int i = 0; i < nends; ++i)
        if (PMIX_CHECK_NSPACE(ends[i].nspace, job)) return i;
    return -1;
}

/* Each delivery is printed at once: the test reads the lines in any order. */
static void on_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)source, (void)info, (void)ninfo;
    pthread_mutex_lock(&mu);
    printf("%s: %.*s", channel == PMIX_FWD_STDERR_CHANNEL ? "stderr" : "stdout", (int)payload->size,
           payload->bytes);
    if (payload->size && payload->bytes[payload->size - 1] != '\n') printf("\n");
    fflush(stdout);
    pthread_mutex_unlock(&mu);
}

/* The end of `job`, waited for 20 s at most; -1 when it did not come. */
static int wait_for_end(void) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&mu);
    int got;
    while ((got = end_of_job()) < 0 && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
    }
    got = end_of_job();
    pthread_mutex_unlock(&mu);
    CHECK(got >= 0, "no PMIX_EVENT_JOB_END for %s within 20 s", job);
    return got;
}

static size_t pull(void) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, job, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_IOF_pull(
        &all, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL, on_output, NULL, NULL);
    CHECK(rc > 0, "pull: %s", PMIx_Error_string(rc));
    return rc > 0 ? (size_t)rc : 0;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    const int after = strcmp(argv[1], "after") == 0;
    pmix_info_t init;
    bool yes = true;
    PMIX_INFO_LOAD(&init, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, &init, 1);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(argv[3]);
    for (int i = 3; i < argc; ++i) PMIX_ARGV_APPEND(rc, app.argv, argv[i]);
    app.maxprocs = atoi(argv[2]);
    pmix_nspace_t child;
    if (strcmp(argv[1], "example") == 0 || strcmp(argv[1], "launcher") == 0) {
        pmix_info_t hinfo[2];
        PMIX_INFO_LOAD(&hinfo[0], PMIX_EVENT_RETURN_OBJECT, &return_object, PMIX_POINTER);
        pmix_proc_t mine;
        PMIX_LOAD_PROCID(&mine, me.nspace, PMIX_RANK_WILDCARD);
        PMIX_INFO_LOAD(&hinfo[1], PMIX_EVENT_AFFECTED_PROC, &mine, PMIX_PROC);
        returned = 0;
        if (strcmp(argv[1], "example") == 0) {
            pmix_status_t code = PMIX_ERR_JOB_TERMINATED;
            rc = PMIx_Register_event_handler(&code, 1, hinfo, 2, on_end, NULL, NULL);
            CHECK(rc >= 0, "register: %s", PMIx_Error_string(rc));
            rc = PMIx_Spawn(NULL, 0, &app, 1, child);
        } else {
            pmix_status_t codes[6] = {
                PMIX_ERR_PROC_ABORTING,  PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_REQUESTED_ABORT,
                PMIX_ERR_JOB_TERMINATED, PMIX_ERR_UNREACH,      PMIX_ERR_LOST_CONNECTION};
            rc = PMIx_Register_event_handler(codes, 6, hinfo, 1, on_end, NULL, NULL);
            CHECK(rc >= 0, "register: %s", PMIx_Error_string(rc));
            PMIX_INFO_CREATE(app.info, 2);
            app.ninfo = 2;
            PMIX_INFO_LOAD(&app.info[0], PMIX_MAPBY, "slot", PMIX_STRING);
            PMIX_INFO_LOAD(&app.info[1], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
            rc = PMIx_Spawn(NULL, 0, &app, 1, child);
        }
        PMIX_INFO_DESTRUCT(&hinfo[0]);
        PMIX_INFO_DESTRUCT(&hinfo[1]);
        PMIX_APP_DESTRUCT(&app);
        CHECK(rc == PMIX_SUCCESS, "spawn: %s", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) {
            pthread_mutex_lock(&mu);
            PMIX_LOAD_NSPACE(job, child);
            pthread_mutex_unlock(&mu);
            const int end = wait_for_end();
            pthread_mutex_lock(&mu);
            CHECK(returned, "the handler was not given its PMIX_EVENT_RETURN_OBJECT");
            if (end >= 0) printf("exit %d affected %s\n", ends[end].exit_code, ends[end].nspace);
            pthread_mutex_unlock(&mu);
        }
        PMIx_tool_finalize();
        return failures ? 1 : 0;
    }

    pmix_status_t code = PMIX_EVENT_JOB_END;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_end, NULL, NULL);
    CHECK(rc >= 0, "register: %s", PMIx_Error_string(rc));
    pmix_info_t info[3];
    PMIX_INFO_LOAD(&info[0], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_FWD_STDOUT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[2], PMIX_FWD_STDERR, &yes, PMIX_BOOL);
    rc = PMIx_Spawn(info, 3, &app, 1, child);
    PMIX_APP_DESTRUCT(&app);
    CHECK(rc == PMIX_SUCCESS, "spawn: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) {
        pthread_mutex_lock(&mu);
        PMIX_LOAD_NSPACE(job, child);
        pthread_mutex_unlock(&mu);
        size_t ref = after ? 0 : pull();
        const int end = wait_for_end();
        if (after && end >= 0) ref = pull();
        /* Nothing more comes of an ended job: what the pull holds is delivered before this
         * returns. */
        rc = ref ? PMIx_IOF_deregister(ref, NULL, 0, NULL, NULL) : PMIX_ERR_NOT_FOUND;
        CHECK(rc == PMIX_SUCCESS, "deregister: %s", PMIx_Error_string(rc));
        if (end >= 0) {
            pthread_mutex_lock(&mu);
            CHECK(ends[end].term == ends[end].exit_code,
                  "PMIX_JOB_TERM_STATUS %d, PMIX_EXIT_CODE %d", ends[end].term,
                  ends[end].exit_code);
            printf("exit %d\n", ends[end].exit_code);
            pthread_mutex_unlock(&mu);
        }
    }
    PMIx_tool_finalize();
    return failures ? 1 : 0;
}
