/* SPDX-License-Identifier: Apache-2.0 */
/* The lowering listing: the primitive operations rank 0 executed, in order.
 * Runs that differ only in numbers (peer, index, offset) are folded:
 *
 *   tile.put tensor[0,0]+[1,64] -> data@peer{0..3}[1,0]+[1,64]  x4
 *
 * and repeated blocks of up to four lines become "loop xN { ... }". */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "trace/text.h"
#include "trace/trace.h"

#define IR_MAX_LINES 50000
#define IR_MAX_NUMS 24
#define IR_MAX_PERIOD 16

typedef struct ir_line {
    int depth;
    char *text;
    char *skel; /* text with every number replaced by '#' */
    int nnum;
    long long num[IR_MAX_NUMS];
} ir_line;

struct pld__ir {
    ir_line *lines;
    int n, cap;
    long long dropped;
    pld__text out;
    int rendered;
};

pld__ir *pld__ir_new(void)
{
    return calloc(1, sizeof(pld__ir));
}

void pld__ir_reset(pld__ir *ir)
{
    for (int i = 0; i < ir->n; i++) {
        free(ir->lines[i].text);
        free(ir->lines[i].skel);
    }
    ir->n = 0;
    ir->dropped = 0;
    ir->rendered = 0;
    ir->out.n = 0;
    if (ir->out.s)
        ir->out.s[0] = '\0';
}

void pld__ir_free(pld__ir *ir)
{
    if (!ir)
        return;
    pld__ir_reset(ir);
    free(ir->lines);
    free(ir->out.s);
    free(ir);
}

/* Splits text into skeleton + numbers (unsigned digit runs). Numbers inside
 * an already folded set ("{0..3}") stay part of the skeleton: a later pass
 * folds only lines whose sets agree, instead of nesting sets in sets. */
static void skeletonize(ir_line *l)
{
    size_t len = strlen(l->text);
    l->skel = malloc(len + 1);
    l->nnum = 0;
    if (!l->skel)
        return;
    size_t o = 0;
    int braces = 0;
    for (size_t i = 0; i < len;) {
        char ch = l->text[i];
        braces += ch == '{' ? 1 : ch == '}' ? -1 : 0;
        if (braces == 0 && isdigit((unsigned char)ch) && l->nnum < IR_MAX_NUMS) {
            l->num[l->nnum++] = strtoll(l->text + i, NULL, 10);
            while (i < len && isdigit((unsigned char)l->text[i]))
                i++;
            l->skel[o++] = '#';
        } else {
            l->skel[o++] = l->text[i++];
        }
    }
    l->skel[o] = '\0';
}

void pld__ir_emit(pld__ir *ir, int depth, const char *fmt, ...)
{
    if (ir->n >= IR_MAX_LINES) {
        ir->dropped++;
        return;
    }
    if (ir->n == ir->cap) {
        int cap = ir->cap ? ir->cap * 2 : 256;
        ir_line *grown = realloc(ir->lines, sizeof *grown * (size_t)cap);
        if (!grown) {
            ir->dropped++;
            return;
        }
        ir->lines = grown;
        ir->cap = cap;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ir_line *l = &ir->lines[ir->n];
    l->depth = depth;
    l->text = strdup(buf);
    if (!l->text) {
        ir->dropped++;
        return;
    }
    skeletonize(l);
    if (!l->skel) {
        free(l->text);
        ir->dropped++;
        return;
    }
    ir->n++;
}

static int same_shape(const ir_line *a, const ir_line *b)
{
    return a->depth == b->depth && a->nnum == b->nnum && !strcmp(a->skel, b->skel);
}

/* A list of listing lines (one folding pass reads one and writes another). */
typedef struct ir_list {
    ir_line *v;
    int n, cap;
} ir_list;

static void list_free(ir_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].text);
        free(l->v[i].skel);
    }
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static void list_push(ir_list *l, int depth, const char *text)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        ir_line *grown = realloc(l->v, sizeof *grown * (size_t)cap);
        if (!grown)
            return;
        l->v = grown;
        l->cap = cap;
    }
    ir_line *x = &l->v[l->n];
    x->depth = depth;
    x->text = strdup(text);
    if (!x->text)
        return;
    skeletonize(x);
    if (!x->skel) {
        free(x->text);
        return;
    }
    l->n++;
}

/* A block may be folded only if it is a whole subtree sequence: no line in
 * it climbs above its first line, and the line after it does not sit deeper
 * (which would cut a call off from the rest of its body). */
static int whole_block(const ir_list *l, int i, int period)
{
    int d = l->v[i].depth;
    for (int k = 1; k < period; k++)
        if (l->v[i + k].depth < d)
            return 0;
    return i + period >= l->n || l->v[i + period].depth <= d;
}

/* How many times the block of `period` lines at i repeats back to back. */
static int repeats(const ir_list *l, int i, int period)
{
    if (!whole_block(l, i, period))
        return 1;
    int m = 1;
    for (;;) {
        int base = i + m * period;
        if (base + period > l->n)
            return m;
        for (int k = 0; k < period; k++)
            if (!same_shape(&l->v[i + k], &l->v[base + k]))
                return m;
        m++;
    }
}

/* Number position p of line i+k, folded over m repetitions of period. */
static void fold_number(pld__text *b, const ir_list *l, int i, int period, int k, int m, int p)
{
    long long first = l->v[i + k].num[p];
    long long step = m > 1 ? l->v[i + period + k].num[p] - first : 0;
    int arith = 1;
    for (int r = 1; r < m && arith; r++)
        if (l->v[i + r * period + k].num[p] != first + step * r)
            arith = 0;
    if (arith && step == 0) {
        pld__text_printf(b, "%lld", first);
    } else if (arith && step == 1) {
        pld__text_printf(b, "{%lld..%lld}", first, first + m - 1);
    } else if (arith) {
        pld__text_printf(b, "{%lld..%lld step %lld}", first, first + step * (m - 1), step);
    } else {
        pld__text_add(b, "{", 1);
        for (int r = 0; r < m; r++) {
            if (r == 6 && m > 8) {
                pld__text_printf(b, ",...,%lld", l->v[i + (m - 1) * period + k].num[p]);
                break;
            }
            pld__text_printf(b, r ? ",%lld" : "%lld", l->v[i + r * period + k].num[p]);
        }
        pld__text_add(b, "}", 1);
    }
}

static void fold_line(pld__text *b, const ir_list *l, int i, int period, int k, int m)
{
    int p = 0;
    b->n = 0;
    pld__text_add(b, "", 0);
    for (const char *s = l->v[i + k].skel; *s; s++) {
        if (*s == '#')
            fold_number(b, l, i, period, k, m, p++);
        else
            pld__text_add(b, s, 1);
    }
}

/* One folding pass: repeated blocks of up to IR_MAX_PERIOD lines become one
 * line ("... x4") or a loop ("loop x4 {" ... "}"). Returns 1 if it folded. */
static int fold_pass(const ir_list *in, ir_list *out)
{
    pld__text b = {0};
    int folded = 0;
    for (int i = 0; i < in->n;) {
        int best_p = 1, best_m = repeats(in, i, 1);
        for (int period = 2; period <= IR_MAX_PERIOD && i + 2 * period <= in->n; period++) {
            int m = repeats(in, i, period);
            if (m >= 2 && m * period > best_m * best_p) {
                best_p = period;
                best_m = m;
            }
        }
        int depth = in->v[i].depth;
        if (best_m == 1) {
            list_push(out, depth, in->v[i].text);
        } else if (best_p == 1) {
            fold_line(&b, in, i, 1, 0, best_m);
            pld__text_printf(&b, "  x%d", best_m);
            list_push(out, depth, b.s);
            folded = 1;
        } else {
            char head[32];
            snprintf(head, sizeof head, "loop x%d {", best_m);
            list_push(out, depth, head);
            for (int k = 0; k < best_p; k++) {
                fold_line(&b, in, i, best_p, k, best_m);
                list_push(out, in->v[i + k].depth + 1, b.s);
            }
            list_push(out, depth, "}");
            folded = 1;
        }
        i += best_p * best_m;
    }
    free(b.s);
    return folded;
}

const char *pld__ir_render(pld__ir *ir)
{
    if (ir->rendered)
        return ir->out.s ? ir->out.s : "";
    ir_list cur = {0}, next = {0};
    for (int i = 0; i < ir->n; i++)
        list_push(&cur, ir->lines[i].depth, ir->lines[i].text);
    /* fold inner runs first, then the blocks they form */
    for (int pass = 0; pass < 4; pass++) {
        int folded = fold_pass(&cur, &next);
        list_free(&cur);
        cur = next;
        next = (ir_list){0};
        if (!folded)
            break;
    }
    ir->out.n = 0;
    pld__text_printf(&ir->out, "lowering (rank 0): %d operations\n", ir->n);
    for (int i = 0; i < cur.n; i++) {
        for (int d = 0; d <= cur.v[i].depth; d++)
            pld__text_add(&ir->out, "  ", 2);
        pld__text_add(&ir->out, cur.v[i].text, strlen(cur.v[i].text));
        pld__text_add(&ir->out, "\n", 1);
    }
    list_free(&cur);
    if (ir->dropped)
        pld__text_printf(&ir->out, "  ... %lld more operations not recorded\n", ir->dropped);
    ir->rendered = 1;
    return ir->out.s ? ir->out.s : "";
}

/* ---- public --------------------------------------------------------------- */

void pld_ir_enable(pld_world *w, int on)
{
    if (pld__world_is_live(w))
        atomic_store(&w->ir_on, on != 0);
}

const char *pld_ir_text(const pld_world *w)
{
    if (!pld__world_is_live(w))
        return "";
    if (w->ir_shared) /* rank 0 rendered it in its own process */
        return w->ir_shared;
    if (!w->ir || w->ir->n == 0)
        return "";
    return pld__ir_render(w->ir);
}

pld_status pld_ir_dump(const pld_world *w, FILE *out)
{
    if (pld__world_check(w, "pld_ir_dump") != PLD_OK)
        return PLD_ERR_ARG;
    const char *s = pld_ir_text(w);
    fputs(s, out ? out : stdout);
    fflush(out ? out : stdout);
    return PLD_OK;
}
