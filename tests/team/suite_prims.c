/* SPDX-License-Identifier: Apache-2.0 */
/* The primitives with group-rank peers: a hand-written exchange in which
 * every member reads and writes every member (itself included), checked
 * against the world ranks the host reported for the group. */
#include <stdio.h>
#include <string.h>

#include "suite.h"

int ts_pwin_alloc(pld_world *w, const char *prefix, int p, ts_pwin *pw, char *why, size_t n)
{
    char nm[64];
#define NM(s) (snprintf(nm, sizeof nm, "%s_%s", prefix, s), nm)
    TS_TRY(ts_window(w, NM("mine"), PLD_FP32, 1, TS_S, &pw->mine, why, n));
    TS_TRY(ts_window(w, NM("box"), PLD_FP32, p, TS_S, &pw->box, why, n));
    TS_TRY(ts_window(w, NM("box2"), PLD_FP32, p, TS_S, &pw->box2, why, n));
    TS_TRY(ts_window(w, NM("acc"), PLD_FP32, 1, TS_S, &pw->acc, why, n));
    TS_TRY(ts_window(w, NM("flag"), PLD_INT32, p, 3, &pw->flag, why, n));
#undef NM
    return 0;
}

/* Tells every member "phase q done" (cell [me, q]) and waits until every
 * member said so (cells [j, q]). */
static void phase(const ts_k *k, const ts_pwin *pw, int q)
{
    for (int j = 0; j < k->t; j++)
        pld_notify(k->v, pw->flag, j, PLD_IDX(k->me, q), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int j = 0; j < k->t; j++)
        pld_wait(k->v, pw->flag, PLD_IDX(j, q), 1, PLD_WAIT_GE);
}

static void fill(float *d, int wr, int call, int row)
{
    for (int i = 0; i < TS_S; i++)
        d[i] = ts_val(wr, call, row, i);
}

void ts_prims(const ts_k *k, const ts_pwin *pw, int call)
{
    pld_ctx *c = k->c, *v = k->v;
    int t = k->t, me = k->me;
    float want[TS_S], got[TS_S];
    fill(pld_local(v, pw->mine).data, k->wr, call, 0);
    phase(k, pw, 0); /* every member's row is staged */

    /* reads: group rank j's row carries world rank w[j] */
    pld_tile *tile = pld_tile_create(v, PLD_FP32, 1, TS_S);
    /* tiles belong to the rank: one made through another context serves */
    pld_tile *sum = pld_tile_create(c, PLD_FP32, 1, TS_S);
    float *tv = pld_tile_data(tile), total[TS_S] = {0};
    for (int j = 0; j < t; j++) {
        fill(want, k->w[j], call, 0);
        pld_remote_load(v, tile, pw->mine, j, PLD_IDX(0, 0));
        TS_KCMP(c, "pld_remote_load of a group peer's row", tv, want, TS_S);
        pld_get(v, pld_tensor_make(got, PLD_FP32, 2, PLD_IDX(1, TS_S)), j, pw->mine, NULL);
        TS_KCMP(c, "pld_get of a group peer's row", got, want, TS_S);
        pld_remote_reduce(v, sum, pw->mine, j, PLD_IDX(0, 0), PLD_SUM);
        for (int i = 0; i < TS_S; i++)
            total[i] += want[i];
    }
    TS_KCMP(c, "pld_remote_reduce over the group", pld_tile_data(sum), total, TS_S);

    /* writes: row `me` of every member's box and box2, and an atomic add of
     * wr + 1 into every member's acc */
    float src[TS_S], one[TS_S];
    for (int j = 0; j < t; j++) {
        fill(tv, k->wr, call + 1, j);
        pld_remote_store(v, tile, pw->box, j, PLD_IDX(me, 0), PLD_ATOMIC_NONE);
        fill(src, k->wr, call + 2, j);
        pld_xfer x = {
            .dst_offsets = PLD_IDX(me, 0), .src_offsets = PLD_IDX(0, 0), .shape = PLD_IDX(1, TS_S)};
        pld_put(v, pw->box2, j, pld_tensor_make(src, PLD_FP32, 2, PLD_IDX(1, TS_S)), &x);
        for (int i = 0; i < TS_S; i++)
            tv[i] = (float)(k->wr + 1);
        pld_remote_store(v, tile, pw->acc, j, PLD_IDX(0, 0), PLD_ATOMIC_ADD);
    }
    phase(k, pw, 1); /* every write into this rank has landed */
    const float *box = pld_local(v, pw->box).data, *box2 = pld_local(v, pw->box2).data;
    float adds = 0;
    for (int j = 0; j < t; j++) {
        fill(want, k->w[j], call + 1, me);
        TS_KCMP(c, "pld_remote_store from a group peer", box + j * TS_S, want, TS_S);
        fill(want, k->w[j], call + 2, me);
        TS_KCMP(c, "pld_put from a group peer", box2 + j * TS_S, want, TS_S);
        adds += (float)(k->w[j] + 1);
        int32_t cell = pld_signal_read(v, pw->flag, PLD_IDX(j, 1));
        TS_K(c, cell == 1, "flag [%d,1] is %d after phase 1, expected 1", j, cell);
    }
    for (int i = 0; i < TS_S; i++)
        one[i] = adds;
    TS_KCMP(c, "atomic adds from the group", pld_local(v, pw->acc).data, one, TS_S);

    /* Set + Eq, then this rank clears its own slice for the next launch:
     * every write into it has landed (phases 1 and 2) */
    for (int j = 0; j < t; j++)
        pld_notify(v, pw->flag, j, PLD_IDX(me, 2), 7, PLD_NOTIFY_SET);
    for (int j = 0; j < t; j++)
        pld_wait(v, pw->flag, PLD_IDX(j, 2), 7, PLD_WAIT_EQ);
    memset(pld_local(v, pw->acc).data, 0, sizeof(float) * TS_S);
    for (int j = 0; j < t; j++)
        for (int q = 0; q < 3; q++)
            pld_notify(v, pw->flag, me, PLD_IDX(j, q), 0, PLD_NOTIFY_SET);
    pld_tile_free(c, tile);
    pld_tile_free(v, sum);
}
