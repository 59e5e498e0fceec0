/* SPDX-License-Identifier: Apache-2.0 */
/* The per-rank recorder of the protocol picture (--ir-svg): one list of
 * communication events per rank, in program order, written to a part file
 * when the rank's kernel ends (ir_rec.h). A rank lives in its own thread or
 * process, so nothing here is shared: the host reads the parts after the
 * launch, whichever transport ran it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/team.h"
#include "trace/ir_rec.h"

/* Enough for every tutorial step at P = 16; a longer launch is drawn up to
 * here, with a note of how many events were left out. */
#define REC_MAX_EVENTS 20000
#define PART_MAGIC 0x53444c50u /* "PLDS" */

struct pld__rec {
    pld__rec_ev *ev;
    int64_t n, cap, dropped;
};

typedef struct part_head {
    uint32_t magic, evsize;
    int64_t n, dropped;
} part_head;

struct pld__rec *pld__rec_open(void)
{
    return calloc(1, sizeof(struct pld__rec));
}

static pld__rec_ev *next_ev(pld_ctx *c, pld__rec_kind kind)
{
    struct pld__rec *r = c->rec;
    if (r->n >= REC_MAX_EVENTS) {
        r->dropped++;
        return NULL;
    }
    if (r->n == r->cap) {
        int64_t cap = r->cap ? r->cap * 2 : 256;
        pld__rec_ev *grown = realloc(r->ev, sizeof *grown * (size_t)cap);
        if (!grown) { /* a picture with a gap beats a failed kernel */
            r->dropped++;
            return NULL;
        }
        r->ev = grown;
        r->cap = cap;
    }
    pld__rec_ev *e = &r->ev[r->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->peer = -1;
    e->win = -1;
    e->depth = c->depth;
    return e;
}

static void set_name(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s);
}

static void set_cell(pld__rec_ev *e, const int64_t *coords, int ndim)
{
    pld__fmt_dims(e->cell, sizeof e->cell, coords, ndim);
}

void pld__rec_xfer(pld_ctx *c, pld__rec_kind kind, int peer, const pld_window_buffer *buf,
                   int64_t bytes, int atomic)
{
    pld__rec_ev *e = next_ev(c, kind);
    if (!e)
        return;
    e->peer = pld__wpeer(c, peer); /* lanes are world ranks */
    e->win = buf->id;
    e->bytes = bytes;
    e->op = atomic;
    set_name(e->name, sizeof e->name, buf->name);
}

void pld__rec_notify(pld_ctx *c, int peer, const pld_window_buffer *sig, size_t off,
                     const int64_t *coords, int ndim, int32_t value, int op)
{
    pld__rec_ev *e = next_ev(c, PLD__REC_NOTIFY);
    if (!e)
        return;
    e->peer = pld__wpeer(c, peer);
    e->win = sig->id;
    e->off = (int64_t)off;
    e->value = value;
    e->op = op;
    set_name(e->name, sizeof e->name, sig->name);
    set_cell(e, coords, ndim);
}

void pld__rec_wait(pld_ctx *c, const pld_window_buffer *sig, size_t off, const int64_t *coords,
                   int ndim, int32_t expected, int cmp)
{
    pld__rec_ev *e = next_ev(c, PLD__REC_WAIT);
    if (!e)
        return;
    e->peer = c->wrank;
    e->win = sig->id;
    e->off = (int64_t)off;
    e->value = expected;
    e->op = cmp;
    set_name(e->name, sizeof e->name, sig->name);
    set_cell(e, coords, ndim);
}

void pld__rec_call(pld_ctx *c, const char *api)
{
    pld__rec_ev *e = next_ev(c, PLD__REC_CALL);
    if (!e)
        return;
    if (c->team) /* a group's call: its boxes say which team */
        snprintf(e->name, sizeof e->name, "%s [%s]", api, c->team->name);
    else
        set_name(e->name, sizeof e->name, api);
}

void pld__rec_return(pld_ctx *c)
{
    pld__rec_ev *e = next_ev(c, PLD__REC_RET);
    if (e)
        e->depth = c->depth - 1; /* the depth of its call (the scope is still open) */
}

void pld__rec_part_path(const pld_world *w, int rank, char *out, size_t n)
{
    snprintf(out, n, "%s.part.%d", w->ir_svg_path, rank);
}

void pld__rec_close(pld_ctx *c)
{
    struct pld__rec *r = c->rec;
    if (!r)
        return;
    c->rec = NULL;
    char path[4096];
    pld__rec_part_path(c->w, c->wrank, path, sizeof path);
    part_head h = {PART_MAGIC, (uint32_t)sizeof(pld__rec_ev), r->n, r->dropped};
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(&h, sizeof h, 1, f) == 1 &&
             (r->n == 0 || fwrite(r->ev, sizeof *r->ev, (size_t)r->n, f) == (size_t)r->n);
    if (f && fclose(f) != 0)
        ok = 0;
    /* the kernel has ended: the host draws this lane as "no record" and
     * the log says why, rather than failing a launch that worked */
    if (!ok)
        PLD__LOG(PLD__LOG_WARN, c->wrank, "--ir-svg: part file '%s' cannot be written: %s", path,
                 strerror(errno));
    free(r->ev);
    free(r);
}

int pld__rec_read_part(const char *path, pld__rec_ev **ev, int64_t *n, int64_t *dropped)
{
    *ev = NULL;
    *n = *dropped = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    part_head h;
    int rc = -1;
    if (fread(&h, sizeof h, 1, f) == 1 && h.magic == PART_MAGIC &&
        h.evsize == sizeof(pld__rec_ev) && h.n >= 0 && h.n <= REC_MAX_EVENTS) {
        pld__rec_ev *v = h.n ? malloc(sizeof *v * (size_t)h.n) : NULL;
        if (h.n == 0 || (v && fread(v, sizeof *v, (size_t)h.n, f) == (size_t)h.n)) {
            *ev = v;
            *n = h.n;
            *dropped = h.dropped;
            rc = 0;
        } else {
            free(v);
        }
    }
    fclose(f);
    return rc;
}
