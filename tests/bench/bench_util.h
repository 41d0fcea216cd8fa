/* The benchmarks' clock and statistics (plain C: they are built against zpmix and OpenPMIx). */
#ifndef ZPMIX_BENCH_UTIL_H
#define ZPMIX_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile (0..1) of v[0..n), which it sorts. */
static inline double percentile(double *v, int n, double p) {
    qsort(v, n, sizeof *v, cmp_double);
    return v[(int)(p * (n - 1) + 0.5)];
}

#endif
