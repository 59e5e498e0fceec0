/* SPDX-License-Identifier: Apache-2.0 */
/* Every builtin in a group against plain C: ts_builtin_run stages the
 * input from the member's world rank and the call number, runs the builtin
 * on the group's view and checks what it left against the group's member
 * list as the host reported it (so group rank j must be world rank w[j]). */
#include <stdio.h>
#include <string.h>

#include "suite.h"

#define WANT_MAX 1024 /* floats of the largest result checked at once */

_Static_assert(TS_MAXP *TS_M *TS_S <= WANT_MAX, "a2av result fits `want`");
_Static_assert(TS_MC <= WANT_MAX, "multi-core allreduce fits `want`");
_Static_assert(TS_N *TS_H <= WANT_MAX, "MoE rows fit `want`");

int ts_bwin_alloc(pld_world *w, const char *prefix, int p, int indexed, ts_bwin *b, char *why,
                  size_t n)
{
    char nm[64];
#define NM(s) (snprintf(nm, sizeof nm, "%s_%s", prefix, s), nm)
    memset(b, 0, sizeof *b);
    TS_TRY(ts_windows(w, NM("sig"), PLD_INT32, p, 1, 1, b->sig, why, n));
    for (int t = 1; t <= p; t++) {
        pld_status st = pld_window(b->sig[p].buf, PLD_INT32, 1, PLD_IDX(t), &b->sig1[t]);
        TS_HOST(st == PLD_OK, "1-D signal view for T=%d: %s", t, pld_world_error(w));
    }
    TS_TRY(ts_windows(w, NM("lanes"), PLD_INT32, p, 1, 4, b->lanes, why, n));
    /* the ring's [2(T-1), T] for every T, in one buffer sized for P */
    TS_TRY(ts_window(w, NM("ring"), PLD_INT32, p > 1 ? 2 * (p - 1) : 1, p, &b->ring[p], why, n));
    for (int t = 1; t < p; t++) {
        pld_status st = pld_window(b->ring[p].buf, PLD_INT32, 2,
                                   PLD_IDX(t > 1 ? 2 * (t - 1) : 1, t), &b->ring[t]);
        TS_HOST(st == PLD_OK, "ring view for T=%d: %s", t, pld_world_error(w));
    }
    TS_TRY(ts_window(w, NM("bcast"), PLD_FP32, 1, TS_S, &b->bcast, why, n));
    TS_TRY(ts_window(w, NM("ar"), PLD_FP32, 1, TS_S, &b->ar, why, n));
    TS_TRY(ts_window(w, NM("arr"), PLD_FP32, 1, TS_S, &b->arr, why, n));
    TS_TRY(ts_window(w, NM("arc"), PLD_FP32, 1, TS_MC, &b->arc, why, n));
    TS_TRY(ts_windows(w, NM("rs"), PLD_FP32, p, 1, TS_S, b->rs, why, n));
    for (int a = 0; a < 2; a++) {
        char s[16];
        snprintf(s, sizeof s, "gather%d", a);
        TS_TRY(ts_windows(w, NM(s), PLD_FP32, p, 1, TS_S, b->gather[a], why, n));
        snprintf(s, sizeof s, "inplace%d", a);
        TS_TRY(ts_windows(w, NM(s), PLD_FP32, p, 1, TS_S, b->inplace[a], why, n));
        snprintf(s, sizeof s, "a2a%d", a);
        TS_TRY(ts_windows(w, NM(s), PLD_FP32, p, 1, TS_S, b->a2a[a], why, n));
        snprintf(s, sizeof s, "a2av%d", a);
        TS_TRY(ts_windows(w, NM(s), PLD_FP32, p, TS_M, TS_S, b->a2av[a], why, n));
        snprintf(s, sizeof s, "recv%d", a);
        TS_TRY(ts_windows(w, NM(s), PLD_INT32, p, 1, 1, b->recv[a], why, n));
        if (indexed) {
            snprintf(s, sizeof s, "moe%d", a);
            TS_TRY(ts_windows(w, NM(s), PLD_FP32, p, TS_N, TS_H, b->itarget[a], why, n));
        }
    }
    if (indexed)
        TS_TRY(ts_windows(w, NM("counts"), PLD_INT32, p, 1, 1, b->icounts, why, n));
#undef NM
    return 0;
}

/* "pld_allgather (call 7, group rank 1 of 3, world rank 5)" */
static const char *what(char *buf, size_t n, const char *api, const ts_k *k, int call)
{
    snprintf(buf, n, "%s (call %d, group rank %d of %d, world rank %d)", api, call, k->me, k->t,
             k->wr);
    return buf;
}

static pld_tensor plain(void *data, pld_dtype dt, int64_t rows, int64_t cols)
{
    return pld_tensor_make(data, dt, 2, PLD_IDX(rows, cols));
}

static void run_bcast(const ts_k *k, const ts_bwin *b, int call)
{
    char w[128];
    int root = call % k->t;
    float *d = pld_local(k->v, b->bcast).data, want[TS_S];
    for (int i = 0; i < TS_S; i++) {
        d[i] = ts_val(k->wr, call, 0, i);
        want[i] = ts_val(k->w[root], call, 0, i);
    }
    pld_broadcast(k->v, b->bcast, b->sig[k->t], root);
    TS_KCMP(k->c, what(w, sizeof w, "pld_broadcast", k, call), d, want, TS_S);
}

/* Every row j of a [T,S] result holds ts_val(w[j], call, 0, .). */
static void check_rows(const ts_k *k, const char *api, int call, pld_dtensor t)
{
    char w[128];
    float want[WANT_MAX];
    for (int j = 0; j < k->t; j++)
        for (int i = 0; i < TS_S; i++)
            want[j * TS_S + i] = ts_val(k->w[j], call, 0, i);
    TS_KCMP(k->c, what(w, sizeof w, api, k, call), pld_local(k->v, t).data, want,
            (int64_t)k->t * TS_S);
}

static void run_gather(const ts_k *k, const ts_bwin *b, int call, int alt)
{
    float local[TS_S];
    for (int i = 0; i < TS_S; i++)
        local[i] = ts_val(k->wr, call, 0, i);
    pld_dtensor t = b->gather[alt][k->t];
    pld_allgather(k->v, plain(local, PLD_FP32, 1, TS_S), t, b->sig[k->t]);
    check_rows(k, "pld_allgather", call, t);
}

static void run_inplace(const ts_k *k, const ts_bwin *b, int call, int alt)
{
    pld_dtensor t = b->inplace[alt][k->t];
    float *d = pld_local(k->v, t).data;
    for (int i = 0; i < TS_S; i++)
        d[k->me * TS_S + i] = ts_val(k->wr, call, 0, i);
    pld_allgather_inplace(k->v, t, b->sig[k->t]);
    check_rows(k, "pld_allgather_inplace", call, t);
}

static void run_rs(const ts_k *k, const ts_bwin *b, int call)
{
    char w[128];
    pld_dtensor t = b->rs[k->t];
    float *d = pld_local(k->v, t).data, want[TS_S];
    for (int r = 0; r < k->t; r++)
        for (int i = 0; i < TS_S; i++)
            d[r * TS_S + i] = ts_val(k->wr, call, r, i);
    for (int i = 0; i < TS_S; i++) {
        want[i] = 0;
        for (int j = 0; j < k->t; j++)
            want[i] += ts_val(k->w[j], call, k->me, i);
    }
    pld_reduce_scatter(k->v, t, b->sig[k->t], PLD_SUM);
    TS_KCMP(k->c, what(w, sizeof w, "pld_reduce_scatter", k, call), d + k->me * TS_S, want, TS_S);
}

/* Mesh (Sum or Max by the call's parity), ring (Sum) or multi-core mesh
 * (Sum on 2 or 3 cores). */
static void run_allreduce(const ts_k *k, const ts_bwin *b, ts_builtin which, int call)
{
    char w[128];
    pld_dtensor data = which == TS_AR_MESH ? b->ar : which == TS_AR_RING ? b->arr : b->arc;
    int64_t len = which == TS_AR_CORES ? TS_MC : TS_S;
    pld_reduce_op op = which == TS_AR_MESH && call % 2 ? PLD_MAX : PLD_SUM;
    float *d = pld_local(k->v, data).data, want[WANT_MAX];
    for (int64_t i = 0; i < len; i++) {
        d[i] = ts_val(k->wr, call, 0, (int)i);
        want[i] = 0;
        for (int j = 0; j < k->t; j++) {
            float x = ts_val(k->w[j], call, 0, (int)i);
            want[i] = op == PLD_MAX ? (x > want[i] ? x : want[i]) : want[i] + x;
        }
    }
    const char *api = "pld_allreduce mesh";
    if (which == TS_AR_MESH) {
        pld_allreduce(k->v, data, b->sig[k->t], op, PLD_MESH);
    } else if (which == TS_AR_RING) {
        api = "pld_allreduce ring";
        pld_allreduce(k->v, data, b->ring[k->t], op, PLD_RING);
    } else {
        api = "pld_allreduce_cores";
        pld_allreduce_cores(k->v, data, b->lanes[k->t], op, PLD_MESH, 2 + call % 2);
    }
    TS_KCMP(k->c, what(w, sizeof w, api, k, call), d, want, len);
}

/* Row d of the input goes to group rank d: it carries w[d], so a row
 * delivered to the wrong member shows. */
static void run_a2a(const ts_k *k, const ts_bwin *b, int call, int alt)
{
    char w[128];
    float in[TS_MAXP * TS_S], want[TS_MAXP * TS_S];
    for (int d = 0; d < k->t; d++)
        for (int i = 0; i < TS_S; i++) {
            in[d * TS_S + i] = ts_val(k->wr, call, k->w[d], i);
            want[d * TS_S + i] = ts_val(k->w[d], call, k->wr, i);
        }
    pld_dtensor t = b->a2a[alt][k->t];
    pld_all_to_all(k->v, plain(in, PLD_FP32, k->t, TS_S), t, b->sig[k->t]);
    TS_KCMP(k->c, what(w, sizeof w, "pld_all_to_all", k, call), pld_local(k->v, t).data, want,
            (int64_t)k->t * TS_S);
}

/* From world rank src to world rank dst: 0 .. M+1 rows (M+1 is clamped). */
static int a2av_count(int src, int dst, int call)
{
    return (src + 2 * dst + call) % (TS_M + 2);
}

static void run_a2av(const ts_k *k, const ts_bwin *b, int call, int alt)
{
    char w[128];
    float in[TS_MAXP * TS_M * TS_S];
    int32_t counts[TS_MAXP];
    for (int d = 0; d < k->t; d++) {
        counts[d] = a2av_count(k->wr, k->w[d], call);
        for (int r = 0; r < TS_M; r++)
            for (int i = 0; i < TS_S; i++)
                in[(d * TS_M + r) * TS_S + i] = ts_val(k->wr, call, 8 * k->w[d] + r, i);
    }
    pld_dtensor t = b->a2av[alt][k->t], recv = b->recv[alt][k->t];
    pld_all_to_all_v(k->v, plain(in, PLD_FP32, (int64_t)k->t * TS_M, TS_S), t, b->sig[k->t],
                     pld_tensor_make(counts, PLD_INT32, 1, PLD_IDX(k->t)), recv);
    const int32_t *got = pld_local(k->v, recv).data;
    const float *rows = pld_local(k->v, t).data;
    what(w, sizeof w, "pld_all_to_all_v", k, call);
    for (int s = 0; s < k->t; s++) {
        int c = a2av_count(k->w[s], k->wr, call);
        c = c > TS_M ? TS_M : c;
        TS_K(k->c, got[s] == c, "%s: recv_counts[%d] = %d, expected %d", w, s, got[s], c);
        for (int r = 0; r < c; r++)
            for (int i = 0; i < TS_S; i++) {
                float x = rows[(s * TS_M + r) * TS_S + i];
                float y = ts_val(k->w[s], call, 8 * k->wr + r, i);
                TS_K(k->c, x == y, "%s: row %d from group rank %d, element %d: %g, expected %g", w,
                     r, s, i, x, y);
            }
    }
}

/* ---- MoE dispatch, expert, combine ---------------------------------------- */

static int moe_count(int src, int dst, int call)
{
    return (src + dst + call) % (TS_N + 1);
}

static int moe_index(int src, int dst, int j)
{
    return (j * 5 + src + 2 * dst) % TS_N;
}

static float moe_weight(int src, int dst, int j)
{
    return 0.25f * (float)(1 + (j + src + dst) % 4);
}

static void run_indexed(const ts_k *k, const ts_bwin *b, int call, int alt)
{
    char w[128];
    int t = k->t, cores = 1 + call % 2;
    float in[TS_N * TS_H], out[TS_N * TS_H], want[TS_N * TS_H], gate[TS_MAXP * TS_N];
    int32_t index[TS_MAXP * TS_N], recv[TS_MAXP];
    int32_t *counts = pld_local(k->v, b->icounts[t]).data;
    for (int i = 0; i < TS_N * TS_H; i++)
        in[i] = ts_val(k->wr, call, i / TS_H, i % TS_H);
    for (int d = 0; d < t; d++) {
        counts[d] = moe_count(k->wr, k->w[d], call);
        for (int j = 0; j < TS_N; j++) {
            index[d * TS_N + j] = j < counts[d] ? moe_index(k->wr, k->w[d], j) : -1;
            gate[d * TS_N + j] = moe_weight(k->wr, k->w[d], j);
        }
    }
    pld_dtensor tg = b->itarget[alt][t];
    pld_tensor idx = plain(index, PLD_INT32, t, TS_N);
    pld_indexed_all_to_all_v(k->v, plain(in, PLD_FP32, TS_N, TS_H), tg, b->lanes[t], b->icounts[t],
                             plain(recv, PLD_INT32, t, 1), idx, cores);
    what(w, sizeof w, "pld_indexed_all_to_all_v", k, call);
    float *rows = pld_local(k->v, tg).data;
    for (int s = 0; s < t; s++) {
        int c = moe_count(k->w[s], k->wr, call);
        TS_K(k->c, recv[s] == c, "%s: recv_counts[%d] = %d, expected %d", w, s, recv[s], c);
        for (int j = 0; j < c; j++) {
            float *row = rows + (s * TS_N + j) * TS_H;
            for (int h = 0; h < TS_H; h++) {
                float y = ts_val(k->w[s], call, moe_index(k->w[s], k->wr, j), h);
                TS_K(k->c, row[h] == y, "%s: slot %d from group rank %d, col %d: %g, expected %g",
                     w, j, s, h, row[h], y);
                row[h] *= (float)(k->wr + 1); /* this member's expert */
            }
        }
    }
    pld_indexed_combine(k->v, tg, plain(out, PLD_FP32, TS_N, TS_H), b->lanes[t], b->icounts[t], idx,
                        plain(gate, PLD_FP32, t, TS_N), cores);
    for (int i = 0; i < TS_N * TS_H; i++)
        want[i] = 0;
    for (int d = 0; d < t; d++)
        for (int j = 0; j < counts[d]; j++)
            for (int h = 0; h < TS_H; h++) {
                int tok = index[d * TS_N + j];
                want[tok * TS_H + h] +=
                    gate[d * TS_N + j] * (float)(k->w[d] + 1) * in[tok * TS_H + h];
            }
    TS_KCMP(k->c, what(w, sizeof w, "pld_indexed_combine", k, call), out, want, TS_N * TS_H);
}

void ts_builtin_run(const ts_k *k, const ts_bwin *b, ts_builtin which, int call, int alt)
{
    switch (which) {
    case TS_BARRIER: /* [T,1], then the same signal as [T] */
        pld_barrier(k->v, b->sig[k->t]);
        pld_barrier(k->v, b->sig1[k->t]);
        break;
    case TS_BCAST:
        run_bcast(k, b, call);
        break;
    case TS_GATHER:
        run_gather(k, b, call, alt);
        break;
    case TS_INPLACE:
        run_inplace(k, b, call, alt);
        break;
    case TS_RS:
        run_rs(k, b, call);
        break;
    case TS_AR_MESH:
    case TS_AR_RING:
    case TS_AR_CORES:
        run_allreduce(k, b, which, call);
        break;
    case TS_A2A:
        run_a2a(k, b, call, alt);
        break;
    case TS_A2AV:
        run_a2av(k, b, call, alt);
        break;
    case TS_INDEXED:
        run_indexed(k, b, call, alt);
        break;
    }
}
