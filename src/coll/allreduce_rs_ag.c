/* SPDX-License-Identifier: Apache-2.0 */
/* Allreduce, reduce-scatter then allgather, both as a mesh (PLD_RS_AG).
 *
 * data window of any shape, seen as one row of n elements cut into m
 * segments, segment k = [n*k/m, n*(k+1)/m) owned by rank k: m = P (the
 * split of tutorial step 09) unless segments would fall below
 * PLD_RS_AG_MIN_SEGMENT (256) bytes; then only the first m ranks own one
 * (pld_tune_rs_ag_owners). A 4 KiB allreduce on 1024 ranks so moves 16
 * segments in about 32P transfers instead of 2P(P-1) of 4 bytes.
 *
 * Algorithm, on a [P,1] credit signal:
 *   round 1 (ready)     every rank staged its data
 *   reduce-scatter      each owner: its segment op the same segment of
 *                       every peer, read straight from the peers' windows
 *                       (chunked through UB), stored into its segment:
 *                       peers read only the owners' own segments of an
 *                       owner's window, never its other elements
 *   round 2             every segment is final
 *   allgather           every segment I do not own pulled from its owner
 *   round 3 (read done) nobody reads my segment any more: the caller may
 *                       change its data as soon as the call returns
 *   epilogue            3 credits back per cell
 * Each segment is reduced once, by its owner, and copied: every rank ends
 * with the same bits.
 * Cost card: an owner's bytes_from_peers = (P-1) x |its segment| +
 * (n - |its segment|) elements, about 2(P-1)/P x N when m = P; a non-owner
 * reads n elements; 3 rounds (the mesh: (P-1) x N and 1 + chunks rounds;
 * the ring: about the same bytes in 2(P-1) rounds). */
#include "coll/coll_util.h"
#include "pld/tune.h"

void pld__allreduce_rs_ag(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                          pld_reduce_op op)
{
    int p = c->nranks, me = c->rank;
    pld_dtensor f = pld__dtensor_flat(data);
    int64_t n = f.shape[1];
    pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
    int m = pld_tune_rs_ag_owners(p, (size_t)n * pld_dtype_size(f.dtype));
    int64_t e0 = me < m ? n * me / m : 0, e1 = me < m ? n * (me + 1) / m : 0;

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
    /* allgather: every segment I do not own, from its owner (starting at
     * a different owner on each rank, so they are not all read at once) */
    for (int i = 0; i < m; i++) {
        int q = (me + i) % m;
        if (q != me)
            pld__coll_pull_range(c, api, f, mine, q, n * q / m, n * (q + 1) / m, 0, op);
    }
    /* round 3: nobody reads my segment any more */
    if (!PLD__MUTANT(rsag_no_readdone))
        pld__credit_barrier(c, signal, 0, ++round);
    pld__credit_epilogue(c, signal, 0, round);
}
