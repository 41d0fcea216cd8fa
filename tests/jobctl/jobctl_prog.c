/* A PMIx program for the job-control tests (tests/jobctl, tests/multinode):
 * `jobctl_prog MODE [ARG]`. Every mode prints
 * "rank R nspace NS ready" once initialised; the tests synchronise on what it prints and writes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pmix.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static volatile sig_atomic_t got_signal = 0;
static atomic_int alerts = 0, checkpoint_asked = 0, preempt_alerts = 0;
/* Signalled whenever an alert or a non-blocking completion comes in: waits sleep on it. */
static pthread_mutex_t news_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t news = PTHREAD_COND_INITIALIZER;

static void announce(void) {
    pthread_mutex_lock(&news_mu);
    pthread_cond_broadcast(&news);
    pthread_mutex_unlock(&news_mu);
}

/* Waits until *flag >= n, or ms pass; whether it got there. */
static int wait_for_count(atomic_int *flag, int n, int ms) {
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec += 1;
        end.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&news_mu);
    while (atomic_load(flag) < n)
        if (pthread_cond_timedwait(&news, &news_mu, &end) != 0) break;
    pthread_mutex_unlock(&news_mu);
    return atomic_load(flag) >= n;
}

static void on_signal(int sig) {
    got_signal = sig;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    if (status == PMIX_MONITOR_HEARTBEAT_ALERT || status == PMIX_MONITOR_FILE_ALERT) {
        printf("rank %u alert %d from %s:%u\n", me.rank, status, source->nspace, source->rank);
        atomic_fetch_add(&alerts, 1);
        announce();
    } else if (status == PMIX_JCTRL_CHECKPOINT) {
        atomic_fetch_add(&checkpoint_asked, 1);
    } else if (status == PMIX_JCTRL_PREEMPT_ALERT) {
        atomic_fetch_add(&preempt_alerts, 1);
        printf("rank %u preempt alert\n", me.rank);
    }
    fflush(stdout);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void handle(pmix_status_t code) {
    pmix_status_t codes[1] = {code};
    pmix_status_t rc = PMIx_Register_event_handler(codes, 1, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) {
        fprintf(stderr, "register handler: %d\n", rc);
        exit(3);
    }
}

static pmix_status_t control(pmix_info_t *dirs, size_t n) {
    return PMIx_Job_control(NULL, 0, dirs, n, NULL, NULL);
}

static void checkpoint_complete(void) {
    pmix_status_t rc =
        PMIx_Notify_event(PMIX_JCTRL_CHECKPOINT_COMPLETE, &me, PMIX_RANGE_RM, NULL, 0, NULL, NULL);
    printf("rank %u checkpointed (%d)\n", me.rank, rc);
    fflush(stdout);
}

/* With `preemptible`, the preemptible mark too, in the same call (several directives). With
 * `untyped`, the method's value type is left unset, as OpenPMIx's jctrl example leaves it (its key
 * names the type). */
static void register_method(int sig, bool preemptible, bool untyped) {
    pmix_info_t method, dir[2];
    pmix_data_array_t arr;
    bool yes = true;
    PMIX_INFO_CONSTRUCT(&method);
    if (sig)
        PMIx_Info_load(&method, PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT);
    else
        PMIx_Info_load(&method, PMIX_JOB_CTRL_CHECKPOINT_EVENT, &yes, PMIX_BOOL);
    arr.type = PMIX_INFO;
    arr.size = 1;
    arr.array = &method;
    PMIX_INFO_CONSTRUCT(&dir[0]);
    PMIX_INFO_CONSTRUCT(&dir[1]);
    PMIx_Info_load(&dir[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    if (untyped) {
        snprintf(dir[1].key, sizeof dir[1].key, "%s", PMIX_JOB_CTRL_CHECKPOINT_METHOD);
        dir[1].value.data.darray = &arr; /* type stays PMIX_UNDEF */
    } else {
        PMIx_Info_load(&dir[1], PMIX_JOB_CTRL_CHECKPOINT_METHOD, &arr, PMIX_DATA_ARRAY);
    }
    pmix_status_t rc = preemptible ? control(dir, 2) : control(&dir[1], 1);
    PMIX_INFO_DESTRUCT(&dir[0]);
    if (!untyped) PMIX_INFO_DESTRUCT(&dir[1]);
    PMIX_INFO_DESTRUCT(&method);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "register checkpoint method: %d\n", rc);
        exit(3);
    }
}

/* Runs `ms` milliseconds (beating every 5 ms when `beat`); returns the alerts seen meanwhile. */
static int phase(int ms, int beat, const char *grow) {
    int before = atomic_load(&alerts);
    double end = now_ms() + ms;
    while (now_ms() < end) {
        if (beat) PMIx_Heartbeat();
        if (grow) {
            FILE *f = fopen(grow, "a");
            if (f) {
                fputs("x\n", f);
                fclose(f);
            }
        }
        sleep_ms(5);
    }
    return atomic_load(&alerts) - before;
}

/* Waits (bounded) for the alert count to reach n. */
static int wait_alerts(int n, int ms) {
    return wait_for_count(&alerts, n, ms);
}

static struct {
    atomic_int done;
    pmix_status_t status;
} nb[3];

static void nb_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)info;
    (void)ninfo;
    long i = (long)cbdata;
    nb[i].status = status;
    atomic_store(&nb[i].done, 1);
    announce();
    if (release_fn) release_fn(release_cbdata);
}

static void checkpoint_nb(long slot, const char *id) {
    pmix_info_t d;
    PMIX_INFO_CONSTRUCT(&d);
    PMIx_Info_load(&d, PMIX_JOB_CTRL_CHECKPOINT, id, PMIX_STRING);
    pmix_proc_t self = me;
    pmix_status_t rc = PMIx_Job_control_nb(&self, 1, &d, 1, nb_done, (void *)slot);
    PMIX_INFO_DESTRUCT(&d);
    if (rc != PMIX_SUCCESS) printf("checkpoint %s: %d\n", id, rc);
}

static pmix_status_t cancel(const char *id) {
    pmix_info_t d;
    PMIX_INFO_CONSTRUCT(&d);
    bool all = true; /* no id: every request of ours */
    if (id)
        PMIx_Info_load(&d, PMIX_JOB_CTRL_CANCEL, id, PMIX_STRING);
    else
        PMIx_Info_load(&d, PMIX_JOB_CTRL_CANCEL, &all, PMIX_BOOL);
    pmix_status_t rc = control(&d, 1);
    PMIX_INFO_DESTRUCT(&d);
    return rc;
}

static void wait_nb(int slot) {
    (void)wait_for_count(&nb[slot].done, 1, 10000);
}

static pmix_status_t monitor(const char *kind, const char *file, const char *id, pmix_status_t code,
                             uint32_t time, uint32_t drops) {
    pmix_info_t mon, dirs[4];
    bool yes = true;
    size_t n = 0;
    PMIX_INFO_CONSTRUCT(&mon);
    for (int i = 0; i < 4; ++i) PMIX_INFO_CONSTRUCT(&dirs[i]);
    if (strcmp(kind, "heartbeat") == 0) {
        PMIx_Info_load(&mon, PMIX_MONITOR_HEARTBEAT, &yes, PMIX_BOOL);
        PMIx_Info_load(&dirs[n++], PMIX_MONITOR_HEARTBEAT_TIME, &time, PMIX_UINT32);
        PMIx_Info_load(&dirs[n++], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    } else {
        PMIx_Info_load(&mon, PMIX_MONITOR_FILE, file, PMIX_STRING);
        PMIx_Info_load(&dirs[n++], PMIX_MONITOR_FILE_SIZE, &yes, PMIX_BOOL);
        PMIx_Info_load(&dirs[n++], PMIX_MONITOR_FILE_CHECK_TIME, &time, PMIX_UINT32);
        PMIx_Info_load(&dirs[n++], PMIX_MONITOR_FILE_DROPS, &drops, PMIX_UINT32);
    }
    if (id) PMIx_Info_load(&dirs[n++], PMIX_MONITOR_ID, id, PMIX_STRING);
    pmix_status_t rc = PMIx_Process_monitor(&mon, code, dirs, n, NULL, NULL);
    PMIX_INFO_DESTRUCT(&mon);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&dirs[i]);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *mode = argv[1];
    const char *arg = argc > 2 ? argv[2] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 3;
    for (int s = 1; s < 32; ++s)
        if (s != SIGKILL && s != SIGSTOP && s != SIGTERM && s != SIGCONT && s != SIGCHLD &&
            s != SIGSEGV && s != SIGABRT && s != SIGBUS && s != SIGFPE && s != SIGILL)
            signal(s, on_signal);
    if (strcmp(mode, "preempt") == 0) {
        handle(PMIX_JCTRL_PREEMPT_ALERT);
        register_method(SIGUSR2, true, false);
    }
    if (strncmp(mode, "ckpt-", 5) == 0) {
        if (strcmp(mode, "ckpt-signal") == 0) register_method(SIGUSR2, false, true);
        if (strcmp(mode, "ckpt-event") == 0 || strcmp(mode, "ckpt-cancel") == 0) {
            handle(PMIX_JCTRL_CHECKPOINT);
            register_method(0, false, false);
        }
    }
    if (strcmp(mode, "heartbeat") == 0 || strcmp(mode, "filemon") == 0 ||
        strcmp(mode, "mon-cancel") == 0 || strcmp(mode, "hb-range") == 0) {
        handle(PMIX_MONITOR_HEARTBEAT_ALERT);
        handle(PMIX_MONITOR_FILE_ALERT);
    }
    printf("rank %u nspace %s ready\n", me.rank, me.nspace);

    const int stall = strcmp(mode, "stall-ignore-term") == 0;
    if (strcmp(mode, "ignore-term") == 0 || stall) signal(SIGTERM, SIG_IGN); /* needs SIGKILL */
    /* A heartbeat monitor that never gets a beat: the broker's response ends the process. */
    if (stall && monitor("heartbeat", NULL, NULL, PMIX_MONITOR_HEARTBEAT_ALERT, 1, 2) != 0)
        return 4;
    if (strcmp(mode, "ctl-from-rank") == 0) {
        /* Every rank has its handlers (the fence), then rank 0 signals its whole job, on every
         * node, and counts as "counter" does. */
        if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) return 6;
        if (me.rank == 0) {
            pmix_info_t d;
            int sig = SIGUSR1;
            PMIX_INFO_CONSTRUCT(&d);
            PMIx_Info_load(&d, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
            printf("rank 0 signalled its job: %d\n", control(&d, 1));
            PMIX_INFO_DESTRUCT(&d);
        }
    }
    if (strcmp(mode, "counter") == 0 || strcmp(mode, "preempt") == 0 ||
        strcmp(mode, "ctl-from-rank") == 0 || strcmp(mode, "ignore-term") == 0 || stall ||
        strncmp(mode, "ckpt-", 5) == 0) {
        /* Counts in <dir>/counter.<rank>; reports signals; checkpoints when asked. */
        char path[4096];
        snprintf(path, sizeof path, "%s/counter.%u", arg, me.rank);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (strcmp(mode, "ckpt-cancel") == 0) {
            /* Checkpoints of itself that never complete: cancel one by id, then all. */
            checkpoint_nb(0, "c1");
            pmix_status_t rc = cancel("c1");
            wait_nb(0);
            printf("cancel c1: %d, checkpoint c1: %d\n", rc, nb[0].status);
            checkpoint_nb(1, "c2");
            checkpoint_nb(2, "c3");
            rc = cancel(NULL);
            wait_nb(1);
            wait_nb(2);
            printf("cancel all: %d, checkpoint c2: %d, c3: %d\n", rc, nb[1].status, nb[2].status);
            printf("cancel again: %d\n", cancel("c1"));
            /* A signal completes at once: cancelling it by its id is not supported. */
            pmix_info_t sd[2];
            int sig = SIGUSR1;
            PMIX_INFO_CONSTRUCT(&sd[0]);
            PMIX_INFO_CONSTRUCT(&sd[1]);
            PMIx_Info_load(&sd[0], PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
            PMIx_Info_load(&sd[1], PMIX_JOB_CTRL_ID, "s1", PMIX_STRING);
            printf("signal s1: %d\n", control(sd, 2));
            PMIX_INFO_DESTRUCT(&sd[0]);
            PMIX_INFO_DESTRUCT(&sd[1]);
            printf("cancel s1: %d\n", cancel("s1"));
            printf("cancel unknown: %d\n", cancel("never-asked"));
            PMIx_Finalize(NULL, 0);
            return 0;
        }
        for (unsigned long n = 1;; ++n) {
            char buf[32];
            int len = snprintf(buf, sizeof buf, "%lu\n", n);
            if (fd >= 0) (void)pwrite(fd, buf, (size_t)len, 0);
            if (got_signal) {
                int s = got_signal;
                got_signal = 0;
                printf("rank %u got signal %d\n", me.rank, s);
                if ((strcmp(mode, "ckpt-signal") == 0 || strcmp(mode, "preempt") == 0) &&
                    s == SIGUSR2)
                    checkpoint_complete();
            }
            if (atomic_exchange(&checkpoint_asked, 0)) checkpoint_complete();
            sleep_ms(1);
        }
    }
    if (strcmp(mode, "control-other") == 0) {
        /* A process may control only its own job: another job's process is refused. */
        pmix_proc_t other;
        pmix_info_t d;
        int sig = SIGUSR1;
        PMIX_INFO_CONSTRUCT(&d);
        PMIx_Info_load(&d, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
        PMIX_LOAD_PROCID(&other, "another.job", 0);
        printf("other job: %d\n", PMIx_Job_control(&other, 1, &d, 1, NULL, NULL));
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "heartbeat") == 0) {
        /* Beats flow, stop (one alert, however long), flow, stop again. Checked every 5 time
         * units (100 ms in the tests), 3 drops: a loaded machine's pause of the beating loop
         * (tens of ms) is not taken for a stall. */
        if (monitor("heartbeat", NULL, NULL, PMIX_MONITOR_HEARTBEAT_ALERT, 5, 3) != PMIX_SUCCESS)
            return 5;
        printf("while beating: %d\n", phase(400, 1, NULL));
        printf("first stall alerted: %d\n", wait_alerts(1, 10000));
        printf("more while stalled: %d\n", phase(300, 0, NULL));
        printf("while beating again: %d\n", phase(400, 1, NULL));
        printf("second stall alerted: %d\n", wait_alerts(2, 10000));
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "hb-range") == 0) {
        /* Rank 0 stops beating; every rank of the job has a handler (registered before the fence,
         * so before the alert) and must hear it, not only rank 0. */
        if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) return 6;
        if (me.rank == 0 &&
            monitor("heartbeat", NULL, NULL, PMIX_MONITOR_HEARTBEAT_ALERT, 1, 2) != PMIX_SUCCESS)
            return 5;
        printf("rank %u heard the alert: %d\n", me.rank, wait_alerts(1, 10000));
        if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) return 6;
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "filemon") == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/progress.%u", arg, me.rank);
        FILE *f = fopen(path, "w");
        if (f) fclose(f);
        /* Checked every 5 time units (100 ms in the tests), so that a loaded machine's pause
         * of the growing loop is not taken for a stall. */
        if (monitor("file", path, NULL, PMIX_MONITOR_FILE_ALERT, 5, 3) != PMIX_SUCCESS) return 5;
        printf("while growing: %d\n", phase(400, 0, path));
        printf("stalled file alerted: %d\n", wait_alerts(1, 10000));
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "mon-cancel") == 0) {
        /* 200 ms without a beat would trip them: longer than a loaded machine's pause between
         * registering and cancelling, shorter than the 300 ms that must then stay quiet. */
        monitor("heartbeat", NULL, "hb1", PMIX_MONITOR_HEARTBEAT_ALERT, 5, 2);
        monitor("heartbeat", NULL, "hb2", PMIX_MONITOR_HEARTBEAT_ALERT, 5, 2);
        pmix_info_t c;
        bool yes_all = true;
        PMIX_INFO_CONSTRUCT(&c);
        PMIx_Info_load(&c, PMIX_MONITOR_CANCEL, "hb1", PMIX_STRING);
        printf("cancel hb1: %d\n", PMIx_Process_monitor(&c, PMIX_SUCCESS, NULL, 0, NULL, NULL));
        PMIX_INFO_DESTRUCT(&c);
        PMIX_INFO_CONSTRUCT(&c);
        PMIx_Info_load(&c, PMIX_MONITOR_CANCEL, &yes_all, PMIX_BOOL);
        printf("cancel all: %d\n", PMIx_Process_monitor(&c, PMIX_SUCCESS, NULL, 0, NULL, NULL));
        printf("cancel again: %d\n", PMIx_Process_monitor(&c, PMIX_SUCCESS, NULL, 0, NULL, NULL));
        PMIX_INFO_DESTRUCT(&c);
        printf("alerts after cancel: %d\n", phase(300, 0, NULL));
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "mon-exit") == 0) {
        /* A monitor that would trip soon after its process is gone. */
        monitor("heartbeat", NULL, "doomed", PMIX_MONITOR_HEARTBEAT_ALERT, 50, 1);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "log") == 0) {
        pmix_info_t data[2], dirs[2], email;
        bool yes = true;
        PMIX_INFO_CONSTRUCT(&data[0]);
        PMIX_INFO_CONSTRUCT(&data[1]);
        PMIX_INFO_CONSTRUCT(&dirs[0]);
        PMIX_INFO_CONSTRUCT(&dirs[1]);
        PMIx_Info_load(&data[0], PMIX_LOG_STDERR, "stderr line from the app", PMIX_STRING);
        PMIx_Info_load(&data[1], PMIX_LOG_SYSLOG, "syslog line from the app", PMIX_STRING);
        PMIx_Info_load(&dirs[0], PMIX_LOG_GENERATE_TIMESTAMP, &yes, PMIX_BOOL);
        printf("log: %d\n", PMIx_Log(data, 2, dirs, 1));
        PMIX_INFO_DESTRUCT(&data[0]);
        PMIX_INFO_DESTRUCT(&data[1]);
        PMIx_Info_load(&data[0], PMIX_LOG_STDERR, "only once", PMIX_STRING);
        PMIx_Info_load(&data[1], PMIX_LOG_SYSLOG, "never sent", PMIX_STRING);
        PMIx_Info_load(&dirs[1], PMIX_LOG_ONCE, &yes, PMIX_BOOL);
        printf("log once: %d\n", PMIx_Log(data, 2, &dirs[1], 1));
        PMIX_INFO_CONSTRUCT(&email);
        PMIx_Info_load(&email, PMIX_LOG_EMAIL, "mail", PMIX_STRING);
        printf("log email: %d\n", PMIx_Log(&email, 1, NULL, 0));
        PMIX_INFO_DESTRUCT(&data[0]);
        PMIX_INFO_DESTRUCT(&data[1]);
        PMIX_INFO_DESTRUCT(&email);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    return 2;
}
