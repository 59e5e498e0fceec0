/* SPDX-License-Identifier: Apache-2.0 */
/* MoE combine: every packed row goes back to the rank and row it came
 * from (the reverse of pld_moe_dispatch).
 *
 * On rank s, for every expert rank d and local expert e:
 *   out_s[(d*E+e)*M + j] = expert_out_d[place_d(s, e) + j],  j < cnt_s[d][e]
 * with place_d the dispatch's packed order, computed from d's recv_counts
 * (recv_d[s'][e] = cnt_s'[d][e], which the dispatch left there).
 *
 * Protocol on signal [P,1] (pull form, two full credit rounds):
 *   round 1: every rank entered the call, so every expert's rows are
 *            final and every recv_counts is the dispatch's;
 *   pulls:   per expert rank d: its recv_counts [P,E] (checked against my
 *            send_counts, PLD_ERR_DATA on a mismatch), then my rows;
 *   round 2: nobody reads expert_out or recv_counts any more; epilogue -2.
 * Only this rank's out is written.
 *
 * Cost card per rank (cnt = this rank's send_counts, row = H x elt):
 *   from peers sum over d != me, e of cnt[d][e] x row + (P-1) x P x E x 4
 *   self       sum over e of cnt[me][e] x row + P x E x 4
 *   rounds 2 */
#include "coll/moe.h"

/* d's recv_counts rc [P, E] must hold, in row me, exactly my send_counts
 * for d; every entry must be a count, or the places are wrong. */
static void check_peer_counts(pld_ctx *c, const char *api, const pld__moe *m, int d,
                              const int32_t *rc)
{
    int me = c->rank, ne = m->e;
    for (int s = 0; s < m->p; s++)
        for (int e = 0; e < ne; e++) {
            int32_t v = rc[(int64_t)s * ne + e];
            if (v < 0 || v > m->m)
                pld__kraise(c, PLD_ERR_DATA, api,
                            "rank %d's recv_counts[%d][%d] = %d is outside [0, M=%lld]: it is no "
                            "longer what pld_moe_dispatch left there",
                            d, s, e, (int)v, (long long)m->m);
        }
    for (int e = 0; e < ne; e++) {
        int32_t mine = m->send[(int64_t)d * ne + e], theirs = rc[(int64_t)me * ne + e];
        if (mine != theirs)
            pld__kraise(c, PLD_ERR_DATA, api,
                        "send_counts[%d][%d] = %d, but rank %d's recv_counts[%d][%d] = %d: pass "
                        "the counts of the dispatch",
                        d, e, (int)mine, d, me, e, (int)theirs);
    }
}

/* My rows from expert rank d (its count matrix in rc) into out. */
static void pull_rows(pld_ctx *c, const char *api, const pld__moe *m, pld_tensor out, int d,
                      const int32_t *rc, int64_t *sums)
{
    int me = c->rank, ne = m->e;
    int64_t *tot = sums, *before = sums + ne, *place = sums + 2 * ne;
    for (int e = 0; e < ne; e++)
        tot[e] = before[e] = 0;
    for (int s = 0; s < m->p; s++)
        for (int e = 0; e < ne; e++) {
            tot[e] += rc[(int64_t)s * ne + e];
            if (s < me)
                before[e] += rc[(int64_t)s * ne + e];
        }
    pld__moe_places(tot, before, ne, place);
    for (int e = 0; e < ne; e++) {
        int64_t n = m->send[(int64_t)d * ne + e];
        if (n > 0)
            pld__coll_get_rows(c, api, out, ((int64_t)d * ne + e) * m->m, m->data2, d, place[e], n);
    }
}

void pld_moe_combine(pld_ctx *c, const pld_moe_layout *l, pld_dtensor expert_out, pld_dtensor out,
                     pld_dtensor signal, pld_tensor send_counts, pld_dtensor recv_counts)
{
    PLD__CTX_CHECK(c, "pld_moe_combine");
    static const char api[] = "pld_moe_combine";
    char dims[96];
    pld__moe m;
    pld__check_live(c);
    pld__check_dtensor(c, api, "out", out);
    pld__moe_check(c, api, l, expert_out, "expert_out", signal, send_counts, recv_counts, &m);
    if (out.dtype != expert_out.dtype || out.ndim != 2 || out.shape[0] != expert_out.shape[0] ||
        out.shape[1] != m.h)
        pld__kraise(c, PLD_ERR_ARG, api, "out '%s' is %s %s; it must be %s %s like expert_out",
                    out.buf->name, pld_dtype_name(out.dtype),
                    pld__fmt_dims(dims, sizeof dims, out.shape, out.ndim),
                    pld_dtype_name(expert_out.dtype),
                    pld__fmt_dims((char[96]){0}, 96, expert_out.shape, expert_out.ndim));
    if (out.buf == expert_out.buf || out.buf == signal.buf || out.buf == recv_counts.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "out '%s' must be separate from expert_out '%s', signal '%s' and recv_counts "
                    "'%s'",
                    out.buf->name, expert_out.buf->name, signal.buf->name, recv_counts.buf->name);
    if (pld__tensor_in_window(c, send_counts, out.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api, "send_counts lies inside the out window '%s'",
                    out.buf->name);
    int ne = m.e;
    pld_tensor mine = pld_local(c, out); /* checked [P*E*M, H] */

    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_MOE_COMBINE, api, signal);
    fp.wire.m = m.m;
    pld__fp_window(&fp, expert_out);
    pld__fp_window(&fp, out);
    pld__fp_window(&fp, recv_counts);
    pld__coll_enter(c, api, signal, &fp, "%s, %s, E=%d, M=%lld", expert_out.buf->name,
                    signal.buf->name, ne, (long long)m.m);
    pld__credit_barrier(c, signal, 0, 1);
    pld__note(c, "counts and data: per expert rank, its recv_counts [%d,%d], then my rows", m.p,
              ne);
    pld_tile *rct = pld__moe_counts_tile(c, api, &m);
    pld_tile *sums = pld__tile_alloc(c, api, PLD_INT64, 3, ne);
    int32_t *rc = pld_tile_data(rct);
    for (int i = 0; i < m.p; i++) {
        int d = (c->rank + i) % m.p;
        pld__moe_pull_counts(c, api, &m, d, rc);
        check_peer_counts(c, api, &m, d, rc);
        pull_rows(c, api, &m, mine, d, rc, pld_tile_data(sums));
    }
    pld__tile_release(c, sums);
    pld__tile_release(c, rct);
    /* the planted bug returns while peers may still read expert_out */
    int rounds = PLD__MUTANT(moe_combine_no_done) ? 1 : 2;
    if (rounds == 2)
        pld__credit_barrier(c, signal, 0, 2);
    pld__credit_epilogue(c, signal, 0, rounds);
    pld__coll_leave(c, signal);
}
