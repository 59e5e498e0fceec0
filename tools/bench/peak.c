/* SPDX-License-Identifier: Apache-2.0 */
/* memcpy peak: see peak.h. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include "peak.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sweep.h"

#define TRIAL_NS 2000000u /* grow reps until one trial takes this long */
#define MAX_REPS (1 << 20)
#define PIECE ((int64_t)64 << 10)

typedef struct peak_run {
    pthread_barrier_t bar;
    int64_t bytes;
    size_t piece; /* 0: one memcpy per buffer; else memcpy in pieces of this size */
    int reps, stop;
} peak_run;

typedef struct peak_thread {
    peak_run *run;
    unsigned char *src, *dst;
    pthread_t tid;
} peak_thread;

int bench_online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static size_t mapped_size(int64_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return ((size_t)bytes + page - 1) / page * page;
}

static unsigned char *map_buffer(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int bench_peak_buffers(int64_t bytes, unsigned char **src, unsigned char **dst)
{
    size_t n = mapped_size(bytes > 0 ? bytes : 1);
    *src = map_buffer(n);
    *dst = *src ? map_buffer(n) : NULL;
    if (!*dst) {
        if (*src)
            munmap(*src, n);
        *src = NULL;
        return -1;
    }
    /* every page written: no first-touch faults (or zero-page reads) inside a trial */
    memset(*src, 0x5a, n);
    memset(*dst, 0, n);
    return 0;
}

void bench_peak_buffers_free(int64_t bytes, unsigned char *src, unsigned char *dst)
{
    size_t n = mapped_size(bytes > 0 ? bytes : 1);
    if (src)
        munmap(src, n);
    if (dst)
        munmap(dst, n);
}

static void copy_reps(peak_thread *t)
{
    size_t n = (size_t)t->run->bytes, piece = t->run->piece ? t->run->piece : n;
    for (int i = 0; i < t->run->reps; i++) {
        for (size_t off = 0; off < n; off += piece)
            memcpy(t->dst + off, t->src + off, n - off < piece ? n - off : piece);
        __asm__ volatile("" ::: "memory"); /* keep every copy */
    }
}

static void *worker(void *arg)
{
    peak_thread *t = arg;
    for (;;) {
        pthread_barrier_wait(&t->run->bar);
        if (t->run->stop)
            return NULL;
        copy_reps(t);
        pthread_barrier_wait(&t->run->bar);
    }
}

double bench_memcpy_gbs(int threads, int64_t bytes)
{
    if (threads < 1 || bytes < 1)
        return 0;
    peak_run run = {.bytes = bytes, .reps = 1};
    peak_thread *t = calloc((size_t)threads, sizeof *t);
    if (!t)
        return 0;
    double best = 0;
    int ok = 1;
    for (int i = 0; ok && i < threads; i++) {
        t[i].run = &run;
        ok = bench_peak_buffers(bytes, &t[i].src, &t[i].dst) == 0;
    }
    if (ok && pthread_barrier_init(&run.bar, NULL, (unsigned)threads) == 0) {
        for (int i = 1; i < threads; i++)
            if (pthread_create(&t[i].tid, NULL, worker, &t[i]) != 0) {
                /* the barrier would never fill: nothing sensible to measure */
                fprintf(stderr, "pld: cannot start memcpy measurement thread %d\n", i);
                exit(1);
            }
        /* one untimed pass first: caches and TLBs warm, threads running;
         * then trials alternate between one memcpy per buffer and 64 KiB
         * pieces */
        for (int warm = 1, trials = 0; trials < BENCH_PEAK_TRIALS; warm = 0) {
            run.piece = trials % 2 && bytes > PIECE ? PIECE : 0;
            pthread_barrier_wait(&run.bar);
            uint64_t t0 = bench_now_ns();
            copy_reps(&t[0]);
            pthread_barrier_wait(&run.bar);
            uint64_t ns = bench_now_ns() - t0;
            if (warm)
                continue;
            if (ns < TRIAL_NS && run.reps < MAX_REPS) {
                run.reps *= 2; /* calibrating: too short to time */
                continue;
            }
            double gbs = (double)threads * (double)bytes * run.reps / (double)ns;
            if (gbs > best)
                best = gbs;
            trials++;
        }
        run.stop = 1;
        pthread_barrier_wait(&run.bar);
        for (int i = 1; i < threads; i++)
            pthread_join(t[i].tid, NULL);
        pthread_barrier_destroy(&run.bar);
    }
    for (int i = 0; i < threads; i++)
        bench_peak_buffers_free(bytes, t[i].src, t[i].dst);
    free(t);
    return best;
}
