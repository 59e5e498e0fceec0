/* SPDX-License-Identifier: Apache-2.0 */
#include "coll_util.h"

#include <stdio.h>
#include <stdlib.h>

pld_world *cu_world_on(int p, const char *platform)
{
    char devices[32];
    if (p == 1)
        snprintf(devices, sizeof devices, "0");
    else
        snprintf(devices, sizeof devices, "0-%d", p - 1);
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = devices;
    cfg.platform = platform;
    pld_world *w = tu_world_cfg(&cfg);
    cr_assert_eq(pld_world_size(w), p, "world on '%s' has %d ranks, expected %d", devices,
                 pld_world_size(w), p);
    return w;
}

pld_world *cu_world(int p)
{
    return cu_world_on(p, NULL);
}

static struct {
    pld_world *w;
    void *p;
} allocs[64];

void *cu_alloc(pld_world *w, size_t bytes)
{
    void *p = tu_host_alloc(w, bytes);
    for (size_t i = 0; i < sizeof allocs / sizeof allocs[0]; i++)
        if (!allocs[i].p) {
            allocs[i].w = w;
            allocs[i].p = p;
            return p;
        }
    cr_assert_fail("cu_alloc: more than %zu live allocations", sizeof allocs / sizeof allocs[0]);
    return NULL;
}

void cu_finalize(pld_world *w)
{
    for (size_t i = 0; i < sizeof allocs / sizeof allocs[0]; i++)
        if (allocs[i].p && allocs[i].w == w) {
            pld_host_free(w, allocs[i].p);
            allocs[i].p = NULL;
        }
    pld_world_finalize(w);
}

void cu_free(pld_world *w, pld_dtensor t)
{
    if (t.buf)
        pld_free_window_buffer(w, t.buf);
}

/* ---- byte patterns ------------------------------------------------------- */

uint32_t cu_tag(int src, int dst, int salt)
{
    return ((uint32_t)src & 0xffu) | (((uint32_t)dst & 0xffu) << 8) |
           (((uint32_t)salt & 0xffffu) << 16);
}

static uint32_t mix(uint32_t tag, uint64_t word)
{
    uint32_t x = tag * 0x9E3779B1u ^ (uint32_t)word * 0x85EBCA77u ^ (uint32_t)(word >> 32);
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    x *= 0x297A2D39u;
    x ^= x >> 15;
    return x;
}

uint8_t cu_byte(uint32_t tag, uint64_t k)
{
    return (uint8_t)(mix(tag, k >> 2) >> (8 * (k & 3)));
}

/* The four pattern bytes of word w, in address order. */
static void word_bytes(uint32_t tag, uint64_t w, uint8_t out[4])
{
    uint32_t h = mix(tag, w);
    out[0] = (uint8_t)h;
    out[1] = (uint8_t)(h >> 8);
    out[2] = (uint8_t)(h >> 16);
    out[3] = (uint8_t)(h >> 24);
}

void cu_fill(void *p, size_t n, uint32_t tag, uint64_t first)
{
    uint8_t *b = p, wb[4];
    size_t i = 0;
    for (; i < n && ((first + i) & 3) != 0; i++) /* head up to a word boundary */
        b[i] = cu_byte(tag, first + i);
    for (; i + 4 <= n; i += 4) {
        word_bytes(tag, (first + i) >> 2, wb);
        memcpy(b + i, wb, 4);
    }
    for (; i < n; i++)
        b[i] = cu_byte(tag, first + i);
}

int64_t cu_mismatch(const void *p, size_t n, uint32_t tag, uint64_t first)
{
    const uint8_t *b = p;
    uint8_t wb[4];
    size_t i = 0;
    for (; i < n && ((first + i) & 3) != 0; i++)
        if (b[i] != cu_byte(tag, first + i))
            return (int64_t)i;
    for (; i + 4 <= n; i += 4) {
        word_bytes(tag, (first + i) >> 2, wb);
        if (memcmp(b + i, wb, 4) != 0)
            break; /* the byte loop below finds which */
    }
    for (; i < n; i++)
        if (b[i] != cu_byte(tag, first + i))
            return (int64_t)i;
    return -1;
}

void cu_kcheck_bytes(pld_ctx *c, const char *what, const void *p, size_t n, uint32_t tag,
                     uint64_t first)
{
    int64_t at = cu_mismatch(p, n, tag, first);
    if (at >= 0)
        pld_fail(c,
                 "golden mismatch: rank %d %s: byte %lld of %zu is 0x%02x, expected 0x%02x "
                 "(chunk src %u dst %u call %u)",
                 pld_rank(c), what, (long long)at, n, ((const uint8_t *)p)[at],
                 cu_byte(tag, first + (uint64_t)at), tag & 0xffu, (tag >> 8) & 0xffu, tag >> 16);
}

/* ---- reductions ----------------------------------------------------------- */

double cu_rval(int r, int64_t i, pld_reduce_op op, int p)
{
    switch (op) {
    case PLD_SUM:
        return (double)((r * 7 + i * 3 + (i >> 5)) % 11) - 3;
    case PLD_MAX:
    case PLD_MIN:
        return (double)((r + i + i / p) % p) - (double)(p / 2);
    case PLD_PROD:
        if (r < 8 && (r * 3 + i) % 7 == 0)
            return 2;
        return (r + 2 * i) % 5 == 0 ? -1 : 1;
    }
    return 0;
}

double cu_fold(pld_reduce_op op, double acc, double x)
{
    switch (op) {
    case PLD_SUM:
        return acc + x;
    case PLD_MAX:
        return x > acc ? x : acc;
    case PLD_MIN:
        return x < acc ? x : acc;
    case PLD_PROD:
        return acc * x;
    }
    return acc;
}

double cu_ref(int p, int64_t i, pld_reduce_op op)
{
    double acc = cu_rval(0, i, op, p);
    for (int r = 1; r < p; r++)
        acc = cu_fold(op, acc, cu_rval(r, i, op, p));
    return acc;
}

double *cu_ref_array(int p, int64_t n, pld_reduce_op op)
{
    double *ref = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    cr_assert_not_null(ref);
    for (int64_t i = 0; i < n; i++)
        ref[i] = cu_ref(p, i, op);
    return ref;
}

const char *cu_op_name(pld_reduce_op op)
{
    static const char *const names[] = {"Sum", "Max", "Min", "Prod"};
    return (unsigned)op <= PLD_PROD ? names[op] : "?";
}

/* ---- sizes ----------------------------------------------------------------- */

int64_t cu_ragged(size_t total_bytes, int64_t rows, size_t elt)
{
    int64_t n = (int64_t)(total_bytes / ((size_t)rows * elt));
    if (n < 1)
        return 1;
    return n | 1;
}

/* ---- signals --------------------------------------------------------------- */

void cu_assert_signal_zero(pld_world *w, pld_dtensor sig)
{
    for (int r = 0; r < pld_world_size(w); r++) {
        pld_tensor v = tu_view(w, sig, r);
        const int32_t *cells = v.data;
        for (int64_t i = 0; i < pld_tensor_numel(v); i++)
            cr_assert_eq(cells[i], 0, "rank %d: signal '%s' cell %lld holds %d, expected 0", r,
                         pld_window_buffer_name(sig.buf), (long long)i, cells[i]);
    }
}
