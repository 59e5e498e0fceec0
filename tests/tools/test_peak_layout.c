/* SPDX-License-Identifier: Apache-2.0 */
/* The buffers pld bench's memcpy reference copies between (%peak's
 * denominator, tools/bench/peak.h): for every size, source and destination
 * are page-aligned, never share a page, lie a whole number of pages apart
 * (no 4 KiB aliasing between a load and the store just before it, which
 * once made the reference ten times too slow from 4 KiB to 256 KiB), are
 * written before they are timed (resident, the source holding its
 * pattern), and come from separate allocations even where malloc would
 * have put them back to back. No timing is checked: the machine's speed
 * is not this test's business, the layout is. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "peak.h"

static int fails;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: " __VA_ARGS__);                                                          \
            printf("\n");                                                                          \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

/* 1 if every page of [p, p+n) is resident */
static int resident(const unsigned char *p, size_t n, size_t page)
{
    size_t pages = (n + page - 1) / page;
    unsigned char *vec = malloc(pages);
    int ok = vec && mincore((void *)p, n, vec) == 0;
    for (size_t i = 0; ok && i < pages; i++)
        ok = vec[i] & 1;
    free(vec);
    return ok;
}

int main(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const int64_t sizes[] = {8, 64, 4096, 4100, 16384, 32768, 262144, 1 << 20, 16 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        unsigned char *src, *dst;
        CHECK(bench_peak_buffers(n, &src, &dst) == 0, "%lld B: no buffers", (long long)n);
        if (fails)
            return 1;
        uintptr_t s = (uintptr_t)src, d = (uintptr_t)dst;
        size_t span = ((size_t)n + page - 1) / page * page;
        CHECK(s % page == 0 && d % page == 0, "%lld B: src %p dst %p not page-aligned",
              (long long)n, (void *)src, (void *)dst);
        CHECK(s + span <= d || d + span <= s, "%lld B: src %p and dst %p share a page",
              (long long)n, (void *)src, (void *)dst);
        CHECK((d > s ? d - s : s - d) % 4096 == 0,
              "%lld B: dst - src = %lld is not a multiple of 4 KiB (4 KiB aliasing)", (long long)n,
              (long long)(d > s ? d - s : s - d));
        CHECK(resident(src, (size_t)n, page) && resident(dst, (size_t)n, page),
              "%lld B: buffers not written before timing (pages not resident)", (long long)n);
        CHECK(src[0] == 0x5a && src[n - 1] == 0x5a && dst[0] == 0 && dst[n - 1] == 0,
              "%lld B: source pattern / zeroed destination missing", (long long)n);
        printf("ok %9lld B: src %p dst %p (%+lld pages)\n", (long long)n, (void *)src, (void *)dst,
               (long long)(((intptr_t)d - (intptr_t)s) / (intptr_t)page));
        bench_peak_buffers_free(n, src, dst);
    }
    /* the reference still measures something with these buffers */
    CHECK(bench_memcpy_gbs(1, 4096) > 0, "bench_memcpy_gbs(1, 4 KiB) returned 0");
    CHECK(bench_memcpy_gbs(2, 4096) > 0, "bench_memcpy_gbs(2, 4 KiB) returned 0");
    puts(fails ? "FAILED" : "PASS");
    return fails != 0;
}
