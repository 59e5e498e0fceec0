/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* ---- worlds and windows -------------------------------------------------- */

pld_world *tu_world_cfg(const pld_config *cfg)
{
    pld_config c = *cfg;
    if (!c.transport) {
        const char *t = getenv("PLD_TEST_TRANSPORT");
        c.transport = (t && *t) ? t : "thread";
    }
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &c);
    cr_assert_eq(st, PLD_OK, "pld_world_init(devices=%s, platform=%s, transport=%s) = %s: %s",
                 c.devices ? c.devices : "(default)", c.platform ? c.platform : "(default)",
                 c.transport, pld_status_name(st), pld_last_error());
    cr_assert_not_null(w, "pld_world_init returned PLD_OK but no world");
    return w;
}

pld_world *tu_world(const char *devices)
{
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = devices;
    return tu_world_cfg(&cfg);
}

pld_dtensor tu_window(pld_world *w, const char *name, pld_dtype dtype, int ndim,
                      const int64_t *shape)
{
    size_t bytes = pld_dtype_size(dtype);
    for (int i = 0; i < ndim; i++)
        bytes *= (size_t)shape[i];
    pld_window_buffer *buf = NULL;
    pld_status st = pld_alloc_window_buffer(w, bytes, name, &buf);
    cr_assert_eq(st, PLD_OK, "pld_alloc_window_buffer(%zu, '%s') = %s: %s", bytes, name,
                 pld_status_name(st), pld_world_error(w));
    pld_dtensor t;
    memset(&t, 0, sizeof t);
    st = pld_window(buf, dtype, ndim, shape, &t);
    cr_assert_eq(st, PLD_OK, "pld_window('%s') = %s: %s", name, pld_status_name(st),
                 pld_world_error(w));
    return t;
}

pld_dtensor tu_signal(pld_world *w, const char *name, int64_t cols)
{
    int64_t shape[2] = {pld_world_size(w), cols};
    return tu_window(w, name, PLD_INT32, 2, shape);
}

pld_tensor tu_view(pld_world *w, pld_dtensor t, int rank)
{
    pld_tensor v;
    memset(&v, 0, sizeof v);
    pld_status st = pld_window_host_view(w, t, rank, &v);
    cr_assert_eq(st, PLD_OK, "pld_window_host_view(rank %d) = %s: %s", rank, pld_status_name(st),
                 pld_world_error(w));
    cr_assert_not_null(v.data, "pld_window_host_view(rank %d): NULL data", rank);
    return v;
}

void *tu_host_alloc(pld_world *w, size_t bytes)
{
    unsigned char *p = pld_host_alloc(w, bytes);
    cr_assert_not_null(p, "pld_host_alloc(%zu) returned NULL", bytes);
    for (size_t i = 0; i < bytes; i++)
        cr_assert_eq(p[i], 0, "pld_host_alloc(%zu): byte %zu is %u, expected 0", bytes, i,
                     (unsigned)p[i]);
    return p;
}

/* ---- strings ------------------------------------------------------------ */

int tu_contains(const char *hay, const char *needle)
{
    return hay && needle && strstr(hay, needle) != NULL;
}

int tu_icontains(const char *hay, const char *needle)
{
    if (!hay || !needle)
        return 0;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

int tu_starts_with(const char *s, const char *prefix)
{
    return s && prefix && strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *tu_line_starting(const char *text, const char *prefix, char *buf, size_t n)
{
    if (!text)
        return NULL;
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *l = line;
        while (*l == ' ' || *l == '\t') /* indented report lines are fine */
            l++, len--;
        if (strncmp(l, prefix, strlen(prefix)) == 0) {
            if (len >= n)
                len = n - 1;
            memcpy(buf, l, len);
            buf[len] = '\0';
            return buf;
        }
        if (!end)
            break;
        line = end + 1;
    }
    return NULL;
}

char **tu_argv(int n, const char *const *src)
{
    char **v = calloc((size_t)n + 1, sizeof *v);
    cr_assert_not_null(v);
    for (int i = 0; i < n; i++) {
        v[i] = strdup(src[i]);
        cr_assert_not_null(v[i]);
    }
    return v;
}

/* ---- time --------------------------------------------------------------- */

double tu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void tu_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- fp16 / bf16 -------------------------------------------------------- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t tu_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float tu_bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

uint16_t tu_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t au = u & 0x7fffffffu;
    if (au > 0x7f800000u)
        return sign | 0x7e00u;
    if (au >= 0x477ff000u) /* rounds to >= 65520 -> inf */
        return sign | 0x7c00u;
    if (au < 0x38800000u) { /* subnormal half (or zero) */
        float a = bits_f32(au);
        /* a / 2^-24, rounded to nearest even */
        float q = a * 16777216.0f; /* exact: a power-of-two scale */
        uint32_t ip = (uint32_t)q;
        float frac = q - (float)ip;
        if (frac > 0.5f || (frac == 0.5f && (ip & 1u)))
            ip++;
        return sign | (uint16_t)ip;
    }
    uint32_t exp = ((au >> 23) - 127 + 15);
    uint32_t mant = au & 0x7fffffu;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return sign | (uint16_t)h;
}

float tu_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        float v = (float)mant / 16777216.0f; /* mant * 2^-24 */
        return sign ? -v : v;
    }
    if (exp == 31)
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    return bits_f32(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

double tu_get(pld_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case PLD_FP32:
        return ((const float *)p)[i];
    case PLD_FP16:
        return tu_f16_to_f32(((const uint16_t *)p)[i]);
    case PLD_BF16:
        return tu_bf16_to_f32(((const uint16_t *)p)[i]);
    case PLD_INT32:
        return ((const int32_t *)p)[i];
    case PLD_INT16:
        return ((const int16_t *)p)[i];
    case PLD_INT8:
        return ((const int8_t *)p)[i];
    case PLD_UINT8:
        return ((const uint8_t *)p)[i];
    case PLD_INT64:
        return (double)((const int64_t *)p)[i];
    case PLD_FP64:
        return ((const double *)p)[i];
    }
    return NAN;
}

void tu_set(pld_dtype t, void *p, int64_t i, double v)
{
    switch (t) {
    case PLD_FP32:
        ((float *)p)[i] = (float)v;
        break;
    case PLD_FP16:
        ((uint16_t *)p)[i] = tu_f32_to_f16((float)v);
        break;
    case PLD_BF16:
        ((uint16_t *)p)[i] = tu_f32_to_bf16((float)v);
        break;
    case PLD_INT32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case PLD_INT16:
        ((int16_t *)p)[i] = (int16_t)v;
        break;
    case PLD_INT8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case PLD_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)v;
        break;
    case PLD_INT64:
        ((int64_t *)p)[i] = (int64_t)v;
        break;
    case PLD_FP64:
        ((double *)p)[i] = v;
        break;
    }
}

/* ---- kernel-side checks ------------------------------------------------- */

void tu_kfail(pld_ctx *c, const char *file, int line, const char *expr, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    pld_fail(c, "%s:%d: check (%s) failed on rank %d: %s", base ? base + 1 : file, line, expr,
             pld_rank(c), msg);
}

char *tu_slurp(const char *path, const char *what)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "no %s at '%s'", what, path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    cr_assert_geq(n, 0, "cannot size %s '%s'", what, path);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n, "short read of %s '%s'", what, path);
    s[n] = '\0';
    fclose(f);
    return s;
}
