/* SPDX-License-Identifier: Apache-2.0 */
/* The shared-memory family of transports (thread, process): every rank's
 * window is mapped in every rank, so data moves with memcpy and signals are
 * C11 atomics on the cells, with futex sleep/wake. */
#ifndef PLD_SHM_H
#define PLD_SHM_H

#include "core/internal.h"

/* futex on a 32-bit word; `shared` selects cross-process futexes. A
 * negative timeout waits for ever. Returns ETIMEDOUT when the timeout ran
 * out, 0 otherwise (woken, word already changed, interrupted). */
int pld__futex_wait(_Atomic uint32_t *word, uint32_t expected, int timeout_ms, int shared);
int pld__futex_wait_ns(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns, int shared);
void pld__futex_wake(_Atomic uint32_t *word, int shared);

/* Direct address of peer's slice of a window (base + peer*stride). */
static inline unsigned char *pld__shm_peer(pld_window_buffer *buf, int peer)
{
    return buf->base + (size_t)peer * buf->stride;
}

void *pld__shm_window_peer_ptr(pld_world *w, pld_window_buffer *buf, int peer);
pld_status pld__shm_put(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off, const void *src,
                        size_t bytes);
pld_status pld__shm_get(pld_ctx *c, void *dst, pld_window_buffer *buf, int peer, size_t off,
                        size_t bytes);
pld_status pld__shm_accumulate(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                               const void *src, size_t count, pld_dtype dtype);
/* dst[i] += src[i] atomically, element by element, at any mapped address
 * (also the mpi transport's shared-memory windows). */
pld_status pld__shm_accumulate_at(unsigned char *dst, const void *src, size_t count,
                                  pld_dtype dtype);
int32_t pld__shm_signal_load(pld_ctx *c, pld_window_buffer *buf, size_t off);
void pld__shm_fence(pld_ctx *c);

/* Signal update, sleep / wake, abort (shm_sync.c); `shared` = futexes
 * cross processes. The sleep slots sleep on the rank's wake_seq. */
pld_status pld__shm_signal_update(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                  int32_t value, pld_notify_op op, int shared, int32_t *old_out);
uint32_t pld__shm_sleep_prepare(pld_ctx *c);
int pld__shm_sleep(pld_ctx *c, uint32_t ticket, uint64_t timeout_ns, int shared);
void pld__shm_sleep_end(pld_ctx *c);
void pld__shm_abort(pld_world *w, int shared);

#endif
