/* SPDX-License-Identifier: Apache-2.0 */
/* Tiles: creation, the UB budget, load/store, tile_reduce and tile_mul. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

#define UB_DEFAULT (192 * 1024)

/* ---- create / free / budget -------------------------------------------- */

typedef struct basic_out {
    int64_t cap[4], used0[4], used1[4], used2[4];
    int64_t rows[4], cols[4];
    int dtype[4];
    int zeroed[4];
} basic_out;

static void k_tile_basic(pld_ctx *c, void *arg)
{
    basic_out *o = arg;
    int me = pld_rank(c);
    o->cap[me] = (int64_t)pld_ub_capacity(c);
    o->used0[me] = (int64_t)pld_ub_used(c);
    pld_tile *t = pld_tile_create(c, PLD_INT16, 3, 5);
    KCHECK(c, t != NULL, "pld_tile_create returned NULL");
    o->used1[me] = (int64_t)pld_ub_used(c);
    o->rows[me] = pld_tile_rows(t);
    o->cols[me] = pld_tile_cols(t);
    o->dtype[me] = (int)pld_tile_dtype(t);
    int16_t *d = pld_tile_data(t);
    KCHECK(c, d != NULL, "tile data is NULL");
    int z = 1;
    for (int i = 0; i < 15; i++)
        z &= d[i] == 0;
    o->zeroed[me] = z;
    for (int i = 0; i < 15; i++)
        d[i] = (int16_t)i;
    pld_tile_free(c, t);
    o->used2[me] = (int64_t)pld_ub_used(c);
}

Test(tile, create_free_and_accounting, .timeout = 30)
{
    unsetenv("PLD_UB_BYTES");
    pld_world *w = tu_world(NULL);
    basic_out *o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_tile_basic, o);
    for (int r = 0; r < 2; r++) {
        cr_expect_eq(o->cap[r], UB_DEFAULT, "rank %d: UB capacity %lld, expected %d", r,
                     (long long)o->cap[r], UB_DEFAULT);
        cr_expect_eq(o->rows[r], 3, "rows %lld", (long long)o->rows[r]);
        cr_expect_eq(o->cols[r], 5, "cols %lld", (long long)o->cols[r]);
        cr_expect_eq(o->dtype[r], PLD_INT16, "dtype %d", o->dtype[r]);
        cr_expect_eq(o->zeroed[r], 1, "rank %d: new tile not zeroed", r);
        cr_expect_geq(o->used1[r] - o->used0[r], 30,
                      "rank %d: UB used grew by %lld, expected >= 30", r,
                      (long long)(o->used1[r] - o->used0[r]));
        cr_expect_eq(o->used2[r], o->used0[r], "rank %d: UB used %lld after free, expected %lld", r,
                     (long long)o->used2[r], (long long)o->used0[r]);
    }
    pld_world_finalize(w);
}

typedef struct big_args {
    int who;         /* rank that allocates, -1 = every rank */
    int64_t rows[3]; /* up to three tiles, fp32 [rows, cols]; rows 0 = none */
    int64_t cols;
    int free_between;
} big_args;

static void k_tiles(pld_ctx *c, void *arg)
{
    const big_args *a = arg;
    if (a->who >= 0 && pld_rank(c) != a->who)
        return;
    for (int i = 0; i < 3 && a->rows[i] > 0; i++) {
        pld_tile *t = pld_tile_create(c, PLD_FP32, a->rows[i], a->cols);
        float *d = pld_tile_data(t);
        d[0] = 1.0f;
        d[a->rows[i] * a->cols - 1] = 2.0f; /* the whole tile is usable */
        if (a->free_between)
            pld_tile_free(c, t);
    }
}

static int contains_size(const char *msg, long bytes)
{
    char b1[32], b2[32], b3[32];
    snprintf(b1, sizeof b1, "%ld", bytes);
    snprintf(b2, sizeof b2, "%ld KiB", bytes / 1024);
    snprintf(b3, sizeof b3, "%ldKiB", bytes / 1024);
    return tu_contains(msg, b1) ||
           (bytes % 1024 == 0 && (tu_contains(msg, b2) || tu_contains(msg, b3)));
}

Test(tile, over_budget_is_nomem_with_sizes, .timeout = 30)
{
    unsetenv("PLD_UB_BYTES");
    pld_world *w = tu_world(NULL);
    big_args *a = tu_host_alloc(w, sizeof *a);
    a->who = 1;
    a->rows[0] = 256; /* 256 x 256 fp32 = 256 KiB > 192 KiB */
    a->cols = 256;
    TU_LAUNCH_FAILS(w, k_tiles, a, PLD_ERR_NOMEM);
    const char *msg = pld_world_error(w);
    TU_EXPECT_STARTS(msg, "rank 1 (device 1): pld_tile_create: ");
    cr_expect(contains_size(msg, 256L * 256 * 4), "message lacks the requested size 262144: \"%s\"",
              msg);
    cr_expect(contains_size(msg, UB_DEFAULT), "message lacks the UB capacity 196608: \"%s\"", msg);

    /* just under the budget works, on every rank at once */
    a->who = -1;
    a->rows[0] = 150; /* 150 x 256 fp32 = 150 KiB */
    TU_LAUNCH_OK(w, k_tiles, a);
    pld_world_finalize(w);
}

Test(tile, cumulative_budget, .timeout = 30)
{
    unsetenv("PLD_UB_BYTES");
    pld_world *w = tu_world(NULL);
    big_args *a = tu_host_alloc(w, sizeof *a);
    a->who = 0;
    a->rows[0] = 100; /* 100 KiB */
    a->rows[1] = 100; /* +100 KiB > 192 KiB */
    a->cols = 256;
    TU_LAUNCH_FAILS(w, k_tiles, a, PLD_ERR_NOMEM);
    const char *msg = pld_world_error(w);
    TU_EXPECT_STARTS(msg, "rank 0 (device 0): pld_tile_create: ");
    cr_expect(contains_size(msg, 100L * 256 * 4), "message lacks the requested size: \"%s\"", msg);
    cr_expect(contains_size(msg, UB_DEFAULT), "message lacks the UB capacity: \"%s\"", msg);

    /* freeing in between returns the budget */
    a->free_between = 1;
    a->rows[2] = 100;
    TU_LAUNCH_OK(w, k_tiles, a);
    pld_world_finalize(w);
}

/* Tiles are freed when the kernel returns: two launches of a kernel that
 * leaks a 150 KiB tile both succeed. */
Test(tile, freed_at_kernel_end, .timeout = 30)
{
    unsetenv("PLD_UB_BYTES");
    pld_world *w = tu_world(NULL);
    big_args *a = tu_host_alloc(w, sizeof *a);
    a->who = -1;
    a->rows[0] = 150;
    a->cols = 256;
    for (int i = 0; i < 4; i++)
        TU_LAUNCH_OK(w, k_tiles, a);
    pld_world_finalize(w);
}

Test(tile, env_ub_bytes_override, .timeout = 30)
{
    setenv("PLD_UB_BYTES", "65536", 1);
    pld_world *w = tu_world(NULL);
    basic_out *o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_tile_basic, o);
    cr_expect_eq(o->cap[0], 65536, "UB capacity %lld with PLD_UB_BYTES=65536",
                 (long long)o->cap[0]);
    cr_expect_eq(o->cap[1], 65536, "UB capacity %lld with PLD_UB_BYTES=65536",
                 (long long)o->cap[1]);

    big_args *a = tu_host_alloc(w, sizeof *a);
    a->who = -1;
    a->rows[0] = 64; /* 16 KiB fits */
    a->cols = 64;
    TU_LAUNCH_OK(w, k_tiles, a);
    a->who = 0;
    a->rows[0] = 128; /* 128 KiB: fits the default, not 64 KiB */
    a->cols = 256;
    TU_LAUNCH_FAILS(w, k_tiles, a, PLD_ERR_NOMEM);
    cr_expect(contains_size(pld_world_error(w), 65536), "message lacks the 65536 capacity: \"%s\"",
              pld_world_error(w));
    pld_world_finalize(w);

    /* same override on a5sim */
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.platform = "a5sim";
    w = tu_world_cfg(&cfg);
    o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_tile_basic, o);
    cr_expect_eq(o->cap[0], 65536, "a5sim UB capacity %lld with PLD_UB_BYTES=65536",
                 (long long)o->cap[0]);
    pld_world_finalize(w);
}

typedef struct create_case {
    int which;
} create_case;

static void k_bad_create(pld_ctx *c, void *arg)
{
    const create_case *a = arg;
    if (pld_rank(c) != 1)
        return;
    switch (a->which) {
    case 0:
        pld_tile_create(c, PLD_FP32, 0, 8);
        break;
    case 1:
        pld_tile_create(c, PLD_FP32, 8, -1);
        break;
    case 2:
        pld_tile_create(c, (pld_dtype)PLD_DTYPE_COUNT, 8, 8);
        break;
    case 3:
        pld_tile_create(c, PLD_FP32, -4, 8);
        break;
    }
}

Test(tile, bad_create_args, .timeout = 30)
{
    pld_world *w = tu_world("4,5");
    create_case *a = tu_host_alloc(w, sizeof *a);
    for (int i = 0; i < 4; i++) {
        a->which = i;
        pld_status st = pld_launch(w, k_bad_create, a);
        cr_expect_eq(st, PLD_ERR_ARG, "case %d: %s, expected PLD_ERR_ARG (%s)", i,
                     pld_status_name(st), pld_world_error(w));
        TU_EXPECT_STARTS(pld_world_error(w), "rank 1 (device 5): pld_tile_create: ");
    }
    pld_world_finalize(w);
}

/* ---- load / store ------------------------------------------------------- */

typedef struct ls_args {
    float *src, *dst; /* host_alloc */
    int ndim;
    int64_t shape[4];
    int64_t load_off[4], store_off[4];
    int64_t rows, cols;
} ls_args;

static void k_load_store(pld_ctx *c, void *arg)
{
    const ls_args *a = arg;
    if (pld_rank(c) != 0)
        return;
    pld_tensor src = pld_tensor_make(a->src, PLD_FP32, a->ndim, a->shape);
    pld_tensor dst = pld_tensor_make(a->dst, PLD_FP32, a->ndim, a->shape);
    pld_tile *t = pld_tile_create(c, PLD_FP32, a->rows, a->cols);
    pld_load(c, t, src, a->load_off);
    pld_store(c, t, dst, a->store_off);
}

static int64_t lin(const int64_t *shape, int ndim, const int64_t *idx)
{
    int64_t l = 0;
    for (int d = 0; d < ndim; d++)
        l = l * shape[d] + idx[d];
    return l;
}

static void check_load_store(const ls_args *a)
{
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++)
        n *= a->shape[d];
    /* expected dst: zero except the tile region at store_off */
    float *want = calloc((size_t)n, sizeof *want);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            int64_t si[4], di[4];
            for (int d = 0; d < a->ndim; d++) {
                si[d] = a->load_off[d];
                di[d] = a->store_off[d];
            }
            si[a->ndim - 2] += i;
            si[a->ndim - 1] += j;
            di[a->ndim - 2] += i;
            di[a->ndim - 1] += j;
            want[lin(a->shape, a->ndim, di)] = a->src[lin(a->shape, a->ndim, si)];
        }
    for (int64_t k = 0; k < n; k++)
        cr_assert_eq(a->dst[k], want[k], "dst[%lld] = %g, expected %g", (long long)k,
                     (double)a->dst[k], (double)want[k]);
    free(want);
}

static ls_args *ls_setup(pld_world *w, int ndim, const int64_t *shape)
{
    ls_args *a = tu_host_alloc(w, sizeof *a);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        a->shape[d] = shape[d];
        n *= shape[d];
    }
    a->ndim = ndim;
    a->src = tu_host_alloc(w, (size_t)n * sizeof(float));
    a->dst = tu_host_alloc(w, (size_t)n * sizeof(float));
    for (int64_t k = 0; k < n; k++)
        a->src[k] = (float)(k + 1);
    return a;
}

Test(tile, load_store_round_trip_2d, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    ls_args *a = ls_setup(w, 2, (const int64_t[]){10, 12});
    a->rows = 3;
    a->cols = 4;
    a->load_off[0] = 2, a->load_off[1] = 5;
    a->store_off[0] = 6, a->store_off[1] = 1;
    TU_LAUNCH_OK(w, k_load_store, a);
    check_load_store(a);
    /* corners: the last row/column fit exactly */
    memset(a->dst, 0, 120 * sizeof(float));
    a->load_off[0] = 7, a->load_off[1] = 8;
    a->store_off[0] = 0, a->store_off[1] = 0;
    TU_LAUNCH_OK(w, k_load_store, a);
    check_load_store(a);
    pld_world_finalize(w);
}

Test(tile, load_store_round_trip_3d_4d, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    ls_args *a = ls_setup(w, 3, (const int64_t[]){2, 5, 6});
    a->rows = 2;
    a->cols = 3;
    a->load_off[0] = 1, a->load_off[1] = 2, a->load_off[2] = 3;
    a->store_off[0] = 0, a->store_off[1] = 3, a->store_off[2] = 1;
    TU_LAUNCH_OK(w, k_load_store, a);
    check_load_store(a);

    ls_args *b = ls_setup(w, 4, (const int64_t[]){2, 2, 4, 6});
    b->rows = 3;
    b->cols = 4;
    b->load_off[0] = 1, b->load_off[1] = 0, b->load_off[2] = 1, b->load_off[3] = 2;
    b->store_off[0] = 0, b->store_off[1] = 1, b->store_off[2] = 0, b->store_off[3] = 0;
    TU_LAUNCH_OK(w, k_load_store, b);
    check_load_store(b);
    pld_world_finalize(w);
}

typedef struct lserr_args {
    int which;
    float *buf; /* host_alloc [10,12] fp32 */
} lserr_args;

static void k_load_store_errors(pld_ctx *c, void *arg)
{
    const lserr_args *a = arg;
    if (pld_rank(c) != 1)
        return;
    pld_tensor t = pld_tensor_make(a->buf, PLD_FP32, 2, (const int64_t[]){10, 12});
    pld_tensor t3 = pld_tensor_make(a->buf, PLD_FP32, 3, (const int64_t[]){2, 5, 12});
    pld_tile *f = pld_tile_create(c, PLD_FP32, 3, 4);
    pld_tile *i32 = pld_tile_create(c, PLD_INT32, 3, 4);
    pld_tile *huge = pld_tile_create(c, PLD_FP32, 11, 2);
    switch (a->which) {
    case 0:
        pld_load(c, f, t, PLD_IDX(8, 0));
        break; /* rows 8..10 */
    case 1:
        pld_load(c, f, t, PLD_IDX(0, -1));
        break; /* negative */
    case 2:
        pld_store(c, f, t, PLD_IDX(0, 9));
        break; /* cols 9..12 */
    case 3:
        pld_load(c, huge, t, PLD_IDX(0, 0));
        break; /* tile taller than tensor */
    case 4:
        pld_load(c, f, t3, PLD_IDX(2, 0, 0));
        break; /* leading dim out */
    case 5:
        pld_load(c, i32, t, PLD_IDX(0, 0));
        break; /* dtype mismatch */
    case 6:
        pld_store(c, i32, t, PLD_IDX(0, 0));
        break; /* dtype mismatch */
    case 7:
        pld_load(c, f, t, PLD_IDX(0));
        break; /* offsets count */
    case 8:
        pld_store(c, f, t3, PLD_IDX(0, 0));
        break; /* offsets count */
    case 9:
        pld_store(c, f, t, PLD_IDX(-3, 0));
        break; /* negative row */
    }
    a->buf[119] = -1.0f; /* not reached */
}

Test(tile, load_store_errors, .timeout = 30)
{
    const struct {
        pld_status st;
        const char *api;
    } cases[] = {
        {PLD_ERR_BOUNDS, "pld_load"},  {PLD_ERR_BOUNDS, "pld_load"}, {PLD_ERR_BOUNDS, "pld_store"},
        {PLD_ERR_BOUNDS, "pld_load"},  {PLD_ERR_BOUNDS, "pld_load"}, {PLD_ERR_ARG, "pld_load"},
        {PLD_ERR_ARG, "pld_store"},    {PLD_ERR_ARG, "pld_load"},    {PLD_ERR_ARG, "pld_store"},
        {PLD_ERR_BOUNDS, "pld_store"},
    };
    pld_world *w = tu_world("4,5");
    lserr_args *a = tu_host_alloc(w, sizeof *a);
    a->buf = tu_host_alloc(w, 120 * sizeof(float));
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        a->which = i;
        pld_status st = pld_launch(w, k_load_store_errors, a);
        cr_expect_eq(st, cases[i].st, "case %d: %s, expected %s (%s)", i, pld_status_name(st),
                     pld_status_name(cases[i].st), pld_world_error(w));
        char prefix[64];
        snprintf(prefix, sizeof prefix, "rank 1 (device 5): %s: ", cases[i].api);
        TU_EXPECT_STARTS(pld_world_error(w), prefix);
        cr_expect_eq(a->buf[119], 0.0f, "case %d: the kernel went on after the error", i);
        for (int k = 0; k < 120; k++)
            cr_assert_eq(a->buf[k], 0.0f, "case %d: failed call wrote buf[%d] = %g", i, k,
                         (double)a->buf[k]);
    }
    pld_world_finalize(w);
}

/* ---- tile_reduce / tile_mul --------------------------------------------- */

#define RN 24 /* tiles are [4, 6] */

typedef struct red_args {
    pld_dtype dt;
    int op;    /* pld_reduce_op, or -1 for pld_tile_mul */
    void *acc; /* host_alloc, RN elements: initial acc, then result */
    void *x;   /* host_alloc, RN elements */
} red_args;

static void k_reduce(pld_ctx *c, void *arg)
{
    red_args *a = arg;
    if (pld_rank(c) != 0)
        return;
    size_t es = pld_dtype_size(a->dt);
    pld_tile *acc = pld_tile_create(c, a->dt, 4, 6);
    pld_tile *x = pld_tile_create(c, a->dt, 4, 6);
    memcpy(pld_tile_data(acc), a->acc, RN * es);
    memcpy(pld_tile_data(x), a->x, RN * es);
    if (a->op < 0)
        pld_tile_mul(c, acc, x);
    else
        pld_tile_reduce(c, acc, x, (pld_reduce_op)a->op);
    memcpy(a->acc, pld_tile_data(acc), RN * es);
    /* x is an input only */
    KCHECK(c, memcmp(pld_tile_data(x), a->x, RN * es) == 0, "tile_reduce modified its x tile");
}

static double ref_op(int op, double a, double b)
{
    switch (op) {
    case PLD_SUM:
        return a + b;
    case PLD_MAX:
        return a > b ? a : b;
    case PLD_MIN:
        return a < b ? a : b;
    default:
        return a * b; /* PROD and tile_mul */
    }
}

static const char *op_name(int op)
{
    static const char *n[] = {"SUM", "MAX", "MIN", "PROD"};
    return op < 0 ? "tile_mul" : n[op];
}

/* Values chosen so every result is exact in fp16 and bf16: multiples of
 * 0.5 with |v| <= 8 (integers for INT32). */
static double val_a(pld_dtype dt, int i)
{
    double v = (double)((i * 7) % 17 - 8);
    return dt == PLD_INT32 ? v : v * 0.5 + (i % 3 == 0 ? 0.0 : 0.5);
}

static double val_b(pld_dtype dt, int i)
{
    double v = (double)((i * 5 + 3) % 13 - 6);
    return dt == PLD_INT32 ? v : v * 0.5;
}

static void run_reduce_all(pld_dtype dt)
{
    pld_world *w = tu_world(NULL);
    red_args *a = tu_host_alloc(w, sizeof *a);
    size_t es = pld_dtype_size(dt);
    a->dt = dt;
    a->acc = tu_host_alloc(w, RN * es);
    a->x = tu_host_alloc(w, RN * es);
    int ops[] = {PLD_SUM, PLD_MAX, PLD_MIN, PLD_PROD, -1};
    for (int k = 0; k < 5; k++) {
        a->op = ops[k];
        for (int i = 0; i < RN; i++) {
            tu_set(dt, a->acc, i, val_a(dt, i));
            tu_set(dt, a->x, i, val_b(dt, i));
        }
        TU_LAUNCH_OK(w, k_reduce, a);
        for (int i = 0; i < RN; i++) {
            double want = ref_op(ops[k], val_a(dt, i), val_b(dt, i));
            double got = tu_get(dt, a->acc, i);
            cr_expect_eq(got, want, "%s %s [%d]: %g op %g = %g, expected %g", pld_dtype_name(dt),
                         op_name(ops[k]), i, val_a(dt, i), val_b(dt, i), got, want);
        }
    }
    pld_world_finalize(w);
}

Test(tile, reduce_fp32, .timeout = 30)
{
    run_reduce_all(PLD_FP32);
}
Test(tile, reduce_int32, .timeout = 30)
{
    run_reduce_all(PLD_INT32);
}
Test(tile, reduce_fp16, .timeout = 30)
{
    run_reduce_all(PLD_FP16);
}
Test(tile, reduce_bf16, .timeout = 30)
{
    run_reduce_all(PLD_BF16);
}

/* fp16/bf16 are reduced in fp32 and rounded back to nearest:
 * bf16 256 + 1.5 = 257.5 -> 258 (spacing 2), fp16 2048 + 1.5 -> 2050. */
Test(tile, half_sum_rounds_to_nearest, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    red_args *a = tu_host_alloc(w, sizeof *a);
    a->acc = tu_host_alloc(w, RN * 2);
    a->x = tu_host_alloc(w, RN * 2);
    a->op = PLD_SUM;
    const struct {
        pld_dtype dt;
        double acc, x, want;
    } cases[] = {
        {PLD_BF16, 256.0, 1.5, 258.0},
        {PLD_FP16, 2048.0, 1.5, 2050.0},
        {PLD_BF16, 1.0, 1.0 / 512, 1.0}, /* below half an ulp: stays */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        a->dt = cases[k].dt;
        for (int i = 0; i < RN; i++) {
            tu_set(a->dt, a->acc, i, cases[k].acc);
            tu_set(a->dt, a->x, i, cases[k].x);
        }
        cr_assert_eq(tu_get(a->dt, a->x, 0), cases[k].x, "test converter cannot encode %g",
                     cases[k].x);
        TU_LAUNCH_OK(w, k_reduce, a);
        double got = tu_get(a->dt, a->acc, 5);
        cr_expect_eq(got, cases[k].want, "%s %g + %g = %g, expected %g", pld_dtype_name(a->dt),
                     cases[k].acc, cases[k].x, got, cases[k].want);
    }
    pld_world_finalize(w);
}

typedef struct rerr_args {
    int which;
} rerr_args;

static void k_reduce_errors(pld_ctx *c, void *arg)
{
    const rerr_args *a = arg;
    if (pld_rank(c) != 0)
        return;
    pld_tile *a46 = pld_tile_create(c, PLD_FP32, 4, 6);
    pld_tile *b64 = pld_tile_create(c, PLD_FP32, 6, 4);
    pld_tile *i46 = pld_tile_create(c, PLD_INT32, 4, 6);
    pld_tile *b46 = pld_tile_create(c, PLD_FP32, 4, 6);
    switch (a->which) {
    case 0:
        pld_tile_reduce(c, a46, b64, PLD_SUM);
        break;
    case 1:
        pld_tile_reduce(c, a46, i46, PLD_MAX);
        break;
    case 2:
        pld_tile_reduce(c, a46, b46, (pld_reduce_op)4);
        break;
    case 3:
        pld_tile_reduce(c, a46, b46, (pld_reduce_op)-1);
        break;
    case 4:
        pld_tile_mul(c, a46, b64);
        break;
    case 5:
        pld_tile_mul(c, i46, a46);
        break;
    }
}

Test(tile, reduce_errors, .timeout = 30)
{
    const char *api[] = {"pld_tile_reduce", "pld_tile_reduce", "pld_tile_reduce",
                         "pld_tile_reduce", "pld_tile_mul",    "pld_tile_mul"};
    pld_world *w = tu_world(NULL);
    rerr_args *a = tu_host_alloc(w, sizeof *a);
    for (int i = 0; i < 6; i++) {
        a->which = i;
        pld_status st = pld_launch(w, k_reduce_errors, a);
        cr_expect_eq(st, PLD_ERR_ARG, "case %d: %s, expected PLD_ERR_ARG (%s)", i,
                     pld_status_name(st), pld_world_error(w));
        char prefix[64];
        snprintf(prefix, sizeof prefix, "rank 0 (device 0): %s: ", api[i]);
        TU_EXPECT_STARTS(pld_world_error(w), prefix);
    }
    pld_world_finalize(w);
}
