/* SPDX-License-Identifier: Apache-2.0 */
/* Broadcast down a binomial tree (PLD_BCAST_BINOMIAL).
 *
 * Ranks are numbered relative to the root, v = (rank - root) mod P. Rank
 * v > 0 pulls the whole data from its parent v - 2^j (2^j the highest bit
 * of v); rank v is the parent of v + 2^k for every 2^k > v below P. So the
 * root serves ceil(log2 P) ranks instead of P-1, and the data reaches the
 * last rank after ceil(log2 P) pulls in a chain.
 *
 * Algorithm, on a [P,1] credit signal and the group's flag lines (ll.h):
 *   round 1 (ready)     the root staged, every rank entered this call (the
 *                       agreement check compares after it)
 *   epoch e             the call takes an epoch as a one-round call does
 *   tree                v > 0: wait my flag cell of the parent >= e, pull
 *                       the data from the parent's window; then, farthest
 *                       child first, Set e into my cell of each child's
 *                       lines (data before flag: the pull is done and
 *                       visible before the notify)
 *   round 2 (read done) nobody reads any rank's data for this call any
 *                       more: every rank may change it once the call returns
 *   epilogue            2 credits back per cell
 * Both rounds use the group's synchronisation form, so the ordering
 * guarantee holds as in the pull form. A flag cell (q, parent) is written
 * by the parent only, with Set and rising epochs: a parent in call e + 2
 * finished call e + 1, whose first round this rank entered only after it
 * had waited for the flag of call e, so a wait never sees a later call's
 * flag as its own, and never misses its own (waits use Ge).
 * Cost card: bytes_from_peers = N on every non-root (from its parent), 0
 * on the root; 2 rounds; notifies: the rounds' plus one per child. */
#include "coll/ll.h"

/* The highest power of two <= v (v >= 1). */
static int top_bit(int v)
{
    int b = 1;
    while (b <= v / 2)
        b <<= 1;
    return b;
}

void pld__broadcast_binomial(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                             int root)
{
    int p = c->nranks, me = c->rank, v = (me - root + p) % p;
    /* round 1: ready -- the root staged, every rank is in this call */
    pld__credit_barrier(c, signal, 0, 1);
    pld_dtensor lines;
    int64_t row;
    if (pld__ll_count_line(c, &lines, &row)) { /* two ranks or more */
        int32_t e = c->ll_epoch;
        if (v > 0) {
            int parent = (v - top_bit(v) + root) % p;
            if (!PLD__MUTANT(binomial_no_wait))
                pld__wait_checked(c, lines, row + parent, 0, e, PLD_WAIT_GE);
            int64_t n = pld__dtensor_numel(data);
            pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
            pld__coll_get_rows(c, api, mine, 0, pld__dtensor_flat(data), parent, 0, 1);
        }
        /* my children v + 2^k for 2^k > v, the farthest (largest subtree) first */
        int span = 1;
        while (span < p)
            span <<= 1;
        for (int b = span / 2; b > v; b >>= 1)
            if (v + b < p)
                pld__notify_checked(c, lines, (v + b + root) % p, row + me, 0, e, PLD_NOTIFY_SET);
    }
    /* round 2: read done -- nobody reads any rank's data any more */
    pld__credit_barrier(c, signal, 0, 2);
    pld__credit_epilogue(c, signal, 0, 2);
}
