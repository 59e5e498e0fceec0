/* Helpers shared by the primitives: argument checks and tile regions. */
#ifndef PLD_PRIM_H
#define PLD_PRIM_H

#include "core/internal.h"
#include "prim/region.h"

/* Ends the kernel at once if the group was aborted by another rank. */
static inline void pld__check_live(pld_ctx *c)
{
    if (PLD__UNLIKELY(pld__aborted(c)))
        pld__kexit_aborted(c);
}

/* A window view must belong to this world, be alive and fit its buffer. */
void pld__check_dtensor(pld_ctx *c, const char *api, const char *what, pld_dtensor t);
void pld__check_tensor(pld_ctx *c, const char *api, const char *what, pld_tensor t);
void pld__check_peer(pld_ctx *c, const char *api, int peer);
/* Region of a whole dtensor / tensor with optional offsets and extents. */
void pld__dtensor_region(pld_ctx *c, const char *api, const char *what, pld_dtensor t,
                         const int64_t *off, const int64_t *ext, pld__region *out);

pld_tile *pld__tile_alloc(pld_ctx *c, const char *api, pld_dtype dtype, int64_t rows,
                          int64_t cols);
void pld__region_of_tile(const pld_tile *t, pld__region *r);
/* Region a tile covers inside an N-D array (innermost two dims) at offsets;
 * checks dtype, offsets count and bounds. wname: the window's name, or NULL
 * for a plain tensor. */
void pld__tile_region_in(pld_ctx *c, const char *api, const char *what, const pld_tile *t,
                         const char *wname, int nd, const int64_t *full, pld_dtype dtype,
                         const int64_t *offsets, pld__region *out);
void pld__copy_region(unsigned char *dst, const pld__region *dr, const unsigned char *src,
                      const pld__region *sr);

/* Moves a region of a local buffer to/from a peer's window through the
 * transport (put / get / atomic accumulate), run by run. Counts bytes. */
void pld__xfer_to_peer(pld_ctx *c, const char *api, pld_window_buffer *buf, int peer,
                       const pld__region *wr, const unsigned char *src, const pld__region *sr,
                       pld_atomic atomic, pld_dtype dtype);
/* acc (region ar of a local buffer) = acc op the peer's window region wr. */
void pld__reduce_from_peer(pld_ctx *c, const char *api, unsigned char *acc, const pld__region *ar,
                           pld_window_buffer *buf, int peer, const pld__region *wr,
                           pld_dtype dtype, pld_reduce_op op);
void pld__xfer_from_peer(pld_ctx *c, const char *api, unsigned char *dst, const pld__region *dr,
                         pld_window_buffer *buf, int peer, const pld__region *wr);

/* acc = acc op x over n elements; 0 if dtype/op is not supported. */
int pld__reduce_buf(void *acc, const void *x, size_t n, pld_dtype dtype, pld_reduce_op op);

/* Race checker hooks (only called when c->w->race is set). */
void pld__race_release(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off);
void pld__race_acquire(pld_ctx *c, pld_window_buffer *buf, size_t off);
/* An access to owner's slice of buf: the region of an array starting `base`
 * bytes into the slice. kind: 0 read, 1 write, 2 atomic add. */
void pld__race_access(pld_ctx *c, const char *api, pld_window_buffer *buf, int owner,
                      size_t base, const pld__region *region, int write);
/* An access through a plain tensor: recorded when the tensor lies in one of
 * this rank's window slices. */
void pld__race_tensor(pld_ctx *c, const char *api, const void *data, const pld__region *region,
                      int write);

/* atomic must be None/Add, and Add needs an additive dtype. */
void pld__check_atomic(pld_ctx *c, const char *api, pld_atomic atomic, pld_dtype dtype);

#endif
