/* An ordinary MPI program, built with Debian's mpicc: nothing in it knows about zpmix.
 *   mpi_prog check          world size/rank, MPI_Allreduce, a point-to-point ring; prints
 *                           "rank R of N: allreduce S ring T ok" per rank
 *   mpi_prog abort R CODE   every rank prints "rank R pid P"; after a barrier rank R calls
 *                           MPI_Abort(MPI_COMM_WORLD, CODE) while the others wait in a barrier
 *   mpi_prog kill R         the same, but rank R kills itself with SIGKILL
 *   mpi_prog init           MPI_Init and MPI_Finalize only (the benchmark)
 *   mpi_prog appnum LABEL   prints "LABEL rank R of N appnum A" (MPI_APPNUM, the rank's app of an
 *                           MPMD job), after an MPI_Allreduce over the whole world
 *   mpi_prog wait FILE      every rank prints "ready <pid> <PMIX_NAMESPACE>", waits (60 s at
 *                           most) for FILE, then a barrier: a job that lives until told (Open
 *                           MPI's default event handler aborts it on any PMIx event meanwhile)
 *   mpi_prog io FILE        MPI-IO: every rank writes its block of FILE collectively
 *                           (MPI_File_write_at_all), then reads the next rank's block back
 *                           (MPI_File_read_at); prints "rank R io ok"
 *   mpi_prog topology       before MPI_Init, waits (20 s at most) for the node's topology file
 *                           in its broker's session directory (the directory of ZPMIX_URI's
 *                           socket, then session/topology.xml), which only the broker can have
 *                           written then; prints "topology ready before MPI_Init"
 * Exit status: 0, or 1 with a message on stderr when a check fails. */
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

static int check(int rank, int size, int expected_size) {
    if (expected_size > 0 && size != expected_size) {
        fprintf(stderr, "rank %d: world size %d, expected %d\n", rank, size, expected_size);
        return 1;
    }
    const char *env_rank = getenv("PMIX_RANK");
    if (env_rank == NULL || atoi(env_rank) != rank) {
        fprintf(stderr, "rank %d: PMIX_RANK is %s\n", rank, env_rank ? env_rank : "unset");
        return 1;
    }
    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (long)size * (size + 1) / 2) {
        fprintf(stderr, "rank %d: allreduce gave %ld\n", rank, sum);
        return 1;
    }
    /* The ring: a token passed from rank 0 around every rank, each adding its rank. */
    long token = 0;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
        }
        MPI_Bcast(&token, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    }
    if (token != (long)size * (size - 1) / 2) {
        fprintf(stderr, "rank %d: ring gave %ld\n", rank, token);
        return 1;
    }
    printf("rank %d of %d: allreduce %ld ring %ld ok\n", rank, size, sum, token);
    return 0;
}

/* Whether <dir>/topology.xml holds hwloc's XML. */
static int has_topology(const char *dir) {
    char path[4096], head[4096] = "";
    snprintf(path, sizeof path, "%s/topology.xml", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = 0;
    return strstr(head, "<topology") != NULL;
}

/* Whether <broker dir>/session/topology.xml holds hwloc's XML within 20 s: waits for the file's
 * rename into the directory (inotify), not by polling. */
static int topology_ready(void) {
    const char *uri = getenv("ZPMIX_URI");
    if (uri == NULL || strncmp(uri, "ipc://", 6) != 0) return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", uri + 6);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) return 0;
    snprintf(slash, sizeof dir - (size_t)(slash - dir), "/session");
    const int in = inotify_init1(IN_CLOEXEC);
    if (in < 0) return 0;
    inotify_add_watch(in, dir, IN_MOVED_TO | IN_CLOSE_WRITE);
    int ready = has_topology(dir); /* written before the watch began */
    for (int waited_ms = 0; !ready && waited_ms < 20000; waited_ms += 1000) {
        struct pollfd p = {in, POLLIN, 0};
        if (poll(&p, 1, 1000) > 0) {
            char events[4096];
            (void)!read(in, events, sizeof events);
        }
        ready = has_topology(dir);
    }
    close(in);
    return ready;
}

/* Each rank's block of the file: 64 ints of rank * 1000 + i. */
static int io(int rank, int size, const char *path) {
    enum { kBlock = 64 };
    int mine[kBlock], theirs[kBlock];
    for (int i = 0; i < kBlock; ++i) mine[i] = rank * 1000 + i;
    MPI_File f;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &f) !=
        MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPI_File_open %s failed\n", rank, path);
        return 1;
    }
    MPI_Offset at = (MPI_Offset)rank * kBlock * (MPI_Offset)sizeof(int);
    int rc = MPI_File_write_at_all(f, at, mine, kBlock, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(f);
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (rank + 1) % size;
    if (rc == MPI_SUCCESS)
        rc = MPI_File_read_at(f, (MPI_Offset)next * kBlock * (MPI_Offset)sizeof(int), theirs,
                              kBlock, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&f);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPI-IO write or read failed\n", rank);
        return 1;
    }
    for (int i = 0; i < kBlock; ++i)
        if (theirs[i] != next * 1000 + i) {
            fprintf(stderr, "rank %d: read %d at %d of rank %d's block\n", rank, theirs[i], i,
                    next);
            return 1;
        }
    printf("rank %d io ok\n", rank);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "check";
    if (strcmp(mode, "topology") == 0) {
        if (!topology_ready()) {
            fprintf(stderr, "no topology file from the broker\n");
            return 1;
        }
        printf("topology ready before MPI_Init\n");
    }
    MPI_Init(&argc, &argv);
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = 0;
    if (strcmp(mode, "abort") == 0 || strcmp(mode, "kill") == 0) {
        printf("rank %d pid %d\n", rank, (int)getpid());
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (strcmp(mode, "check") == 0) {
        rc = check(rank, size, argc > 2 ? atoi(argv[2]) : 0);
    } else if (strcmp(mode, "abort") == 0 && argc > 3) {
        if (rank == atoi(argv[2])) MPI_Abort(MPI_COMM_WORLD, atoi(argv[3]));
        MPI_Barrier(MPI_COMM_WORLD);
        fprintf(stderr, "rank %d: passed the barrier after an abort\n", rank);
        rc = 1;
    } else if (strcmp(mode, "kill") == 0 && argc > 2) {
        if (rank == atoi(argv[2])) raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD);
        fprintf(stderr, "rank %d: passed the barrier after a death\n", rank);
        rc = 1;
    } else if (strcmp(mode, "wait") == 0 && argc > 2) {
        const char *ns = getenv("PMIX_NAMESPACE");
        printf("ready %d %s\n", (int)getpid(), ns ? ns : "?");
        fflush(stdout);
        for (int waited_ms = 0; waited_ms < 60000 && access(argv[2], F_OK) != 0; waited_ms += 10)
            poll(NULL, 0, 10);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "appnum") == 0) {
        int *appnum = NULL, flag = 0, one = 1, sum = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        printf("%s rank %d of %d appnum %d\n", argc > 2 ? argv[2] : "-", rank, sum,
               flag && appnum ? *appnum : -1);
    } else if (strcmp(mode, "io") == 0 && argc > 2) {
        rc = io(rank, size, argv[2]);
    } else if (strcmp(mode, "init") != 0 && strcmp(mode, "topology") != 0) {
        fprintf(stderr,
                "usage: %s [check [SIZE] | abort RANK CODE | kill RANK | init | topology | "
                "wait FILE | appnum LABEL | io FILE]\n",
                argv[0]);
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
