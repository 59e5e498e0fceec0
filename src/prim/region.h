/* SPDX-License-Identifier: Apache-2.0 */
/* Regions of N-D row-major arrays and the contiguous runs that copy them.
 * Every bounds check of every primitive goes through pld__region_check. */
#ifndef PLD_REGION_H
#define PLD_REGION_H

#include "core/internal.h"

typedef struct pld__region {
    int nd;
    int64_t full[PLD_MAX_DIMS]; /* the array's shape */
    int64_t off[PLD_MAX_DIMS];  /* region start */
    int64_t ext[PLD_MAX_DIMS];  /* region extent */
    size_t esz;                 /* element size */
} pld__region;

/* Walks a pair of same-extent regions (a = destination, b = source) as
 * contiguous byte runs in row-major order. */
typedef struct pld__runs {
    int nd, k; /* dims k..nd-1 are merged into one run */
    int64_t ext[PLD_MAX_DIMS], idx[PLD_MAX_DIMS];
    size_t a_step[PLD_MAX_DIMS], b_step[PLD_MAX_DIMS];
    size_t a_off, b_off; /* byte offsets of the current run */
    size_t run_bytes;
    int64_t remaining; /* runs left */
} pld__runs;

void pld__runs_init(pld__runs *it, const pld__region *a, const pld__region *b);
/* Returns 0 when exhausted; else the byte offsets (relative to each array's
 * start) and the length of the next run. */
int pld__runs_next(pld__runs *it, size_t *a_off, size_t *b_off, size_t *bytes);

int64_t pld__region_numel(const pld__region *r);
size_t pld__region_bytes(const pld__region *r);

/* Builds a region from an array shape, offsets (NULL = origin) and extents
 * (NULL = whole array). Checks the offsets' count (PLD_IDX) and the bounds;
 * on failure raises `api`'s error naming `what` and the array: the window
 * `wname`, or a plain tensor when wname is NULL
 * ("dst region [3,0]+[1,64] is outside window 'data' [2,64]"). */
void pld__region_make(pld_ctx *c, const char *api, const char *what, const char *wname, int nd,
                      const int64_t *full, const int64_t *off, const int64_t *ext, size_t esz,
                      pld__region *out);

/* The [rows, cols] block at (row, col) of a [nrows, ncols] array, without
 * checks: for pre-checked builtins whose arithmetic keeps it in bounds. */
void pld__region_rect(int64_t nrows, int64_t ncols, int64_t row, int64_t col, int64_t rows,
                      int64_t cols, size_t esz, pld__region *out);

/* "window 'data'" or "tensor", for messages (formatted only when raising). */
const char *pld__owner(char *buf, size_t n, const char *wname);

/* Pads r with leading unit dims to nd dims. */
void pld__region_pad(pld__region *r, int nd);

/* 1 if the two regions (laid out from addresses base_a / base_b) share any
 * byte. Bases are integers: they may be offsets rather than pointers. */
int pld__regions_overlap(uintptr_t base_a, const pld__region *a, uintptr_t base_b,
                         const pld__region *b);

/* Formats "[a,b]+[c,d]" for messages. */
const char *pld__fmt_region(char *buf, size_t n, const pld__region *r);

#endif
