/* SPDX-License-Identifier: Apache-2.0 */
/* The thread transport (embedded default): every rank is a thread of this
 * process, created once per world and reused by every launch; windows are
 * ordinary anonymous mappings, so peers are reached with plain loads and
 * stores.
 *
 * A launch ends when every rank has returned, or PLD__STUCK_GRACE_MS after
 * the group failed if some rank still has not, counted again from each rank
 * that returns meanwhile (thousands of ranks on two CPUs take longer than
 * that to unwind, one after the other): the rank left is looping in user
 * code (it never reaches a pld call, which would see the abort and leave),
 * and a thread cannot be stopped from outside. The launch then returns
 * PLD_ERR_TIMEOUT naming it and marks the world unusable (w->unusable):
 * the rank may still read and write the world's windows, host blocks and
 * control block, so nothing may reuse them. Finalize leaks what such a
 * thread can reach instead of freeing it under its feet. A launch that has
 * not failed is never cut short: a long computation looks exactly like a
 * loop that never ends. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transport/shm/shm.h"
#include "transport/thread/fiber.h"

typedef struct tp_thread_rank {
    _Atomic uint32_t finished_gen; /* the last launch this rank returned from */
} tp_thread_rank;

/* A thread of the world: rank `index` itself, or with PLD_FIBERS the
 * carrier of ranks index, index + nworkers, ... (fiber.c). */
typedef struct tp_worker {
    pld_world *w;
    int index;
    pthread_t tid;
    pld__carrier *carrier; /* NULL: the thread is rank `index` */
    uint32_t gen;          /* the launch it runs */
} tp_worker;

/* Header in front of every pld_host_alloc block: finalize frees what the
 * program did not. 64 bytes keep the user's block cache-line aligned. */
typedef struct tp_host_block {
    _Alignas(PLD__CACHELINE) struct tp_host_block *prev, *next;
} tp_host_block;

typedef struct tp_thread_state {
    pthread_mutex_t host_lock;
    tp_host_block host_blocks;   /* list head */
    _Atomic uint32_t launch_gen; /* bumped to start a launch (futex word) */
    _Atomic uint32_t pending;    /* ranks still running the launch */
    /* futex word the host sleeps on during a launch: bumped by the last rank
     * to finish and by every abort, so the host learns of a failure without
     * polling (it then gives the ranks PLD__STUCK_GRACE_MS to return) */
    _Atomic uint32_t host_bell;
    /* when a rank last returned from a failed launch (pld__now_ns): the
     * grace period counts from it too */
    _Atomic uint64_t returned_ns;
    _Atomic int quit;
    int nworkers;
    int started;
    int stuck; /* host-only: some rank never returned (world unusable) */
    tp_thread_rank *ranks;
    tp_worker *workers;
} tp_thread_state;

static void ring_host(tp_thread_state *s)
{
    atomic_fetch_add_explicit(&s->host_bell, 1, memory_order_seq_cst);
    pld__futex_wake(&s->host_bell, 0);
}

/* One rank's share of launch `gen`, and the count the host waits for. */
static void run_rank(pld_world *w, int rank, uint32_t gen)
{
    tp_thread_state *s = w->tp_state;
    pld__rank_main(w, rank);
    if (atomic_load_explicit(&w->sh->abort_status, memory_order_relaxed) != 0)
        atomic_store_explicit(&s->returned_ns, pld__now_ns(), memory_order_relaxed);
    atomic_store_explicit(&s->ranks[rank].finished_gen, gen, memory_order_release);
    if (atomic_fetch_sub_explicit(&s->pending, 1, memory_order_acq_rel) == 1)
        ring_host(s);
}

static void carrier_rank(void *arg, int rank)
{
    tp_worker *me = arg;
    run_rank(me->w, rank, me->gen);
}

static void *tp_thread_worker(void *arg)
{
    tp_worker *me = arg;
    pld_world *w = me->w;
    tp_thread_state *s = w->tp_state;
    uint32_t seen = 0;
    if (w->pin)
        pld__pin_rank(me->index);
    for (;;) {
        uint32_t gen;
        while ((gen = atomic_load_explicit(&s->launch_gen, memory_order_acquire)) == seen &&
               !atomic_load(&s->quit))
            pld__futex_wait(&s->launch_gen, seen, -1, 0);
        if (atomic_load(&s->quit))
            break;
        seen = me->gen = gen;
        if (me->carrier)
            pld__carrier_run(me->carrier, carrier_rank, me);
        else
            run_rank(w, me->index, gen);
    }
    return NULL;
}

/* 1 when some rank of worker i has not returned from launch `gen`. */
static int worker_stuck(const tp_thread_state *s, int i, uint32_t gen, int nranks)
{
    for (int r = i; r < nranks; r += s->nworkers)
        if (atomic_load_explicit(&s->ranks[r].finished_gen, memory_order_acquire) != gen)
            return 1;
    return 0;
}

/* Asks every worker thread to leave and joins it. A thread still inside
 * the kernel of the launch that declared it stuck is detached instead
 * (joining would hang); returns how many were. */
static int tp_thread_stop(tp_thread_state *s, int nranks)
{
    uint32_t last = atomic_load(&s->launch_gen);
    atomic_store(&s->quit, 1);
    atomic_fetch_add(&s->launch_gen, 1);
    pld__futex_wake(&s->launch_gen, 0);
    int detached = 0;
    for (int i = 0; i < s->started; i++) {
        if (s->stuck && worker_stuck(s, i, last, nranks)) {
            pthread_detach(s->workers[i].tid);
            detached++;
        } else {
            pthread_join(s->workers[i].tid, NULL);
        }
    }
    return detached;
}

static void tp_thread_state_free(tp_thread_state *s)
{
    for (int i = 0; s->workers && i < s->nworkers; i++)
        pld__carrier_free(s->workers[i].carrier);
    free(s->workers);
    free(s->ranks);
    free(s);
}

/* The carriers of PLD_FIBERS: worker i runs ranks i, i + n, ... */
static int make_carriers(pld_world *w, tp_thread_state *s)
{
    int n = s->nworkers;
    for (int i = 0; i < n; i++)
        if (!(s->workers[i].carrier =
                  pld__carrier_new(i, n, (w->nranks - i + n - 1) / n, w->stack_bytes)))
            return -1;
    return 0;
}

static pld_status tp_thread_world_init(pld_world *w)
{
    if (w->fibers && w->sched_mode)
        return pld__world_fail(w, PLD_ERR_UNSUPPORTED,
                               "the schedule explorer (PLD_SCHED) runs every rank on a thread "
                               "of its own; unset PLD_FIBERS (%d) to explore",
                               w->fibers);
    tp_thread_state *s = calloc(1, sizeof *s);
    if (!s)
        return pld__world_fail(w, PLD_ERR_NOMEM, "out of memory");
    s->nworkers = w->fibers ? w->fibers : w->nranks;
    s->ranks = calloc((size_t)w->nranks, sizeof *s->ranks);
    s->workers = calloc((size_t)s->nworkers, sizeof *s->workers);
    w->sh_bytes = pld__world_shared_bytes(w->nranks, w->profile.aiv_cores);
    w->sh = aligned_alloc(PLD__CACHELINE,
                          (w->sh_bytes + PLD__CACHELINE - 1) & ~(size_t)(PLD__CACHELINE - 1));
    if (!s->ranks || !s->workers || !w->sh || (w->fibers && make_carriers(w, s) != 0)) {
        tp_thread_state_free(s);
        free(w->sh);
        w->sh = NULL;
        return pld__world_fail(w, PLD_ERR_NOMEM, "out of memory");
    }
    memset(w->sh, 0, w->sh_bytes);
    pld__world_shared_init(w->sh, w->nranks, w->profile.aiv_cores);
    pthread_mutex_init(&s->host_lock, NULL);
    s->host_blocks.prev = s->host_blocks.next = &s->host_blocks;
    w->tp_state = s;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* many ranks on few cores: stacks moderate but roomy for kernels
     * (PLD_STACK_BYTES, default 4 MiB); a carrier's ranks have their own */
    pthread_attr_setstacksize(&attr, w->stack_bytes);
    for (int i = 0; i < s->nworkers; i++) {
        s->workers[i].w = w;
        s->workers[i].index = i;
        int rc = pthread_create(&s->workers[i].tid, &attr, tp_thread_worker, &s->workers[i]);
        if (rc != 0) {
            pthread_attr_destroy(&attr);
            tp_thread_stop(s, w->nranks);
            pthread_mutex_destroy(&s->host_lock);
            tp_thread_state_free(s);
            free(w->sh);
            w->tp_state = NULL;
            w->sh = NULL;
            return pld__world_fail(w, PLD_ERR_SYSTEM, "pthread_create for %s %d failed: %s",
                                   w->fibers ? "carrier thread" : "rank", i, strerror(rc));
        }
        s->started++;
    }
    pthread_attr_destroy(&attr);
    return PLD_OK;
}

static void tp_thread_world_fini(pld_world *w)
{
    tp_thread_state *s = w->tp_state;
    if (!s)
        return;
    if (tp_thread_stop(s, w->nranks)) {
        /* A rank still runs its kernel: it may touch the control block, its
         * rank record, host blocks or (through the world) anything else, and
         * once it returns it decrements `pending` and reads `quit`. Leak all
         * of it, its stack too: a thread cannot be stopped, and freed memory
         * under a live thread is worse than a leak. (Windows and host blocks
         * were already kept by window_free and host_free.) */
        w->tp_state = NULL;
        w->sh = NULL;
        return;
    }
    while (s->host_blocks.next != &s->host_blocks) {
        tp_host_block *b = s->host_blocks.next;
        s->host_blocks.next = b->next;
        free(b);
    }
    pthread_mutex_destroy(&s->host_lock);
    tp_thread_state_free(s);
    free(w->sh);
    w->tp_state = NULL;
    w->sh = NULL;
}

/* The group failed and ranks are still inside the kernel PLD__STUCK_GRACE_MS
 * later: name them, mark the world unusable, and return without them. */
static pld_status tp_thread_give_up(pld_world *w, uint32_t gen)
{
    tp_thread_state *s = w->tp_state;
    char who[256] = "";
    size_t n = 0;
    int nstuck = 0;
    for (int r = 0; r < w->nranks; r++) {
        if (atomic_load_explicit(&s->ranks[r].finished_gen, memory_order_acquire) == gen)
            continue;
        if (n < sizeof who)
            n += (size_t)snprintf(who + n, sizeof who - n, "%srank %d (device %d)",
                                  nstuck ? ", " : "", r, w->device_ids[r]);
        nstuck++;
    }
    s->stuck = 1;
    snprintf(w->unusable_why, sizeof w->unusable_why,
             "%s did not return from the kernel of a failed launch, and a thread cannot be "
             "stopped; finalize this world (the stuck thread and the memory it can reach are "
             "leaked) and create a new one, or use --transport process, where such a rank is "
             "killed and replaced",
             who);
    atomic_store_explicit(&w->unusable, 1, memory_order_release);
    /* sh->errmsg was written before abort_status was stored (seq_cst), and
     * the host read abort_status: the root cause is complete here */
    /* with carriers, one rank looping in its own code holds every rank of
     * its thread that had not returned: say so, or the list misleads */
    char shared[192] = "";
    if (w->fibers)
        snprintf(shared, sizeof shared,
                 "; with PLD_FIBERS=%d the ranks share a thread each (rank r on thread r mod "
                 "%d), and one looping in its own code holds the others",
                 w->fibers, w->fibers);
    return pld__world_fail(w, PLD_ERR_TIMEOUT,
                           "%s did not return from %s kernel within %d ms after the group "
                           "failed or another rank returned (%s in user code, not in a pld "
                           "call that would have "
                           "left%s); a thread cannot be killed, so this world is now unusable "
                           "and every further call on it fails. The group failed first: %s",
                           who, nstuck > 1 ? "their" : "its", PLD__STUCK_GRACE_MS,
                           nstuck > 1 ? "they are" : "it is", shared, w->sh->errmsg);
}

static pld_status tp_thread_launch(pld_world *w)
{
    tp_thread_state *s = w->tp_state;
    if (s->stuck) /* pld_launch checks first; this keeps the transport safe alone */
        return pld__world_usable(w, "pld_launch");
    atomic_store_explicit(&s->pending, (uint32_t)w->nranks, memory_order_relaxed);
    atomic_store_explicit(&s->returned_ns, 0, memory_order_relaxed);
    uint32_t gen = atomic_fetch_add_explicit(&s->launch_gen, 1, memory_order_release) + 1;
    pld__futex_wake(&s->launch_gen, 0);
    uint64_t failed_at = 0;
    for (;;) {
        /* read the bell before the conditions: a ring after this read makes
         * the futex wait return at once */
        uint32_t bell = atomic_load_explicit(&s->host_bell, memory_order_seq_cst);
        if (atomic_load_explicit(&s->pending, memory_order_acquire) == 0)
            return PLD_OK;
        int64_t sleep_ns = -1;
        if (atomic_load_explicit(&w->sh->abort_status, memory_order_seq_cst) != 0) {
            uint64_t now = pld__now_ns();
            if (!failed_at)
                failed_at = now;
            /* from the failure, or from the last rank that returned since */
            uint64_t last = atomic_load_explicit(&s->returned_ns, memory_order_relaxed);
            uint64_t end =
                (last > failed_at ? last : failed_at) + (uint64_t)PLD__STUCK_GRACE_MS * 1000000u;
            if (now >= end)
                return tp_thread_give_up(w, gen);
            sleep_ns = (int64_t)(end - now);
        }
        pld__futex_wait_ns(&s->host_bell, bell, sleep_ns, 0);
    }
}

static void tp_thread_hosted(const pld_world *w, int *first, int *count)
{
    *first = 0;
    *count = w->nranks;
}

static int tp_thread_rank_pid(const pld_world *w, int rank)
{
    (void)w, (void)rank;
    return (int)getpid();
}

static pld_status tp_thread_window_alloc(pld_world *w, pld_window_buffer *buf)
{
    size_t total = buf->stride * (size_t)w->nranks;
    /* anonymous mappings are zeroed lazily by the kernel: no memset pass */
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return PLD_ERR_NOMEM;
    buf->base = p;
    buf->map_bytes = total;
    return PLD_OK;
}

static void tp_thread_window_free(pld_world *w, pld_window_buffer *buf)
{
    tp_thread_state *s = w->tp_state;
    if (s && s->stuck)
        return; /* a stuck rank may still use it (and read buf): leaked, see the top */
    if (buf->base)
        munmap(buf->base, buf->map_bytes);
    buf->base = NULL;
}

static void *tp_thread_host_alloc(pld_world *w, size_t bytes)
{
    tp_thread_state *s = w->tp_state;
    if (bytes > SIZE_MAX - sizeof(tp_host_block))
        return NULL;
    tp_host_block *b = aligned_alloc(PLD__CACHELINE, (sizeof *b + bytes + PLD__CACHELINE - 1) &
                                                         ~(size_t)(PLD__CACHELINE - 1));
    if (!b)
        return NULL;
    memset(b + 1, 0, bytes);
    pthread_mutex_lock(&s->host_lock);
    b->prev = &s->host_blocks;
    b->next = s->host_blocks.next;
    b->next->prev = b;
    s->host_blocks.next = b;
    pthread_mutex_unlock(&s->host_lock);
    return b + 1;
}

static void tp_thread_host_free(pld_world *w, void *p)
{
    tp_thread_state *s = w->tp_state;
    if (s->stuck)
        return; /* a stuck rank may still use it: leaked (see the top) */
    tp_host_block *b = (tp_host_block *)p - 1;
    pthread_mutex_lock(&s->host_lock);
    b->prev->next = b->next;
    b->next->prev = b->prev;
    pthread_mutex_unlock(&s->host_lock);
    free(b);
}

static int tp_thread_host_visible(pld_world *w, const void *p, size_t bytes)
{
    (void)w, (void)p, (void)bytes;
    return 1; /* one address space */
}

static int tp_thread_rank_mem_ok(pld_ctx *c, const void *p, size_t bytes)
{
    (void)c, (void)p, (void)bytes;
    return 1; /* one address space */
}

static pld_status tp_thread_signal_update(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                          int32_t value, pld_notify_op op, int32_t *old_out)
{
    return pld__shm_signal_update(c, buf, peer, off, value, op, 0, old_out);
}

static int tp_thread_sleep(pld_ctx *c, uint32_t ticket, uint64_t timeout_ns)
{
    return pld__shm_sleep(c, ticket, timeout_ns, 0);
}

static void tp_thread_abort(pld_world *w)
{
    pld__shm_abort(w, 0);
    ring_host(w->tp_state); /* the host starts counting the grace period */
}

const pld_transport_ops pld__tp_thread_ops = {
    .size = sizeof(pld_transport_ops),
    .name = "thread",
    .launcher_size = pld__tp_program_sized,
    .world_init = tp_thread_world_init,
    .world_fini = tp_thread_world_fini,
    .launch = tp_thread_launch,
    .hosted_ranks = tp_thread_hosted,
    .rank_pid = tp_thread_rank_pid,
    .threads_ok = pld__tp_threads_always_ok,
    .window_alloc = tp_thread_window_alloc,
    .window_free = tp_thread_window_free,
    .window_peer_ptr = pld__shm_window_peer_ptr,
    .host_alloc = tp_thread_host_alloc,
    .host_free = tp_thread_host_free,
    .host_visible = tp_thread_host_visible,
    .rank_mem_ok = tp_thread_rank_mem_ok,
    .put = pld__shm_put,
    .get = pld__shm_get,
    .accumulate = pld__shm_accumulate,
    .signal_update = tp_thread_signal_update,
    .signal_load = pld__shm_signal_load,
    .sleep_prepare = pld__shm_sleep_prepare,
    .sleep = tp_thread_sleep,
    .sleep_end = pld__shm_sleep_end,
    .fence = pld__shm_fence,
    .abort = tp_thread_abort,
    /* one process: every failure is in the world's abort_status */
    .peer_failed = pld__tp_no_peer_failure,
    .host_agree = pld__tp_one_host_agrees,
    .host_union = pld__tp_one_host_union,
    .caps = PLD__TP_CAP_WAKE | PLD__TP_CAP_DEADLOCK,
};
