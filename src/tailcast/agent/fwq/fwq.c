/* Fixed-work-quantum (FWQ) noise loop, after the FWQ benchmark of LLNL's ASC Sequoia suite:
 * one process repeats the same small piece of work and times every repetition. A
 * repetition slower than the fastest one lost the CPU (an interrupt, a daemon, another
 * process): the excess is a detour. tailcast.agent.noise_profile builds and runs this and
 * turns its output into a noise profile (tailcast.collectors.noise_profile).
 *
 *   fwq QUANTUM_NS SECONDS THRESHOLD_NS
 *
 * The work is a xorshift chain (each step needs the last: no vectorising, no shortcut),
 * sized at start so that its fastest run takes about QUANTUM_NS. Timestamps are taken
 * back to back (each quantum ends where the next begins), so the quanta cover the whole
 * window and a detour that falls between the work and the clock reading still counts.
 *
 * Every duration is kept until the end, when the fastest (the work itself) is known; then
 * the program prints a header line `# fwq node=NODE work_steps=N clock_overhead_ns=C
 * quanta=Q quantum_ns=F window_ns=W threshold_ns=T` and, one per line in order, the excess
 * over F of every quantum that took more than F + T: the detours. NODE is Slurm's name of
 * the node (SLURMD_NODENAME in a job step), else the host name; C is the fastest of 10000
 * back-to-back clock readings, the loop's own floor; W the time the quanta covered. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static inline int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static uint64_t work(uint64_t steps, uint64_t x) {
    for (uint64_t i = 0; i < steps; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

static int64_t fastest(uint64_t steps, int tries) {
    int64_t best = INT64_MAX;
    for (int i = 0; i < tries; i++) {
        int64_t t0 = now_ns();
        sink = work(steps, sink | 1);
        int64_t d = now_ns() - t0;
        if (d < best) best = d;
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: fwq QUANTUM_NS SECONDS THRESHOLD_NS\n");
        return 2;
    }
    int64_t quantum = atoll(argv[1]);
    double seconds = atof(argv[2]);
    int64_t threshold = atoll(argv[3]);
    if (quantum < 1000 || seconds <= 0 || threshold < 1) {
        fprintf(stderr, "fwq: QUANTUM_NS must be >= 1000, SECONDS > 0, THRESHOLD_NS >= 1\n");
        return 2;
    }
    uint64_t steps = 4096;
    for (int round = 0; round < 3; round++) {  /* scale the work until it takes a quantum */
        int64_t took = fastest(steps, 50);
        steps = (uint64_t)((double)steps * (double)quantum / (double)(took > 0 ? took : 1));
        if (steps < 1) steps = 1;
    }
    int64_t overhead = INT64_MAX;
    for (int i = 0; i < 10000; i++) {
        int64_t a = now_ns(), b = now_ns();
        if (b - a < overhead) overhead = b - a;
    }
    size_t cap = (size_t)(seconds * 1e9 / (double)quantum) + 1;
    int64_t *d = malloc(cap * sizeof *d);
    if (d == NULL) {
        fprintf(stderr, "fwq: cannot allocate %zu durations\n", cap);
        return 1;
    }
    int64_t end = now_ns() + (int64_t)(seconds * 1e9);
    int64_t last = now_ns();
    size_t n = 0;
    while (n < cap) {
        sink = work(steps, sink | 1);
        int64_t t = now_ns();
        d[n++] = t - last;
        last = t;
        if (t >= end) break;
    }
    char host[256] = "unknown";
    const char *node = getenv("SLURMD_NODENAME");
    if (node == NULL || node[0] == '\0') {
        gethostname(host, sizeof host - 1);
        node = host;
    }
    int64_t fast = INT64_MAX, window = 0;
    for (size_t i = 0; i < n; i++) {
        window += d[i];
        if (d[i] < fast) fast = d[i];
    }
    printf("# fwq node=%s work_steps=%llu clock_overhead_ns=%lld quanta=%zu quantum_ns=%lld "
           "window_ns=%lld threshold_ns=%lld\n", node, (unsigned long long)steps,
           (long long)overhead, n, (long long)fast, (long long)window, (long long)threshold);
    for (size_t i = 0; i < n; i++)
        if (d[i] - fast > threshold) printf("%lld\n", (long long)(d[i] - fast));
    free(d);
    return 0;
}
