/* An Open MPI program's costs, built with Debian's mpicc (tests/bench/run --mpi builds it): the
 * same binary runs under `zpmix run` and under `mpirun`. Rank 0 prints "mpi_init <us>" and
 * "mpi_finalize <us>" (the slowest rank's time in each call) and "mpi_coll_loop <us>": the median
 * of ITERS (argv[1], default 200) iterations of MPI_Allreduce + MPI_Bcast + MPI_Alltoall on
 * MPI_COMM_WORLD, as rank 0 times them, after 20 unmeasured ones. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

enum { kWarmup = 20, kCount = 64 };

int main(int argc, char **argv) {
    const double t0 = now_us();
    MPI_Init(&argc, &argv);
    double init = now_us() - t0, slowest = 0;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&init, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    const int iters = argc > 1 ? atoi(argv[1]) : 200;
    double *times = malloc(sizeof(double) * (iters > 0 ? iters : 1));
    double in[kCount], out[kCount];
    int *send = malloc(sizeof(int) * size), *recv = malloc(sizeof(int) * size);
    for (int i = 0; i < kCount; ++i) in[i] = rank + i;
    for (int i = 0; i < size; ++i) send[i] = rank * size + i;
    for (int i = -kWarmup; i < iters; ++i) {
        const double s = now_us();
        MPI_Allreduce(in, out, kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(out, kCount, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
        if (i >= 0) times[i] = now_us() - s;
    }
    /* The loop did what it says: every rank's element i of rank r is r * size + i. */
    for (int r = 0; r < size; ++r)
        if (recv[r] != r * size + rank) {
            fprintf(stderr, "rank %d: alltoall gave %d from %d\n", rank, recv[r], r);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }

    const double t1 = now_us();
    MPI_Finalize();
    const double fin = now_us() - t1;
    if (rank == 0) {
        printf("mpi_init %.1f\nmpi_finalize %.1f\n", slowest, fin);
        if (iters > 0) printf("mpi_coll_loop %.2f\n", percentile(times, iters, 0.5));
    }
    free(times);
    free(send);
    free(recv);
    return 0;
}
