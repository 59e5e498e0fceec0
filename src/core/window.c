/* Window buffers (symmetric allocations) and their typed views. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

pld_status pld_alloc_window_buffer(pld_world *w, size_t bytes, const char *name,
                                   pld_window_buffer **out)
{
    if (!w || !out)
        return w ? pld__world_fail(w, PLD_ERR_ARG, "pld_alloc_window_buffer: out is NULL")
                 : PLD_ERR_ARG;
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
    if (id == PLD__MAX_WINDOWS)
        return pld__world_fail(w, PLD_ERR_NOMEM,
                               "pld_alloc_window_buffer: '%s': all %d window slots are in use",
                               name ? name : "?", PLD__MAX_WINDOWS);
    /* the descriptor lives where every rank can read it (shared memory on
     * the process transport): dtensors carry its address */
    pld_window_buffer *b = w->tp->host_alloc(w, sizeof *b);
    if (!b)
        return pld__world_fail(w, PLD_ERR_NOMEM, "pld_alloc_window_buffer: out of memory");
    b->w = w;
    b->id = id;
    snprintf(b->name, sizeof b->name, "%s", name ? name : "window");
    if (!name)
        snprintf(b->name, sizeof b->name, "window%d", b->id);
    b->bytes = bytes;
    /* Rank slices start on their own cache line: no false sharing between
     * ranks, and every dtype is aligned. */
    b->stride = (bytes + PLD__CACHELINE - 1) & ~(size_t)(PLD__CACHELINE - 1);
    pld_status st = w->tp->window_alloc(w, b);
    if (st != PLD_OK) {
        pld__world_fail(w, st, "pld_alloc_window_buffer: '%s' (%zu bytes x %d ranks): %s",
                        b->name, bytes, w->nranks,
                        st == PLD_ERR_NOMEM ? "out of memory" : "transport failure");
        w->tp->host_free(w, b);
        return st;
    }
    w->windows[id] = b;
    if (id >= w->nwindows)
        w->nwindows = id + 1;
    *out = b;
    return PLD_OK;
}

pld_status pld_window(pld_window_buffer *buf, pld_dtype dtype, int ndim, const int64_t *shape,
                      pld_dtensor *out)
{
    char dims[96];
    if (!buf || !out || !shape)
        return buf ? pld__world_fail(buf->w, PLD_ERR_ARG, "pld_window: '%s': %s is NULL",
                                     buf->name, !shape ? "shape" : "out")
                   : PLD_ERR_ARG;
    pld_world *w = buf->w;
    if (pld_dtype_size(dtype) == 0)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window: '%s': invalid dtype %d", buf->name,
                               (int)dtype);
    if (ndim < 1 || ndim > PLD_MAX_DIMS)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window: '%s': ndim %d not in 1..%d",
                               buf->name, ndim, PLD_MAX_DIMS);
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

pld_status pld_window_buffer_reset(pld_world *w, pld_window_buffer *buf)
{
    if (!w || !buf || buf->w != w)
        return w ? pld__world_fail(w, PLD_ERR_ARG,
                                   "pld_window_buffer_reset: buffer is NULL or of another world")
                 : PLD_ERR_ARG;
    /* each host zeroes the slices of the ranks it hosts (all of them, but
     * under mpi): another process may still be reading its own results */
    for (int r = 0; r < w->nranks; r++) {
        void *p = pld_world_hosts_rank(w, r) ? w->tp->window_peer_ptr(w, buf, r) : NULL;
        if (p)
            memset(p, 0, buf->bytes);
    }
    return PLD_OK;
}

void pld_free_window_buffer(pld_world *w, pld_window_buffer *buf)
{
    if (!w || !buf || buf->w != w || buf->id >= w->nwindows || w->windows[buf->id] != buf)
        return;
    w->windows[buf->id] = NULL;
    w->tp->window_free(w, buf);
    w->tp->host_free(w, buf);
}

const char *pld_window_buffer_name(const pld_window_buffer *buf)
{
    return buf ? buf->name : "";
}

size_t pld_window_buffer_size(const pld_window_buffer *buf)
{
    return buf ? buf->bytes : 0;
}

pld_status pld_window_host_view(pld_world *w, pld_dtensor t, int rank, pld_tensor *out)
{
    if (!w || !out || !t.buf || t.buf->w != w)
        return w ? pld__world_fail(w, PLD_ERR_ARG,
                                   "pld_window_host_view: window is NULL or of another world")
                 : PLD_ERR_ARG;
    if (rank < 0 || rank >= w->nranks)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_window_host_view: rank %d not in [0,%d)",
                               rank, w->nranks);
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
    if (!w || bytes == 0)
        return NULL;
    return w->tp->host_alloc(w, bytes);
}

void pld_host_free(pld_world *w, void *p)
{
    if (w && p)
        w->tp->host_free(w, p);
}
