/* SPDX-License-Identifier: Apache-2.0 */
/* Self-clearing credit barrier: see credit.h. */
#include "coll/credit.h"
#include "coll/sync.h"

void pld__coll_check_signal(pld_ctx *c, const char *api, pld_dtensor sig, int lanes)
{
    char dims[96];
    pld__check_dtensor(c, api, "signal", sig);
    if (sig.dtype != PLD_INT32)
        pld__kraise(c, PLD_ERR_ARG, api, "signal window '%s' is %s; signals must be INT32",
                    sig.buf->name, pld_dtype_name(sig.dtype));
    int ok = sig.shape[0] == c->nranks &&
             ((sig.ndim == 1 && lanes == 1) || (sig.ndim == 2 && sig.shape[1] >= lanes));
    char scope[96];
    if (!ok)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "signal '%s' is %s; it needs one cell per rank of %s%s: [%d,%d]%s",
                    sig.buf->name, pld__fmt_dims(dims, sizeof dims, sig.shape, sig.ndim),
                    pld__ctx_scope(c, scope, sizeof scope), lanes > 1 ? " and core" : "", c->nranks,
                    lanes, lanes == 1 ? (c->team ? " or [T]" : " or [P]") : "");
}

/* The signal was checked on the builtin's entry (pld__coll_check_signal):
 * cells [rank, lane] go straight to the pre-checked notify and wait. */

static void full_barrier(pld_ctx *c, pld_dtensor sig, int lane, int32_t g, pld_wait_cmp cmp)
{
    int me = c->rank, p = c->nranks;
    for (int peer = 0; peer < p; peer++)
        if (peer != me)
            pld__notify_checked(c, sig, peer, me, lane, 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int src = 0; src < p; src++)
        if (src != me)
            pld__wait_checked(c, sig, src, lane, g, cmp);
}

/* Round j: arrive at me + 2^j, wait for me - 2^j. The offsets 2^j < P are
 * distinct, so each source has a cell of its own and sends one credit to
 * it per barrier, as in the full form. */
static void dissem_barrier(pld_ctx *c, pld_dtensor sig, int lane, int32_t g, pld_wait_cmp cmp)
{
    int me = c->rank, p = c->nranks;
    for (int d = 1; d < p; d <<= 1) {
        pld__notify_checked(c, sig, (me + d) % p, me, lane, 1, PLD_NOTIFY_ATOMIC_ADD);
        pld__wait_checked(c, sig, (me + p - d) % p, lane, g, cmp);
    }
}

/* Rank r's children are r*k+1 .. r*k+k. Arrivals sum into the parent's
 * own cell (cell r of rank r: no other form writes it), the release comes
 * in the child's cell of its parent. A child arrives for barrier g+1 only
 * after the release of g, which follows its parent's wait for g: so a
 * parent's count never runs ahead of the barrier it waits for. */
static void tree_barrier(pld_ctx *c, pld_dtensor sig, int lane, int32_t g, pld_wait_cmp cmp)
{
    int me = c->rank, p = c->nranks, k = c->sync_fanout;
    int nch = pld__tree_children(me, p, k);
    if (nch) /* the arrivals of my subtree */
        pld__wait_checked(c, sig, me, lane, g * nch, cmp);
    if (me) {
        int parent = (me - 1) / k;
        pld__notify_checked(c, sig, parent, parent, lane, 1, PLD_NOTIFY_ATOMIC_ADD);
        pld__wait_checked(c, sig, parent, lane, g, cmp);
    }
    for (int i = 0; i < nch; i++)
        pld__notify_checked(c, sig, me * k + 1 + i, me, lane, 1, PLD_NOTIFY_ATOMIC_ADD);
}

void pld__credit_barrier(pld_ctx *c, pld_dtensor sig, int lane, int32_t g)
{
    pld_wait_cmp cmp = PLD__MUTANT(eq_wait) ? PLD_WAIT_EQ : PLD_WAIT_GE;
    switch (pld__sync_form_of(c)) {
    case PLD_SYNC_DISSEMINATION:
        dissem_barrier(c, sig, lane, g, cmp);
        break;
    case PLD_SYNC_TREE:
        tree_barrier(c, sig, lane, g, cmp);
        break;
    default:
        full_barrier(c, sig, lane, g, cmp);
        break;
    }
    /* every peer has now published its fingerprint of this call (directly,
     * or before a chain of notifies that reached this rank) */
    pld__call_round(c);
}

void pld__credit_epilogue(pld_ctx *c, pld_dtensor sig, int lane, int32_t n)
{
    int me = c->rank, p = c->nranks;
    if (PLD__MUTANT(no_epilogue))
        return;
    switch (pld__sync_form_of(c)) {
    case PLD_SYNC_DISSEMINATION:
        for (int d = 1; d < p; d <<= 1)
            pld__notify_checked(c, sig, me, (me + p - d) % p, lane, -n, PLD_NOTIFY_ATOMIC_ADD);
        return;
    case PLD_SYNC_TREE: {
        int k = c->sync_fanout, nch = pld__tree_children(me, p, k);
        if (nch)
            pld__notify_checked(c, sig, me, me, lane, -n * nch, PLD_NOTIFY_ATOMIC_ADD);
        if (me)
            pld__notify_checked(c, sig, me, (me - 1) / k, lane, -n, PLD_NOTIFY_ATOMIC_ADD);
        return;
    }
    default:
        for (int src = 0; src < p; src++)
            if (src != me)
                pld__notify_checked(c, sig, me, src, lane, -n, PLD_NOTIFY_ATOMIC_ADD);
        return;
    }
}
