/* SPDX-License-Identifier: Apache-2.0 */
/* Signals: notify (Set / AtomicAdd), wait (Eq / Ge), read. */
#include <stdio.h>

#include "core/team.h"
#include "prim/prim.h"
#include "prim/wait.h"
#include "trace/ir_rec.h"

static const char *cmp_name(pld_wait_cmp cmp)
{
    return cmp == PLD_WAIT_EQ ? "Eq" : "Ge";
}

/* Checks a signal window and a cell position; returns the cell's byte
 * offset in a rank's slice and its coordinates. */
static size_t signal_cell(pld_ctx *c, const char *api, pld_dtensor sig, const int64_t *offsets,
                          int64_t *coords)
{
    pld__region r;
    static const int64_t ones[PLD_MAX_DIMS] = {1, 1, 1, 1};
    pld__check_dtensor(c, api, "signal", sig);
    if (sig.dtype != PLD_INT32)
        pld__kraise(c, PLD_ERR_ARG, api, "signal window '%s' is %s; signals must be INT32",
                    sig.buf->name, pld_dtype_name(sig.dtype));
    pld__dtensor_region(c, api, "signal cell", sig, offsets, ones, &r);
    size_t idx = 0;
    for (int i = 0; i < sig.ndim; i++) {
        idx = idx * (size_t)sig.shape[i] + (size_t)r.off[i];
        coords[i] = r.off[i];
    }
    return idx * sizeof(int32_t);
}

/* The notify itself, on a checked cell (byte offset off, coordinates for
 * the listing). */
static void notify_cell(pld_ctx *c, pld_dtensor signal, int peer, size_t off, const int64_t *coords,
                        int32_t value, pld_notify_op op, uint64_t t0)
{
    static const char api[] = "pld_notify";
    int wp = pld__wpeer(c, peer); /* the transport speaks world ranks */
    pld__sched_point(c);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
        pld__race_release(c, signal.buf, wp, off); /* before the cell changes */
    if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS))
        pld__hazard_notify(c, signal, wp, off, op);
    int32_t old = 0;
    pld_status st = c->tp->signal_update(c, signal.buf, wp, off, value, op, &old);
    if (PLD__UNLIKELY(st != PLD_OK)) {
        char cell[96];
        if (st == PLD_ERR_DATA) /* the add was taken back: the cell holds what it held */
            pld__kraise(c, st, api,
                        "AtomicAdd of %d to '%s'%s at peer %d overflows int32: the cell holds "
                        "%d and %d %s %lld = %lld is outside [%d, %d]; the add is not applied",
                        (int)value, signal.buf->name,
                        pld__fmt_dims(cell, sizeof cell, coords, signal.ndim), peer, (int)old,
                        (int)old, value < 0 ? "-" : "+",
                        value < 0 ? -(long long)value : (long long)value, (long long)old + value,
                        INT32_MIN, INT32_MAX);
        pld__kraise(c, st, api, "signal update of '%s' at peer %d failed", signal.buf->name, peer);
    }
    c->ag->counters.notifies++;
    if (c->ir) {
        char cell[96];
        pld__ir_emit(c->ir, c->depth, "notify %s@peer%d%s %s %d", signal.buf->name, peer,
                     pld__fmt_dims(cell, sizeof cell, coords, signal.ndim),
                     op == PLD_NOTIFY_SET ? "=" : "+=", (int)value);
    }
    if (c->rec)
        pld__rec_notify(c, peer, signal.buf, off, coords, signal.ndim, value, op);
    /* the value it left: what a wait it releases reads (the flow arrow) */
    pld__trace_signal(c, api, t0, 0, signal.buf, wp, off,
                      op == PLD_NOTIFY_SET ? value : (int32_t)((uint32_t)old + (uint32_t)value));
}

void pld_notify(pld_ctx *c, pld_dtensor signal, int peer, const int64_t *offsets, int32_t value,
                pld_notify_op op)
{
    PLD__CTX_CHECK(c, "pld_notify");
    static const char api[] = "pld_notify";
    int64_t coords[PLD_MAX_DIMS];
    uint64_t t0 = pld__trace_begin(c);
    pld__check_live(c);
    size_t off = signal_cell(c, api, signal, offsets, coords);
    pld__check_peer(c, api, peer);
    if (op != PLD_NOTIFY_ATOMIC_ADD && op != PLD_NOTIFY_SET)
        pld__kraise(c, PLD_ERR_ARG, api, "op %d is not a pld_notify_op (AtomicAdd=0, Set=1)",
                    (int)op);
    notify_cell(c, signal, peer, off, coords, value, op, t0);
}

/* Cell [row, lane] of a [P] or [P, lanes] signal: its offset and coordinates. */
static size_t checked_cell(pld_dtensor sig, int64_t row, int64_t lane, int64_t *coords)
{
    coords[0] = row;
    coords[1] = lane;
    return (size_t)(sig.ndim == 1 ? row : row * sig.shape[1] + lane) * sizeof(int32_t);
}

void pld__notify_checked(pld_ctx *c, pld_dtensor sig, int peer, int64_t row, int64_t lane,
                         int32_t value, pld_notify_op op)
{
    int64_t coords[PLD_MAX_DIMS];
    uint64_t t0 = pld__trace_begin(c);
    pld__check_live(c);
    notify_cell(c, sig, peer, checked_cell(sig, row, lane, coords), coords, value, op, t0);
}

/* The wait itself, on a checked cell (wd filled but for the counters). */
static void wait_cell(pld_ctx *c, pld_dtensor signal, pld__wait_desc *wd)
{
    static const char api[] = "pld_wait";
    pld__sched_point(c);
    c->ag->counters.waits++;
    if (c->ir) {
        char cell[96];
        pld__ir_emit(c->ir, c->depth, "wait %s%s %s %d", signal.buf->name,
                     pld__fmt_dims(cell, sizeof cell, wd->coords, signal.ndim),
                     wd->cmp == PLD_WAIT_EQ ? "==" : ">=", (int)wd->expected);
    }
    if (c->rec)
        pld__rec_wait(c, signal.buf, wd->off, wd->coords, signal.ndim, wd->expected, wd->cmp);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS) && wd->cmp == PLD_WAIT_EQ)
        pld__hazard_wait_eq(c, signal, wd->off, wd->expected);
    /* fast path: already satisfied, no clock reads */
    int32_t v = c->tp->signal_load(c, signal.buf, wd->off);
    if (pld__wait_satisfied(v, wd->expected, wd->cmp)) {
        if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
            pld__race_acquire(c, signal.buf, wd->off);
        return;
    }
    uint64_t t0 = pld__now_ns();
    pld_status st;
    /* a neighbour published a different call: the check names the
     * difference (and fails the call); should it find none, wait on */
    while ((st = pld__wait_policy(c, wd)) == PLD_ERR_ARG)
        pld__call_round(c);
    c->ag->counters.wait_ns += pld__now_ns() - t0;
    if (PLD__LIKELY(st == PLD_OK)) {
        if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
            pld__race_acquire(c, signal.buf, wd->off);
        if (c->trace) /* only waits that blocked; the value read pairs it with its notify */
            pld__trace_signal(c, api, t0, 1, signal.buf, c->wrank, wd->off,
                              c->tp->signal_load(c, signal.buf, wd->off));
        return;
    }
    if (st == PLD_ERR_TIMEOUT) {
        char cell[96], why[1024];
        /* where no deadlock detector runs (mpi), ranks stuck in disagreeing
         * builtin calls end here: name the disagreement, not the wait */
        if ((c->obs & PLD__OBS_AGREE) && c->depth > 0 &&
            pld__call_explain_stuck(c->w, why, sizeof why)) {
            pld__group_fail(c->w, PLD_ERR_ARG, why);
            pld__kexit_aborted(c);
        }
        pld__kraise(c, st, api, "'%s'%s %s %d timed out after %d ms (current %d)", signal.buf->name,
                    pld__fmt_dims(cell, sizeof cell, wd->coords, signal.ndim), cmp_name(wd->cmp),
                    (int)wd->expected, c->w->wait_timeout_ms,
                    (int)c->tp->signal_load(c, signal.buf, wd->off));
    }
    if (st == PLD_ERR_PEER)
        pld__kexit_aborted(c);
    pld__kraise(c, st, api, "wait on '%s' failed", signal.buf->name);
}

void pld_wait(pld_ctx *c, pld_dtensor signal, const int64_t *offsets, int32_t expected,
              pld_wait_cmp cmp)
{
    PLD__CTX_CHECK(c, "pld_wait");
    static const char api[] = "pld_wait";
    pld__wait_desc wd;
    pld__check_live(c);
    wd.off = signal_cell(c, api, signal, offsets, wd.coords);
    if (cmp != PLD_WAIT_EQ && cmp != PLD_WAIT_GE)
        pld__kraise(c, PLD_ERR_ARG, api, "cmp %d is not a pld_wait_cmp (Eq=0, Ge=1)", (int)cmp);
    wd.buf = signal.buf;
    wd.expected = expected;
    wd.cmp = cmp;
    wd.ndim = signal.ndim;
    wait_cell(c, signal, &wd);
}

void pld__wait_checked(pld_ctx *c, pld_dtensor sig, int64_t row, int64_t lane, int32_t expected,
                       pld_wait_cmp cmp)
{
    pld__wait_desc wd;
    pld__check_live(c);
    wd.off = checked_cell(sig, row, lane, wd.coords);
    wd.buf = sig.buf;
    wd.expected = expected;
    wd.cmp = cmp;
    wd.ndim = sig.ndim;
    wait_cell(c, sig, &wd);
}

int32_t pld_signal_read(pld_ctx *c, pld_dtensor signal, const int64_t *offsets)
{
    PLD__CTX_CHECK(c, "pld_signal_read");
    int64_t coords[PLD_MAX_DIMS];
    pld__check_live(c);
    size_t off = signal_cell(c, "pld_signal_read", signal, offsets, coords);
    return c->tp->signal_load(c, signal.buf, off);
}

void pld__describe_wait(pld_world *w, int r, int core, int32_t current, char *out, size_t n)
{
    pld__wait_rec *rec = &pld__agent_at(w->sh, r, core)->wait;
    int id = atomic_load(&rec->buf_id);
    int nd = atomic_load(&rec->ndim);
    int64_t coords[PLD_MAX_DIMS];
    char cell[96];
    for (int i = 0; i < nd && i < PLD_MAX_DIMS; i++)
        coords[i] = atomic_load(&rec->coords[i]);
    const char *name = (id >= 0 && id < w->nwindows && w->windows[id]) ? w->windows[id]->name : "?";
    char who[32] = "", rank[96];
    if (core > 0)
        snprintf(who, sizeof who, " core %d", core);
    /* a wait in a team view names the team and group rank too */
    pld__team_who(pld__team_by_serial(w, atomic_load(&rec->team)), r, rank, sizeof rank);
    int len = snprintf(out, n, "%s (device %d)%s: pld_wait '%s'%s %s %d (current %d)", rank,
                       w->device_ids[r], who, name, pld__fmt_dims(cell, sizeof cell, coords, nd),
                       cmp_name((pld_wait_cmp)atomic_load(&rec->cmp)),
                       (int)atomic_load(&rec->expected), (int)current);
    /* a flag of the one-round path (coll/ll.c): say whose payload it is */
    const struct pld_team *t = pld__team_by_serial(w, atomic_load(&rec->team));
    const pld__ll_inbox *in = t ? &t->ll : &w->sh->ll;
    if (id == in->flag_win && in->cap > 0 && nd == 2 && len > 0 && (size_t)len < n)
        snprintf(out + len, n - (size_t)len,
                 ": a builtin's one round, waiting for the payload or flag of %srank %d",
                 t ? "group " : "", (int)(coords[0] % in->cap));
}
