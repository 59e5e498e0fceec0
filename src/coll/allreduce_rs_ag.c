/* SPDX-License-Identifier: Apache-2.0 */
/* Allreduce, reduce-scatter then allgather, both as a mesh (PLD_RS_AG).
 *
 * data window of any shape, seen as one row of n elements cut into P
 * segments, segment k = [n*k/P, n*(k+1)/P) owned by rank k (the split of
 * tutorial step 09).
 *
 * Algorithm, on a [P,1] credit signal:
 *   round 1 (ready)     every rank staged its data
 *   reduce-scatter      my segment op the same segment of every peer, read
 *                       straight from the peers' windows (chunked through
 *                       UB), stored into my segment: peers read only their
 *                       own segments of my window, never mine
 *   round 2             every segment is final
 *   allgather           every other segment pulled from its owner into mine
 *   round 3 (read done) nobody reads my segment any more: the caller may
 *                       change its data as soon as the call returns
 *   epilogue            3 credits back per cell
 * Each segment is reduced once, by its owner, and copied: every rank ends
 * with the same bits.
 * Cost card: bytes_from_peers = (P-1) x |my segment| + (n - |my segment|)
 * elements, about 2(P-1)/P x N; 3 rounds (the mesh: (P-1) x N and 1 +
 * chunks rounds; the ring: about the same bytes in 2(P-1) rounds). */
#include "coll/coll_util.h"

void pld__allreduce_rs_ag(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                          pld_reduce_op op)
{
    int p = c->nranks, me = c->rank;
    pld_dtensor f = pld__dtensor_flat(data);
    int64_t n = f.shape[1];
    pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
    int64_t e0 = n * me / p, e1 = n * (me + 1) / p;

    /* round 1: every rank staged its data */
    int32_t round = 1;
    pld__credit_barrier(c, signal, 0, round);
    /* reduce-scatter: my segment, from every peer, chunk by chunk */
    if (e1 > e0) {
        pld__stage st;
        pld__stage_begin(c, api, &st, f.dtype, e1 - e0, 1);
        for (int64_t c0 = e0; c0 < e1; c0 += st.width) {
            pld__stage_fit(c, &st, e1 - c0);
            pld_tile *acc = st.t[0];
            pld__load_reduce_first(c, acc, mine, f, 0, c0, op);
            for (int i = 2; i < p; i++)
                pld__remote_reduce_checked(c, acc, f, (me + i) % p, 0, c0, op);
            pld__store_checked(c, acc, mine, 0, c0);
        }
        pld__stage_end(c, &st);
    }
    /* round 2: every segment is final */
    if (!PLD__MUTANT(rsag_no_round2))
        pld__credit_barrier(c, signal, 0, ++round);
    /* allgather: every other segment from its owner */
    for (int i = 1; i < p; i++) {
        int q = (me + i) % p;
        pld__coll_pull_range(c, api, f, mine, q, n * q / p, n * (q + 1) / p, 0, op);
    }
    /* round 3: nobody reads my segment any more */
    if (!PLD__MUTANT(rsag_no_readdone))
        pld__credit_barrier(c, signal, 0, ++round);
    pld__credit_epilogue(c, signal, 0, round);
}
