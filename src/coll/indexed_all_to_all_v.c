/* SPDX-License-Identifier: Apache-2.0 */
/* Indexed all-to-all-v: MoE token dispatch on the a5sim URMA model.
 *
 * Source s writes input_s[index_s[d][j]] into target_d[s*C + j] for
 * j < send_counts_s[d]; rows at and beyond the count are not written.
 * recv_counts[s] = send_counts_s[me], read from s's send_counts window.
 *
 * Cores: core b of B owns destinations b, b+B, ... (when B > P only the
 * first P cores send, so each remote peer has one queue writer); all B cores
 * split the self rows evenly (never a row in two) and all join the barrier.
 *
 * Protocol per core b, on lane b of the signal [P, S >= B] (dual round):
 *   round 1 (ready):      every rank staged input, index, send_counts, and
 *                         consumed the previous call's target;
 *   remote sends:         per peer, SQEs of <= 12 rows (4 WQEBBs, NOP padded),
 *                         doorbell per <= 64 SQEs, one CQE waited at the end;
 *   self rows:            through a ring of 8 stages of 8 KiB;
 *   round 2 (complete):   every row has landed; epilogue takes 2 credits.
 * Contiguous source rows move as one copy (merged ranges).
 * Cost card: bytes_to_peers = rows sent to other ranks * H * elt. */
#include <stdio.h>

#include "coll/indexed.h"

typedef struct dispatch {
    const char *api;
    pld_tensor input;
    pld_dtensor target, signal, send_counts;
    pld_tensor recv_counts;
    pld__indexed ix;
    int64_t rows_me; /* self rows of this call, split over the cores */
} dispatch;

typedef struct range_arg {
    pld_ctx *c;
    dispatch *a;
    int peer;
    int64_t slot0; /* first target row of this source's block */
} range_arg;

static void move_range(int64_t slot, int64_t row, int64_t rows, void *p)
{
    range_arg *r = p;
    pld__coll_put_rows(r->c, r->a->api, r->a->target, r->peer, r->slot0 + slot, r->a->input, row,
                       rows);
}

static void send_remote(pld_ctx *c, dispatch *a, int d)
{
    int64_t rows = a->ix.counts[d];
    const int32_t *idx = a->ix.index + (int64_t)d * a->ix.cap;
    if (rows == 0)
        return;
    uint64_t t0 = pld__slice_begin(c);
    range_arg r = {.c = c, .a = a, .peer = d, .slot0 = (int64_t)c->rank * a->ix.cap};
    int64_t ranges = pld__indexed_ranges(idx, rows, move_range, &r);
    pld__urma_count(c, d, rows, ranges, t0);
}

/* Self rows [lo, hi) of this call through the 8 x 8 KiB stage ring. */
static void copy_self(pld_ctx *c, dispatch *a, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return;
    /* the ring is this core's 64 KiB of UB, held while it moves rows */
    pld_tile *ring =
        pld__tile_reserve(c, a->api, PLD_UINT8, PLD__SELF_STAGES, PLD__SELF_STAGE_BYTES);
    const int32_t *idx = a->ix.index + (int64_t)c->rank * a->ix.cap;
    range_arg r = {.c = c, .a = a, .peer = c->rank, .slot0 = (int64_t)c->rank * a->ix.cap};
    int64_t ranges = 0;
    for (int64_t j = lo; j < hi;) { /* merge within this core's share only */
        int64_t k = j + 1;
        while (k < hi && idx[k] == idx[k - 1] + 1)
            k++;
        move_range(j, idx[j], k - j, &r);
        ranges++;
        j = k;
    }
    uint64_t bytes = (uint64_t)(hi - lo) * a->ix.row_bytes;
    uint64_t stages = (bytes + PLD__SELF_STAGE_BYTES - 1) / PLD__SELF_STAGE_BYTES;
    c->ag->counters.merged_ranges += (uint64_t)ranges;
    c->ag->counters.self_stages += stages;
    pld__note(c, "self rows [%lld,%lld): %lld ranges through %d x %d B stages (%llu stage fills)",
              (long long)lo, (long long)hi, (long long)ranges, PLD__SELF_STAGES,
              PLD__SELF_STAGE_BYTES, (unsigned long long)stages);
    pld_tile_free(c, ring);
}

static void dispatch_core(pld_ctx *c, int b, void *p)
{
    dispatch *a = p;
    int nb = pld_ncores(c), me = c->rank;
    /* round 1: ready */
    pld__credit_barrier(c, a->signal, b, 1);
    if (b == 0) { /* recv_counts[s] = send_counts_s[me]; written by this rank only */
        for (int s = 0; s < c->nranks; s++) {
            int64_t d_off[2] = {s, 0}, s_off[2] = {me, 0}, one[2] = {1, 1};
            pld_xfer x = {.dst_offsets = d_off, .src_offsets = s_off, .shape = one};
            pld_get(c, a->recv_counts, s, a->send_counts, &x);
        }
    }
    /* remote sends: core b owns destinations b, b+B, ... */
    for (int d = b; d < c->nranks; d += nb)
        if (d != me)
            send_remote(c, a, d);
    /* self rows, split evenly over all cores without splitting a row */
    copy_self(c, a, a->rows_me * b / nb, a->rows_me * (b + 1) / nb);
    /* round 2: complete */
    pld__credit_barrier(c, a->signal, b, 2);
    pld__credit_epilogue(c, a->signal, b, 2);
}

void pld_indexed_all_to_all_v(pld_ctx *c, pld_tensor input, pld_dtensor target, pld_dtensor signal,
                              pld_dtensor send_counts, pld_tensor recv_counts, pld_tensor index,
                              int core_num)
{
    PLD__CTX_CHECK(c, "pld_indexed_all_to_all_v");
    static const char api[] = "pld_indexed_all_to_all_v";
    char dims[96], dims2[96], msg[256];
    int p = c->nranks;
    dispatch a = {
        .api = api, .input = input, .target = target, .signal = signal, .send_counts = send_counts};
    pld__check_live(c);
    pld_status st =
        pld__profile_allows(&c->w->profile, PLD__OP_INDEXED_ALL_TO_ALL_V, msg, sizeof msg);
    if (st != PLD_OK)
        pld__kraise(c, st, api, "%s", msg);
    pld__check_tensor(c, api, "input", input);
    pld__check_dtensor(c, api, "target", target);
    pld__check_tensor(c, api, "recv_counts", recv_counts);
    if (input.dtype != PLD_FP32 && input.dtype != PLD_INT8)
        pld__kraise(c, PLD_ERR_UNSUPPORTED, api, "input is %s; the payload must be fp32 or int8",
                    pld_dtype_name(input.dtype));
    if (input.ndim != 2)
        pld__kraise(c, PLD_ERR_ARG, api, "input must be [Nmax, H] (got %s)",
                    pld__fmt_dims(dims, sizeof dims, input.shape, input.ndim));
    pld__indexed_check(c, api, signal, send_counts, index, input.shape[0], input.shape[1],
                       pld_dtype_size(input.dtype), core_num, &a.ix);
    if (target.dtype != input.dtype || target.ndim != 2 ||
        target.shape[0] != (int64_t)p * a.ix.cap || target.shape[1] != input.shape[1])
        pld__kraise(c, PLD_ERR_ARG, api, "target '%s' is %s %s; it must be %s [P*C=%lld, H=%lld]",
                    target.buf->name, pld_dtype_name(target.dtype),
                    pld__fmt_dims(dims, sizeof dims, target.shape, target.ndim),
                    pld_dtype_name(input.dtype), (long long)(p * a.ix.cap),
                    (long long)input.shape[1]);
    if (recv_counts.dtype != PLD_INT32 || pld_tensor_numel(recv_counts) != p ||
        recv_counts.ndim > 2 || (recv_counts.ndim == 2 && recv_counts.shape[1] != 1))
        pld__kraise(c, PLD_ERR_ARG, api, "recv_counts must be INT32 [%s=%d, 1] (got %s %s)",
                    pld__pname(c), p, pld_dtype_name(recv_counts.dtype),
                    pld__fmt_dims(dims2, sizeof dims2, recv_counts.shape, recv_counts.ndim));
    if (target.buf == signal.buf || target.buf == send_counts.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "target '%s' must be separate from signal '%s' and send_counts '%s'",
                    target.buf->name, signal.buf->name, send_counts.buf->name);
    if (pld__tensor_in_window(c, input, target.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api, "input lies inside target window '%s'",
                    target.buf->name);
    if (pld__tensor_in_window(c, recv_counts, signal.buf) ||
        pld__tensor_in_window(c, recv_counts, send_counts.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "recv_counts lies inside the signal or send_counts window; the three must "
                    "be distinct buffers");
    /* the whole send to each peer must fit its SQ: checked before submission */
    for (int d = 0; d < p; d++) {
        int64_t need = pld__urma_wqebbs_needed(a.ix.counts[d]);
        if (d != c->rank && need > c->w->profile.sq_depth)
            pld__kraise(c, PLD_ERR_DATA, api,
                        "the send of %d rows to peer %d needs %lld WQEBBs (ceil(%d/12)*4) but "
                        "its SQ holds %lld",
                        (int)a.ix.counts[d], d, (long long)need, (int)a.ix.counts[d],
                        (long long)c->w->profile.sq_depth);
        if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS) && d != c->rank) {
            char what[96];
            snprintf(what, sizeof what, "the send of %d rows to peer %d", (int)a.ix.counts[d], d);
            pld__hazard_limit_check(c, api, PLD__HZ_SQ, (uint64_t)need, what);
        }
    }
    a.recv_counts = pld__tensor_2d(recv_counts, p, 1);
    a.rows_me = a.ix.counts[c->rank];
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_INDEXED_DISPATCH, api, signal);
    fp.wire.core_num = core_num;
    pld__fp_window(&fp, target);
    pld__fp_window(&fp, send_counts);
    pld__fp_tensor(&fp, input, 1); /* [Nmax, H]: each rank's own token count */
    pld__coll_enter(c, api, signal, &fp, "%s, %s, core_num=%d", target.buf->name, signal.buf->name,
                    core_num);
    if (core_num > 1)
        pld__note(c, "cores x%d (core 0 listed)", core_num);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS)) /* fits here, not on every profile? */
        pld__hazard_limit_check(c, api, PLD__HZ_CORES, (uint64_t)core_num, "core_num");
    pld__run_cores(c, api, core_num, dispatch_core, &a);
    pld__coll_leave(c, signal);
}
