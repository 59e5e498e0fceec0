/* SPDX-License-Identifier: Apache-2.0 */
/* Tensor-level point-to-point: pld_put / pld_get, regions, chunking,
 * pipelining, atomic add, errors, and the per-rank counters. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

typedef struct xf_args {
    pld_dtensor data, other, big, acc, sig, sig2;
    pld_dtype dt;
    int64_t rows, cols, chunk_rows, chunk_cols;
    int pipeline;
    int use_null;
    int which;
    int iters;
    int after[8];
    pld_counters seen[8];
    float *hbuf; /* host_alloc scratch for the error cases */
    int32_t *ibuf;
} xf_args;

static pld_xfer region(const int64_t *dst, const int64_t *src, const int64_t *shape)
{
    pld_xfer x;
    memset(&x, 0, sizeof x);
    x.dst_offsets = dst;
    x.src_offsets = src;
    x.shape = shape;
    return x;
}

/* ---- whole tensors -------------------------------------------------------- */

static void k_whole(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int nxt = (me + 1) % P, prv = (me + P - 1) % P;
    float src[32], dst[32];
    for (int k = 0; k < 32; k++) {
        src[k] = (float)(me * 1000 + k);
        dst[k] = -1.0f;
    }
    pld_tensor s = pld_tensor_make(src, PLD_FP32, 2, (const int64_t[]){4, 8});
    pld_tensor d = pld_tensor_make(dst, PLD_FP32, 2, (const int64_t[]){4, 8});
    pld_xfer none;
    memset(&none, 0, sizeof none);
    pld_put(c, a->data, nxt, s, a->use_null ? NULL : &none);
    pld_barrier(c, a->sig);
    const float *mine = pld_local(c, a->data).data;
    for (int k = 0; k < 32; k++)
        KCHECK(c, mine[k] == (float)(prv * 1000 + k), "rank %d window [%d] = %g, expected %d", me,
               k, (double)mine[k], prv * 1000 + k);
    /* pull back what I pushed */
    pld_get(c, d, nxt, a->data, a->use_null ? NULL : &none);
    for (int k = 0; k < 32; k++)
        KCHECK(c, dst[k] == src[k], "rank %d got [%d] = %g, expected %g", me, k, (double)dst[k],
               (double)src[k]);
    pld_barrier(c, a->sig);
}

Test(xfer, put_get_whole_tensor, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){4, 8});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_whole, a);
    pld_world_finalize(w);
}

/* A NULL pld_xfer means "all defaults". */
Test(xfer, null_xfer_means_defaults, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){4, 8});
    a->sig = tu_signal(w, "sig", 1);
    a->use_null = 1;
    TU_LAUNCH_OK(w, k_whole, a);
    pld_world_finalize(w);
}

/* ---- sub-regions ---------------------------------------------------------- */

static void k_regions(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int nxt = (me + 1) % P, prv = (me + P - 1) % P;
    int32_t src[15], dst[16];
    for (int k = 0; k < 15; k++)
        src[k] = me * 100 + k + 1;
    memset(dst, 0, sizeof dst);
    pld_tensor s = pld_tensor_make(src, PLD_INT32, 2, (const int64_t[]){3, 5});
    pld_tensor d = pld_tensor_make(dst, PLD_INT32, 2, (const int64_t[]){4, 4});
    pld_xfer x = region(PLD_IDX(2, 4), PLD_IDX(1, 1), PLD_IDX(2, 3));
    pld_put(c, a->data, nxt, s, &x);
    pld_barrier(c, a->sig);
    const int32_t *mine = pld_local(c, a->data).data;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 10; j++) {
            int32_t want = 0;
            if (i >= 2 && i < 4 && j >= 4 && j < 7)
                want = prv * 100 + (1 + i - 2) * 5 + (1 + j - 4) + 1;
            KCHECK(c, mine[i * 10 + j] == want, "rank %d window [%d,%d] = %d, expected %d", me, i,
                   j, mine[i * 10 + j], want);
        }
    /* get the region back from the next rank into dst[1.., 0..] */
    pld_xfer y = region(PLD_IDX(1, 0), PLD_IDX(2, 4), PLD_IDX(2, 3));
    pld_get(c, d, nxt, a->data, &y);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int32_t want = 0;
            if (i >= 1 && i < 3 && j < 3)
                want = src[(1 + i - 1) * 5 + (1 + j)];
            KCHECK(c, dst[i * 4 + j] == want, "rank %d got [%d,%d] = %d, expected %d", me, i, j,
                   dst[i * 4 + j], want);
        }
    pld_barrier(c, a->sig);
}

Test(xfer, put_get_sub_regions, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_INT32, 2, (const int64_t[]){6, 10});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_regions, a);
    pld_world_finalize(w);
}

/* Mixed ndim: a 1-D [16] local against rows of a [P,16] window. */
static void k_mixed_ndim(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    float src[16], dst[16];
    for (int j = 0; j < 16; j++)
        src[j] = (float)(me * 100 + j);
    pld_tensor s = pld_tensor_make(src, PLD_FP32, 1, (const int64_t[]){16});
    pld_tensor d = pld_tensor_make(dst, PLD_FP32, 1, (const int64_t[]){16});
    for (int p = 0; p < P; p++) {
        pld_xfer x = region(PLD_IDX(me, 0), PLD_IDX(0), PLD_IDX(1, 16));
        pld_put(c, a->data, p, s, &x);
    }
    pld_barrier(c, a->sig);
    for (int p = 0; p < P; p++) {
        memset(dst, 0, sizeof dst);
        pld_xfer y = region(PLD_IDX(0), PLD_IDX(p, 0), PLD_IDX(1, 16));
        pld_get(c, d, (me + 1) % P, a->data, &y);
        for (int j = 0; j < 16; j++)
            KCHECK(c, dst[j] == (float)(p * 100 + j), "rank %d row %d [%d] = %g, expected %d", me,
                   p, j, (double)dst[j], p * 100 + j);
    }
    pld_barrier(c, a->sig);
}

Test(xfer, mixed_ndim_right_aligned_shape, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){3, 16});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_mixed_ndim, a);
    pld_world_finalize(w);
}

/* ---- chunking and pipelining --------------------------------------------- */

static double cval(pld_dtype dt, int r, int64_t i, int64_t j, int64_t cols)
{
    if (dt == PLD_FP32 || dt == PLD_INT32)
        return (double)(r * 200000 + i * cols + j);
    return (double)((i * 7 + j * 3 + r * 11) % 97);
}

static void k_chunked(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int nxt = (me + 1) % P, prv = (me + P - 1) % P;
    int64_t n = a->rows * a->cols;
    size_t es = pld_dtype_size(a->dt);
    void *src = malloc((size_t)n * es), *dst = calloc((size_t)n, es);
    KCHECK(c, src && dst, "malloc");
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++)
            tu_set(a->dt, src, i * a->cols + j, cval(a->dt, me, i, j, a->cols));
    int64_t shape[2] = {a->rows, a->cols};
    pld_tensor s = pld_tensor_make(src, a->dt, 2, shape);
    pld_tensor d = pld_tensor_make(dst, a->dt, 2, shape);
    pld_xfer x;
    memset(&x, 0, sizeof x);
    x.chunk_rows = a->chunk_rows;
    x.chunk_cols = a->chunk_cols;
    x.pipeline = a->pipeline;
    pld_put(c, a->data, nxt, s, &x);
    pld_barrier(c, a->sig);
    const void *mine = pld_local(c, a->data).data;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) {
            double got = tu_get(a->dt, mine, i * a->cols + j);
            double want = cval(a->dt, prv, i, j, a->cols);
            if (got != want) {
                free(src);
                free(dst);
                KCHECK(c, got == want, "put: rank %d window [%lld,%lld] = %g, expected %g", me,
                       (long long)i, (long long)j, got, want);
            }
        }
    pld_get(c, d, nxt, a->data, &x);
    int bad = memcmp(dst, src, (size_t)n * es) != 0;
    free(src);
    free(dst);
    KCHECK(c, !bad, "get: rank %d did not read back what it put", me);
    pld_barrier(c, a->sig);
}

static void chunked(pld_dtype dt, int64_t rows, int64_t cols, int64_t cr, int64_t cc, int pipe)
{
    pld_world *w = tu_world(NULL);
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->dt = dt;
    a->rows = rows;
    a->cols = cols;
    a->chunk_rows = cr;
    a->chunk_cols = cc;
    a->pipeline = pipe;
    a->data = tu_window(w, "data", dt, 2, (const int64_t[]){rows, cols});
    a->sig = tu_signal(w, "sig", 1);
    pld_status st = pld_launch(w, k_chunked, a);
    cr_assert_eq(st, PLD_OK, "%s [%lld,%lld] chunk %lldx%lld pipeline %d: %s (%s)",
                 pld_dtype_name(dt), (long long)rows, (long long)cols, (long long)cr, (long long)cc,
                 pipe, pld_status_name(st), pld_world_error(w));
    pld_world_finalize(w);
}

Test(xfer, chunk_rows_ragged_tail, .timeout = 30)
{
    chunked(PLD_FP32, 1000, 3, 64, 0, 0);
}
Test(xfer, chunk_rows_cols_pipeline, .timeout = 30)
{
    chunked(PLD_FP32, 1000, 3, 64, 2, 1);
}
Test(xfer, chunk_larger_than_ub, .timeout = 30)
{
    chunked(PLD_FP32, 2000, 64, 96, 48, 0);
}
Test(xfer, chunk_larger_than_ub_pipeline, .timeout = 30)
{
    chunked(PLD_FP32, 2000, 64, 96, 48, 1);
}
Test(xfer, chunk_fp16_pipeline, .timeout = 30)
{
    chunked(PLD_FP16, 300, 70, 17, 9, 1);
}
Test(xfer, chunk_int8_rows_only, .timeout = 30)
{
    chunked(PLD_INT8, 333, 5, 10, 0, 0);
}
Test(xfer, chunk_bigger_than_extent, .timeout = 30)
{
    chunked(PLD_FP32, 1000, 3, 5000, 7, 1);
}

/* chunks over a sub-region with offsets on both sides */
static void k_chunked_region(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int nxt = (me + 1) % P, prv = (me + P - 1) % P;
    float src[150 * 20];
    for (int i = 0; i < 150; i++)
        for (int j = 0; j < 20; j++)
            src[i * 20 + j] = (float)(me * 10000 + i * 20 + j);
    pld_tensor s = pld_tensor_make(src, PLD_FP32, 2, (const int64_t[]){150, 20});
    pld_xfer x = region(PLD_IDX(10, 2), PLD_IDX(3, 1), PLD_IDX(130, 17));
    x.chunk_rows = 7;
    x.chunk_cols = 4;
    x.pipeline = 1;
    pld_put(c, a->data, nxt, s, &x);
    pld_barrier(c, a->sig);
    const float *mine = pld_local(c, a->data).data;
    for (int i = 0; i < 200; i++)
        for (int j = 0; j < 40; j++) {
            float want = 0.0f;
            if (i >= 10 && i < 140 && j >= 2 && j < 19)
                want = (float)(prv * 10000 + (i - 10 + 3) * 20 + (j - 2 + 1));
            KCHECK(c, mine[i * 40 + j] == want, "rank %d window [%d,%d] = %g, expected %g", me, i,
                   j, (double)mine[i * 40 + j], (double)want);
        }
}

Test(xfer, chunked_sub_region, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){200, 40});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_chunked_region, a);
    pld_world_finalize(w);
}

/* ---- large contiguous transfers ------------------------------------------
 * A region that is one contiguous run on both sides moves in one transport
 * call, whatever its chunking; from 1 MiB on the shared-memory transports
 * copy it with streaming stores, whose head (up to the first 64-byte line of
 * the destination) and tail go through memcpy. Byte-exact at sizes around
 * the threshold, with a destination that starts inside a cache line, and
 * with the bytes around the region untouched. */
static void k_big_run(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int nxt = (me + 1) % P, prv = (me + P - 1) % P;
    int64_t n = a->cols, at = a->rows; /* rows: the destination offset */
    unsigned char *src = malloc((size_t)n + 3), *back = malloc((size_t)n);
    KCHECK(c, src && back, "malloc");
    for (int64_t i = 0; i < n + 3; i++)
        src[i] = (unsigned char)(i * 7 + me * 13 + (i >> 12));
    pld_tensor s = pld_tensor_make(src, PLD_INT8, 2, (const int64_t[]){1, n + 3});
    pld_xfer x = region(PLD_IDX(0, at), PLD_IDX(0, 3), PLD_IDX(1, n));
    x.chunk_cols = 96 * 1024; /* the UB plan; one run still moves in one call */
    pld_put(c, a->data, nxt, s, &x);
    pld_barrier(c, a->sig);
    const unsigned char *mine = pld_local(c, a->data).data;
    int64_t total = pld_tensor_numel(pld_local(c, a->data)), bad = -1;
    for (int64_t i = 0; i < total && bad < 0; i++) {
        unsigned char want =
            i >= at && i < at + n
                ? (unsigned char)((i - at + 3) * 7 + prv * 13 + ((i - at + 3) >> 12))
                : 0;
        if (mine[i] != want)
            bad = i;
    }
    if (bad >= 0) {
        free(src);
        free(back);
        KCHECK(c, bad < 0, "rank %d: %lld-byte put at offset %lld: window byte %lld wrong", me,
               (long long)n, (long long)at, (long long)bad);
    }
    pld_tensor b = pld_tensor_make(back, PLD_INT8, 2, (const int64_t[]){1, n});
    pld_xfer y = region(PLD_IDX(0, 0), PLD_IDX(0, at), PLD_IDX(1, n));
    y.chunk_cols = 96 * 1024;
    pld_get(c, b, nxt, a->data, &y);
    int differs = memcmp(back, src + 3, (size_t)n) != 0;
    free(src);
    free(back);
    KCHECK(c, !differs, "rank %d: %lld-byte get did not read back what it put", me, (long long)n);
    pld_barrier(c, a->sig);
}

static void big_run(int64_t bytes, int64_t at)
{
    pld_world *w = tu_world(NULL);
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->cols = bytes;
    a->rows = at;
    a->data = tu_window(w, "data", PLD_INT8, 2, (const int64_t[]){1, bytes + 200});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_big_run, a);
    pld_world_finalize(w);
}

Test(xfer, big_run_below_stream_threshold, .timeout = 60)
{
    big_run((1 << 20) - 1, 0);
}
Test(xfer, big_run_at_stream_threshold_misaligned, .timeout = 60)
{
    big_run(1 << 20, 37);
}
Test(xfer, big_run_streamed_odd_size, .timeout = 60)
{
    big_run((3 << 20) + 13, 101);
}

/* ---- atomic add put ------------------------------------------------------ */

static void k_atomic_put(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c);
    float src[8 * 16];
    int32_t isrc[8 * 16];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++) {
            src[i * 16 + j] = (float)((me + 1) * (j + 1));
            isrc[i * 16 + j] = (me + 1) * (j + 1) * (i + 1);
        }
    pld_tensor s = pld_tensor_make(src, PLD_FP32, 2, (const int64_t[]){8, 16});
    pld_tensor is = pld_tensor_make(isrc, PLD_INT32, 2, (const int64_t[]){8, 16});
    pld_xfer x;
    memset(&x, 0, sizeof x);
    x.atomic = PLD_ATOMIC_ADD;
    pld_xfer xc = x;
    xc.chunk_rows = 3;
    xc.chunk_cols = 5;
    xc.pipeline = 1;
    for (int it = 0; it < a->iters; it++) {
        pld_put(c, a->acc, 0, s, (it % 2) ? &xc : &x);
        pld_put(c, a->other, 0, is, (it % 2) ? &x : &xc);
    }
}

Test(xfer, atomic_add_put, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->acc = tu_window(w, "acc", PLD_FP32, 2, (const int64_t[]){8, 16});
    a->other = tu_window(w, "iacc", PLD_INT32, 2, (const int64_t[]){8, 16});
    a->iters = 10;
    TU_LAUNCH_OK(w, k_atomic_put, a);
    for (int r = 0; r < 4; r++) {
        const float *f = tu_view(w, a->acc, r).data;
        const int32_t *q = tu_view(w, a->other, r).data;
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 16; j++) {
                float fw = r == 0 ? (float)(10 * 10 * (j + 1)) : 0.0f;
                int32_t iw = r == 0 ? 10 * 10 * (j + 1) * (i + 1) : 0;
                cr_assert_eq(f[i * 16 + j], fw, "rank %d acc[%d,%d] = %g, expected %g", r, i, j,
                             (double)f[i * 16 + j], (double)fw);
                cr_assert_eq(q[i * 16 + j], iw, "rank %d iacc[%d,%d] = %d, expected %d", r, i, j,
                             q[i * 16 + j], iw);
            }
    }
    pld_world_finalize(w);
}

/* ---- legal self transfers ----------------------------------------------- */

static void k_self_ok(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    pld_tensor loc = pld_local(c, a->data);
    float *d = loc.data;
    for (int k = 0; k < 16; k++)
        d[k] = (float)(me * 100 + k); /* rows 0-1 */
    /* rows 0-1 -> rows 2-3 of my own window: disjoint, legal */
    pld_xfer x = region(PLD_IDX(2, 0), PLD_IDX(0, 0), PLD_IDX(2, 8));
    pld_put(c, a->data, me, loc, &x);
    for (int k = 0; k < 16; k++)
        KCHECK(c, d[16 + k] == (float)(me * 100 + k), "rank %d row %d [%d] = %g", me, 2 + k / 8,
               k % 8, (double)d[16 + k]);
    /* the same window as source and the peer's as destination: legal too */
    pld_xfer y = region(PLD_IDX(0, 0), PLD_IDX(0, 0), PLD_IDX(2, 8));
    pld_put(c, a->other, (me + 1) % P, loc, &y);
    /* get from self into a disjoint part of the same window */
    pld_xfer z = region(PLD_IDX(4, 0), PLD_IDX(0, 0), PLD_IDX(1, 8));
    pld_get(c, loc, me, a->data, &z);
    for (int k = 0; k < 8; k++)
        KCHECK(c, d[32 + k] == (float)(me * 100 + k), "rank %d row 4 [%d] = %g", me, k,
               (double)d[32 + k]);
}

Test(xfer, self_transfers_without_overlap, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){5, 8});
    a->other = tu_window(w, "other", PLD_FP32, 2, (const int64_t[]){5, 8});
    TU_LAUNCH_OK(w, k_self_ok, a);
    pld_world_finalize(w);
}

/* ---- errors --------------------------------------------------------------- */

static void k_xfer_errors(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    if (me == 0) {
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
        a->after[0] = 1;
        return;
    }
    float *buf = a->hbuf;
    int32_t *ibuf = a->ibuf;
    pld_tensor l48 = pld_tensor_make(buf, PLD_FP32, 2, (const int64_t[]){4, 8});
    pld_tensor l49 = pld_tensor_make(buf, PLD_FP32, 2, (const int64_t[]){4, 9});
    pld_tensor i48 = pld_tensor_make(ibuf, PLD_INT32, 2, (const int64_t[]){4, 8});
    pld_tensor lbig = pld_tensor_make(buf, PLD_FP32, 2, (const int64_t[]){512, 128});
    pld_tensor l16 = pld_tensor_make(buf, PLD_FP32, 1, (const int64_t[]){16});
    pld_tensor loc = pld_local(c, a->data);
    pld_xfer x;
    memset(&x, 0, sizeof x);
    switch (a->which) {
    case 0:
        x.dst_offsets = PLD_IDX(0, 0);
        pld_put(c, a->data, 0, l48, &x);
        break;
    case 1:
        x.dst_offsets = PLD_IDX(0, 0);
        x.src_offsets = PLD_IDX(0, 0);
        pld_put(c, a->data, 0, l48, &x);
        break;
    case 2:
        x.shape = PLD_IDX(1, 8);
        pld_get(c, l48, 0, a->data, &x);
        break;
    case 3:
        x.chunk_rows = 8;
        x.pipeline = 1;
        pld_put(c, a->data, 0, l48, &x);
        break;
    case 4:
        x.pipeline = 1;
        pld_get(c, l48, 0, a->data, &x);
        break;
    case 5:
        pld_put(c, a->big, 0, lbig, &x);
        break;
    case 6:
        pld_get(c, lbig, 0, a->big, &x);
        break;
    case 7:
        pld_put(c, a->data, 0, l49, &x);
        break;
    case 8:
        pld_put(c, a->data, 0, i48, &x);
        break;
    case 9:
        x = region(PLD_IDX(3, 0), PLD_IDX(0, 0), PLD_IDX(2, 8));
        pld_put(c, a->data, 0, l48, &x);
        break;
    case 10:
        x = region(PLD_IDX(0, 0), PLD_IDX(3, 0), PLD_IDX(2, 8));
        pld_put(c, a->data, 0, l48, &x);
        break;
    case 11:
        x = region(PLD_IDX(0, 0), PLD_IDX(0, 5), PLD_IDX(1, 4));
        pld_get(c, l48, 0, a->data, &x);
        break;
    case 12:
        x = region(PLD_IDX(1, 0), PLD_IDX(0, 0), PLD_IDX(2, 8));
        pld_put(c, a->data, me, loc, &x);
        break;
    case 13:
        x = region(PLD_IDX(0, 0), PLD_IDX(1, 0), PLD_IDX(2, 8));
        pld_get(c, loc, me, a->data, &x);
        break;
    case 14:
        x = region(PLD_IDX(1, 2), PLD_IDX(1, 2), PLD_IDX(2, 3));
        pld_put(c, a->data, me, loc, &x);
        break;
    case 15:
        pld_put(c, a->data, P, l48, &x);
        break;
    case 16:
        x.atomic = (pld_atomic)5;
        pld_put(c, a->data, 0, l48, &x);
        break;
    case 17:
        x = region(PLD_IDX(0, 0), PLD_IDX(0), PLD_IDX(2, 16));
        pld_put(c, a->other, 0, l16, &x);
        break;
    case 18:
        x = region(PLD_IDX(0), PLD_IDX(0, 0), PLD_IDX(1, 8));
        pld_put(c, a->data, 0, l48, &x);
        break;
    case 19:
        pld_get(c, l49, 0, a->data, &x);
        break;
    case 20:
        pld_get(c, i48, 0, a->data, &x);
        break;
    case 21:
        x.chunk_cols = 4;
        x.pipeline = 1;
        pld_get(c, l48, 0, a->data, &x);
        break;
    }
    a->after[1] = 1;
}

Test(xfer, errors, .timeout = 60)
{
    const struct {
        pld_status st;
        const char *api;
        const char *needle; /* must appear in the message */
        const char *needle2;
    } cases[] = {
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 0 only dst_offsets */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 1 no shape */
        {PLD_ERR_ARG, "pld_get", NULL, NULL},           /* 2 only shape */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 3 pipeline, rows only */
        {PLD_ERR_ARG, "pld_get", NULL, NULL},           /* 4 pipeline, no chunks */
        {PLD_ERR_NOMEM, "pld_put", "chunk_rows", NULL}, /* 5 256 KiB unchunked */
        {PLD_ERR_NOMEM, "pld_get", "chunk_rows", NULL}, /* 6 */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 7 shape [4,9] vs [4,8] */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 8 int32 vs fp32 */
        {PLD_ERR_BOUNDS, "pld_put", "'data'", "[4,8]"}, /* 9 dst region */
        {PLD_ERR_BOUNDS, "pld_put", NULL, NULL},        /* 10 src region */
        {PLD_ERR_BOUNDS, "pld_get", "'data'", "[4,8]"}, /* 11 src window region */
        {PLD_ERR_ALIAS, "pld_put", NULL, NULL},         /* 12 overlapping self put */
        {PLD_ERR_ALIAS, "pld_get", NULL, NULL},         /* 13 overlapping self get */
        {PLD_ERR_ALIAS, "pld_put", NULL, NULL},         /* 14 identical region */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 15 peer == P */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 16 bad atomic */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 17 leading extent 2 vs 1-D */
        {PLD_ERR_ARG, "pld_put", NULL, NULL},           /* 18 offsets count */
        {PLD_ERR_ARG, "pld_get", NULL, NULL},           /* 19 shape mismatch */
        {PLD_ERR_ARG, "pld_get", NULL, NULL},           /* 20 dtype mismatch */
        {PLD_ERR_ARG, "pld_get", NULL, NULL},           /* 21 pipeline, cols only */
    };
    pld_world *w = tu_world(NULL);
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){4, 8});
    a->other = tu_window(w, "wide", PLD_FP32, 2, (const int64_t[]){4, 16});
    a->big = tu_window(w, "big", PLD_FP32, 2, (const int64_t[]){512, 128});
    a->sig = tu_signal(w, "sig", 1);
    a->hbuf = tu_host_alloc(w, 512 * 128 * sizeof(float));
    a->ibuf = tu_host_alloc(w, 32 * sizeof(int32_t));
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        a->which = i;
        a->after[0] = a->after[1] = 0;
        pld_status st = pld_launch(w, k_xfer_errors, a);
        cr_expect_eq(st, cases[i].st, "case %d: %s, expected %s (%s)", i, pld_status_name(st),
                     pld_status_name(cases[i].st), pld_world_error(w));
        const char *msg = pld_world_error(w);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "rank 1 (device 1): %s: ", cases[i].api);
        TU_EXPECT_STARTS(msg, prefix);
        if (cases[i].needle)
            TU_EXPECT_CONTAINS(msg, cases[i].needle);
        if (cases[i].needle2)
            TU_EXPECT_CONTAINS(msg, cases[i].needle2);
        cr_expect_eq(a->after[0] + a->after[1], 0, "case %d: a kernel went on after the abort", i);
        for (int r = 0; r < 2; r++) {
            const float *d = tu_view(w, a->data, r).data;
            for (int k = 0; k < 32; k++)
                cr_assert_eq(d[k], 0.0f, "case %d: rank %d data[%d] = %g after a failed call", i, r,
                             k, (double)d[k]);
        }
    }
    pld_world_finalize(w);
}

/* ---- counters ------------------------------------------------------------- */

static void k_counters(pld_ctx *c, void *arg)
{
    xf_args *a = arg;
    int me = pld_rank(c), peer = 1 - me;
    float l48[32] = {0}, l28[16] = {0}, l18[8], l103[30] = {0}, l13[3];
    /* 1. whole put to the peer: 128 bytes out */
    pld_put(c, a->data, peer, pld_tensor_make(l48, PLD_FP32, 2, (const int64_t[]){4, 8}), NULL);
    /* 2. [2,8] into my own 'other' window: 64 bytes self */
    pld_xfer x = region(PLD_IDX(2, 0), PLD_IDX(0, 0), PLD_IDX(2, 8));
    pld_put(c, a->other, me, pld_tensor_make(l28, PLD_FP32, 2, (const int64_t[]){2, 8}), &x);
    /* 3. [1,4] tile into the peer's 'other': 16 bytes out */
    pld_tile *t14 = pld_tile_create(c, PLD_FP32, 1, 4);
    pld_remote_store(c, t14, a->other, peer, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
    /* 4./5. one notify, one wait (rank 1 makes rank 0 wait >= 50 ms) */
    if (me == 1)
        tu_sleep_ms(60);
    pld_notify(c, a->sig, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    pld_wait(c, a->sig, PLD_IDX(peer, 0), 1, PLD_WAIT_GE);
    /* 6. get [1,8] from the peer: 32 bytes in */
    pld_xfer y = region(PLD_IDX(0, 0), PLD_IDX(0, 0), PLD_IDX(1, 8));
    pld_get(c, pld_tensor_make(l18, PLD_FP32, 2, (const int64_t[]){1, 8}), peer, a->data, &y);
    /* 7. [2,2] tile from the peer: 16 bytes in */
    pld_tile *t22 = pld_tile_create(c, PLD_FP32, 2, 2);
    pld_remote_load(c, t22, a->data, peer, PLD_IDX(0, 0));
    /* 8. [1,2] tile from myself: 8 bytes self */
    pld_tile *t12 = pld_tile_create(c, PLD_FP32, 1, 2);
    pld_remote_load(c, t12, a->other, me, PLD_IDX(2, 0));
    /* 9. notify + wait on myself */
    pld_notify(c, a->sig2, me, PLD_IDX(me, 0), 1, PLD_NOTIFY_SET);
    pld_wait(c, a->sig2, PLD_IDX(me, 0), 1, PLD_WAIT_EQ);
    /* 10. atomic [1,4] put to the peer: 16 bytes out */
    pld_xfer z;
    memset(&z, 0, sizeof z);
    z.atomic = PLD_ATOMIC_ADD;
    pld_put(c, a->acc, peer, pld_tensor_make(l48, PLD_FP32, 2, (const int64_t[]){1, 4}), &z);
    /* 11. chunked [10,3] put to the peer: 120 bytes out, counted once */
    pld_xfer ch;
    memset(&ch, 0, sizeof ch);
    ch.chunk_rows = 4;
    pld_put(c, a->big, peer, pld_tensor_make(l103, PLD_FP32, 2, (const int64_t[]){10, 3}), &ch);
    /* 12. [1,3] get from my own 'other': 12 bytes self */
    pld_xfer g = region(PLD_IDX(0, 0), PLD_IDX(3, 0), PLD_IDX(1, 3));
    pld_get(c, pld_tensor_make(l13, PLD_FP32, 2, (const int64_t[]){1, 3}), me, a->other, &g);
    a->seen[me] = pld_ctx_counters(c);
}

static void k_nothing(pld_ctx *c, void *arg)
{
    (void)c;
    (void)arg;
}

Test(xfer, counters_exact, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    xf_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){4, 8});
    a->other = tu_window(w, "other", PLD_FP32, 2, (const int64_t[]){4, 8});
    a->acc = tu_window(w, "acc", PLD_FP32, 2, (const int64_t[]){1, 4});
    a->big = tu_window(w, "big", PLD_FP32, 2, (const int64_t[]){10, 3});
    a->sig = tu_signal(w, "sig", 1);
    a->sig2 = tu_signal(w, "sig2", 1);
    TU_LAUNCH_OK(w, k_counters, a);
    for (int r = 0; r < 2; r++) {
        pld_counters k;
        TU_ASSERT_STATUS(pld_rank_counters(w, r, &k), PLD_OK);
        const pld_counters *in = &a->seen[r];
        cr_expect_eq(k.bytes_to_peers, 280, "rank %d bytes_to_peers %llu, expected 280", r,
                     (unsigned long long)k.bytes_to_peers);
        cr_expect_eq(k.bytes_from_peers, 48, "rank %d bytes_from_peers %llu, expected 48", r,
                     (unsigned long long)k.bytes_from_peers);
        cr_expect_eq(k.bytes_self, 84, "rank %d bytes_self %llu, expected 84", r,
                     (unsigned long long)k.bytes_self);
        cr_expect_eq(k.notifies, 2, "rank %d notifies %llu, expected 2", r,
                     (unsigned long long)k.notifies);
        cr_expect_eq(k.waits, 2, "rank %d waits %llu, expected 2", r, (unsigned long long)k.waits);
        /* one per put, get, remote_store / remote_load, whatever its shape
         * or chunking (1-3, 6-8, 10-12), the self path included */
        cr_expect_eq(k.transfers, 9, "rank %d transfers %llu, expected 9", r,
                     (unsigned long long)k.transfers);
        /* the kernel-side view at the end equals the host-side one */
        cr_expect_eq(in->bytes_to_peers, k.bytes_to_peers, "rank %d in-kernel to_peers %llu", r,
                     (unsigned long long)in->bytes_to_peers);
        cr_expect_eq(in->bytes_from_peers, k.bytes_from_peers, "rank %d in-kernel from_peers %llu",
                     r, (unsigned long long)in->bytes_from_peers);
        cr_expect_eq(in->bytes_self, k.bytes_self, "rank %d in-kernel self %llu", r,
                     (unsigned long long)in->bytes_self);
        cr_expect_eq(in->notifies, k.notifies);
        cr_expect_eq(in->transfers, k.transfers);
        cr_expect_eq(in->waits, k.waits);
    }
    pld_counters k0;
    TU_ASSERT_STATUS(pld_rank_counters(w, 0, &k0), PLD_OK);
    cr_expect_geq(k0.wait_ns, 30000000ull, "rank 0 waited ~60 ms but wait_ns = %llu",
                  (unsigned long long)k0.wait_ns);

    pld_counters bad;
    TU_ASSERT_STATUS(pld_rank_counters(w, 2, &bad), PLD_ERR_ARG);
    TU_ASSERT_STATUS(pld_rank_counters(w, -1, &bad), PLD_ERR_ARG);

    /* counted from the start of each launch */
    TU_LAUNCH_OK(w, k_nothing, NULL);
    for (int r = 0; r < 2; r++) {
        pld_counters k;
        TU_ASSERT_STATUS(pld_rank_counters(w, r, &k), PLD_OK);
        cr_expect(k.bytes_to_peers == 0 && k.bytes_from_peers == 0 && k.bytes_self == 0 &&
                      k.notifies == 0 && k.waits == 0,
                  "rank %d: counters not reset by a new launch (to %llu from %llu self %llu "
                  "notifies %llu waits %llu)",
                  r, (unsigned long long)k.bytes_to_peers, (unsigned long long)k.bytes_from_peers,
                  (unsigned long long)k.bytes_self, (unsigned long long)k.notifies,
                  (unsigned long long)k.waits);
    }
    pld_world_finalize(w);
}
