/* A small resource manager that embeds a PMIx server library through pmix_server.h (and pmix.h
 * for its strings) only, as OpenPMIx's examples/server.c, Slurm's mpi/pmix and flux-pmix do. It
 * registers one namespace, sets each local client up (PMIx_server_setup_fork,
 * PMIx_server_register_client with a server_object of its own), starts the clients, answers their
 * upcalls and reports each on stdout as "nodeK: upcall <name> <rank> ..." lines, which the tests
 * read.
 *
 *   server_host [options] -n N program [args...]
 *     --nodes 2          two "nodes": this process and a child of it, each a host with its own
 *                        server (PMIX_HOSTNAME node0, node1) and half of the ranks, joined by a
 *                        socket that carries fence_nb's and group's parts and direct_modex's
 *                        requests, as a resource manager's daemons do
 *     --null-upcalls     every upcall NULL (what the library must refuse, never hang on)
 *     --refuse-rank R    client_connected refuses rank R
 *     --late-callbacks   callbacks come from another thread, after the upcall returned
 *     --double-callbacks client_finalized and abort call their callback twice (a buggy host)
 *     --nodata           register the host's own namespace with PMIX_REGISTER_NODATA first, as
 *                        mpirun does
 *     --enable-monitoring  PMIX_SERVER_ENABLE_MONITORING: the library monitors (as under mpirun)
 *     --tools            PMIX_SERVER_TOOL_SUPPORT: tools find the server by the host's pid
 *     --system           PMIX_SERVER_SYSTEM_SUPPORT: the node's system server (tools also find it
 *                        with PMIX_CONNECT_TO_SYSTEM)
 *     --inventory        collect the node's inventory first (PMIx_server_collect_inventory) and
 *                        report it as "inventory host H topology N bytes"
 *     --resources        (with --nodes 2) before the job, register resources beside it
 *                        (PMIx_server_register_resources: the cluster's id, keys for every job,
 *                        the other node's devices), take some back (_deregister_resources) and
 *                        deliver the other node's inventory (_deliver_inventory); says
 *                        "resources registered"
 *     --forward-io       as mpirun: the ranks' stdout and stderr come through pipes, which the
 *                        host copies to its own and hands to the library
 *                        (PMIx_server_IOF_deliver) for the tools and clients that pull them;
 *                        rank 0's stdin is a pipe that push_stdin writes to
 *     --stop-in-init     register the job with PMIX_DEBUG_STOP_IN_INIT: its ranks wait in
 *                        PMIx_Init for a debugger's PMIX_DEBUGGER_RELEASE (first with rank 0
 *                        alone, which the library refuses: PMIX_ERR_NOT_SUPPORTED)
 *     --release-ready    release a job (PMIX_DEBUGGER_RELEASE) once this node's library says it
 *                        is ready for debug, as a debugger would (else the tools do)
 * A spawned job is registered with the debugger's stops its spawn upcall got (reported on the
 * "upcall spawn" line); when the library says it is ready for debug, the host, its debugger here,
 * releases it (PMIx_Notify_event of PMIX_DEBUGGER_RELEASE). Each node's READY_FOR_DEBUG is
 * reported as "ready for debug NSPACE ranks ..." (its affected procs). When a spawned job's last
 * process ended, the host deregisters it and, if its spawner asked (PMIX_NOTIFY_COMPLETION),
 * raises PMIX_EVENT_JOB_END to the spawner ("job end ..."; spawned_job_ended).
 * Job control, monitoring, queries and logging: host_rm.c.
 *
 * Exit: the status of the first PMIx_Abort (as mpirun's); else 0 when every child exited 0,
 * the children's first non-zero status otherwise; 99 when the host itself failed (also when a
 * server call before PMIx_server_init or after PMIx_server_finalize does not return
 * PMIX_ERR_INIT). Every wait is bounded (alarm). */
#define _GNU_SOURCE /* pipe2 */
#include <pmix.h>
#include <pmix_server.h>

#include "host_rm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_RANKS 64

struct child {
    int rank;
    pid_t pid;
    bool ended; /* reaped */
    int io[2];  /* --forward-io: its stdout and stderr, read here (-1: at their end) */
};

static struct child children[MAX_RANKS]; /* by rank; only this node's are started */
static int nranks, nnodes = 1, node;     /* node: which one this process is */
static int refuse_rank = -1;
static bool late_callbacks, double_callbacks, enable_monitoring, tool_support, inventory;
static bool system_support;
static bool resources;
static char *inventory_xml; /* this node's topology, from collect_inventory */
static bool forward_io, stop_in_init, release_ready;
static pmix_nspace_t nspace = "host-job";
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int link_fd = -1;      /* to the other node */
static pid_t other_host = -1; /* node0: node1's process, a child of this one too */
static int other_status = -1;

void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&mu);
    printf("node%d: ", node);
    vprintf(fmt, ap);
    fflush(stdout);
    pthread_mutex_unlock(&mu);
    va_end(ap);
}

static void die(const char *what, pmix_status_t rc) {
    fprintf(stderr, "server_host node%d: %s: %s\n", node, what, PMIx_Error_string(rc));
    exit(99);
}

/* Called from the upcalls (the library's thread) while the main thread starts the ranks. */
pid_t host_pid_of(int rank) {
    return rank >= 0 && rank < nranks ? __atomic_load_n(&children[rank].pid, __ATOMIC_ACQUIRE) : 0;
}

/* The node a rank runs on: the first half of the ranks on node0. */
static int node_of(int rank) {
    return nnodes == 1 ? 0 : rank >= (nranks + 1) / 2;
}

static const char *node_name(int n);
static const char *program = ""; /* the job's */

int host_job_size(void) {
    return nranks;
}

const char *host_node_of(int rank) {
    return node_name(node_of(rank));
}

bool host_runs_here(int rank) {
    return node_of(rank) == node;
}

const char *host_program(void) {
    return program;
}

/* The processes the spawn upcall started (spawn_fn), by their order of start, and their jobs:
 * who spawned each, whether it asked to hear of the end (PMIX_NOTIFY_COMPLETION), how many of
 * its processes run, how its first failing one ended. Under mu. */
#define MAX_SPAWNED 16
static struct child spawned[MAX_SPAWNED];
static int spawned_job_of[MAX_SPAWNED]; /* by index in spawned */
static struct spawned_job {
    pmix_proc_t parent;
    bool notify_completion, deregistered;
    int live, exit_code; /* exit_code: the first non-zero one, 128 + signal when killed */
    bool signalled;
} spawned_jobs[MAX_SPAWNED];
static int nspawned, spawned_live, nspawned_jobs;

/* Which child a server_object is: the library must hand back what register_client got. */
static struct child *child_of(const pmix_proc_t *proc, void *server_object) {
    struct child *c = server_object;
    bool ours =
        (c >= children && c < children + nranks) || (c >= spawned && c < spawned + nspawned);
    if (!ours || c->rank != (int)proc->rank) {
        say("upcall bad-server-object %u\n", proc->rank);
        return NULL;
    }
    return c;
}

/* ------------------------------------------------------------------ the link between nodes */

/* A message on the link: a type, a request id, a status and bytes. */
struct frame {
    char type; /* 'F' a fence part, 'D' a direct-modex request (bytes: the rank), 'R' its answer,
                  'E' an event (id: its source's rank; status: its code; bytes: its range, the
                  number of its custom range's procs, the procs, and its other infos as
                  PMIx_Data_pack packs them), 'G' a group's part (group_fn), 'X' the node's
                  ranks all ended */
    uint32_t id;
    int32_t status;
    uint32_t len;
};

static void link_send(char type, uint32_t id, int32_t status, const void *data, uint32_t len) {
    struct frame f = {type, id, status, len};
    pthread_mutex_lock(&mu);
    if (write(link_fd, &f, sizeof f) != sizeof f ||
        (len && write(link_fd, data, len) != (ssize_t)len)) {
        pthread_mutex_unlock(&mu);
        die("link write", PMIX_ERR_UNREACH);
    }
    pthread_mutex_unlock(&mu);
}

static bool read_all(void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t got = read(link_fd, p, n);
        if (got <= 0) return false;
        p += got;
        n -= (size_t)got;
    }
    return true;
}

/* Fences: the other node's parts that came before ours went out, and our fence_nb calls waiting
 * for the other's part; paired in order (both nodes fence in the same order). */
struct part {
    char *data;
    size_t len;
};
static struct part remote_parts[16];
static int remote_in, remote_out;
struct waiting_fence {
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
    char *mine;
    size_t len;
};
static struct waiting_fence waiting[16];
static int waiting_in, waiting_out;
static int fences;

/* Both parts are here: the library gets them concatenated, the other node's first on node0 and
 * last on node1 (any order must do). */
static void complete_fence(struct waiting_fence w, struct part r) {
    size_t n = w.len + r.len;
    char *all = malloc(n ? n : 1);
    if (node == 0) { /* a part may be empty (no data: NULL) */
        if (r.len) memcpy(all, r.data, r.len);
        if (w.len) memcpy(all + r.len, w.mine, w.len);
    } else {
        if (w.len) memcpy(all, w.mine, w.len);
        if (r.len) memcpy(all + w.len, r.data, r.len);
    }
    free(w.mine);
    free(r.data);
    w.cbfunc(PMIX_SUCCESS, all, n, w.cbdata, free, all);
}

static void *call_fence_back(void *arg) {
    struct waiting_fence *w = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    char *copy = w->len ? malloc(w->len) : NULL;
    if (w->len) memcpy(copy, w->mine, w->len);
    w->cbfunc(PMIX_SUCCESS, copy, w->len, w->cbdata, free, copy);
    free(w->mine);
    free(w);
    return NULL;
}

/* Direct modex: our requests waiting for the other node's answer, by id. */
struct dmodex_wait {
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
};
static struct dmodex_wait dmodex[256];
static uint32_t next_dmodex;
static int dmodex_served;
static bool other_node_done;
static pthread_cond_t io_cv = PTHREAD_COND_INITIALIZER; /* other_node_done, a rank's pipes */

/* The library answered the other node's request (PMIx_server_dmodex_request). */
static void dmodex_answered(pmix_status_t status, char *data, size_t sz, void *cbdata) {
    uint32_t id = (uint32_t)(uintptr_t)cbdata;
    link_send('R', id, status, data, (uint32_t)sz);
}

static void group_part_arrived(const struct frame *f, char *data);

static void *link_reader(void *arg) {
    (void)arg;
    struct frame f;
    while (read_all(&f, sizeof f)) {
        char *data = f.len ? malloc(f.len) : NULL;
        if (f.len && !read_all(data, f.len)) break;
        if (f.type == 'F') {
            pthread_mutex_lock(&mu);
            struct part r = {data, f.len};
            if (waiting_out < waiting_in) {
                struct waiting_fence w = waiting[waiting_out++ % 16];
                pthread_mutex_unlock(&mu);
                complete_fence(w, r);
            } else {
                remote_parts[remote_in++ % 16] = r;
                pthread_mutex_unlock(&mu);
            }
        } else if (f.type == 'D') {
            pmix_proc_t proc;
            uint32_t rank;
            memcpy(&rank, data, sizeof rank);
            free(data);
            PMIX_LOAD_PROCID(&proc, nspace, rank);
            pthread_mutex_lock(&mu);
            ++dmodex_served;
            pthread_mutex_unlock(&mu);
            pmix_status_t rc =
                PMIx_server_dmodex_request(&proc, dmodex_answered, (void *)(uintptr_t)f.id);
            if (rc != PMIX_SUCCESS) link_send('R', f.id, rc, NULL, 0);
        } else if (f.type == 'E') { /* the other node's client's event, for ours */
            int32_t range;
            uint32_t n;
            pmix_proc_t procs[16];
            memcpy(&range, data, sizeof range);
            memcpy(&n, data + sizeof range, sizeof n);
            if (n > 16) n = 16;
            const size_t head = sizeof range + sizeof n + n * sizeof procs[0];
            memcpy(procs, data + sizeof range + sizeof n, n * sizeof procs[0]);
            /* its infos, and the custom range last */
            pmix_data_buffer_t buf;
            PMIX_DATA_BUFFER_CONSTRUCT(&buf);
            pmix_byte_object_t bo = {data + head, f.len - head};
            size_t ninfo = 0;
            int32_t count = 1;
            pmix_info_t *info = NULL;
            pmix_status_t rc = PMIx_Data_embed(&buf, &bo);
            free(data);
            if (rc == PMIX_SUCCESS) rc = PMIx_Data_unpack(NULL, &buf, &ninfo, &count, PMIX_SIZE);
            if (rc == PMIX_SUCCESS && ninfo <= 64) {
                PMIX_INFO_CREATE(info, ninfo + 1);
                count = (int32_t)ninfo;
                if (ninfo) rc = PMIx_Data_unpack(NULL, &buf, info, &count, PMIX_INFO);
            }
            PMIX_DATA_BUFFER_DESTRUCT(&buf);
            pmix_proc_t source;
            PMIX_LOAD_PROCID(&source, nspace, f.id);
            if (rc == PMIX_SUCCESS && info) {
                pmix_data_array_t custom = {PMIX_PROC, n, procs};
                if (n)
                    PMIX_INFO_LOAD(&info[ninfo], PMIX_EVENT_CUSTOM_RANGE, &custom, PMIX_DATA_ARRAY);
                rc = PMIx_Notify_event(f.status, &source, (pmix_data_range_t)range, info,
                                       ninfo + (n ? 1 : 0), NULL, NULL);
            }
            if (info) PMIX_INFO_FREE(info, ninfo + 1);
            say("relayed event %d from %u: %s\n", f.status, f.id, PMIx_Error_string(rc));
        } else if (f.type == 'G') {
            group_part_arrived(&f, data);
        } else if (f.type == 'X') {
            pthread_mutex_lock(&mu);
            other_node_done = true;
            pthread_cond_broadcast(&io_cv);
            pthread_mutex_unlock(&mu);
        } else if (f.type == 'R') {
            pthread_mutex_lock(&mu);
            struct dmodex_wait w = dmodex[f.id % 256];
            pthread_mutex_unlock(&mu);
            w.cbfunc(f.status, data, f.len, w.cbdata, free, data);
        }
    }
    pthread_mutex_lock(&mu); /* the other node is gone */
    other_node_done = true;
    pthread_cond_broadcast(&io_cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* The job ends on both nodes together, as a resource manager's daemons stay until the whole job
 * is done: the other node's ranks may still ask this node's server for data (direct modex). */
static void wait_other_node(void) {
    link_send('X', 0, 0, NULL, 0);
    pthread_mutex_lock(&mu);
    while (!other_node_done) pthread_cond_wait(&io_cv, &mu); /* bounded by the alarm */
    pthread_mutex_unlock(&mu);
}

/* ------------------------------------------------------------------ I/O forwarding */

/* --forward-io: a thread reads every rank's stdout and stderr, copies them to the host's own and
 * hands them to the library, as mpirun's daemons do; rank 0's stdin is fed by push_stdin. */
static int stdin_fd = -1; /* rank 0's stdin */

static void *forward_output(void *arg) {
    (void)arg;
    for (;;) {
        struct pollfd fds[2 * MAX_RANKS];
        int who[2 * MAX_RANKS], n = 0;
        pthread_mutex_lock(&mu);
        for (int r = 0; r < nranks; ++r)
            for (int c = 0; c < 2; ++c)
                if (children[r].io[c] >= 0) {
                    fds[n] = (struct pollfd){children[r].io[c], POLLIN, 0};
                    who[n++] = 2 * r + c;
                }
        pthread_mutex_unlock(&mu);
        if (n == 0) return NULL;
        if (poll(fds, (nfds_t)n, -1) < 0) continue;
        for (int i = 0; i < n; ++i) {
            if (!fds[i].revents) continue;
            int r = who[i] / 2, c = who[i] % 2;
            char buf[4096];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got <= 0) {
                pthread_mutex_lock(&mu);
                close(children[r].io[c]);
                children[r].io[c] = -1;
                pthread_cond_broadcast(&io_cv);
                pthread_mutex_unlock(&mu);
                continue;
            }
            pthread_mutex_lock(&mu);
            if (write(c == 0 ? 1 : 2, buf, (size_t)got) != got) { /* the test reads both */
            }
            pthread_mutex_unlock(&mu);
            pmix_proc_t source;
            PMIX_LOAD_PROCID(&source, nspace, (pmix_rank_t)r);
            pmix_byte_object_t bo = {buf, (size_t)got};
            PMIx_server_IOF_deliver(&source,
                                    c == 0 ? PMIX_FWD_STDOUT_CHANNEL : PMIX_FWD_STDERR_CHANNEL, &bo,
                                    NULL, 0, NULL, NULL);
        }
    }
}

/* A rank's output is all read (bounded: a grandchild may hold its pipes). */
static void wait_output_of(int rank) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&mu);
    while ((children[rank].io[0] >= 0 || children[rank].io[1] >= 0) &&
           pthread_cond_timedwait(&io_cv, &mu, &until) == 0) {
    }
    pthread_mutex_unlock(&mu);
}

bool host_push_stdin(const pmix_proc_t targets[], size_t ntargets, const pmix_byte_object_t *bo,
                     bool complete) {
    if (!forward_io) return false;
    bool rank0 = false;
    for (size_t t = 0; t < ntargets; ++t)
        rank0 |= targets[t].rank == 0 || targets[t].rank == PMIX_RANK_WILDCARD;
    pthread_mutex_lock(&mu);
    bool written = !rank0 || stdin_fd < 0 || !bo || bo->size == 0 ||
                   write(stdin_fd, bo->bytes, bo->size) == (ssize_t)bo->size;
    if (rank0 && complete && stdin_fd >= 0) {
        close(stdin_fd);
        stdin_fd = -1;
    }
    pthread_mutex_unlock(&mu);
    if (!written) say("stdin of rank 0: %s\n", strerror(errno));
    return true;
}

bool host_forwards_io(void) {
    return forward_io;
}

/* ------------------------------------------------------------------ upcalls */

static pmix_status_t client_connected(const pmix_proc_t *proc, void *server_object,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)cbfunc;
    (void)cbdata;
    if (!child_of(proc, server_object)) return PMIX_ERR_BAD_PARAM;
    if ((int)proc->rank == refuse_rank) {
        say("upcall client_connected %u refused\n", proc->rank);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    say("upcall client_connected %u %s\n", proc->rank, proc->nspace);
    return PMIX_SUCCESS; /* as Slurm's: no callback */
}

struct later {
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
};

static void *call_back_later(void *arg) {
    struct later *l = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL); /* a host's own thread, some time after the upcall returned */
    l->cbfunc(l->status, l->cbdata);
    free(l);
    return NULL;
}

static pmix_status_t complete(pmix_status_t status, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc && double_callbacks) { /* a buggy host: the second must be ignored */
        cbfunc(status, cbdata);
        cbfunc(status, cbdata);
        return PMIX_SUCCESS;
    }
    if (!cbfunc || !late_callbacks)
        return status == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : status;
    struct later *l = malloc(sizeof *l);
    *l = (struct later){cbfunc, cbdata, status};
    pthread_t t;
    pthread_create(&t, NULL, call_back_later, l);
    pthread_detach(t);
    return PMIX_SUCCESS;
}

static pmix_status_t client_finalized(const pmix_proc_t *proc, void *server_object,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!child_of(proc, server_object)) return PMIX_ERR_BAD_PARAM;
    say("upcall client_finalized %u\n", proc->rank);
    return complete(PMIX_SUCCESS, cbfunc, cbdata);
}

static int abort_status = -1; /* the first PMIx_Abort's status */

static pthread_cond_t ended_cv = PTHREAD_COND_INITIALIZER; /* a rank was reaped */

/* The rank that called PMIx_Abort, if it has not ended 10 s after the upcall (a bounded grace:
 * it normally exits at once; a slow exit, as under a sanitizer, must not be taken for a hang). */
static void *end_aborter(void *arg) {
    struct child *c = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&mu);
    while (!c->ended && pthread_cond_timedwait(&ended_cv, &mu, &until) == 0) {
    }
    pid_t pid = c->ended ? 0 : c->pid;
    pthread_mutex_unlock(&mu);
    if (pid > 0) kill(pid, SIGKILL);
    return NULL;
}

static pmix_status_t abort_fn(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)procs;
    struct child *c = child_of(proc, server_object);
    if (!c) return PMIX_ERR_BAD_PARAM;
    say("upcall abort %u status %d nprocs %zu msg %s\n", proc->rank, status, nprocs,
        msg ? msg : "(none)");
    /* As mpirun does: the job ends, and the host exits with the abort's status. The caller's
     * PMIx_Abort returns first; it is ended if it goes on (end_aborter). */
    pthread_mutex_lock(&mu);
    if (abort_status < 0) abort_status = status;
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < nranks; ++i)
        if (host_pid_of(i) > 0 && i != (int)proc->rank) kill(host_pid_of(i), SIGTERM);
    pthread_t t;
    pthread_create(&t, NULL, end_aborter, c);
    pthread_detach(t);
    return complete(PMIX_SUCCESS, cbfunc, cbdata);
}

static pmix_status_t fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata) {
    bool collect = false;
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA)) collect = PMIX_INFO_TRUE(&info[i]);
    pthread_mutex_lock(&mu);
    ++fences;
    pthread_mutex_unlock(&mu);
    say("upcall fence_nb nprocs %zu rank %d collect %d\n", nprocs, nprocs ? (int)procs[0].rank : -1,
        collect);
    /* The library's buffer is ours (malloc'd), as mpirun takes it. */
    struct waiting_fence w = {cbfunc, cbdata, data, ndata};
    if (nnodes == 1) {
        if (late_callbacks) {
            struct waiting_fence *l = malloc(sizeof *l);
            *l = w;
            pthread_t t;
            pthread_create(&t, NULL, call_fence_back, l);
            pthread_detach(t);
            return PMIX_SUCCESS;
        }
        /* From inside the upcall, as OpenPMIx's examples/server.c does. */
        cbfunc(PMIX_SUCCESS, w.mine, ndata, cbdata, free, w.mine);
        return PMIX_SUCCESS;
    }
    link_send('F', 0, 0, data, (uint32_t)ndata);
    pthread_mutex_lock(&mu);
    if (remote_out < remote_in) {
        struct part r = remote_parts[remote_out++ % 16];
        pthread_mutex_unlock(&mu);
        complete_fence(w, r);
    } else {
        waiting[waiting_in++ % 16] = w;
        pthread_mutex_unlock(&mu);
    }
    return PMIX_SUCCESS;
}

/* A client's event for beyond this node: to the other node, whose host publishes it there, with
 * its custom range (the procs after the range in the frame; at most 16) and its other infos (a
 * group's id and membership, the affected proc...). */
static pmix_status_t notify_event(pmix_status_t code, const pmix_proc_t *source,
                                  pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata) {
    say("upcall notify_event %d from %u range %d\n", code, source->rank, (int)range);
    if (nnodes > 1) {
        int32_t r = (int32_t)range;
        pmix_proc_t procs[16];
        size_t n = 0;
        for (size_t i = 0; i < ninfo; ++i) {
            if (!PMIX_CHECK_KEY(&info[i], PMIX_EVENT_CUSTOM_RANGE)) continue;
            if (info[i].value.type == PMIX_PROC && n < 16) {
                procs[n++] = *info[i].value.data.proc;
            } else if (info[i].value.type == PMIX_DATA_ARRAY &&
                       info[i].value.data.darray->type == PMIX_PROC) {
                const pmix_proc_t *p = info[i].value.data.darray->array;
                for (size_t k = 0; k < info[i].value.data.darray->size && n < 16; ++k)
                    procs[n++] = p[k];
            }
        }
        pmix_info_t rest[64];
        size_t nrest = 0;
        for (size_t i = 0; i < ninfo && nrest < 64; ++i)
            if (!PMIX_CHECK_KEY(&info[i], PMIX_EVENT_CUSTOM_RANGE)) rest[nrest++] = info[i];
        pmix_data_buffer_t buf;
        PMIX_DATA_BUFFER_CONSTRUCT(&buf);
        pmix_byte_object_t packed = {NULL, 0};
        if (PMIx_Data_pack(NULL, &buf, &nrest, 1, PMIX_SIZE) != PMIX_SUCCESS ||
            (nrest &&
             PMIx_Data_pack(NULL, &buf, rest, (int32_t)nrest, PMIX_INFO) != PMIX_SUCCESS) ||
            PMIx_Data_unload(&buf, &packed) != PMIX_SUCCESS)
            die("packing an event's infos", PMIX_ERR_PACK_FAILURE);
        PMIX_DATA_BUFFER_DESTRUCT(&buf);
        const uint32_t nprocs = (uint32_t)n;
        const size_t len = sizeof r + sizeof nprocs + n * sizeof procs[0] + packed.size;
        char *frame = malloc(len);
        memcpy(frame, &r, sizeof r);
        memcpy(frame + sizeof r, &nprocs, sizeof nprocs);
        memcpy(frame + sizeof r + sizeof nprocs, procs, n * sizeof procs[0]);
        if (packed.size) memcpy(frame + len - packed.size, packed.bytes, packed.size);
        link_send('E', source->rank, code, frame, (uint32_t)len);
        free(frame);
        PMIX_BYTE_OBJECT_DESTRUCT(&packed);
    }
    return complete(PMIX_SUCCESS, cbfunc, cbdata);
}

static void load_string(pmix_info_t *i, const char *key, const char *value);
static void load_u32(pmix_info_t *i, const char *key, uint32_t value);

/* spawn: a new job on this node, registered and started as the first one was, from inside the
 * upcall; the callback brings its namespace. */
static void job_nspace(int job, pmix_nspace_t out) {
    char name[PMIX_MAX_NSLEN + 32];
    snprintf(name, sizeof name, "%s-spawned-%d", nspace, job);
    PMIX_LOAD_NSPACE(out, name);
}

static pmix_status_t spawn_fn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata) {
    int np = 0;
    for (size_t a = 0; a < napps; ++a) np += apps[a].maxprocs;
    /* The debugger's stops go with the new job's registration, as a resource manager's do. */
    const pmix_info_t *stops[2];
    size_t nstops = 0;
    bool notify_completion = false;
    for (size_t i = 0; i < ninfo; ++i)
        if (nstops < 2 && (PMIX_CHECK_KEY(&job_info[i], PMIX_DEBUG_STOP_IN_INIT) ||
                           PMIX_CHECK_KEY(&job_info[i], PMIX_DEBUG_STOP_IN_APP)))
            stops[nstops++] = &job_info[i];
        else if (PMIX_CHECK_KEY(&job_info[i], PMIX_NOTIFY_COMPLETION))
            notify_completion = PMIX_INFO_TRUE(&job_info[i]);
    /* A tool's debugger daemons: which job they debug, how many per node. */
    char daemons[PMIX_MAX_NSLEN + 64] = "";
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&job_info[i], PMIX_DEBUG_TARGET) && job_info[i].value.type == PMIX_PROC)
            snprintf(daemons, sizeof daemons, " daemons of %s",
                     job_info[i].value.data.proc->nspace);
    for (size_t i = 0; i < ninfo && daemons[0]; ++i)
        if (PMIX_CHECK_KEY(&job_info[i], PMIX_DEBUG_DAEMONS_PER_NODE) &&
            job_info[i].value.type == PMIX_UINT16)
            snprintf(daemons + strlen(daemons), sizeof daemons - strlen(daemons), " per node %u",
                     (unsigned)job_info[i].value.data.uint16);
    say("upcall spawn %u napps %zu np %d cmd %s%s%s by %s%s\n", proc->rank, napps, np,
        napps ? apps[0].cmd : "-", nstops ? " with " : "", nstops ? stops[0]->key : "",
        proc->nspace, daemons);
    pthread_mutex_lock(&mu);
    bool room = np >= 1 && nspawned + np <= MAX_SPAWNED && nspawned_jobs < MAX_SPAWNED;
    int job = nspawned_jobs;
    if (room) {
        ++nspawned_jobs;
        spawned_jobs[job] = (struct spawned_job){*proc, notify_completion, false, np, 0, false};
    }
    pthread_mutex_unlock(&mu);
    if (!room) return PMIX_ERR_OUT_OF_RESOURCE;
    pmix_nspace_t child_ns;
    job_nspace(job, child_ns);
    char ranks[64] = "", *regex = NULL, *ppn = NULL;
    for (int r = 0; r < np; ++r)
        snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), r ? ",%d" : "%d", r);
    PMIx_generate_regex(node_name(node), &regex);
    PMIx_generate_ppn(ranks, &ppn);
    pmix_info_t info[9];
    load_u32(&info[0], PMIX_JOB_SIZE, (uint32_t)np);
    load_u32(&info[1], PMIX_UNIV_SIZE, (uint32_t)np);
    load_u32(&info[2], PMIX_LOCAL_SIZE, (uint32_t)np);
    load_string(&info[3], PMIX_NODE_MAP, regex);
    load_string(&info[4], PMIX_PROC_MAP, ppn);
    load_string(&info[5], PMIX_LOCAL_PEERS, ranks);
    PMIX_INFO_LOAD(&info[6], PMIX_PARENT_ID, proc, PMIX_PROC);
    for (size_t i = 0; i < nstops; ++i) PMIX_INFO_XFER(&info[7 + i], stops[i]);
    const size_t ninfo_child = 7 + nstops;
    /* From inside the upcall, with NULL callbacks: done when they return. */
    pmix_status_t rc = PMIx_server_register_nspace(child_ns, np, info, ninfo_child, NULL, NULL);
    for (size_t i = 0; i < ninfo_child; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    free(regex);
    free(ppn);
    if (rc != PMIX_OPERATION_SUCCEEDED) return rc;
    int rank = 0;
    for (size_t a = 0; a < napps; ++a)
        for (int k = 0; k < apps[a].maxprocs; ++k, ++rank) {
            pthread_mutex_lock(&mu);
            spawned_job_of[nspawned] = job;
            struct child *c = &spawned[nspawned++];
            ++spawned_live;
            pthread_mutex_unlock(&mu);
            c->rank = rank;
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, child_ns, (pmix_rank_t)rank);
            rc = PMIx_server_register_client(&p, getuid(), getgid(), c, NULL, NULL);
            if (rc != PMIX_OPERATION_SUCCEEDED) die("register_client of a spawned rank", rc);
            size_t nenv = 0, napp_env = 0;
            while (environ[nenv]) ++nenv;
            while (apps[a].env && apps[a].env[napp_env]) ++napp_env;
            char **env = calloc(nenv + napp_env + 1, sizeof *env);
            for (size_t e = 0; e < nenv; ++e) env[e] = strdup(environ[e]);
            for (size_t e = 0; e < napp_env; ++e) env[nenv + e] = strdup(apps[a].env[e]);
            if ((rc = PMIx_server_setup_fork(&p, &env)) != PMIX_SUCCESS)
                die("setup_fork of a spawned rank", rc);
            pid_t pid = fork();
            if (pid == 0) {
                execve(apps[a].cmd, apps[a].argv, env);
                perror("execve");
                _exit(127);
            }
            pthread_mutex_lock(&mu);
            c->pid = pid;
            pthread_mutex_unlock(&mu);
            for (char **e = env; *e; ++e) free(*e);
            free(env);
        }
    cbfunc(PMIX_SUCCESS, child_ns, cbdata);
    return PMIX_SUCCESS;
}

/* A spawned job's last process ended: the host deregisters the job, and when its spawner asked
 * (PMIX_NOTIFY_COMPLETION) raises PMIX_EVENT_JOB_END as PRRTE and ORTE do: from the host's own
 * process, ranged to the spawner alone (PMIX_EVENT_CUSTOM_RANGE), the job (its wildcard rank) as
 * the affected process, its termination status (PRRTE's: PMIX_SUCCESS, _JOB_NON_ZERO_TERM,
 * _JOB_ABORTED_BY_SIG) and exit code (the first failing process's, 128 + signal), not for
 * default handlers. The spawner runs on this node (a job runs where its spawner does here); a
 * resource manager whose job ends on another node raises it where the spawner runs. Reported as
 * "job end NSPACE to NSPACE:RANK status S exit E: RC". */
static void spawned_job_ended(int job) {
    pmix_nspace_t ns;
    job_nspace(job, ns);
    pthread_mutex_lock(&mu);
    struct spawned_job j = spawned_jobs[job];
    spawned_jobs[job].deregistered = true;
    pthread_mutex_unlock(&mu);
    PMIx_server_deregister_nspace(ns, NULL, NULL); /* done when it returns */
    if (!j.notify_completion) return;
    pmix_status_t term = j.exit_code == 0 ? PMIX_SUCCESS
                         : j.signalled    ? PMIX_ERR_JOB_ABORTED_BY_SIG
                                          : PMIX_ERR_JOB_NON_ZERO_TERM;
    pmix_proc_t affected;
    PMIX_LOAD_PROCID(&affected, ns, PMIX_RANK_WILDCARD);
    bool yes = true;
    pmix_info_t info[5];
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_CUSTOM_RANGE, &j.parent, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
    PMIX_INFO_LOAD(&info[2], PMIX_JOB_TERM_STATUS, &term, PMIX_STATUS);
    PMIX_INFO_LOAD(&info[3], PMIX_EXIT_CODE, &j.exit_code, PMIX_INT);
    PMIX_INFO_LOAD(&info[4], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    pmix_status_t rc =
        PMIx_Notify_event(PMIX_EVENT_JOB_END, NULL, PMIX_RANGE_CUSTOM, info, 5, NULL, NULL);
    for (int i = 0; i < 5; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    say("job end %s to %s:%u status %d exit %d: %s\n", ns, j.parent.nspace, j.parent.rank, term,
        j.exit_code, PMIx_Error_string(rc));
}

/* A spawned process ended: its job's bookkeeping. True when pid was one. */
static bool reap_spawned(pid_t pid, int st) {
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    int ended_job = -1;
    bool found = false;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nspawned && !found; ++i)
        if (spawned[i].pid == pid) {
            spawned[i].pid = -1;
            spawned[i].ended = true;
            --spawned_live;
            found = true;
            struct spawned_job *j = &spawned_jobs[spawned_job_of[i]];
            if (code != 0 && j->exit_code == 0) {
                j->exit_code = code;
                j->signalled = !WIFEXITED(st);
            }
            if (--j->live == 0) ended_job = spawned_job_of[i];
        }
    pthread_mutex_unlock(&mu);
    if (found) say("spawned child exit %d\n", code);
    if (ended_job >= 0) spawned_job_ended(ended_job);
    return found;
}

static int spawned_running(void) {
    pthread_mutex_lock(&mu);
    int n = spawned_live;
    pthread_mutex_unlock(&mu);
    return n;
}

/* The jobs whose processes did not all end (none started, or the host gives up). */
static void deregister_spawned_jobs(void) {
    for (int j = 0; j < nspawned_jobs; ++j) {
        pmix_nspace_t ns;
        job_nspace(j, ns);
        pthread_mutex_lock(&mu);
        bool gone = spawned_jobs[j].deregistered;
        pthread_mutex_unlock(&mu);
        if (!gone) PMIx_server_deregister_nspace(ns, NULL, NULL);
    }
}

/* connect, disconnect: nothing to carry between nodes here (every namespace is registered on
 * both); a resource manager would make the other participants' namespaces known first. */
static pmix_status_t connect_fn(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)procs;
    (void)info;
    (void)ninfo;
    say("upcall connect nprocs %zu\n", nprocs);
    return complete(PMIX_SUCCESS, cbfunc, cbdata);
}

static pmix_status_t disconnect_fn(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata) {
    (void)procs;
    (void)info;
    (void)ninfo;
    say("upcall disconnect nprocs %zu\n", nprocs);
    return complete(PMIX_SUCCESS, cbfunc, cbdata);
}

/* group: a construct or destruct whose members run on both nodes crosses them as fence_nb's
 * parts do, as PRRTE's group upcall gathers them: this node's PMIX_GROUP_ENDPT_DATA (the library's
 * part, opaque here) goes to the other node, and the callback's results carry both nodes' parts
 * concatenated under the same key, with node0's context id (assigned in one place, as mpirun's
 * HNP does). Paired in order: both nodes construct such groups in the same order. A group of one
 * node's processes gets that node's next context id at once (node1's from 1000000 on). */
static size_t next_context_id = 4242, next_local_context_id = 1000000;

struct group_part {
    char *data;
    size_t len;
    uint32_t context_id; /* node0's: the group's */
    int32_t assign;
};
struct waiting_group {
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    struct group_part mine;
    bool construct;
};
static struct group_part remote_groups[16];
static int remote_groups_in, remote_groups_out;
static struct waiting_group waiting_groups[16];
static int waiting_groups_in, waiting_groups_out;

static bool spans_nodes(const pmix_proc_t procs[], size_t nprocs) {
    for (size_t i = 0; nnodes > 1 && i < nprocs; ++i) {
        if (!PMIX_CHECK_NSPACE(procs[i].nspace, nspace)) continue; /* spawned: this node's */
        if (procs[i].rank == PMIX_RANK_WILDCARD ? nranks > 1 : node_of((int)procs[i].rank) != node)
            return true;
    }
    return false;
}

/* Both nodes' parts are here: node0's first. */
static void complete_group(struct waiting_group w, struct group_part r) {
    const struct group_part *first = node == 0 ? &w.mine : &r, *second = node == 0 ? &r : &w.mine;
    size_t n = first->len + second->len, nresults = 0;
    char *all = malloc(n ? n : 1);
    if (first->len) memcpy(all, first->data, first->len); /* a destruct's parts have none */
    if (second->len) memcpy(all + first->len, second->data, second->len);
    pmix_info_t results[2];
    size_t context_id = first->context_id;
    if (w.construct && (w.mine.assign || r.assign))
        PMIX_INFO_LOAD(&results[nresults++], PMIX_GROUP_CONTEXT_ID, &context_id, PMIX_SIZE);
    if (w.construct && n > 0) {
        pmix_byte_object_t bo = {all, n};
        PMIX_INFO_LOAD(&results[nresults++], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    }
    say("group exchanged %zu bytes context id %zu\n", n, nresults ? context_id : (size_t)0);
    /* The results are ours again once the callback returns. */
    w.cbfunc(PMIX_SUCCESS, nresults ? results : NULL, nresults, w.cbdata, NULL, NULL);
    for (size_t i = 0; i < nresults; ++i) PMIX_INFO_DESTRUCT(&results[i]);
    free(all);
    free(w.mine.data);
    free(r.data);
}

/* The other node's part ('G': id its context id, status whether it asks for one). */
static void group_part_arrived(const struct frame *f, char *data) {
    struct group_part r = {data, f->len, f->id, f->status};
    pthread_mutex_lock(&mu);
    if (waiting_groups_out < waiting_groups_in) {
        struct waiting_group w = waiting_groups[waiting_groups_out++ % 16];
        pthread_mutex_unlock(&mu);
        complete_group(w, r);
    } else {
        remote_groups[remote_groups_in++ % 16] = r;
        pthread_mutex_unlock(&mu);
    }
}

static pmix_status_t group_fn(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                              size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    bool assign = false;
    const pmix_byte_object_t *part = NULL;
    for (size_t i = 0; i < ndirs; ++i)
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ASSIGN_CONTEXT_ID))
            assign = PMIX_INFO_TRUE(&directives[i]);
        else if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ENDPT_DATA) &&
                 directives[i].value.type == PMIX_BYTE_OBJECT)
            part = &directives[i].value.data.bo;
    say("upcall group %s %s nprocs %zu assign %d\n",
        op == PMIX_GROUP_CONSTRUCT ? "construct" : "destruct", grp, nprocs, assign);
    const bool construct = op == PMIX_GROUP_CONSTRUCT;
    if (spans_nodes(procs, nprocs)) {
        struct waiting_group w = {
            cbfunc, cbdata, {NULL, part ? part->size : 0, 0, assign}, construct};
        w.mine.data = malloc(w.mine.len ? w.mine.len : 1);
        if (w.mine.len) memcpy(w.mine.data, part->bytes, w.mine.len);
        pthread_mutex_lock(&mu);
        if (node == 0 && construct) w.mine.context_id = (uint32_t)next_context_id++;
        pthread_mutex_unlock(&mu);
        link_send('G', w.mine.context_id, assign, w.mine.data, (uint32_t)w.mine.len);
        pthread_mutex_lock(&mu);
        if (remote_groups_out < remote_groups_in) {
            struct group_part r = remote_groups[remote_groups_out++ % 16];
            pthread_mutex_unlock(&mu);
            complete_group(w, r);
        } else {
            waiting_groups[waiting_groups_in++ % 16] = w;
            pthread_mutex_unlock(&mu);
        }
        return PMIX_SUCCESS;
    }
    pmix_info_t result;
    pthread_mutex_lock(&mu);
    size_t context_id = 0;
    if (construct && assign) context_id = node == 0 ? next_context_id++ : next_local_context_id++;
    pthread_mutex_unlock(&mu);
    PMIX_INFO_LOAD(&result, PMIX_GROUP_CONTEXT_ID, &context_id, PMIX_SIZE);
    /* From inside the upcall; the result is ours again once the callback returns. */
    cbfunc(PMIX_SUCCESS, construct && assign ? &result : NULL, construct && assign ? 1 : 0, cbdata,
           NULL, NULL);
    PMIX_INFO_DESTRUCT(&result);
    return PMIX_SUCCESS;
}

/* register_events, deregister_events: the environment events the node's clients want. When a
 * handler wants kEnviroCode, the host delivers two events once it called back: kEnviroCode to the
 * job's namespace and kEnviroOne to rank 1 alone (a custom range), as a resource manager reports
 * what it sees of the environment. */
static const pmix_status_t kEnviroCode = PMIX_EXTERNAL_ERR_BASE - 78;
static const pmix_status_t kEnviroOne = PMIX_EXTERNAL_ERR_BASE - 79;

static void say_codes(const char *upcall, const pmix_status_t *codes, size_t ncodes) {
    char list[256] = "";
    for (size_t i = 0; i < ncodes && strlen(list) < sizeof list - 16; ++i)
        snprintf(list + strlen(list), sizeof list - strlen(list), i ? ",%d" : "%d", codes[i]);
    say("upcall %s ncodes %zu codes %s\n", upcall, ncodes, ncodes ? list : "all");
}

static void deliver_enviro_events(void) {
    pmix_proc_t source, one;
    PMIX_LOAD_PROCID(&source, nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&one, nspace, 1);
    pmix_info_t range;
    PMIX_INFO_LOAD(&range, PMIX_EVENT_CUSTOM_RANGE, &one, PMIX_PROC);
    pmix_status_t rc =
        PMIx_Notify_event(kEnviroOne, &source, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&range);
    say("delivered event %d to rank 1: %s\n", kEnviroOne, PMIx_Error_string(rc));
    rc = PMIx_Notify_event(kEnviroCode, &source, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
    say("delivered event %d to the namespace: %s\n", kEnviroCode, PMIx_Error_string(rc));
}

static pmix_status_t register_events(pmix_status_t *codes, size_t ncodes, const pmix_info_t info[],
                                     size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    say_codes("register_events", codes, ncodes);
    bool enviro = false;
    for (size_t i = 0; i < ncodes; ++i) enviro |= codes[i] == kEnviroCode;
    if (!enviro) return complete(PMIX_SUCCESS, cbfunc, cbdata);
    cbfunc(PMIX_SUCCESS, cbdata); /* agreed: the events come after, from inside the upcall */
    deliver_enviro_events();
    return PMIX_SUCCESS;
}

static pmix_status_t deregister_events(pmix_status_t *codes, size_t ncodes, pmix_op_cbfunc_t cbfunc,
                                       void *cbdata) {
    say_codes("deregister_events", codes, ncodes);
    return complete(PMIX_SUCCESS, cbfunc, cbdata);
}

/* publish, lookup, unpublish: this host's directory (one node's; mpirun's HNP keeps one for the
 * job). A lookup with PMIX_WAIT that does not find every key waits until they are published, as
 * mpirun's data server does; without it, what is not there is PMIX_ERR_NOT_FOUND at once. */
#define MAX_PUBLISHED 32
static struct {
    bool used;
    pmix_key_t key;
    pmix_proc_t owner;
    pmix_value_t value;
} directory[MAX_PUBLISHED];

#define MAX_WAITING_LOOKUPS 16
static struct waiting_lookup {
    bool used;
    pmix_proc_t proc;
    char **keys; /* NULL-terminated, ours */
    pmix_lookup_cbfunc_t cbfunc;
    void *cbdata;
} waiting_lookups[MAX_WAITING_LOOKUPS];

/* The published data of keys, or NULL when one is missing (with mu held). */
static pmix_pdata_t *find_published(char **keys, size_t nkeys, size_t *n) {
    pmix_pdata_t *found = NULL;
    *n = 0;
    if (nkeys) PMIX_PDATA_CREATE(found, nkeys);
    for (size_t k = 0; k < nkeys; ++k)
        for (int d = 0; d < MAX_PUBLISHED; ++d)
            if (directory[d].used && PMIX_CHECK_KEY(&directory[d], keys[k])) {
                PMIX_LOAD_KEY(found[*n].key, keys[k]);
                found[*n].proc = directory[d].owner;
                PMIx_Value_xfer(&found[*n].value, &directory[d].value);
                ++*n;
                break;
            }
    return found;
}

/* After a publish: the waiting lookups whose keys are all there now are answered. */
static void answer_waiting_lookups(void) {
    for (int w = 0; w < MAX_WAITING_LOOKUPS; ++w) {
        pthread_mutex_lock(&mu);
        struct waiting_lookup l = waiting_lookups[w];
        size_t nkeys = 0, n = 0;
        while (l.used && l.keys[nkeys]) ++nkeys;
        pmix_pdata_t *found = l.used ? find_published(l.keys, nkeys, &n) : NULL;
        bool all = l.used && n == nkeys;
        if (all) waiting_lookups[w].used = false;
        pthread_mutex_unlock(&mu);
        if (all) {
            say("answered waiting lookup %u keys %zu\n", l.proc.rank, nkeys);
            l.cbfunc(PMIX_SUCCESS, found, n, l.cbdata);
            for (size_t k = 0; k < nkeys; ++k) free(l.keys[k]);
            free(l.keys);
        }
        if (found) PMIX_PDATA_FREE(found, nkeys);
    }
}

static pmix_status_t publish_fn(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata) {
    int range = -1, stored = 0;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_RANGE)) {
            range = (int)info[i].value.data.range;
            continue;
        }
        if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE) || PMIX_CHECK_KEY(&info[i], PMIX_USERID) ||
            PMIX_CHECK_KEY(&info[i], PMIX_GRPID))
            continue;
        for (int d = 0; d < MAX_PUBLISHED; ++d) {
            if (directory[d].used) continue;
            directory[d].used = true;
            PMIX_LOAD_KEY(directory[d].key, info[i].key);
            directory[d].owner = *proc;
            PMIx_Value_xfer(&directory[d].value, &info[i].value);
            ++stored;
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    say("upcall publish %u range %d keys %d\n", proc->rank, range, stored);
    pmix_status_t rc = complete(PMIX_SUCCESS, cbfunc, cbdata);
    answer_waiting_lookups();
    return rc;
}

static pmix_status_t lookup_fn(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata) {
    bool wait = false;
    for (size_t i = 0; i < ninfo; ++i) wait |= PMIX_CHECK_KEY(&info[i], PMIX_WAIT);
    size_t nkeys = 0, n = 0;
    while (keys && keys[nkeys]) ++nkeys;
    say("upcall lookup %u keys %zu%s\n", proc->rank, nkeys, wait ? " wait" : "");
    pthread_mutex_lock(&mu);
    pmix_pdata_t *found = find_published(keys, nkeys, &n);
    if (wait && n < nkeys) {
        for (int w = 0; w < MAX_WAITING_LOOKUPS; ++w) {
            if (waiting_lookups[w].used) continue;
            char **mine = calloc(nkeys + 1, sizeof *mine);
            for (size_t k = 0; k < nkeys; ++k) mine[k] = strdup(keys[k]);
            waiting_lookups[w] = (struct waiting_lookup){true, *proc, mine, cbfunc, cbdata};
            pthread_mutex_unlock(&mu);
            if (found) PMIX_PDATA_FREE(found, nkeys);
            return PMIX_SUCCESS; /* answered by a later publish */
        }
        pthread_mutex_unlock(&mu);
        if (found) PMIX_PDATA_FREE(found, nkeys);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    pthread_mutex_unlock(&mu);
    /* From inside the upcall; the data is ours again once the callback returns. */
    cbfunc(n ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, found, n, cbdata);
    if (found) PMIX_PDATA_FREE(found, nkeys);
    return PMIX_SUCCESS;
}

static pmix_status_t unpublish_fn(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    int removed = 0;
    pthread_mutex_lock(&mu);
    for (int d = 0; d < MAX_PUBLISHED; ++d) {
        if (!directory[d].used || !PMIX_CHECK_PROCID(&directory[d].owner, proc)) continue;
        bool named = keys == NULL;
        for (size_t k = 0; keys && keys[k]; ++k) named |= PMIX_CHECK_KEY(&directory[d], keys[k]);
        if (!named) continue;
        PMIX_VALUE_DESTRUCT(&directory[d].value);
        directory[d].used = false;
        ++removed;
    }
    pthread_mutex_unlock(&mu);
    say("upcall unpublish %u removed %d\n", proc->rank, removed);
    return complete(removed ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, cbfunc, cbdata);
}

static pmix_status_t direct_modex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                  pmix_modex_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    say("upcall direct_modex %u\n", proc->rank);
    if (nnodes == 1 || node_of((int)proc->rank) == node) return PMIX_ERR_NOT_FOUND;
    pthread_mutex_lock(&mu);
    uint32_t id = next_dmodex++;
    dmodex[id % 256] = (struct dmodex_wait){cbfunc, cbdata};
    pthread_mutex_unlock(&mu);
    uint32_t rank = proc->rank;
    link_send('D', id, 0, &rank, sizeof rank);
    return PMIX_SUCCESS;
}

/* ------------------------------------------------------------------ registration */

static void load_string(pmix_info_t *i, const char *key, const char *value) {
    PMIX_INFO_LOAD(i, key, value, PMIX_STRING);
}

static void load_u32(pmix_info_t *i, const char *key, uint32_t value) {
    PMIX_INFO_LOAD(i, key, &value, PMIX_UINT32);
}

static void load_u16(pmix_info_t *i, const char *key, uint16_t value) {
    PMIX_INFO_LOAD(i, key, &value, PMIX_UINT16);
}

static void load_rank(pmix_info_t *i, const char *key, pmix_rank_t value) {
    PMIX_INFO_LOAD(i, key, &value, PMIX_PROC_RANK);
}

static void done_cb(pmix_status_t status, void *cbdata) {
    _Atomic int *flag = cbdata;
    *flag = status == PMIX_SUCCESS ? 1 : -1;
}

static void wait_flag(_Atomic int *flag, const char *what) {
    for (int ms = 0; *flag == 0; ++ms) {
        if (ms > 10000) die(what, PMIX_ERR_TIMEOUT);
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (*flag < 0) die(what, PMIX_ERROR);
}

static const char *node_name(int n) {
    static char host[256];
    if (nnodes > 1) return n == 0 ? "node0" : "node1";
    gethostname(host, sizeof host - 1);
    return host;
}

static void register_job(void) {
    char nodes[600], ranks[MAX_RANKS * 4 + 8] = "", peers[MAX_RANKS * 4 + 8] = "";
    char *regex = NULL, *ppn = NULL;
    uint32_t local = 0;
    if (nnodes == 1)
        snprintf(nodes, sizeof nodes, "%s", node_name(0));
    else
        snprintf(nodes, sizeof nodes, "%s,%s", node_name(0), node_name(1));
    for (int r = 0; r < nranks; ++r) {
        if (r > 0) strcat(ranks, node_of(r) != node_of(r - 1) ? ";" : ",");
        snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), "%d", r);
        if (node_of(r) == node) {
            snprintf(peers + strlen(peers), sizeof peers - strlen(peers), local ? ",%d" : "%d", r);
            ++local;
        }
    }
    pmix_status_t rc = PMIx_generate_regex(nodes, &regex);
    if (rc != PMIX_SUCCESS) die("PMIx_generate_regex", rc);
    if ((rc = PMIx_generate_ppn(ranks, &ppn)) != PMIX_SUCCESS) die("PMIx_generate_ppn", rc);

    size_t ninfo = 9 + (size_t)nranks + (stop_in_init ? 1 : 0);
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    load_u32(&info[0], PMIX_JOB_SIZE, (uint32_t)nranks);
    load_u32(&info[1], PMIX_UNIV_SIZE, (uint32_t)nranks);
    load_u32(&info[2], PMIX_LOCAL_SIZE, local);
    load_string(&info[3], PMIX_NODE_MAP, regex);
    load_string(&info[4], PMIX_PROC_MAP, ppn);
    load_string(&info[5], PMIX_LOCAL_PEERS, peers);
    load_string(&info[6], "host.greeting", "hello from the host");
    load_u32(&info[7], PMIX_MAX_PROCS, (uint32_t)nranks);
    load_string(&info[8], PMIX_JOBID, "host-job-1");
    for (int r = 0, first = 0; r < nranks; ++r) {
        if (r > 0 && node_of(r) != node_of(r - 1)) first = r;
        pmix_data_array_t *arr;
        PMIX_DATA_ARRAY_CREATE(arr, 5, PMIX_INFO);
        pmix_info_t *pi = arr->array;
        load_rank(&pi[0], PMIX_RANK, (pmix_rank_t)r);
        load_u16(&pi[1], PMIX_LOCAL_RANK, (uint16_t)(r - first));
        load_u16(&pi[2], PMIX_NODE_RANK, (uint16_t)(r - first));
        load_u32(&pi[3], PMIX_NODEID, (uint32_t)node_of(r));
        char word[32];
        snprintf(word, sizeof word, "proc-%d", r);
        load_string(&pi[4], "host.word", word);
        PMIX_INFO_LOAD(&info[9 + r], PMIX_PROC_DATA, arr, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(arr);
    }
    if (stop_in_init) { /* chosen ranks are not supported: refused, nothing registered */
        pmix_rank_t first = 0;
        PMIX_INFO_LOAD(&info[9 + nranks], PMIX_DEBUG_STOP_IN_INIT, &first, PMIX_PROC_RANK);
        rc = PMIx_server_register_nspace(nspace, (int)local, info, ninfo, NULL, NULL);
        if (rc != PMIX_ERR_NOT_SUPPORTED) die("register_nspace stopping rank 0 alone", rc);
        PMIX_INFO_DESTRUCT(&info[9 + nranks]);
        PMIX_INFO_LOAD(&info[9 + nranks], PMIX_DEBUG_STOP_IN_INIT, &stop_in_init, PMIX_BOOL);
    }
    _Atomic int flag = 0;
    rc = PMIx_server_register_nspace(nspace, (int)local, info, ninfo, done_cb, (void *)&flag);
    if (rc != PMIX_SUCCESS) die("PMIx_server_register_nspace", rc);
    wait_flag(&flag, "register_nspace callback");
    PMIX_INFO_FREE(info, ninfo);
    free(regex);
    free(ppn);
}

/* PMIx_server_collect_inventory: the node's name and its topology, as a scheduler would gather
 * them from every node. */
static void inventory_cb(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    const char *host = "?";
    size_t xml = 0;
    for (size_t i = 0; i < ninfo; ++i) {
        if (info[i].value.type != PMIX_STRING || !info[i].value.data.string) continue;
        if (PMIX_CHECK_KEY(&info[i], PMIX_HOSTNAME)) host = info[i].value.data.string;
        if (PMIX_CHECK_KEY(&info[i], "pmix.hwlocxml2") &&
            strstr(info[i].value.data.string, "<topology")) {
            xml = strlen(info[i].value.data.string);
            free(inventory_xml);
            inventory_xml = strdup(info[i].value.data.string);
        }
    }
    say("inventory host %s topology %zu bytes: %s\n", host, xml, PMIx_Error_string(status));
    if (release_fn) release_fn(release_cbdata);
    *(_Atomic int *)cbdata = 1;
}

static void collect_inventory(void) {
    _Atomic int flag = 0;
    pmix_status_t rc = PMIx_server_collect_inventory(NULL, 0, inventory_cb, (void *)&flag);
    if (rc != PMIX_SUCCESS) die("PMIx_server_collect_inventory", rc);
    wait_flag(&flag, "collect_inventory callback");
}

/* --resources: what a resource manager registers beside its jobs, for every job registered
 * afterwards: the cluster's id, a key the job's own registration overrides ("host.greeting"), one
 * it takes back ("host.gone"), the other node's devices (its NIC taken back), and the other node's
 * inventory. The two test "nodes" are one machine: this node's topology stands for the other's. */
static void register_resources(void) {
    const char *other = node_name(1 - node);
    char gpu[300];
    snprintf(gpu, sizeof gpu, "gpu-of-%s", other);
    pmix_info_t info[4];
    load_string(&info[0], PMIX_CLUSTER_ID, "test-cluster");
    load_string(&info[1], "host.greeting", "the resources' greeting");
    load_string(&info[2], "host.gone", "taken back");
    pmix_data_array_t *dev;
    PMIX_DATA_ARRAY_CREATE(dev, 3, PMIX_INFO);
    pmix_info_t *d = dev->array;
    load_string(&d[0], PMIX_HOSTNAME, other);
    load_string(&d[1], "host.node.gpu", gpu);
    load_string(&d[2], "host.node.nic", "nic0");
    PMIX_INFO_LOAD(&info[3], PMIX_NODE_INFO_ARRAY, dev, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(dev);
    pmix_status_t rc = PMIx_server_register_resources(info, 4, NULL, NULL);
    if (rc != PMIX_OPERATION_SUCCEEDED) die("PMIx_server_register_resources", rc);
    PMIX_INFO_DESTRUCT(&info[3]);

    /* A node's array must name its node. */
    PMIX_DATA_ARRAY_CREATE(dev, 1, PMIX_INFO);
    load_string(&((pmix_info_t *)dev->array)[0], "host.node.gpu", gpu);
    PMIX_INFO_LOAD(&info[3], PMIX_NODE_INFO_ARRAY, dev, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(dev);
    rc = PMIx_server_register_resources(&info[3], 1, NULL, NULL);
    if (rc != PMIX_ERR_BAD_PARAM) die("register_resources of a node array naming no node", rc);
    PMIX_INFO_DESTRUCT(&info[3]);

    /* Taken back: a key, and one device of the other node (by its node and value). */
    pmix_info_t gone[2];
    load_string(&gone[0], "host.gone", "");
    PMIX_DATA_ARRAY_CREATE(dev, 2, PMIX_INFO);
    d = dev->array;
    load_string(&d[0], PMIX_HOSTNAME, other);
    load_string(&d[1], "host.node.nic", "nic0");
    PMIX_INFO_LOAD(&gone[1], PMIX_NODE_INFO_ARRAY, dev, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(dev);
    _Atomic int flag = 0;
    rc = PMIx_server_deregister_resources(gone, 2, done_cb, (void *)&flag);
    if (rc != PMIX_SUCCESS) die("PMIx_server_deregister_resources", rc);
    wait_flag(&flag, "deregister_resources callback");

    /* The other node's inventory, as a scheduler's host gathers them. */
    if (!inventory_xml) die("deliver_inventory without a collected inventory", PMIX_ERROR);
    pmix_info_t inv[2];
    load_string(&inv[0], PMIX_HOSTNAME, other);
    load_string(&inv[1], "pmix.hwlocxml2", inventory_xml);
    rc = PMIx_server_deliver_inventory(inv, 2, NULL, 0, NULL, NULL);
    if (rc != PMIX_OPERATION_SUCCEEDED) die("PMIx_server_deliver_inventory", rc);
    for (int k = 0; k < 3; ++k) PMIX_INFO_DESTRUCT(&info[k]);
    for (int k = 0; k < 2; ++k) {
        PMIX_INFO_DESTRUCT(&gone[k]);
        PMIX_INFO_DESTRUCT(&inv[k]);
    }
    say("resources registered\n");
}

/* Where this node's server listens (PMIX_SERVER_URI, what a tool given PMIX_SERVER_URI reaches),
 * for the tests that talk to it. */
static void say_server_uri(void) {
    pmix_query_t query;
    PMIX_QUERY_CONSTRUCT(&query);
    char *keys[] = {PMIX_SERVER_URI, NULL};
    query.keys = keys;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Query_info(&query, 1, &results, &nresults);
    if (rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_STRING)
        say("server uri %s\n", results[0].value.data.string);
    else
        say("server uri unknown: %s\n", PMIx_Error_string(rc));
    if (results) PMIX_INFO_FREE(results, nresults);
}

static void on_alarm(int sig) {
    (void)sig;
    const char msg[] = "server_host: timed out\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(99);
    for (int i = 0; i < nranks; ++i)
        if (children[i].pid > 0) kill(children[i].pid, SIGKILL);
    _exit(99);
}

/* PMIX_READY_FOR_DEBUG: reported ("ready for debug NSPACE ranks R,R..." or "ranks *", the
 * affected procs); a job this host spawned stopped in init (its spawner asked for it), and with
 * --release-ready any job, is released by the host (PMIx_Notify_event of PMIX_DEBUGGER_RELEASE),
 * as a resource manager relays its debugger's release. The host finalizes once no such handler
 * runs (ready_handlers): a handler must complete (cbfunc) before PMIx_Finalize returns
 * (docs/events.md, "Handlers and PMIx_Finalize"). */
static int ready_handlers; /* under mu */
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;

static void on_ready_for_debug(size_t id, pmix_status_t status, const pmix_proc_t *source,
                               pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                               size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                               void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    ++ready_handlers;
    pthread_mutex_unlock(&mu);
    const pmix_proc_t *procs = NULL;
    size_t nprocs = 0;
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC) {
            procs = info[i].value.data.proc;
            nprocs = 1;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
                   info[i].value.type == PMIX_DATA_ARRAY &&
                   info[i].value.data.darray->type == PMIX_PROC) {
            procs = info[i].value.data.darray->array;
            nprocs = info[i].value.data.darray->size;
        }
    char ranks[MAX_RANKS * 4 + 8] = "";
    for (size_t i = 0; i < nprocs && strlen(ranks) < sizeof ranks - 12; ++i) {
        if (procs[i].rank == PMIX_RANK_WILDCARD)
            snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), i ? ",*" : "*");
        else
            snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), i ? ",%u" : "%u",
                     procs[i].rank);
    }
    say("ready for debug %s ranks %s\n", nprocs ? procs[0].nspace : "?", ranks);
    if (nprocs && (release_ready || strstr(procs[0].nspace, "-spawned-"))) {
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, procs[0].nspace, PMIX_RANK_WILDCARD);
        pmix_info_t range;
        PMIX_INFO_LOAD(&range, PMIX_EVENT_CUSTOM_RANGE, &all, PMIX_PROC);
        pmix_status_t rc = PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_CUSTOM, &range,
                                             1, NULL, NULL);
        say("released %s: %s\n", all.nspace, PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&range);
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    pthread_mutex_lock(&mu);
    --ready_handlers;
    pthread_cond_broadcast(&ready_cv);
    pthread_mutex_unlock(&mu);
}

/* One node's host: its server, its clients, until they all ended. */
static int run_node(bool null_upcalls, bool nodata, char **argv) {
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    if (!null_upcalls) {
        module.client_connected = client_connected;
        module.client_finalized = client_finalized;
        module.abort = abort_fn;
        module.fence_nb = fence_nb;
        module.direct_modex = direct_modex;
        module.notify_event = notify_event;
        module.publish = publish_fn;
        module.lookup = lookup_fn;
        module.unpublish = unpublish_fn;
        rm_upcalls(&module);
        module.register_events = register_events;
        module.deregister_events = deregister_events;
        module.spawn = spawn_fn;
        module.connect = connect_fn;
        module.disconnect = disconnect_fn;
        module.group = group_fn;
    }
    char tmpdir[] = "/tmp/server-host-XXXXXX";
    if (!mkdtemp(tmpdir)) die("mkdtemp", PMIX_ERROR);
    pmix_info_t init[4];
    load_string(&init[0], PMIX_SERVER_TMPDIR, tmpdir);
    PMIX_INFO_LOAD(&init[1], PMIX_SERVER_ENABLE_MONITORING, &enable_monitoring, PMIX_BOOL);
    if (system_support)
        PMIX_INFO_LOAD(&init[2], PMIX_SERVER_SYSTEM_SUPPORT, &system_support, PMIX_BOOL);
    else
        PMIX_INFO_LOAD(&init[2], PMIX_SERVER_TOOL_SUPPORT, &tool_support, PMIX_BOOL);
    load_string(&init[3], PMIX_HOSTNAME, node_name(node));
    pmix_proc_t early;
    PMIX_LOAD_PROCID(&early, nspace, 0);
    pmix_status_t rc = PMIx_server_register_client(&early, getuid(), getgid(), NULL, NULL, NULL);
    if (rc != PMIX_ERR_INIT) die("register_client before PMIx_server_init", rc);
    rc = PMIx_server_register_resources(NULL, 0, NULL, NULL);
    if (rc != PMIX_ERR_INIT) die("register_resources before PMIx_server_init", rc);
    rc = PMIx_server_init(&module, init, nnodes > 1 ? 4 : 3);
    if (rc != PMIX_SUCCESS) die("PMIx_server_init", rc);
    say("host library %s\n", PMIx_Get_version());
    say_server_uri();
    pmix_status_t ready_code = PMIX_READY_FOR_DEBUG;
    if (!null_upcalls &&
        PMIx_Register_event_handler(&ready_code, 1, NULL, 0, on_ready_for_debug, NULL, NULL) < 0)
        die("PMIx_Register_event_handler", PMIX_ERROR);
    pthread_t reader; /* ends with the link, maybe after this node's run: never joined */
    if (nnodes > 1 && pthread_create(&reader, NULL, link_reader, NULL) == 0) pthread_detach(reader);

    if (nodata) {
        pmix_info_t nd;
        bool yes = true;
        pmix_nspace_t own = "host-own";
        PMIX_INFO_LOAD(&nd, PMIX_REGISTER_NODATA, &yes, PMIX_BOOL);
        rc = PMIx_server_register_nspace(own, 1, &nd, 1, NULL, NULL);
        if (rc != PMIX_OPERATION_SUCCEEDED) die("register_nspace NODATA", rc);
    }
    if (inventory || resources) collect_inventory();
    if (resources) register_resources();
    register_job();

    int started = 0;
    for (int r = 0; r < nranks; ++r) {
        children[r].rank = r;
        if (node_of(r) != node) continue;
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)r);
        /* flux-pmix's way: a NULL callback means "done when it returns" */
        rc = PMIx_server_register_client(&proc, getuid(), getgid(), &children[r], NULL, NULL);
        if (rc != PMIX_OPERATION_SUCCEEDED) die("PMIx_server_register_client", rc);
        size_t nenv = 0;
        while (environ[nenv]) ++nenv;
        char **env = calloc(nenv + 2, sizeof *env);
        for (size_t e = 0; e < nenv; ++e) env[e] = strdup(environ[e]);
        /* The node's name as this host names it (Slurm's tasks get SLURMD_NODENAME): here not
         * the machine's host name when it plays two nodes. */
        char name[300];
        snprintf(name, sizeof name, "HOST_NODE_NAME=%s", node_name(node));
        env[nenv] = strdup(name);
        if ((rc = PMIx_server_setup_fork(&proc, &env)) != PMIX_SUCCESS)
            die("PMIx_server_setup_fork", rc);
        int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
        children[r].io[0] = children[r].io[1] = -1;
        if (forward_io && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
                           (r == 0 && pipe2(in, O_CLOEXEC) != 0)))
            die("pipe", PMIX_ERROR);
        pid_t pid = fork();
        if (pid == 0) {
            if (forward_io) { /* no other end of any pipe goes on with the program */
                dup2(out[1], 1);
                dup2(err[1], 2);
                if (in[0] >= 0) dup2(in[0], 0);
            }
            execve(argv[0], argv, env);
            perror("execve");
            _exit(127);
        }
        if (forward_io) {
            close(out[1]);
            close(err[1]);
            children[r].io[0] = out[0];
            children[r].io[1] = err[0];
            if (in[0] >= 0) {
                close(in[0]);
                stdin_fd = in[1];
            }
        }
        __atomic_store_n(&children[r].pid, pid, __ATOMIC_RELEASE); /* the upcalls read it */
        ++started;
        for (char **e = env; *e; ++e) free(*e);
        free(env);
    }

    pthread_t forwarder;
    if (forward_io) pthread_create(&forwarder, NULL, forward_output, NULL);

    int status_out = 0;
    for (int left = started; left > 0 || spawned_running() > 0; --left) {
        int st;
        pid_t pid;
        while ((pid = wait(&st)) < 0 && errno == EINTR) {
        }
        if (pid < 0) die("wait", PMIX_ERROR);
        if (pid == other_host) { /* node1's host, before this node's clients ended */
            other_status = st;
            ++left;
            continue;
        }
        if (reap_spawned(pid, st)) {
            ++left;
            continue;
        }
        for (int r = 0; r < nranks; ++r)
            if (children[r].pid == pid) {
                pthread_mutex_lock(&mu);
                children[r].ended = true;
                pthread_cond_broadcast(&ended_cv);
                pthread_mutex_unlock(&mu);
                int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                if (forward_io) wait_output_of(r); /* delivered before the rank goes */
                say("child %d exit %d\n", r, code);
                if (code != 0 && status_out == 0) status_out = code;
                pmix_proc_t proc;
                PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)r);
                _Atomic int flag = 0;
                PMIx_server_deregister_client(&proc, done_cb, (void *)&flag);
                wait_flag(&flag, "deregister_client callback");
            }
    }
    if (forward_io) { /* once every pipe ended; else it ends with this process */
        pthread_mutex_lock(&mu);
        bool all_read = true;
        for (int r = 0; r < nranks; ++r)
            all_read = all_read && children[r].io[0] < 0 && children[r].io[1] < 0;
        pthread_mutex_unlock(&mu);
        if (all_read) pthread_join(forwarder, NULL);
    }
    if (nnodes > 1) wait_other_node();
    deregister_spawned_jobs();
    _Atomic int flag = 0;
    PMIx_server_deregister_nspace(nspace, done_cb, (void *)&flag);
    wait_flag(&flag, "deregister_nspace callback");
    say("host fences %d dmodex-served %d\n", fences, dmodex_served);
    pthread_mutex_lock(&mu);
    while (ready_handlers > 0) pthread_cond_wait(&ready_cv, &mu); /* bounded by the alarm */
    pthread_mutex_unlock(&mu);
    if ((rc = PMIx_server_finalize()) != PMIX_SUCCESS) die("PMIx_server_finalize", rc);
    PMIX_INFO_DESTRUCT(&init[0]);
    PMIX_INFO_DESTRUCT(&init[1]);
    PMIX_INFO_DESTRUCT(&init[2]);
    PMIX_INFO_DESTRUCT(&init[3]);
    rc = PMIx_server_register_nspace(nspace, 1, NULL, 0, NULL, NULL);
    if (rc != PMIX_ERR_INIT) die("register_nspace after PMIx_server_finalize", rc);
    if ((rc = PMIx_server_finalize()) != PMIX_ERR_INIT) die("a second PMIx_server_finalize", rc);
    /* The library's files are gone with it: only what the host made remains. */
    if (rmdir(tmpdir) != 0) {
        fprintf(stderr, "server_host: %s is not empty after PMIx_server_finalize\n", tmpdir);
        return 99;
    }
    return abort_status >= 0 ? abort_status : status_out;
}

int main(int argc, char **argv) {
    bool null_upcalls = false, nodata = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            nranks = atoi(argv[++i]);
        else if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            nnodes = atoi(argv[++i]);
        else if (strcmp(argv[i], "--null-upcalls") == 0)
            null_upcalls = true;
        else if (strcmp(argv[i], "--refuse-rank") == 0 && i + 1 < argc)
            refuse_rank = atoi(argv[++i]);
        else if (strcmp(argv[i], "--late-callbacks") == 0)
            late_callbacks = true;
        else if (strcmp(argv[i], "--double-callbacks") == 0)
            double_callbacks = true;
        else if (strcmp(argv[i], "--nodata") == 0)
            nodata = true;
        else if (strcmp(argv[i], "--enable-monitoring") == 0)
            enable_monitoring = true;
        else if (strcmp(argv[i], "--tools") == 0)
            tool_support = true;
        else if (strcmp(argv[i], "--system") == 0)
            system_support = true;
        else if (strcmp(argv[i], "--inventory") == 0)
            inventory = true;
        else if (strcmp(argv[i], "--forward-io") == 0)
            forward_io = true;
        else if (strcmp(argv[i], "--resources") == 0)
            resources = true;
        else if (strcmp(argv[i], "--stop-in-init") == 0)
            stop_in_init = true;
        else if (strcmp(argv[i], "--release-ready") == 0)
            release_ready = true;
        else
            break;
    }
    if (nranks < 1 || nranks > MAX_RANKS || nnodes < 1 || nnodes > 2 || i >= argc ||
        nranks < nnodes || (resources && nnodes != 2)) {
        fprintf(stderr, "usage: server_host [options] -n N program [args...]\n");
        return 2;
    }
    program = argv[i];
    signal(SIGALRM, on_alarm);
    if (forward_io) signal(SIGPIPE, SIG_IGN); /* rank 0 may end before its input does */
    alarm(60);
    if (nnodes == 1) return run_node(null_upcalls, nodata, argv + i);

    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) die("socketpair", PMIX_ERROR);
    fflush(stdout);
    pid_t other = fork();
    if (other < 0) die("fork", PMIX_ERROR);
    node = other == 0 ? 1 : 0;
    other_host = other == 0 ? -1 : other;
    link_fd = fds[node];
    close(fds[1 - node]);
    int rc = run_node(null_upcalls, nodata, argv + i);
    if (node == 1) return rc;
    int st = other_status;
    if (st == -1 && waitpid(other, &st, 0) != other) die("waitpid node1", PMIX_ERROR);
    int rc1 = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return rc != 0 ? rc : rc1;
}
