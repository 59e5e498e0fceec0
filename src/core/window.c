/* SPDX-License-Identifier: Apache-2.0 */
/* Window buffers (symmetric allocations) and their typed views. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/internal.h"

/* Largest view, in elements: far beyond any window, and small enough that
 * extent x element size cannot overflow. */
#define VIEW_MAX_ELEMS ((int64_t)1 << 40)

/* The element count of positive extents, or -1 once it passes
 * VIEW_MAX_ELEMS (the plain product of four extents can overflow int64). */
static int64_t dims_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] > VIEW_MAX_ELEMS / n)
            return -1;
        n *= shape[i];
    }
    return n;
}

int pld__window_slot(const pld_world *w, const pld_window_buffer *buf)
{
    if (!w->windows)
        return -1;
    /* integer compares: buf may point anywhere, and is not read */
    uintptr_t base = (uintptr_t)pld__window_descs((const pld_window_buffer *const *)w->windows);
    uintptr_t x = (uintptr_t)buf;
    if (x < base || x - base >= sizeof *buf * PLD__WINDOW_DESCS || (x - base) % sizeof *buf)
        return -1;
    return (int)((x - base) / sizeof *buf);
}

/* A free descriptor slot, taken round robin so that a freed one waits as
 * long as possible before a new window reuses its address. */
static pld_window_buffer *take_descriptor(pld_world *w)
{
    pld_window_buffer *descs = pld__window_descs((const pld_window_buffer *const *)w->windows);
    for (int i = 0; i < PLD__WINDOW_DESCS; i++) {
        int slot = (w->desc_next + i) % PLD__WINDOW_DESCS;
        if (!descs[slot].live) {
            w->desc_next = (slot + 1) % PLD__WINDOW_DESCS;
            pld_window_buffer *b = &descs[slot];
            uint32_t gen = b->gen;
            memset(b, 0, sizeof *b);
            b->gen = gen + 1;
            return b;
        }
    }
    return NULL;
}

static pld_status alloc_window(pld_world *w, size_t bytes, const char *name,
                               pld_window_buffer **out)
{
    pld_status st;
    if (bytes == 0)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_alloc_window_buffer: '%s' has 0 bytes",
                               name ? name : "?");
    if (bytes > ((size_t)1 << 40) / (size_t)w->nranks)
        return pld__world_fail(w, PLD_ERR_NOMEM,
                               "pld_alloc_window_buffer: '%s' asks %zu bytes per rank x %d ranks",
                               name ? name : "?", bytes, w->nranks);
    int id = 0;
    while (id < PLD__MAX_WINDOWS && w->windows[id])
        id++;
    /* every descriptor is free when an id is (one per live window) */
    pld_window_buffer *b = id < PLD__MAX_WINDOWS ? take_descriptor(w) : NULL;
    if (!b)
        return pld__world_fail(w, PLD_ERR_NOMEM,
                               "pld_alloc_window_buffer: '%s': all %d window slots are in use",
                               name ? name : "?", PLD__MAX_WINDOWS);
    b->w = w;
    b->id = id;
    snprintf(b->name, sizeof b->name, "%s", name ? name : "window");
    if (!name)
        snprintf(b->name, sizeof b->name, "window%d", b->id);
    b->bytes = bytes;
    /* Rank slices start on their own cache line: no false sharing between
     * ranks, and every dtype is aligned. */
    b->stride = (bytes + PLD__CACHELINE - 1) & ~(size_t)(PLD__CACHELINE - 1);
    st = w->tp->window_alloc(w, b);
    if (st != PLD_OK)
        return pld__world_fail(w, st, "pld_alloc_window_buffer: '%s' (%zu bytes x %d ranks): %s",
                               b->name, bytes, w->nranks,
                               st == PLD_ERR_NOMEM ? "out of memory" : "transport failure");
    b->live = 1;
    w->windows[id] = b;
    if (id >= w->nwindows)
        w->nwindows = id + 1;
    *out = b;
    return PLD_OK;
}

pld_status pld_alloc_window_buffer(pld_world *w, size_t bytes, const char *name,
                                   pld_window_buffer **out)
{
    pld_status st = pld__world_check(w, "pld_alloc_window_buffer");
    if (st != PLD_OK)
        return st;
    if (!out)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_alloc_window_buffer: out is NULL");
    if ((st = pld__host_enter(w, "pld_alloc_window_buffer",
                              "a window is allocated on every rank at once")) != PLD_OK)
        return st;
    st = alloc_window(w, bytes, name, out);
    pld__host_leave(w);
    return st;
}

/* Why a handle is not a live window of w ("window 'x' was freed ..."), or
 * NULL when it is one. */
static const char *buffer_problem(const pld_world *w, const pld_window_buffer *buf, char *msg,
                                  size_t n)
{
    if (!buf)
        return "the window is NULL";
    if (pld__window_slot(w, buf) < 0)
        snprintf(msg, n, "%p is not a window of this world (another world's, or not a window)",
                 (const void *)buf);
    else if (!buf->live)
        snprintf(msg, n, "window '%s' (allocation #%u of its slot) was freed", buf->name, buf->gen);
    else
        return NULL;
    return msg;
}

pld_status pld_window(pld_window_buffer *buf, pld_dtype dtype, int ndim, const int64_t *shape,
                      pld_dtensor *out)
{
    char dims[96];
    pld_world *w = pld__buffer_world(buf);
    if (!w)
        return pld__init_fail(PLD_ERR_ARG,
                              "pld_window: buffer %p is not a window of a live world (NULL, "
                              "freed, or its world finalized)",
                              (const void *)buf);
    char why[160];
    const char *bad = buffer_problem(w, buf, why, sizeof why);
    if (bad)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window: %s", bad);
    if (!out || !shape)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window: '%s': %s is NULL", buf->name,
                               !shape ? "shape" : "out");
    if (pld_dtype_size(dtype) == 0)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window: '%s': invalid dtype %d", buf->name,
                               (int)dtype);
    if (ndim < 1 || ndim > PLD_MAX_DIMS)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window: '%s': ndim %d not in 1..%d", buf->name,
                               ndim, PLD_MAX_DIMS);
    int n = pld__idx_count(shape);
    if (n >= 0 && n != ndim)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window: '%s': shape has %d entries, ndim is %d",
                               buf->name, n, ndim);
    for (int i = 0; i < ndim; i++)
        if (shape[i] <= 0 || shape[i] > VIEW_MAX_ELEMS)
            return pld__world_fail(w, PLD_ERR_ARG, "pld_window: '%s': shape %s has extent %lld",
                                   buf->name, pld__fmt_dims(dims, sizeof dims, shape, ndim),
                                   (long long)shape[i]);
    int64_t numel = dims_numel(ndim, shape);
    if (numel < 0)
        return pld__world_fail(w, PLD_ERR_BOUNDS,
                               "pld_window: view %s %s has more than 2^40 elements; window '%s' "
                               "has %zu bytes",
                               pld_dtype_name(dtype), pld__fmt_dims(dims, sizeof dims, shape, ndim),
                               buf->name, buf->bytes);
    size_t need = (size_t)numel * pld_dtype_size(dtype);
    if (need > buf->bytes)
        return pld__world_fail(w, PLD_ERR_BOUNDS,
                               "pld_window: view %s %s (%zu bytes) does not fit window '%s' "
                               "(%zu bytes)",
                               pld_dtype_name(dtype), pld__fmt_dims(dims, sizeof dims, shape, ndim),
                               need, buf->name, buf->bytes);
    pld_dtensor t = {.buf = buf, .dtype = dtype, .ndim = ndim};
    memcpy(t.shape, shape, sizeof(int64_t) * (size_t)ndim);
    *out = t;
    return PLD_OK;
}

void pld__window_zero(pld_world *w, pld_window_buffer *buf)
{
    /* each host zeroes the slices of the ranks it hosts (all of them, but
     * under mpi): another process may still be reading its own results */
    for (int r = 0; r < w->nranks; r++) {
        void *p = pld_world_hosts_rank(w, r) ? w->tp->window_peer_ptr(w, buf, r) : NULL;
        if (p)
            memset(p, 0, buf->bytes);
    }
}

pld_status pld_window_buffer_reset(pld_world *w, pld_window_buffer *buf)
{
    pld_status st = pld__world_check(w, "pld_window_buffer_reset");
    if (st != PLD_OK)
        return st;
    char why[160];
    const char *bad = buffer_problem(w, buf, why, sizeof why);
    if (bad)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window_buffer_reset: %s", bad);
    if ((st = pld__host_enter(w, "pld_window_buffer_reset", "peers may be using the window")) !=
        PLD_OK)
        return st;
    pld__window_zero(w, buf);
    pld__host_leave(w);
    return PLD_OK;
}

/* The free itself, for the public call and for finalize. */
void pld__window_release(pld_world *w, pld_window_buffer *buf)
{
    w->windows[buf->id] = NULL;
    w->tp->window_free(w, buf);
    buf->live = 0;
}

void pld_free_window_buffer(pld_world *w, pld_window_buffer *buf)
{
    if (pld__world_check(w, "pld_free_window_buffer") != PLD_OK) {
        fprintf(stderr, "pld: %s\n", pld_last_error());
        return;
    }
    char why[160];
    const char *bad = buffer_problem(w, buf, why, sizeof why);
    pld_status st = bad ? pld__world_fail(w, PLD_ERR_ARG, "pld_free_window_buffer: %s", bad)
                        : pld__host_enter(w, "pld_free_window_buffer",
                                          "the ranks may still be using the window");
    if (st != PLD_OK) {
        /* a void call: the world's message keeps it, and stderr says it now */
        fprintf(stderr, "pld: %s\n", w->errmsg);
        return;
    }
    pld__window_release(w, buf);
    pld__host_leave(w);
}

const char *pld_window_buffer_name(const pld_window_buffer *buf)
{
    return pld__buffer_world(buf) ? buf->name : "";
}

size_t pld_window_buffer_size(const pld_window_buffer *buf)
{
    return pld__buffer_world(buf) && buf->live ? buf->bytes : 0;
}

pld_status pld_window_host_view(pld_world *w, pld_dtensor t, int rank, pld_tensor *out)
{
    pld_status st = pld__world_check(w, "pld_window_host_view");
    if (st == PLD_OK)
        st = pld__world_usable(w, "pld_window_host_view");
    if (st != PLD_OK)
        return st;
    char why[160];
    const char *bad = buffer_problem(w, t.buf, why, sizeof why);
    if (bad || !out)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window_host_view: %s",
                               bad ? bad : "out is NULL");
    if (rank < 0 || rank >= w->nranks)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window_host_view: rank %d not in [0,%d)", rank,
                               w->nranks);
    /* only ranks this process hosts: on one node the mpi transport maps
     * every slice, but another process owns (and may be changing) it */
    if (!pld_world_hosts_rank(w, rank))
        return pld__world_fail(w, PLD_ERR_UNSUPPORTED,
                               "pld_window_host_view: rank %d runs in another process "
                               "(transport %s): its window '%s' is not mapped in this process "
                               "for the host; read it there, or from a kernel",
                               rank, w->tp->name, t.buf->name);
    void *p = w->tp->window_peer_ptr(w, t.buf, rank);
    if (!p)
        return pld__world_fail(w, PLD_ERR_UNSUPPORTED,
                               "pld_window_host_view: rank %d's window '%s' is not mapped in "
                               "this process (transport %s)",
                               rank, t.buf->name, w->tp->name);
    *out = pld_tensor_make(p, t.dtype, t.ndim, t.shape);
    return PLD_OK;
}

void *pld_host_alloc(pld_world *w, size_t bytes)
{
    if (pld__world_check(w, "pld_host_alloc") != PLD_OK || bytes == 0)
        return NULL;
    if (pld__host_enter(w, "pld_host_alloc", "host memory is allocated by the host") != PLD_OK)
        return NULL;
    void *p = pld__host_block_alloc(w, bytes);
    pld__host_leave(w);
    return p;
}

void pld_host_free(pld_world *w, void *p)
{
    if (pld__world_check(w, "pld_host_free") != PLD_OK) {
        fprintf(stderr, "pld: %s\n", pld_last_error());
        return;
    }
    if (!p)
        return;
    pld_status st = pld__host_enter(w, "pld_host_free", "ranks may still use the block");
    if (st == PLD_OK) {
        st = pld__host_block_free(w, p);
        pld__host_leave(w);
    }
    if (st != PLD_OK)
        fprintf(stderr, "pld: %s\n", w->errmsg);
}
