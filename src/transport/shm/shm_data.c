/* SPDX-License-Identifier: Apache-2.0 */
/* Data paths of the shared-memory transports: copies to and from a peer's
 * mapped window, and elementwise atomic accumulation. */
#include <string.h>

#include "prim/half.h"
#include "transport/shm/copy.h"
#include "transport/shm/shm.h"

void *pld__shm_window_peer_ptr(pld_world *w, pld_window_buffer *buf, int peer)
{
    (void)w;
    return pld__shm_peer(buf, peer);
}

pld_status pld__shm_put(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off, const void *src,
                        size_t bytes)
{
    pld__shm_copy(pld__shm_peer(buf, peer) + off, src, bytes, c->w->nranks);
    return PLD_OK;
}

pld_status pld__shm_get(pld_ctx *c, void *dst, pld_window_buffer *buf, int peer, size_t off,
                        size_t bytes)
{
    pld__shm_copy(dst, pld__shm_peer(buf, peer) + off, bytes, c->w->nranks);
    return PLD_OK;
}

/* Atomic dst += src for 16-bit floats: CAS on the 16-bit pattern. */
static void acc_half(_Atomic uint16_t *d, uint16_t x, int bf16)
{
    uint16_t old = atomic_load_explicit(d, memory_order_relaxed), nw;
    do {
        float s = bf16 ? pld__bf16_to_f32(old) + pld__bf16_to_f32(x)
                       : pld__fp16_to_f32(old) + pld__fp16_to_f32(x);
        nw = bf16 ? pld__f32_to_bf16(s) : pld__f32_to_fp16(s);
    } while (!atomic_compare_exchange_weak_explicit(d, &old, nw, memory_order_relaxed,
                                                    memory_order_relaxed));
}

pld_status pld__shm_accumulate(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                               const void *src, size_t count, pld_dtype dtype)
{
    (void)c;
    return pld__shm_accumulate_at(pld__shm_peer(buf, peer) + off, src, count, dtype);
}

pld_status pld__shm_accumulate_at(unsigned char *dst, const void *src, size_t count,
                                  pld_dtype dtype)
{
    const unsigned char *s = src;
    switch (dtype) {
    case PLD_FP32:
        for (size_t i = 0; i < count; i++) {
            _Atomic uint32_t *d = (_Atomic uint32_t *)(dst + 4 * i);
            float x;
            memcpy(&x, s + 4 * i, 4);
            uint32_t old = atomic_load_explicit(d, memory_order_relaxed), nw;
            do
                nw = pld__f32_bits(pld__f32_from_bits(old) + x);
            while (!atomic_compare_exchange_weak_explicit(d, &old, nw, memory_order_relaxed,
                                                          memory_order_relaxed));
        }
        return PLD_OK;
    case PLD_FP16:
    case PLD_BF16:
        for (size_t i = 0; i < count; i++) {
            uint16_t x;
            memcpy(&x, s + 2 * i, 2);
            acc_half((_Atomic uint16_t *)(dst + 2 * i), x, dtype == PLD_BF16);
        }
        return PLD_OK;
    case PLD_INT32:
        for (size_t i = 0; i < count; i++) {
            int32_t x;
            memcpy(&x, s + 4 * i, 4);
            /* unsigned add: wraps like the hardware, never signed overflow */
            atomic_fetch_add_explicit((_Atomic uint32_t *)(dst + 4 * i), (uint32_t)x,
                                      memory_order_relaxed);
        }
        return PLD_OK;
    case PLD_INT16:
        for (size_t i = 0; i < count; i++) {
            int16_t x;
            memcpy(&x, s + 2 * i, 2);
            atomic_fetch_add_explicit((_Atomic uint16_t *)(dst + 2 * i), (uint16_t)x,
                                      memory_order_relaxed);
        }
        return PLD_OK;
    case PLD_INT8:
        for (size_t i = 0; i < count; i++)
            atomic_fetch_add_explicit((_Atomic uint8_t *)(dst + i), (uint8_t)s[i],
                                      memory_order_relaxed);
        return PLD_OK;
    default:
        return PLD_ERR_UNSUPPORTED;
    }
}

int32_t pld__shm_signal_load(pld_ctx *c, pld_window_buffer *buf, size_t off)
{
    return atomic_load_explicit((_Atomic int32_t *)(pld__shm_peer(buf, c->wrank) + off),
                                memory_order_acquire);
}

void pld__shm_fence(pld_ctx *c)
{
    (void)c;
    atomic_thread_fence(memory_order_seq_cst);
}
