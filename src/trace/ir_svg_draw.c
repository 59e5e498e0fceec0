/* SPDX-License-Identifier: Apache-2.0 */
/* Draws one launch of the protocol picture (--ir-svg) from every rank's
 * events: one lane per rank, one row per event, in logical order.
 *
 * Why logical order and not time: a picture that changes with the
 * scheduler cannot be checked or pasted into a page. So a row is a
 * Lamport clock -- an event sits one row below the one before it on its
 * lane, and a wait one row below every notify it needed -- and the same
 * program draws the same picture on every run and transport.
 *
 * Which notifies a wait needed is not recorded (that would take a shared
 * clock on the hot path); it is replayed per signal cell: the waiting
 * rank's own notifies to the cell apply where its program made them, and
 * before each wait the peers' notifies to the cell apply, earliest round
 * first (the k-th notify a sender made to that cell is its round k), until
 * the wait's condition holds. Those notifies are the wait's arrows. For
 * credit protocols -- every builtin, every barrier of the tutorial -- this
 * is what happened; a notify no wait needed is drawn dashed to its lane.
 *
 * A barrier round is a band: the notify/wait runs of the ranks (no data
 * movement in between, but for a put that the next notify, to the same
 * peer, announces: the payload of a one-round call) linked by notify ->
 * wait arrows, when at least two ranks take part and each of them both
 * notifies a peer and waits. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/ir_rec.h"

#define LANE_W 240 /* px between lanes; a lane's labels sit right of it */
#define LEFT 70    /* the round labels sit in this margin */
#define ROW_H 20
#define HEAD_H 92 /* title, legend, lane labels */

/* ---- text ----------------------------------------------------------------- */

void pld__svg_escape(pld__svg_text *t, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            pld__text_add(t, "&amp;", 5);
            break;
        case '<':
            pld__text_add(t, "&lt;", 4);
            break;
        case '>':
            pld__text_add(t, "&gt;", 4);
            break;
        case '"':
            pld__text_add(t, "&quot;", 6);
            break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                pld__text_add(t, s, 1);
        }
    }
}

/* ---- the events of all ranks, flat ----------------------------------------- */

typedef struct graph {
    int P;
    int64_t E;
    int64_t *base; /* rank r's events are [base[r], base[r+1]) */
    const pld__rec_ev **ev;
    int *rank;          /* of each event */
    int64_t *match;     /* notify: the wait it satisfied, -1 */
    int64_t *first_dep; /* wait: first notify matched to it, chained by next_dep */
    int64_t *next_dep;
    int64_t *row;
    int64_t *phase; /* notify/wait run of its lane, -1 */
} graph;

static int sat(int64_t v, const pld__rec_ev *w)
{
    return w->op == PLD_WAIT_EQ ? v == w->value : v >= w->value;
}

static int64_t apply(int64_t v, const pld__rec_ev *n)
{
    return n->op == PLD_NOTIFY_SET ? n->value : v + n->value;
}

static void link_dep(graph *g, int64_t n, int64_t w)
{
    g->match[n] = w;
    g->next_dep[n] = g->first_dep[w];
    g->first_dep[w] = n;
}

/* Replays one cell (win, off) of rank r: see the top of the file. */
static void match_cell(graph *g, int r, int32_t win, int64_t off, const int64_t *nt, int64_t lo,
                       int64_t hi, int64_t *cur, int64_t *end, int64_t *start)
{
    /* the senders' runs inside [lo, hi): start/end per run, cur = next */
    int nruns = 0;
    for (int64_t i = lo; i < hi;) {
        int s = g->rank[nt[i]];
        int64_t j = i;
        while (j < hi && g->rank[nt[j]] == s)
            j++;
        start[nruns] = cur[nruns] = i;
        end[nruns] = j;
        nruns++;
        i = j;
    }
    int64_t v = 0;
    for (int64_t i = g->base[r]; i < g->base[r + 1]; i++) {
        const pld__rec_ev *e = g->ev[i];
        if (e->win != win || e->off != off)
            continue;
        if (e->kind == PLD__REC_NOTIFY && e->peer == r) {
            v = apply(v, e);
        } else if (e->kind == PLD__REC_WAIT) {
            while (!sat(v, e)) {
                int best = -1;
                for (int k = 0; k < nruns; k++)
                    if (cur[k] < end[k] &&
                        (best < 0 || cur[k] - start[k] < cur[best] - start[best]))
                        best = k;
                if (best < 0)
                    break; /* satisfied by something not drawn (another core) */
                int64_t n = nt[cur[best]++];
                v = apply(v, g->ev[n]);
                link_dep(g, n, i);
            }
        }
    }
}

typedef struct cell_key {
    int32_t rank, win;
    int64_t off;
} cell_key;

static int key_cmp(const cell_key *a, const cell_key *b)
{
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->win != b->win)
        return a->win < b->win ? -1 : 1;
    return a->off < b->off ? -1 : a->off > b->off;
}

static int by_key(const void *a, const void *b)
{
    return key_cmp(a, b);
}

/* The target cell of notify i. */
static cell_key target_of(const graph *g, int64_t i)
{
    return (cell_key){g->ev[i]->peer, g->ev[i]->win, g->ev[i]->off};
}

/* A notify and its target cell: notifies sort by cell, then by global
 * index -- sender, then program order. */
typedef struct keyed {
    cell_key k;
    int64_t i;
} keyed;

static int by_cell(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = key_cmp(&x->k, &y->k);
    return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

static void match_all(graph *g)
{
    size_t E1 = (size_t)g->E + 1;
    int64_t *nt = malloc(sizeof *nt * E1);
    int64_t *cur = malloc(sizeof *cur * (size_t)(g->P + 1) * 3);
    cell_key *keys = malloc(sizeof *keys * E1);
    keyed *kn = malloc(sizeof *kn * E1);
    if (!nt || !cur || !keys || !kn) {
        free(nt), free(cur), free(keys), free(kn);
        return;
    }
    int64_t m = 0, nk = 0;
    for (int64_t i = 0; i < g->E; i++) {
        const pld__rec_ev *e = g->ev[i];
        if (e->kind == PLD__REC_NOTIFY && e->peer != g->rank[i] && e->peer >= 0 && e->peer < g->P)
            kn[m++] = (keyed){target_of(g, i), i};
        else if (e->kind == PLD__REC_WAIT)
            keys[nk++] = (cell_key){g->rank[i], e->win, e->off};
    }
    qsort(kn, (size_t)m, sizeof *kn, by_cell);
    for (int64_t j = 0; j < m; j++)
        nt[j] = kn[j].i;
    free(kn);
    qsort(keys, (size_t)nk, sizeof *keys, by_key);
    /* every cell some wait looks at, once */
    for (int64_t k = 0; k < nk; k++) {
        if (k > 0 && key_cmp(&keys[k], &keys[k - 1]) == 0)
            continue;
        int64_t lo = 0, hi = m; /* the first notify to a cell >= keys[k] */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            cell_key t = target_of(g, nt[mid]);
            if (key_cmp(&t, &keys[k]) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (hi = lo; hi < m; hi++) {
            cell_key t = target_of(g, nt[hi]);
            if (key_cmp(&t, &keys[k]) != 0)
                break;
        }
        match_cell(g, keys[k].rank, keys[k].win, keys[k].off, nt, lo, hi, cur, cur + g->P + 1,
                   cur + 2 * (g->P + 1));
    }
    free(nt), free(cur), free(keys);
}

/* Rows: each lane in program order, a wait below every notify it needed.
 * When every lane is stuck (a replayed match that did not happen in this
 * order), the first stuck wait is placed anyway and its missing arrows
 * are dropped. */
static int64_t place_rows(graph *g)
{
    int64_t *cur = calloc((size_t)g->P, sizeof *cur);
    int64_t *last = malloc(sizeof *last * (size_t)g->P);
    char *placed = calloc((size_t)g->E + 1, 1);
    int64_t done = 0, rows = 0;
    if (!cur || !last || !placed) {
        for (int64_t i = 0; i < g->E; i++)
            g->row[i] = i - g->base[g->rank[i]];
        free(cur);
        free(last);
        free(placed);
        return g->E;
    }
    for (int r = 0; r < g->P; r++)
        last[r] = -1;
    while (done < g->E) {
        int progress = 0;
        for (int r = 0; r < g->P; r++) {
            while (g->base[r] + cur[r] < g->base[r + 1]) {
                int64_t i = g->base[r] + cur[r], t = last[r] + 1;
                int ok = 1;
                for (int64_t d = g->first_dep[i]; d >= 0 && ok; d = g->next_dep[d]) {
                    ok = placed[d];
                    if (ok && g->row[d] + 1 > t)
                        t = g->row[d] + 1;
                }
                if (!ok)
                    break;
                g->row[i] = last[r] = t;
                placed[i] = 1;
                cur[r]++;
                done++;
                progress = 1;
                if (t + 1 > rows)
                    rows = t + 1;
            }
        }
        if (progress)
            continue;
        for (int r = 0; r < g->P; r++) {
            if (g->base[r] + cur[r] >= g->base[r + 1])
                continue;
            int64_t i = g->base[r] + cur[r];
            for (int64_t d = g->first_dep[i], nx; d >= 0; d = nx) {
                nx = g->next_dep[d];
                if (!placed[d])
                    g->match[d] = -1;
            }
            /* keep only the placed ones in the chain */
            int64_t *pp = &g->first_dep[i];
            while (*pp >= 0) {
                if (!placed[*pp])
                    *pp = g->next_dep[*pp];
                else
                    pp = &g->next_dep[*pp];
            }
            break;
        }
    }
    free(cur);
    free(last);
    free(placed);
    return rows;
}

/* ---- barrier rounds --------------------------------------------------------- */

static int64_t find(int64_t *up, int64_t x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

typedef struct band {
    int64_t top, bottom;
    int lo, hi; /* lanes */
} band;

static int by_top(const void *a, const void *b)
{
    const band *x = a, *y = b;
    if (x->top != y->top)
        return x->top < y->top ? -1 : 1;
    return x->lo - y->lo;
}

/* The bands, sorted by their first row; returns how many. */
static int64_t find_bands(graph *g, band **out)
{
    *out = NULL;
    /* a run of notifies and waits with no data movement in it; a notify
     * to a peer after a wait starts the next run (the next round) */
    int64_t nph = 0;
    for (int r = 0; r < g->P; r++) {
        int open = 0, waited = 0;
        for (int64_t i = g->base[r]; i < g->base[r + 1]; i++) {
            const pld__rec_ev *e = g->ev[i];
            int k = e->kind;
            if (k == PLD__REC_NOTIFY || k == PLD__REC_WAIT) {
                if (!open || (k == PLD__REC_NOTIFY && e->peer != r && waited)) {
                    nph++;
                    waited = 0;
                }
                open = 1;
                waited |= k == PLD__REC_WAIT;
                g->phase[i] = nph - 1;
            } else {
                /* a put its notify announces stays in the round */
                const pld__rec_ev *nx = i + 1 < g->base[r + 1] ? g->ev[i + 1] : NULL;
                if (!(k == PLD__REC_PUT && nx && nx->kind == PLD__REC_NOTIFY &&
                      nx->peer == e->peer && e->peer != r))
                    open = 0;
                g->phase[i] = -1;
            }
        }
    }
    if (nph == 0)
        return 0;
    int64_t *up = malloc(sizeof *up * (size_t)nph);
    /* per phase: 1 a cross-rank notify that a wait needed, 2 a wait that
     * needed one */
    unsigned char *role = calloc((size_t)nph, 1);
    band *b = calloc((size_t)nph, sizeof *b);
    int64_t *comp_band = malloc(sizeof *comp_band * (size_t)nph);
    if (!up || !role || !b || !comp_band) {
        free(up), free(role), free(b), free(comp_band);
        return 0;
    }
    for (int64_t p = 0; p < nph; p++)
        up[p] = p;
    for (int64_t i = 0; i < g->E; i++) {
        if (g->ev[i]->kind != PLD__REC_NOTIFY || g->match[i] < 0)
            continue;
        int64_t a = g->phase[i], w = g->phase[g->match[i]];
        role[a] |= 1;
        role[w] |= 2;
        up[find(up, a)] = find(up, w);
    }
    /* a component is a round when every phase in it both notified and
     * waited, and it spans two lanes or more */
    for (int64_t p = 0; p < nph; p++)
        comp_band[p] = 0; /* 0 unknown, 1 a round, -1 not */
    for (int64_t p = 0; p < nph; p++)
        if (role[p] != 3)
            comp_band[find(up, p)] = -1;
    int64_t nb = 0;
    int64_t *slot = malloc(sizeof *slot * (size_t)nph);
    if (!slot) {
        free(up), free(role), free(b), free(comp_band);
        return 0;
    }
    for (int64_t p = 0; p < nph; p++)
        slot[p] = -1;
    for (int64_t i = 0; i < g->E; i++) {
        if (g->phase[i] < 0 || role[g->phase[i]] != 3)
            continue;
        int64_t c = find(up, g->phase[i]);
        if (comp_band[c] < 0)
            continue;
        if (slot[c] < 0) {
            slot[c] = nb++;
            b[slot[c]] = (band){g->row[i], g->row[i], g->rank[i], g->rank[i]};
        }
        band *x = &b[slot[c]];
        if (g->row[i] < x->top)
            x->top = g->row[i];
        if (g->row[i] > x->bottom)
            x->bottom = g->row[i];
        if (g->rank[i] < x->lo)
            x->lo = g->rank[i];
        if (g->rank[i] > x->hi)
            x->hi = g->rank[i];
    }
    /* one lane is a wait on one's own notifies, not a round */
    int64_t k = 0;
    for (int64_t j = 0; j < nb; j++)
        if (b[j].hi > b[j].lo)
            b[k++] = b[j];
    qsort(b, (size_t)k, sizeof *b, by_top);
    free(up), free(role), free(comp_band), free(slot);
    *out = b;
    return k;
}

/* ---- drawing ------------------------------------------------------------------ */

/* A lane sits at the left of its column; its labels fill the column. */
static int lane_x(int r)
{
    return LEFT + 24 + r * LANE_W;
}

static int row_y(int y0, int64_t row)
{
    return y0 + HEAD_H + ROW_H / 2 + (int)row * ROW_H;
}

static const char *fmt_bytes(int64_t b, char *buf, size_t n)
{
    if (b >= (1 << 20) && b % (1 << 20) == 0)
        snprintf(buf, n, "%lld MiB", (long long)(b >> 20));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, n, "%lld KiB", (long long)(b >> 10));
    else
        snprintf(buf, n, "%lld B", (long long)b);
    return buf;
}

static void label(pld__svg_text *o, int x, int y, const char *cls, const char *text)
{
    pld__svg_printf(o, "<text class=\"%s\" x=\"%d\" y=\"%d\">", cls, x, y + 4);
    pld__svg_escape(o, text);
    pld__svg_printf(o, "</text>\n");
}

static void draw_event(pld__svg_text *o, const graph *g, int y0, int64_t i)
{
    const pld__rec_ev *e = g->ev[i];
    int r = g->rank[i], x = lane_x(r), y = row_y(y0, g->row[i]);
    char text[320], b[32], peer[16];
    const char *cls = "op";
    if (e->peer == r)
        snprintf(peer, sizeof peer, "self");
    else
        snprintf(peer, sizeof peer, "r%d", e->peer);
    switch (e->kind) {
    case PLD__REC_PUT:
        snprintf(text, sizeof text, "put %s %s%s -> %s", e->name, fmt_bytes(e->bytes, b, sizeof b),
                 e->op == PLD_ATOMIC_ADD ? " add" : "", peer);
        break;
    case PLD__REC_GET:
        snprintf(text, sizeof text, "get %s %s <- %s", e->name, fmt_bytes(e->bytes, b, sizeof b),
                 peer);
        break;
    case PLD__REC_NOTIFY:
        snprintf(text, sizeof text, "notify %s %s%s %s %d", peer, e->name, e->cell,
                 e->op == PLD_NOTIFY_SET ? "=" : "+=", (int)e->value);
        break;
    case PLD__REC_WAIT:
        snprintf(text, sizeof text, "wait %s%s %s %d", e->name, e->cell,
                 e->op == PLD_WAIT_EQ ? "==" : ">=", (int)e->value);
        break;
    case PLD__REC_CALL:
        snprintf(text, sizeof text, "%s", e->name);
        cls = "callname";
        break;
    default:
        snprintf(text, sizeof text, "return");
        cls = "ret";
    }
    if (e->kind != PLD__REC_CALL && e->kind != PLD__REC_RET)
        pld__svg_printf(o, "<circle class=\"mark\" cx=\"%d\" cy=\"%d\" r=\"2.5\"/>\n", x, y);
    label(o, x + 6, y, cls, text);
}

static void arrow(pld__svg_text *o, const char *cls, int x1, int y1, int x2, int y2)
{
    pld__svg_printf(o,
                    "<line class=\"%s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                    "marker-end=\"url(#a-%s)\"/>\n",
                    cls, x1, y1, x2, y2, strncmp(cls, "notify", 6) ? cls : "notify");
}

/* Where an arrow from lane x `from` to lane x `to` ends: just short of the
 * lane from the left; from the right, at the lane's dot, so that the head
 * (7 px back from its tip) stops before the label that starts 6 px right
 * of the lane and whose white halo would hide it. */
static int tip_x(int from, int to)
{
    return to > from ? to - 3 : to - 1;
}

static void draw_arrows(pld__svg_text *o, const graph *g, int y0, int64_t i)
{
    const pld__rec_ev *e = g->ev[i];
    int r = g->rank[i];
    if (e->peer == r || e->peer < 0 || e->peer >= g->P)
        return; /* a rank's own window: its label says "self" */
    int y = row_y(y0, g->row[i]), dy = ROW_H * 6 / 10;
    int xs = lane_x(r), xp = lane_x(e->peer);
    if (e->kind == PLD__REC_PUT)
        arrow(o, "put", xs, y, tip_x(xs, xp), y + dy);
    else if (e->kind == PLD__REC_GET)
        arrow(o, "get", xp, y - dy, tip_x(xp, xs), y);
    else if (e->kind == PLD__REC_NOTIFY && g->match[i] >= 0)
        arrow(o, "notify", xs, y, tip_x(xs, xp), row_y(y0, g->row[g->match[i]]));
    else if (e->kind == PLD__REC_NOTIFY)
        arrow(o, "notify unmatched", xs, y, tip_x(xs, xp), y + dy);
}

/* Builtin calls: a box on the lane from the call's row to its return's. */
static void draw_boxes(pld__svg_text *o, const graph *g, int y0, int64_t rows)
{
    int64_t stack[16];
    for (int r = 0; r < g->P; r++) {
        int top = 0;
        for (int64_t i = g->base[r]; i <= g->base[r + 1]; i++) {
            int end = i == g->base[r + 1];
            int k = end ? -1 : g->ev[i]->kind;
            if (k == PLD__REC_CALL) {
                if (top < 16)
                    stack[top] = i;
                top++;
                continue;
            }
            while ((k == PLD__REC_RET || end) && top > 0) {
                top--;
                if (top < 16) {
                    int64_t c = stack[top];
                    int d = top < 4 ? top : 4;
                    int64_t last = end ? rows - 1 : g->row[i];
                    int x = lane_x(r) - 12 + 4 * d, w = LANE_W - 20 - 8 * d;
                    int ya = row_y(y0, g->row[c]) - ROW_H / 2 + 2 + d,
                        yb = row_y(y0, last) + ROW_H / 2 - 2 - d;
                    pld__svg_printf(o,
                                    "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" "
                                    "height=\"%d\" rx=\"4\"/>\n",
                                    end ? "call open" : "call", x, ya, w, yb - ya);
                }
                if (!end)
                    break;
            }
        }
    }
}

int pld__svg_draw_launch(pld__svg_text *o, int y0, const char *title, int nranks,
                         const int *devices, pld__rec_ev *const *ev, const int64_t *n,
                         const int64_t *dropped, int *width)
{
    graph g = {.P = nranks};
    g.base = malloc(sizeof *g.base * (size_t)(nranks + 1));
    if (!g.base)
        return 0;
    g.base[0] = 0;
    for (int r = 0; r < nranks; r++)
        g.base[r + 1] = g.base[r] + (n[r] > 0 ? n[r] : 0);
    g.E = g.base[nranks];
    size_t E1 = (size_t)g.E + 1;
    g.ev = malloc(sizeof *g.ev * E1);
    g.rank = malloc(sizeof *g.rank * E1);
    g.match = malloc(sizeof *g.match * E1);
    g.first_dep = malloc(sizeof *g.first_dep * E1);
    g.next_dep = malloc(sizeof *g.next_dep * E1);
    g.row = calloc(E1, sizeof *g.row);
    g.phase = malloc(sizeof *g.phase * E1);
    int64_t rows = 0, nb = 0;
    band *bands = NULL;
    if (g.ev && g.rank && g.match && g.first_dep && g.next_dep && g.row && g.phase) {
        for (int r = 0; r < nranks; r++)
            for (int64_t i = g.base[r]; i < g.base[r + 1]; i++) {
                g.ev[i] = &ev[r][i - g.base[r]];
                g.rank[i] = r;
                g.match[i] = g.first_dep[i] = g.next_dep[i] = -1;
            }
        match_all(&g);
        rows = place_rows(&g);
        nb = find_bands(&g, &bands);
    } else {
        g.E = 0;
    }

    *width = lane_x(nranks) + 10;
    if (*width < 560) /* the legend's width */
        *width = 560;
    int height = HEAD_H + (int)rows * ROW_H + ROW_H;
    pld__svg_printf(o, "<g class=\"launch\">\n");
    pld__svg_printf(o, "<text class=\"title\" x=\"%d\" y=\"%d\">", 8, y0 + 20);
    pld__svg_escape(o, title);
    pld__svg_printf(o, "</text>\n");
    pld__svg_printf(o,
                    "<text class=\"legend\" x=\"%d\" y=\"%d\">rows in logical order; "
                    "blue: put, green: get (with their bytes)</text>\n"
                    "<text class=\"legend\" x=\"%d\" y=\"%d\">red: notify -&gt; the wait "
                    "it satisfied; shaded: barrier round; box: builtin</text>\n",
                    8, y0 + 38, 8, y0 + 52);
    for (int64_t k = 0; k < nb; k++) {
        const band *b = &bands[k];
        int xa = lane_x(b->lo) - 18, xb = lane_x(b->hi) + LANE_W - 24;
        if (b->lo == 0) /* reach the label in the margin */
            xa = 4;
        int ya = row_y(y0, b->top) - ROW_H / 2, yb = row_y(y0, b->bottom) + ROW_H / 2;
        pld__svg_printf(o, "<rect class=\"band\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
                        xa, ya, xb - xa, yb - ya);
        /* one margin label per first row: the rounds of several teams that
         * start together are named together */
        if (k > 0 && bands[k - 1].top == b->top)
            continue;
        int64_t last = k;
        while (last + 1 < nb && bands[last + 1].top == b->top)
            last++;
        if (last == k)
            pld__svg_printf(o, "<text class=\"bandname\" x=\"8\" y=\"%d\">round %lld</text>\n",
                            ya + 13, (long long)k + 1);
        else
            pld__svg_printf(o,
                            "<text class=\"bandname\" x=\"8\" y=\"%d\">rounds %lld-%lld</text>\n",
                            ya + 13, (long long)k + 1, (long long)last + 1);
    }
    draw_boxes(o, &g, y0, rows);
    int ybottom = row_y(y0, rows) - ROW_H / 2 + 4;
    for (int r = 0; r < nranks; r++) {
        int x = lane_x(r);
        pld__svg_printf(o,
                        "<text class=\"lanename\" x=\"%d\" y=\"%d\">rank %d (device %d)</text>\n",
                        x - 10, y0 + HEAD_H - 12, r, devices[r]);
        pld__svg_printf(o, "<line class=\"lane\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", x,
                        y0 + HEAD_H - 6, x, ybottom);
        char note[96] = "";
        if (n[r] < 0)
            snprintf(note, sizeof note, "(no record: the rank did not finish)");
        else if (dropped[r] > 0)
            snprintf(note, sizeof note, "... %lld more events not recorded", (long long)dropped[r]);
        if (note[0])
            label(&(*o), x + 6, ybottom + ROW_H / 2, "note", note);
    }
    for (int64_t i = 0; i < g.E; i++)
        draw_arrows(o, &g, y0, i);
    for (int64_t i = 0; i < g.E; i++)
        draw_event(o, &g, y0, i);
    pld__svg_printf(o, "</g>\n");

    free(bands);
    free(g.base), free(g.ev), free(g.rank), free(g.match), free(g.first_dep);
    free(g.next_dep), free(g.row), free(g.phase);
    return height + ROW_H / 2;
}
