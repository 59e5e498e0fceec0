/* Tiles: 2-D scratch buffers from the rank's UB budget, and tile <-> local
 * tensor load/store. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "prim/prim.h"
#include "prim/region.h"

/* Freed tiles kept for the next tile of the same size: the builtins create
 * and free their staging tiles on every call, and malloc, calloc and free
 * of a 4 KiB buffer cost more than copying it (P=2 4 KiB allreduce: 16 %
 * of the time). Not under ASan, which would then miss a use of a tile after
 * pld_tile_free. */
#if defined(__SANITIZE_ADDRESS__)
#define PLD__TILE_SPARES 0
#else
#define PLD__TILE_SPARES 4
#endif

/* A spare of exactly `bytes`, zeroed like a new tile; NULL if none. */
static pld_tile *take_spare(pld_ctx *c, size_t bytes)
{
    for (pld_tile **at = &c->spares; *at; at = &(*at)->next) {
        pld_tile *t = *at;
        if (t->bytes != bytes)
            continue;
        *at = t->next;
        c->nspares--;
        memset(t->data, 0, bytes);
        return t;
    }
    return NULL;
}

void pld__tile_spares_free(pld_ctx *c)
{
    while (c->spares) {
        pld_tile *t = c->spares;
        c->spares = t->next;
        free(t->data);
        free(t);
    }
    c->nspares = 0;
}

pld_tile *pld__tile_alloc(pld_ctx *c, const char *api, pld_dtype dtype, int64_t rows, int64_t cols)
{
    size_t esz = pld_dtype_size(dtype);
    if (esz == 0)
        pld__kraise(c, PLD_ERR_ARG, api, "invalid dtype %d", (int)dtype);
    if (rows <= 0 || cols <= 0)
        pld__kraise(c, PLD_ERR_ARG, api, "tile shape [%lld,%lld] must be positive",
                    (long long)rows, (long long)cols);
    /* overflow-safe: compare against the budget before multiplying through */
    if ((uint64_t)rows > c->ub_cap || (uint64_t)cols > c->ub_cap ||
        (size_t)rows * (size_t)cols > c->ub_cap / esz ||
        (size_t)rows * (size_t)cols * esz > c->ub_cap - c->ub_used)
        pld__kraise(c, PLD_ERR_NOMEM, api,
                    "tile %s [%lld,%lld] needs %llu bytes but only %zu of the UB budget %zu "
                    "are free (%zu in use)",
                    pld_dtype_name(dtype), (long long)rows, (long long)cols,
                    (unsigned long long)rows * (unsigned long long)cols * esz,
                    c->ub_cap - c->ub_used, c->ub_cap, c->ub_used);
    size_t bytes = (size_t)rows * (size_t)cols * esz;
    pld_tile *t = take_spare(c, bytes);
    if (!t) {
        t = calloc(1, sizeof *t);
        void *data = calloc(1, bytes);
        if (!t || !data) {
            free(t);
            free(data);
            pld__kraise(c, PLD_ERR_NOMEM, api, "out of host memory for a %zu-byte tile", bytes);
        }
        t->data = data;
    }
    t->prev = NULL;
    t->dtype = dtype;
    t->rows = rows;
    t->cols = cols;
    t->bytes = bytes;
    t->id = c->next_tile_id++;
    t->next = c->tiles;
    if (c->tiles)
        c->tiles->prev = t;
    c->tiles = t;
    c->ub_used += bytes;
    return t;
}

pld_tile *pld_tile_create(pld_ctx *c, pld_dtype dtype, int64_t rows, int64_t cols)
{
    pld__check_live(c);
    pld_tile *t = pld__tile_alloc(c, "pld_tile_create", dtype, rows, cols);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.create t%d %s[%lld,%lld]", t->id,
                     pld_dtype_name(dtype), (long long)rows, (long long)cols);
    return t;
}

void pld_tile_free(pld_ctx *c, pld_tile *t)
{
    if (!t)
        return;
    if (t->prev)
        t->prev->next = t->next;
    else
        c->tiles = t->next;
    if (t->next)
        t->next->prev = t->prev;
    c->ub_used -= t->bytes;
    if (c->nspares < PLD__TILE_SPARES) {
        t->next = c->spares;
        c->spares = t;
        c->nspares++;
        return;
    }
    free(t->data);
    free(t);
}

void *pld_tile_data(pld_tile *t)
{
    return t ? t->data : NULL;
}

int64_t pld_tile_rows(const pld_tile *t)
{
    return t ? t->rows : 0;
}

int64_t pld_tile_cols(const pld_tile *t)
{
    return t ? t->cols : 0;
}

pld_dtype pld_tile_dtype(const pld_tile *t)
{
    return t ? t->dtype : PLD_FP32;
}

size_t pld_ub_used(const pld_ctx *c)
{
    return c->ub_used;
}

size_t pld_ub_capacity(const pld_ctx *c)
{
    return c->ub_cap;
}

void pld__region_of_tile(const pld_tile *t, pld__region *r)
{
    r->nd = 2;
    r->esz = pld_dtype_size(t->dtype);
    r->full[0] = r->ext[0] = t->rows;
    r->full[1] = r->ext[1] = t->cols;
    r->off[0] = r->off[1] = 0;
}

void pld__tile_region_in(pld_ctx *c, const char *api, const char *what, const pld_tile *t,
                         const char *wname, int nd, const int64_t *full, pld_dtype dtype,
                         const int64_t *offsets, pld__region *out)
{
    char owner[PLD__NAME_MAX + 16];
    if (t->dtype != dtype)
        pld__kraise(c, PLD_ERR_ARG, api, "tile t%d is %s but %s is %s", t->id,
                    pld_dtype_name(t->dtype), pld__owner(owner, sizeof owner, wname),
                    pld_dtype_name(dtype));
    int64_t ext[PLD_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        ext[i] = 1;
    if (nd == 1) {
        if (t->rows != 1)
            pld__kraise(c, PLD_ERR_ARG, api,
                        "tile t%d [%lld,%lld] has more than one row but %s is 1-D", t->id,
                        (long long)t->rows, (long long)t->cols,
                        pld__owner(owner, sizeof owner, wname));
        ext[0] = t->cols;
    } else {
        ext[nd - 2] = t->rows;
        ext[nd - 1] = t->cols;
    }
    pld__region_make(c, api, what, wname, nd, full, offsets, ext, pld_dtype_size(dtype), out);
}

/* Copies between a tile and a region of plain memory, run by run. */
void pld__copy_region(unsigned char *dst, const pld__region *dr, const unsigned char *src,
                      const pld__region *sr)
{
    pld__runs it;
    size_t a, b, n;
    pld__runs_init(&it, dr, sr);
    while (pld__runs_next(&it, &a, &b, &n))
        memcpy(dst + a, src + b, n);
}

void pld__check_tensor(pld_ctx *c, const char *api, const char *what, pld_tensor t)
{
    if (pld_dtype_size(t.dtype) == 0)
        pld__kraise(c, PLD_ERR_ARG, api, "%s tensor has invalid dtype %d", what, (int)t.dtype);
    if (t.ndim < 1 || t.ndim > PLD_MAX_DIMS)
        pld__kraise(c, PLD_ERR_ARG, api, "%s tensor has ndim %d (1..%d)", what, t.ndim,
                    PLD_MAX_DIMS);
    if (!t.data)
        pld__kraise(c, PLD_ERR_ARG, api, "%s tensor has no data", what);
    for (int i = 0; i < t.ndim; i++)
        if (t.shape[i] <= 0)
            pld__kraise(c, PLD_ERR_ARG, api, "%s tensor dim %d has extent %lld", what, i,
                        (long long)t.shape[i]);
    /* On transports whose ranks are other processes, host memory from
     * malloc is a stale private copy in the rank (or not mapped at all), and
     * writes to it never reach the host. */
    size_t bytes = (size_t)pld_tensor_numel(t) * pld_dtype_size(t.dtype);
    if (!c->tp->rank_mem_ok(c, t.data, bytes))
        pld__kraise(c, PLD_ERR_ARG, api,
                    "%s tensor data %p (%zu bytes) is private memory, not shared with the host "
                    "and the other ranks of the '%s' transport; allocate it with pld_host_alloc "
                    "(or use a window)",
                    what, t.data, bytes, c->tp->name);
}

void pld_load(pld_ctx *c, pld_tile *dst, pld_tensor src, const int64_t *offsets)
{
    static const char api[] = "pld_load";
    pld__region tr, sr;
    char reg[128];
    pld__check_live(c);
    if (!dst)
        pld__kraise(c, PLD_ERR_ARG, api, "tile is NULL");
    pld__check_tensor(c, api, "src", src);
    pld__tile_region_in(c, api, "src", dst, NULL, src.ndim, src.shape, src.dtype, offsets,
                        &sr);
    pld__region_of_tile(dst, &tr);
    pld__region_pad(&tr, sr.nd);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
        pld__race_tensor(c, api, src.data, &sr, 0);
    pld__copy_region(dst->data, &tr, src.data, &sr);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.load t%d <- tensor%s", dst->id,
                     pld__fmt_region(reg, sizeof reg, &sr));
}

void pld_store(pld_ctx *c, const pld_tile *src, pld_tensor dst, const int64_t *offsets)
{
    static const char api[] = "pld_store";
    pld__region tr, dr;
    char reg[128];
    pld__check_live(c);
    if (!src)
        pld__kraise(c, PLD_ERR_ARG, api, "tile is NULL");
    pld__check_tensor(c, api, "dst", dst);
    pld__tile_region_in(c, api, "dst", src, NULL, dst.ndim, dst.shape, dst.dtype, offsets,
                        &dr);
    pld__region_of_tile(src, &tr);
    pld__region_pad(&tr, dr.nd);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
        pld__race_tensor(c, api, dst.data, &dr, 1);
    pld__copy_region(dst.data, &dr, src->data, &tr);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.store t%d -> tensor%s", src->id,
                     pld__fmt_region(reg, sizeof reg, &dr));
}

/* ---- pre-checked forms for the builtins (prim.h) ------------------------ */

void pld__load_checked(pld_ctx *c, pld_tile *dst, pld_tensor src, int64_t row, int64_t col)
{
    if (c->ir) {
        int64_t at[2] = {row, col};
        pld_load(c, dst, src, at);
        return;
    }
    pld__region tr, sr;
    pld__check_live(c);
    pld__region_rect(src.shape[0], src.shape[1], row, col, dst->rows, dst->cols,
                     pld_dtype_size(dst->dtype), &sr);
    pld__region_of_tile(dst, &tr);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
        pld__race_tensor(c, "pld_load", src.data, &sr, 0);
    pld__copy_region(dst->data, &tr, src.data, &sr);
}

void pld__store_checked(pld_ctx *c, const pld_tile *src, pld_tensor dst, int64_t row, int64_t col)
{
    if (c->ir) {
        int64_t at[2] = {row, col};
        pld_store(c, src, dst, at);
        return;
    }
    pld__region tr, dr;
    pld__check_live(c);
    pld__region_rect(dst.shape[0], dst.shape[1], row, col, src->rows, src->cols,
                     pld_dtype_size(src->dtype), &dr);
    pld__region_of_tile(src, &tr);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_RACE))
        pld__race_tensor(c, "pld_store", dst.data, &dr, 1);
    pld__copy_region(dst.data, &dr, src->data, &tr);
}
