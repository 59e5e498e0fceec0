/* SPDX-License-Identifier: Apache-2.0 */
/* Every builtin against a plain C reference.
 *
 * broadcast, allgather, allgather_inplace, reduce_scatter, allreduce (mesh
 * and ring), all_to_all and all_to_all_v, at P = 1, 2, 3, 4, 8 and 32, for
 * one element, a ragged payload of about 1000003 bytes (odd element counts:
 * never a multiple of a chunk width) and, at P = 2 and 4, 64 MiB and
 * allgather rows of 3 MiB and a few bytes (pieces with a ragged tail).
 *
 *   reductions:    allreduce Sum/Max/Min/Prod on fp32, fp16, bf16, int32
 *                  (fp16/bf16 as 16-bit patterns reduced in fp32);
 *                  reduce_scatter Sum on the same dtypes, and any other op
 *                  is PLD_ERR_UNSUPPORTED; integer-valued inputs, so every
 *                  result is exact and compared with ==.
 *   data movement: int8, bf16, fp32 and int64 at every P (all nine dtypes
 *                  at P = 3), compared byte for byte with a pattern that
 *                  names each chunk's source and destination.
 *
 * Kernels check their own results and report with pld_fail; targets are
 * pre-filled with garbage (then a barrier) so a chunk that never arrives is
 * seen. One signal window serves every call of a world and must be all-zero
 * after each one. */
#include <stdio.h>
#include <stdlib.h>

#include "coll_util.h"

enum kind { K_BCAST, K_AG, K_AG_INPLACE, K_RS, K_AR, K_A2A, K_A2AV };
static const char *const kind_names[] = {"broadcast",      "allgather", "allgather_inplace",
                                         "reduce_scatter", "allreduce", "all_to_all",
                                         "all_to_all_v"};

#define MIB64 ((size_t)64 << 20)
#define RAGGED ((size_t)1000003)

typedef struct rcase {
    int kind;
    pld_dtype dt;
    pld_reduce_op op;
    pld_allreduce_mode mode;
    int64_t s;                 /* elements per row; total elements for broadcast/allreduce */
    int64_t m;                 /* all_to_all_v: rows per block */
    int root;                  /* broadcast */
    pld_broadcast_mode bmode;  /* broadcast: auto (0), or forced */
    pld_allgather_mode gmode;  /* allgather out of place: auto (0), or forced */
    pld_all_to_all_mode amode; /* all_to_all: auto (0), or forced */
    int salt;                  /* distinguishes the calls of one world */
    int counts2d;              /* all_to_all_v: send_counts [P,1] instead of [P] */
    pld_dtensor data, tgt, sig, ring, rc;
    const float *ref; /* reductions: expected value per flat index (exact) */
    /* inputs the ranks fill: pld_host_alloc memory, stride bytes per rank
     * (on the process transport a kernel's malloc is not a tensor) */
    char *scratch;
    size_t stride;
} rcase;

/* all_to_all_v: where a rank's send counts follow its P blocks in its scratch */
static size_t a2av_counts_at(int p, size_t block)
{
    return ((size_t)p * block + 7) & ~(size_t)7;
}

/* all_to_all_v: rows src sends to dst -- 0, 1, M-1, M, above M (clamped),
 * M/2 and far above M, depending on the pair. */
static int32_t a2av_count(int src, int dst, int64_t m)
{
    switch ((src * 3 + dst) % 7) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return (int32_t)(m - 1);
    case 3:
        return (int32_t)m;
    case 4:
        return (int32_t)m + 2;
    case 5:
        return (int32_t)(m / 2);
    default:
        return 1000000;
    }
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* ---- the kernel ----------------------------------------------------------- */

static void k_bcast(pld_ctx *c, rcase *a)
{
    int me = pld_rank(c);
    size_t nb = (size_t)a->s * pld_dtype_size(a->dt);
    void *d = pld_local(c, a->data).data;
    uint32_t want = cu_tag(a->root, CU_ALL, a->salt);
    cu_fill(d, nb, me == a->root ? want : cu_tag(CU_GARBAGE, me, a->salt), 0);
    pld_broadcast_with(c, a->data, a->sig, a->root, a->bmode);
    cu_kcheck_bytes(c, "broadcast data", d, nb, want, 0);
}

static void k_allgather(pld_ctx *c, rcase *a, int inplace)
{
    int me = pld_rank(c), p = pld_nranks(c);
    size_t row = (size_t)a->s * pld_dtype_size(a->dt);
    char *t = pld_local(c, a->tgt).data;
    cu_fill(t, (size_t)p * row, cu_tag(CU_GARBAGE, me, a->salt), 0);
    void *in = NULL;
    if (inplace) {
        cu_fill(t + (size_t)me * row, row, cu_tag(me, CU_ALL, a->salt), 0);
    } else {
        in = a->scratch + (size_t)me * a->stride;
        cu_fill(in, row, cu_tag(me, CU_ALL, a->salt), 0);
    }
    pld_barrier(c, a->sig); /* nobody pushes into a row still being pre-filled */
    if (inplace)
        pld_allgather_inplace(c, a->tgt, a->sig);
    else
        pld_allgather_with(c, pld_tensor_make(in, a->dt, 2, PLD_IDX(1, a->s)), a->tgt, a->sig,
                           a->gmode);
    char what[96];
    for (int r = 0; r < p; r++) {
        snprintf(what, sizeof what, "%s%s target row %d",
                 inplace ? "allgather_inplace" : "allgather",
                 a->gmode == PLD_AG_DOUBLING ? " doubling" : "", r);
        cu_kcheck_bytes(c, what, t + (size_t)r * row, row, cu_tag(r, CU_ALL, a->salt), 0);
    }
}

/* " ring", " mesh", " rs_ag" for an allreduce case, " binomial" for a
 * broadcast down the tree, " doubling" for that allgather, " bruck" for
 * that all_to_all, "" for the others */
static const char *ar_mode_name(const rcase *a)
{
    if (a->kind == K_BCAST)
        return a->bmode == PLD_BCAST_BINOMIAL ? " binomial" : "";
    if (a->kind == K_AG)
        return a->gmode == PLD_AG_DOUBLING ? " doubling" : "";
    if (a->kind == K_A2A)
        return a->amode == PLD_A2A_BRUCK ? " bruck" : "";
    if (a->kind != K_AR)
        return "";
    return a->mode == PLD_RING           ? " ring"
           : a->mode == PLD_RS_AG        ? " rs_ag"
           : a->mode == PLD_RABENSEIFNER ? " rabenseifner"
                                         : " mesh";
}

static void check_value(pld_ctx *c, rcase *a, const void *d, int64_t i, double want)
{
    double got = tu_get(a->dt, d, i);
    if (got != want)
        pld_fail(c, "golden mismatch: rank %d %s %s %s%s: element %lld is %g, expected %g",
                 pld_rank(c), kind_names[a->kind], pld_dtype_name(a->dt), cu_op_name(a->op),
                 ar_mode_name(a), (long long)i, got, want);
}

static void k_reduce_scatter(pld_ctx *c, rcase *a)
{
    int me = pld_rank(c), p = pld_nranks(c);
    void *d = pld_local(c, a->data).data;
    for (int64_t i = 0; i < p * a->s; i++)
        tu_set(a->dt, d, i, cu_rval(me, i, a->op, p));
    pld_reduce_scatter(c, a->data, a->sig, a->op);
    for (int64_t j = 0; j < a->s; j++)
        check_value(c, a, d, me * a->s + j, a->ref[me * a->s + j]);
}

static void k_allreduce(pld_ctx *c, rcase *a)
{
    int me = pld_rank(c), p = pld_nranks(c);
    void *d = pld_local(c, a->data).data;
    for (int64_t i = 0; i < a->s; i++)
        tu_set(a->dt, d, i, cu_rval(me, i, a->op, p));
    pld_allreduce(c, a->data, a->mode == PLD_RING ? a->ring : a->sig, a->op, a->mode);
    for (int64_t i = 0; i < a->s; i++)
        check_value(c, a, d, i, a->ref[i]);
}

static void k_all_to_all(pld_ctx *c, rcase *a)
{
    int me = pld_rank(c), p = pld_nranks(c);
    size_t row = (size_t)a->s * pld_dtype_size(a->dt);
    char *in = a->scratch + (size_t)me * a->stride, *t = pld_local(c, a->tgt).data;
    for (int d = 0; d < p; d++)
        cu_fill(in + (size_t)d * row, row, cu_tag(me, d, a->salt), 0);
    cu_fill(t, (size_t)p * row, cu_tag(CU_GARBAGE, me, a->salt), 0);
    pld_barrier(c, a->sig);
    pld_all_to_all_with(c, pld_tensor_make(in, a->dt, 2, PLD_IDX(p, a->s)), a->tgt, a->sig,
                        a->amode);
    char what[96];
    for (int s = 0; s < p; s++) {
        snprintf(what, sizeof what, "all_to_all%s target row %d",
                 a->amode == PLD_A2A_BRUCK  ? " bruck"
                 : a->amode == PLD_A2A_PUSH ? " push"
                                            : "",
                 s);
        cu_kcheck_bytes(c, what, t + (size_t)s * row, row, cu_tag(s, me, a->salt), 0);
    }
}

static void k_all_to_all_v(pld_ctx *c, rcase *a)
{
    int me = pld_rank(c), p = pld_nranks(c);
    int64_t m = a->m;
    size_t row = (size_t)a->s * pld_dtype_size(a->dt), block = (size_t)m * row;
    char *in = a->scratch + (size_t)me * a->stride, *t = pld_local(c, a->tgt).data;
    int32_t *counts = (int32_t *)(void *)(in + a2av_counts_at(p, block));
    int32_t *rc = pld_local(c, a->rc).data;
    for (int d = 0; d < p; d++) {
        cu_fill(in + (size_t)d * block, block, cu_tag(me, d, a->salt), 0);
        counts[d] = a2av_count(me, d, m);
        rc[d] = -7;
    }
    cu_fill(t, (size_t)p * block, cu_tag(CU_GARBAGE, me, a->salt), 0);
    pld_barrier(c, a->sig);
    pld_tensor sc = a->counts2d ? pld_tensor_make(counts, PLD_INT32, 2, PLD_IDX(p, 1))
                                : pld_tensor_make(counts, PLD_INT32, 1, PLD_IDX(p));
    pld_all_to_all_v(c, pld_tensor_make(in, a->dt, 2, PLD_IDX(p * m, a->s)), a->tgt, a->sig, sc,
                     a->rc);
    char what[96];
    for (int s = 0; s < p; s++) {
        int64_t want = min64(a2av_count(s, me, m), m);
        if (rc[s] != want)
            pld_fail(c, "golden mismatch: rank %d all_to_all_v recv_counts[%d] = %d, expected %lld",
                     me, s, rc[s], (long long)want);
        snprintf(what, sizeof what, "all_to_all_v block %d (%lld rows)", s, (long long)want);
        cu_kcheck_bytes(c, what, t + (size_t)s * block, (size_t)want * row, cu_tag(s, me, a->salt),
                        0);
    }
}

static void k_ref(pld_ctx *c, void *arg)
{
    rcase *a = arg;
    switch (a->kind) {
    case K_BCAST:
        k_bcast(c, a);
        break;
    case K_AG:
        k_allgather(c, a, 0);
        break;
    case K_AG_INPLACE:
        k_allgather(c, a, 1);
        break;
    case K_RS:
        k_reduce_scatter(c, a);
        break;
    case K_AR:
        k_allreduce(c, a);
        break;
    case K_A2A:
        k_all_to_all(c, a);
        break;
    case K_A2AV:
        k_all_to_all_v(c, a);
        break;
    }
}

/* ---- host side ------------------------------------------------------------ */

typedef struct rworld {
    pld_world *w;
    int p;
    pld_dtensor sig, ring, whole; /* one signal buffer: [P,1] and [2(P-1),P] views */
    rcase *a;                     /* in pld_host_alloc memory */
    int calls;
} rworld;

static void rw_open(rworld *rw, int p)
{
    rw->w = cu_world(p);
    rw->p = p;
    int64_t rows = p > 1 ? 2 * (p - 1) : 1;
    rw->whole = tu_window(rw->w, "sig", PLD_INT32, 2, PLD_IDX(rows, p));
    cr_assert_eq(pld_window(rw->whole.buf, PLD_INT32, 2, PLD_IDX(p, 1), &rw->sig), PLD_OK);
    rw->ring = p > 1 ? rw->whole : rw->sig;
    rw->a = cu_alloc(rw->w, sizeof *rw->a);
    rw->calls = 0;
}

static void rw_close(rworld *rw)
{
    cu_finalize(rw->w);
}

/* Runs one case (kind, dtype, op, mode, size in the rcase template). */
static void run(rworld *rw, rcase tmpl)
{
    int p = rw->p;
    rcase *a = rw->a;
    *a = tmpl;
    a->sig = rw->sig;
    a->ring = rw->ring;
    a->salt = ++rw->calls;
    pld_world *w = rw->w;
    float *ref = NULL;
    switch (a->kind) {
    case K_BCAST:
    case K_AR:
        a->data = tu_window(w, "data", a->dt, 1, PLD_IDX(a->s));
        break;
    case K_RS:
        a->data = tu_window(w, "data", a->dt, 2, PLD_IDX(p, a->s));
        break;
    case K_AG:
    case K_AG_INPLACE:
    case K_A2A:
        a->tgt = tu_window(w, "tgt", a->dt, 2, PLD_IDX(p, a->s));
        break;
    case K_A2AV:
        a->tgt = tu_window(w, "tgt", a->dt, 2, PLD_IDX(p * a->m, a->s));
        a->rc = tu_window(w, "recv_counts", PLD_INT32, 2, PLD_IDX(p, 1));
        break;
    }
    size_t row = (size_t)a->s * pld_dtype_size(a->dt);
    a->stride = a->kind == K_AG    ? row
                : a->kind == K_A2A ? (size_t)p * row
                : a->kind == K_A2AV
                    ? a2av_counts_at(p, (size_t)a->m * row) + sizeof(int32_t) * (size_t)p
                    : 0;
    a->scratch = NULL;
    if (a->stride) {
        a->stride = (a->stride + 63) & ~(size_t)63;
        a->scratch = pld_host_alloc(w, a->stride * (size_t)p);
        cr_assert_not_null(a->scratch, "pld_host_alloc(%zu)", a->stride * (size_t)p);
    }
    if (a->kind == K_AR || a->kind == K_RS) {
        int64_t n = a->kind == K_AR ? a->s : p * a->s;
        float *h = pld_host_alloc(w, sizeof(float) * (size_t)n);
        cr_assert_not_null(h);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)cu_ref(p, i, a->op);
        a->ref = ref = h;
    }
    pld_status st = pld_launch(w, k_ref, a);
    cr_assert_eq(st, PLD_OK, "P=%d %s %s %s%s %lld elements%s: %s\n  %s", p, kind_names[a->kind],
                 pld_dtype_name(a->dt), cu_op_name(a->op), ar_mode_name(a), (long long)a->s,
                 a->kind == K_A2AV ? " per row" : "", pld_status_name(st), pld_world_error(w));
    cu_assert_signal_zero(w, rw->whole);
    if (ref)
        pld_host_free(w, ref);
    if (a->scratch)
        pld_host_free(w, a->scratch);
    cu_free(w, a->data);
    cu_free(w, a->tgt);
    cu_free(w, a->rc);
}

static const pld_dtype red_dtypes[] = {PLD_FP32, PLD_FP16, PLD_BF16, PLD_INT32};
static const pld_dtype move_dtypes[] = {PLD_INT8, PLD_BF16, PLD_FP32, PLD_INT64};
static const pld_dtype all_dtypes[] = {PLD_FP32, PLD_FP16,  PLD_BF16,  PLD_INT32, PLD_INT16,
                                       PLD_INT8, PLD_UINT8, PLD_INT64, PLD_FP64};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Element counts for "one element" and "ragged" of a kind on rows. */
static int64_t one_or_ragged(int ragged, size_t total, int64_t rows, pld_dtype dt)
{
    return ragged ? cu_ragged(total, rows, pld_dtype_size(dt)) : 1;
}

/* Data movement: broadcast (roots 0 and P-1), allgather, allgather_inplace,
 * all_to_all, all_to_all_v over `dts` and both sizes. */
static void movement(int p, const pld_dtype *dts, size_t ndt, size_t total)
{
    rworld rw;
    rw_open(&rw, p);
    for (size_t k = 0; k < ndt; k++) {
        pld_dtype dt = dts[k];
        for (int ragged = 0; ragged <= 1; ragged++) {
            rcase b = {.kind = K_BCAST, .dt = dt, .s = one_or_ragged(ragged, total, 1, dt)};
            run(&rw, b);
            b.root = p - 1;
            run(&rw, b);
            /* down the binomial tree, from a root in the middle too (the
             * tree is numbered relative to it) */
            b.bmode = PLD_BCAST_BINOMIAL;
            run(&rw, b);
            b.root = p / 2;
            run(&rw, b);
            int64_t s = one_or_ragged(ragged, total, p, dt);
            run(&rw, (rcase){.kind = K_AG, .dt = dt, .s = s});
            run(&rw, (rcase){.kind = K_AG, .dt = dt, .s = s, .gmode = PLD_AG_DOUBLING});
            run(&rw, (rcase){.kind = K_AG_INPLACE, .dt = dt, .s = s});
            run(&rw, (rcase){.kind = K_A2A, .dt = dt, .s = s});
            run(&rw, (rcase){.kind = K_A2A, .dt = dt, .s = s, .amode = PLD_A2A_BRUCK});
            int64_t m = ragged ? 5 : 1;
            run(&rw, (rcase){.kind = K_A2AV,
                             .dt = dt,
                             .m = m,
                             .s = one_or_ragged(ragged, total, p * m, dt),
                             .counts2d = ragged});
        }
    }
    rw_close(&rw);
}

/* Reductions: allreduce every op x mesh/ring/Rabenseifner, reduce_scatter Sum; both
 * sizes. `ragged_total` is the ragged payload in bytes; the mesh, which
 * moves (P-1) times the payload per rank, uses `mesh_total` (smaller at
 * P = 32 to keep the suite fast). */
static void reductions(int p, size_t ragged_total, size_t mesh_total)
{
    static const pld_allreduce_mode modes[] = {PLD_MESH, PLD_RING, PLD_RABENSEIFNER};
    rworld rw;
    rw_open(&rw, p);
    for (size_t k = 0; k < COUNT(red_dtypes); k++) {
        pld_dtype dt = red_dtypes[k];
        for (int ragged = 0; ragged <= 1; ragged++) {
            for (int op = PLD_SUM; op <= PLD_PROD; op++)
                for (size_t m = 0; m < COUNT(modes); m++)
                    run(&rw, (rcase){.kind = K_AR,
                                     .dt = dt,
                                     .op = (pld_reduce_op)op,
                                     .mode = modes[m],
                                     .s = one_or_ragged(
                                         ragged, modes[m] == PLD_MESH ? mesh_total : ragged_total,
                                         1, dt)});
            run(&rw, (rcase){.kind = K_RS,
                             .dt = dt,
                             .op = PLD_SUM,
                             .s = one_or_ragged(ragged, ragged_total, p, dt)});
        }
    }
    rw_close(&rw);
}

Test(ref_movement, p1, .timeout = 60)
{
    movement(1, move_dtypes, COUNT(move_dtypes), RAGGED);
}
Test(ref_movement, p2, .timeout = 60)
{
    movement(2, move_dtypes, COUNT(move_dtypes), RAGGED);
}
Test(ref_movement, p3_every_dtype, .timeout = 60)
{
    movement(3, all_dtypes, COUNT(all_dtypes), RAGGED);
}
Test(ref_movement, p4, .timeout = 60)
{
    movement(4, move_dtypes, COUNT(move_dtypes), RAGGED);
}
Test(ref_movement, p8, .timeout = 60)
{
    movement(8, move_dtypes, COUNT(move_dtypes), RAGGED);
}
/* P = 8 with rows of ~400 KB: pieces below 1 MiB that stream because 8 x 8
 * of them would not fit half the L3 (transport/shm/copy.h); odd sizes. */
/* Recursive doubling where its last step is partial (P not a power of
 * two), so rows wrap past the last rank, ragged and streamed. */
Test(ref_movement, doubling_partial_steps, .timeout = 120)
{
    const pld_dtype dts[] = {PLD_INT8, PLD_FP32, PLD_INT64};
    for (int p = 5; p <= 7; p++) {
        rworld rw;
        rw_open(&rw, p);
        for (size_t k = 0; k < COUNT(dts); k++)
            for (int64_t s = 1; s <= 4099; s += 2049)
                run(&rw, (rcase){.kind = K_AG, .dt = dts[k], .s = s, .gmode = PLD_AG_DOUBLING});
        rw_close(&rw);
    }
}

/* Bruck's all_to_all at every P from 2 to 17 (its last step is partial
 * unless P is a power of two: fewer chunks than P/2 move in it), one
 * element and ragged rows, each beside the push of the same case. */
Test(ref_movement, bruck_every_p, .timeout = 120)
{
    const pld_dtype dts[] = {PLD_INT8, PLD_FP32, PLD_INT64};
    for (int p = 2; p <= 17; p++) {
        rworld rw;
        rw_open(&rw, p);
        for (size_t k = 0; k < COUNT(dts); k++)
            for (int64_t s = 1; s <= 1001; s += 1000) {
                run(&rw, (rcase){.kind = K_A2A, .dt = dts[k], .s = s, .amode = PLD_A2A_BRUCK});
                run(&rw, (rcase){.kind = K_A2A, .dt = dts[k], .s = s, .amode = PLD_A2A_PUSH});
            }
        rw_close(&rw);
    }
}

Test(ref_movement, p8_streamed_rows, .timeout = 120)
{
    static const pld_dtype one[] = {PLD_INT8};
    movement(8, one, 1, (size_t)8 * 400009);
}
Test(ref_movement, p32, .timeout = 120)
{
    movement(32, move_dtypes, COUNT(move_dtypes), RAGGED);
}

Test(ref_reduce, p1, .timeout = 60)
{
    reductions(1, RAGGED, RAGGED);
}
Test(ref_reduce, p2, .timeout = 60)
{
    reductions(2, RAGGED, RAGGED);
}
Test(ref_reduce, p3, .timeout = 60)
{
    reductions(3, RAGGED, RAGGED);
}
Test(ref_reduce, p4, .timeout = 60)
{
    reductions(4, RAGGED, RAGGED);
}
Test(ref_reduce, p8, .timeout = 120)
{
    reductions(8, RAGGED, RAGGED);
}
/* Rabenseifner's allreduce where P is not a power of two (the extra ranks
 * fold into a neighbour and copy its result), with fewer elements than
 * segments (empty segments), ragged, and streamed through UB in chunks. */
Test(ref_reduce, rabenseifner_folds, .timeout = 120)
{
    static const pld_dtype dts[] = {PLD_FP32, PLD_BF16, PLD_INT32};
    static const int ps[] = {3, 5, 6, 7, 12};
    static const int64_t sizes[] = {1, 3, 4099, 300007};
    for (size_t i = 0; i < COUNT(ps); i++) {
        rworld rw;
        rw_open(&rw, ps[i]);
        for (size_t k = 0; k < COUNT(dts); k++)
            for (size_t s = 0; s < COUNT(sizes); s++)
                run(&rw, (rcase){.kind = K_AR,
                                 .dt = dts[k],
                                 .op = s % 2 ? PLD_MAX : PLD_SUM,
                                 .mode = PLD_RABENSEIFNER,
                                 .s = sizes[s]});
        rw_close(&rw);
    }
}

/* the mesh at P = 32 on about 100003 bytes (still odd counts) */
Test(ref_reduce, p32, .timeout = 300)
{
    reductions(32, RAGGED, RAGGED / 10);
}

/* The two-phase allreduce when segments would be smaller than
 * PLD_RS_AG_MIN_SEGMENT: one owner (under one segment), a few owners with
 * ragged segments, one more owner than bytes / PLD_RS_AG_MIN_SEGMENT
 * rounds down to, more owners than go through the owner rounds (20 of
 * 32: three rounds of the whole group, in which 12 ranks reduce nothing),
 * and every rank an owner; every op, two element sizes. */
static void rs_ag_owners(int p)
{
    static const pld_dtype dts[] = {PLD_FP32, PLD_FP16};
    rworld rw;
    rw_open(&rw, p);
    for (size_t k = 0; k < COUNT(dts); k++) {
        pld_dtype dt = dts[k];
        int64_t per_seg = PLD_RS_AG_MIN_SEGMENT / (int64_t)pld_dtype_size(dt);
        const int64_t sizes[] = {1,
                                 per_seg - 1,
                                 3 * per_seg + 5,
                                 5 * per_seg - 1,
                                 (PLD_RS_AG_OWNER_ROUNDS_MAX + 4) * per_seg + 3,
                                 (int64_t)p * per_seg + 7};
        const int owners[] = {
            1, 1, 3, 4, PLD_RS_AG_OWNER_ROUNDS_MAX + 4 < p ? PLD_RS_AG_OWNER_ROUNDS_MAX + 4 : p, p};
        for (size_t i = 0; i < COUNT(sizes); i++) {
            cr_assert_eq(pld_tune_rs_ag_owners(p, (size_t)sizes[i] * pld_dtype_size(dt)), owners[i],
                         "P = %d, %lld elements", p, (long long)sizes[i]);
            for (int op = PLD_SUM; op <= PLD_PROD; op++)
                run(&rw, (rcase){.kind = K_AR,
                                 .dt = dt,
                                 .op = (pld_reduce_op)op,
                                 .mode = PLD_RS_AG,
                                 .s = sizes[i]});
        }
    }
    rw_close(&rw);
}
Test(ref_reduce, rs_ag_owners_p8, .timeout = 120)
{
    rs_ag_owners(8);
}
Test(ref_reduce, rs_ag_owners_p32, .timeout = 300)
{
    rs_ag_owners(32);
}

/* ---- 64 MiB total, P = 2 and 4, a few dtypes ------------------------------ */

static void big(int p)
{
    rworld rw;
    rw_open(&rw, p);
    /* data movement: the whole window is 64 MiB */
    run(&rw, (rcase){.kind = K_BCAST, .dt = PLD_FP32, .s = (int64_t)(MIB64 / 4), .root = p - 1});
    run(&rw, (rcase){.kind = K_AG, .dt = PLD_INT8, .s = (int64_t)(MIB64 / (size_t)p)});
    run(&rw, (rcase){.kind = K_AG,
                     .dt = PLD_FP32,
                     .s = (int64_t)(MIB64 / 4 / (size_t)p),
                     .gmode = PLD_AG_DOUBLING});
    run(&rw, (rcase){.kind = K_AG_INPLACE, .dt = PLD_INT64, .s = (int64_t)(MIB64 / 8 / (size_t)p)});
    run(&rw, (rcase){.kind = K_A2A, .dt = PLD_FP32, .s = (int64_t)(MIB64 / 4 / (size_t)p)});
    /* rows above 2 MiB go out in 1 MiB pieces: a ragged last piece */
    run(&rw, (rcase){.kind = K_AG, .dt = PLD_INT8, .s = (3 << 20) + 5});
    run(&rw, (rcase){.kind = K_AG_INPLACE, .dt = PLD_INT16, .s = (3 << 19) + 3});
    run(&rw,
        (rcase){
            .kind = K_A2AV, .dt = PLD_BF16, .m = 4, .s = (int64_t)(MIB64 / 2 / (size_t)(4 * p))});
    /* reductions */
    run(&rw,
        (rcase){
            .kind = K_RS, .dt = PLD_FP32, .op = PLD_SUM, .s = (int64_t)(MIB64 / 4 / (size_t)p)});
    run(&rw, (rcase){.kind = K_AR,
                     .dt = PLD_FP32,
                     .op = PLD_SUM,
                     .mode = PLD_MESH,
                     .s = (int64_t)(MIB64 / 4)});
    run(&rw, (rcase){.kind = K_AR,
                     .dt = PLD_FP32,
                     .op = PLD_SUM,
                     .mode = PLD_RABENSEIFNER,
                     .s = (int64_t)(MIB64 / 4)});
    if (p == 2)
        run(&rw, (rcase){.kind = K_AR,
                         .dt = PLD_BF16,
                         .op = PLD_SUM,
                         .mode = PLD_RING,
                         .s = (int64_t)(MIB64 / 2)});
    else
        run(&rw, (rcase){.kind = K_AR,
                         .dt = PLD_INT32,
                         .op = PLD_MAX,
                         .mode = PLD_RING,
                         .s = (int64_t)(MIB64 / 4)});
    rw_close(&rw);
}

Test(ref_64mib, p2, .timeout = 300)
{
    big(2);
}
Test(ref_64mib, p4, .timeout = 300)
{
    big(4);
}

/* ---- unsupported ops and dtypes ------------------------------------------- */

typedef struct unsup {
    pld_dtensor data, sig;
    int which;
    pld_reduce_op op;
} unsup;

static void k_unsup(pld_ctx *c, void *arg)
{
    unsup *u = arg;
    if (u->which == 0)
        pld_reduce_scatter(c, u->data, u->sig, u->op);
    else
        pld_allreduce(c, u->data, u->sig, u->op, PLD_MESH);
    pld_fail(c, "the call returned");
}

/* reduce_scatter is Sum only: Max, Min and Prod are PLD_ERR_UNSUPPORTED on
 * every reduction dtype, and the world keeps working afterwards. */
Test(ref_reduce, reduce_scatter_other_ops_unsupported, .timeout = 60)
{
    pld_world *w = cu_world(3);
    unsup *u = cu_alloc(w, sizeof *u);
    u->sig = tu_signal(w, "sig", 1);
    for (size_t k = 0; k < COUNT(red_dtypes); k++) {
        u->data = tu_window(w, "data", red_dtypes[k], 2, PLD_IDX(3, 5));
        for (int op = PLD_MAX; op <= PLD_PROD; op++) {
            u->op = (pld_reduce_op)op;
            pld_status st = pld_launch(w, k_unsup, u);
            cr_expect_eq(st, PLD_ERR_UNSUPPORTED, "reduce_scatter %s %s: %s: %s",
                         pld_dtype_name(red_dtypes[k]), cu_op_name(u->op), pld_status_name(st),
                         pld_world_error(w));
            TU_EXPECT_CONTAINS(pld_world_error(w), "pld_reduce_scatter");
            TU_EXPECT_CONTAINS(pld_world_error(w), "Sum only");
        }
        cu_free(w, u->data);
        TU_ASSERT_STATUS(pld_window_buffer_reset(w, u->sig.buf), PLD_OK);
    }
    cu_finalize(w);
}

/* Reductions on dtypes other than fp32/fp16/bf16/int32 are unsupported. */
Test(ref_reduce, other_dtypes_unsupported, .timeout = 60)
{
    static const pld_dtype others[] = {PLD_INT16, PLD_INT8, PLD_UINT8, PLD_INT64, PLD_FP64};
    pld_world *w = cu_world(2);
    unsup *u = cu_alloc(w, sizeof *u);
    u->sig = tu_signal(w, "sig", 1);
    for (size_t k = 0; k < COUNT(others); k++) {
        u->data = tu_window(w, "data", others[k], 2, PLD_IDX(2, 4));
        for (int which = 0; which <= 1; which++) {
            u->which = which;
            u->op = PLD_SUM;
            pld_status st = pld_launch(w, k_unsup, u);
            cr_expect_eq(st, PLD_ERR_UNSUPPORTED, "%s Sum on %s: %s: %s",
                         which ? "allreduce" : "reduce_scatter", pld_dtype_name(others[k]),
                         pld_status_name(st), pld_world_error(w));
            TU_EXPECT_CONTAINS(pld_world_error(w), pld_dtype_name(others[k]));
        }
        cu_free(w, u->data);
        TU_ASSERT_STATUS(pld_window_buffer_reset(w, u->sig.buf), PLD_OK);
    }
    cu_finalize(w);
}
