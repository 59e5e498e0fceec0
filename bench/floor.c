/* SPDX-License-Identifier: Apache-2.0 */
/* floor: what two threads achieve on this machine with nothing but C11
 * atomics and plain loops -- the floor under pld's small-message numbers.
 *
 * Each protocol is the one pld's builtin runs at P=2, without the library:
 *   barrier    one credit round: atomic add into the peer's cell, wait on mine
 *   allgather  copy my row into my target and the peer's, then one round
 *   allreduce  the mesh: round 1 (staged), acc = mine + peer's, round 2
 *              (nobody reads mine any more), store acc into mine
 * and, for comparison, the way MPI libraries reduce small messages, which
 * pld's builtins do not use:
 *   eager      copy my data into the peer's inbox (two, alternating by
 *              call), one signal, then mine = mine + inbox: one one-way
 *              latency per call instead of two rounds, paid for with a
 *              copy and an inbox per peer
 * The two threads are pinned to the first two CPUs of the process and spin
 * (no sleeping), so each figure is a lower bound for pld with two ranks.
 * Every allgather and allreduce result is checked; a wrong one fails.
 *
 *   floor [-b bytes] [-n iters] [-r repeats]     (default 4096, 100000, 5)
 *
 * Prints one line per protocol: the median over repeats of the time per
 * call in microseconds. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BARRIER, ALLGATHER, ALLREDUCE, EAGER, NPROTO };
static const char *const proto_name[NPROTO] = {"barrier", "allgather", "allreduce", "eager"};

typedef struct rank_mem {
    _Alignas(64) _Atomic int32_t cell;    /* credits from the peer */
    _Alignas(64) float *data;             /* allreduce: my data; allgather: my row */
    float *target;                        /* allgather: two [2, n] targets */
    float *acc;                           /* allreduce accumulator; eager: two inboxes */
    _Alignas(64) _Atomic int32_t arrived; /* eager: calls whose data is in my inbox */
} rank_mem;

typedef struct floor_run {
    int proto, n, iters;
    rank_mem rank[2];
    pthread_barrier_t start;
    _Atomic int wrong;
} floor_run;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin_to(int k)
{
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0 || CPU_COUNT(&all) < 2)
        return;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &all) && k-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
    }
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Round g of the credit barrier, as pld's builtins run it (credit.c). */
static void round_wait(floor_run *f, int me, int32_t g)
{
    atomic_fetch_add_explicit(&f->rank[1 - me].cell, 1, memory_order_seq_cst);
    /* a yield now and then keeps a machine with one CPU from stalling */
    for (unsigned spins = 1; atomic_load_explicit(&f->rank[me].cell, memory_order_acquire) < g;
         spins++) {
        relax();
        if (spins % 1024 == 0)
            sched_yield();
    }
}

static void epilogue(floor_run *f, int me, int32_t rounds)
{
    atomic_fetch_sub_explicit(&f->rank[me].cell, rounds, memory_order_seq_cst);
}

/* Each call first changes element 0 of my row (2*it + me), so a result
 * read one round early or late is caught. Calls alternate between two
 * targets: the peer's next call may push into a target as soon as it has my
 * credit for this one, which is before I have checked this call's rows (a
 * user of pld_allgather puts a barrier there; see tutorial step 13). */
static void call_allgather(floor_run *f, int me, int it)
{
    rank_mem *m = &f->rank[me];
    size_t n = (size_t)f->n, row = n * sizeof(float), half = (size_t)(it & 1) * 2 * n;
    m->data[0] = (float)(2 * it + me);
    memcpy(m->target + half + (size_t)me * n, m->data, row);
    memcpy(f->rank[1 - me].target + half + (size_t)me * n, m->data, row);
    round_wait(f, me, 1);
    epilogue(f, me, 1);
    if (m->target[half + (size_t)(1 - me) * n] != (float)(2 * it + 1 - me))
        atomic_fetch_add(&f->wrong, 1);
}

static void call_allreduce(floor_run *f, int me, int it)
{
    rank_mem *m = &f->rank[me];
    float *restrict mine = m->data;
    const float *restrict peer = f->rank[1 - me].data;
    float *restrict acc = m->acc;
    mine[0] = (float)(2 * it + me);
    round_wait(f, me, 1);
    for (int i = 0; i < f->n; i++)
        acc[i] = mine[i] + peer[i];
    round_wait(f, me, 2);
    memcpy(mine, acc, (size_t)f->n * sizeof(float));
    epilogue(f, me, 2);
    if (mine[0] != (float)(4 * it + 1))
        atomic_fetch_add(&f->wrong, 1);
}

static void call_eager(floor_run *f, int me, int it)
{
    rank_mem *m = &f->rank[me];
    size_t n = (size_t)f->n, half = (size_t)(it & 1) * n;
    float *restrict mine = m->data;
    const float *restrict inbox = m->acc + half;
    mine[0] = (float)(2 * it + me);
    /* the peer read this inbox two calls ago: it told me so by arriving
     * for the previous call, which I waited for */
    memcpy(f->rank[1 - me].acc + half, mine, n * sizeof(float));
    atomic_fetch_add_explicit(&f->rank[1 - me].arrived, 1, memory_order_release);
    for (unsigned spins = 1; atomic_load_explicit(&m->arrived, memory_order_acquire) < it;
         spins++) {
        relax();
        if (spins % 1024 == 0)
            sched_yield();
    }
    for (size_t i = 0; i < n; i++)
        mine[i] += inbox[i];
    if (mine[0] != (float)(4 * it + 1))
        atomic_fetch_add(&f->wrong, 1);
}

typedef struct rank_arg {
    floor_run *f;
    int me;
    double seconds;
} rank_arg;

static void *rank_main(void *arg)
{
    rank_arg *a = arg;
    floor_run *f = a->f;
    pin_to(a->me);
    pthread_barrier_wait(&f->start);
    double t0 = now_s();
    for (int it = 1; it <= f->iters; it++) {
        if (f->proto == BARRIER) {
            round_wait(f, a->me, 1);
            epilogue(f, a->me, 1);
        } else if (f->proto == ALLGATHER) {
            call_allgather(f, a->me, it);
        } else if (f->proto == ALLREDUCE) {
            call_allreduce(f, a->me, it);
        } else {
            call_eager(f, a->me, it);
        }
    }
    a->seconds = now_s() - t0;
    return NULL;
}

/* One timed run of `iters` calls; returns microseconds per call (the slower
 * rank's), or -1 when a result was wrong. */
static double run_once(int proto, int n, int iters)
{
    static floor_run f;
    memset(&f, 0, sizeof f);
    f.proto = proto, f.n = n, f.iters = iters;
    for (int r = 0; r < 2; r++) {
        f.rank[r].data = calloc((size_t)n, sizeof(float));
        f.rank[r].acc = calloc(2 * (size_t)n, sizeof(float));
        f.rank[r].target = calloc(4 * (size_t)n, sizeof(float));
        if (!f.rank[r].data || !f.rank[r].acc || !f.rank[r].target) {
            fprintf(stderr, "floor: out of memory\n");
            exit(1);
        }
    }
    pthread_barrier_init(&f.start, NULL, 2);
    pthread_t tid[2];
    rank_arg arg[2] = {{&f, 0, 0}, {&f, 1, 0}};
    for (int r = 0; r < 2; r++)
        if (pthread_create(&tid[r], NULL, rank_main, &arg[r]) != 0) {
            fprintf(stderr, "floor: pthread_create failed\n");
            exit(1);
        }
    for (int r = 0; r < 2; r++)
        pthread_join(tid[r], NULL);
    pthread_barrier_destroy(&f.start);
    for (int r = 0; r < 2; r++) {
        free(f.rank[r].data);
        free(f.rank[r].acc);
        free(f.rank[r].target);
    }
    if (atomic_load(&f.wrong))
        return -1;
    double s = arg[0].seconds > arg[1].seconds ? arg[0].seconds : arg[1].seconds;
    return s / iters * 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long parse_size(const char *v)
{
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (end && (*end == 'K' || *end == 'k'))
        x <<= 10, end++;
    else if (end && (*end == 'M' || *end == 'm'))
        x <<= 20, end++;
    return end && *end == '\0' ? x : -1;
}

int main(int argc, char **argv)
{
    long bytes = 4096, iters = 100000, repeats = 5;
    for (int i = 1; i < argc; i++) {
        long *to = !strcmp(argv[i], "-b")   ? &bytes
                   : !strcmp(argv[i], "-n") ? &iters
                   : !strcmp(argv[i], "-r") ? &repeats
                                            : NULL;
        if (!to || i + 1 >= argc || (*to = parse_size(argv[++i])) <= 0) {
            fprintf(stderr, "usage: floor [-b bytes] [-n iters] [-r repeats]\n");
            return 2;
        }
    }
    if (bytes % 4 || bytes > (256L << 20) || repeats > 99 || iters > 100000000) {
        fprintf(stderr,
                "floor: -b must be a multiple of 4 up to 256M, -r at most 99, "
                "-n at most 1e8 (got %ld, %ld, %ld)\n",
                bytes, repeats, iters);
        return 2;
    }
    cpu_set_t cpus;
    int ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
    printf("# floor: 2 threads, pinned to 2 CPUs of %d, C11 atomics, no library; %ld B per rank, "
           "%ld calls, median of %ld\n",
           ncpu, bytes, iters, repeats);
    printf("# %-10s %12s\n", "protocol", "time (us)");
    int failed = 0;
    for (int p = 0; p < NPROTO; p++) {
        double t[99];
        int wrong = 0;
        for (long r = 0; r < repeats; r++)
            wrong |= (t[r] = run_once(p, (int)(bytes / 4), (int)iters)) < 0;
        qsort(t, (size_t)repeats, sizeof t[0], cmp_double);
        if (wrong)
            printf("  %-10s %12s\n", proto_name[p], "WRONG");
        else
            printf("  %-10s %12.3f\n", proto_name[p], t[repeats / 2]);
        failed |= wrong;
    }
    fflush(stdout);
    if (failed)
        fprintf(stderr, "floor: a protocol returned a wrong result\n");
    return failed;
}
