/* SPDX-License-Identifier: Apache-2.0 */
/* Signals on MPI windows. A notify is an MPI_Accumulate (MPI_REPLACE) for
 * Set, an MPI_Fetch_and_op (MPI_SUM) for AtomicAdd -- the fetched value
 * tells an add that overflows int32, which is then taken back as on shared
 * memory (pld__shm_signal_update) -- on the peer's cell, completed before it
 * returns; a load of the own cell (what the wait policy polls) is an
 * MPI_Fetch_and_op(MPI_NO_OP), the read MPI guarantees atomic against those
 * accumulates, and drives MPI's progress on transports that need the
 * target to call in.
 *
 * Every signal operation uses MPI_UINT32_T: MPI only promises atomicity
 * between accumulates of the same basic type, and unsigned adds wrap.
 *
 * On shared-memory windows (every rank on this node) a signal is a C11
 * atomic on the mapped cell instead, like the process transport's: a
 * seq_cst read-modify-write orders the copies before it, an acquire load
 * the reads after it. MPI_Accumulate plus MPI_Win_sync of every window made
 * a P=2 barrier ~0.8 us here; the atomics make it the process transport's.
 * Waits still call MPI now and then (the abort cell, through peer_failed),
 * which keeps MPI's progress going for the control window.
 *
 * There is no wake-up across machines: the wait policy's sleep is a plain
 * nap here (pld__tp_sleep_nap), which it keeps short. A failing rank sets
 * the abort cell of every peer's control window; peer_failed reads it. */
#include "transport/mpi/tp_mpi.h"

static uint32_t fetch_cell(pld_ctx *c, MPI_Win win, int rank, size_t off, const char *what)
{
    uint32_t none = 0, v = 0;
    int rc = MPI_Fetch_and_op(&none, &v, MPI_UINT32_T, rank, (MPI_Aint)off, MPI_NO_OP, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(rank, win);
    if (rc != MPI_SUCCESS)
        pld__mpi_raise(c, "MPI_Fetch_and_op", rc, "reading %s", what);
    return v;
}

/* The cell as a C11 atomic when the window is shared memory, else NULL. */
static _Atomic uint32_t *mapped_cell(pld_window_buffer *buf, int rank, size_t off)
{
    unsigned char *p = tp_mpi_peer_of(buf, rank);
    return p ? (_Atomic uint32_t *)(void *)(p + off) : NULL;
}

pld_status pld__mpi_signal_update(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                  int32_t value, pld_notify_op op, int32_t *old_out)
{
    _Atomic uint32_t *cell = mapped_cell(buf, peer, off);
    if (cell) {
        if (op == PLD_NOTIFY_SET) {
            atomic_store_explicit(cell, (uint32_t)value, memory_order_seq_cst);
            return PLD_OK;
        }
        int32_t old =
            (int32_t)atomic_fetch_add_explicit(cell, (uint32_t)value, memory_order_seq_cst);
        if (PLD__UNLIKELY(pld__add_overflows_i32(old, value))) {
            atomic_fetch_sub_explicit(cell, (uint32_t)value, memory_order_seq_cst);
            *old_out = old;
            return PLD_ERR_DATA;
        }
        return PLD_OK;
    }
    MPI_Win win = tp_mpi_win_of(buf);
    uint32_t v = (uint32_t)value, fetched = 0;
    /* release: this rank's own stores into its windows are visible to the
     * peer's gets once the peer sees the signal (its puts already are) */
    atomic_thread_fence(memory_order_seq_cst);
    pld__mpi_sync_windows(c->w);
    const char *what = op == PLD_NOTIFY_SET ? "MPI_Accumulate" : "MPI_Fetch_and_op";
    int rc = op == PLD_NOTIFY_SET
                 ? MPI_Accumulate(&v, 1, MPI_UINT32_T, peer, (MPI_Aint)off, 1, MPI_UINT32_T,
                                  MPI_REPLACE, win)
                 : MPI_Fetch_and_op(&v, &fetched, MPI_UINT32_T, peer, (MPI_Aint)off, MPI_SUM, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(peer, win);
    int32_t old = (int32_t)fetched;
    if (rc == MPI_SUCCESS && op != PLD_NOTIFY_SET &&
        PLD__UNLIKELY(pld__add_overflows_i32(old, value))) {
        uint32_t undo = 0u - v; /* the inverse add, wrapping back */
        what = "MPI_Accumulate";
        rc = MPI_Accumulate(&undo, 1, MPI_UINT32_T, peer, (MPI_Aint)off, 1, MPI_UINT32_T, MPI_SUM,
                            win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(peer, win);
        if (rc == MPI_SUCCESS) {
            *old_out = old;
            return PLD_ERR_DATA;
        }
    }
    if (rc != MPI_SUCCESS)
        pld__mpi_raise(c, what, rc, "signal '%s' at rank %d, offset %zu", buf->name, peer, off);
    return PLD_OK;
}

int32_t pld__mpi_signal_load(pld_ctx *c, pld_window_buffer *buf, size_t off)
{
    _Atomic uint32_t *cell = mapped_cell(buf, c->wrank, off);
    if (cell)
        return (int32_t)atomic_load_explicit(cell, memory_order_acquire);
    int32_t v = (int32_t)fetch_cell(c, tp_mpi_win_of(buf), c->wrank, off, buf->name);
    /* acquire: what the notifier wrote before the signal is now readable */
    pld__mpi_sync_windows(c->w);
    atomic_thread_fence(memory_order_seq_cst);
    return v;
}

int pld__mpi_peer_failed(pld_ctx *c)
{
    tp_mpi_state *s = tp_mpi_state_of(c->w);
    uint32_t none = 0, v = 0;
    if (MPI_Fetch_and_op(&none, &v, MPI_UINT32_T, s->rank, TP_MPI_CTL_ABORT, MPI_NO_OP,
                         s->ctl_win) != MPI_SUCCESS ||
        MPI_Win_flush(s->rank, s->ctl_win) != MPI_SUCCESS)
        return 1; /* the control window itself failed: stop waiting */
    return v != 0;
}

void pld__mpi_abort(pld_world *w)
{
    tp_mpi_state *s = tp_mpi_state_of(w);
    uint32_t one = 1;
    for (int r = 0; r < s->size; r++)
        if (r != s->rank)
            MPI_Accumulate(&one, 1, MPI_UINT32_T, r, TP_MPI_CTL_ABORT, 1, MPI_UINT32_T, MPI_REPLACE,
                           s->ctl_win);
    MPI_Win_flush_all(s->ctl_win);
}
