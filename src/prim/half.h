/* SPDX-License-Identifier: Apache-2.0 */
/* FP16 / BF16 <-> FP32 conversions (round to nearest even). FP16 and BF16
 * are stored as 16-bit patterns and computed in FP32. */
#ifndef PLD_HALF_H
#define PLD_HALF_H

#include <stdint.h>
#include <string.h>

static inline float pld__f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t pld__f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float pld__bf16_to_f32(uint16_t h)
{
    return pld__f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t pld__f32_to_bf16(float f)
{
    uint32_t u = pld__f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet, keep the sign */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float pld__fp16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13); /* inf / nan */
    } else if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400u));
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else {
        u = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return pld__f32_from_bits(u);
}

static inline uint16_t pld__f32_to_fp16(float f)
{
    uint32_t u = pld__f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t au = u & 0x7fffffffu;
    if (au > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u); /* nan */
    if (au >= 0x477ff000u)                 /* rounds to >= 65520: inf */
        return (uint16_t)(sign | 0x7c00u);
    if (au < 0x38800000u) { /* below the smallest normal: subnormal or zero */
        float a = pld__f32_from_bits(au);
        /* a * 2^24 rounded to nearest even gives the subnormal mantissa */
        float scaled = a * 16777216.0f;
        uint32_t m = (uint32_t)scaled;
        float rem = scaled - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1u)))
            m++;
        return (uint16_t)(sign | m);
    }
    uint32_t man = au & 0x7fffffu;
    uint32_t exp = (au >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (man >> 13);
    uint32_t rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* may carry into the exponent, which is the right result */
    return (uint16_t)(sign | h);
}

#endif
