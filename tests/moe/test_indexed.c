/* SPDX-License-Identifier: Apache-2.0 */
/* pld_indexed_all_to_all_v (MoE dispatch) and pld_indexed_combine against
 * plain C references: random layouts, every core count, persistent reuse,
 * the URMA counters, and every precondition violation. */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 8

typedef struct moe {
    /* windows */
    pld_dtensor target, signal, counts;
    /* per-rank inputs (shared memory, filled by the host) */
    float *input[MAXP];
    int8_t *input8[MAXP];
    int32_t *index[MAXP];
    int32_t *recv[MAXP];
    float *out[MAXP], *weights[MAXP];
    int64_t nmax, h, cap;
    int core_num, int8, bad;
} moe;

static float in_val(int r, int64_t row, int64_t k)
{
    return (float)(r * 10000 + row * 10 + k % 10);
}

static void dispatch_kernel(pld_ctx *c, void *p)
{
    moe *m = p;
    int r = pld_rank(c), n = pld_nranks(c);
    pld_tensor in = m->int8 ? pld_tensor_make(m->input8[r], PLD_INT8, 2, PLD_IDX(m->nmax, m->h))
                            : pld_tensor_make(m->input[r], PLD_FP32, 2, PLD_IDX(m->nmax, m->h));
    pld_indexed_all_to_all_v(c, in, m->target, m->signal, m->counts,
                             pld_tensor_make(m->recv[r], PLD_INT32, 2, PLD_IDX(n, 1)),
                             pld_tensor_make(m->index[r], PLD_INT32, 2, PLD_IDX(n, m->cap)),
                             m->core_num);
}

static pld_world *world(const char *platform, const char *devices, moe **out, int64_t nmax,
                        int64_t h, int64_t cap, int lanes, int int8)
{
    pld_world *w;
    pld_config cfg = {.platform = platform, .devices = devices};
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    int n = pld_world_size(w);
    moe *m = pld_host_alloc(w, sizeof *m);
    m->nmax = nmax, m->h = h, m->cap = cap, m->int8 = int8, m->core_num = 1;
    size_t elt = int8 ? 1 : 4;
    pld_window_buffer *tb, *sb, *cb;
    cr_assert_eq(pld_alloc_window_buffer(w, elt * (size_t)(n * cap * h), "target", &tb), PLD_OK);
    cr_assert_eq(pld_window(tb, int8 ? PLD_INT8 : PLD_FP32, 2, PLD_IDX(n * cap, h), &m->target),
                 PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 4 * (size_t)(n * lanes), "signal", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(n, lanes), &m->signal), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 4 * (size_t)n, "send_counts", &cb), PLD_OK);
    cr_assert_eq(pld_window(cb, PLD_INT32, 2, PLD_IDX(n, 1), &m->counts), PLD_OK);
    for (int r = 0; r < n; r++) {
        m->input[r] = pld_host_alloc(w, 4 * (size_t)(nmax * h));
        m->input8[r] = pld_host_alloc(w, (size_t)(nmax * h));
        m->index[r] = pld_host_alloc(w, 4 * (size_t)(n * cap));
        m->recv[r] = pld_host_alloc(w, 4 * (size_t)n);
        m->out[r] = pld_host_alloc(w, 4 * (size_t)(nmax * h));
        m->weights[r] = pld_host_alloc(w, 4 * (size_t)(n * cap));
        for (int64_t i = 0; i < nmax; i++)
            for (int64_t k = 0; k < h; k++) {
                m->input[r][i * h + k] = in_val(r, i, k);
                m->input8[r][i * h + k] = (int8_t)((r * 31 + i * 7 + k) % 251 - 125);
            }
    }
    *out = m;
    return w;
}

static int32_t *counts_of(pld_world *w, moe *m, int r)
{
    pld_tensor t;
    cr_assert_eq(pld_window_host_view(w, m->counts, r, &t), PLD_OK);
    return t.data;
}

/* Random layout: counts in [0, C] (0 and C included), indices scattered,
 * with duplicates and contiguous runs, tails past the count set to -1. */
static void randomize(pld_world *w, moe *m, unsigned *seed)
{
    int n = pld_world_size(w);
    for (int r = 0; r < n; r++) {
        int32_t *cnt = counts_of(w, m, r);
        for (int d = 0; d < n; d++) {
            int pick = rand_r(seed) % 5;
            cnt[d] = pick == 0 ? 0 : pick == 1 ? (int32_t)m->cap : rand_r(seed) % (m->cap + 1);
            for (int64_t j = 0; j < m->cap; j++) {
                int32_t *x = &m->index[r][d * m->cap + j];
                if (j >= cnt[d])
                    *x = -1; /* never read */
                else if (j > 0 && rand_r(seed) % 3 == 0 && x[-1] + 1 < m->nmax)
                    *x = x[-1] + 1; /* a contiguous run */
                else if (j > 0 && rand_r(seed) % 7 == 0)
                    *x = x[-1]; /* a duplicate */
                else
                    *x = rand_r(seed) % (int32_t)m->nmax;
                m->weights[r][d * m->cap + j] = (float)(1 + rand_r(seed) % 4) * 0.25f;
            }
        }
    }
}

/* target_d[s*C + j] == input_s[index_s[d][j]] for j < count; the rest keeps
 * the sentinel the host wrote before the call. recv_counts match. */
static void check_dispatch(pld_world *w, moe *m, float sentinel)
{
    int n = pld_world_size(w);
    for (int d = 0; d < n; d++) {
        pld_tensor t;
        cr_assert_eq(pld_window_host_view(w, m->target, d, &t), PLD_OK);
        for (int s = 0; s < n; s++) {
            int32_t cnt = counts_of(w, m, s)[d];
            cr_assert_eq(m->recv[d][s], cnt, "rank %d recv_counts[%d] = %d, want %d", d, s,
                         m->recv[d][s], cnt);
            for (int64_t j = 0; j < m->cap; j++) {
                int64_t row = s * m->cap + j;
                for (int64_t k = 0; k < m->h; k++) {
                    double got, want;
                    if (m->int8) {
                        got = ((int8_t *)t.data)[row * m->h + k];
                        want = j < cnt ? m->input8[s][m->index[s][d * m->cap + j] * m->h + k]
                                       : (int8_t)sentinel;
                    } else {
                        got = ((float *)t.data)[row * m->h + k];
                        want = j < cnt ? m->input[s][m->index[s][d * m->cap + j] * m->h + k]
                                       : sentinel;
                    }
                    cr_assert_eq(got, want, "dest %d source %d slot %lld col %lld: got %g want %g",
                                 d, s, (long long)j, (long long)k, got, want);
                }
            }
        }
    }
}

static void fill_target(pld_world *w, moe *m, float v)
{
    for (int d = 0; d < pld_world_size(w); d++) {
        pld_tensor t;
        cr_assert_eq(pld_window_host_view(w, m->target, d, &t), PLD_OK);
        for (int64_t i = 0; i < pld_tensor_numel(t); i++) {
            if (m->int8)
                ((int8_t *)t.data)[i] = (int8_t)v;
            else
                ((float *)t.data)[i] = v;
        }
    }
}

static void property_run(const char *devices, int cores[], int ncores, int int8, unsigned seed0)
{
    moe *m;
    pld_world *w = world("a5sim", devices, &m, 37, 5, 29, 36, int8);
    for (unsigned seed = seed0; seed < seed0 + 6; seed++) {
        unsigned s = seed;
        randomize(w, m, &s);
        for (int k = 0; k < ncores; k++) {
            m->core_num = cores[k];
            float sentinel = (float)(-1 - (int)seed - k);
            fill_target(w, m, sentinel);
            pld_status st = pld_launch(w, dispatch_kernel, m);
            cr_assert_eq(st, PLD_OK, "seed %u core_num %d: %s: %s", seed, cores[k],
                         pld_status_name(st), pld_world_error(w));
            check_dispatch(w, m, sentinel);
        }
    }
    pld_world_finalize(w);
}

Test(dispatch, random_layouts_p2, .timeout = 120)
{
    property_run("0,1", (int[]){1, 2, 3}, 3, 0, 1);
}
Test(dispatch, random_layouts_p3, .timeout = 120)
{
    property_run("0-2", (int[]){1, 3, 5}, 3, 0, 11);
}
Test(dispatch, random_layouts_p4, .timeout = 120)
{
    property_run("0-3", (int[]){1, 2, 4, 7}, 4, 0, 21);
}
Test(dispatch, random_layouts_p8, .timeout = 180)
{
    property_run("0-7", (int[]){1, 3, 8, 12}, 4, 0, 31);
}
Test(dispatch, random_layouts_int8_p4, .timeout = 120)
{
    property_run("0-3", (int[]){1, 6}, 2, 1, 41);
}

/* ---- persistent reuse: 100 calls, changing inputs, same windows ------------- */

Test(dispatch, hundred_calls_same_windows, .timeout = 180)
{
    moe *m;
    pld_world *w = world("a5sim", "0-3", &m, 20, 4, 16, 4, 0);
    unsigned seed = 7;
    for (int call = 0; call < 100; call++) {
        randomize(w, m, &seed);
        for (int r = 0; r < 4; r++)
            for (int64_t i = 0; i < m->nmax * m->h; i++)
                m->input[r][i] = (float)(call * 100000 + r * 1000 + i);
        m->core_num = 1 + call % 4;
        fill_target(w, m, -5.0f);
        pld_status st = pld_launch(w, dispatch_kernel, m);
        cr_assert_eq(st, PLD_OK, "call %d: %s", call, pld_world_error(w));
        check_dispatch(w, m, -5.0f);
    }
    pld_tensor sig;
    for (int r = 0; r < 4; r++) {
        cr_assert_eq(pld_window_host_view(w, m->signal, r, &sig), PLD_OK);
        for (int i = 0; i < 16; i++)
            cr_assert_eq(((int32_t *)sig.data)[i], 0, "signal left non-zero");
    }
    pld_world_finalize(w);
}

/* ---- the URMA counters for a chosen layout ----------------------------------- */

Test(dispatch, urma_counters, .timeout = 60)
{
    moe *m;
    pld_world *w = world("a5sim", "0,1", &m, 80, 8, 40, 2, 0);
    /* rank 0 sends 25 rows to rank 1: rows 0..9 contiguous, then 15 scattered */
    int32_t *c0 = counts_of(w, m, 0), *c1 = counts_of(w, m, 1);
    c0[0] = 3, c0[1] = 25, c1[0] = 0, c1[1] = 0;
    for (int j = 0; j < 25; j++)
        m->index[0][1 * 40 + j] = j < 10 ? j : 20 + 2 * j;      /* 1 range + 15 singles */
    m->index[0][0] = 5, m->index[0][1] = 6, m->index[0][2] = 9; /* self: 2 ranges */
    pld_status st = pld_launch(w, dispatch_kernel, m);
    cr_assert_eq(st, PLD_OK, "%s", pld_world_error(w));
    pld_counters k;
    cr_assert_eq(pld_rank_counters(w, 0, &k), PLD_OK);
    /* 25 rows: SQEs of 12, 12, 1 -> 3 SQEs, 12 WQEBBs, the last pads 3 NOPs */
    cr_assert_eq(k.urma_sqes, 3);
    cr_assert_eq(k.urma_wqebbs, 12);
    cr_assert_eq(k.urma_nops, 3);
    cr_assert_eq(k.urma_doorbells, 1);
    cr_assert_eq(k.urma_cqes, 1);
    cr_assert_eq(k.merged_ranges, 16 + 2, "ranges %llu", (unsigned long long)k.merged_ranges);
    cr_assert_eq(k.self_stages, 1); /* 3 rows of 32 B */
    cr_assert_eq(k.bytes_to_peers, 25 * 8 * 4);
    cr_assert_eq(pld_rank_counters(w, 1, &k), PLD_OK);
    cr_assert_eq(k.urma_sqes, 0);
    cr_assert_eq(k.urma_cqes, 0, "an empty send asks for no completion");
    pld_world_finalize(w);
}

Test(dispatch, doorbell_per_64_sqes, .timeout = 60)
{
    moe *m;
    pld_world *w = world("a5sim", "0,1", &m, 1000, 1, 1000, 1, 0);
    int32_t *c0 = counts_of(w, m, 0);
    c0[1] = 12 * 64 + 1; /* 65 SQEs: two doorbells */
    for (int j = 0; j < c0[1]; j++)
        m->index[0][1000 + j] = j;
    cr_assert_eq(pld_launch(w, dispatch_kernel, m), PLD_OK, "%s", pld_world_error(w));
    pld_counters k;
    cr_assert_eq(pld_rank_counters(w, 0, &k), PLD_OK);
    cr_assert_eq(k.urma_sqes, 65);
    cr_assert_eq(k.urma_doorbells, 2);
    cr_assert_eq(k.merged_ranges, 1, "one contiguous run");
    pld_world_finalize(w);
}

Test(dispatch, listing_shows_the_queue, .timeout = 60)
{
    moe *m;
    pld_world *w = world("a5sim", "0,1", &m, 16, 2, 16, 2, 0);
    counts_of(w, m, 0)[1] = 13;
    for (int j = 0; j < 13; j++)
        m->index[0][16 + j] = j;
    pld_ir_enable(w, 1);
    cr_assert_eq(pld_launch(w, dispatch_kernel, m), PLD_OK);
    const char *ir = pld_ir_text(w);
    cr_assert(strstr(ir, "urma.send -> peer1: 13 rows in 1 ranges, 2 SQEs (8 WQEBBs, 3 NOP), "
                         "1 doorbells, wait 1 CQE"),
              "%s", ir);
    pld_world_finalize(w);
}

/* ---- preconditions ---------------------------------------------------------------- */

static void expect_fail(const char *platform, int lanes, void (*setup)(pld_world *, moe *),
                        pld_status want, const char *needle)
{
    moe *m;
    pld_world *w = world(platform, "0-2", &m, 10, 3, 8, lanes, 0);
    for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++) {
            counts_of(w, m, r)[d] = 2;
            m->index[r][d * 8] = 1, m->index[r][d * 8 + 1] = 2;
        }
    m->core_num = 2;
    setup(w, m);
    pld_status st = pld_launch(w, dispatch_kernel, m);
    cr_assert_eq(st, want, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_assert(strstr(pld_world_error(w), needle), "'%s' not in: %s", needle, pld_world_error(w));
    pld_world_finalize(w);
}

static void none(pld_world *w, moe *m)
{
    (void)w, (void)m;
}
static void count_too_big(pld_world *w, moe *m)
{
    (void)m;
    counts_of(w, m, 1)[2] = 9;
}
static void count_negative(pld_world *w, moe *m)
{
    counts_of(w, m, 2)[0] = -1;
}
static void index_too_big(pld_world *w, moe *m)
{
    (void)w;
    m->index[1][2 * 8 + 1] = 10;
}
static void index_negative(pld_world *w, moe *m)
{
    (void)w;
    m->index[0][1 * 8 + 0] = -1;
}
static void tail_minus_one(pld_world *w, moe *m)
{
    (void)w;
    m->index[0][1 * 8 + 2] = -1;
}
static void core_num_zero(pld_world *w, moe *m)
{
    (void)w;
    m->core_num = 0;
}
static void core_num_37(pld_world *w, moe *m)
{
    (void)w;
    m->core_num = 37;
}
static void signal_is_counts(pld_world *w, moe *m)
{
    (void)w;
    m->signal = m->counts;
}

Test(dispatch_errors, count_above_c)
{
    expect_fail("a5sim", 2, count_too_big, PLD_ERR_DATA,
                "rank 1 (device 1): pld_indexed_all_to_all_v: send_counts[2] = 9 for peer 2 is "
                "outside [0, C=8]");
}
Test(dispatch_errors, count_negative)
{
    expect_fail("a5sim", 2, count_negative, PLD_ERR_DATA,
                "rank 2 (device 2): pld_indexed_all_to_all_v: send_counts[0] = -1");
}
Test(dispatch_errors, index_at_nmax)
{
    expect_fail("a5sim", 2, index_too_big, PLD_ERR_DATA,
                "index[2][1] = 10 for peer 2 is outside [0, Nmax=10)");
}
Test(dispatch_errors, index_negative_inside_count)
{
    expect_fail("a5sim", 2, index_negative, PLD_ERR_DATA, "index[1][0] = -1");
}
Test(dispatch_errors, signal_too_narrow)
{
    expect_fail("a5sim", 1, none, PLD_ERR_ARG, "[3,2]");
}
Test(dispatch_errors, core_num_zero)
{
    expect_fail("a5sim", 2, core_num_zero, PLD_ERR_ARG, "core_num 0");
}
Test(dispatch_errors, core_num_above_aiv)
{
    expect_fail("a5sim", 40, core_num_37, PLD_ERR_ARG, "core_num 37 not in [1, 36]");
}
Test(dispatch_errors, signal_aliases_send_counts)
{
    expect_fail("a5sim", 2, signal_is_counts, PLD_ERR_ALIAS,
                "signal and send_counts are the same window");
}
Test(dispatch_errors, a2a3sim_profile)
{
    expect_fail("a2a3sim", 2, none, PLD_ERR_UNSUPPORTED, "needs the a5sim URMA model");
}

Test(dispatch, minus_one_past_the_count_is_never_read, .timeout = 60)
{
    moe *m;
    pld_world *w = world("a5sim", "0-2", &m, 10, 3, 8, 2, 0);
    for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++) {
            counts_of(w, m, r)[d] = 2;
            m->index[r][d * 8] = 1, m->index[r][d * 8 + 1] = 2;
            for (int j = 2; j < 8; j++)
                m->index[r][d * 8 + j] = -1;
        }
    tail_minus_one(w, m);
    fill_target(w, m, -9);
    cr_assert_eq(pld_launch(w, dispatch_kernel, m), PLD_OK, "%s", pld_world_error(w));
    check_dispatch(w, m, -9);
    pld_world_finalize(w);
}

static void sq_overflow(pld_world *w, moe *m)
{
    (void)w;
    (void)m;
}

Test(dispatch_errors, sq_overflow, .timeout = 60)
{
    setenv("PLD_URMA_SQ_DEPTH", "8", 1); /* 8 WQEBBs: at most 2 SQEs = 24 rows */
    moe *m;
    pld_world *w = world("a5sim", "0,1", &m, 40, 1, 40, 1, 0);
    sq_overflow(w, m);
    counts_of(w, m, 0)[1] = 25;
    for (int j = 0; j < 25; j++)
        m->index[0][40 + j] = j;
    pld_status st = pld_launch(w, dispatch_kernel, m);
    cr_assert_eq(st, PLD_ERR_DATA, "%s", pld_world_error(w));
    cr_assert(
        strstr(pld_world_error(w), "peer 1 needs 12 WQEBBs (ceil(25/12)*4) but its SQ holds 8"),
        "%s", pld_world_error(w));
    counts_of(w, m, 0)[1] = 24; /* fits */
    cr_assert_eq(pld_launch(w, dispatch_kernel, m), PLD_OK, "%s", pld_world_error(w));
    pld_world_finalize(w);
}

/* wrong dtype: fp16 input */
static void fp16_kernel(pld_ctx *c, void *p)
{
    moe *m = p;
    int n = pld_nranks(c), r = pld_rank(c);
    pld_indexed_all_to_all_v(c, pld_tensor_make(m->input[r], PLD_FP16, 2, PLD_IDX(m->nmax, m->h)),
                             m->target, m->signal, m->counts,
                             pld_tensor_make(m->recv[r], PLD_INT32, 2, PLD_IDX(n, 1)),
                             pld_tensor_make(m->index[r], PLD_INT32, 2, PLD_IDX(n, m->cap)), 1);
}

Test(dispatch_errors, fp16_payload)
{
    moe *m;
    pld_world *w = world("a5sim", "0,1", &m, 10, 2, 4, 1, 0);
    cr_assert_eq(pld_launch(w, fp16_kernel, m), PLD_ERR_UNSUPPORTED);
    cr_assert(strstr(pld_world_error(w), "fp32 or int8"), "%s", pld_world_error(w));
    pld_world_finalize(w);
}

/* recv_counts inside the send_counts window */
static void alias_kernel(pld_ctx *c, void *p)
{
    moe *m = p;
    int n = pld_nranks(c), r = pld_rank(c);
    pld_indexed_all_to_all_v(c, pld_tensor_make(m->input[r], PLD_FP32, 2, PLD_IDX(m->nmax, m->h)),
                             m->target, m->signal, m->counts, pld_local(c, m->counts),
                             pld_tensor_make(m->index[r], PLD_INT32, 2, PLD_IDX(n, m->cap)), 1);
}

Test(dispatch_errors, recv_counts_aliases_send_counts)
{
    moe *m;
    pld_world *w = world("a5sim", "0,1", &m, 10, 2, 4, 1, 0);
    cr_assert_eq(pld_launch(w, alias_kernel, m), PLD_ERR_ALIAS, "%s", pld_world_error(w));
    cr_assert(strstr(pld_world_error(w), "distinct"), "%s", pld_world_error(w));
    pld_world_finalize(w);
}

/* ---- combine: dispatch, expert, combine, compare ----------------------------- */

static void round_trip_kernel(pld_ctx *c, void *p)
{
    moe *m = p;
    int r = pld_rank(c), n = pld_nranks(c);
    pld_tensor idx = pld_tensor_make(m->index[r], PLD_INT32, 2, PLD_IDX(n, m->cap));
    pld_indexed_all_to_all_v(
        c, pld_tensor_make(m->input[r], PLD_FP32, 2, PLD_IDX(m->nmax, m->h)), m->target, m->signal,
        m->counts, pld_tensor_make(m->recv[r], PLD_INT32, 2, PLD_IDX(n, 1)), idx, m->core_num);
    /* the toy expert of rank r multiplies its rows by (r + 2), in place */
    float *t = pld_local(c, m->target).data;
    for (int s = 0; s < n; s++)
        for (int64_t j = 0; j < m->recv[r][s]; j++)
            for (int64_t k = 0; k < m->h; k++)
                t[(s * m->cap + j) * m->h + k] *= (float)(r + 2);
    pld_indexed_combine(
        c, m->target, pld_tensor_make(m->out[r], PLD_FP32, 2, PLD_IDX(m->nmax, m->h)), m->signal,
        m->counts, idx, pld_tensor_make(m->weights[r], PLD_FP32, 2, PLD_IDX(n, m->cap)),
        m->core_num);
}

static void round_trip(const char *devices, int cores[], int ncores)
{
    moe *m;
    pld_world *w = world("a5sim", devices, &m, 23, 6, 17, 8, 0);
    int n = pld_world_size(w);
    unsigned seed = 99;
    float *first = malloc(sizeof(float) * (size_t)(n * m->nmax * m->h));
    for (int k = 0; k < ncores; k++) {
        if (k == 0)
            randomize(w, m, &seed);
        m->core_num = cores[k];
        pld_status st = pld_launch(w, round_trip_kernel, m);
        cr_assert_eq(st, PLD_OK, "core_num %d: %s", cores[k], pld_world_error(w));
        for (int s = 0; s < n; s++) {
            int32_t *cnt = counts_of(w, m, s);
            for (int64_t t = 0; t < m->nmax; t++)
                for (int64_t h = 0; h < m->h; h++) {
                    float want = 0;
                    for (int d = 0; d < n; d++)
                        for (int64_t j = 0; j < cnt[d]; j++)
                            if (m->index[s][d * m->cap + j] == t)
                                want += m->weights[s][d * m->cap + j] * (float)(d + 2) *
                                        in_val(s, t, h);
                    float got = m->out[s][t * m->h + h];
                    cr_assert_eq(got, want, "core_num %d rank %d token %lld col %lld: %g vs %g",
                                 cores[k], s, (long long)t, (long long)h, got, want);
                    /* identical for every core count, bit for bit */
                    float *f = &first[(s * m->nmax + t) * m->h + h];
                    if (k == 0)
                        *f = got;
                    else
                        cr_assert(memcmp(f, &got, sizeof got) == 0, "differs from core_num %d",
                                  cores[0]);
                }
        }
    }
    free(first);
    pld_world_finalize(w);
}

Test(combine, round_trip_p2, .timeout = 120)
{
    round_trip("0,1", (int[]){1, 2, 5}, 3);
}
Test(combine, round_trip_p3, .timeout = 120)
{
    round_trip("0-2", (int[]){1, 3, 8}, 3);
}
Test(combine, round_trip_p4, .timeout = 120)
{
    round_trip("0-3", (int[]){1, 4}, 2);
}
