/* SPDX-License-Identifier: Apache-2.0 */
/* Argument checks shared by every primitive. */
#include <stdio.h>

#include "prim/prim.h"

void pld__check_dtensor(pld_ctx *c, const char *api, const char *what, pld_dtensor t)
{
    pld_world *w = c->w;
    if (!t.buf)
        pld__kraise(c, PLD_ERR_ARG, api, "%s window is NULL (not made by pld_window)", what);
    /* where the handle points is checked before anything is read through it */
    if (pld__window_slot(w, t.buf) < 0)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "%s window %p is not a window of this world (another world's, or not made "
                    "by pld_alloc_window_buffer)",
                    what, (const void *)t.buf);
    if (!t.buf->live)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "%s window '%s' (allocation #%u of its slot) was freed by "
                    "pld_free_window_buffer",
                    what, t.buf->name, t.buf->gen);
    size_t esz = pld_dtype_size(t.dtype);
    if (esz == 0)
        pld__kraise(c, PLD_ERR_ARG, api, "%s window '%s' has invalid dtype %d", what, t.buf->name,
                    (int)t.dtype);
    if (t.ndim < 1 || t.ndim > PLD_MAX_DIMS)
        pld__kraise(c, PLD_ERR_ARG, api, "%s window '%s' has ndim %d (1..%d)", what, t.buf->name,
                    t.ndim, PLD_MAX_DIMS);
    uint64_t n = esz;
    for (int i = 0; i < t.ndim; i++) {
        if (t.shape[i] <= 0)
            pld__kraise(c, PLD_ERR_ARG, api, "%s window '%s' dim %d has extent %lld", what,
                        t.buf->name, i, (long long)t.shape[i]);
        n *= (uint64_t)t.shape[i];
        if (n > t.buf->bytes)
            pld__kraise(c, PLD_ERR_BOUNDS, api, "%s view of window '%s' exceeds its %zu bytes",
                        what, t.buf->name, t.buf->bytes);
    }
}

void pld__check_peer(pld_ctx *c, const char *api, int peer)
{
    char scope[96];
    if (peer < 0 || peer >= c->nranks)
        pld__kraise(c, PLD_ERR_ARG, api, "peer %d is not a rank of %s [0,%d)", peer,
                    pld__ctx_scope(c, scope, sizeof scope), c->nranks);
}

void pld__dtensor_region(pld_ctx *c, const char *api, const char *what, pld_dtensor t,
                         const int64_t *off, const int64_t *ext, pld__region *out)
{
    pld__region_make(c, api, what, t.buf->name, t.ndim, t.shape, off, ext, pld_dtype_size(t.dtype),
                     out);
}
