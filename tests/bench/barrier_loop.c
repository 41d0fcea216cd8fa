/* CPU per fence of the daemons that serve a job (tests/bench/run_nodes --cpu, run_slurm --cpu):
 * N data-less PMIx_Fence over the job. Around the loop rank 0 prints "start" and "end" (flushed,
 * for a script to sample the launcher's CPU), and the first rank of each node prints
 *   daemon_cpu <host> <its parent's name> <us of CPU per fence>
 * its parent being the node's PMIx server (zpmix's broker, Open MPI's orted, slurmstepd): the CPU
 * time of all its threads during the loop (/proc/<ppid>/task/<tid>/schedstat), divided by N.
 *
 *   barrier_loop N */
#define _GNU_SOURCE
#include <dirent.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Nanoseconds on a CPU of every thread of process `pid`. */
static unsigned long long cpu_ns(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    unsigned long long sum = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char stat[400];
        snprintf(stat, sizeof stat, "%s/%s/schedstat", path, e->d_name);
        FILE *f = fopen(stat, "r");
        unsigned long long ns = 0;
        if (f && fscanf(f, "%llu", &ns) == 1) sum += ns;
        if (f) fclose(f);
    }
    closedir(d);
    return sum;
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 1000;
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "barrier_loop: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_value_t *val = NULL;
    int first_on_node = 0;
    if (PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &val) == PMIX_SUCCESS && val) {
        first_on_node = val->data.uint16 == 0;
        PMIX_VALUE_RELEASE(val);
    }
    const pid_t server = getppid();
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "barrier_loop: PMIx_Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (me.rank == 0) {
        printf("start\n");
        fflush(stdout);
    }
    const unsigned long long before = first_on_node ? cpu_ns(server) : 0;
    for (int i = 0; i < n; ++i)
        if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
            fprintf(stderr, "barrier_loop: PMIx_Fence: %s\n", PMIx_Error_string(rc));
            return 1;
        }
    const unsigned long long after = first_on_node ? cpu_ns(server) : 0;
    if (me.rank == 0) {
        printf("end\n");
        fflush(stdout);
    }
    if (first_on_node && n > 0) {
        char host[256] = "?", comm[64] = "?", path[64];
        gethostname(host, sizeof host);
        snprintf(path, sizeof path, "/proc/%d/comm", (int)server);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
        if (f) fclose(f);
        printf("daemon_cpu %s %s %.2f\n", host, comm, (double)(after - before) / 1e3 / n);
        fflush(stdout);
    }
    /* Everyone reports before anyone finalizes. */
    PMIx_Fence(NULL, 0, NULL, 0);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
