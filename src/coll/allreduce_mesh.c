/* SPDX-License-Identifier: Apache-2.0 */
/* Allreduce, mesh form.
 *
 * data window of any shape: afterwards every rank's data = op over ranks.
 *
 * Algorithm: ready barrier (round 1: everyone staged); then per UB-sized
 * chunk k: load my chunk into an accumulator, reduce every peer's chunk into
 * it straight from the peer's window (remote_reduce), read-done barrier (round 2+k: nobody reads
 * chunk k any more), store the accumulator into my chunk. Epilogue takes 1+chunks credits. Cost
 * card: bytes_from_peers = (P-1) * N; 1 + chunks rounds. */
#include "coll/coll_util.h"

void pld__allreduce_mesh(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                         pld_reduce_op op)
{
    pld_dtensor f = pld__dtensor_flat(data);
    int64_t n = f.shape[1];
    pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
    int32_t round = 1;
    pld__stage st;
    /* step 1: ready barrier */
    pld__credit_barrier(c, signal, 0, round);
    pld__stage_begin(c, api, &st, data.dtype, n, 1);
    for (int64_t c0 = 0; c0 < n; c0 += st.width) {
        pld__stage_fit(c, &st, n - c0);
        pld_tile *acc = st.t[0];
        /* step 2: accumulate chunk k of every peer (mine and the first
         * peer's in one pass) */
        pld__load_reduce_first(c, acc, mine, f, 0, c0, op);
        for (int i = 2; i < c->nranks; i++) {
            int peer = (c->rank + i) % c->nranks;
            pld__remote_reduce_checked(c, acc, f, peer, 0, c0, op);
        }
        /* step 3: read-done barrier, then the chunk may be overwritten */
        if (!PLD__MUTANT(mesh_no_readdone))
            pld__credit_barrier(c, signal, 0, ++round);
        pld__store_checked(c, acc, mine, 0, c0);
    }
    pld__stage_end(c, &st);
    pld__credit_epilogue(c, signal, 0, round);
}
