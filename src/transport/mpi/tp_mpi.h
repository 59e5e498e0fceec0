/* SPDX-License-Identifier: Apache-2.0 */
/* The MPI transport: every rank is an MPI process. Windows are MPI-3 RMA
 * windows (MPI_Win_allocate) held in one passive-target epoch (lock_all)
 * for their whole life; data moves with MPI_Put / MPI_Get / MPI_Accumulate,
 * signals are MPI_Accumulate at the target and MPI_Fetch_and_op reads of
 * the own cell, so the same code runs on one machine and across many.
 * When every rank is on one node the windows are MPI shared-memory windows
 * and all of that becomes copies and C11 atomics on the mapped slices.
 *
 * Only the files of this folder include <mpi.h>; the rest of pld sees the ops table. */
#ifndef PLD_TP_MPI_H
#define PLD_TP_MPI_H

#include <mpi.h>

#include "core/internal.h"

/* Cells of the control window every rank holds. */
enum {
    TP_MPI_CTL_ABORT = 0, /* set (to 1) by a failing rank in every peer */
    TP_MPI_CTL_CELLS = 16 /* one cache line */
};

typedef struct tp_mpi_state {
    MPI_Comm comm; /* a duplicate of MPI_COMM_WORLD, one per world */
    int rank, size;
    int thread_multiple; /* MPI_THREAD_MULTIPLE provided: cores may call MPI */
    int node_shared;     /* every rank on this node: windows are shared memory */
    int *pids;           /* every rank's pid (gathered once) */
    MPI_Win ctl_win;
    uint32_t *ctl; /* this rank's control cells */
} tp_mpi_state;

/* The window's MPI object, kept in buf->tp_priv. */
typedef struct tp_mpi_win {
    MPI_Win win;
    unsigned char **peer; /* node_shared: every rank's slice, mapped here; else NULL */
} tp_mpi_win;

static inline tp_mpi_state *tp_mpi_state_of(const pld_world *w)
{
    return (tp_mpi_state *)w->tp_state;
}

static inline MPI_Win tp_mpi_win_of(const pld_window_buffer *buf)
{
    return ((const tp_mpi_win *)buf->tp_priv)->win;
}

/* peer's slice when it is mapped in this process (one node), else NULL. */
static inline unsigned char *tp_mpi_peer_of(const pld_window_buffer *buf, int peer)
{
    const tp_mpi_win *mw = buf->tp_priv;
    return mw->peer ? mw->peer[peer] : NULL;
}

/* Ends the calling rank's kernel with PLD_ERR_SYSTEM naming the MPI call,
 * what it was doing and MPI's own error string. */
PLD__NORETURN void pld__mpi_raise(pld_ctx *c, const char *call, int rc, const char *fmt, ...)
    PLD__PRINTF(4, 5);
/* MPI's message for an error code. */
const char *pld__mpi_strerror(int rc, char *out, int n);

/* Data paths (tp_mpi_data.c). */
pld_status pld__mpi_put(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off, const void *src,
                        size_t bytes);
pld_status pld__mpi_get(pld_ctx *c, void *dst, pld_window_buffer *buf, int peer, size_t off,
                        size_t bytes);
pld_status pld__mpi_accumulate(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                               const void *src, size_t count, pld_dtype dtype);
/* MPI_Win_sync on every window of the world: local stores and remote
 * updates become visible to each other (both sides of a signal). */
void pld__mpi_sync_windows(pld_world *w);
void pld__mpi_fence(pld_ctx *c);

/* Signals and failure (tp_mpi_sync.c). */
pld_status pld__mpi_signal_update(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                  int32_t value, pld_notify_op op, int32_t *old_out);
int32_t pld__mpi_signal_load(pld_ctx *c, pld_window_buffer *buf, size_t off);
void pld__mpi_abort(pld_world *w);
/* 1 once a peer has aborted the current launch (its abort cell in this
 * rank's control window), or the control window itself failed. */
int pld__mpi_peer_failed(pld_ctx *c);

#endif
