/* SPDX-License-Identifier: Apache-2.0 */
/* Broadcast, pull form, two full credit rounds (PLD_BCAST_PULL, and
 * PLD_BCAST_AUTO above the one-round size); the binomial tree is
 * broadcast_binomial.c.
 *
 * The root has staged `data`; afterwards every rank's data equals the root's.
 *
 * Algorithm: round 1 (ready) is a full credit barrier: the root's data is
 * staged and every rank has entered this call; each non-root then pulls the
 * whole window from the root; round 2 (read done) is a second full barrier:
 * nobody reads the root's data any more, so the root may change it as soon
 * as the call returns. The epilogue takes both rounds' credits back.
 *
 * Both rounds are full on purpose. A rooted form (non-roots hear only from
 * the root) is faster, but lets a non-root leave without hearing from a
 * slow peer and push its next builtin's data into a window that peer is
 * still reading: the ordering guarantee every push builtin relies on (each
 * call contains a round in which every rank hears from every other rank).
 * Cost card: bytes_from_peers = N on every non-root, 0 on the root;
 * 2 rounds, 2(P-1) waits per rank. */
#include "coll/ll.h"

/* The rooted form that broke the ordering guarantee, kept as a planted bug
 * (mutant.h): the root tells each non-root "staged", each non-root pulls and
 * answers "pulled"; a non-root leaves without hearing from its peers. */
static void broadcast_rooted(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                             int root)
{
    int me = c->rank;
    if (me == root) {
        for (int q = 0; q < c->nranks; q++)
            if (q != me)
                pld__notify_checked(c, signal, q, me, 0, 1, PLD_NOTIFY_ATOMIC_ADD);
        for (int q = 0; q < c->nranks; q++)
            if (q != me)
                pld__wait_checked(c, signal, q, 0, 1, PLD_WAIT_GE);
        for (int q = 0; q < c->nranks; q++)
            if (q != me)
                pld__notify_checked(c, signal, me, q, 0, -1, PLD_NOTIFY_ATOMIC_ADD);
        return;
    }
    pld__wait_checked(c, signal, root, 0, 1, PLD_WAIT_GE);
    int64_t n = pld__dtensor_numel(data);
    pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
    pld__coll_get_rows(c, api, mine, 0, pld__dtensor_flat(data), root, 0, 1);
    pld__notify_checked(c, signal, root, me, 0, 1, PLD_NOTIFY_ATOMIC_ADD);
    pld__notify_checked(c, signal, me, root, 0, -1, PLD_NOTIFY_ATOMIC_ADD);
}

void pld_broadcast(pld_ctx *c, pld_dtensor data, pld_dtensor signal, int root)
{
    pld_broadcast_with(c, data, signal, root, PLD_BCAST_AUTO);
}

void pld_broadcast_with(pld_ctx *c, pld_dtensor data, pld_dtensor signal, int root,
                        pld_broadcast_mode mode)
{
    PLD__CTX_CHECK(c, "pld_broadcast");
    static const char api[] = "pld_broadcast";
    pld__check_live(c);
    pld__check_dtensor(c, api, "data", data);
    pld__coll_check_signal(c, api, signal, 1);
    if (root < 0 || root >= c->nranks)
        pld__kraise(c, PLD_ERR_ARG, api, "root %d is not a rank of this world [0,%d)", root,
                    c->nranks);
    if (mode != PLD_BCAST_AUTO && mode != PLD_BCAST_PULL && mode != PLD_BCAST_BINOMIAL)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "mode %d is not a pld_broadcast_mode (Auto=0, Pull=1, Binomial=2)", (int)mode);
    if (data.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "data and signal are the same window '%s'",
                    data.buf->name);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_BROADCAST, api, signal);
    pld__fp_window(&fp, data);
    fp.wire.root = root;
    fp.wire.mode = (int32_t)mode;
    pld__coll_enter(c, api, signal, &fp, "%s, %s, root=%d%s%s", data.buf->name, signal.buf->name,
                    root, mode == PLD_BCAST_AUTO ? "" : ", ",
                    mode == PLD_BCAST_AUTO ? "" : pld__broadcast_mode_name(mode));
    if (PLD__MUTANT(rooted_bcast)) {
        broadcast_rooted(c, api, data, signal, root);
        pld__coll_leave(c, signal);
        return;
    }
    if (mode == PLD_BCAST_BINOMIAL) {
        pld__broadcast_binomial(c, api, data, signal, root);
        pld__coll_leave(c, signal);
        return;
    }
    if (mode == PLD_BCAST_AUTO &&
        pld__ll_broadcast(c, api, data, root)) { /* small: one round (ll.h) */
        pld__coll_leave(c, signal);
        return;
    }
    int rule;
    if (mode == PLD_BCAST_AUTO &&
        pld__coll_rule(c, PLD_RULE_BROADCAST,
                       (uint64_t)pld__dtensor_numel(data) * pld_dtype_size(data.dtype),
                       pld__broadcast_mode_name, &rule) &&
        rule == PLD_BCAST_BINOMIAL) {
        pld__broadcast_binomial(c, api, data, signal, root);
        pld__coll_leave(c, signal);
        return;
    }
    /* step 1: ready -- the root staged, every rank is in this call */
    pld__credit_barrier(c, signal, 0, 1);
    /* step 2: every non-root pulls the root's data (chunked through UB) */
    if (c->rank != root) {
        int64_t n = pld__dtensor_numel(data);
        pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
        pld__coll_get_rows(c, api, mine, 0, pld__dtensor_flat(data), root, 0, 1);
    }
    /* step 3: read done -- the root's data is free again */
    pld__credit_barrier(c, signal, 0, 2);
    pld__credit_epilogue(c, signal, 0, 2);
    pld__coll_leave(c, signal);
}

const char *pld__broadcast_mode_name(int32_t mode)
{
    return mode == PLD_BCAST_AUTO       ? "auto"
           : mode == PLD_BCAST_PULL     ? "pull"
           : mode == PLD_BCAST_BINOMIAL ? "binomial"
                                        : "?";
}
