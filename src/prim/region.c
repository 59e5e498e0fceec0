/* SPDX-License-Identifier: Apache-2.0 */
/* Offsets arrays, regions and run iteration. */
#include <stdio.h>
#include <string.h>

#include "prim/region.h"

/* ---- PLD_IDX bookkeeping ------------------------------------------------
 * PLD_IDX records (address, length) in a small per-thread ring so calls can
 * check the number of offsets. A lookup consumes the record: stack reuse can
 * then never pair a stale length with a plain array. */
#define IDX_RING 16

typedef struct idx_ring {
    const int64_t *p[IDX_RING];
    int64_t first[IDX_RING]; /* v[0] when marked: a plain array reusing the
                                address of a stale mark rarely matches it */
    int n[IDX_RING];
    unsigned head;
    unsigned live; /* marks not yet looked up: nothing to scan when 0 */
} idx_ring;

/* The default (dynamic) TLS model, so libpld.so can be loaded with dlopen
 * (Python's ctypes) after other libraries used up the static TLS surplus.
 * src/CMakeLists.txt compiles with TLS descriptors where the compiler has
 * them: this hot-path access is then an indirect call of a few
 * instructions, not a __tls_get_addr lookup (a pld_signal_read with
 * offsets still costs 0.03 us). */
static _Thread_local idx_ring ring;

const int64_t *pld_idx_mark(const int64_t *v, int n)
{
    idx_ring *r = &ring;
    unsigned slot = r->head++ % IDX_RING;
    if (!r->p[slot])
        r->live++;
    r->p[slot] = v;
    r->first[slot] = v[0];
    r->n[slot] = n;
    return v;
}

int pld__idx_count(const int64_t *v)
{
    idx_ring *r = &ring;
    if (!v || r->live == 0)
        return -1;
    for (unsigned i = 0; i < IDX_RING; i++) {
        unsigned slot = (r->head - 1 - i) % IDX_RING;
        if (r->p[slot] == v) {
            r->p[slot] = NULL;
            r->live--;
            return r->first[slot] == v[0] ? r->n[slot] : -1;
        }
    }
    return -1;
}

const char *pld__fmt_dims(char *buf, size_t n, const int64_t *v, int ndim)
{
    size_t used = 0;
    used += (size_t)snprintf(buf + used, n - used, "[");
    for (int i = 0; i < ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ",%lld" : "%lld", (long long)v[i]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
    return buf;
}

const char *pld__fmt_region(char *buf, size_t n, const pld__region *r)
{
    char a[96], b[96];
    snprintf(buf, n, "%s+%s", pld__fmt_dims(a, sizeof a, r->off, r->nd),
             pld__fmt_dims(b, sizeof b, r->ext, r->nd));
    return buf;
}

int64_t pld__region_numel(const pld__region *r)
{
    int64_t n = 1;
    for (int i = 0; i < r->nd; i++)
        n *= r->ext[i];
    return n;
}

size_t pld__region_bytes(const pld__region *r)
{
    return (size_t)pld__region_numel(r) * r->esz;
}

const char *pld__owner(char *buf, size_t n, const char *wname)
{
    if (!wname)
        return "tensor";
    snprintf(buf, n, "window '%s'", wname);
    return buf;
}

void pld__region_make(pld_ctx *c, const char *api, const char *what, const char *wname, int nd,
                      const int64_t *full, const int64_t *off, const int64_t *ext, size_t esz,
                      pld__region *out)
{
    char a[96], b[192], owner[PLD__NAME_MAX + 16];
    int n = pld__idx_count(off);
    if (n >= 0 && n != nd)
        pld__kraise(c, PLD_ERR_ARG, api, "%s offsets have %d entries but %s has %d dims", what, n,
                    pld__owner(owner, sizeof owner, wname), nd);
    n = pld__idx_count(ext);
    if (n >= 0 && n != nd)
        pld__kraise(c, PLD_ERR_ARG, api, "%s shape has %d entries but %s has %d dims", what, n,
                    pld__owner(owner, sizeof owner, wname), nd);
    out->nd = nd;
    out->esz = esz;
    for (int i = 0; i < nd; i++) {
        out->full[i] = full[i];
        out->off[i] = off ? off[i] : 0;
        out->ext[i] = ext ? ext[i] : full[i];
    }
    for (int i = 0; i < nd; i++) {
        if (out->ext[i] <= 0)
            pld__kraise(c, PLD_ERR_ARG, api, "%s region %s has a non-positive extent", what,
                        pld__fmt_region(b, sizeof b, out));
        if (out->off[i] < 0 || out->off[i] > full[i] - out->ext[i])
            pld__kraise(c, PLD_ERR_BOUNDS, api, "%s region %s is outside %s %s", what,
                        pld__fmt_region(b, sizeof b, out), pld__owner(owner, sizeof owner, wname),
                        pld__fmt_dims(a, sizeof a, full, nd));
    }
}

void pld__region_rect(int64_t nrows, int64_t ncols, int64_t row, int64_t col, int64_t rows,
                      int64_t cols, size_t esz, pld__region *out)
{
    /* field by field: a memset of the whole struct compiles to `rep stos`,
     * whose start-up cost was a tenth of a 16-byte allgather */
    for (int i = 2; i < PLD_MAX_DIMS; i++)
        out->full[i] = out->off[i] = out->ext[i] = 0;
    out->nd = 2;
    out->full[0] = nrows, out->full[1] = ncols;
    out->off[0] = row, out->off[1] = col;
    out->ext[0] = rows, out->ext[1] = cols;
    out->esz = esz;
}

void pld__region_pad(pld__region *r, int nd)
{
    int shift = nd - r->nd;
    if (shift <= 0)
        return;
    for (int i = r->nd - 1; i >= 0; i--) {
        r->full[i + shift] = r->full[i];
        r->off[i + shift] = r->off[i];
        r->ext[i + shift] = r->ext[i];
    }
    for (int i = 0; i < shift; i++) {
        r->full[i] = 1;
        r->off[i] = 0;
        r->ext[i] = 1;
    }
    r->nd = nd;
}

void pld__runs_init(pld__runs *it, const pld__region *a, const pld__region *b)
{
    int nd = a->nd;
    size_t esz = a->esz;
    size_t sa = esz, sb = esz;
    it->nd = nd;
    it->a_off = it->b_off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        it->a_step[d] = sa;
        it->b_step[d] = sb;
        it->a_off += (size_t)a->off[d] * sa;
        it->b_off += (size_t)b->off[d] * sb;
        it->ext[d] = a->ext[d];
        it->idx[d] = 0;
        sa *= (size_t)a->full[d];
        sb *= (size_t)b->full[d];
    }
    /* Merge inner dims while both regions span them completely. */
    int k = nd - 1;
    while (k > 0 && a->ext[k] == a->full[k] && b->ext[k] == b->full[k])
        k--;
    it->k = k;
    it->run_bytes = esz;
    for (int d = k; d < nd; d++)
        it->run_bytes *= (size_t)a->ext[d];
    it->remaining = 1;
    for (int d = 0; d < k; d++)
        it->remaining *= a->ext[d];
}

int pld__runs_next(pld__runs *it, size_t *a_off, size_t *b_off, size_t *bytes)
{
    if (it->remaining <= 0)
        return 0;
    *a_off = it->a_off;
    *b_off = it->b_off;
    *bytes = it->run_bytes;
    if (--it->remaining == 0)
        return 1;
    /* odometer over dims 0..k-1 */
    for (int d = it->k - 1; d >= 0; d--) {
        if (++it->idx[d] < it->ext[d]) {
            it->a_off += it->a_step[d];
            it->b_off += it->b_step[d];
            break;
        }
        it->a_off -= it->a_step[d] * (size_t)(it->ext[d] - 1);
        it->b_off -= it->b_step[d] * (size_t)(it->ext[d] - 1);
        it->idx[d] = 0;
    }
    return 1;
}

int pld__regions_overlap(uintptr_t base_a, const pld__region *a, uintptr_t base_b,
                         const pld__region *b)
{
    pld__runs ia, ib;
    size_t ao, bo, an = 0, bn = 0, dummy;
    pld__runs_init(&ia, a, a);
    pld__runs_init(&ib, b, b);
    int has_a = pld__runs_next(&ia, &ao, &dummy, &an);
    int has_b = pld__runs_next(&ib, &bo, &dummy, &bn);
    /* Both run lists are sorted by address: sweep them together. */
    while (has_a && has_b) {
        uintptr_t alo = base_a + ao, ahi = alo + an;
        uintptr_t blo = base_b + bo, bhi = blo + bn;
        if (alo < bhi && blo < ahi)
            return 1;
        if (ahi <= blo)
            has_a = pld__runs_next(&ia, &ao, &dummy, &an);
        else
            has_b = pld__runs_next(&ib, &bo, &dummy, &bn);
    }
    return 0;
}
