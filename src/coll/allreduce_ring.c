/* SPDX-License-Identifier: Apache-2.0 */
/* Allreduce, ring form: reduce-scatter then allgather around the ring.
 *
 * The data is split into P segments. Rank r pulls from its left neighbour L:
 *   reduce-scatter step s (0..P-2): seg (r-1-s) of L, reduced into my seg;
 *   allgather step t (0..P-2):      seg (r-t) of L, copied into my seg.
 * After the reduce-scatter, rank r holds the full result of seg (r+1).
 *
 * Signal [2(P-1), P]: cell [g, q] counts "rank q finished step g-1" (g = 0 is
 * the entry: q staged its data). Each rank sends its progress to both
 * neighbours: L needs it before overwriting a segment I still read (my
 * allgather write of seg r-t must wait until R finished reduce-scatter step
 * t), R needs it to know my segment is ready. A final "done" credit on row 0
 * tells L that I no longer read its data. Waits use Ge; the epilogue
 * subtracts exactly what arrived, so the signal returns to all-zero.
 * Cost card: bytes_from_peers = 2(P-1)/P * N; 2(P-1) progress rounds + done. */
#include "coll/coll_util.h"

typedef struct ring {
    pld_ctx *c;
    pld_dtensor sig;
    int me, left, right;
} ring;

/* The signal was checked on entry (pld__allreduce_ring_check_signal): its
 * cells [row, rank] go to the pre-checked notify and wait. */
static void progress(ring *r, int row)
{
    pld__notify_checked(r->c, r->sig, r->right, row, r->me, 1, PLD_NOTIFY_ATOMIC_ADD);
    if (r->left != r->right)
        pld__notify_checked(r->c, r->sig, r->left, row, r->me, 1, PLD_NOTIFY_ATOMIC_ADD);
}

static void wait_for(ring *r, int row, int from, int32_t g)
{
    pld__wait_checked(r->c, r->sig, row, from, g, PLD_WAIT_GE);
}

void pld__allreduce_ring_check_signal(pld_ctx *c, const char *api, pld_dtensor signal)
{
    char dims[96], scope[96];
    int p = c->nranks;
    pld__check_dtensor(c, api, "signal", signal);
    if (signal.dtype != PLD_INT32)
        pld__kraise(c, PLD_ERR_ARG, api, "signal window '%s' is %s; signals must be INT32",
                    signal.buf->name, pld_dtype_name(signal.dtype));
    if (p > 1 && (signal.ndim != 2 || signal.shape[0] < 2 * (p - 1) || signal.shape[1] < p))
        pld__kraise(c, PLD_ERR_ARG, api,
                    "ring signal '%s' is %s; it needs [2(%c-1), %c] = [%d,%d] (one row per step, "
                    "one cell per rank of %s)",
                    signal.buf->name, pld__fmt_dims(dims, sizeof dims, signal.shape, signal.ndim),
                    c->team ? 'T' : 'P', c->team ? 'T' : 'P', 2 * (p - 1), p,
                    pld__ctx_scope(c, scope, sizeof scope));
}

void pld__allreduce_ring(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                         pld_reduce_op op)
{
    int p = c->nranks;
    if (p == 1)
        return; /* one rank: the data already is the result */
    ring r = {.c = c,
              .sig = signal,
              .me = c->rank,
              .left = (c->rank + p - 1) % p,
              .right = (c->rank + 1) % p};
    pld_dtensor f = pld__dtensor_flat(data);
    int64_t n = f.shape[1];
    pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
    int steps = 2 * (p - 1);

    progress(&r, 0); /* entry: my data is staged */
    for (int g = 0; g < steps; g++) {
        wait_for(&r, g, r.left, 1); /* L finished step g-1: its segment is ready */
        if (g == 0)                 /* L has published its fingerprint of this call */
            pld__call_round(c);
        int k;
        if (g < p - 1) {
            k = ((r.me - 1 - g) % p + p) % p;
        } else {
            int t = g - (p - 1);
            wait_for(&r, t + 1, r.right, 1); /* R no longer reads my seg k in reduce-scatter */
            k = ((r.me - t) % p + p) % p;
        }
        int64_t e0 = n * k / p, e1 = n * (k + 1) / p;
        pld__coll_pull_range(c, api, f, mine, r.left, e0, e1, g < p - 1, op);
        if (g + 1 < steps) {
            if (g == 0 && PLD__MUTANT(ring_drop_progress)) /* R never hears of step 0 */
                pld__notify_checked(c, signal, r.left, g + 1, r.me, 1, PLD_NOTIFY_ATOMIC_ADD);
            else
                progress(&r, g + 1);
        }
    }
    /* done: L may change its data; wait until R is done with mine */
    pld__notify_checked(c, signal, r.left, 0, r.me, 1, PLD_NOTIFY_ATOMIC_ADD);
    wait_for(&r, 0, r.right, 2);

    /* epilogue: take back every credit that arrived in this call */
    for (int g = 0; g < steps; g++) {
        pld__notify_checked(c, signal, r.me, g, r.left, g == 0 && r.left == r.right ? -2 : -1,
                            PLD_NOTIFY_ATOMIC_ADD);
        if (r.left != r.right)
            pld__notify_checked(c, signal, r.me, g, r.right, g == 0 ? -2 : -1,
                                PLD_NOTIFY_ATOMIC_ADD);
    }
}
