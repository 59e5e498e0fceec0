/* SPDX-License-Identifier: Apache-2.0 */
/* Allgather by recursive doubling (PLD_AG_DOUBLING), in the dissemination
 * order, so any P works: ceil(log2 P) steps instead of P-1 puts per rank.
 *
 * Rank r holds rows r, r+1, ..., r+h-1 (mod P) of target; h = 1 after its
 * own row is staged. Step k (h = 2^k):
 *   put            rows r .. r+n-1 (n = min(h, P-h)) of my target into the
 *                  same rows of rank r-h's target (two runs where they wrap
 *                  past P), then Set the call's epoch into my cell of its
 *                  flag lines (data before flag)
 *   wait           my cell of rank r+h >= epoch: it put rows r+h ..
 *                  r+h+n-1 into mine; now I hold h+n rows
 * Rows land at their own index, so no rotation is needed at the end.
 *   round (done)   every rank finished forwarding: nobody reads any rank's
 *                  target for this call any more, and every rank heard from
 *                  every rank (the ordering guarantee), in the group's
 *                  synchronisation form
 *   epilogue       1 credit back per cell
 * Why the final round: a rank forwards rows of its own target at every
 * step after the first, and the steps alone do not tell a rank that its
 * left neighbours finished; without the round a rank could leave, enter
 * the next call and push into a target whose old rows a neighbour is still
 * forwarding. With it the call is shaped as the push form (writes, then
 * one round), so the next call may write any target as soon as it starts.
 * Flags: the one-round path's lines and epochs (ll.h). In one call a rank
 * writes a given rank's cell at most once (its step-k target r-2^k differs
 * for every k, as 2^k < P), so Set with rising epochs and Ge waits reuse
 * the lines as the binomial broadcast does (broadcast_binomial.c).
 * Cost card: bytes_to_peers = (P-1) rows, bytes_self = 1 row; 1 round;
 * notifies: the round's plus ceil(log2 P) flags; waits: the round's plus
 * ceil(log2 P). */
#include "coll/ll.h"

/* Puts rows [first, first+n) (mod P) of my target into the same rows of
 * peer's target: one run, or two where the range wraps past the last row. */
static void put_wrapped(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor mine, int peer,
                        int first, int n)
{
    int p = c->nranks, head = p - first < n ? p - first : n;
    pld__coll_put_rows(c, api, t2, peer, first, mine, first, head);
    if (head < n)
        pld__coll_put_rows(c, api, t2, peer, 0, mine, 0, n - head);
}

void pld__allgather_doubling(pld_ctx *c, const char *api, pld_dtensor t2, const pld_tensor *l2,
                             pld_dtensor signal)
{
    int p = c->nranks, me = c->rank;
    pld_tensor mine = pld__tensor_2d(pld_local(c, t2), p, t2.shape[1]);
    /* my own row, staged where the steps forward it from (in place: it is
     * there already) */
    if (l2)
        pld__coll_put_rows(c, api, t2, me, me, *l2, 0, 1);
    pld_dtensor lines;
    int64_t row;
    if (pld__ll_count_line(c, &lines, &row)) { /* two ranks or more */
        int32_t e = c->ll_epoch;
        for (int h = 1; h < p; h *= 2) {
            int n = h < p - h ? h : p - h, to = (me - h + p) % p, from = (me + h) % p;
            int early = PLD__MUTANT(doubling_flag_first);
            if (early)
                pld__notify_checked(c, lines, to, row + me, 0, e, PLD_NOTIFY_SET);
            put_wrapped(c, api, t2, mine, to, me, n);
            if (!early)
                pld__notify_checked(c, lines, to, row + me, 0, e, PLD_NOTIFY_SET);
            if (!(h == 1 && PLD__MUTANT(doubling_no_wait)))
                pld__wait_checked(c, lines, row + from, 0, e, PLD_WAIT_GE);
        }
    }
    if (PLD__MUTANT(doubling_no_done))
        return;
    /* done: nobody forwards rows of any target for this call any more */
    pld__credit_barrier(c, signal, 0, 1);
    pld__credit_epilogue(c, signal, 0, 1);
}
