/* SPDX-License-Identifier: Apache-2.0 */
/* pld_all_to_all_v: counts clamped to M, the whole block pushed,
 * recv_counts published (even when 0), negative counts are PLD_ERR_DATA,
 * aliased signal/recv_counts/target/send_counts/input are PLD_ERR_ALIAS,
 * shapes that disagree with P are PLD_ERR_ARG -- each naming the call. */
#include <limits.h>
#include <stdio.h>

#include "coll_util.h"

#define PMAX 4
#define M 4
#define S 5
#define UNTOUCHED (-777)

/* Value of row k, column j of the block src sends to dst. */
static int32_t cell(int src, int dst, int k, int j)
{
    return src * 1000000 + dst * 10000 + k * 100 + j + 1;
}

enum misuse {
    OK,
    NEG_COUNT,    /* send_counts[bad_dst] = -1 on bad_rank */
    SIG_IS_RC,    /* signal and recv_counts are one window */
    TGT_IS_SIG,   /* target and signal are one buffer */
    TGT_IS_RC,    /* target and recv_counts are one buffer */
    SC_IN_SIG,    /* send_counts lies in the signal window */
    SC_IN_RC,     /* send_counts lies in the recv_counts window */
    INPUT_IN_TGT, /* input lies in the target window */
    TGT_1D,       /* target [P*M*S] */
    TGT_ROWS,     /* target rows not a multiple of P */
    INPUT_ROWS,   /* input [P*M+1, S] */
    INPUT_COLS,   /* input [P*M, S+1] */
    INPUT_DTYPE,  /* input fp32, target int32 */
    SC_DTYPE,     /* send_counts INT64 */
    SC_LEN,       /* send_counts [P+1] */
    SC_2COLS,     /* send_counts [P,2] viewed over 2P cells */
    RC_1D,        /* recv_counts [P] */
    RC_COLS,      /* recv_counts [P,2] */
    RC_DTYPE,     /* recv_counts fp32 */
    SIG_ROWS,     /* signal [P+1,1] */
    SIG_DTYPE,    /* signal fp32 */
};

typedef struct av {
    pld_dtensor tgt, sig, rc;
    pld_dtensor big;    /* one INT32 buffer for the alias cases ... */
    pld_dtensor big_p1; /* ... and a [P,1] view of it */
    pld_dtensor tgt_f;  /* the target buffer seen as [P*M+1, S] / 1-D etc. */
    pld_dtensor rc_bad; /* recv_counts seen with a wrong shape/dtype */
    pld_dtensor sig_bad;
    int32_t counts[PMAX][PMAX]; /* counts[src][dst] */
    int misuse, bad_rank;
    int prefill; /* fill target with UNTOUCHED and recv_counts with -7 first */
} av;

static void k_av(pld_ctx *c, void *arg)
{
    av *a = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    int32_t in[PMAX * M * (S + 1)];
    int64_t cnt64[PMAX + 1];
    int32_t counts[2 * PMAX + 1];
    for (int d = 0; d < p; d++)
        for (int k = 0; k < M; k++)
            for (int j = 0; j < S; j++)
                in[(d * M + k) * S + j] = cell(me, d, k, j);
    for (int d = 0; d < 2 * PMAX + 1; d++)
        counts[d] = d < p ? a->counts[me][d] : 0;
    for (int d = 0; d <= PMAX; d++)
        cnt64[d] = d < p ? a->counts[me][d] : 0;
    if (a->prefill) {
        int32_t *t = pld_local(c, a->tgt).data, *rc = pld_local(c, a->rc).data;
        for (int i = 0; i < p * M * S; i++)
            t[i] = UNTOUCHED;
        for (int s = 0; s < p; s++)
            rc[s] = -7;
        pld_barrier(c, a->sig);
    }
    pld_tensor input = pld_tensor_make(in, PLD_INT32, 2, PLD_IDX(p * M, S));
    pld_tensor sc = pld_tensor_make(counts, PLD_INT32, 1, PLD_IDX(p));
    pld_dtensor tgt = a->tgt, sig = a->sig, rc = a->rc;
    switch (a->misuse) {
    case OK:
        break;
    case NEG_COUNT:
        if (me == a->bad_rank)
            counts[p - 1] = -1;
        break;
    case SIG_IS_RC:
        rc = sig;
        break;
    case TGT_IS_SIG:
        tgt = a->big;
        sig = a->big_p1;
        break;
    case TGT_IS_RC:
        tgt = a->big;
        rc = a->big_p1;
        break;
    case SC_IN_SIG:
        sc = pld_tensor_make(pld_local(c, sig).data, PLD_INT32, 1, PLD_IDX(p));
        break;
    case SC_IN_RC:
        sc = pld_tensor_make(pld_local(c, rc).data, PLD_INT32, 1, PLD_IDX(p));
        break;
    case INPUT_IN_TGT:
        input = pld_local(c, tgt);
        break;
    case TGT_1D:
    case TGT_ROWS:
        tgt = a->tgt_f;
        break;
    case INPUT_ROWS:
        input = pld_tensor_make(in, PLD_INT32, 2, PLD_IDX(p * M + 1, S));
        break;
    case INPUT_COLS:
        input = pld_tensor_make(in, PLD_INT32, 2, PLD_IDX(p * M, S + 1));
        break;
    case INPUT_DTYPE:
        input = pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(p * M, S));
        break;
    case SC_DTYPE:
        sc = pld_tensor_make(cnt64, PLD_INT64, 1, PLD_IDX(p));
        break;
    case SC_LEN:
        sc = pld_tensor_make(counts, PLD_INT32, 1, PLD_IDX(p + 1));
        break;
    case SC_2COLS:
        sc = pld_tensor_make(counts, PLD_INT32, 2, PLD_IDX(p, 2));
        break;
    case RC_1D:
    case RC_COLS:
    case RC_DTYPE:
        rc = a->rc_bad;
        break;
    case SIG_ROWS:
    case SIG_DTYPE:
        sig = a->sig_bad;
        break;
    }
    pld_all_to_all_v(c, input, tgt, sig, sc, rc);
    if (a->misuse != OK)
        pld_fail(c, "pld_all_to_all_v accepted misuse %d", a->misuse);
}

static av *av_setup(pld_world *w)
{
    int p = pld_world_size(w);
    av *a = cu_alloc(w, sizeof *a);
    a->tgt = tu_window(w, "tgt", PLD_INT32, 2, PLD_IDX(p * M, S));
    a->sig = tu_signal(w, "sig", 1);
    a->rc = tu_window(w, "recv_counts", PLD_INT32, 2, PLD_IDX(p, 1));
    return a;
}

/* Host check of rank r: recv_counts and the rows below each count. */
static void expect_result(pld_world *w, av *a, int r, int check_beyond)
{
    int p = pld_world_size(w);
    const int32_t *t = tu_view(w, a->tgt, r).data, *rc = tu_view(w, a->rc, r).data;
    for (int s = 0; s < p; s++) {
        int32_t want = a->counts[s][r] > M ? M : a->counts[s][r];
        cr_expect_eq(rc[s], want, "rank %d recv_counts[%d] = %d, expected min(%d, M=%d) = %d", r, s,
                     rc[s], a->counts[s][r], M, want);
        for (int k = 0; k < M; k++) {
            if (k >= want && !check_beyond)
                continue;
            for (int j = 0; j < S; j++) {
                int32_t got = t[(s * M + k) * S + j];
                /* the cost card: the sender pushes its whole M-row block, so rows
                 * past the count hold the sender's padding rows */
                int32_t exp = cell(s, r, k, j);
                cr_expect_eq(got, exp,
                             "rank %d target row %d (block of rank %d, row %d, count %d) col %d "
                             "= %d, expected %d%s",
                             r, s * M + k, s, k, want, j, got, exp,
                             k < want ? "" : " (beyond the count: the sender's padding row)");
                if (got != exp)
                    return;
            }
        }
    }
}

/* Counts covering 0, 1, M-1, M, M+1 and INT32_MAX (clamped to M). */
static void set_counts(av *a, int p)
{
    static const int32_t pool[] = {0, 1, M - 1, M, M + 1, INT_MAX, 2};
    for (int s = 0; s < p; s++)
        for (int d = 0; d < p; d++)
            a->counts[s][d] = pool[(s * 2 + d * 3) % 7];
}

static void counts_clamped(int p)
{
    pld_world *w = cu_world(p);
    av *a = av_setup(w);
    set_counts(a, p);
    a->prefill = 1;
    TU_LAUNCH_OK(w, k_av, a);
    for (int r = 0; r < p; r++)
        expect_result(w, a, r, 0);
    cu_assert_signal_zero(w, a->sig);
    /* a second call with other counts on the same windows */
    for (int s = 0; s < p; s++)
        for (int d = 0; d < p; d++)
            a->counts[s][d] = (s + d) % 2 ? INT_MAX : 0;
    TU_LAUNCH_OK(w, k_av, a);
    for (int r = 0; r < p; r++)
        expect_result(w, a, r, 0);
    cu_assert_signal_zero(w, a->sig);
    cu_finalize(w);
}

Test(a2av, counts_clamped_and_published_p1, .timeout = 30)
{
    counts_clamped(1);
}
Test(a2av, counts_clamped_and_published_p3, .timeout = 30)
{
    counts_clamped(3);
}
Test(a2av, counts_clamped_and_published_p4, .timeout = 30)
{
    counts_clamped(4);
}

/* Rows s*M+count .. s*M+M-1: the full block is pushed (cost card
 * (P-1)*M*S*elt), so they hold the sender's padding rows, not old data. */
static void whole_block(int p)
{
    pld_world *w = cu_world(p);
    av *a = av_setup(w);
    set_counts(a, p);
    a->prefill = 1;
    TU_LAUNCH_OK(w, k_av, a);
    for (int r = 0; r < p; r++)
        expect_result(w, a, r, 1);
    cu_finalize(w);
}

Test(a2av, rows_beyond_count_hold_senders_block_p2, .timeout = 30)
{
    whole_block(2);
}
Test(a2av, rows_beyond_count_hold_senders_block_p3, .timeout = 30)
{
    whole_block(3);
}

/* ---- errors --------------------------------------------------------------- */

static void expect_misuse(int p, int misuse, pld_status want, const char *needle)
{
    pld_world *w = cu_world(p);
    av *a = av_setup(w);
    set_counts(a, p);
    a->misuse = misuse;
    a->bad_rank = p - 1;
    a->big = tu_window(w, "big", PLD_INT32, 2, PLD_IDX(p * M, S));
    cr_assert_eq(pld_window(a->big.buf, PLD_INT32, 2, PLD_IDX(p, 1), &a->big_p1), PLD_OK);
    switch (misuse) {
    case TGT_1D:
        cr_assert_eq(pld_window(a->tgt.buf, PLD_INT32, 1, PLD_IDX(p * M * S), &a->tgt_f), PLD_OK);
        break;
    case TGT_ROWS:
        cr_assert_eq(pld_window(a->tgt.buf, PLD_INT32, 2, PLD_IDX(p * M - 1, S), &a->tgt_f),
                     PLD_OK);
        break;
    case RC_1D:
        a->rc_bad = tu_window(w, "rc_bad", PLD_INT32, 1, PLD_IDX(p));
        break;
    case RC_COLS:
        a->rc_bad = tu_window(w, "rc_bad", PLD_INT32, 2, PLD_IDX(p, 2));
        break;
    case RC_DTYPE:
        a->rc_bad = tu_window(w, "rc_bad", PLD_FP32, 2, PLD_IDX(p, 1));
        break;
    case SIG_ROWS:
        a->sig_bad = tu_window(w, "sig_bad", PLD_INT32, 2, PLD_IDX(p + 1, 1));
        break;
    case SIG_DTYPE:
        a->sig_bad = tu_window(w, "sig_bad", PLD_FP32, 2, PLD_IDX(p, 1));
        break;
    }
    pld_status st = pld_launch(w, k_av, a);
    const char *msg = pld_world_error(w);
    cr_assert_eq(st, want, "misuse %d: got %s, expected %s: %s", misuse, pld_status_name(st),
                 pld_status_name(want), msg);
    TU_EXPECT_CONTAINS(msg, "pld_all_to_all_v");
    if (needle)
        TU_EXPECT_CONTAINS(msg, needle);
    /* the world stays usable: a correct call on fresh signals works */
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->sig.buf), PLD_OK);
    a->misuse = OK;
    a->prefill = 1;
    TU_LAUNCH_OK(w, k_av, a);
    for (int r = 0; r < p; r++)
        expect_result(w, a, r, 0);
    cu_finalize(w);
}

/* A negative count is a device-data error on the rank that holds it,
 * naming the rank, the position and the value. */
Test(a2av_errors, negative_count_is_data_error, .timeout = 30)
{
    expect_misuse(3, NEG_COUNT, PLD_ERR_DATA, "send_counts[2] = -1");
    pld_world *w = cu_world(3);
    av *a = av_setup(w);
    set_counts(a, 3);
    a->misuse = NEG_COUNT;
    a->bad_rank = 1;
    TU_LAUNCH_FAILS(w, k_av, a, PLD_ERR_DATA);
    TU_EXPECT_STARTS(pld_world_error(w), "rank 1 (device 1): pld_all_to_all_v");
    cu_finalize(w);
}

Test(a2av_errors, signal_is_recv_counts, .timeout = 30)
{
    expect_misuse(3, SIG_IS_RC, PLD_ERR_ALIAS, "distinct");
}
Test(a2av_errors, target_is_signal, .timeout = 30)
{
    expect_misuse(3, TGT_IS_SIG, PLD_ERR_ALIAS, "distinct");
}
Test(a2av_errors, target_is_recv_counts, .timeout = 30)
{
    expect_misuse(3, TGT_IS_RC, PLD_ERR_ALIAS, "distinct");
}
Test(a2av_errors, send_counts_in_signal, .timeout = 30)
{
    expect_misuse(3, SC_IN_SIG, PLD_ERR_ALIAS, "send_counts");
}
Test(a2av_errors, send_counts_in_recv_counts, .timeout = 30)
{
    expect_misuse(3, SC_IN_RC, PLD_ERR_ALIAS, "send_counts");
}
Test(a2av_errors, input_in_target, .timeout = 30)
{
    expect_misuse(3, INPUT_IN_TGT, PLD_ERR_ALIAS, "target window 'tgt'");
}

Test(a2av_errors, bad_shapes_are_arg_errors, .timeout = 60)
{
    static const struct {
        int misuse;
        const char *needle;
    } cases[] = {
        {TGT_1D, "target 'tgt'"}, {TGT_ROWS, "target 'tgt'"},  {INPUT_ROWS, "input"},
        {INPUT_COLS, "input"},    {INPUT_DTYPE, "input fp32"}, {SC_DTYPE, "send_counts"},
        {SC_LEN, "send_counts"},  {SC_2COLS, "send_counts"},   {RC_1D, "recv_counts"},
        {RC_COLS, "recv_counts"}, {RC_DTYPE, "recv_counts"},   {SIG_ROWS, "signal"},
        {SIG_DTYPE, "signal"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_misuse(3, cases[i].misuse, PLD_ERR_ARG, cases[i].needle);
}
