/* SPDX-License-Identifier: Apache-2.0 */
/* Allreduce by recursive halving then recursive doubling (Rabenseifner's
 * algorithm, PLD_RABENSEIFNER): 2 log2 P' steps with one partner each
 * instead of a transfer from every peer.
 *
 * Q is the largest power of two <= P and X = P - Q. The even ranks below
 * 2X ("extra" ranks) fold into their right neighbour and take no steps;
 * the others are numbered v = 0 .. Q-1 (rank 2v+1 for v < X, v+X beyond).
 * The data, one row of n elements, is cut into Q segments
 * [n*s/Q, n*(s+1)/Q); a block of virtual ranks [b, b+k) stands for the
 * elements of its segments.
 *   fold       rank 2i+1 < 2X: wait for 2i's flag, reduce 2i's whole data
 *              into mine
 *   halving    half = Q/2, Q/4, .. 1, partner u = v xor half: Set the
 *              call's first epoch into my cell of u's flag lines (my block
 *              is ready: staged, folded, or reduced by the step before),
 *              wait for u's cell, reduce u's copy of the half of our block
 *              that holds me into mine; afterwards segment v of mine is the
 *              reduction over every rank
 *   doubling   half = 1, 2, .. Q/2: Set the second epoch into my cell of
 *              u's lines (my block of `half` segments is final), wait for
 *              u's, copy u's block from u into mine
 *   unfold     rank 2i+1 < 2X Sets the second epoch into my cell of 2i's
 *              lines; 2i waits for it and copies the whole result
 *   round      (done) nobody reads any rank's data for this call any more,
 *              in the group's synchronisation form
 *   epilogue   1 credit back per cell
 * Every rank reads only its partners' data and writes only its own, and a
 * rank reads a region of a partner's data only between the partner's flag
 * saying it is ready and the partner's next write to it, which waits for a
 * flag this rank sends after the read (the doubling step of the same
 * partner, or the unfold): no scratch space is needed. Each segment is
 * reduced once per step by one rank and then copied: every rank ends with
 * the same bits. The halving steps alone connect every rank to every rank
 * (a butterfly, with the fold in front and the unfold behind), which is
 * the ordering guarantee; the round is for reuse: a rank's last partners
 * may still be reading its data when it leaves the doubling.
 * Flags: the one-round path's lines; the call takes two epochs (ll.h), the
 * halving and fold flags carry the first, in its lines, the doubling and
 * unfold flags the second, in the others. In each a rank writes a given
 * rank's cell at most once per call (its partners differ at every step),
 * so Set with rising epochs and Ge waits reuse the lines as in
 * allgather_doubling.c.
 * Cost card: bytes_from_peers = about 2 (Q-1)/Q x N on a stepping rank
 * (+ N for a folding one), N on an extra rank; 1 round; notifies: the
 * round's plus 2 log2 Q flags (+1 for a fold or unfold); waits likewise. */
#include "coll/ll.h"

/* The rank of virtual rank v when x ranks fold. */
static int real_rank(int v, int x)
{
    return v < x ? 2 * v + 1 : v + x;
}

/* The first element of segment s of q. */
static int64_t seg_edge(int64_t n, int s, int q)
{
    return n * s / q;
}

/* The halving and doubling steps of virtual rank v (q > 1). */
static void steps(pld_ctx *c, const char *api, pld_dtensor f, pld_tensor mine, pld_reduce_op op,
                  int v, int q, int x, pld_dtensor lines, int64_t row1, int32_t e1, int64_t row2,
                  int32_t e2)
{
    int64_t n = f.shape[1];
    int me = c->rank, lo = 0; /* my block: virtual ranks [lo, lo + 2 half) */
    for (int half = q / 2; half >= 1; half /= 2) {
        int peer = real_rank(v ^ half, x), keep = (v & half) ? lo + half : lo;
        pld__notify_checked(c, lines, peer, row1 + me, 0, e1, PLD_NOTIFY_SET);
        if (!(half == q / 2 && PLD__MUTANT(rab_no_wait)))
            pld__wait_checked(c, lines, row1 + peer, 0, e1, PLD_WAIT_GE);
        pld__coll_pull_range(c, api, f, mine, peer, seg_edge(n, keep, q),
                             seg_edge(n, keep + half, q), 1, op);
        lo = keep;
    }
    for (int half = 1; half < q; half *= 2) {
        int u = v ^ half, peer = real_rank(u, x), theirs = u & ~(half - 1);
        pld__notify_checked(c, lines, peer, row2 + me, 0, e2, PLD_NOTIFY_SET);
        if (!(half == 1 && PLD__MUTANT(rab_gather_no_wait)))
            pld__wait_checked(c, lines, row2 + peer, 0, e2, PLD_WAIT_GE);
        pld__coll_pull_range(c, api, f, mine, peer, seg_edge(n, theirs, q),
                             seg_edge(n, theirs + half, q), 0, op);
    }
}

void pld__allreduce_rabenseifner(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                                 pld_reduce_op op)
{
    int p = c->nranks, me = c->rank, q = pld__floor_pow2(p), x = p - q;
    pld_dtensor f = pld__dtensor_flat(data), lines;
    int64_t n = f.shape[1], row1, row2;
    pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
    if (pld__ll_count_line(c, &lines, &row1)) { /* two ranks or more */
        int32_t e1 = c->ll_epoch;
        pld__ll_count_line(c, &lines, &row2);
        int32_t e2 = c->ll_epoch;
        if (me < 2 * x && me % 2 == 0) { /* extra: fold into me+1, take its result */
            pld__notify_checked(c, lines, me + 1, row1 + me, 0, e1, PLD_NOTIFY_SET);
            pld__wait_checked(c, lines, row2 + me + 1, 0, e2, PLD_WAIT_GE);
            pld__coll_pull_range(c, api, f, mine, me + 1, 0, n, 0, op);
        } else {
            int v = me < 2 * x ? me / 2 : me - x;
            if (me < 2 * x) { /* fold the extra rank me-1 in */
                if (!PLD__MUTANT(rab_no_fold_wait))
                    pld__wait_checked(c, lines, row1 + me - 1, 0, e1, PLD_WAIT_GE);
                pld__coll_pull_range(c, api, f, mine, me - 1, 0, n, 1, op);
            }
            steps(c, api, f, mine, op, v, q, x, lines, row1, e1, row2, e2);
            if (me < 2 * x) /* the result is final: the extra rank may copy it */
                pld__notify_checked(c, lines, me - 1, row2 + me, 0, e2, PLD_NOTIFY_SET);
        }
    }
    if (PLD__MUTANT(rab_no_done))
        return;
    /* done: nobody reads any rank's data for this call any more */
    pld__credit_barrier(c, signal, 0, 1);
    pld__credit_epilogue(c, signal, 0, 1);
}
