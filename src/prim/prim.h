/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the primitives: argument checks and tile regions. */
#ifndef PLD_PRIM_H
#define PLD_PRIM_H

#include "check/check.h"
#include "check/explore.h"
#include "core/internal.h"
#include "hook/hook.h"
#include "trace/trace.h"
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
/* A tile must be a live tile of this agent ("the", "dst", "src" name it). */
void pld__check_tile(pld_ctx *c, const char *api, const char *what, const pld_tile *t);
/* Region of a whole dtensor / tensor with optional offsets and extents. */
void pld__dtensor_region(pld_ctx *c, const char *api, const char *what, pld_dtensor t,
                         const int64_t *off, const int64_t *ext, pld__region *out);

pld_tile *pld__tile_alloc(pld_ctx *c, const char *api, pld_dtype dtype, int64_t rows, int64_t cols);
/* The same, for UB a builtin holds but never reads (a modelled staging
 * ring): its bytes are not zeroed, which for 64 KiB on every call cost
 * more than the call's own work at small sizes. */
pld_tile *pld__tile_reserve(pld_ctx *c, const char *api, pld_dtype dtype, int64_t rows,
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
/* The same for one contiguous run of `bytes` at byte offset woff of the
 * peer's window (no region walk). Without race hooks: callers that take this
 * path check that the race checker is off. */
void pld__put_run(pld_ctx *c, const char *api, pld_window_buffer *buf, int peer, size_t woff,
                  const unsigned char *src, size_t bytes);
void pld__get_run(pld_ctx *c, const char *api, unsigned char *dst, pld_window_buffer *buf, int peer,
                  size_t woff, size_t bytes);
/* acc[0, bytes) = local[0, bytes) op the peer's window bytes at woff, in one
 * pass, when the peer's window is mapped here. Returns 0 (and does nothing)
 * when it is not; counts and traces as pld__reduce_from_peer. */
int pld__load_reduce_from_peer(pld_ctx *c, unsigned char *acc, const unsigned char *local,
                               pld_window_buffer *buf, int peer, size_t woff, size_t bytes,
                               pld_dtype dtype, pld_reduce_op op);
/* acc (region ar of a local buffer) = acc op the peer's window region wr. */
void pld__reduce_from_peer(pld_ctx *c, const char *api, unsigned char *acc, const pld__region *ar,
                           pld_window_buffer *buf, int peer, const pld__region *wr, pld_dtype dtype,
                           pld_reduce_op op);
void pld__xfer_from_peer(pld_ctx *c, const char *api, unsigned char *dst, const pld__region *dr,
                         pld_window_buffer *buf, int peer, const pld__region *wr);

/* acc = acc op x over n elements; 0 if dtype/op is not supported. */
int pld__reduce_buf(void *acc, const void *x, size_t n, pld_dtype dtype, pld_reduce_op op);
/* out = l op x over n elements (out and l distinct unless fp16/bf16). */
int pld__reduce3_buf(void *out, const void *l, const void *x, size_t n, pld_dtype dtype,
                     pld_reduce_op op);

/* Race checker hooks (only called when the agent has the PLD__OBS_RACE observer). */
void pld__race_release(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off);
void pld__race_acquire(pld_ctx *c, pld_window_buffer *buf, size_t off);
/* An access to owner's slice of buf: the region of an array starting `base`
 * bytes into the slice. kind: 0 read, 1 write, 2 atomic add. */
void pld__race_access(pld_ctx *c, const char *api, pld_window_buffer *buf, int owner, size_t base,
                      const pld__region *region, int write);
/* An access through a plain tensor: recorded when the tensor lies in one of
 * this rank's window slices. */
void pld__race_tensor(pld_ctx *c, const char *api, const void *data, const pld__region *region,
                      int write);

/* atomic must be None/Add, and Add needs an additive dtype. */
void pld__check_atomic(pld_ctx *c, const char *api, pld_atomic atomic, pld_dtype dtype);

/* ---- pre-checked forms for the builtins -----------------------------------
 * A builtin checks its windows, shapes and signal once on entry; inside, it
 * moves rows and signals with these. They do what pld_put / pld_get /
 * pld_notify / pld_wait do -- the same transport calls, byte counters, race
 * hooks and trace slices, and, while a listing is recorded, the very same
 * calls -- without re-validating the arguments on every primitive. */

/* rows [dst_row, dst_row+rows) of the 2-D window dst at peer = rows
 * [src_row, ...) of the 2-D tensor src (same width). x: the chunk plan the
 * listing shows. */
void pld__put_rows_checked(pld_ctx *c, pld_dtensor dst, int peer, int64_t dst_row, pld_tensor src,
                           int64_t src_row, int64_t rows, const pld_xfer *x);
void pld__get_rows_checked(pld_ctx *c, pld_tensor dst, int64_t dst_row, pld_dtensor src, int peer,
                           int64_t src_row, int64_t rows, const pld_xfer *x);
/* The tile at (row, col) of a 2-D tensor / window (tile-sized block). */
void pld__load_checked(pld_ctx *c, pld_tile *dst, pld_tensor src, int64_t row, int64_t col);
void pld__store_checked(pld_ctx *c, const pld_tile *src, pld_tensor dst, int64_t row, int64_t col);
/* acc = the tile at (row, col) of the local tensor mine op the same tile of
 * window src at peer: pld__load_checked then pld__remote_reduce_checked, in
 * one pass over the data when it can (the tile is one row, the peer's
 * window is mapped here, no listing or race checker is recording). */
void pld__load_reduce_checked(pld_ctx *c, pld_tile *acc, pld_tensor mine, pld_dtensor src, int peer,
                              int64_t row, int64_t col, pld_reduce_op op);
void pld__remote_reduce_checked(pld_ctx *c, pld_tile *acc, pld_dtensor src, int peer, int64_t row,
                                int64_t col, pld_reduce_op op);
/* Cell [row, lane] of a signal checked by pld__coll_check_signal ([P] or
 * [P, lanes]). */
void pld__notify_checked(pld_ctx *c, pld_dtensor sig, int peer, int64_t row, int64_t lane,
                         int32_t value, pld_notify_op op);
void pld__wait_checked(pld_ctx *c, pld_dtensor sig, int64_t row, int64_t lane, int32_t expected,
                       pld_wait_cmp cmp);

#endif
