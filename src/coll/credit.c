/* SPDX-License-Identifier: Apache-2.0 */
/* Self-clearing credit barrier: see credit.h. */
#include "coll/credit.h"

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
void pld__credit_barrier(pld_ctx *c, pld_dtensor sig, int lane, int32_t g)
{
    int me = c->rank, p = c->nranks;
    for (int peer = 0; peer < p; peer++)
        if (peer != me)
            pld__notify_checked(c, sig, peer, me, lane, 1, PLD_NOTIFY_ATOMIC_ADD);
    pld_wait_cmp cmp = PLD__MUTANT(eq_wait) ? PLD_WAIT_EQ : PLD_WAIT_GE;
    for (int src = 0; src < p; src++)
        if (src != me)
            pld__wait_checked(c, sig, src, lane, g, cmp);
    /* every peer has now published its fingerprint of this call */
    pld__call_round(c);
}

void pld__credit_epilogue(pld_ctx *c, pld_dtensor sig, int lane, int32_t n)
{
    int me = c->rank, p = c->nranks;
    if (PLD__MUTANT(no_epilogue))
        return;
    for (int src = 0; src < p; src++)
        if (src != me)
            pld__notify_checked(c, sig, me, src, lane, -n, PLD_NOTIFY_ATOMIC_ADD);
}
