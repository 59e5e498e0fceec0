/* SPDX-License-Identifier: Apache-2.0 */
/* Fill and verify: see values.h. */
#include "values.h"

#include <string.h>

static uint16_t f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    x += 0x7fffu + ((x >> 16) & 1u); /* round to nearest even (finite values) */
    return (uint16_t)(x >> 16);
}

static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xffu) - 127 + 15;
    uint32_t man = x & 0x7fffffu;
    if (((x >> 23) & 0xffu) == 0 || exp <= 0)
        return (uint16_t)sign; /* zero (the values here are never subnormal) */
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)h;
}

/* x encoded as one element of dt into out (at most 8 bytes). */
static void encode(pld_dtype dt, double x, unsigned char *out)
{
    union {
        float f;
        double d;
        uint16_t h;
        int32_t i32;
        int16_t i16;
        int8_t i8;
        uint8_t u8;
        int64_t i64;
    } u;
    memset(&u, 0, sizeof u);
    switch (dt) {
    case PLD_FP32:
        u.f = (float)x;
        break;
    case PLD_FP64:
        u.d = x;
        break;
    case PLD_FP16:
        u.h = f32_to_f16((float)x);
        break;
    case PLD_BF16:
        u.h = f32_to_bf16((float)x);
        break;
    case PLD_INT32:
        u.i32 = (int32_t)(int64_t)x;
        break;
    case PLD_INT16:
        u.i16 = (int16_t)(int64_t)x;
        break;
    case PLD_INT8:
        u.i8 = (int8_t)(int64_t)x;
        break;
    case PLD_UINT8:
        u.u8 = (uint8_t)(int64_t)x; /* -3 wraps to 253: never a valid value */
        break;
    case PLD_INT64:
        u.i64 = (int64_t)x;
        break;
    }
    memcpy(out, &u, sizeof u);
}

void bench_vals_init(bench_vals *v, pld_dtype dt, pld_reduce_op op, int reduces, int p)
{
    v->dt = dt;
    v->op = reduces ? op : PLD_MAX; /* any non-Prod op: plain values */
    v->p = p;
    v->range = reduces && op == PLD_SUM && dt == PLD_BF16 ? 2u : 16u;
}

double bench_val(const bench_vals *v, int src, int dst, int64_t it, int64_t i)
{
    uint64_t h = (uint64_t)src * 131u + (uint64_t)dst * 31u + (uint64_t)it * 17u + (uint64_t)i * 7u;
    if (v->op == PLD_PROD) /* one source per element contributes 2 */
        return ((uint64_t)src + (uint64_t)dst + (uint64_t)it + (uint64_t)i) % (uint64_t)v->p == 0
                   ? 2.0
                   : 1.0;
    return (double)(h % v->range);
}

void bench_fill(const bench_vals *v, void *base, int64_t n, int src, int dst, int64_t it,
                int64_t i0)
{
    size_t esz = pld_dtype_size(v->dt);
    unsigned char e[8], *p = base;
    for (int64_t i = 0; i < n; i++) {
        encode(v->dt, bench_val(v, src, dst, it, i0 + i), e);
        memcpy(p + (size_t)i * esz, e, esz);
    }
}

void bench_fill_const(pld_dtype dt, void *base, int64_t n, double x)
{
    size_t esz = pld_dtype_size(dt);
    unsigned char e[8], *p = base;
    encode(dt, x, e);
    for (int64_t i = 0; i < n; i++)
        memcpy(p + (size_t)i * esz, e, esz);
}

int64_t bench_verify(const bench_vals *v, const void *base, int64_t n, int src, int dst, int64_t it,
                     int64_t i0)
{
    size_t esz = pld_dtype_size(v->dt);
    const unsigned char *p = base;
    unsigned char e[8];
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        encode(v->dt, bench_val(v, src, dst, it, i0 + i), e);
        wrong += memcmp(p + (size_t)i * esz, e, esz) != 0;
    }
    return wrong;
}

static double combine(pld_reduce_op op, double a, double b)
{
    switch (op) {
    case PLD_SUM:
        return a + b;
    case PLD_PROD:
        return a * b;
    case PLD_MAX:
        return a > b ? a : b;
    case PLD_MIN:
        return a < b ? a : b;
    }
    return a;
}

/* What every source's value of element i combines to, in double as the
 * plain loop over the P sources would (every rank checks every element of
 * its result: P = 4096 would otherwise take P x P x count steps, minutes
 * for a 64 KiB allreduce). bench_val depends on the source only through
 * src * 131 mod range, so its values repeat every `range` sources: one
 * period, times the whole periods, plus the rest. The sums are of small
 * integers, exact in double in any order; max and min of a period already
 * cover the rest. PLD_PROD: exactly one source in 0 .. P-1 contributes 2,
 * every other 1. */
static double reduce_sources(const bench_vals *v, int dst, int64_t it, int64_t i)
{
    if (v->op == PLD_PROD)
        return 2.0;
    int period = (int)v->range, whole = v->p >= 2 * period;
    int n = whole ? period : v->p; /* few sources: all of them */
    double x = bench_val(v, 0, dst, it, i);
    for (int s = 1; s < n; s++)
        x = combine(v->op, x, bench_val(v, s, dst, it, i));
    if (!whole || v->op != PLD_SUM)
        return x;
    x *= (double)(v->p / period);
    for (int s = 0; s < v->p % period; s++)
        x += bench_val(v, s, dst, it, i);
    return x;
}

int64_t bench_verify_reduced(const bench_vals *v, const void *base, int64_t n, int dst, int64_t it,
                             int64_t i0)
{
    size_t esz = pld_dtype_size(v->dt);
    const unsigned char *p = base;
    unsigned char e[8];
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        encode(v->dt, reduce_sources(v, dst, it, i0 + i), e);
        wrong += memcmp(p + (size_t)i * esz, e, esz) != 0;
    }
    return wrong;
}
