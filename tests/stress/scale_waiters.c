/* SPDX-License-Identifier: Apache-2.0 */
/* Thousands of waiting ranks leave the CPUs to the rank they wait for.
 *
 * 4096 ranks on the thread transport: rank 0 is busy in its own code for
 * 3 s, then releases every other rank, which waits for it in pld_wait the
 * whole time (asleep after its spin and yields, waking every sleep slice
 * to look at the deadline and for a deadlock). Then three barriers. Each
 * sleeper used to wake every 50 ms and run the deadlock detector, which
 * reads every rank's state: 4095 of them kept both CPUs busy, and rank 0,
 * once back from its own code, released a few ranks a second and the
 * launch timed out (87 s of CPU in 60 s). The wait timeout here is 20 s,
 * so such a run fails in 20 s; a healthy one takes about 4 s.
 *
 * The waiters must also leave the CPUs alone while rank 0 is busy: from
 * 1.5 s to 2.7 s into its busy time (once every waiter settled, also on a
 * loaded machine, where the waiters take longer to go to sleep) the process
 * may use at most a quarter of a CPU (a waiter that polled all along would
 * use a whole one, or two). With PLD_FIBERS
 * (the second run in ctest) rank 0 holds its carrier thread, and the other
 * carrier's 2048 ranks find their waits unmet round after round: its
 * back-off is what keeps it off the CPU.
 *
 * Plain C, not Criterion: the release build runs it (label scale); the
 * sanitizer builds, which multiply every thread's cost, do not. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pld/pld.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#define RANKS "0-4095"
#define BUSY_MS 3000

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* CPU time of the whole process so far, user and system, in ms */
static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

typedef struct args {
    pld_dtensor sig, cells;
    double window_cpu_ms; /* CPU used in the window of rank 0's busy time */
} args;

#define WINDOW_FROM_MS 1500
#define WINDOW_MS 1200

static void busy_root(pld_ctx *c, void *p)
{
    args *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    if (me == 0) {
        /* its own code: no pld call */
        sleep_ms(WINDOW_FROM_MS);
        double cpu0 = cpu_ms();
        sleep_ms(WINDOW_MS);
        a->window_cpu_ms = cpu_ms() - cpu0;
        sleep_ms(BUSY_MS - WINDOW_FROM_MS - WINDOW_MS);
        for (int q = 1; q < n; q++)
            pld_notify(c, a->cells, q, PLD_IDX(q, 0), 1, PLD_NOTIFY_SET);
        return;
    }
    pld_wait(c, a->cells, PLD_IDX(me, 0), 1, PLD_WAIT_EQ);
}

static void barriers(pld_ctx *c, void *p)
{
    args *a = p;
    for (int i = 0; i < 3; i++)
        pld_barrier(c, a->sig);
}

int main(void)
{
    pld_world *w;
    pld_config cfg = {.devices = RANKS, .transport = "thread", .wait_timeout_ms = 20000};
    if (pld_world_init(&w, &cfg) != PLD_OK) {
        fprintf(stderr, "init: %s\n", pld_last_error());
        return 1;
    }
    int n = pld_world_size(w);
    args a;
    pld_window_buffer *sb, *cb;
    if (pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)n, "sig", &sb) != PLD_OK ||
        pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)n, "cells", &cb) != PLD_OK ||
        pld_window(sb, PLD_INT32, 2, PLD_IDX(n, 1), &a.sig) != PLD_OK ||
        pld_window(cb, PLD_INT32, 2, PLD_IDX(n, 1), &a.cells) != PLD_OK) {
        fprintf(stderr, "windows: %s\n", pld_world_error(w));
        return 1;
    }
    int bad = 0;
    a.window_cpu_ms = 0;
    pld_status st = pld_launch(w, busy_root, &a);
    if (st != PLD_OK) {
        fprintf(stderr, "P=%d, rank 0 busy for %d ms: %s: %s\n", n, BUSY_MS, pld_status_name(st),
                pld_world_error(w));
        bad = 1;
    }
    printf("%.0f ms of CPU in %d ms of rank 0's busy time\n", a.window_cpu_ms, WINDOW_MS);
    if (a.window_cpu_ms > WINDOW_MS / 4) {
        fprintf(stderr, "P=%d: the waiters used %.0f ms of CPU in %d ms of rank 0's busy time\n", n,
                a.window_cpu_ms, WINDOW_MS);
        bad = 1;
    }
    st = pld_launch(w, barriers, &a);
    if (st != PLD_OK) {
        fprintf(stderr, "P=%d barriers: %s: %s\n", n, pld_status_name(st), pld_world_error(w));
        bad = 1;
    }
    pld_world_finalize(w);
    if (!bad)
        printf("OK\n");
    return bad;
}
