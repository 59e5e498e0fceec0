/* SPDX-License-Identifier: Apache-2.0 */
/* turns: the floor under a barrier of many more threads than CPUs.
 *
 * With T threads on C CPUs every thread must run at least once per
 * barrier (to arrive, and to see the release: in a loop of barriers one
 * turn does both), so a barrier costs at least one turn of every thread,
 * T / C hand-overs of each CPU. What a hand-over costs is the kernel's
 * business, and it grows with T (the scheduler's queues, and the task
 * structures and kernel stacks it cycles through stop fitting the
 * caches). Two loops without the library measure it:
 *   yield    every thread calls sched_yield n times: the time per round
 *            is one turn of every thread, the floor itself
 *   barrier  a central counting barrier: each thread adds one to a count,
 *            the last to arrive resets it and bumps a generation word,
 *            the others yield until the generation changes; every
 *            thread checks after each barrier that a peer (a different
 *            one each time) has arrived as often as itself, so a broken
 *            barrier fails
 * Waiters yield and never sleep, as pld's do where ranks outnumber CPUs.
 * Threads are not pinned: the kernel spreads them as it spreads a
 * thread-per-rank world.
 *
 *   turns [-t threads] [-n iters] [-r repeats]   (default 1024, 20, 5)
 *
 * Prints one line per loop: the median over repeats of the wall time per
 * round or barrier in microseconds, and the CPU time per thread's turn. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { YIELD, BARRIER, NLOOP };
static const char *const loop_name[NLOOP] = {"yield", "barrier"};

typedef struct turns_run {
    int loop, threads, iters;
    _Alignas(64) _Atomic int count;     /* arrivals at the current barrier */
    _Alignas(64) _Atomic int gen;       /* barriers completed */
    _Alignas(64) _Atomic int *arrivals; /* per thread: barriers it arrived at */
    _Atomic int wrong;
    pthread_barrier_t start;
} turns_run;

/* What a thread measured itself: from the end of its warm-up iterations
 * to its last one (thread start, exit and join stay outside). */
typedef struct turns_arg {
    turns_run *run;
    int me;
    double t0, t1;     /* CLOCK_MONOTONIC */
    double cpu0, cpu1; /* this thread's CPU time */
} turns_arg;

/* Iterations before the stamps: every thread has started by then. */
#define WARM 2

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void central_barrier(turns_run *r, int g)
{
    if (atomic_fetch_add_explicit(&r->count, 1, memory_order_acq_rel) == r->threads - 1) {
        atomic_store_explicit(&r->count, 0, memory_order_relaxed);
        atomic_store_explicit(&r->gen, g + 1, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&r->gen, memory_order_acquire) == g)
        sched_yield();
}

static void *thread_main(void *p)
{
    turns_arg *a = p;
    turns_run *r = a->run;
    pthread_barrier_wait(&r->start);
    for (int g = 0; g < WARM + r->iters; g++) {
        if (g == WARM) {
            a->t0 = clock_s(CLOCK_MONOTONIC);
            a->cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        }
        if (r->loop == YIELD) {
            sched_yield();
            continue;
        }
        atomic_store_explicit(&r->arrivals[a->me], g + 1, memory_order_relaxed);
        central_barrier(r, g);
        int peer = (a->me + 1 + g) % r->threads;
        if (atomic_load_explicit(&r->arrivals[peer], memory_order_relaxed) < g + 1)
            atomic_store(&r->wrong, 1);
    }
    a->t1 = clock_s(CLOCK_MONOTONIC);
    a->cpu1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

/* One timed run of a loop: wall seconds from the last thread's end of
 * warm-up to the last thread's end, and the CPU seconds the threads spent
 * in between. Returns 0, or -1 when a barrier was broken. */
static int run_once(int loop, int threads, int iters, double *wall, double *cpu)
{
    turns_run *r = calloc(1, sizeof *r);
    turns_arg *args = calloc((size_t)threads, sizeof *args);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    r->arrivals = calloc((size_t)threads, sizeof *r->arrivals);
    if (!r || !args || !tid || !r->arrivals)
        return -1;
    r->loop = loop;
    r->threads = threads;
    r->iters = iters;
    pthread_barrier_init(&r->start, NULL, (unsigned)threads + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 16); /* only the top pages are touched */
    int started = 0, rc = 0;
    for (; started < threads; started++) {
        args[started] = (turns_arg){.run = r, .me = started};
        if (pthread_create(&tid[started], &attr, thread_main, &args[started]) != 0)
            break;
    }
    if (started < threads) {
        fprintf(stderr, "turns: could only start %d of %d threads\n", started, threads);
        exit(1); /* the started ones wait at the start barrier for ever */
    }
    pthread_barrier_wait(&r->start);
    double t0 = 0, t1 = 0;
    *cpu = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        t0 = args[i].t0 > t0 ? args[i].t0 : t0;
        t1 = args[i].t1 > t1 ? args[i].t1 : t1;
        *cpu += args[i].cpu1 - args[i].cpu0;
    }
    *wall = t1 - t0;
    if (atomic_load(&r->wrong)) {
        fprintf(stderr, "turns: %s: a thread passed a barrier before a peer arrived\n",
                loop_name[loop]);
        rc = -1;
    }
    pthread_attr_destroy(&attr);
    pthread_barrier_destroy(&r->start);
    free(r->arrivals);
    free(r);
    free(args);
    free(tid);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int arg_int(const char *s, const char *what, int lo)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < lo || v > 1 << 20) {
        fprintf(stderr, "turns: %s '%s' is not an integer in %d .. %d\n", what, s, lo, 1 << 20);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv)
{
    int threads = 1024, iters = 20, repeats = 5;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "-t"))
            threads = arg_int(argv[++i], "-t", 2);
        else if (i + 1 < argc && !strcmp(argv[i], "-n"))
            iters = arg_int(argv[++i], "-n", 1);
        else if (i + 1 < argc && !strcmp(argv[i], "-r"))
            repeats = arg_int(argv[++i], "-r", 1);
        else {
            fprintf(stderr, "usage: turns [-t threads] [-n iters] [-r repeats]\n");
            return 2;
        }
    }
    double *wall = calloc((size_t)repeats, sizeof *wall);
    double *turn = calloc((size_t)repeats, sizeof *turn);
    if (!wall || !turn)
        return 1;
    printf("# %d threads on %ld CPUs, %d iterations, median of %d\n", threads,
           sysconf(_SC_NPROCESSORS_ONLN), iters, repeats);
    for (int loop = 0; loop < NLOOP; loop++) {
        for (int k = 0; k < repeats; k++) {
            double w, c;
            if (run_once(loop, threads, iters, &w, &c) != 0)
                return 1;
            wall[k] = w / iters * 1e6;
            turn[k] = c / ((double)threads * iters) * 1e6;
        }
        qsort(wall, (size_t)repeats, sizeof *wall, cmp_double);
        qsort(turn, (size_t)repeats, sizeof *turn, cmp_double);
        printf("%-8s %10.1f us per %s  %6.2f us CPU per turn\n", loop_name[loop], wall[repeats / 2],
               loop == YIELD ? "round  " : "barrier", turn[repeats / 2]);
    }
    free(wall);
    free(turn);
    return 0;
}
