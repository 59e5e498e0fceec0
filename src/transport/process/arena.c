/* SPDX-License-Identifier: Apache-2.0 */
/* The shared arena of the process transport: see arena.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "transport/process/arena.h"

#define ALIGN 64u

static size_t round_up(size_t n)
{
    return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

/* A memfd counts against the file size limit: ftruncate past it raises
 * SIGXFSZ, which kills the process (ulimit -f). The arena's size is only
 * the most its pages may grow to, so under a smaller limit the arena takes
 * the limit instead (windows then find less room); below what world init
 * itself needs it is an error naming both. Sizing within the limit never
 * raises the signal, so its disposition is left alone. */
static int fit_file_limit(pld__arena *a, size_t *size, size_t need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= (rlim_t)*size)
        return 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t limit = (size_t)rl.rlim_cur & ~(page - 1);
    if (limit < need) {
        snprintf(a->why, sizeof a->why,
                 "the file size limit (RLIMIT_FSIZE, ulimit -f) is %llu bytes; the shared arena "
                 "(a memfd) needs at least %zu bytes, and up to %zu for large windows: raise "
                 "the limit (ulimit -f unlimited)",
                 (unsigned long long)rl.rlim_cur, need, *size);
        errno = EFBIG;
        return -1;
    }
    *size = limit;
    return 0;
}

int pld__arena_open(pld__arena *a, size_t size, size_t need)
{
    memset(a, 0, sizeof *a);
    a->fd = -1;
    if (fit_file_limit(a, &size, need) != 0)
        return -1;
    a->fd = memfd_create("pld-arena", MFD_CLOEXEC);
    if (a->fd < 0) {
        snprintf(a->why, sizeof a->why, "memfd_create: %s", strerror(errno));
        return -1;
    }
    if (ftruncate(a->fd, (off_t)size) != 0) {
        snprintf(a->why, sizeof a->why, "ftruncate of the memfd to %zu bytes: %s", size,
                 strerror(errno));
        goto err_fd;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, a->fd, 0);
    if (p == MAP_FAILED) {
        snprintf(a->why, sizeof a->why, "mmap of %zu bytes: %s", size, strerror(errno));
        goto err_fd;
    }
    a->free = malloc(sizeof *a->free * 16);
    if (!a->free) {
        snprintf(a->why, sizeof a->why, "out of memory");
        munmap(p, size);
        goto err_fd;
    }
    a->cap = 16;
    a->free[0] = (pld__arena_span){.off = 0, .len = size};
    a->nfree = 1;
    a->base = p;
    a->size = size;
    return 0;
err_fd:
    close(a->fd);
    a->fd = -1;
    return -1;
}

void pld__arena_close(pld__arena *a)
{
    if (a->base)
        munmap(a->base, a->size);
    if (a->fd >= 0)
        close(a->fd);
    free(a->free);
    memset(a, 0, sizeof *a);
    a->fd = -1;
}

void *pld__arena_alloc(pld__arena *a, size_t bytes)
{
    if (bytes > a->size)
        return NULL;
    size_t n = round_up(bytes ? bytes : 1) + ALIGN; /* + header */
    for (int i = 0; i < a->nfree; i++) {
        if (a->free[i].len < n)
            continue;
        size_t off = a->free[i].off;
        a->free[i].off += n;
        a->free[i].len -= n;
        if (a->free[i].len == 0) {
            memmove(&a->free[i], &a->free[i + 1], sizeof *a->free * (size_t)(a->nfree - i - 1));
            a->nfree--;
        }
        size_t *hdr = (size_t *)(void *)(a->base + off);
        *hdr = n;
        return a->base + off + ALIGN;
    }
    return NULL;
}

/* Gives the pages back to the kernel (they read as zero afterwards) and
 * zeroes the partial pages at the edges by hand. */
static void zero_range(unsigned char *p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
    if (hi > lo && hi - lo >= 16 * page) {
        memset(p, 0, lo - (uintptr_t)p);
        if (madvise((void *)lo, hi - lo, MADV_REMOVE) != 0)
            memset((void *)lo, 0, hi - lo);
        memset((void *)hi, 0, (uintptr_t)p + n - hi);
    } else {
        memset(p, 0, n);
    }
}

void pld__arena_free(pld__arena *a, void *p)
{
    if (!p)
        return;
    unsigned char *start = (unsigned char *)p - ALIGN;
    size_t off = (size_t)(start - a->base), n = *(size_t *)(void *)start;
    zero_range(start, n);
    int i = 0;
    while (i < a->nfree && a->free[i].off < off)
        i++;
    if (i > 0 && a->free[i - 1].off + a->free[i - 1].len == off) {
        a->free[i - 1].len += n; /* merge with the span before */
        if (i < a->nfree && off + n == a->free[i].off) {
            a->free[i - 1].len += a->free[i].len;
            memmove(&a->free[i], &a->free[i + 1], sizeof *a->free * (size_t)(a->nfree - i - 1));
            a->nfree--;
        }
        return;
    }
    if (i < a->nfree && off + n == a->free[i].off) { /* merge with the span after */
        a->free[i].off = off;
        a->free[i].len += n;
        return;
    }
    if (a->nfree == a->cap) {
        pld__arena_span *grown = realloc(a->free, sizeof *grown * (size_t)a->cap * 2);
        if (!grown)
            return; /* the span is lost to reuse, not to correctness */
        a->free = grown;
        a->cap *= 2;
    }
    memmove(&a->free[i + 1], &a->free[i], sizeof *a->free * (size_t)(a->nfree - i));
    a->free[i] = (pld__arena_span){.off = off, .len = n};
    a->nfree++;
}

int pld__arena_contains(const pld__arena *a, const void *p, size_t bytes)
{
    uintptr_t lo = (uintptr_t)a->base, x = (uintptr_t)p;
    return a->base && x >= lo && x - lo <= a->size && bytes <= a->size - (x - lo);
}
