/* SPDX-License-Identifier: Apache-2.0 */
/* pld/ffi.h: the status of an interrupted call, the group's message, and
 * the primitives. */
#include <stdio.h>

#include "ffi/ffi_guard.h"

pld_status pld__ffi_status(pld_ctx *c)
{
    if (c->agent->raised != PLD_OK)
        return c->agent->raised;
    return PLD_ERR_PEER;
}

const char *pld_ffi_error(pld_ctx *c)
{
    return c ? c->sh->errmsg : "";
}

pld_status pld_ffi_fail(pld_ctx *c, const char *msg)
{
    PLD__FFI_RUN(c, pld_fail(c, "%s", msg ? msg : "(no message)"));
}

static void raise_it(pld_ctx *c, pld_status st, const char *api, const char *msg)
{
    pld__kraise(c, st == PLD_OK ? PLD_ERR_ARG : st, api ? api : "pld", "%s", msg ? msg : "");
}

pld_status pld_ffi_raise(pld_ctx *c, pld_status st, const char *api, const char *msg)
{
    PLD__FFI_RUN(c, raise_it(c, st, api, msg));
}

pld_status pld_ffi_team_ctx(pld_ctx *c, const pld_team *t, pld_ctx **out)
{
    PLD__FFI_RUN(c, *out = pld_team_ctx(c, t));
}

pld_status pld_ffi_notify(pld_ctx *c, const pld_dtensor *signal, int peer, const int64_t *offsets,
                          int32_t value, pld_notify_op op)
{
    PLD__FFI_RUN(c, pld_notify(c, *signal, peer, offsets, value, op));
}

pld_status pld_ffi_wait(pld_ctx *c, const pld_dtensor *signal, const int64_t *offsets,
                        int32_t expected, pld_wait_cmp cmp)
{
    PLD__FFI_RUN(c, pld_wait(c, *signal, offsets, expected, cmp));
}

pld_status pld_ffi_signal_read(pld_ctx *c, const pld_dtensor *signal, const int64_t *offsets,
                               int32_t *out)
{
    PLD__FFI_RUN(c, *out = pld_signal_read(c, *signal, offsets));
}

/* The tile round trips: a tile of the UB budget, as a C kernel would use
 * (its size is checked against the budget, and a race checker sees it). */
static void load_via_tile(pld_ctx *c, void *dst, int64_t rows, int64_t cols, const pld_dtensor *src,
                          int peer, const int64_t *offsets)
{
    pld_tile *t = pld_tile_create(c, src->dtype, rows, cols);
    pld_remote_load(c, t, *src, peer, offsets);
    memcpy(dst, pld_tile_data(t), (size_t)(rows * cols) * pld_dtype_size(src->dtype));
    pld_tile_free(c, t);
}

static void store_via_tile(pld_ctx *c, const void *src, int64_t rows, int64_t cols,
                           const pld_dtensor *dst, int peer, const int64_t *offsets,
                           pld_atomic atomic)
{
    pld_tile *t = pld_tile_create(c, dst->dtype, rows, cols);
    memcpy(pld_tile_data(t), src, (size_t)(rows * cols) * pld_dtype_size(dst->dtype));
    pld_remote_store(c, t, *dst, peer, offsets, atomic);
    pld_tile_free(c, t);
}

pld_status pld_ffi_remote_load(pld_ctx *c, void *dst, int64_t rows, int64_t cols,
                               const pld_dtensor *src, int peer, const int64_t *offsets)
{
    PLD__FFI_RUN(c, load_via_tile(c, dst, rows, cols, src, peer, offsets));
}

pld_status pld_ffi_remote_store(pld_ctx *c, const void *src, int64_t rows, int64_t cols,
                                const pld_dtensor *dst, int peer, const int64_t *offsets,
                                pld_atomic atomic)
{
    PLD__FFI_RUN(c, store_via_tile(c, src, rows, cols, dst, peer, offsets, atomic));
}

static pld_xfer region(const int64_t *dst_offsets, const int64_t *src_offsets, const int64_t *shape,
                       pld_atomic atomic)
{
    return (pld_xfer){
        .dst_offsets = dst_offsets, .src_offsets = src_offsets, .shape = shape, .atomic = atomic};
}

pld_status pld_ffi_put(pld_ctx *c, const pld_dtensor *dst, int peer, const pld_tensor *src,
                       const int64_t *dst_offsets, const int64_t *src_offsets, const int64_t *shape,
                       pld_atomic atomic)
{
    pld_xfer x = region(dst_offsets, src_offsets, shape, atomic);
    PLD__FFI_RUN(c, pld_put(c, *dst, peer, *src, &x));
}

pld_status pld_ffi_get(pld_ctx *c, const pld_tensor *dst, int peer, const pld_dtensor *src,
                       const int64_t *dst_offsets, const int64_t *src_offsets, const int64_t *shape)
{
    pld_xfer x = region(dst_offsets, src_offsets, shape, PLD_ATOMIC_NONE);
    PLD__FFI_RUN(c, pld_get(c, *dst, peer, *src, &x));
}
