/* Writes BYTES bytes to stdout as lines of LINE bytes ('x'... then a newline), in writes of 64 KiB,
 * as a chatty rank does: the output throughput benchmark of tests/bench/run_output. No PMIx: the
 * same program runs under zpmix run and mpirun.
 *   output_bench BYTES [LINE] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: output_bench BYTES [LINE]\n");
        return 2;
    }
    long long left = atoll(argv[1]);
    const size_t line = argc > 2 ? (size_t)atol(argv[2]) : 100;
    if (line < 1 || left < 0) return 2;
    enum { kChunk = 64 * 1024 };
    static char buf[kChunk];
    memset(buf, 'x', sizeof buf);
    for (size_t i = line - 1; i < sizeof buf; i += line) buf[i] = '\n';
    size_t phase = 0; /* where the next write starts in the line pattern */
    while (left > 0) {
        /* The pattern repeats every `line` bytes: write from `phase` on, a multiple of whole
         * lines when possible. */
        size_t n = sizeof buf - line;
        if ((long long)n > left) n = (size_t)left;
        const char *p = buf + phase;
        size_t done = 0;
        while (done < n) {
            ssize_t w = write(1, p + done, n - done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return 1;
            done += (size_t)w;
        }
        left -= (long long)n;
        phase = (phase + n) % line;
    }
    return 0;
}
