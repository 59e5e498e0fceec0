/* SPDX-License-Identifier: Apache-2.0 */
/* Signal hygiene (PLD_CHECK_SIGNALS): every builtin must leave its signal
 * all-zero. In checked mode a builtin checks its own slice of the signal on
 * entry and on exit, between two barriers on a private checker signal so no
 * rank is inside the builtin's protocol while the cells are read. A non-zero
 * cell on entry means credits leaked from an earlier aborted call; on exit,
 * a broken protocol. Both are PLD_ERR_CHECK naming the cells. */
#include <stdio.h>

#include "coll/credit.h"
#include "core/team.h"

/* Over the context's group: the world's checker signal, or its team's. */
static void check_barrier(pld_ctx *c)
{
    pld_dtensor sig = c->team ? c->team->check_signal : c->w->check_signal;
    pld__credit_barrier(c, sig, 0, 1);
    pld__credit_epilogue(c, sig, 0, 1);
}

pld_status pld__signal_check_team_init(pld_world *w, struct pld_team *t)
{
    if (!w->check_signal.buf)
        return PLD_OK;
    char name[PLD__NAME_MAX + 16];
    pld_window_buffer *cb;
    int64_t shape[2] = {w->nranks, 1}; /* cells by group rank; a group has at most P */
    snprintf(name, sizeof name, "pld.check.%s", t->name);
    pld_status st = pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)w->nranks, name, &cb);
    if (st == PLD_OK)
        st = pld_window(cb, PLD_INT32, 2, shape, &t->check_signal);
    return st;
}

void pld__signal_check_clear(pld_world *w)
{
    if (!w->check_signal.buf)
        return;
    pld__window_zero(w, w->check_signal.buf);
    for (int i = 0; i < w->nteams; i++)
        if (w->teams[i]->live && w->teams[i]->check_signal.buf)
            pld__window_zero(w, w->teams[i]->check_signal.buf);
}

void pld__signal_check(pld_ctx *c, pld_dtensor sig, int after)
{
    char cells[512];
    size_t used = 0;
    int bad = 0;
    /* the checker's own traffic stays out of the listing and the counters */
    pld__ir *ir = c->ir;
    struct pld__rec *rec = c->rec;
    pld_counters saved = c->ag->counters;
    c->ir = NULL;
    c->rec = NULL;
    check_barrier(c);
    int64_t n = 1;
    for (int i = 0; i < sig.ndim; i++)
        n *= sig.shape[i];
    for (int64_t i = 0; i < n; i++) {
        int32_t v = c->tp->signal_load(c, sig.buf, (size_t)i * sizeof(int32_t));
        if (v == 0)
            continue;
        bad++;
        if (used < sizeof cells - 64) {
            int64_t coords[PLD_MAX_DIMS], rest = i;
            char dims[96];
            for (int d = sig.ndim - 1; d >= 0; d--) {
                coords[d] = rest % sig.shape[d];
                rest /= sig.shape[d];
            }
            used += (size_t)snprintf(cells + used, sizeof cells - used, " %s=%d",
                                     pld__fmt_dims(dims, sizeof dims, coords, sig.ndim), (int)v);
        }
    }
    check_barrier(c);
    c->ag->counters = saved;
    c->ir = ir;
    c->rec = rec;
    if (!bad)
        return;
    if (after)
        pld__kraise(c, PLD_ERR_CHECK, "PLD_CHECK_SIGNALS",
                    "signal '%s' is not all-zero after the call; leaked credits at%s%s",
                    sig.buf->name, cells, used >= sizeof cells - 64 ? " ..." : "");
    pld__kraise(c, PLD_ERR_CHECK, "PLD_CHECK_SIGNALS",
                "signal '%s' is not all-zero before the call (credits leaked by an earlier "
                "aborted call, or a hand-written barrier sharing this signal? "
                "pld_window_buffer_reset clears it):%s%s",
                sig.buf->name, cells, used >= sizeof cells - 64 ? " ..." : "");
}

pld_status pld__signal_check_launch(pld_world *w)
{
    char cells[512];
    size_t used = 0;
    int bad = 0;
    const char *name = "";
    for (int id = 0; id < w->nwindows; id++) {
        pld_window_buffer *b = w->windows[id];
        if (!b || !atomic_exchange(&b->signal_use, 0))
            continue;
        for (int r = 0; r < w->nranks; r++) {
            const int32_t *v = pld_world_hosts_rank(w, r) ? w->tp->window_peer_ptr(w, b, r) : NULL;
            for (size_t i = 0; v && i < b->bytes / sizeof(int32_t); i++) {
                int32_t x = atomic_load((const _Atomic int32_t *)(const void *)&v[i]);
                if (x == 0)
                    continue;
                if (!bad++)
                    name = b->name;
                if (used < sizeof cells - 64)
                    used += (size_t)snprintf(cells + used, sizeof cells - used,
                                             " '%s' rank %d cell %zu = %d", b->name, r, i, (int)x);
            }
        }
    }
    if (!bad)
        return PLD_OK;
    return pld__world_fail(w, PLD_ERR_CHECK,
                           "PLD_CHECK_SIGNALS: signal '%s' is not all-zero after the launch "
                           "(leaked credits):%s%s",
                           name, cells, used >= sizeof cells - 64 ? " ..." : "");
}
