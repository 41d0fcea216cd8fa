/* Dynamic processes in an ordinary MPI program (Debian's mpicc; nothing in it knows zpmix):
 *   mpi_dyn spawn          MPI_Comm_spawn 2 children of this program; parents and children
 *                          merge (MPI_Intercomm_merge), the merged rank 0 sends a number to every
 *                          other rank, each prints "<parent|child> R merged M of N got V"
 *   mpi_dyn server DIR     MPI_Open_port, MPI_Publish_name("zpmix-dyn"), writes DIR/published,
 *                          MPI_Comm_accept; then like spawn over the merged communicator
 *   mpi_dyn client         MPI_Lookup_name("zpmix-dyn"), MPI_Comm_connect; the same
 * Exit status: 0, or 1 with a message on stderr when a step fails. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *role = "parent";

/* Merges the intercommunicator, rank 0 of the result sends 42 + rank to every other rank. */
static int merge_and_exchange(MPI_Comm inter, int high) {
    MPI_Comm merged;
    if (MPI_Intercomm_merge(inter, high, &merged) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Intercomm_merge failed\n", role);
        return 1;
    }
    int rank, size, world;
    MPI_Comm_rank(merged, &rank);
    MPI_Comm_size(merged, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    int value = -1;
    if (rank == 0) {
        for (int r = 1; r < size; ++r) {
            int v = 42 + r;
            MPI_Send(&v, 1, MPI_INT, r, 9, merged);
        }
        value = 42;
    } else {
        MPI_Recv(&value, 1, MPI_INT, 0, 9, merged, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(merged);
    printf("%s %d merged %d of %d got %d\n", role, world, rank, size, value);
    fflush(stdout);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    return value == 42 + rank ? 0 : 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "spawn";
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter;
    MPI_Comm_get_parent(&parent);
    int rc = 0;
    if (parent != MPI_COMM_NULL) {
        role = "child";
        rc = merge_and_exchange(parent, 1);
    } else if (strcmp(mode, "spawn") == 0) {
        char *args[] = {"spawn", NULL};
        int errs[2];
        if (MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs) !=
            MPI_SUCCESS) {
            fprintf(stderr, "parent: MPI_Comm_spawn failed\n");
            rc = 1;
        } else {
            rc = merge_and_exchange(inter, 0);
        }
    } else if (strcmp(mode, "server") == 0 && argc > 2) {
        role = "server";
        char port[MPI_MAX_PORT_NAME];
        MPI_Open_port(MPI_INFO_NULL, port);
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            MPI_Publish_name("zpmix-dyn", MPI_INFO_NULL, port);
            char path[4096];
            snprintf(path, sizeof path, "%s/published", argv[2]);
            FILE *f = fopen(path, "w");
            if (f) fclose(f);
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        rc = merge_and_exchange(inter, 0);
        if (rank == 0) MPI_Unpublish_name("zpmix-dyn", MPI_INFO_NULL, port);
        MPI_Close_port(port);
    } else if (strcmp(mode, "client") == 0) {
        role = "client";
        char port[MPI_MAX_PORT_NAME];
        MPI_Lookup_name("zpmix-dyn", MPI_INFO_NULL, port);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        rc = merge_and_exchange(inter, 1);
    } else {
        fprintf(stderr, "usage: mpi_dyn spawn | server DIR | client\n");
        rc = 1;
    }
    MPI_Finalize();
    return rc;
}
