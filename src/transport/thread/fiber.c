/* SPDX-License-Identifier: Apache-2.0 */
/* Ranks as user-level contexts (PLD_FIBERS), for worlds of many more ranks
 * than CPUs.
 *
 * Why: with a thread per rank, every wait that is not met at once hands the
 * CPU to another thread through the kernel's scheduler, 1.2-2.8 us a switch
 * on this kind of machine and more once thousands of threads no longer fit
 * the caches; a barrier of 1024 ranks on two CPUs needs every rank to run
 * at least once, so it cannot take less than 1024 such switches. A switch
 * between two contexts of one thread (swapcontext) is a few hundred ns and
 * touches no scheduler.
 *
 * How: each carrier thread owns a fixed set of ranks (rank r runs on
 * carrier r mod C) and runs them round-robin. A rank runs until its wait is
 * not met, then pld__fiber_yield switches straight to the carrier's next
 * rank that has not returned; there is no preemption. When every rank of
 * the carrier yielded in a row without its wait being met, the carrier
 * backs off: sched_yield for BACKOFF_YIELD_NS, then naps from NAP_FIRST_NS,
 * doubling up to a cap that grows with the ranks it runs, so a carrier
 * whose ranks all wait for another carrier (or a rank computing for long)
 * leaves the CPU. The first yield of a wait counts as progress: the rank
 * did something since its last yield.
 *
 * A rank that blocks inside the kernel (a sleep, a read) or loops in its
 * own code without calling pld holds its carrier: the other ranks of that
 * carrier do not run until it yields or returns. That is the price of
 * cheap switches, and why PLD_FIBERS is off by default.
 *
 * What a switch saves beyond the registers: the library's per-thread
 * current context (core/handles.c), since every rank has its own. Under
 * AddressSanitizer and ThreadSanitizer every switch is announced to them,
 * so they follow each rank's stack. The switch synchronises for TSan (the
 * carrier's own state and the thread's locals are shared by its ranks, one
 * after the other): TSan finds races between ranks of different carriers
 * only, pld's race checker (PLD_CHECK=race) between any two. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/handles.h"
#include "core/internal.h"
#include "transport/thread/fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#define PLD__FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLD__FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define PLD__FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PLD__FIBER_TSAN 1
#endif
#endif
#ifdef PLD__FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef PLD__FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#define BACKOFF_YIELD_NS 2000000ull
#define NAP_FIRST_NS 1000ull
/* nap cap: this, plus NAP_PER_RANK_NS per rank of the carrier. A round of
 * an idle carrier's ranks (each a switch and a look at its cell) costs
 * 0.5-0.7 us a rank here, so polling stays at about 5 % of a CPU however
 * many ranks the carrier runs (2048 ranks: a 21 ms cap, and 214-378 ms of
 * CPU in 1.5 s with a 2 us share, which measured the cost) */
#define NAP_MAX_NS 1000000ull
#define NAP_PER_RANK_NS 10000ull

typedef struct fiber {
    ucontext_t uc;
    unsigned char *map; /* guard page + stack */
    size_t map_bytes;
    int rank;
    int next, prev; /* the ring of this run's fibers that have not returned */
    pld_ctx *ctx;   /* the library's current context while switched out */
    void *fake;     /* ASan: this stack's fake frames while switched out */
    void *tsan;     /* TSan: this rank's fiber */
} fiber;

struct pld__carrier {
    ucontext_t main;
    fiber *f;
    int n;
    int cur;  /* the fiber running now */
    int left; /* fibers that have not returned in this run */
    int idle; /* idle yields in a row */
    uint64_t idle_since;
    uint64_t nap;
    pld__fiber_fn fn;
    void *arg;
    size_t stack_bytes;
    void *main_fake;
    const void *main_lo; /* the carrier thread's own stack (ASan) */
    size_t main_size;
    void *main_tsan;
};

static _Thread_local pld__carrier *running;

pld__carrier *pld__carrier_new(int first, int stride, int n, size_t stack_bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t pg = page > 0 ? (size_t)page : 4096;
    pld__carrier *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->f = calloc((size_t)n, sizeof *k->f);
    if (!k->f) {
        free(k);
        return NULL;
    }
    k->n = n;
    k->stack_bytes = (stack_bytes + pg - 1) & ~(pg - 1);
    for (int i = 0; i < n; i++) {
        fiber *f = &k->f[i];
        f->rank = first + i * stride;
        f->map_bytes = k->stack_bytes + pg;
        /* untouched stack pages cost nothing until a rank uses them, as a
         * thread's would */
        void *m = mmap(NULL, f->map_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED || mprotect(m, pg, PROT_NONE) != 0) {
            if (m != MAP_FAILED)
                munmap(m, f->map_bytes);
            pld__carrier_free(k);
            return NULL;
        }
        f->map = m;
    }
    return k;
}

void pld__carrier_free(pld__carrier *k)
{
    if (!k)
        return;
    for (int i = 0; i < k->n; i++)
        if (k->f[i].map)
            munmap(k->f[i].map, k->f[i].map_bytes);
    free(k->f);
    free(k);
}

static unsigned char *stack_lo(const pld__carrier *k, const fiber *f)
{
    return f->map + (f->map_bytes - k->stack_bytes);
}

/* Leaves the running context for `to` (NULL: the carrier's own); `from_fake`
 * NULL when the context left will never run again. Returns when something
 * switches back. */
static void switch_to(pld__carrier *k, ucontext_t *from, void **from_fake, fiber *to)
{
#ifdef PLD__FIBER_ASAN
    __sanitizer_start_switch_fiber(from_fake, to ? stack_lo(k, to) : k->main_lo,
                                   to ? k->stack_bytes : k->main_size);
#else
    (void)from_fake;
#endif
#ifdef PLD__FIBER_TSAN
    __tsan_switch_to_fiber(to ? to->tsan : k->main_tsan, 0);
#endif
    swapcontext(from, to ? &to->uc : &k->main);
#ifdef PLD__FIBER_ASAN
    __sanitizer_finish_switch_fiber(from_fake ? *from_fake : NULL, NULL, NULL);
#endif
}

/* Makes the next fiber of the ring the running one (the running one itself
 * when it is the only one left). */
static fiber *next_fiber(pld__carrier *k)
{
    k->cur = k->f[k->cur].next;
    return &k->f[k->cur];
}

static void fiber_main(void)
{
    pld__carrier *k = running;
#ifdef PLD__FIBER_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    fiber *me = &k->f[k->cur];
    pld__set_current_ctx(NULL);
    k->fn(k->arg, me->rank);
    /* out of the ring: the ranks still running never look at it again */
    k->f[me->prev].next = me->next;
    k->f[me->next].prev = me->prev;
    k->left--;
    k->idle = 0;
    k->idle_since = 0;
    /* never resumed: its fake frames go (NULL), its context is made anew by
     * the next run */
    switch_to(k, &me->uc, NULL, k->left ? next_fiber(k) : NULL);
}

/* A fresh context for f at fiber_main. Never inlined into its caller:
 * getcontext returns twice, which no loop variable may see. */
__attribute__((noinline)) static void fiber_start(pld__carrier *k, fiber *f)
{
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = stack_lo(k, f);
    f->uc.uc_stack.ss_size = k->stack_bytes;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, fiber_main, 0);
#ifdef PLD__FIBER_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
}

void pld__carrier_run(pld__carrier *k, pld__fiber_fn fn, void *arg)
{
    k->fn = fn;
    k->arg = arg;
    k->left = k->n;
    k->cur = 0;
    k->idle = 0;
    k->idle_since = 0;
    k->nap = NAP_FIRST_NS;
#ifdef PLD__FIBER_ASAN
    pthread_attr_t at;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
        pthread_attr_getstack(&at, &lo, &size);
        pthread_attr_destroy(&at);
    }
    k->main_lo = lo;
    k->main_size = size;
#endif
#ifdef PLD__FIBER_TSAN
    k->main_tsan = __tsan_get_current_fiber();
#endif
    for (int i = 0; i < k->n; i++) {
        k->f[i].next = i + 1 == k->n ? 0 : i + 1;
        k->f[i].prev = i == 0 ? k->n - 1 : i - 1;
        fiber_start(k, &k->f[i]);
    }
    running = k; /* a carrier thread runs one carrier, never nested */
    switch_to(k, &k->main, &k->main_fake, &k->f[0]);
    running = NULL;
#ifdef PLD__FIBER_TSAN
    for (int i = 0; i < k->n; i++)
        __tsan_destroy_fiber(k->f[i].tsan);
#endif
}

int pld__fiber_running(void)
{
    return running != NULL;
}

int pld__fiber_alone(void)
{
    return running && running->left == 1;
}

static void back_off(pld__carrier *k)
{
    uint64_t now = pld__now_ns();
    if (!k->idle_since)
        k->idle_since = now;
    if (now - k->idle_since < BACKOFF_YIELD_NS) {
        sched_yield();
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)(k->nap / 1000000000u),
                          .tv_nsec = (long)(k->nap % 1000000000u)};
    nanosleep(&ts, NULL);
    uint64_t cap = NAP_MAX_NS + NAP_PER_RANK_NS * (uint64_t)k->left;
    k->nap = k->nap * 2 < cap ? k->nap * 2 : cap;
}

void pld__fiber_yield(int idle)
{
    pld__carrier *k = running;
    if (!k)
        return;
    if (!idle) {
        k->idle = 0;
        k->idle_since = 0;
        k->nap = NAP_FIRST_NS;
    } else if (++k->idle >= k->left) {
        k->idle = 0; /* a whole round of this carrier's ranks is waiting */
        back_off(k);
    }
    fiber *me = &k->f[k->cur];
    fiber *to = next_fiber(k);
    if (to == me)
        return; /* the only rank left: back_off already paced it */
    me->ctx = pld__current_ctx();
    switch_to(k, &me->uc, &me->fake, to);
    pld__set_current_ctx(me->ctx);
}
