/* SPDX-License-Identifier: Apache-2.0 */
/* Data paths of the MPI transport. Every transfer is complete at the target
 * when the call returns (MPI_Win_flush), like a memcpy on the shared-memory
 * transports: a later notify needs no bookkeeping of what is in flight, and
 * a put followed by a get of the same bytes reads them back.
 *
 * When every rank is on this node the windows are MPI shared-memory windows:
 * puts and gets are plain copies between the mapped slices, atomic adds and
 * signals (tp_mpi_sync.c) C11 atomics on them, exactly as on the process
 * transport. Every access to a shared window is then a load, store or
 * atomic of this machine's memory, ordered by C11 fences and atomics; no
 * MPI call touches those windows after they are created. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "prim/half.h"
#include "transport/mpi/tp_mpi.h"
#include "transport/shm/copy.h"
#include "transport/shm/shm.h"

/* MPI counts are ints: larger transfers go in pieces of this many bytes. */
#define TP_MPI_MAX_PIECE ((size_t)1 << 30)

const char *pld__mpi_strerror(int rc, char *out, int n)
{
    int len = 0;
    if (n <= 0)
        return "";
    if (MPI_Error_string(rc, out, &len) != MPI_SUCCESS || len <= 0)
        snprintf(out, (size_t)n, "MPI error %d", rc);
    return out;
}

void pld__mpi_raise(pld_ctx *c, const char *call, int rc, const char *fmt, ...)
{
    char what[512], err[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pld__kraise(c, PLD_ERR_SYSTEM, call, "%s: %s", what,
                pld__mpi_strerror(rc, err, (int)sizeof err));
}

/* MPI_Put (get = 0) or MPI_Get (get = 1) of `bytes` between `local` and
 * offset `off` of peer's slice, in int-sized pieces, complete on return. */
static void rma_bytes(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                      unsigned char *local, size_t bytes, int get)
{
    MPI_Win win = tp_mpi_win_of(buf);
    for (size_t done = 0; done < bytes;) {
        size_t k = bytes - done < TP_MPI_MAX_PIECE ? bytes - done : TP_MPI_MAX_PIECE;
        MPI_Aint at = (MPI_Aint)(off + done);
        int rc = get ? MPI_Get(local + done, (int)k, MPI_BYTE, peer, at, (int)k, MPI_BYTE, win)
                     : MPI_Put(local + done, (int)k, MPI_BYTE, peer, at, (int)k, MPI_BYTE, win);
        if (rc != MPI_SUCCESS)
            pld__mpi_raise(c, get ? "MPI_Get" : "MPI_Put", rc,
                           "%zu bytes %s rank %d at offset %zu of '%s'", k, get ? "from" : "to",
                           peer, off + done, buf->name);
        done += k;
    }
    /* a get only needs its local buffer filled; a put, its target written */
    int rc = get ? MPI_Win_flush_local(peer, win) : MPI_Win_flush(peer, win);
    if (rc != MPI_SUCCESS)
        pld__mpi_raise(c, get ? "MPI_Win_flush_local" : "MPI_Win_flush", rc,
                       "completing a %s rank %d ('%s')", get ? "get from" : "put to", peer,
                       buf->name);
}

pld_status pld__mpi_put(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off, const void *src,
                        size_t bytes)
{
    unsigned char *mapped = tp_mpi_peer_of(buf, peer);
    if (mapped)
        pld__shm_copy(mapped + off, src, bytes, c->w->nranks);
    else /* one helper for both directions; a put only reads `local` */
        rma_bytes(c, buf, peer, off, (unsigned char *)(uintptr_t)src, bytes, 0);
    return PLD_OK;
}

pld_status pld__mpi_get(pld_ctx *c, void *dst, pld_window_buffer *buf, int peer, size_t off,
                        size_t bytes)
{
    const unsigned char *mapped = tp_mpi_peer_of(buf, peer);
    if (mapped)
        pld__shm_copy(dst, mapped + off, bytes, c->w->nranks);
    else
        rma_bytes(c, buf, peer, off, dst, bytes, 1);
    return PLD_OK;
}

/* 16-bit floats have no MPI type: read, add, compare-and-swap, per element. */
static void accumulate_half(pld_ctx *c, MPI_Win win, int peer, size_t off, const uint16_t *src,
                            size_t count, int bf16, const char *name)
{
    for (size_t i = 0; i < count; i++) {
        MPI_Aint at = (MPI_Aint)(off + 2 * i);
        uint16_t old, seen, nw, none = 0;
        int rc = MPI_Fetch_and_op(&none, &old, MPI_UINT16_T, peer, at, MPI_NO_OP, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(peer, win);
        for (;;) {
            if (rc != MPI_SUCCESS)
                pld__mpi_raise(c, "MPI_Compare_and_swap", rc,
                               "atomic add of element %zu at rank %d of '%s'", i, peer, name);
            float s = bf16 ? pld__bf16_to_f32(old) + pld__bf16_to_f32(src[i])
                           : pld__fp16_to_f32(old) + pld__fp16_to_f32(src[i]);
            nw = bf16 ? pld__f32_to_bf16(s) : pld__f32_to_fp16(s);
            rc = MPI_Compare_and_swap(&nw, &old, &seen, MPI_UINT16_T, peer, at, win);
            if (rc == MPI_SUCCESS)
                rc = MPI_Win_flush(peer, win);
            if (rc == MPI_SUCCESS && seen == old)
                break;
            old = seen;
        }
    }
}

pld_status pld__mpi_accumulate(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                               const void *src, size_t count, pld_dtype dtype)
{
    unsigned char *mapped = tp_mpi_peer_of(buf, peer);
    if (mapped)
        return pld__shm_accumulate_at(mapped + off, src, count, dtype);
    MPI_Win win = tp_mpi_win_of(buf);
    MPI_Datatype t;
    switch (dtype) {
    case PLD_FP32:
        t = MPI_FLOAT;
        break;
    /* integers add as unsigned: they wrap like the hardware */
    case PLD_INT32:
        t = MPI_UINT32_T;
        break;
    case PLD_INT16:
        t = MPI_UINT16_T;
        break;
    case PLD_INT8:
        t = MPI_UINT8_T;
        break;
    case PLD_FP16:
    case PLD_BF16:
        accumulate_half(c, win, peer, off, src, count, dtype == PLD_BF16, buf->name);
        return PLD_OK;
    default:
        return PLD_ERR_UNSUPPORTED;
    }
    size_t esz = pld_dtype_size(dtype), piece = TP_MPI_MAX_PIECE / esz;
    const unsigned char *s = src;
    for (size_t done = 0; done < count;) {
        size_t k = count - done < piece ? count - done : piece;
        int rc = MPI_Accumulate(s + done * esz, (int)k, t, peer, (MPI_Aint)(off + done * esz),
                                (int)k, t, MPI_SUM, win);
        if (rc != MPI_SUCCESS)
            pld__mpi_raise(c, "MPI_Accumulate", rc, "%zu %s elements to rank %d of '%s'", k,
                           pld_dtype_name(dtype), peer, buf->name);
        done += k;
    }
    int rc = MPI_Win_flush(peer, win);
    if (rc != MPI_SUCCESS)
        pld__mpi_raise(c, "MPI_Win_flush", rc, "completing an atomic add at rank %d ('%s')", peer,
                       buf->name);
    return PLD_OK;
}

void pld__mpi_sync_windows(pld_world *w)
{
    for (int i = 0; i < w->nwindows; i++)
        if (w->windows[i] && w->windows[i]->tp_priv)
            MPI_Win_sync(tp_mpi_win_of(w->windows[i]));
}

void pld__mpi_fence(pld_ctx *c)
{
    /* every transfer is already complete at its target; what remains is
     * ordering this rank's own loads and stores against them */
    atomic_thread_fence(memory_order_seq_cst);
    pld__mpi_sync_windows(c->w);
}
