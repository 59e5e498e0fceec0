/* Signal hygiene (PLD_CHECK_SIGNALS): every builtin must leave its signal
 * all-zero. In checked mode a builtin checks its own slice of the signal on
 * entry and on exit, between two barriers on a private checker signal so no
 * rank is inside the builtin's protocol while the cells are read. A non-zero
 * cell on entry means credits leaked from an earlier aborted call; on exit,
 * a broken protocol. Both are PLD_ERR_CHECK naming the cells. */
#include <stdio.h>

#include "coll/credit.h"

static void check_barrier(pld_ctx *c)
{
    pld__credit_barrier(c, c->w->check_signal, 0, 1);
    pld__credit_epilogue(c, c->w->check_signal, 0, 1);
}

void pld__signal_check(pld_ctx *c, pld_dtensor sig, int after)
{
    char cells[512];
    size_t used = 0;
    int bad = 0;
    /* the checker's own traffic stays out of the listing and the counters */
    pld__ir *ir = c->ir;
    pld_counters saved = c->ag->counters;
    c->ir = NULL;
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
