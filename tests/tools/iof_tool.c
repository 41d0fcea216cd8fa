/* A tool of the standard API that forwards a job's I/O (tests/tools/test_iof.cpp,
 * tests/multinode/test_iof_across.sh):
 *   iof_tool PID NSPACE NRANKS
 * attaches to the broker of the `zpmix run` with pid PID, whose job NSPACE runs NRANKS iof_rank
 * ranks that wrote their "before" lines before it came, and:
 *  1. pulls stdout and stderr of every rank, tagged (pull A, blocking): each rank's "before"
 *     lines arrive from the job's cache, each on its channel;
 *  2. pulls rank 0's stdout as XML with timestamps (pull B, with a registration callback);
 *  3. pushes "hello" to rank 0's stdin: its "echo: hello" comes through both pulls;
 *  4. deregisters A, pushes "second": B gets its echo, A nothing more;
 *  5. ends rank 0's input (PMIX_IOF_COMPLETE): its "bye" comes through B; once the broker has
 *     ended with the job (rank 0's end ends it), deregisters B: PMIX_SUCCESS all the same.
 * Prints each delivery as "A|B CHANNEL: TEXT", "ok" and exits 0 when every check passed;
 * "FAILED: ..." otherwise. Every wait is bounded (20 s). */
#include <pmix_tool.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../support/check.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static size_t ref_a = 0, ref_b = 0;
static char got_a[1 << 16], got_b[1 << 16]; /* what each pull delivered */
static int after_dereg_a = 0;               /* deliveries to A after its deregistration */
static int a_deregistered = 0;
static int b_registered = 0;
static pmix_status_t b_status = PMIX_ERROR;

static void append(char *to, const char *text, size_t n) {
    size_t len = strlen(to);
    if (len + n + 1 < sizeof got_a) {
        memcpy(to + len, text, n);
        to[len + n] = '\0';
    }
}

static void handler(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                    pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)source, (void)info, (void)ninfo;
    pthread_mutex_lock(&mu);
    const char *which = ref == ref_a ? "A" : ref == ref_b ? "B" : "?";
    printf("%s %s: %.*s", which, channel == PMIX_FWD_STDERR_CHANNEL ? "stderr" : "stdout",
           (int)payload->size, payload->bytes);
    if (payload->size && payload->bytes[payload->size - 1] != '\n') printf("\n");
    fflush(stdout);
    if (ref == ref_a) {
        if (a_deregistered) ++after_dereg_a;
        append(got_a, payload->bytes, payload->size);
    } else if (ref == ref_b) {
        append(got_b, payload->bytes, payload->size);
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&mu);
    b_status = status;
    ref_b = ref;
    b_registered = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* Waits (20 s at most) until `text` is in what pull `buf` got. */
static int wait_for(const char *buf, const char *text) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&mu);
    int found;
    while (!(found = strstr(buf, text) != NULL))
        if (pthread_cond_timedwait(&cv, &mu, &until) != 0) {
            found = strstr(buf, text) != NULL;
            break;
        }
    pthread_mutex_unlock(&mu);
    CHECK(found, "never got \"%s\"", text);
    return found;
}

/* Waits (20 s at most) until process `pid` has ended: gone, or a zombie its parent has not
 * reaped yet. */
static int wait_gone(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 2000; ++i) {
        FILE *f = fopen(path, "r");
        if (f == NULL) return 1;
        char state = '?';
        int n = fscanf(f, "%*d %*s %c", &state);
        fclose(f);
        if (n == 1 && state == 'Z') return 1;
        usleep(10000);
    }
    return 0;
}

static void push(const pmix_proc_t *to, const char *text) {
    pmix_byte_object_t bo;
    bo.bytes = (char *)text;
    bo.size = strlen(text);
    pmix_status_t rc = PMIx_IOF_push(to, 1, &bo, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "push %s: %s", text, PMIx_Error_string(rc));
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    pid_t pid = (pid_t)atoi(argv[1]);
    const char *nspace = argv[2];
    int nranks = atoi(argv[3]);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }

    pmix_proc_t all, rank0;
    PMIX_LOAD_PROCID(&all, nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&rank0, nspace, 0);
    pmix_info_t tag;
    PMIX_INFO_LOAD(&tag, PMIX_IOF_TAG_OUTPUT, NULL, PMIX_BOOL);
    pthread_mutex_lock(&mu); /* the handler may run before ref_a is set */
    rc = PMIx_IOF_pull(&all, 1, &tag, 1, PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL, handler,
                       NULL, NULL);
    if (rc > 0) ref_a = (size_t)rc;
    pthread_mutex_unlock(&mu);
    CHECK(rc > 0, "pull A: %s", PMIx_Error_string(rc));
    char want[512];
    for (int r = 0; r < nranks; ++r) {
        snprintf(want, sizeof want, "[%s,%d]<stdout>: out %d before\n", nspace, r, r);
        wait_for(got_a, want);
        snprintf(want, sizeof want, "[%s,%d]<stderr>: err %d before\n", nspace, r, r);
        wait_for(got_a, want);
    }

    pmix_info_t xml[2];
    PMIX_INFO_LOAD(&xml[0], PMIX_IOF_XML_OUTPUT, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&xml[1], PMIX_IOF_TIMESTAMP_OUTPUT, NULL, PMIX_BOOL);
    rc = PMIx_IOF_pull(&rank0, 1, xml, 2, PMIX_FWD_STDOUT_CHANNEL, handler, registered, NULL);
    CHECK(rc == PMIX_SUCCESS, "pull B: %s", PMIx_Error_string(rc));
    pthread_mutex_lock(&mu);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (!b_registered && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
    }
    pthread_mutex_unlock(&mu);
    CHECK(b_registered && b_status == PMIX_SUCCESS && ref_b > 0 && ref_b != ref_a,
          "pull B registered: %s", PMIx_Error_string(b_status));
    /* B's cached line, as XML with a timestamp. */
    snprintf(want, sizeof want, "<stdout nspace=\"%s\" rank=\"0\" timestamp=\"", nspace);
    wait_for(got_b, want);
    wait_for(got_b, "\">out 0 before</stdout>\n");

    push(&rank0, "hello\n");
    snprintf(want, sizeof want, "[%s,0]<stdout>: echo: hello\n", nspace);
    wait_for(got_a, want);
    wait_for(got_b, ">echo: hello</stdout>");

    rc = PMIx_IOF_deregister(ref_a, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "deregister A: %s", PMIx_Error_string(rc));
    pthread_mutex_lock(&mu);
    a_deregistered = 1;
    pthread_mutex_unlock(&mu);
    CHECK(PMIx_IOF_deregister(ref_a, NULL, 0, NULL, NULL) == PMIX_ERR_NOT_FOUND,
          "deregister A twice");
    push(&rank0, "second\n");
    wait_for(got_b, ">echo: second</stdout>");
    pthread_mutex_lock(&mu);
    CHECK(after_dereg_a == 0, "A got %d deliveries after its deregistration", after_dereg_a);
    CHECK(strstr(got_a, "second") == NULL, "A got the second echo");
    pthread_mutex_unlock(&mu);

    pmix_info_t done;
    PMIX_INFO_LOAD(&done, PMIX_IOF_COMPLETE, NULL, PMIX_BOOL);
    rc = PMIx_IOF_push(&rank0, 1, NULL, &done, 1, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "end of input: %s", PMIx_Error_string(rc));
    wait_for(got_b, ">bye</stdout>");
    /* Rank 0 ends after its "bye", and the job with it, and `zpmix run`'s broker with the job:
     * once it is gone, deregistering B still succeeds (the pull went with the broker). */
    CHECK(wait_gone(pid), "the broker %d did not end with its job", (int)pid);
    rc = PMIx_IOF_deregister(ref_b, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "deregister B of a broker gone: %s", PMIx_Error_string(rc));

    PMIx_tool_finalize();
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
