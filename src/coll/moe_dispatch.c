/* SPDX-License-Identifier: Apache-2.0 */
/* MoE dispatch: per-expert counts, counted rows only, packed per expert.
 *
 * Rank r sends block (d, e) -- rows (d*E+e)*M .. +send_counts_r[d][e] of
 * its input -- to rank d's expert e. On rank d the target holds expert 0's
 * rows from every source (source 0 first), then expert 1's, ...; so the
 * block lands at
 *   place_d(r, e) = sum over e' < e, all s of cnt_s[d][e']
 *                 + sum over s < r of cnt_s[d][e]
 * which every sender computes from the full count matrix.
 *
 * Protocol on signal [P,1] (two full credit rounds, like broadcast):
 *   counts round: copy send_counts into my own recv_counts window;
 *                 barrier (g = 1); pull every peer's [P,E] from its
 *                 recv_counts. No rank writes another rank's count cells:
 *                 the counts travel by pull.
 *   data round:   put every counted block to its place; barrier (g = 2):
 *                 every row has landed and no peer reads my recv_counts
 *                 any more, so it now takes what I received.
 *   epilogue:     -2 per peer.
 * A peer puts into my target only after it pulled my counts, which I
 * publish only after entering the call: back-to-back dispatches need no
 * barrier between them.
 *
 * Cost card per rank (cnt = this rank's send_counts, row = H x elt):
 *   to peers   sum over d != me, e of cnt[d][e] x row
 *   from peers (P-1) x P x E x 4            (the count matrices)
 *   self       sum over e of cnt[me][e] x row + 2 x P x E x 4
 *   rounds 2 */
#include "coll/indexed.h"
#include "coll/moe.h"

typedef struct counts_sum {
    int64_t *tot;    /* [P, E]: rows all sources send (d, e) */
    int64_t *before; /* [P, E]: rows the sources before me send (d, e) */
    int32_t *recv;   /* [P, E]: recv[s][e] = cnt_s[me][e] */
} counts_sum;

/* Adds source s's count matrix cs [P, E] into the sums. */
static void add_source(const pld__moe *m, int me, int s, const int32_t *cs, counts_sum *k)
{
    int64_t n = (int64_t)m->p * m->e;
    for (int64_t i = 0; i < n; i++) {
        k->tot[i] += cs[i];
        if (s < me)
            k->before[i] += cs[i];
    }
    for (int e = 0; e < m->e; e++)
        k->recv[(int64_t)s * m->e + e] = cs[(int64_t)me * m->e + e];
}

/* The counts round: after it, k holds the sums of every rank's matrix. */
static void counts_round(pld_ctx *c, const char *api, const pld__moe *m, pld_dtensor signal,
                         counts_sum *k)
{
    int me = c->rank, p = m->p;
    pld__note(c, "counts round: send_counts into my recv_counts, barrier, pull %d peers' [%d,%d]",
              p - 1, p, m->e);
    pld__coll_put_rows(c, api, m->recv2, me, 0, m->send2, 0, p);
    pld__credit_barrier(c, signal, 0, 1);
    pld_tile *peer = pld__moe_counts_tile(c, api, m);
    int32_t *cs = pld_tile_data(peer);
    add_source(m, me, me, m->send, k);
    for (int i = 1; i < p; i++) {
        int s = (me + i) % p;
        pld__moe_pull_counts(c, api, m, s, cs);
        add_source(m, me, s, cs, k);
    }
    pld__tile_release(c, peer);
}

/* The data round's sends: every counted block to its place, the right
 * neighbour first, this rank last. */
static void send_blocks(pld_ctx *c, const char *api, const pld__moe *m, pld_tensor input,
                        const counts_sum *k, int64_t *place)
{
    int me = c->rank, p = m->p, ne = m->e;
    int urma = c->w->profile.urma;
    pld__note(c, "data round: counted rows to their packed places, barrier");
    for (int i = 1; i <= p; i++) {
        int d = (me + i) % p;
        int64_t at = (int64_t)d * ne, rows = 0, blocks = 0;
        uint64_t t0 = pld__slice_begin(c);
        pld__moe_places(k->tot + at, k->before + at, ne, place);
        for (int e = 0; e < ne; e++) {
            int32_t n = m->send[at + e];
            if (n == 0)
                continue;
            pld__coll_put_rows(c, api, m->data2, d, place[e], input, (at + e) * m->m, n);
            rows += n;
            blocks++;
        }
        if (urma && d != me && rows > 0)
            pld__urma_count(c, d, rows, blocks, t0);
    }
}

void pld_moe_dispatch(pld_ctx *c, const pld_moe_layout *l, pld_tensor input, pld_dtensor target,
                      pld_dtensor signal, pld_tensor send_counts, pld_dtensor recv_counts,
                      pld_tensor expert_offsets)
{
    PLD__CTX_CHECK(c, "pld_moe_dispatch");
    static const char api[] = "pld_moe_dispatch";
    char dims[96];
    pld__moe m;
    pld__check_live(c);
    pld__check_tensor(c, api, "input", input);
    pld__check_tensor(c, api, "expert_offsets", expert_offsets);
    pld__moe_check(c, api, l, target, "target", signal, send_counts, recv_counts, &m);
    pld__moe_check_rows(c, api, &m, target.dtype, "input", input, target.shape[0], m.h);
    int ne = m.e;
    /* any contiguous shape of E+1 elements: [E+1], [1,E+1], [E+1,1] */
    if (expert_offsets.dtype != PLD_INT32 || pld_tensor_numel(expert_offsets) != ne + 1 ||
        expert_offsets.ndim > 2 ||
        (expert_offsets.ndim == 2 && expert_offsets.shape[0] != 1 && expert_offsets.shape[1] != 1))
        pld__kraise(c, PLD_ERR_ARG, api, "expert_offsets must be INT32 [E+1=%d] (got %s %s)",
                    ne + 1, pld_dtype_name(expert_offsets.dtype),
                    pld__fmt_dims(dims, sizeof dims, expert_offsets.shape, expert_offsets.ndim));
    if (pld__tensor_in_window(c, input, target.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api, "input lies inside target window '%s'",
                    target.buf->name);
    if (pld__tensor_in_window(c, expert_offsets, target.buf) ||
        pld__tensor_in_window(c, expert_offsets, recv_counts.buf) ||
        pld__tensor_in_window(c, expert_offsets, signal.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "expert_offsets lies inside the target, recv_counts or signal window");

    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_MOE_DISPATCH, api, signal);
    fp.wire.m = m.m;
    pld__fp_window(&fp, target);
    pld__fp_window(&fp, recv_counts);
    pld__fp_tensor(&fp, input, 0);
    pld__coll_enter(c, api, signal, &fp, "%s, %s, E=%d, M=%lld", target.buf->name, signal.buf->name,
                    ne, (long long)m.m);
    pld_tile *tot = pld__tile_alloc(c, api, PLD_INT64, m.p, ne);
    pld_tile *before = pld__tile_alloc(c, api, PLD_INT64, m.p, ne);
    pld_tile *recv = pld__moe_counts_tile(c, api, &m);
    pld_tile *place = pld__tile_alloc(c, api, PLD_INT64, 1, ne);
    /* the sums start at zero: a new tile is zeroed */
    counts_sum k = {
        .tot = pld_tile_data(tot), .before = pld_tile_data(before), .recv = pld_tile_data(recv)};
    counts_round(c, api, &m, signal, &k);
    /* my experts' offsets: expert-major over every source */
    int32_t *off = expert_offsets.data;
    off[0] = 0;
    for (int e = 0; e < ne; e++)
        off[e + 1] = off[e] + (int32_t)k.tot[(int64_t)c->rank * ne + e];
    send_blocks(c, api, &m, input, &k, pld_tile_data(place));
    /* the planted bug overwrites the staged counts before the barrier */
    int early = PLD__MUTANT(moe_recv_early);
    if (!early)
        pld__credit_barrier(c, signal, 0, 2);
    /* nobody reads my staged counts any more: keep what I received */
    int64_t shape[2] = {m.p, ne};
    pld__coll_put_rows(c, api, m.recv2, c->rank, 0, pld_tensor_make(k.recv, PLD_INT32, 2, shape), 0,
                       m.p);
    if (early)
        pld__credit_barrier(c, signal, 0, 2);
    pld__tile_release(c, place);
    pld__tile_release(c, recv);
    pld__tile_release(c, before);
    pld__tile_release(c, tot);
    pld__credit_epilogue(c, signal, 0, 2);
    pld__coll_leave(c, signal);
}
