/* SPDX-License-Identifier: Apache-2.0 */
/* The race checker (PLD_CHECK=race, thread transport): happens-before
 * tracking with vector clocks over notify -> wait edges.
 *
 * Every rank has a vector clock. A notify first joins the notifier's clock
 * into the signal cell's clock (before the cell changes, so a waiter can
 * never see the new value without the clock), then ticks the notifier. A
 * wait that returns joins the cell's clock into the waiter's. Every access
 * to a window slice through pld (put, get, remote_load/store, and load/store
 * on a tensor that lies in a window) is recorded with the accessor's clock;
 * an access that overlaps an earlier one by another rank, at least one of
 * them a write and not both atomic adds (concurrent atomic adds are the
 * point of them), without that earlier access happening before it, fails with
 * PLD_ERR_RACE naming both. Joins only add order, so a correct program
 * never gets a report; a cell's clock joins every notify it received, so a
 * race hidden behind an unrelated later notify can go unreported.
 *
 * One lock serialises the checker: this is a debugging mode. Accesses a
 * program makes through plain C pointers are invisible to it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/team.h"
#include "prim/prim.h"

#define RACE_HISTORY 256 /* accesses remembered per window slice */

/* access kinds */
enum { RACE_READ = 0, RACE_WRITE = 1, RACE_ATOMIC = 2 };

typedef struct race_access {
    int rank, write; /* RACE_* */
    uint32_t clock;  /* the accessor's own component at the access */
    size_t base;     /* byte offset of the region's array in the slice */
    pld__region region;
    const char *api;
    const struct pld_team *team; /* the accessor's view, for its name; NULL: the world */
} race_access;

typedef struct race_slice {
    race_access rec[RACE_HISTORY];
    int n, head;
} race_slice;

typedef struct race_cell {
    int buf, rank;
    size_t off;
    uint32_t *vc;
} race_cell;

struct pld__race {
    pthread_mutex_t lock;
    int p;
    uint32_t *vc;     /* p x p: clock of rank r at vc[r*p ...] */
    race_cell *cells; /* signal cells that carried a notify */
    int ncells, capcells;
    race_slice **slices; /* [buf id * p + rank], lazily */
};

pld__race *pld__race_new(int p)
{
    pld__race *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->p = p;
    r->vc = calloc((size_t)p * (size_t)p, sizeof *r->vc);
    r->slices = calloc((size_t)PLD__MAX_WINDOWS * (size_t)p, sizeof *r->slices);
    if (!r->vc || !r->slices) {
        free(r->vc);
        free(r->slices);
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    pld__race_reset(r);
    return r;
}

void pld__race_reset(pld__race *r)
{
    if (!r)
        return;
    /* own components start at 1: an access at epoch e is ordered before
     * another rank only once that rank has acquired a clock carrying e */
    memset(r->vc, 0, sizeof *r->vc * (size_t)r->p * (size_t)r->p);
    for (int q = 0; q < r->p; q++)
        r->vc[q * r->p + q] = 1;
    for (int i = 0; i < r->ncells; i++)
        free(r->cells[i].vc);
    r->ncells = 0;
    for (int i = 0; i < PLD__MAX_WINDOWS * r->p; i++) {
        free(r->slices[i]);
        r->slices[i] = NULL;
    }
}

void pld__race_free(pld__race *r)
{
    if (!r)
        return;
    pld__race_reset(r);
    free(r->cells);
    free(r->slices);
    free(r->vc);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static uint32_t *cell_vc(pld__race *r, int buf, int rank, size_t off)
{
    for (int i = 0; i < r->ncells; i++)
        if (r->cells[i].buf == buf && r->cells[i].rank == rank && r->cells[i].off == off)
            return r->cells[i].vc;
    if (r->ncells == r->capcells) {
        int cap = r->capcells ? r->capcells * 2 : 64;
        race_cell *grown = realloc(r->cells, sizeof *grown * (size_t)cap);
        if (!grown)
            return NULL;
        r->cells = grown;
        r->capcells = cap;
    }
    uint32_t *vc = calloc((size_t)r->p, sizeof *vc);
    if (!vc)
        return NULL;
    r->cells[r->ncells++] = (race_cell){.buf = buf, .rank = rank, .off = off, .vc = vc};
    return vc;
}

void pld__race_release(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off)
{
    pld__race *r = c->w->race;
    pthread_mutex_lock(&r->lock);
    uint32_t *cell = cell_vc(r, buf->id, peer, off), *mine = &r->vc[c->wrank * r->p];
    if (cell)
        for (int q = 0; q < r->p; q++)
            cell[q] = cell[q] > mine[q] ? cell[q] : mine[q];
    mine[c->wrank]++;
    pthread_mutex_unlock(&r->lock);
}

void pld__race_acquire(pld_ctx *c, pld_window_buffer *buf, size_t off)
{
    pld__race *r = c->w->race;
    pthread_mutex_lock(&r->lock);
    uint32_t *cell = cell_vc(r, buf->id, c->wrank, off), *mine = &r->vc[c->wrank * r->p];
    if (cell)
        for (int q = 0; q < r->p; q++)
            mine[q] = mine[q] > cell[q] ? mine[q] : cell[q];
    pthread_mutex_unlock(&r->lock);
}

static const char *kind_name(int kind)
{
    return kind == RACE_READ ? "read" : kind == RACE_WRITE ? "write" : "atomic add";
}

void pld__race_access(pld_ctx *c, const char *api, pld_window_buffer *buf, int owner, size_t base,
                      const pld__region *region, int write)
{
    pld__race *r = c->w->race;
    char a[160], b[160];
    pthread_mutex_lock(&r->lock);
    race_slice **sp = &r->slices[buf->id * r->p + owner];
    if (!*sp && !(*sp = calloc(1, sizeof **sp))) {
        pthread_mutex_unlock(&r->lock);
        return;
    }
    race_slice *s = *sp;
    const uint32_t *mine = &r->vc[c->wrank * r->p];
    for (int i = 0; i < s->n; i++) {
        const race_access *x = &s->rec[i];
        if (x->rank == c->wrank || !(x->write || write) ||
            (x->write == RACE_ATOMIC && write == RACE_ATOMIC) || x->clock <= mine[x->rank])
            continue; /* same rank, two reads, two atomic adds, or ordered */
        if (!pld__regions_overlap(x->base, &x->region, base, region))
            continue;
        race_access prev = *x;
        pthread_mutex_unlock(&r->lock);
        char who[96];
        pld__team_who(prev.team, prev.rank, who, sizeof who);
        pld__kraise(c, PLD_ERR_RACE, api,
                    "%s of '%s'@rank%d region %s races with %s (device %d)'s %s %s of region "
                    "%s: no notify/wait orders them",
                    kind_name(write), buf->name, owner, pld__fmt_region(a, sizeof a, region), who,
                    c->w->device_ids[prev.rank], prev.api, kind_name(prev.write),
                    pld__fmt_region(b, sizeof b, &prev.region));
    }
    race_access *slot = &s->rec[s->head];
    *slot = (race_access){.rank = c->wrank,
                          .write = write,
                          .clock = mine[c->wrank],
                          .base = base,
                          .region = *region,
                          .api = api,
                          .team = c->team};
    s->head = (s->head + 1) % RACE_HISTORY;
    if (s->n < RACE_HISTORY)
        s->n++;
    pthread_mutex_unlock(&r->lock);
}

void pld__race_tensor(pld_ctx *c, const char *api, const void *data, const pld__region *region,
                      int write)
{
    pld_world *w = c->w;
    uintptr_t p = (uintptr_t)data;
    for (int i = 0; i < w->nwindows; i++) {
        pld_window_buffer *buf = w->windows[i];
        if (!buf)
            continue;
        uintptr_t lo = (uintptr_t)w->tp->window_peer_ptr(w, buf, c->wrank);
        if (p >= lo && p < lo + buf->bytes) {
            pld__race_access(c, api, buf, c->wrank, (size_t)(p - lo), region, write);
            return;
        }
    }
}
