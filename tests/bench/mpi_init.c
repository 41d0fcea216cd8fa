/* MPI_Init + MPI_Finalize cost, built with Debian's mpicc (tests/bench/run --mpi builds it):
 * the same binary runs under `zpmix run` and under `mpirun`. Rank 0 prints
 * "mpi_init <us>" and "mpi_finalize <us>": the slowest rank's time in each call. */
#include <mpi.h>
#include <stdio.h>

#include "bench_util.h"

int main(int argc, char **argv) {
    const double t0 = now_us();
    MPI_Init(&argc, &argv);
    double init = now_us() - t0, slowest = 0;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&init, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    const double t1 = now_us();
    MPI_Finalize();
    const double fin = now_us() - t1;
    if (rank == 0) printf("mpi_init %.1f\nmpi_finalize %.1f\n", slowest, fin);
    return 0;
}
