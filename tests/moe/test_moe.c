/* SPDX-License-Identifier: Apache-2.0 */
/* pld_moe_dispatch / pld_moe_combine: every precondition violation with its
 * message, disagreeing ranks, counts that no longer match at the combine,
 * the listing's two rounds, the URMA counters on a5sim, and zero reports
 * from the race and signal checkers. (The data paths against a plain-C
 * reference on every transport: moe_exchange.c.) */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <string.h>

#include "test_util.h"

#define P 3
#define E 2
#define M 4
#define H 5
#define ROWS (P * E * M)

enum bad {
    B_NONE,
    B_COUNT_BIG,
    B_COUNT_NEG,
    B_NULL_LAYOUT,
    B_ZERO_E,
    B_TARGET_SHAPE,
    B_INPUT_DTYPE,
    B_SEND_SHAPE,
    B_RECV_SHAPE,
    B_OFFSETS,
    B_SIGNAL,
    B_ALIAS_RECV,
    B_INPUT_IN_TARGET,
    B_AGREE_M,
    B_COMBINE_COUNTS,
    B_COMBINE_CLOBBERED,
    B_COMBINE_ALIAS,
    B_COMBINE_OUT_DTYPE,
};

typedef struct fx {
    pld_dtensor target, eout, out, recv, sig, target_small;
    float *input[P];
    int32_t *send[P], *off[P];
    enum bad bad;
    int bad_rank, combine;
} fx;

static pld_world *setup(fx **out, const char *platform, unsigned check)
{
    pld_config cfg = {.platform = platform, .devices = "0-2", .check = check};
    pld_world *w = tu_world_cfg(&cfg);
    fx *f = tu_host_alloc(w, sizeof *f);
    f->target = tu_window(w, "target", PLD_FP32, 2, PLD_IDX(ROWS, H));
    f->eout = tu_window(w, "expert_out", PLD_FP32, 2, PLD_IDX(ROWS, H));
    f->out = tu_window(w, "out", PLD_FP32, 2, PLD_IDX(ROWS, H));
    f->recv = tu_window(w, "recv_counts", PLD_INT32, 2, PLD_IDX(P, E));
    f->sig = tu_signal(w, "signal", 1);
    cr_assert_eq(
        pld_window(f->target.buf, PLD_FP32, 2, PLD_IDX(P * E * (M - 1), H), &f->target_small),
        PLD_OK);
    for (int r = 0; r < P; r++) {
        f->input[r] = tu_host_alloc(w, sizeof(float) * ROWS * H);
        f->send[r] = tu_host_alloc(w, sizeof(int32_t) * P * E);
        f->off[r] = tu_host_alloc(w, sizeof(int32_t) * (E + 1));
        for (int i = 0; i < P * E; i++)
            f->send[r][i] = (r + i) % (M + 1);
        for (int i = 0; i < ROWS * H; i++)
            f->input[r][i] = (float)(r * 1000 + i);
    }
    f->bad_rank = 1;
    *out = f;
    return w;
}

static void k_moe(pld_ctx *c, void *arg)
{
    fx *f = arg;
    int me = pld_rank(c);
    int mine = me == f->bad_rank;
    enum bad b = mine ? f->bad : B_NONE;
    pld_moe_layout l = {.experts_per_rank = E, .max_rows = M};
    pld_moe_layout *lp = &l;
    pld_tensor input = pld_tensor_make(f->input[me], PLD_FP32, 2, PLD_IDX(ROWS, H));
    pld_tensor send = pld_tensor_make(f->send[me], PLD_INT32, 2, PLD_IDX(P, E));
    pld_tensor off = pld_tensor_make(f->off[me], PLD_INT32, 1, PLD_IDX(E + 1));
    pld_dtensor target = f->target, recv = f->recv, sig = f->sig;
    switch (b) {
    case B_COUNT_BIG:
        f->send[me][0 * E + 1] = M + 1;
        break;
    case B_COUNT_NEG:
        f->send[me][2 * E + 0] = -3;
        break;
    case B_NULL_LAYOUT:
        lp = NULL;
        break;
    case B_ZERO_E:
        l.experts_per_rank = 0;
        break;
    case B_TARGET_SHAPE:
        target = f->target_small;
        break;
    case B_INPUT_DTYPE:
        input.dtype = PLD_INT32;
        break;
    case B_SEND_SHAPE:
        send = pld_tensor_make(f->send[me], PLD_INT32, 2, PLD_IDX(E, P));
        break;
    case B_RECV_SHAPE:
        cr_assert_eq(pld_window(f->recv.buf, PLD_INT32, 2, PLD_IDX(P * E, 1), &recv), PLD_OK);
        break;
    case B_OFFSETS:
        off = pld_tensor_make(f->off[me], PLD_INT32, 1, PLD_IDX(E));
        break;
    case B_SIGNAL:
        cr_assert_eq(pld_window(f->sig.buf, PLD_INT32, 2, PLD_IDX(P - 1, 1), &sig), PLD_OK);
        break;
    case B_ALIAS_RECV:
        cr_assert_eq(pld_window(f->target.buf, PLD_INT32, 2, PLD_IDX(P, E), &recv), PLD_OK);
        break;
    case B_INPUT_IN_TARGET:
        input = pld_local(c, f->target);
        break;
    case B_AGREE_M:
        l.max_rows = M - 1;
        target = f->target_small;
        input = pld_tensor_make(f->input[me], PLD_FP32, 2, PLD_IDX(P * E * (M - 1), H));
        for (int i = 0; i < P * E; i++)
            f->send[me][i] = f->send[me][i] > M - 1 ? M - 1 : f->send[me][i];
        break;
    default:
        break;
    }
    pld_moe_dispatch(c, lp, input, target, sig, send, recv, off);
    if (!f->combine)
        return;
    pld_dtensor eout = f->eout, out = f->out;
    /* the expert: returns every row as it came */
    memcpy(pld_local(c, eout).data, pld_local(c, f->target).data, sizeof(float) * ROWS * H);
    switch (b) {
    case B_COMBINE_COUNTS:
        f->send[me][0] = f->send[me][0] == M ? M - 1 : f->send[me][0] + 1;
        break;
    case B_COMBINE_CLOBBERED:
        ((int32_t *)pld_local(c, f->recv).data)[1 * E + 1] = 99;
        break;
    case B_COMBINE_ALIAS:
        out = eout;
        break;
    case B_COMBINE_OUT_DTYPE:
        cr_assert_eq(pld_window(f->out.buf, PLD_INT32, 2, PLD_IDX(ROWS, H), &out), PLD_OK);
        break;
    default:
        break;
    }
    pld_moe_combine(c, &l, eout, out, f->sig, send, f->recv);
}

static void expect_failure(enum bad b, int combine, pld_status want, const char *const *needles)
{
    fx *f;
    pld_world *w = setup(&f, NULL, 0);
    f->bad = b;
    f->combine = combine;
    TU_LAUNCH_FAILS(w, k_moe, f, want);
    for (const char *const *n = needles; *n; n++)
        TU_ASSERT_CONTAINS(pld_world_error(w), *n);
    pld_world_finalize(w);
}

#define FAILS(b, combine, st, ...)                                                                 \
    expect_failure((b), (combine), (st), (const char *const[]){__VA_ARGS__, NULL})

Test(moe, count_above_m_names_rank_destination_expert_value)
{
    FAILS(B_COUNT_BIG, 0, PLD_ERR_DATA, "rank 1 (device 1)", "pld_moe_dispatch",
          "send_counts[0][1] = 5 (rows for expert 1 of rank 0) is outside [0, M=4]");
}

Test(moe, negative_count)
{
    FAILS(B_COUNT_NEG, 0, PLD_ERR_DATA, "rank 1", "send_counts[2][0] = -3");
}

Test(moe, layout_null_and_zero_experts)
{
    FAILS(B_NULL_LAYOUT, 0, PLD_ERR_ARG, "pld_moe_dispatch", "layout is NULL");
    FAILS(B_ZERO_E, 0, PLD_ERR_ARG, "experts_per_rank = 0 and max_rows = 4 must both be >= 1");
}

Test(moe, shapes_and_dtypes)
{
    FAILS(B_TARGET_SHAPE, 0, PLD_ERR_ARG, "target 'target' is [18,5]; it must be [P*E*M=24, H]");
    FAILS(B_INPUT_DTYPE, 0, PLD_ERR_ARG, "input is int32 [24,5]; it must be fp32");
    FAILS(B_SEND_SHAPE, 0, PLD_ERR_ARG, "send_counts must be INT32 [P=3, E=2] (got int32 [2,3])");
    FAILS(B_RECV_SHAPE, 0, PLD_ERR_ARG, "recv_counts must be INT32 [P=3, E=2] (got int32 [6,1])");
    FAILS(B_OFFSETS, 0, PLD_ERR_ARG, "expert_offsets must be INT32 [E+1=3] (got int32 [2])");
    FAILS(B_SIGNAL, 0, PLD_ERR_ARG, "signal 'signal' is [2,1]");
}

Test(moe, aliases)
{
    FAILS(B_ALIAS_RECV, 0, PLD_ERR_ALIAS, "recv_counts 'target'", "must be distinct windows");
    FAILS(B_INPUT_IN_TARGET, 0, PLD_ERR_ALIAS, "input lies inside target window 'target'");
    FAILS(B_COMBINE_ALIAS, 1, PLD_ERR_ALIAS, "pld_moe_combine",
          "out 'expert_out' must be separate from expert_out 'expert_out'");
    FAILS(B_COMBINE_OUT_DTYPE, 1, PLD_ERR_ARG, "out 'out' is int32 [24,5]; it must be fp32");
}

Test(moe, ranks_that_disagree_on_m)
{
    FAILS(B_AGREE_M, 0, PLD_ERR_ARG, "pld_moe_dispatch", "differs from rank");
}

Test(moe, combine_counts_that_do_not_match_the_dispatch)
{
    FAILS(B_COMBINE_COUNTS, 1, PLD_ERR_DATA, "rank 1 (device 1)", "pld_moe_combine",
          "send_counts[0][0] = ", "but rank 0's recv_counts[1][0] = ",
          "pass the counts of the dispatch");
    FAILS(B_COMBINE_CLOBBERED, 1, PLD_ERR_DATA, "rank 1's recv_counts[1][1] = 99 is outside",
          "no longer what pld_moe_dispatch left there");
}

/* A layout every rank can compute: cnt_s[d][e] = (s + d*E + e) % (M+1). */
static int32_t cnt(int s, int d, int e)
{
    return (s + d * E + e) % (M + 1);
}

Test(moe, listing_shows_counts_round_and_data_round)
{
    fx *f;
    pld_world *w = setup(&f, NULL, 0);
    for (int r = 0; r < P; r++)
        for (int d = 0; d < P; d++)
            for (int e = 0; e < E; e++)
                f->send[r][d * E + e] = cnt(r, d, e);
    f->combine = 1;
    pld_ir_enable(w, 1);
    TU_LAUNCH_OK(w, k_moe, f);
    const char *ir = pld_ir_text(w);
    const char *call = strstr(ir, "pld_moe_dispatch(target, signal, E=2, M=4)");
    cr_assert(call, "no dispatch call in:\n%s", ir);
    const char *counts = strstr(call, "counts round"), *data = strstr(call, "data round");
    cr_assert(counts && data && counts < data, "rounds missing or out of order:\n%s", ir);
    cr_assert(strstr(ir, "pld_moe_combine(expert_out, signal, E=2, M=4)"), "%s", ir);
    pld_world_finalize(w);
}

Test(moe, urma_counters_follow_the_counted_rows_on_a5sim)
{
    fx *f;
    pld_world *w = setup(&f, "a5sim", 0);
    for (int r = 0; r < P; r++)
        for (int d = 0; d < P; d++)
            for (int e = 0; e < E; e++)
                f->send[r][d * E + e] = cnt(r, d, e);
    TU_LAUNCH_OK(w, k_moe, f);
    for (int r = 0; r < P; r++) {
        pld_counters k;
        cr_assert_eq(pld_rank_counters(w, r, &k), PLD_OK);
        uint64_t sqes = 0, wqebbs = 0, bytes = 0;
        for (int d = 0; d < P; d++) {
            if (d == r)
                continue;
            int64_t rows = 0;
            for (int e = 0; e < E; e++)
                rows += cnt(r, d, e);
            if (rows)
                sqes += (uint64_t)(rows + 11) / 12, wqebbs += 4 * ((uint64_t)(rows + 11) / 12);
            bytes += (uint64_t)rows * H * sizeof(float);
        }
        cr_expect_eq(k.urma_sqes, sqes, "rank %d: %llu SQEs, want %llu", r,
                     (unsigned long long)k.urma_sqes, (unsigned long long)sqes);
        cr_expect_eq(k.urma_wqebbs, wqebbs, "rank %d", r);
        cr_expect_eq(k.bytes_to_peers, bytes, "rank %d: %llu bytes to peers, counted rows %llu", r,
                     (unsigned long long)k.bytes_to_peers, (unsigned long long)bytes);
    }
    pld_world_finalize(w);
}

Test(moe, race_and_signal_checkers_stay_silent)
{
    fx *f;
    pld_world *w = setup(&f, NULL, PLD_CHECK_RACE | PLD_CHECK_SIGNALS);
    for (int r = 0; r < P; r++)
        for (int d = 0; d < P; d++)
            for (int e = 0; e < E; e++)
                f->send[r][d * E + e] = cnt(r, d, e);
    f->combine = 1;
    for (int i = 0; i < 3; i++)
        TU_LAUNCH_OK(w, k_moe, f);
    /* the rows came back to where they left */
    for (int r = 0; r < P; r++) {
        pld_tensor o = tu_view(w, f->out, r);
        for (int d = 0; d < P; d++)
            for (int e = 0; e < E; e++)
                for (int j = 0; j < cnt(r, d, e); j++)
                    for (int k = 0; k < H; k++) {
                        int row = (d * E + e) * M + j;
                        cr_assert_eq(((float *)o.data)[row * H + k], f->input[r][row * H + k],
                                     "rank %d out row %d col %d", r, row, k);
                    }
    }
    pld_world_finalize(w);
}
