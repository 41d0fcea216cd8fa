/* What one thread waking another costs on this machine: two threads pass a token back and forth
 * through eventfds (as libzmq's mailboxes wake its I/O thread and the socket's owner), pinned to
 * one CPU and then to two. Prints the median round trip of each, in microseconds:
 *   handoff_same_cpu <us>
 *   handoff_two_cpus <us>
 * A cross-node fence through the tree is about ten such hand-offs in a row
 * (tests/bench/RESULTS.md).
 *
 *   build/bench/handoff [round trips] */
#define _GNU_SOURCE
#include "bench_util.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

static int there, back, trips;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "handoff: cannot run on cpu %d\n", cpu);
        exit(1);
    }
}

static void pass(int to) {
    const uint64_t one = 1;
    if (write(to, &one, sizeof one) != sizeof one) exit(1);
}

static void wait_for(int from) {
    struct pollfd p = {from, POLLIN, 0};
    uint64_t n;
    if (poll(&p, 1, 5000) != 1 || read(from, &n, sizeof n) != sizeof n) {
        fprintf(stderr, "handoff: the other thread did not answer within 5 s\n");
        exit(1);
    }
}

static void *echo(void *cpu) {
    pin((int)(intptr_t)cpu);
    for (int i = 0; i < trips; ++i) {
        wait_for(there);
        pass(back);
    }
    return NULL;
}

static double round_trips(int cpu_a, int cpu_b) {
    pthread_t t;
    pthread_create(&t, NULL, echo, (void *)(intptr_t)cpu_b);
    pin(cpu_a);
    double *rt = malloc(sizeof(double) * trips);
    for (int i = 0; i < trips; ++i) {
        const double t0 = now_us();
        pass(there);
        wait_for(back);
        rt[i] = now_us() - t0;
    }
    pthread_join(t, NULL);
    const double median = percentile(rt, trips, 0.5);
    free(rt);
    return median;
}

int main(int argc, char **argv) {
    trips = argc > 1 ? atoi(argv[1]) : 20000;
    there = eventfd(0, EFD_CLOEXEC);
    back = eventfd(0, EFD_CLOEXEC);
    cpu_set_t allowed;
    if (trips < 1 || there < 0 || back < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return 1;
    int cpus[2], n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < 2; ++c)
        if (CPU_ISSET(c, &allowed)) cpus[n++] = c;
    printf("handoff_same_cpu %.2f\n", round_trips(cpus[0], cpus[0]));
    if (n == 2) printf("handoff_two_cpus %.2f\n", round_trips(cpus[0], cpus[1]));
    return 0;
}
