/* SPDX-License-Identifier: Apache-2.0 */
/* All-to-all, push form.
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
    PLD__CTX_CHECK(c, "pld_all_to_all");
    static const char api[] = "pld_all_to_all";
    char dims[96];
    pld__check_live(c);
    pld__check_dtensor(c, api, "target", target);
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
    pld__coll_enter(c, api, signal, &fp, "%s, %s", target.buf->name, signal.buf->name);
    pld_dtensor t2 = pld__dtensor_2d(target, p, s);
    pld_tensor in2 = pld__tensor_2d(input, p, s);
    int late = PLD__MUTANT(push_after_barrier);
    if (!late && pld__ll_all_to_all(c, api, t2, in2)) { /* small: one round (ll.h) */
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
