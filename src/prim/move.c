/* SPDX-License-Identifier: Apache-2.0 */
/* The one place data crosses between a rank's local memory and a window:
 * region pairs are walked as contiguous runs and handed to the transport.
 * Byte and transfer counters are kept here so every path counts the same
 * way. */
#include "prim/prim.h"

static void count_out(pld_ctx *c, int peer, size_t bytes)
{
    c->ag->counters.transfers++;
    if (peer == c->rank)
        c->ag->counters.bytes_self += bytes;
    else
        c->ag->counters.bytes_to_peers += bytes;
}

static void count_in(pld_ctx *c, int peer, size_t bytes)
{
    c->ag->counters.transfers++;
    if (peer == c->rank)
        c->ag->counters.bytes_self += bytes;
    else
        c->ag->counters.bytes_from_peers += bytes;
}

void pld__xfer_to_peer(pld_ctx *c, const char *api, pld_window_buffer *buf, int peer,
                       const pld__region *wr, const unsigned char *src, const pld__region *sr,
                       pld_atomic atomic, pld_dtype dtype)
{
    int wp = pld__wpeer(c, peer); /* the transport speaks world ranks */
    pld__sched_point(c);          /* each transfer is a step of the schedule explorer */
    pld__runs it;
    size_t woff, soff, n, esz = pld_dtype_size(dtype);
    pld_status st = PLD_OK;
    uint64_t t0 = pld__trace_begin(c);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE)) {
        pld__race_access(c, api, buf, wp, 0, wr, atomic == PLD_ATOMIC_ADD ? 2 : 1);
        pld__race_tensor(c, api, src, sr, 0);
    }
    pld__runs_init(&it, wr, sr);
    while (st == PLD_OK && pld__runs_next(&it, &woff, &soff, &n)) {
        if (atomic == PLD_ATOMIC_ADD)
            st = c->tp->accumulate(c, buf, wp, woff, src + soff, n / esz, dtype);
        else
            st = c->tp->put(c, buf, wp, woff, src + soff, n);
    }
    if (st != PLD_OK)
        pld__kraise(c, st, api, "transfer into '%s' at peer %d failed", buf->name, peer);
    count_out(c, peer, pld__region_bytes(wr));
    pld__trace_end(c, api, t0, (int64_t)pld__region_bytes(wr));
}

int pld__load_reduce_from_peer(pld_ctx *c, unsigned char *acc, const unsigned char *local,
                               pld_window_buffer *buf, int peer, size_t woff, size_t bytes,
                               pld_dtype dtype, pld_reduce_op op)
{
    int wp = pld__wpeer(c, peer); /* the transport speaks world ranks */
    pld__sched_point(c);
    const unsigned char *src = c->tp->window_peer_ptr(c->w, buf, wp);
    if (!src)
        return 0;
    uint64_t t0 = pld__trace_begin(c);
    pld__reduce3_buf(acc, local, src + woff, bytes / pld_dtype_size(dtype), dtype, op);
    count_in(c, peer, bytes);
    pld__trace_end(c, "pld_remote_reduce", t0, (int64_t)bytes);
    return 1;
}

void pld__put_run(pld_ctx *c, const char *api, pld_window_buffer *buf, int peer, size_t woff,
                  const unsigned char *src, size_t bytes)
{
    int wp = pld__wpeer(c, peer); /* the transport speaks world ranks */
    pld__sched_point(c);
    uint64_t t0 = pld__trace_begin(c);
    pld_status st = c->tp->put(c, buf, wp, woff, src, bytes);
    if (st != PLD_OK)
        pld__kraise(c, st, api, "transfer into '%s' at peer %d failed", buf->name, peer);
    count_out(c, peer, bytes);
    pld__trace_end(c, api, t0, (int64_t)bytes);
}

void pld__get_run(pld_ctx *c, const char *api, unsigned char *dst, pld_window_buffer *buf, int peer,
                  size_t woff, size_t bytes)
{
    int wp = pld__wpeer(c, peer); /* the transport speaks world ranks */
    pld__sched_point(c);
    uint64_t t0 = pld__trace_begin(c);
    pld_status st = c->tp->get(c, dst, buf, wp, woff, bytes);
    if (st != PLD_OK)
        pld__kraise(c, st, api, "transfer from '%s' at peer %d failed", buf->name, peer);
    count_in(c, peer, bytes);
    pld__trace_end(c, api, t0, (int64_t)bytes);
}

void pld__reduce_from_peer(pld_ctx *c, const char *api, unsigned char *acc, const pld__region *ar,
                           pld_window_buffer *buf, int peer, const pld__region *wr, pld_dtype dtype,
                           pld_reduce_op op)
{
    int wp = pld__wpeer(c, peer); /* the transport speaks world ranks */
    pld__sched_point(c);
    pld__runs it;
    size_t aoff, woff, n, esz = pld_dtype_size(dtype);
    uint64_t t0 = pld__trace_begin(c);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
        pld__race_access(c, api, buf, wp, 0, wr, 0);
    const unsigned char *src = c->tp->window_peer_ptr(c->w, buf, wp);
    pld__runs_init(&it, ar, wr);
    while (pld__runs_next(&it, &aoff, &woff, &n)) {
        if (src) { /* mapped here: reduce straight from the peer's memory */
            pld__reduce_buf(acc + aoff, src + woff, n / esz, dtype, op);
            continue;
        }
        /* not mapped (mpi): fetch in pieces, then reduce. 64 KiB pieces: each
         * fetch is a complete round trip (MPI_Get + flush), and 4 KiB ones
         * made a 4 MiB allreduce 1024 of them per peer */
        unsigned char tmp[65536];
        for (size_t done = 0; done < n;) {
            size_t k = n - done < sizeof tmp ? n - done : sizeof tmp;
            k -= k % esz;
            pld_status st = c->tp->get(c, tmp, buf, wp, woff + done, k);
            if (st != PLD_OK)
                pld__kraise(c, st, api, "transfer from '%s' at peer %d failed", buf->name, peer);
            pld__reduce_buf(acc + aoff + done, tmp, k / esz, dtype, op);
            done += k;
        }
    }
    count_in(c, peer, pld__region_bytes(wr));
    pld__trace_end(c, api, t0, (int64_t)pld__region_bytes(wr));
}

void pld__xfer_from_peer(pld_ctx *c, const char *api, unsigned char *dst, const pld__region *dr,
                         pld_window_buffer *buf, int peer, const pld__region *wr)
{
    int wp = pld__wpeer(c, peer); /* the transport speaks world ranks */
    pld__sched_point(c);
    pld__runs it;
    size_t doff, woff, n;
    pld_status st = PLD_OK;
    uint64_t t0 = pld__trace_begin(c);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE)) {
        pld__race_access(c, api, buf, wp, 0, wr, 0);
        pld__race_tensor(c, api, dst, dr, 1);
    }
    pld__runs_init(&it, dr, wr);
    while (st == PLD_OK && pld__runs_next(&it, &doff, &woff, &n))
        st = c->tp->get(c, dst + doff, buf, wp, woff, n);
    if (st != PLD_OK)
        pld__kraise(c, st, api, "transfer from '%s' at peer %d failed", buf->name, peer);
    count_in(c, peer, pld__region_bytes(wr));
    pld__trace_end(c, api, t0, (int64_t)pld__region_bytes(wr));
}
