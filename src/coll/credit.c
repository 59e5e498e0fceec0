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
    if (!ok)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "signal '%s' is %s; it needs one cell per rank%s: [%d,%d]%s", sig.buf->name,
                    pld__fmt_dims(dims, sizeof dims, sig.shape, sig.ndim),
                    lanes > 1 ? " and core" : "", c->nranks, lanes, lanes == 1 ? " or [P]" : "");
}

/* Offsets of cell [rank, lane]; a 1-D [P] signal reads only the first. */
static const int64_t *cell(int rank, int lane, int64_t *buf)
{
    buf[0] = rank;
    buf[1] = lane;
    return buf;
}

void pld__credit_barrier(pld_ctx *c, pld_dtensor sig, int lane, int32_t g)
{
    int64_t at[2];
    int me = c->rank, p = c->nranks;
    for (int peer = 0; peer < p; peer++)
        if (peer != me)
            pld_notify(c, sig, peer, cell(me, lane, at), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int src = 0; src < p; src++)
        if (src != me)
            pld_wait(c, sig, cell(src, lane, at), g, PLD_WAIT_GE);
}

void pld__credit_epilogue(pld_ctx *c, pld_dtensor sig, int lane, int32_t n)
{
    int64_t at[2];
    int me = c->rank, p = c->nranks;
    for (int src = 0; src < p; src++)
        if (src != me)
            pld_notify(c, sig, me, cell(src, lane, at), -n, PLD_NOTIFY_ATOMIC_ADD);
}
