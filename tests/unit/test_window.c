/* SPDX-License-Identifier: Apache-2.0 */
/* Window buffers, views, reset, pld_local, host views and host memory. */
#include "test_util.h"

/* ---- allocation and views (host side) ---------------------------------- */

Test(window, alloc_name_size_and_zeroed, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 1000, "scratch", &buf), PLD_OK);
    cr_assert_not_null(buf);
    cr_expect_str_eq(pld_window_buffer_name(buf), "scratch");
    cr_expect_eq(pld_window_buffer_size(buf), 1000, "size %zu, expected 1000",
                 pld_window_buffer_size(buf));
    pld_dtensor t;
    TU_ASSERT_STATUS(pld_window(buf, PLD_UINT8, 1, (const int64_t[]){1000}, &t), PLD_OK);
    cr_expect_eq(t.buf, buf);
    cr_expect_eq(t.dtype, PLD_UINT8);
    cr_expect_eq(t.ndim, 1);
    cr_expect_eq(t.shape[0], 1000);
    for (int r = 0; r < 3; r++) {
        pld_tensor v = tu_view(w, t, r);
        cr_expect_eq(v.ndim, 1);
        cr_expect_eq(v.shape[0], 1000);
        const uint8_t *p = v.data;
        for (int i = 0; i < 1000; i++)
            cr_assert_eq(p[i], 0, "rank %d byte %d = %u, expected 0", r, i, p[i]);
    }
    pld_free_window_buffer(w, buf);
    pld_world_finalize(w);
}

Test(window, view_must_fit, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 1000, "data", &buf), PLD_OK);
    pld_dtensor t;
    /* exact fits */
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 1, (const int64_t[]){250}, &t), PLD_OK);
    TU_ASSERT_STATUS(pld_window(buf, PLD_INT64, 2, (const int64_t[]){5, 25}, &t), PLD_OK);
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP16, 4, (const int64_t[]){2, 5, 5, 10}, &t), PLD_OK);
    TU_ASSERT_STATUS(pld_window(buf, PLD_INT32, 2, (const int64_t[]){3, 10}, &t), PLD_OK);

    /* one element too many */
    const struct {
        pld_dtype dt;
        int ndim;
        int64_t shape[4];
    } big[] = {
        {PLD_FP32, 1, {251}},
        {PLD_INT64, 2, {5, 26}},
        {PLD_UINT8, 2, {10, 101}},
        {PLD_FP64, 3, {5, 5, 6}},
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        pld_dtensor out;
        memset(&out, 0x5a, sizeof out);
        pld_dtensor before = out;
        pld_status st = pld_window(buf, big[i].dt, big[i].ndim, big[i].shape, &out);
        cr_expect(st == PLD_ERR_BOUNDS || st == PLD_ERR_ARG,
                  "view %zu (%s, %lld elements) on 1000 bytes: %s, expected BOUNDS or ARG", i,
                  pld_dtype_name(big[i].dt),
                  (long long)(big[i].shape[0] * (big[i].ndim > 1 ? big[i].shape[1] : 1) *
                              (big[i].ndim > 2 ? big[i].shape[2] : 1)),
                  pld_status_name(st));
        cr_expect(memcmp(&out, &before, sizeof out) == 0, "view %zu: *out written on failure", i);
    }
    pld_world_finalize(w);
}

Test(window, bad_views_are_arg_errors, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 4096, "data", &buf), PLD_OK);
    pld_dtensor t;
    const int64_t s2[] = {4, 8};
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 0, s2, &t), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, -1, s2, &t), PLD_ERR_ARG);
    TU_ASSERT_STATUS(
        pld_window(buf, PLD_FP32, PLD_MAX_DIMS + 1, (const int64_t[]){1, 1, 1, 1, 1}, &t),
        PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 2, (const int64_t[]){0, 8}, &t), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 2, (const int64_t[]){4, -8}, &t), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 3, (const int64_t[]){2, 0, 2}, &t), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window(buf, (pld_dtype)PLD_DTYPE_COUNT, 2, s2, &t), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window(buf, (pld_dtype)-1, 2, s2, &t), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window(NULL, PLD_FP32, 2, s2, &t), PLD_ERR_ARG);
    /* and a good one still works afterwards */
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 2, s2, &t), PLD_OK);
    pld_world_finalize(w);
}

/* ---- kernels ------------------------------------------------------------ */

typedef struct fill_args {
    pld_dtensor data;
    pld_dtensor other;
    pld_dtensor sig;
    int base;
} fill_args;

/* data[i] = base + rank*1000 + i on every rank (any shape, INT32) */
static void k_fill(pld_ctx *c, void *arg)
{
    const fill_args *a = arg;
    pld_tensor t = pld_local(c, a->data);
    int32_t *p = t.data;
    int64_t n = pld_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        p[i] = a->base + pld_rank(c) * 1000 + (int32_t)i;
}

static void k_expect_filled(pld_ctx *c, void *arg)
{
    const fill_args *a = arg;
    pld_tensor t = pld_local(c, a->data);
    const int32_t *p = t.data;
    int64_t n = pld_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        KCHECK_EQ_I(c, p[i], a->base + pld_rank(c) * 1000 + (int32_t)i);
}

static void k_expect_zero(pld_ctx *c, void *arg)
{
    const fill_args *a = arg;
    pld_tensor t = pld_local(c, a->data);
    const unsigned char *p = t.data;
    size_t bytes = (size_t)pld_tensor_numel(t) * pld_dtype_size(t.dtype);
    for (size_t i = 0; i < bytes; i++)
        KCHECK(c, p[i] == 0, "rank %d: byte %zu of '%s' is %u after alloc/reset", pld_rank(c), i,
               pld_window_buffer_name(a->data.buf), p[i]);
}

Test(window, zeroed_in_kernel_and_contents_persist, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    fill_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_INT32, 3, (const int64_t[]){2, 3, 5});
    a->base = 7;
    TU_LAUNCH_OK(w, k_expect_zero, a);
    TU_LAUNCH_OK(w, k_fill, a);
    /* the next launch sees what the previous one left */
    TU_LAUNCH_OK(w, k_expect_filled, a);
    a->base = 8; /* and the check can fail */
    pld_status st = pld_launch(w, k_expect_filled, a);
    cr_expect_eq(st, PLD_ERR_CHECK, "checking wrong contents gave %s", pld_status_name(st));
    pld_world_finalize(w);
}

Test(window, reset_zeroes_every_rank_and_only_that_buffer, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    fill_args *a = tu_host_alloc(w, sizeof *a);
    fill_args *b = tu_host_alloc(w, sizeof *b);
    a->data = tu_window(w, "a", PLD_INT32, 2, (const int64_t[]){4, 6});
    b->data = tu_window(w, "b", PLD_INT32, 2, (const int64_t[]){4, 6});
    a->base = 1;
    b->base = 5;
    TU_LAUNCH_OK(w, k_fill, a);
    TU_LAUNCH_OK(w, k_fill, b);
    for (int r = 0; r < 3; r++) {
        pld_tensor v = tu_view(w, a->data, r);
        const int32_t *p = v.data;
        for (int i = 0; i < 24; i++)
            cr_assert_eq(p[i], 1 + r * 1000 + i, "host view of 'a' rank %d [%d] = %d, expected %d",
                         r, i, p[i], 1 + r * 1000 + i);
    }
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->data.buf), PLD_OK);
    for (int r = 0; r < 3; r++) {
        pld_tensor v = tu_view(w, a->data, r);
        const int32_t *p = v.data;
        for (int i = 0; i < 24; i++)
            cr_assert_eq(p[i], 0, "after reset 'a' rank %d [%d] = %d, expected 0", r, i, p[i]);
    }
    TU_LAUNCH_OK(w, k_expect_zero, a);
    TU_LAUNCH_OK(w, k_expect_filled, b); /* the other buffer is untouched */
    pld_world_finalize(w);
}

/* Buffers do not overlap: filling one leaves its neighbours zero. */
Test(window, buffers_are_independent, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    fill_args *a = tu_host_alloc(w, sizeof *a);
    fill_args *z1 = tu_host_alloc(w, sizeof *z1);
    fill_args *z2 = tu_host_alloc(w, sizeof *z2);
    z1->data = tu_window(w, "before", PLD_INT32, 1, (const int64_t[]){17});
    a->data = tu_window(w, "middle", PLD_INT32, 1, (const int64_t[]){33});
    z2->data = tu_window(w, "after", PLD_INT32, 1, (const int64_t[]){9});
    a->base = 3;
    TU_LAUNCH_OK(w, k_fill, a);
    TU_LAUNCH_OK(w, k_expect_zero, z1);
    TU_LAUNCH_OK(w, k_expect_zero, z2);
    TU_LAUNCH_OK(w, k_expect_filled, a);
    pld_world_finalize(w);
}

Test(window, freed_buffer_realloc_is_zeroed, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    fill_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_INT32, 1, (const int64_t[]){64});
    a->base = 11;
    TU_LAUNCH_OK(w, k_fill, a);
    pld_free_window_buffer(w, a->data.buf);
    a->data = tu_window(w, "data2", PLD_INT32, 1, (const int64_t[]){64});
    TU_LAUNCH_OK(w, k_expect_zero, a);
    pld_world_finalize(w);
}

/* Two views of one buffer alias the same bytes. */
typedef struct alias_args {
    pld_dtensor v2d, v1d;
} alias_args;

static void k_alias_views(pld_ctx *c, void *arg)
{
    const alias_args *a = arg;
    pld_tensor t2 = pld_local(c, a->v2d);
    pld_tensor t1 = pld_local(c, a->v1d);
    KCHECK(c, t2.data == t1.data, "two views of one buffer have different local data");
    ((int32_t *)t2.data)[1 * 4 + 2] = 77;
    KCHECK_EQ_I(c, ((int32_t *)t1.data)[6], 77);
}

Test(window, views_of_one_buffer_alias, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 8 * sizeof(int32_t), "v", &buf), PLD_OK);
    alias_args *a = tu_host_alloc(w, sizeof *a);
    TU_ASSERT_STATUS(pld_window(buf, PLD_INT32, 2, (const int64_t[]){2, 4}, &a->v2d), PLD_OK);
    TU_ASSERT_STATUS(pld_window(buf, PLD_INT32, 1, (const int64_t[]){8}, &a->v1d), PLD_OK);
    TU_LAUNCH_OK(w, k_alias_views, a);
    pld_world_finalize(w);
}

/* ---- pld_local is this rank's slice: the one its peers reach ------------- */

typedef struct local_args {
    pld_dtensor data, sig;
    int64_t shape_seen[8][PLD_MAX_DIMS];
    int ndim_seen[8];
    int dtype_seen[8];
} local_args;

static void k_local_is_own_slice(pld_ctx *c, void *arg)
{
    local_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    pld_tensor t = pld_local(c, a->data);
    a->ndim_seen[me] = t.ndim;
    a->dtype_seen[me] = (int)t.dtype;
    for (int d = 0; d < PLD_MAX_DIMS && d < t.ndim; d++)
        a->shape_seen[me][d] = t.shape[d];
    float *p = t.data;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 16; j++)
            p[i * 16 + j] = (float)(me * 1000 + i * 16 + j);
    pld_barrier(c, a->sig);
    /* read every rank's slice (own included) through RMA */
    pld_tile *tl = pld_tile_create(c, PLD_FP32, 4, 16);
    for (int peer = 0; peer < P; peer++) {
        pld_remote_load(c, tl, a->data, peer, PLD_IDX(0, 0));
        const float *q = pld_tile_data(tl);
        for (int k = 0; k < 64; k++)
            KCHECK(c, q[k] == (float)(peer * 1000 + k),
                   "rank %d read peer %d [%d] = %g, expected %d", me, peer, k, (double)q[k],
                   peer * 1000 + k);
    }
    pld_barrier(c, a->sig);
}

Test(window, local_gives_own_slice, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    local_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){4, 16});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_local_is_own_slice, a);
    for (int r = 0; r < 4; r++) {
        cr_expect_eq(a->ndim_seen[r], 2, "rank %d: local ndim %d", r, a->ndim_seen[r]);
        cr_expect_eq(a->dtype_seen[r], PLD_FP32, "rank %d: local dtype %d", r, a->dtype_seen[r]);
        cr_expect(a->shape_seen[r][0] == 4 && a->shape_seen[r][1] == 16,
                  "rank %d: local shape [%lld,%lld], expected [4,16]", r,
                  (long long)a->shape_seen[r][0], (long long)a->shape_seen[r][1]);
        /* the host view of rank r shows what rank r wrote into its local */
        pld_tensor v = tu_view(w, a->data, r);
        cr_expect_eq(v.ndim, 2);
        cr_expect(v.shape[0] == 4 && v.shape[1] == 16, "host view shape [%lld,%lld]",
                  (long long)v.shape[0], (long long)v.shape[1]);
        const float *p = v.data;
        for (int k = 0; k < 64; k++)
            cr_assert_eq(p[k], (float)(r * 1000 + k), "host view rank %d [%d] = %g, expected %d", r,
                         k, (double)p[k], r * 1000 + k);
    }
    pld_world_finalize(w);
}

Test(window, host_view_rank_out_of_range, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_dtensor t = tu_window(w, "data", PLD_FP32, 1, (const int64_t[]){8});
    pld_tensor v;
    TU_ASSERT_STATUS(pld_window_host_view(w, t, 2, &v), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_window_host_view(w, t, -1, &v), PLD_ERR_ARG);
    pld_world_finalize(w);
}

/* ---- host memory -------------------------------------------------------- */

typedef struct host_args {
    int32_t *in;   /* host_alloc, written by the host */
    int64_t *sums; /* host_alloc, one per rank */
    float *out;    /* host_alloc [P, 8], written through pld_store */
} host_args;

static void k_host_memory(pld_ctx *c, void *arg)
{
    host_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int64_t s = 0;
    for (int i = 0; i < 64; i++)
        s += a->in[i];
    a->sums[me] = s;
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 8);
    float *d = pld_tile_data(t);
    for (int j = 0; j < 8; j++)
        d[j] = (float)(me * 10 + j);
    pld_tensor out = pld_tensor_make(a->out, PLD_FP32, 2, (const int64_t[]){P, 8});
    pld_store(c, t, out, PLD_IDX(me, 0));
}

Test(window, host_alloc_visible_in_kernel, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    host_args *a = tu_host_alloc(w, sizeof *a);
    a->in = tu_host_alloc(w, 64 * sizeof(int32_t));
    a->sums = tu_host_alloc(w, 3 * sizeof(int64_t));
    a->out = tu_host_alloc(w, 3 * 8 * sizeof(float));
    int64_t want = 0;
    for (int i = 0; i < 64; i++) {
        a->in[i] = i * 3 - 50;
        want += a->in[i];
    }
    TU_LAUNCH_OK(w, k_host_memory, a);
    for (int r = 0; r < 3; r++) {
        cr_expect_eq(a->sums[r], want, "rank %d summed %lld, expected %lld", r,
                     (long long)a->sums[r], (long long)want);
        for (int j = 0; j < 8; j++)
            cr_expect_eq(a->out[r * 8 + j], (float)(r * 10 + j), "out[%d][%d] = %g, expected %d", r,
                         j, (double)a->out[r * 8 + j], r * 10 + j);
    }
    pld_host_free(w, a->in);
    pld_host_free(w, a->sums);
    pld_host_free(w, a->out);
    pld_host_free(w, a);
    pld_world_finalize(w);
}
