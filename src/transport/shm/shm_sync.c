/* Signals on shared memory: atomic cell updates, and waits that spin
 * briefly, then sleep on the rank's futex word until a notify that can
 * satisfy them (or an abort) wakes them.
 *
 * Wake-up protocol (no lost wake-ups, no syscall when nobody sleeps):
 *   waiter:   seq = wake_seq; sleepers++ ; re-check cell; futex_wait(wake_seq, seq)
 *   notifier: update cell; if (sleepers[peer]) { wake_seq[peer]++; futex_wake }
 * Both sides use seq_cst, so either the waiter sees the new cell value or the
 * notifier sees the sleeper. */
#include <errno.h>
#include <sched.h>

#include "check/check.h"
#include "transport/shm/shm.h"

/* How often a sleeping waiter wakes up to check deadline and deadlock. */
#define PLD__SLEEP_SLICE_MS 50

static inline void wake_rank(pld__rank_shared *rs, int shared)
{
    atomic_fetch_add_explicit(&rs->wake_seq, 1, memory_order_seq_cst);
    pld__futex_wake(&rs->wake_seq, shared);
}

pld_status pld__shm_signal_update(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                  int32_t value, pld_notify_op op, int shared)
{
    _Atomic int32_t *cell = (_Atomic int32_t *)(pld__shm_peer(buf, peer) + off);
    if (op == PLD_NOTIFY_SET) {
        atomic_store_explicit(cell, value, memory_order_seq_cst);
    } else {
        /* add as unsigned: wraps instead of signed overflow */
        atomic_fetch_add_explicit((_Atomic uint32_t *)cell, (uint32_t)value,
                                  memory_order_seq_cst);
    }
    /* tells the deadlock detector that progress happened (own line, no RMW) */
    atomic_store_explicit(&c->ag->notify_seq,
                          atomic_load_explicit(&c->ag->notify_seq, memory_order_relaxed) + 1,
                          memory_order_seq_cst);
    pld__rank_shared *prs = &c->sh->rank[peer];
    if (atomic_load_explicit(&prs->sleepers, memory_order_seq_cst) > 0)
        wake_rank(prs, shared);
    return PLD_OK;
}

static void publish_wait(pld__agent *ag, const pld__wait_desc *wd)
{
    pld__wait_rec *rec = &ag->wait;
    atomic_store_explicit(&rec->buf_id, wd->buf->id, memory_order_relaxed);
    atomic_store_explicit(&rec->cmp, (int32_t)wd->cmp, memory_order_relaxed);
    atomic_store_explicit(&rec->expected, wd->expected, memory_order_relaxed);
    atomic_store_explicit(&rec->ndim, wd->ndim, memory_order_relaxed);
    atomic_store_explicit(&rec->off, (int64_t)wd->off, memory_order_relaxed);
    for (int i = 0; i < wd->ndim; i++)
        atomic_store_explicit(&rec->coords[i], wd->coords[i], memory_order_relaxed);
}

pld_status pld__shm_signal_wait(pld_ctx *c, const pld__wait_desc *wd, int shared)
{
    pld__world_shared *sh = c->sh;
    pld__rank_shared *rs = c->rs;
    _Atomic int32_t *cell = (_Atomic int32_t *)(pld__shm_peer(wd->buf, c->rank) + wd->off);
    int spins = c->w->spin;
    uint64_t deadline = pld__now_ns() + (uint64_t)c->w->wait_timeout_ms * 1000000u;

    for (int i = 0; i < spins; i++) {
        if (pld__wait_satisfied(atomic_load_explicit(cell, memory_order_acquire), wd->expected,
                                wd->cmp))
            return PLD_OK;
        if (atomic_load_explicit(&sh->abort_status, memory_order_relaxed))
            return PLD_ERR_PEER;
        pld__cpu_relax();
        /* ranks may share a core even when there are enough of them: a
         * yield now and then costs little and lets that rank run */
        if ((i & 255) == 255)
            sched_yield();
    }
    /* Oversubscribed, the rank we wait for is usually runnable on our core:
     * handing it the core (a microsecond) beats sleeping and being woken
     * (several). A bounded number of yields, then sleep for real. */
    for (int i = 0; i < c->w->yields; i++) {
        sched_yield();
        if (pld__wait_satisfied(atomic_load_explicit(cell, memory_order_acquire), wd->expected,
                                wd->cmp))
            return PLD_OK;
        if (atomic_load_explicit(&sh->abort_status, memory_order_relaxed))
            return PLD_ERR_PEER;
    }

    pld__agent *ag = c->ag;
    publish_wait(ag, wd);
    for (;;) {
        uint32_t seq = atomic_load_explicit(&rs->wake_seq, memory_order_seq_cst);
        atomic_fetch_add_explicit(&rs->sleepers, 1, memory_order_seq_cst);
        atomic_store_explicit(&ag->state, PLD__RS_BLOCKED, memory_order_seq_cst);
        int32_t v = atomic_load_explicit(cell, memory_order_seq_cst);
        int done = pld__wait_satisfied(v, wd->expected, wd->cmp);
        int aborted = atomic_load_explicit(&sh->abort_status, memory_order_seq_cst) != 0;
        int timed_out = 0;
        if (!done && !aborted)
            timed_out = pld__futex_wait(&rs->wake_seq, seq, PLD__SLEEP_SLICE_MS, shared) ==
                        ETIMEDOUT;
        atomic_store_explicit(&ag->state, PLD__RS_RUNNING, memory_order_seq_cst);
        atomic_fetch_sub_explicit(&rs->sleepers, 1, memory_order_seq_cst);
        if (done) {
            atomic_thread_fence(memory_order_acquire);
            return PLD_OK;
        }
        if (aborted)
            return PLD_ERR_PEER;
        if (pld__wait_satisfied(atomic_load_explicit(cell, memory_order_acquire), wd->expected,
                                wd->cmp))
            return PLD_OK;
        if (timed_out) {
            /* Re-enter the blocked state for the check: the detector only
             * declares a deadlock when this rank is counted as blocked. */
            atomic_store_explicit(&ag->state, PLD__RS_BLOCKED, memory_order_seq_cst);
            int dead = pld__deadlock_check(c->w);
            atomic_store_explicit(&ag->state, PLD__RS_RUNNING, memory_order_seq_cst);
            if (dead)
                return PLD_ERR_PEER; /* the report is the group's root cause */
            if (pld__now_ns() >= deadline)
                return PLD_ERR_TIMEOUT;
        }
    }
}

void pld__shm_abort(pld_world *w, int shared)
{
    for (int r = 0; r < w->nranks; r++)
        wake_rank(&w->sh->rank[r], shared);
}
