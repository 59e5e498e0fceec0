/* SPDX-License-Identifier: Apache-2.0 */
/* Tensor-level point-to-point: pld_put / pld_get with optional sub-regions,
 * chunking and pipelining.
 *
 * A transfer is staged through UB: without chunk sizes the whole region must
 * fit the rank's free UB, so code that runs here also fits the hardware.
 * On this backend data moves straight between the buffers (memcpy runs); the
 * staging is the budget rule and the chunk plan shown in the listing. */
#include <stdio.h>
#include <string.h>

#include "prim/prim.h"
#include "trace/ir_rec.h"

typedef struct xfer_plan {
    pld__region wr, lr; /* window side, local side (same extents, same nd) */
    int64_t cr, cc;     /* chunk rows / cols (inner two dims) */
    int64_t nchunks;
    size_t staging; /* bytes of UB the staging tile(s) need */
} xfer_plan;

static const char *which_given(const pld_xfer *x)
{
    if (x->dst_offsets && !x->src_offsets && !x->shape)
        return "dst_offsets only";
    if (!x->dst_offsets && x->src_offsets && !x->shape)
        return "src_offsets only";
    if (!x->dst_offsets && !x->src_offsets && x->shape)
        return "shape only";
    if (!x->shape)
        return "no shape";
    if (!x->src_offsets)
        return "no src_offsets";
    return "no dst_offsets";
}

/* Region extents for a tensor of `nd` dims from a shape of `n` dims,
 * right-aligned; the dropped leading extents must be 1. */
static void fit_shape(pld_ctx *c, const char *api, const char *wname, int nd, const int64_t *shape,
                      int n, int64_t *ext)
{
    char dims[96], owner[PLD__NAME_MAX + 16];
    for (int i = 0; i < n - nd; i++)
        if (shape[i] != 1)
            pld__kraise(c, PLD_ERR_ARG, api,
                        "shape %s does not fit the %d-D %s (its leading extents must be 1)",
                        pld__fmt_dims(dims, sizeof dims, shape, n), nd,
                        pld__owner(owner, sizeof owner, wname));
    for (int i = 0; i < nd; i++)
        ext[i] = shape[n - nd + i];
}

static void plan_xfer(pld_ctx *c, const char *api, const pld_xfer *x, pld_dtensor win,
                      const char *wrole, pld_tensor loc, const char *lrole, const int64_t *w_off,
                      const int64_t *l_off, xfer_plan *p)
{
    char a[96], b[96];
    size_t esz = pld_dtype_size(win.dtype);
    int given = (x->dst_offsets != NULL) + (x->src_offsets != NULL) + (x->shape != NULL);
    if (given != 0 && given != 3)
        pld__kraise(c, PLD_ERR_ARG, api, "dst_offsets, src_offsets and shape go together (got %s)",
                    which_given(x));
    if (win.dtype != loc.dtype)
        pld__kraise(c, PLD_ERR_ARG, api, "%s window '%s' is %s but %s tensor is %s", wrole,
                    win.buf->name, pld_dtype_name(win.dtype), lrole, pld_dtype_name(loc.dtype));
    int n = win.ndim > loc.ndim ? win.ndim : loc.ndim;
    if (given == 0) {
        if (win.ndim != loc.ndim ||
            memcmp(win.shape, loc.shape, sizeof(int64_t) * (size_t)win.ndim))
            pld__kraise(c, PLD_ERR_ARG, api,
                        "%s window '%s' %s and %s tensor %s differ in shape; pass "
                        "dst_offsets/src_offsets/shape to move a sub-region",
                        wrole, win.buf->name, pld__fmt_dims(a, sizeof a, win.shape, win.ndim),
                        lrole, pld__fmt_dims(b, sizeof b, loc.shape, loc.ndim));
        pld__region_make(c, api, wrole, win.buf->name, win.ndim, win.shape, NULL, NULL, esz,
                         &p->wr);
        pld__region_make(c, api, lrole, NULL, loc.ndim, loc.shape, NULL, NULL, esz, &p->lr);
    } else {
        int64_t wext[PLD_MAX_DIMS], lext[PLD_MAX_DIMS];
        int sn = pld__idx_count(x->shape);
        if (sn >= 0 && sn != n)
            pld__kraise(c, PLD_ERR_ARG, api,
                        "shape has %d entries; it needs %d (the larger ndim of the two tensors)",
                        sn, n);
        fit_shape(c, api, win.buf->name, win.ndim, x->shape, n, wext);
        fit_shape(c, api, NULL, loc.ndim, x->shape, n, lext);
        pld__region_make(c, api, wrole, win.buf->name, win.ndim, win.shape, w_off, wext, esz,
                         &p->wr);
        pld__region_make(c, api, lrole, NULL, loc.ndim, loc.shape, l_off, lext, esz, &p->lr);
    }
    pld__region_pad(&p->wr, n);
    pld__region_pad(&p->lr, n);

    /* chunk plan over the inner two dims */
    if (x->chunk_rows < 0 || x->chunk_cols < 0)
        pld__kraise(c, PLD_ERR_ARG, api, "chunk_rows %lld / chunk_cols %lld must be >= 0",
                    (long long)x->chunk_rows, (long long)x->chunk_cols);
    if (x->pipeline && (x->chunk_rows <= 0 || x->chunk_cols <= 0))
        pld__kraise(c, PLD_ERR_ARG, api,
                    "pipeline needs chunk_rows > 0 and chunk_cols > 0 (got %lld, %lld)",
                    (long long)x->chunk_rows, (long long)x->chunk_cols);
    int64_t rows = n >= 2 ? p->wr.ext[n - 2] : 1, cols = p->wr.ext[n - 1];
    int64_t outer = 1;
    for (int i = 0; i < n - 2; i++)
        outer *= p->wr.ext[i];
    int chunked = x->chunk_rows > 0 || x->chunk_cols > 0;
    p->cr = x->chunk_rows > 0 && x->chunk_rows < rows ? x->chunk_rows : rows;
    p->cc = x->chunk_cols > 0 && x->chunk_cols < cols ? x->chunk_cols : cols;
    p->nchunks = chunked ? outer * ((rows + p->cr - 1) / p->cr) * ((cols + p->cc - 1) / p->cc) : 1;
    uint64_t stage = chunked ? (uint64_t)p->cr * (uint64_t)p->cc * esz * (x->pipeline ? 2u : 1u)
                             : (uint64_t)pld__region_bytes(&p->wr);
    size_t free_ub = c->agent->ub_cap - c->agent->ub_used;
    if (stage > free_ub) {
        if (!chunked)
            pld__kraise(c, PLD_ERR_NOMEM, api,
                        "transfer of %s (%llu bytes) is staged whole through UB, but only %zu "
                        "of %zu bytes are free; set chunk_rows/chunk_cols in pld_xfer",
                        pld__fmt_dims(a, sizeof a, p->wr.ext, n), (unsigned long long)stage,
                        free_ub, c->agent->ub_cap);
        pld__kraise(c, PLD_ERR_NOMEM, api,
                    "chunk [%lld,%lld]%s needs %llu bytes of UB but only %zu of %zu are free",
                    (long long)p->cr, (long long)p->cc, x->pipeline ? " x2 (pipeline)" : "",
                    (unsigned long long)stage, free_ub, c->agent->ub_cap);
    }
    p->staging = (size_t)stage;
    if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS)) {
        snprintf(a, sizeof a, "%s of %s staged %s through UB, with the tiles in use,",
                 chunked ? "chunk" : "transfer",
                 pld__fmt_dims(b, sizeof b, chunked ? (int64_t[2]){p->cr, p->cc} : p->wr.ext,
                               chunked ? 2 : n),
                 x->pipeline ? "twice (pipeline)"
                 : chunked   ? "once"
                             : "whole");
        pld__hazard_limit_check(c, api, PLD__HZ_UB, stage + c->agent->ub_used, a);
    }
}

/* 1 if the whole transfer is one contiguous byte run on both sides. */
static int one_run(const xfer_plan *p)
{
    pld__runs it;
    pld__runs_init(&it, &p->wr, &p->lr);
    return it.remaining == 1;
}

/* Calls fn once per chunk with the chunk's window and local sub-regions. */
typedef void (*chunk_fn)(pld_ctx *c, const char *api, const pld__region *wr, const pld__region *lr,
                         void *arg);

static void for_each_chunk(pld_ctx *c, const char *api, const xfer_plan *p, chunk_fn fn, void *arg)
{
    /* Chunks only model the UB staging (checked in plan_xfer, shown in the
     * listing). When the whole region is one run on both sides the chunks
     * tile it exactly, so one call moves the same bytes: the transport sees
     * the real size (large copies stream past the caches) and an 8 MiB
     * row is one copy, not 86 of 96 KiB. */
    if (p->nchunks == 1 || one_run(p)) {
        fn(c, api, &p->wr, &p->lr, arg);
        return;
    }
    int n = p->wr.nd;
    int64_t rows = n >= 2 ? p->wr.ext[n - 2] : 1, cols = p->wr.ext[n - 1];
    int64_t idx[PLD_MAX_DIMS] = {0};
    for (;;) {
        for (int64_t r0 = 0; r0 < rows; r0 += p->cr) {
            for (int64_t c0 = 0; c0 < cols; c0 += p->cc) {
                pld__region w = p->wr, l = p->lr;
                for (int d = 0; d < n - 2; d++) {
                    w.off[d] += idx[d], l.off[d] += idx[d];
                    w.ext[d] = l.ext[d] = 1;
                }
                if (n >= 2) {
                    w.off[n - 2] += r0, l.off[n - 2] += r0;
                    w.ext[n - 2] = l.ext[n - 2] = rows - r0 < p->cr ? rows - r0 : p->cr;
                }
                w.off[n - 1] += c0, l.off[n - 1] += c0;
                w.ext[n - 1] = l.ext[n - 1] = cols - c0 < p->cc ? cols - c0 : p->cc;
                fn(c, api, &w, &l, arg);
            }
        }
        int d = n - 3;
        while (d >= 0 && ++idx[d] == p->wr.ext[d])
            idx[d--] = 0;
        if (d < 0)
            return;
    }
}

typedef struct put_arg {
    pld_dtensor dst;
    int peer;
    const unsigned char *src;
    pld_atomic atomic;
} put_arg;

static void put_chunk(pld_ctx *c, const char *api, const pld__region *wr, const pld__region *lr,
                      void *arg)
{
    put_arg *a = arg;
    pld__xfer_to_peer(c, api, a->dst.buf, a->peer, wr, a->src, lr, a->atomic, a->dst.dtype);
}

typedef struct get_arg {
    pld_dtensor src;
    int peer;
    unsigned char *dst;
} get_arg;

static void get_chunk(pld_ctx *c, const char *api, const pld__region *wr, const pld__region *lr,
                      void *arg)
{
    get_arg *a = arg;
    pld__xfer_from_peer(c, api, a->dst, lr, a->src.buf, a->peer, wr);
}

static void check_self_alias(pld_ctx *c, const char *api, pld_window_buffer *buf, int peer,
                             const xfer_plan *p, const void *local)
{
    char a[128], b[128];
    if (peer != c->rank)
        return;
    const unsigned char *mine = c->tp->window_peer_ptr(c->w, buf, c->wrank);
    /* integer addresses: comparing pointers into different objects is UB */
    if (mine && pld__regions_overlap((uintptr_t)mine, &p->wr, (uintptr_t)local, &p->lr))
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "window '%s' region %s and the tensor region %s overlap in memory "
                    "(peer is this rank)",
                    buf->name, pld__fmt_region(a, sizeof a, &p->wr),
                    pld__fmt_region(b, sizeof b, &p->lr));
}

static void emit_xfer(pld_ctx *c, const char *verb, const char *lhs, const char *rhs,
                      const xfer_plan *p, const pld_xfer *x)
{
    if (p->nchunks > 1 || x->chunk_rows || x->chunk_cols)
        pld__ir_emit(c->ir, c->depth, "%s %s -> %s chunks %lld of [%lld,%lld] staging %zu B%s%s",
                     verb, lhs, rhs, (long long)p->nchunks, (long long)p->cr, (long long)p->cc,
                     p->staging, x->pipeline ? " pipelined" : "",
                     x->atomic == PLD_ATOMIC_ADD ? " atomic_add" : "");
    else
        pld__ir_emit(c->ir, c->depth, "%s %s -> %s%s", verb, lhs, rhs,
                     x->atomic == PLD_ATOMIC_ADD ? " atomic_add" : "");
}

void pld_put(pld_ctx *c, pld_dtensor dst, int peer, pld_tensor src, const pld_xfer *x)
{
    PLD__CTX_CHECK(c, "pld_put");
    static const char api[] = "pld_put";
    static const pld_xfer none;
    xfer_plan p;
    pld__check_live(c);
    if (!x)
        x = &none;
    pld__check_dtensor(c, api, "dst", dst);
    pld__check_tensor(c, api, "src", src);
    pld__check_peer(c, api, peer);
    pld__check_atomic(c, api, x->atomic, dst.dtype);
    plan_xfer(c, api, x, dst, "dst", src, "src", x->dst_offsets, x->src_offsets, &p);
    check_self_alias(c, api, dst.buf, peer, &p, src.data);
    put_arg a = {.dst = dst, .peer = peer, .src = src.data, .atomic = x->atomic};
    for_each_chunk(c, api, &p, put_chunk, &a);
    if (c->rec)
        pld__rec_xfer(c, PLD__REC_PUT, peer, dst.buf, pld__rec_bytes(p.wr.nd, p.wr.ext, p.wr.esz),
                      x->atomic);
    if (c->ir) {
        char l[128], r[160], reg[128];
        snprintf(l, sizeof l, "tensor%s", pld__fmt_region(reg, sizeof reg, &p.lr));
        snprintf(r, sizeof r, "%s@peer%d%s", dst.buf->name, peer,
                 pld__fmt_region(reg, sizeof reg, &p.wr));
        emit_xfer(c, "tile.put", l, r, &p, x);
    }
}

void pld_get(pld_ctx *c, pld_tensor dst, int peer, pld_dtensor src, const pld_xfer *x)
{
    PLD__CTX_CHECK(c, "pld_get");
    static const char api[] = "pld_get";
    static const pld_xfer none;
    xfer_plan p;
    pld__check_live(c);
    if (!x)
        x = &none;
    pld__check_dtensor(c, api, "src", src);
    pld__check_tensor(c, api, "dst", dst);
    pld__check_peer(c, api, peer);
    if (x->atomic != PLD_ATOMIC_NONE)
        pld__kraise(c, PLD_ERR_UNSUPPORTED, api,
                    "atomic %d: pld_get only reads (use pld_put or pld_remote_store to add)",
                    (int)x->atomic);
    plan_xfer(c, api, x, src, "src", dst, "dst", x->src_offsets, x->dst_offsets, &p);
    check_self_alias(c, api, src.buf, peer, &p, dst.data);
    get_arg a = {.src = src, .peer = peer, .dst = dst.data};
    for_each_chunk(c, api, &p, get_chunk, &a);
    if (c->rec)
        pld__rec_xfer(c, PLD__REC_GET, peer, src.buf, pld__rec_bytes(p.wr.nd, p.wr.ext, p.wr.esz),
                      PLD_ATOMIC_NONE);
    if (c->ir) {
        char l[160], r[128], reg[128];
        snprintf(l, sizeof l, "%s@peer%d%s", src.buf->name, peer,
                 pld__fmt_region(reg, sizeof reg, &p.wr));
        snprintf(r, sizeof r, "tensor%s", pld__fmt_region(reg, sizeof reg, &p.lr));
        emit_xfer(c, "tile.get", l, r, &p, x);
    }
}

/* ---- pre-checked row transfers for the builtins (prim.h) ---------------- */

/* Whole rows of two row-major arrays of the same width are one contiguous
 * run on each side: their offsets and length, without building regions.
 * When the peer is this rank and the runs overlap, the caller takes the
 * general path, which raises the alias error naming both regions. */
typedef struct rows_run {
    size_t woff, bytes;
    unsigned char *local;
    int self_overlap;
} rows_run;

static rows_run rows_as_run(pld_ctx *c, pld_window_buffer *buf, int peer, int64_t row_bytes,
                            int64_t win_row, void *local, int64_t local_row, int64_t rows)
{
    rows_run r;
    r.woff = (size_t)(win_row * row_bytes);
    r.bytes = (size_t)(rows * row_bytes);
    r.local = (unsigned char *)local + (size_t)(local_row * row_bytes);
    r.self_overlap = 0;
    if (peer == c->rank) {
        const unsigned char *mine = c->tp->window_peer_ptr(c->w, buf, c->wrank);
        /* integer addresses: comparing pointers into different objects is UB */
        uintptr_t w0 = (uintptr_t)mine + r.woff, l0 = (uintptr_t)r.local;
        r.self_overlap = mine && w0 < l0 + r.bytes && l0 < w0 + r.bytes;
    }
    return r;
}

void pld__put_rows_checked(pld_ctx *c, pld_dtensor dst, int peer, int64_t dst_row, pld_tensor src,
                           int64_t src_row, int64_t rows, const pld_xfer *x)
{
    if (c->ir || c->rec) { /* the listing shows the call exactly as pld_put records it */
        c->lib_tensors = 1;
        pld_put(c, dst, peer, src, x);
        c->lib_tensors = 0;
        return;
    }
    static const char api[] = "pld_put";
    xfer_plan p;
    size_t esz = pld_dtype_size(dst.dtype);
    pld__check_live(c);
    if (!(c->obs & PLD__OBS_RACE) && src.shape[1] == dst.shape[1]) {
        rows_run r = rows_as_run(c, dst.buf, peer, dst.shape[1] * (int64_t)esz, dst_row, src.data,
                                 src_row, rows);
        if (!r.self_overlap) {
            pld__put_run(c, api, dst.buf, peer, r.woff, r.local, r.bytes);
            return;
        }
    }
    pld__region_rect(dst.shape[0], dst.shape[1], dst_row, 0, rows, dst.shape[1], esz, &p.wr);
    pld__region_rect(src.shape[0], src.shape[1], src_row, 0, rows, src.shape[1], esz, &p.lr);
    check_self_alias(c, api, dst.buf, peer, &p, src.data);
    /* whole rows of two row-major arrays: one contiguous run, one call
     * (for_each_chunk would merge the chunks of x the same way) */
    pld__xfer_to_peer(c, api, dst.buf, peer, &p.wr, src.data, &p.lr, PLD_ATOMIC_NONE, dst.dtype);
}

void pld__get_rows_checked(pld_ctx *c, pld_tensor dst, int64_t dst_row, pld_dtensor src, int peer,
                           int64_t src_row, int64_t rows, const pld_xfer *x)
{
    if (c->ir || c->rec) {
        c->lib_tensors = 1;
        pld_get(c, dst, peer, src, x);
        c->lib_tensors = 0;
        return;
    }
    static const char api[] = "pld_get";
    xfer_plan p;
    size_t esz = pld_dtype_size(src.dtype);
    pld__check_live(c);
    if (!(c->obs & PLD__OBS_RACE) && src.shape[1] == dst.shape[1]) {
        rows_run r = rows_as_run(c, src.buf, peer, src.shape[1] * (int64_t)esz, src_row, dst.data,
                                 dst_row, rows);
        if (!r.self_overlap) {
            pld__get_run(c, api, r.local, src.buf, peer, r.woff, r.bytes);
            return;
        }
    }
    pld__region_rect(src.shape[0], src.shape[1], src_row, 0, rows, src.shape[1], esz, &p.wr);
    pld__region_rect(dst.shape[0], dst.shape[1], dst_row, 0, rows, dst.shape[1], esz, &p.lr);
    check_self_alias(c, api, src.buf, peer, &p, dst.data);
    pld__xfer_from_peer(c, api, dst.data, &p.lr, src.buf, peer, &p.wr);
}
