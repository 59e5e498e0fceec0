/* SPDX-License-Identifier: Apache-2.0 */
/* Allreduce, reduce-scatter then allgather, both as a mesh (PLD_RS_AG).
 *
 * data window of any shape, seen as one row of n elements cut into m
 * segments, segment k = [n*k/m, n*(k+1)/m) owned by rank k: m = P (the
 * split of tutorial step 09) unless segments would fall below
 * PLD_RS_AG_MIN_SEGMENT (4 KiB); then only the first m ranks own one
 * (pld_tune_rs_ag_owners). A 4 KiB allreduce on 1024 ranks so has one
 * owner, which reads every peer's copy, and every other rank reads the
 * result from it: about 2P transfers instead of 2P(P-1) of 4 bytes.
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
 *
 * Owner rounds (1 <= m < P, m <= PLD_RS_AG_OWNER_ROUNDS_MAX): only the
 * owners need to hear from everyone, so the three rounds go through them
 * (whatever the group's synchronisation form):
 *   ready       every rank: +1 to each owner (its cell there)
 *               an owner waits for every rank's ready, then reduces
 *   final       each owner: +1 to every rank; every rank waits for every
 *               owner's final (2 credits from an owner that is a peer
 *               owner: its ready came first), then pulls the segments
 *   read done   every rank: +1 to each owner; an owner waits for every
 *               rank's (3 credits from an owner, 2 from a non-owner)
 *   epilogue    what each cell received, taken back: an owner 3 per
 *               owner and 2 per non-owner, a non-owner 1 per owner
 * The ordering guarantee holds through the owners: a rank leaves only
 * after every owner's final, which each owner sends after every rank's
 * ready. A credit from src to dst is in cell src of dst, as in every
 * other round, and each is waited for before it is taken back, so any
 * call may follow on the same signal. A non-owner leaves without hearing
 * that anyone has read from it: nobody reads a non-owner's data after
 * the owners' finals. Notifies: an owner 2(m-1) + 2(P-1), a non-owner
 * 3m; waits: an owner 2(P-1) + m-1, a non-owner m.
 *
 * Cost card: an owner's bytes_from_peers = (P-1) x |its segment| +
 * (n - |its segment|) elements, about 2(P-1)/P x N when m = P; a non-owner
 * reads n elements; 3 rounds (the mesh: (P-1) x N and 1 + chunks rounds;
 * the ring: about the same bytes in 2(P-1) rounds). */
#include "coll/coll_util.h"
#include "pld/tune.h"

/* My segment [e0, e1), from every peer, chunk by chunk. */
static void reduce_segment(pld_ctx *c, const char *api, pld_dtensor f, pld_tensor mine, int64_t e0,
                           int64_t e1, pld_reduce_op op)
{
    int p = c->nranks, me = c->rank;
    if (e1 <= e0)
        return;
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

/* Every segment I do not own, from its owner (starting at a different
 * owner on each rank, so they are not all read at once). */
static void gather_segments(pld_ctx *c, const char *api, pld_dtensor f, pld_tensor mine, int m,
                            pld_reduce_op op)
{
    int64_t n = f.shape[1];
    for (int i = 0; i < m; i++) {
        int q = (c->rank + i) % m;
        if (q != c->rank)
            pld__coll_pull_range(c, api, f, mine, q, n * q / m, n * (q + 1) / m, 0, op);
    }
}

/* +1 from me to each owner (ready, read done). */
static void tell_owners(pld_ctx *c, pld_dtensor signal, int m)
{
    for (int o = 0; o < m; o++)
        if (o != c->rank)
            pld__notify_checked(c, signal, o, c->rank, 0, 1, PLD_NOTIFY_ATOMIC_ADD);
}

/* An owner waits for every rank: owners' cells >= of_owner, the others'
 * >= of_other. */
static void owner_hears_all(pld_ctx *c, pld_dtensor signal, int m, int32_t of_owner,
                            int32_t of_other)
{
    for (int s = 0; s < c->nranks; s++)
        if (s != c->rank)
            pld__wait_checked(c, signal, s, 0, s < m ? of_owner : of_other, PLD_WAIT_GE);
}

static void rs_ag_owner_rounds(pld_ctx *c, const char *api, pld_dtensor f, pld_tensor mine, int m,
                               pld_dtensor signal, pld_reduce_op op)
{
    int me = c->rank, p = c->nranks, owner = me < m;
    int64_t n = f.shape[1];
    tell_owners(c, signal, m); /* ready */
    if (owner) {
        owner_hears_all(c, signal, m, 1, 1);
        reduce_segment(c, api, f, mine, n * me / m, n * (me + 1) / m, op);
        for (int d = 0; d < p; d++) /* final */
            if (d != me)
                pld__notify_checked(c, signal, d, me, 0, 1, PLD_NOTIFY_ATOMIC_ADD);
    }
    if (!PLD__MUTANT(rsag_no_round2))
        for (int o = 0; o < m; o++)
            if (o != me)
                pld__wait_checked(c, signal, o, 0, owner ? 2 : 1, PLD_WAIT_GE);
    /* every rank has entered: each owner heard every ready before its final */
    pld__call_round(c);
    gather_segments(c, api, f, mine, m, op);
    tell_owners(c, signal, m); /* read done */
    if (owner && !PLD__MUTANT(rsag_no_readdone))
        owner_hears_all(c, signal, m, 3, 2);
    if (PLD__MUTANT(no_epilogue))
        return;
    for (int s = 0; s < p; s++) {
        int32_t got = s >= m ? (owner ? 2 : 0) : owner ? 3 : 1;
        if (s != me && got)
            pld__notify_checked(c, signal, me, s, 0, -got, PLD_NOTIFY_ATOMIC_ADD);
    }
}

void pld__allreduce_rs_ag(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                          pld_reduce_op op)
{
    int p = c->nranks, me = c->rank;
    pld_dtensor f = pld__dtensor_flat(data);
    int64_t n = f.shape[1];
    pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
    size_t bytes = (size_t)n * pld_dtype_size(f.dtype);
    int m = pld_tune_rs_ag_owners(p, bytes), through = pld_tune_rs_ag_owner_rounds(p, bytes);
    if (through) {
        rs_ag_owner_rounds(c, api, f, mine, through, signal, op);
        return;
    }

    /* round 1: every rank staged its data */
    int32_t round = 1;
    pld__credit_barrier(c, signal, 0, round);
    reduce_segment(c, api, f, mine, me < m ? n * me / m : 0, me < m ? n * (me + 1) / m : 0, op);
    /* round 2: every segment is final */
    if (!PLD__MUTANT(rsag_no_round2))
        pld__credit_barrier(c, signal, 0, ++round);
    gather_segments(c, api, f, mine, m, op);
    /* round 3: nobody reads my segment any more */
    if (!PLD__MUTANT(rsag_no_readdone))
        pld__credit_barrier(c, signal, 0, ++round);
    pld__credit_epilogue(c, signal, 0, round);
}
