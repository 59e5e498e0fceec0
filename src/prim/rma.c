/* SPDX-License-Identifier: Apache-2.0 */
/* Tile-level RMA: a 2-D tile lands on the innermost two dims of a window. */
#include <stdio.h>

#include "prim/prim.h"
#include "trace/ir_rec.h"

static int atomic_add_supported(pld_dtype t)
{
    return t == PLD_FP32 || t == PLD_FP16 || t == PLD_BF16 || t == PLD_INT32 || t == PLD_INT16 ||
           t == PLD_INT8;
}

void pld__check_atomic(pld_ctx *c, const char *api, pld_atomic atomic, pld_dtype dtype)
{
    if (atomic != PLD_ATOMIC_NONE && atomic != PLD_ATOMIC_ADD)
        pld__kraise(c, PLD_ERR_ARG, api, "atomic %d is not a pld_atomic (None=0, Add=1)",
                    (int)atomic);
    if (atomic == PLD_ATOMIC_ADD && !atomic_add_supported(dtype))
        pld__kraise(c, PLD_ERR_UNSUPPORTED, api,
                    "atomic add on %s is not supported (fp32, fp16, bf16, int32, int16, int8)",
                    pld_dtype_name(dtype));
}

void pld_remote_load(pld_ctx *c, pld_tile *dst, pld_dtensor src, int peer, const int64_t *offsets)
{
    PLD__CTX_CHECK(c, "pld_remote_load");
    static const char api[] = "pld_remote_load";
    pld__region wr, tr;
    char reg[128];
    pld__check_live(c);
    pld__check_tile(c, api, "dst", dst);
    pld__check_dtensor(c, api, "src", src);
    pld__check_peer(c, api, peer);
    pld__tile_region_in(c, api, "src", dst, src.buf->name, src.ndim, src.shape, src.dtype, offsets,
                        &wr);
    pld__region_of_tile(dst, &tr);
    pld__region_pad(&wr, tr.nd); /* a 1-D window meets the 2-D tile */
    pld__region_pad(&tr, wr.nd);
    pld__xfer_from_peer(c, api, dst->data, &tr, src.buf, peer, &wr);
    if (c->rec)
        pld__rec_xfer(c, PLD__REC_GET, peer, src.buf, (int64_t)dst->bytes, PLD_ATOMIC_NONE);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.remote_load t%d <- %s@peer%d%s", dst->id, src.buf->name,
                     peer, pld__fmt_region(reg, sizeof reg, &wr));
}

void pld_remote_store(pld_ctx *c, const pld_tile *src, pld_dtensor dst, int peer,
                      const int64_t *offsets, pld_atomic atomic)
{
    PLD__CTX_CHECK(c, "pld_remote_store");
    static const char api[] = "pld_remote_store";
    pld__region wr, tr;
    char reg[128];
    pld__check_live(c);
    pld__check_tile(c, api, "src", src);
    pld__check_dtensor(c, api, "dst", dst);
    pld__check_peer(c, api, peer);
    pld__check_atomic(c, api, atomic, dst.dtype);
    pld__tile_region_in(c, api, "dst", src, dst.buf->name, dst.ndim, dst.shape, dst.dtype, offsets,
                        &wr);
    pld__region_of_tile(src, &tr);
    pld__region_pad(&wr, tr.nd); /* a 1-D window meets the 2-D tile */
    pld__region_pad(&tr, wr.nd);
    pld__xfer_to_peer(c, api, dst.buf, peer, &wr, src->data, &tr, atomic, dst.dtype);
    if (c->rec)
        pld__rec_xfer(c, PLD__REC_PUT, peer, dst.buf, (int64_t)src->bytes, atomic);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.remote_store t%d -> %s@peer%d%s%s", src->id,
                     dst.buf->name, peer, pld__fmt_region(reg, sizeof reg, &wr),
                     atomic == PLD_ATOMIC_ADD ? " atomic_add" : "");
}

void pld_remote_reduce(pld_ctx *c, pld_tile *acc, pld_dtensor src, int peer, const int64_t *offsets,
                       pld_reduce_op op)
{
    PLD__CTX_CHECK(c, "pld_remote_reduce");
    static const char api[] = "pld_remote_reduce";
    static const char *const names[] = {"sum", "max", "min", "prod"};
    pld__region wr, tr;
    char reg[128];
    pld__check_live(c);
    pld__check_tile(c, api, "acc", acc);
    if ((unsigned)op > PLD_PROD)
        pld__kraise(c, PLD_ERR_ARG, api, "op %d is not a pld_reduce_op (Sum, Max, Min, Prod)",
                    (int)op);
    pld__check_dtensor(c, api, "src", src);
    pld__check_peer(c, api, peer);
    pld__tile_region_in(c, api, "src", acc, src.buf->name, src.ndim, src.shape, src.dtype, offsets,
                        &wr);
    pld__region_of_tile(acc, &tr);
    pld__region_pad(&wr, tr.nd); /* a 1-D window meets the 2-D tile */
    pld__region_pad(&tr, wr.nd);
    pld__reduce_from_peer(c, api, acc->data, &tr, src.buf, peer, &wr, src.dtype, op);
    if (c->rec)
        pld__rec_xfer(c, PLD__REC_GET, peer, src.buf, (int64_t)acc->bytes, PLD_ATOMIC_NONE);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.remote_reduce t%d %s= %s@peer%d%s", acc->id, names[op],
                     src.buf->name, peer, pld__fmt_region(reg, sizeof reg, &wr));
}

void pld__load_reduce_checked(pld_ctx *c, pld_tile *acc, pld_tensor mine, pld_dtensor src, int peer,
                              int64_t row, int64_t col, pld_reduce_op op)
{
    if (!pld__observed(c) && acc->rows == 1) {
        pld__check_live(c);
        size_t esz = pld_dtype_size(src.dtype);
        size_t woff = (size_t)(row * src.shape[1] + col) * esz;
        size_t loff = (size_t)(row * mine.shape[1] + col) * esz;
        if (pld__load_reduce_from_peer(c, acc->data, (const unsigned char *)mine.data + loff,
                                       src.buf, peer, woff, (size_t)acc->cols * esz, src.dtype, op))
            return;
    }
    pld__load_checked(c, acc, mine, row, col);
    pld__remote_reduce_checked(c, acc, src, peer, row, col, op);
}

void pld__remote_reduce_checked(pld_ctx *c, pld_tile *acc, pld_dtensor src, int peer, int64_t row,
                                int64_t col, pld_reduce_op op)
{
    if (c->ir || c->rec) { /* the listing shows the public call */
        int64_t at[2] = {row, col};
        pld_remote_reduce(c, acc, src, peer, at, op);
        return;
    }
    pld__region wr, tr;
    pld__check_live(c);
    pld__region_rect(src.shape[0], src.shape[1], row, col, acc->rows, acc->cols,
                     pld_dtype_size(src.dtype), &wr);
    pld__region_of_tile(acc, &tr);
    pld__reduce_from_peer(c, "pld_remote_reduce", acc->data, &tr, src.buf, peer, &wr, src.dtype,
                          op);
}
