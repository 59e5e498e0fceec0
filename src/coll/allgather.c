/* SPDX-License-Identifier: Apache-2.0 */
/* Allgather, push form (PLD_AG_PUSH, and PLD_AG_AUTO above the one-round
 * size unless the cost model predicts recursive doubling faster);
 * recursive doubling is allgather_doubling.c.
 *
 * local [1,S] on every rank, target window [P,S]: afterwards row s of target
 * holds rank s's local on every rank.
 *
 * Algorithm: put local into row `me` of every rank's target (self included,
 * through the same path), then one barrier round tells each rank that every
 * peer's push has landed; the epilogue takes the credits back.
 * Cost card: bytes_to_peers = (P-1)/P * N (N = P*S*elt), bytes_self = N/P,
 * 1 barrier round. */
#include "coll/ll.h"

/* Checks target [P,S] and returns S. */
static int64_t check_target(pld_ctx *c, const char *api, pld_dtensor target)
{
    char dims[96];
    pld__check_dtensor(c, api, "target", target);
    if (target.shape[0] != c->nranks)
        pld__kraise(c, PLD_ERR_ARG, api, "target '%s' is %s; its first dim must be %s=%d",
                    target.buf->name, pld__fmt_dims(dims, sizeof dims, target.shape, target.ndim),
                    pld__pname(c), c->nranks);
    return pld__dtensor_numel(target) / c->nranks;
}

void pld_allgather(pld_ctx *c, pld_tensor local, pld_dtensor target, pld_dtensor signal)
{
    pld_allgather_with(c, local, target, signal, PLD_AG_AUTO);
}

void pld_allgather_with(pld_ctx *c, pld_tensor local, pld_dtensor target, pld_dtensor signal,
                        pld_allgather_mode mode)
{
    PLD__CTX_CHECK(c, "pld_allgather");
    static const char api[] = "pld_allgather";
    pld__check_live(c);
    int64_t s = check_target(c, api, target);
    if (mode != PLD_AG_AUTO && mode != PLD_AG_PUSH && mode != PLD_AG_DOUBLING)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "mode %d is not a pld_allgather_mode (Auto=0, Push=1, Doubling=2)", (int)mode);
    pld__check_tensor(c, api, "local", local);
    pld__coll_check_signal(c, api, signal, 1);
    if (local.dtype != target.dtype)
        pld__kraise(c, PLD_ERR_ARG, api, "local is %s but target '%s' is %s",
                    pld_dtype_name(local.dtype), target.buf->name, pld_dtype_name(target.dtype));
    if (pld_tensor_numel(local) != s)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "local has %lld elements but each row of target '%s' has %lld",
                    (long long)pld_tensor_numel(local), target.buf->name, (long long)s);
    if (pld__tensor_in_window(c, local, target.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "local lies inside target window '%s'; they must be different buffers "
                    "(use pld_allgather_inplace to gather in place)",
                    target.buf->name);
    if (target.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "target and signal are the same window '%s'",
                    target.buf->name);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_ALLGATHER, api, signal);
    pld__fp_window(&fp, target);
    pld__fp_tensor(&fp, local, 0);
    fp.wire.mode = (int32_t)mode;
    pld__coll_enter(c, api, signal, &fp, "%s, %s%s%s", target.buf->name, signal.buf->name,
                    mode == PLD_AG_AUTO ? "" : ", ",
                    mode == PLD_AG_AUTO ? "" : pld__allgather_mode_name(mode));
    pld_dtensor t2 = pld__dtensor_2d(target, c->nranks, s);
    pld_tensor l2 = pld__tensor_2d(local, 1, s);
    int late = PLD__MUTANT(push_after_barrier);
    if (!late && mode == PLD_AG_AUTO &&
        pld__ll_allgather(c, api, t2, l2, 0)) { /* small: one round (ll.h) */
        pld__coll_leave(c, signal);
        return;
    }
    if (mode == PLD_AG_DOUBLING ||
        (!late && mode == PLD_AG_AUTO && pld__allgather_auto_pick(c, t2) == PLD_AG_DOUBLING)) {
        pld__allgather_doubling(c, api, t2, &l2, signal);
        pld__coll_leave(c, signal);
        return;
    }
    if (late)
        pld__credit_barrier(c, signal, 0, 1);
    /* step 1: push my row to every rank, starting with my right neighbour */
    pld__coll_put_row_to_all(c, api, t2, c->rank, l2, 0, 1);
    /* step 2: completion barrier, then the self-clearing epilogue */
    if (!late)
        pld__credit_barrier(c, signal, 0, 1);
    pld__credit_epilogue(c, signal, 0, 1);
    pld__coll_leave(c, signal);
}

void pld_allgather_inplace(pld_ctx *c, pld_dtensor target, pld_dtensor signal)
{
    PLD__CTX_CHECK(c, "pld_allgather_inplace");
    static const char api[] = "pld_allgather_inplace";
    pld__check_live(c);
    int64_t s = check_target(c, api, target);
    pld__coll_check_signal(c, api, signal, 1);
    if (target.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "target and signal are the same window '%s'",
                    target.buf->name);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_ALLGATHER_INPLACE, api, signal);
    pld__fp_window(&fp, target);
    pld__coll_enter(c, api, signal, &fp, "%s, %s", target.buf->name, signal.buf->name);
    pld_dtensor t2 = pld__dtensor_2d(target, c->nranks, s);
    pld_tensor mine = pld__tensor_2d(pld_local(c, target), c->nranks, s);
    if (pld__ll_allgather(c, api, t2, mine, 1)) { /* small: one round (ll.h) */
        pld__coll_leave(c, signal);
        return;
    }
    if (pld__allgather_auto_pick(c, t2) == PLD_AG_DOUBLING) { /* as pld_allgather's auto */
        pld__allgather_doubling(c, api, t2, NULL, signal);
        pld__coll_leave(c, signal);
        return;
    }
    /* my row is already staged in place: push it to the others only */
    pld__coll_put_row_to_all(c, api, t2, c->rank, mine, c->rank, 0);
    pld__credit_barrier(c, signal, 0, 1);
    pld__credit_epilogue(c, signal, 0, 1);
    pld__coll_leave(c, signal);
}

/* Above the one-round size PLD_AG_AUTO asks the cost model (src/tune/)
 * with the world's measured parameters: the push makes P transfers,
 * recursive doubling about 2 ceil(log2 P) and a chain of ceil(log2 P)
 * steps; the bytes and the round are the same. Every input is the same on
 * every rank, so every rank chooses alike. */
pld_allgather_mode pld__allgather_auto_pick(pld_ctx *c, pld_dtensor t2)
{
    size_t row = (size_t)t2.shape[1] * pld_dtype_size(t2.dtype);
    double pred[PLD_TUNE_ALLGATHER_PREDICTIONS];
    pld_allgather_mode m = pld_tune_allgather_auto(&c->w->sh->tune, c->nranks, row, pred);
    int rule, line = pld__coll_rule(c, PLD_RULE_ALLGATHER, row, pld__allgather_mode_name, &rule);
    if (line)
        m = (pld_allgather_mode)rule;
    pld__coll_note_push_or(c, m == PLD_AG_DOUBLING, "doubling", "auto: doubling", pred, row, "rows",
                           line);
    return m;
}

const char *pld__allgather_mode_name(int32_t mode)
{
    return mode == PLD_AG_AUTO       ? "auto"
           : mode == PLD_AG_PUSH     ? "push"
           : mode == PLD_AG_DOUBLING ? "doubling"
                                     : "?";
}
