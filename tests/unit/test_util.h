/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by pld's Criterion unit tests.
 *
 * Host side (inside a Criterion test body) the tu_* helpers assert with
 * cr_assert and abort the test on failure. Kernel side (inside pld_launch)
 * Criterion's assertions must not be used -- the kernel runs on a rank
 * thread or process -- so kernels check with KCHECK*, which report through
 * pld_fail (PLD_ERR_CHECK, message names the file, line and both sides). */
#ifndef PLD_TEST_UTIL_H
#define PLD_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <pld/pld.h>

/* ---- worlds and windows (host side, assert on failure) ------------------ */

/* A world on `devices` (NULL -> default "0,1"), platform a2a3sim, transport
 * from env PLD_TEST_TRANSPORT (default thread). */
pld_world *tu_world(const char *devices);
/* Same with an explicit configuration (transport filled from
 * PLD_TEST_TRANSPORT when cfg->transport is NULL). */
pld_world *tu_world_cfg(const pld_config *cfg);

/* Allocates a window buffer of exactly the view's size and returns the view. */
pld_dtensor tu_window(pld_world *w, const char *name, pld_dtype dtype, int ndim,
                      const int64_t *shape);
/* An INT32 signal [P, cols]. */
pld_dtensor tu_signal(pld_world *w, const char *name, int64_t cols);
/* Host view of rank r's slice (asserts PLD_OK). */
pld_tensor tu_view(pld_world *w, pld_dtensor t, int rank);
/* Host memory visible to kernels (asserts non-NULL and zeroed). */
void *tu_host_alloc(pld_world *w, size_t bytes);

/* ---- strings ------------------------------------------------------------ */

int tu_contains(const char *hay, const char *needle);
int tu_icontains(const char *hay, const char *needle); /* case-insensitive */
int tu_starts_with(const char *s, const char *prefix);
/* The line of `text` that starts with `prefix` (copied into buf), or NULL. */
const char *tu_line_starting(const char *text, const char *prefix, char *buf, size_t n);
/* Mutable argv copy (NULL-terminated) of n strings. */
char **tu_argv(int n, const char *const *src);

/* ---- files -------------------------------------------------------------- */

/* The whole file at path, NUL-terminated (free it); asserts it can be read.
 * what names the file in the failure ("trace", "log", "picture"). */
char *tu_slurp(const char *path, const char *what);

/* ---- time --------------------------------------------------------------- */

double tu_now_ms(void);
void tu_sleep_ms(int ms);

/* ---- fp16 / bf16 (IEEE binary16, bfloat16; round to nearest even) ------- */

uint16_t tu_f32_to_f16(float f);
float tu_f16_to_f32(uint16_t h);
uint16_t tu_f32_to_bf16(float f);
float tu_bf16_to_f32(uint16_t h);

/* Element i of a buffer of dtype t, as a double (fp16/bf16 decoded). */
double tu_get(pld_dtype t, const void *p, int64_t i);
/* Stores v (converted; fp16/bf16 encoded) as element i. */
void tu_set(pld_dtype t, void *p, int64_t i, double v);

/* ---- kernel-side checks ------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6), noreturn))
#endif
void tu_kfail(pld_ctx *c, const char *file, int line, const char *expr, const char *fmt, ...);

#define KCHECK(c, cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            tu_kfail((c), __FILE__, __LINE__, #cond, __VA_ARGS__);                                 \
    } while (0)

#define KCHECK_EQ_I(c, a, b)                                                                       \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            tu_kfail((c), __FILE__, __LINE__, #a " == " #b, "%lld != %lld", a_, b_);               \
    } while (0)

/* ---- host-side assertions ----------------------------------------------- */

#define TU_ASSERT_CONTAINS(hay, needle)                                                            \
    cr_assert(tu_contains((hay), (needle)), "expected \"%s\" in %s\n  got: \"%s\"", (needle),      \
              #hay, (hay))
#define TU_EXPECT_CONTAINS(hay, needle)                                                            \
    cr_expect(tu_contains((hay), (needle)), "expected \"%s\" in %s\n  got: \"%s\"", (needle),      \
              #hay, (hay))
#define TU_ASSERT_STARTS(s, prefix)                                                                \
    cr_assert(tu_starts_with((s), (prefix)), "expected %s to start with \"%s\"\n  got: \"%s\"",    \
              #s, (prefix), (s))
#define TU_EXPECT_STARTS(s, prefix)                                                                \
    cr_expect(tu_starts_with((s), (prefix)), "expected %s to start with \"%s\"\n  got: \"%s\"",    \
              #s, (prefix), (s))

/* Launches and asserts PLD_OK, printing the world's error otherwise. */
#define TU_LAUNCH_OK(w, k, a)                                                                      \
    do {                                                                                           \
        pld_status st_ = pld_launch((w), (k), (a));                                                \
        cr_assert_eq(st_, PLD_OK, "pld_launch(%s) = %s, expected PLD_OK\n  error: %s", #k,         \
                     pld_status_name(st_), pld_world_error(w));                                    \
    } while (0)

/* Launches and asserts the given failure status; evaluates to nothing. */
#define TU_LAUNCH_FAILS(w, k, a, expected)                                                         \
    do {                                                                                           \
        pld_status st_ = pld_launch((w), (k), (a));                                                \
        cr_assert_eq(st_, (expected), "pld_launch(%s) = %s, expected %s\n  error: %s", #k,         \
                     pld_status_name(st_), pld_status_name(expected), pld_world_error(w));         \
    } while (0)

#define TU_ASSERT_STATUS(expr, expected)                                                           \
    do {                                                                                           \
        pld_status st_ = (expr);                                                                   \
        cr_assert_eq(st_, (expected), "%s = %s, expected %s", #expr, pld_status_name(st_),         \
                     pld_status_name(expected));                                                   \
    } while (0)

#endif /* PLD_TEST_UTIL_H */
