/* SPDX-License-Identifier: Apache-2.0 */
/* All-to-all, push form (PLD_A2A_PUSH, and PLD_A2A_AUTO above the
 * one-round size where the cost model prefers it); Bruck's algorithm is
 * all_to_all_bruck.c.
 *
 * input [P,S] local (row d = the chunk for rank d), target window [P,S]:
 * afterwards row s of target holds the chunk rank s made for this rank.
 *
 * Algorithm: put input row d into row `me` of rank d's target for every d
 * (self included), then one completion barrier and the epilogue. The caller
 * reads the rows: the window is the result.
 * Cost card: bytes_to_peers = (P-1)/P * N, bytes_self = N/P, 1 round. */
#include "coll/ll.h"

void pld_all_to_all(pld_ctx *c, pld_tensor input, pld_dtensor target, pld_dtensor signal)
{
    pld_all_to_all_with(c, input, target, signal, PLD_A2A_AUTO);
}

const char *pld__all_to_all_mode_name(int32_t mode)
{
    return mode == PLD_A2A_AUTO    ? "auto"
           : mode == PLD_A2A_PUSH  ? "push"
           : mode == PLD_A2A_BRUCK ? "bruck"
                                   : "?";
}

void pld_all_to_all_with(pld_ctx *c, pld_tensor input, pld_dtensor target, pld_dtensor signal,
                         pld_all_to_all_mode mode)
{
    PLD__CTX_CHECK(c, "pld_all_to_all");
    static const char api[] = "pld_all_to_all";
    char dims[96];
    pld__check_live(c);
    pld__check_dtensor(c, api, "target", target);
    if (mode != PLD_A2A_AUTO && mode != PLD_A2A_PUSH && mode != PLD_A2A_BRUCK)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "mode %d is not a pld_all_to_all_mode (Auto=0, Push=1, Bruck=2)", (int)mode);
    pld__check_tensor(c, api, "input", input);
    pld__coll_check_signal(c, api, signal, 1);
    int p = c->nranks;
    if (target.shape[0] != p)
        pld__kraise(c, PLD_ERR_ARG, api, "target '%s' is %s; its first dim must be %s=%d",
                    target.buf->name, pld__fmt_dims(dims, sizeof dims, target.shape, target.ndim),
                    pld__pname(c), p);
    if (input.dtype != target.dtype)
        pld__kraise(c, PLD_ERR_ARG, api, "input is %s but target '%s' is %s",
                    pld_dtype_name(input.dtype), target.buf->name, pld_dtype_name(target.dtype));
    int64_t s = pld__dtensor_numel(target) / p;
    if (input.shape[0] != p || pld_tensor_numel(input) != pld__dtensor_numel(target))
        pld__kraise(c, PLD_ERR_ARG, api, "input %s must be [%s=%d, %lld] like target '%s'",
                    pld__fmt_dims(dims, sizeof dims, input.shape, input.ndim), pld__pname(c), p,
                    (long long)s, target.buf->name);
    if (pld__tensor_in_window(c, input, target.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "input lies inside target window '%s'; the push would overwrite chunks "
                    "still to be sent: use a separate target window",
                    target.buf->name);
    if (target.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "target and signal are the same window '%s'",
                    target.buf->name);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_ALL_TO_ALL, api, signal);
    pld__fp_window(&fp, target);
    pld__fp_tensor(&fp, input, 0);
    fp.wire.mode = (int32_t)mode;
    pld__coll_enter(c, api, signal, &fp, "%s, %s%s%s", target.buf->name, signal.buf->name,
                    mode == PLD_A2A_AUTO ? "" : ", ",
                    mode == PLD_A2A_AUTO ? "" : pld__all_to_all_mode_name(mode));
    pld_dtensor t2 = pld__dtensor_2d(target, p, s);
    pld_tensor in2 = pld__tensor_2d(input, p, s);
    int late = PLD__MUTANT(push_after_barrier);
    if (!late && mode == PLD_A2A_AUTO &&
        pld__ll_all_to_all(c, api, t2, in2)) { /* small: one round (ll.h) */
        pld__coll_leave(c, signal);
        return;
    }
    if (mode == PLD_A2A_BRUCK ||
        (!late && mode == PLD_A2A_AUTO && pld__all_to_all_auto_pick(c, t2) == PLD_A2A_BRUCK)) {
        pld__all_to_all_bruck(c, api, t2, in2, signal);
        pld__coll_leave(c, signal);
        return;
    }
    if (late)
        pld__credit_barrier(c, signal, 0, 1);
    /* step 1: push the chunk for d into row `me` of d's target */
    for (int i = 1; i <= p; i++) {
        int d = (c->rank + i) % p;
        pld__coll_put_rows(c, api, t2, d, c->rank, in2, d, 1);
    }
    /* step 2: completion barrier; the caller reads the rows */
    if (!late)
        pld__credit_barrier(c, signal, 0, 1);
    pld__credit_epilogue(c, signal, 0, 1);
    pld__coll_leave(c, signal);
}

/* Above the one-round size PLD_A2A_AUTO asks the cost model (src/tune/)
 * with the world's measured parameters: the push makes P transfers and
 * one round, Bruck's algorithm moves about (log2 P)/2 times the bytes in
 * a chain of steps with 2 ceil(log2 P) + 1 transfers. Every input is the
 * same on every rank, so every rank chooses alike. */
pld_all_to_all_mode pld__all_to_all_auto_pick(pld_ctx *c, pld_dtensor t2)
{
    size_t chunk = (size_t)t2.shape[1] * pld_dtype_size(t2.dtype);
    double pred[PLD_TUNE_ALL_TO_ALL_PREDICTIONS];
    pld_all_to_all_mode m = pld_tune_all_to_all_auto(&c->w->sh->tune, c->nranks, chunk, pred);
    int rule,
        line = pld__coll_rule(c, PLD_RULE_ALL_TO_ALL, chunk, pld__all_to_all_mode_name, &rule);
    if (line)
        m = (pld_all_to_all_mode)rule;
    pld__coll_note_push_or(c, m == PLD_A2A_BRUCK, "bruck", "auto: bruck", pred, chunk, "chunks",
                           line);
    return m;
}
