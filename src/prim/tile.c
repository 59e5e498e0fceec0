/* SPDX-License-Identifier: Apache-2.0 */
/* Tiles: 2-D scratch buffers from the rank's UB budget, and tile <-> local
 * tensor load/store. */
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/internal.h"
#include "prim/prim.h"
#include "prim/region.h"

/* Tile handles come from a pool per agent (rank, or core of a multi-core
 * call) that lives as long as the world, so a stale handle (freed, of an
 * earlier launch, of another rank) still points at a handle that says so.
 * A freed handle waits in a queue behind TILE_QUARANTINE others before a
 * new tile reuses it. */
#define TILE_CHUNK 64
#define TILE_QUARANTINE 1024

#if defined(__SANITIZE_ADDRESS__)
#define TILE_SPARES 0
#else
#define TILE_SPARES 4
#endif

typedef struct tile_chunk {
    struct tile_chunk *next;
    int used;
    pld_tile t[TILE_CHUNK];
} tile_chunk;

struct pld__tile_pool {
    tile_chunk *chunks;           /* newest first */
    pld_tile *freed, *freed_tail; /* freed handles, oldest first */
    int nfreed;
    uint32_t serial; /* handles handed out: each one's generation */
    /* Freed buffers kept for the next tile of the same size: the builtins
     * create and free their staging tiles on every call, and malloc, calloc
     * and free of a 4 KiB buffer cost more than copying it (P=2 4 KiB
     * allreduce: 16 % of the time). Not under ASan, which would then miss a
     * use of a tile's data after pld_tile_free. */
    struct tile_spare {
        void *data;
        size_t bytes;
    } spare[TILE_SPARES > 0 ? TILE_SPARES : 1];
    int nspares;
};

static struct pld__tile_pool *pool_of(pld_ctx *c, const char *api)
{
    struct pld__tile_pool **slot = &c->w->tile_pools[c->wrank * c->sh->cores + c->core];
    if (!*slot && !(*slot = calloc(1, sizeof **slot)))
        pld__kraise(c, PLD_ERR_NOMEM, api, "out of host memory for tile handles");
    return *slot;
}

/* A handle nobody holds: the oldest freed one once enough are queued,
 * else a new one. */
static pld_tile *take_handle(pld_ctx *c, const char *api, struct pld__tile_pool *p)
{
    if (p->nfreed > TILE_QUARANTINE) {
        pld_tile *t = p->freed;
        p->freed = t->next;
        if (!p->freed)
            p->freed_tail = NULL;
        p->nfreed--;
        return t;
    }
    if (!p->chunks || p->chunks->used == TILE_CHUNK) {
        tile_chunk *k = calloc(1, sizeof *k);
        if (!k)
            pld__kraise(c, PLD_ERR_NOMEM, api, "out of host memory for tile handles");
        k->next = p->chunks;
        p->chunks = k;
    }
    return &p->chunks->t[p->chunks->used++];
}

/* A spare buffer of exactly `bytes`, zeroed like a new one (unless the
 * caller will not read it); NULL if none. */
static void *take_spare(struct pld__tile_pool *p, size_t bytes, int zero)
{
    for (int i = 0; i < p->nspares; i++) {
        if (p->spare[i].bytes != bytes)
            continue;
        void *d = p->spare[i].data;
        p->spare[i] = p->spare[--p->nspares];
        if (zero)
            memset(d, 0, bytes);
        return d;
    }
    return NULL;
}

void pld__tile_spares_free(pld_ctx *c)
{
    struct pld__tile_pool *p = c->w->tile_pools[c->wrank * c->sh->cores + c->core];
    if (!p)
        return;
    for (int i = 0; i < p->nspares; i++)
        free(p->spare[i].data);
    p->nspares = 0;
}

void pld__tile_pools_free(pld_world *w)
{
    if (!w->tile_pools)
        return;
    for (int i = 0; i < w->nranks * w->profile.aiv_cores; i++) {
        struct pld__tile_pool *p = w->tile_pools[i];
        if (!p)
            continue;
        for (int k = 0; k < p->nspares; k++)
            free(p->spare[k].data);
        while (p->chunks) {
            tile_chunk *k = p->chunks;
            p->chunks = k->next;
            free(k);
        }
        free(p);
    }
    free(w->tile_pools);
    w->tile_pools = NULL;
}

void pld__check_tile(pld_ctx *c, const char *api, const char *what, const pld_tile *t)
{
    if (!t)
        pld__kraise(c, PLD_ERR_ARG, api, "%s tile is NULL", what);
    struct pld__tile_pool *p = c->w->tile_pools[c->wrank * c->sh->cores + c->core];
    /* integer compares: t may point anywhere, and is not read until found */
    uintptr_t x = (uintptr_t)t;
    for (tile_chunk *k = p ? p->chunks : NULL; k; k = k->next) {
        uintptr_t lo = (uintptr_t)&k->t[0];
        if (x < lo || x - lo >= sizeof k->t || (x - lo) % sizeof k->t[0])
            continue;
        if (!t->live)
            pld__kraise(c, PLD_ERR_ARG, api,
                        "%s tile t%d (%s [%lld,%lld], handle generation %u) was freed by "
                        "pld_tile_free",
                        what, t->id, pld_dtype_name(t->dtype), (long long)t->rows,
                        (long long)t->cols, t->gen);
        return;
    }
    pld__kraise(c, PLD_ERR_ARG, api,
                "%s tile %p is not a tile of rank %d%s (made on another rank or core, or not by "
                "pld_tile_create)",
                what, (const void *)t, c->wrank, c->core ? " on this core" : "");
}

static pld_tile *tile_alloc(pld_ctx *c, const char *api, pld_dtype dtype, int64_t rows,
                            int64_t cols, int zero)
{
    size_t esz = pld_dtype_size(dtype);
    if (esz == 0)
        pld__kraise(c, PLD_ERR_ARG, api, "invalid dtype %d", (int)dtype);
    if (rows <= 0 || cols <= 0)
        pld__kraise(c, PLD_ERR_ARG, api, "tile shape [%lld,%lld] must be positive", (long long)rows,
                    (long long)cols);
    /* overflow-safe: compare against the budget before multiplying through */
    if ((uint64_t)rows > c->agent->ub_cap || (uint64_t)cols > c->agent->ub_cap ||
        (size_t)rows * (size_t)cols > c->agent->ub_cap / esz ||
        (size_t)rows * (size_t)cols * esz > c->agent->ub_cap - c->agent->ub_used) {
        /* the size in bytes, unless it passes 64 bits */
        char need[48];
        uint64_t r = (uint64_t)rows, k = (uint64_t)cols;
        if (r > UINT64_MAX / k || r * k > UINT64_MAX / esz)
            snprintf(need, sizeof need, "2^64 bytes or more");
        else
            snprintf(need, sizeof need, "%llu bytes", (unsigned long long)(r * k * esz));
        pld__kraise(c, PLD_ERR_NOMEM, api,
                    "tile %s [%lld,%lld] needs %s but only %zu of the UB budget %zu are free "
                    "(%zu in use)",
                    pld_dtype_name(dtype), (long long)rows, (long long)cols, need,
                    c->agent->ub_cap - c->agent->ub_used, c->agent->ub_cap, c->agent->ub_used);
    }
    size_t bytes = (size_t)rows * (size_t)cols * esz;
    struct pld__tile_pool *p = pool_of(c, api);
    void *data = take_spare(p, bytes, zero);
    if (!data && !(data = calloc(1, bytes)))
        pld__kraise(c, PLD_ERR_NOMEM, api, "out of host memory for a %zu-byte tile", bytes);
    pld_tile *t = take_handle(c, api, p);
    t->data = data;
    t->prev = NULL;
    t->dtype = dtype;
    t->rows = rows;
    t->cols = cols;
    t->bytes = bytes;
    t->id = c->agent->next_tile_id++;
    t->gen = ++p->serial;
    t->live = 1;
    t->next = c->agent->tiles;
    if (c->agent->tiles)
        c->agent->tiles->prev = t;
    c->agent->tiles = t;
    c->agent->ub_used += bytes;
    return t;
}

pld_tile *pld__tile_alloc(pld_ctx *c, const char *api, pld_dtype dtype, int64_t rows, int64_t cols)
{
    return tile_alloc(c, api, dtype, rows, cols, 1);
}

pld_tile *pld__tile_reserve(pld_ctx *c, const char *api, pld_dtype dtype, int64_t rows,
                            int64_t cols)
{
    return tile_alloc(c, api, dtype, rows, cols, 0);
}

pld_tile *pld_tile_create(pld_ctx *c, pld_dtype dtype, int64_t rows, int64_t cols)
{
    PLD__CTX_CHECK(c, "pld_tile_create");
    pld__check_live(c);
    pld_tile *t = pld__tile_alloc(c, "pld_tile_create", dtype, rows, cols);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS)) {
        char what[96];
        snprintf(what, sizeof what, "tile t%d %s [%lld,%lld] with the tiles in use", t->id,
                 pld_dtype_name(dtype), (long long)rows, (long long)cols);
        pld__hazard_limit_check(c, "pld_tile_create", PLD__HZ_UB, c->agent->ub_used, what);
    }
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.create t%d %s[%lld,%lld]", t->id, pld_dtype_name(dtype),
                     (long long)rows, (long long)cols);
    return t;
}

/* Ends a live tile: its buffer to the spares (or freed), its handle to the
 * back of the quarantine. */
void pld__tile_release(pld_ctx *c, pld_tile *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        c->agent->tiles = t->next;
    if (t->next)
        t->next->prev = t->prev;
    c->agent->ub_used -= t->bytes;
    struct pld__tile_pool *p = c->w->tile_pools[c->wrank * c->sh->cores + c->core];
#if TILE_SPARES > 0
    if (p->nspares < TILE_SPARES)
        p->spare[p->nspares++] = (struct tile_spare){.data = t->data, .bytes = t->bytes};
    else
#endif
        free(t->data);
    t->data = NULL;
    t->live = 0;
    t->next = t->prev = NULL;
    if (p->freed_tail)
        p->freed_tail->next = t;
    else
        p->freed = t;
    p->freed_tail = t;
    p->nfreed++;
}

void pld_tile_free(pld_ctx *c, pld_tile *t)
{
    PLD__CTX_CHECK(c, "pld_tile_free");
    if (!t)
        return;
    pld__check_tile(c, "pld_tile_free", "the", t);
    pld__tile_release(c, t);
}

/* The tile accessors take no context: the calling thread's kernel checks
 * the handle. */
static const pld_tile *accessed(const char *api, const pld_tile *t)
{
    pld_ctx *c = pld__current_ctx();
    if (!c)
        pld__null_ctx(api);
    pld__check_tile(c, api, "the", t);
    return t;
}

void *pld_tile_data(pld_tile *t)
{
    return accessed("pld_tile_data", t)->data;
}

int64_t pld_tile_rows(const pld_tile *t)
{
    return accessed("pld_tile_rows", t)->rows;
}

int64_t pld_tile_cols(const pld_tile *t)
{
    return accessed("pld_tile_cols", t)->cols;
}

pld_dtype pld_tile_dtype(const pld_tile *t)
{
    return accessed("pld_tile_dtype", t)->dtype;
}

size_t pld_ub_used(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_ub_used");
    return c->agent->ub_used;
}

size_t pld_ub_capacity(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_ub_capacity");
    return c->agent->ub_cap;
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
    int64_t numel = pld_tensor_numel(t);
    char dims[96];
    if (numel < 0 || numel > ((int64_t)1 << 40))
        pld__kraise(c, PLD_ERR_BOUNDS, api, "%s tensor of shape %s has more than 2^40 elements",
                    what, pld__fmt_dims(dims, sizeof dims, t.shape, t.ndim));
    size_t bytes = (size_t)numel * pld_dtype_size(t.dtype);
    if (!c->lib_tensors && !c->tp->rank_mem_ok(c, t.data, bytes))
        pld__kraise(c, PLD_ERR_ARG, api,
                    "%s tensor data %p (%zu bytes) is private memory, not shared with the host "
                    "and the other ranks of the '%s' transport; allocate it with pld_host_alloc "
                    "(or use a window)",
                    what, t.data, bytes, c->tp->name);
}

void pld_load(pld_ctx *c, pld_tile *dst, pld_tensor src, const int64_t *offsets)
{
    PLD__CTX_CHECK(c, "pld_load");
    static const char api[] = "pld_load";
    pld__region tr, sr;
    char reg[128];
    pld__check_live(c);
    pld__check_tile(c, api, "dst", dst);
    pld__check_tensor(c, api, "src", src);
    pld__tile_region_in(c, api, "src", dst, NULL, src.ndim, src.shape, src.dtype, offsets, &sr);
    pld__region_of_tile(dst, &tr);
    /* a 1-D tensor meets the 2-D tile: both regions get the same rank */
    pld__region_pad(&sr, tr.nd);
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
    PLD__CTX_CHECK(c, "pld_store");
    static const char api[] = "pld_store";
    pld__region tr, dr;
    char reg[128];
    pld__check_live(c);
    pld__check_tile(c, api, "src", src);
    pld__check_tensor(c, api, "dst", dst);
    pld__tile_region_in(c, api, "dst", src, NULL, dst.ndim, dst.shape, dst.dtype, offsets, &dr);
    pld__region_of_tile(src, &tr);
    pld__region_pad(&dr, tr.nd);
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
