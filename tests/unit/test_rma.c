/* SPDX-License-Identifier: Apache-2.0 */
/* Tile-level RMA: pld_remote_load / pld_remote_store on N-D windows,
 * ring shift, the identity path, atomic add, and errors. */
#include <stdio.h>

#include "test_util.h"

typedef struct rma_args {
    pld_dtensor data, out, sig;
    pld_dtype dt;
    int iters;
    int which;
    int after[8];
} rma_args;

/* ---- 2-D ---------------------------------------------------------------- */

static void k_rma_2d(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    float *d = pld_local(c, a->data).data;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            d[i * 8 + j] = (float)(me * 1000 + i * 10 + j);
    pld_barrier(c, a->sig);

    pld_tile *t = pld_tile_create(c, PLD_FP32, 2, 3);
    pld_tile *row = pld_tile_create(c, PLD_FP32, 1, 8);
    for (int p = 0; p < P; p++) {
        pld_remote_load(c, t, a->data, p, PLD_IDX(1, 2));
        const float *q = pld_tile_data(t);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                KCHECK(c, q[i * 3 + j] == (float)(p * 1000 + (1 + i) * 10 + (2 + j)),
                       "rank %d: peer %d [%d,%d] = %g, expected %d", me, p, 1 + i, 2 + j,
                       (double)q[i * 3 + j], p * 1000 + (1 + i) * 10 + (2 + j));
        pld_remote_load(c, row, a->data, p, PLD_IDX(3, 0));
        const float *r = pld_tile_data(row);
        for (int j = 0; j < 8; j++)
            KCHECK(c, r[j] == (float)(p * 1000 + 30 + j), "rank %d: peer %d row 3 [%d] = %g", me, p,
                   j, (double)r[j]);
    }

    /* store a [2,2] tile into the next rank's 'out' at [1, 2*me] */
    pld_tile *s = pld_tile_create(c, PLD_FP32, 2, 2);
    float *sd = pld_tile_data(s);
    for (int k = 0; k < 4; k++)
        sd[k] = (float)(100 * me + k + 1);
    pld_remote_store(c, s, a->out, (me + 1) % P, PLD_IDX(1, 2 * me), PLD_ATOMIC_NONE);
    pld_barrier(c, a->sig);
}

Test(rma, load_store_2d_offsets, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    rma_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){4, 8});
    a->out = tu_window(w, "out", PLD_FP32, 2, (const int64_t[]){4, 8});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_rma_2d, a);
    for (int r = 0; r < 3; r++) {
        int prv = (r + 2) % 3;
        const float *o = tu_view(w, a->out, r).data;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 8; j++) {
                float want = 0.0f;
                if (i >= 1 && i < 3 && j >= 2 * prv && j < 2 * prv + 2)
                    want = (float)(100 * prv + (i - 1) * 2 + (j - 2 * prv) + 1);
                cr_assert_eq(o[i * 8 + j], want, "rank %d out[%d,%d] = %g, expected %g", r, i, j,
                             (double)o[i * 8 + j], (double)want);
            }
    }
    pld_world_finalize(w);
}

/* ---- 3-D: the tile lands on the innermost two dims ---------------------- */

static int32_t v3(int r, int x, int y, int z)
{
    return r * 1000 + x * 100 + y * 10 + z;
}

static void k_rma_3d(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int32_t *d = pld_local(c, a->data).data;
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 3; y++)
            for (int z = 0; z < 8; z++)
                d[(x * 3 + y) * 8 + z] = v3(me, x, y, z);
    pld_barrier(c, a->sig);
    pld_tile *t = pld_tile_create(c, PLD_INT32, 2, 4);
    for (int p = 0; p < P; p++) {
        pld_remote_load(c, t, a->data, p, PLD_IDX(1, 1, 4));
        const int32_t *q = pld_tile_data(t);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++)
                KCHECK(c, q[i * 4 + j] == v3(p, 1, 1 + i, 4 + j),
                       "rank %d: peer %d [1,%d,%d] = %d, expected %d", me, p, 1 + i, 4 + j,
                       q[i * 4 + j], v3(p, 1, 1 + i, 4 + j));
    }
    /* [3,5] tile into the peer's out at [1,0,2] */
    pld_tile *s = pld_tile_create(c, PLD_INT32, 3, 5);
    int32_t *sd = pld_tile_data(s);
    for (int k = 0; k < 15; k++)
        sd[k] = me * 100 + k + 1;
    pld_remote_store(c, s, a->out, (me + 1) % P, PLD_IDX(1, 0, 2), PLD_ATOMIC_NONE);
}

Test(rma, load_store_3d_offsets, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    rma_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data3", PLD_INT32, 3, (const int64_t[]){2, 3, 8});
    a->out = tu_window(w, "out3", PLD_INT32, 3, (const int64_t[]){2, 3, 8});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_rma_3d, a);
    for (int r = 0; r < 2; r++) {
        int prv = 1 - r;
        const int32_t *o = tu_view(w, a->out, r).data;
        for (int x = 0; x < 2; x++)
            for (int y = 0; y < 3; y++)
                for (int z = 0; z < 8; z++) {
                    int32_t want = 0;
                    if (x == 1 && z >= 2 && z < 7)
                        want = prv * 100 + y * 5 + (z - 2) + 1;
                    cr_assert_eq(o[(x * 3 + y) * 8 + z], want,
                                 "rank %d out3[%d,%d,%d] = %d, expected %d", r, x, y, z,
                                 o[(x * 3 + y) * 8 + z], want);
                }
    }
    pld_world_finalize(w);
}

/* ---- ring shift ----------------------------------------------------------- */

static void k_ring_shift(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int nxt = (me + 1) % P, prv = (me + P - 1) % P;
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 16);
    float *td = pld_tile_data(t);
    for (int j = 0; j < 16; j++)
        td[j] = (float)(me * 100 + j);
    /* push: my row into the next rank's window */
    pld_remote_store(c, t, a->out, nxt, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
    /* and stage it in mine for the pull direction */
    float *d = pld_local(c, a->data).data;
    for (int j = 0; j < 16; j++)
        d[j] = (float)(me * 100 + j);
    pld_barrier(c, a->sig);
    const float *o = pld_local(c, a->out).data;
    for (int j = 0; j < 16; j++)
        KCHECK(c, o[j] == (float)(prv * 100 + j), "rank %d shifted [%d] = %g, expected %d", me, j,
               (double)o[j], prv * 100 + j);
    /* pull: read the previous rank's staged row */
    pld_tile *u = pld_tile_create(c, PLD_FP32, 1, 16);
    pld_remote_load(c, u, a->data, prv, PLD_IDX(0, 0));
    const float *ud = pld_tile_data(u);
    for (int j = 0; j < 16; j++)
        KCHECK(c, ud[j] == (float)(prv * 100 + j), "rank %d pulled [%d] = %g, expected %d", me, j,
               (double)ud[j], prv * 100 + j);
}

static void ring_shift(const char *devices)
{
    pld_world *w = tu_world(devices);
    rma_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "x", PLD_FP32, 2, (const int64_t[]){1, 16});
    a->out = tu_window(w, "y", PLD_FP32, 2, (const int64_t[]){1, 16});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_ring_shift, a);
    pld_world_finalize(w);
}

Test(rma, ring_shift_p4, .timeout = 30)
{
    ring_shift("0-3");
}
Test(rma, ring_shift_p3, .timeout = 30)
{
    ring_shift("0-2");
}
Test(rma, ring_shift_p1, .timeout = 30)
{
    ring_shift("0");
}

/* ---- identity path -------------------------------------------------------- */

static void k_identity(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    int me = pld_rank(c);
    pld_tile *t = pld_tile_create(c, PLD_FP32, 2, 4);
    float *td = pld_tile_data(t);
    for (int k = 0; k < 8; k++)
        td[k] = (float)(me * 10 + k + 1);
    pld_remote_store(c, t, a->data, me, PLD_IDX(2, 3), PLD_ATOMIC_NONE);
    const float *d = pld_local(c, a->data).data;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) {
            float want =
                (i >= 2 && j >= 3 && j < 7) ? (float)(me * 10 + (i - 2) * 4 + (j - 3) + 1) : 0.0f;
            KCHECK(c, d[i * 8 + j] == want, "rank %d local [%d,%d] = %g, expected %g", me, i, j,
                   (double)d[i * 8 + j], (double)want);
        }
    pld_tile *u = pld_tile_create(c, PLD_FP32, 2, 4);
    pld_remote_load(c, u, a->data, me, PLD_IDX(2, 3));
    KCHECK(c, memcmp(pld_tile_data(u), td, 8 * sizeof(float)) == 0,
           "rank %d: remote_load from self differs from what was stored", me);
    /* atomic add to self too */
    pld_remote_store(c, t, a->data, me, PLD_IDX(2, 3), PLD_ATOMIC_ADD);
    KCHECK(c, d[2 * 8 + 3] == 2.0f * (float)(me * 10 + 1), "rank %d: self atomic add gave %g", me,
           (double)d[2 * 8 + 3]);
}

Test(rma, peer_is_me_identity_path, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    rma_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){4, 8});
    TU_LAUNCH_OK(w, k_identity, a);
    pld_world_finalize(w);
}

/* ---- atomic add ----------------------------------------------------------- */

#define AR 4
#define AC 32

static double atomic_val(int r, int j)
{
    return (double)((r + 1) * (j % 3 + 1));
}

static void k_atomic_add(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    int me = pld_rank(c);
    pld_tile *t = pld_tile_create(c, a->dt, AR, AC);
    void *td = pld_tile_data(t);
    for (int i = 0; i < AR; i++)
        for (int j = 0; j < AC; j++)
            tu_set(a->dt, td, i * AC + j, atomic_val(me, j));
    for (int it = 0; it < a->iters; it++)
        pld_remote_store(c, t, a->out, 0, PLD_IDX(1, 3), PLD_ATOMIC_ADD);
}

static void atomic_add(pld_dtype dt, int iters)
{
    pld_world *w = tu_world("0-3");
    rma_args *a = tu_host_alloc(w, sizeof *a);
    a->dt = dt;
    a->iters = iters;
    a->out = tu_window(w, "acc", dt, 2, (const int64_t[]){AR + 2, AC + 8});
    TU_LAUNCH_OK(w, k_atomic_add, a);
    for (int r = 0; r < 4; r++) {
        const void *o = tu_view(w, a->out, r).data;
        for (int i = 0; i < AR + 2; i++)
            for (int j = 0; j < AC + 8; j++) {
                double want = 0;
                if (r == 0 && i >= 1 && i < 1 + AR && j >= 3 && j < 3 + AC)
                    for (int s = 0; s < 4; s++)
                        want += iters * atomic_val(s, j - 3);
                double got = tu_get(dt, o, i * (AC + 8) + j);
                cr_assert_eq(got, want, "%s: rank %d acc[%d,%d] = %g, expected %g",
                             pld_dtype_name(dt), r, i, j, got, want);
            }
    }
    pld_world_finalize(w);
}

/* iteration counts keep every partial sum exact in the dtype */
Test(rma, atomic_add_fp32, .timeout = 30)
{
    atomic_add(PLD_FP32, 500);
}
Test(rma, atomic_add_fp16, .timeout = 30)
{
    atomic_add(PLD_FP16, 64);
}
Test(rma, atomic_add_bf16, .timeout = 30)
{
    atomic_add(PLD_BF16, 8);
}
Test(rma, atomic_add_int32, .timeout = 30)
{
    atomic_add(PLD_INT32, 500);
}
Test(rma, atomic_add_int16, .timeout = 30)
{
    atomic_add(PLD_INT16, 500);
}
Test(rma, atomic_add_int8, .timeout = 30)
{
    atomic_add(PLD_INT8, 4);
}

/* Heavy contention: every rank adds 1 into the same 8 cells of rank 0,
 * starting together; a lost update shows as a short total. */
static void k_atomic_contended(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    pld_tile *t = pld_tile_create(c, a->dt, 1, 8);
    void *td = pld_tile_data(t);
    for (int j = 0; j < 8; j++)
        tu_set(a->dt, td, j, 1.0);
    pld_barrier(c, a->sig);
    for (int it = 0; it < a->iters; it++)
        pld_remote_store(c, t, a->out, 0, PLD_IDX(0, 0), PLD_ATOMIC_ADD);
}

static void atomic_contended(pld_dtype dt, int iters)
{
    pld_world *w = tu_world("0-3");
    rma_args *a = tu_host_alloc(w, sizeof *a);
    a->dt = dt;
    a->iters = iters;
    a->out = tu_window(w, "acc", dt, 2, (const int64_t[]){1, 8});
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_atomic_contended, a);
    const void *o = tu_view(w, a->out, 0).data;
    for (int j = 0; j < 8; j++)
        cr_assert_eq(tu_get(dt, o, j), 4.0 * iters,
                     "%s: acc[0,%d] = %g, expected %d (lost updates)", pld_dtype_name(dt), j,
                     tu_get(dt, o, j), 4 * iters);
    pld_world_finalize(w);
}

Test(rma, atomic_add_contended_fp32, .timeout = 60)
{
    atomic_contended(PLD_FP32, 50000);
}
Test(rma, atomic_add_contended_int32, .timeout = 60)
{
    atomic_contended(PLD_INT32, 50000);
}
Test(rma, atomic_add_contended_int16, .timeout = 60)
{
    atomic_contended(PLD_INT16, 8000);
}
Test(rma, atomic_add_contended_fp16, .timeout = 60)
{
    atomic_contended(PLD_FP16, 512);
}

static void k_atomic_unsupported(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    if (pld_rank(c) != 1)
        return;
    pld_tile *t = pld_tile_create(c, a->dt, 1, 4);
    pld_remote_store(c, t, a->out, 0, PLD_IDX(0, 0), PLD_ATOMIC_ADD);
    a->after[1] = 1;
}

Test(rma, atomic_add_other_dtypes_unsupported, .timeout = 30)
{
    const pld_dtype dts[] = {PLD_UINT8, PLD_INT64, PLD_FP64};
    pld_world *w = tu_world(NULL);
    rma_args *a = tu_host_alloc(w, sizeof *a);
    for (int i = 0; i < 3; i++) {
        a->dt = dts[i];
        a->after[1] = 0;
        a->out = tu_window(w, "acc", dts[i], 2, (const int64_t[]){1, 4});
        pld_status st = pld_launch(w, k_atomic_unsupported, a);
        cr_expect(st == PLD_ERR_UNSUPPORTED || st == PLD_ERR_ARG,
                  "atomic add on %s: %s, expected PLD_ERR_UNSUPPORTED (%s)", pld_dtype_name(dts[i]),
                  pld_status_name(st), pld_world_error(w));
        TU_EXPECT_STARTS(pld_world_error(w), "rank 1 (device 1): pld_remote_store: ");
        cr_expect_eq(a->after[1], 0);
    }
    pld_world_finalize(w);
}

/* ---- errors --------------------------------------------------------------- */

static void k_rma_errors(pld_ctx *c, void *arg)
{
    rma_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    if (me == 0) { /* blocked until the abort releases it */
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
        a->after[0] = 1;
        return;
    }
    pld_tile *row = pld_tile_create(c, PLD_FP32, 1, 64);
    pld_tile *wide = pld_tile_create(c, PLD_FP32, 1, 65);
    pld_tile *i32 = pld_tile_create(c, PLD_INT32, 1, 64);
    pld_tile *small = pld_tile_create(c, PLD_FP32, 1, 4);
    switch (a->which) {
    case 0:
        pld_remote_load(c, row, a->data, 0, PLD_IDX(2, 0));
        break;
    case 1:
        pld_remote_store(c, row, a->data, 0, PLD_IDX(1, 1), PLD_ATOMIC_NONE);
        break;
    case 2:
        pld_remote_load(c, wide, a->data, 0, PLD_IDX(0, 0));
        break;
    case 3:
        pld_remote_store(c, row, a->data, 0, PLD_IDX(-1, 0), PLD_ATOMIC_NONE);
        break;
    case 4:
        pld_remote_store(c, small, a->out, 0, PLD_IDX(2, 0, 0), PLD_ATOMIC_NONE);
        break;
    case 5:
        pld_remote_load(c, i32, a->data, 0, PLD_IDX(0, 0));
        break;
    case 6:
        pld_remote_store(c, i32, a->data, 0, PLD_IDX(0, 0), PLD_ATOMIC_ADD);
        break;
    case 7:
        pld_remote_load(c, row, a->data, P, PLD_IDX(0, 0));
        break;
    case 8:
        pld_remote_store(c, row, a->data, -1, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
        break;
    case 9:
        pld_remote_load(c, row, a->data, 0, PLD_IDX(0));
        break;
    case 10:
        pld_remote_store(c, small, a->out, 0, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
        break;
    case 11:
        pld_remote_store(c, row, a->data, 0, PLD_IDX(0, 0), (pld_atomic)3);
        break;
    case 12:
        pld_remote_store(c, row, a->data, 1, PLD_IDX(1, 1), PLD_ATOMIC_ADD);
        break;
    }
    a->after[1] = 1;
}

Test(rma, errors, .timeout = 30)
{
    const struct {
        pld_status st;
        const char *api;
        const char *name; /* window named in a BOUNDS message */
        const char *dims;
    } cases[] = {
        {PLD_ERR_BOUNDS, "pld_remote_load", "'data'", "[2,64]"},
        {PLD_ERR_BOUNDS, "pld_remote_store", "'data'", "[2,64]"},
        {PLD_ERR_BOUNDS, "pld_remote_load", "'data'", "[2,64]"},
        {PLD_ERR_BOUNDS, "pld_remote_store", "'data'", "[2,64]"},
        {PLD_ERR_BOUNDS, "pld_remote_store", "'out3'", "[2,3,8]"},
        {PLD_ERR_ARG, "pld_remote_load", NULL, NULL},
        {PLD_ERR_ARG, "pld_remote_store", NULL, NULL},
        {PLD_ERR_ARG, "pld_remote_load", NULL, NULL},
        {PLD_ERR_ARG, "pld_remote_store", NULL, NULL},
        {PLD_ERR_ARG, "pld_remote_load", NULL, NULL},
        {PLD_ERR_ARG, "pld_remote_store", NULL, NULL},
        {PLD_ERR_ARG, "pld_remote_store", NULL, NULL},
        {PLD_ERR_BOUNDS, "pld_remote_store", "'data'", "[2,64]"},
    };
    pld_world *w = tu_world(NULL);
    rma_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){2, 64});
    a->out = tu_window(w, "out3", PLD_FP32, 3, (const int64_t[]){2, 3, 8});
    a->sig = tu_signal(w, "sig", 1);
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        a->which = i;
        a->after[0] = a->after[1] = 0;
        pld_status st = pld_launch(w, k_rma_errors, a);
        cr_expect_eq(st, cases[i].st, "case %d: %s, expected %s (%s)", i, pld_status_name(st),
                     pld_status_name(cases[i].st), pld_world_error(w));
        const char *msg = pld_world_error(w);
        char prefix[80];
        snprintf(prefix, sizeof prefix, "rank 1 (device 1): %s: ", cases[i].api);
        TU_EXPECT_STARTS(msg, prefix);
        if (cases[i].name) {
            TU_EXPECT_CONTAINS(msg, cases[i].name);
            TU_EXPECT_CONTAINS(msg, cases[i].dims);
        }
        cr_expect_eq(a->after[0] + a->after[1], 0, "case %d: a kernel went on after the abort", i);
        /* nothing was written anywhere */
        for (int r = 0; r < 2; r++) {
            const float *d = tu_view(w, a->data, r).data;
            for (int k = 0; k < 128; k++)
                cr_assert_eq(d[k], 0.0f, "case %d: rank %d data[%d] = %g after a failed call", i, r,
                             k, (double)d[k]);
            const float *o = tu_view(w, a->out, r).data;
            for (int k = 0; k < 48; k++)
                cr_assert_eq(o[k], 0.0f, "case %d: rank %d out3[%d] = %g after a failed call", i, r,
                             k, (double)o[k]);
        }
    }
    pld_world_finalize(w);
}
