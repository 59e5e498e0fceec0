/* SPDX-License-Identifier: Apache-2.0 */
/* Reduce-scatter, pull form (Sum).
 *
 * data window [P,S]: every rank staged all P rows; afterwards row `me` of
 * rank me's data = the sum over ranks of their row `me`.
 *
 * Algorithm: barrier round 1 (everyone staged); in UB-sized column chunks,
 * load my row into an accumulator tile, add row `me` of every peer into it
 * straight from the peer's window (remote_reduce), store the chunk back into
 * my row (no peer reads my row `me`);
 * barrier round 2 (every peer finished reading my other rows). Epilogue 2.
 * Cost card: bytes_from_peers = (P-1)/P * N; 2 rounds. */
#include "coll/ll.h"

static void reduce_row_from_peers(pld_ctx *c, const char *api, pld_dtensor d2, int64_t row,
                                  pld_reduce_op op)
{
    int64_t cols = d2.shape[1];
    pld_tensor mine = pld__tensor_2d(pld_local(c, d2), d2.shape[0], cols);
    pld__stage st;
    pld__stage_begin(c, api, &st, d2.dtype, cols, 1);
    for (int64_t c0 = 0; c0 < cols; c0 += st.width) {
        pld__stage_fit(c, &st, cols - c0);
        pld_tile *acc = st.t[0];
        pld__load_reduce_first(c, acc, mine, d2, row, c0, op);
        for (int i = 2; i < c->nranks; i++) {
            int peer = (c->rank + i) % c->nranks;
            pld__remote_reduce_checked(c, acc, d2, peer, row, c0, op);
        }
        pld__store_checked(c, acc, mine, row, c0);
    }
    pld__stage_end(c, &st);
}

void pld_reduce_scatter(pld_ctx *c, pld_dtensor data, pld_dtensor signal, pld_reduce_op op)
{
    PLD__CTX_CHECK(c, "pld_reduce_scatter");
    static const char api[] = "pld_reduce_scatter";
    char dims[96];
    pld__check_live(c);
    pld__check_dtensor(c, api, "data", data);
    pld__coll_check_signal(c, api, signal, 1);
    pld__coll_check_reduce(c, api, data.dtype, op);
    if (op != PLD_SUM)
        pld__kraise(c, PLD_ERR_UNSUPPORTED, api, "reduce_scatter supports Sum only (op %d)",
                    (int)op);
    if (data.shape[0] != c->nranks)
        pld__kraise(c, PLD_ERR_ARG, api, "data '%s' is %s; its first dim must be %s=%d",
                    data.buf->name, pld__fmt_dims(dims, sizeof dims, data.shape, data.ndim),
                    pld__pname(c), c->nranks);
    if (data.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "data and signal are the same window '%s'",
                    data.buf->name);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_REDUCE_SCATTER, api, signal);
    pld__fp_window(&fp, data);
    fp.wire.op = (int32_t)op;
    pld__coll_enter(c, api, signal, &fp, "%s, %s, sum", data.buf->name, signal.buf->name);
    pld_dtensor d2 = pld__dtensor_2d(data, c->nranks, pld__dtensor_numel(data) / c->nranks);
    if (pld__ll_reduce_scatter(c, api, d2, op)) { /* small: one round (ll.h) */
        pld__coll_leave(c, signal);
        return;
    }
    /* step 1: every rank staged its rows */
    pld__credit_barrier(c, signal, 0, 1);
    /* step 2: pull row `me` from every peer and reduce, chunk by chunk */
    reduce_row_from_peers(c, api, d2, c->rank, op);
    /* step 3: every peer finished reading my rows */
    pld__credit_barrier(c, signal, 0, 2);
    pld__credit_epilogue(c, signal, 0, 2);
    pld__coll_leave(c, signal);
}
