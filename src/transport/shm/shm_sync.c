/* SPDX-License-Identifier: Apache-2.0 */
/* Signals on shared memory: atomic cell updates, and the sleep/wake the
 * wait policy (src/prim/wait.c) sleeps on: the rank's futex word.
 *
 * Wake-up protocol (no lost wake-ups, no syscall when nobody sleeps):
 *   waiter:   seq = wake_seq; sleepers++ ; re-check cell; futex_wait(wake_seq, seq)
 *             (sleep_prepare)              (the policy)    (sleep)
 *   notifier: update cell; if (sleepers[peer]) { wake_seq[peer]++; futex_wake }
 * Both sides are seq_cst (sleep_prepare ends with a seq_cst fence, so the
 * policy's acquire re-check counts as one), so either the waiter sees the
 * new cell value or the notifier sees the sleeper. An abort bumps every
 * rank's wake_seq after the abort status is stored: a waiter that read its
 * seq before the bump does not sleep, one that read it after sees the
 * status.
 *
 * A notify wakes only a sleeper it can satisfy: where no core of the peer
 * has published a wait on this very cell that the new value meets, the
 * wake-up (a syscall, and a context switch for a rank that would find its
 * cell unmet and sleep again) is skipped. A rank gathering P-1 arrivals on
 * one cell is then woken once, not P-1 times. Safe by the same order: a
 * sleeper counted in `sleepers` published its wait before registering, so
 * the notifier reads it; a core whose wait the notifier did not see (an old
 * record) registers after the notifier's look at `sleepers`, and so its
 * re-check sees the new value. */
#include <errno.h>

#include "transport/shm/shm.h"

static inline void wake_rank(pld__rank_shared *rs, int shared)
{
    atomic_fetch_add_explicit(&rs->wake_seq, 1, memory_order_seq_cst);
    pld__futex_wake(&rs->wake_seq, shared);
}

/* 1 when some core of rank peer waits on cell off of window buf_id and
 * `now` meets its wait (see above). */
static int wake_wanted(pld__world_shared *sh, int peer, int32_t buf_id, size_t off, int32_t now)
{
    for (int k = 0; k < sh->cores; k++) {
        pld__wait_rec *rec = &pld__agent_at(sh, peer, k)->wait;
        if (atomic_load_explicit(&rec->buf_id, memory_order_relaxed) == buf_id &&
            atomic_load_explicit(&rec->off, memory_order_relaxed) == (int64_t)off &&
            pld__wait_satisfied(
                now, atomic_load_explicit(&rec->expected, memory_order_relaxed),
                (pld_wait_cmp)atomic_load_explicit(&rec->cmp, memory_order_relaxed)))
            return 1;
    }
    return 0;
}

/* An AtomicAdd that overflows int32 is found from the value the add
 * fetched, and taken back by the inverse add: the common path stays one
 * fetch_add. The wrong sum is in the cell between the two, and what a peer
 * sees then is the price: a waiter may pass its wait on it, but the caller
 * aborts the group at once, so that rank stops at its next pld call with
 * PLD_ERR_PEER (and the cell ends as if the add never happened). A
 * compare-and-swap loop would never show the sum, but would make every
 * notify a load plus a retry loop on a line the peer is polling. The
 * adds are unsigned, so neither of them is a signed overflow. */
pld_status pld__shm_signal_update(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                  int32_t value, pld_notify_op op, int shared, int32_t *old_out)
{
    _Atomic int32_t *cell = (_Atomic int32_t *)(pld__shm_peer(buf, peer) + off);
    int32_t now = value; /* the cell's new value */
    if (op == PLD_NOTIFY_SET) {
        atomic_store_explicit(cell, value, memory_order_seq_cst);
    } else {
        _Atomic uint32_t *ucell = (_Atomic uint32_t *)cell;
        int32_t old =
            (int32_t)atomic_fetch_add_explicit(ucell, (uint32_t)value, memory_order_seq_cst);
        if (PLD__UNLIKELY(pld__add_overflows_i32(old, value))) {
            atomic_fetch_sub_explicit(ucell, (uint32_t)value, memory_order_seq_cst);
            *old_out = old;
            return PLD_ERR_DATA; /* no wake: the caller's abort wakes everyone */
        }
        now = old + value;
    }
    /* tells the deadlock detector that progress happened (own line, no RMW) */
    atomic_store_explicit(&c->ag->notify_seq,
                          atomic_load_explicit(&c->ag->notify_seq, memory_order_relaxed) + 1,
                          memory_order_seq_cst);
    pld__rank_shared *prs = &c->sh->rank[peer];
    if (atomic_load_explicit(&prs->sleepers, memory_order_seq_cst) > 0 &&
        wake_wanted(c->sh, peer, buf->id, off, now))
        wake_rank(prs, shared);
    return PLD_OK;
}

uint32_t pld__shm_sleep_prepare(pld_ctx *c)
{
    pld__rank_shared *rs = c->rs;
    uint32_t seq = atomic_load_explicit(&rs->wake_seq, memory_order_seq_cst);
    atomic_fetch_add_explicit(&rs->sleepers, 1, memory_order_seq_cst);
    /* the caller's re-check of its cell (an acquire load) stays after the
     * registration, as a seq_cst load would */
    atomic_thread_fence(memory_order_seq_cst);
    return seq;
}

int pld__shm_sleep(pld_ctx *c, uint32_t ticket, uint64_t timeout_ns, int shared)
{
    return pld__futex_wait_ns(&c->rs->wake_seq, ticket, (int64_t)timeout_ns, shared) == ETIMEDOUT;
}

void pld__shm_sleep_end(pld_ctx *c)
{
    atomic_fetch_sub_explicit(&c->rs->sleepers, 1, memory_order_seq_cst);
}

void pld__shm_abort(pld_world *w, int shared)
{
    for (int r = 0; r < w->nranks; r++)
        wake_rank(&w->sh->rank[r], shared);
}
