/* SPDX-License-Identifier: Apache-2.0 */
/* Agreement check (see agree.h): fingerprints of builtin calls, published
 * per rank in a world-internal window and compared with the left
 * neighbour's after the call's first round. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/agree.h"
#include "coll/coll_util.h"
#include "core/team.h"

/* A slot: one cache line with the call's number and a hash of its
 * description (pld__agree_head) -- all a neighbour reads when the calls
 * agree, one line to move between cores -- then the description itself,
 * read only to name a disagreement. */
#define LINE_UP(n) (((n) + PLD__CACHELINE - 1) & ~(size_t)(PLD__CACHELINE - 1))
#define BODY_OFF LINE_UP(sizeof(pld__agree_head))
#define SLOT_BYTES (BODY_OFF + LINE_UP(sizeof(pld__fp_wire)))
/* The compared part of a description: everything before the in-flight mark. */
#define COMPARED offsetof(pld__fp_wire, inflight)
_Static_assert(COMPARED % sizeof(uint64_t) == 0, "the description hashes as whole words");

static uint64_t fp_hash(const pld__fp_wire *w)
{
    uint64_t words[COMPARED / sizeof(uint64_t)], h = 0x9e3779b97f4a7c15ull;
    memcpy(words, w, sizeof words);
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        h = (h ^ words[i]) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return h;
}

/* The fingerprint window: 2 slots per rank. Its id lives in the shared
 * control block, which worker processes forked before it existed see. */
static pld_window_buffer *agree_buf(pld_world *w)
{
    int32_t id = w->sh->agree_win;
    return id >= 0 && id < w->nwindows ? w->windows[id] : NULL;
}

pld_status pld__agree_init(pld_world *w)
{
    pld_window_buffer *buf;
    pld_status st = pld_alloc_window_buffer(w, 2 * SLOT_BYTES, "pld.agree", &buf);
    if (st == PLD_OK)
        w->sh->agree_win = buf->id; /* freed with the world's other windows */
    return st;
}

static size_t slot_off(uint64_t seq)
{
    return (size_t)(seq & 1) * SLOT_BYTES;
}

static pld__agree_ctx *agree_ctx(pld_ctx *c, pld_window_buffer *b, int left_rank)
{
    pld__agree_ctx *a = calloc(1, sizeof *a);
    if (!a)
        pld__kraise(c, PLD_ERR_NOMEM, "pld_launch", "out of memory for the agreement check");
    /* where the slots are mapped (thread, process, MPI on one node) they are
     * written and compared in place: no transport call per builtin */
    a->buf = b;
    a->me = c->wrank;
    a->left_rank = left_rank;
    a->mine = c->tp->window_peer_ptr(c->w, b, c->wrank);
    a->left = c->tp->window_peer_ptr(c->w, b, left_rank);
    return a;
}

void pld__agree_rank_begin(pld_ctx *c)
{
    if (c->sh->agree_win < 0)
        return;
    c->agree = agree_ctx(c, agree_buf(c->w), (c->wrank + c->w->nranks - 1) % c->w->nranks);
}

void pld__agree_rank_end(pld_ctx *c)
{
    free(c->agree);
    c->agree = NULL;
}

pld_status pld__agree_team_init(pld_world *w, struct pld_team *t)
{
    if (w->sh->agree_win < 0)
        return PLD_OK;
    char name[PLD__NAME_MAX + 16];
    snprintf(name, sizeof name, "pld.agree.%s", t->name);
    return pld_alloc_window_buffer(w, 2 * SLOT_BYTES, name, &t->agree);
}

void pld__agree_view_begin(pld_ctx *v)
{
    const struct pld_team *t = v->team;
    if (!v->agent->agree || !t->agree || v->core > 0)
        return; /* the check is off (or only core 0 takes part) */
    v->agree = agree_ctx(v, t->agree, v->members[(v->rank + v->nranks - 1) % v->nranks]);
}

void pld__agree_view_end(pld_ctx *v)
{
    free(v->agree);
    v->agree = NULL;
}

void pld__agree_publish(pld_ctx *c, const pld__coll_fp *fp)
{
    pld__agree_ctx *a = c->agree;
    if (!a || c->depth > 0 || c->core > 0)
        return; /* off, or a builtin inside a builtin: the outer one counts */
    a->api = fp->api;
    a->wire = fp->wire;
    a->wire.seq = ++c->agree_calls;
    /* the path a call takes depends on it: processes must agree (a slot is
     * a multiple of 64: bit 0 says whether the push builtins use it) */
    const pld__ll_inbox *ll = c->team ? &c->team->ll : &c->sh->ll;
    a->wire.ll_slot = ll->slot | (ll->push ? 1 : 0);
    a->wire.launch = c->sh->launch_seq;
    a->wire.inflight = 1;
    a->head.tag = (uint64_t)a->wire.launch << 32 | (a->wire.seq & 0xffffffffu);
    a->head.hash = fp_hash(&a->wire);
    /* published before this rank's first notify of the call: the notify
     * releases it to whoever waits for that notify */
    size_t off = slot_off(c->agree_calls);
    if (a->mine) {
        pld__agree_head *h = (pld__agree_head *)(void *)(a->mine + off);
        memcpy(a->mine + off + BODY_OFF, &a->wire, sizeof a->wire);
        h->hash = a->head.hash;
        /* last: a neighbour polling before the round reads the tag first */
        atomic_store_explicit((_Atomic uint64_t *)&h->tag, a->head.tag, memory_order_release);
    } else {
        c->tp->put(c, a->buf, a->me, off + BODY_OFF, &a->wire, sizeof a->wire);
        c->tp->put(c, a->buf, a->me, off, &a->head, sizeof a->head);
    }
    c->agree_pending = c->nranks > 1;
}

void pld__agree_leave(pld_ctx *c)
{
    pld__agree_ctx *a = c->agree;
    if (!a || c->depth > 0 || c->core > 0 || !c->agree_calls)
        return;
    static const int32_t zero = 0;
    size_t off = slot_off(c->agree_calls) + BODY_OFF + offsetof(pld__fp_wire, inflight);
    c->agree_pending = 0;
    if (a->mine)
        memcpy(a->mine + off, &zero, sizeof zero);
    else
        c->tp->put(c, a->buf, a->me, off, &zero, sizeof zero);
}

static void fmt_arg_dims(char *buf, size_t n, const pld__fp_arg *a)
{
    if (a->rows_free && a->ndim > 0) {
        /* [*,H]: rows are each rank's own */
        int k = snprintf(buf, n, "[*");
        for (int i = 1; i < a->ndim && k < (int)n; i++)
            k += snprintf(buf + k, n - (size_t)k, ",%lld", (long long)a->shape[i]);
        if (k < (int)n)
            snprintf(buf + k, n - (size_t)k, "]");
        return;
    }
    pld__fmt_dims(buf, n, a->shape, a->ndim);
}

static const char *win_name(pld_world *w, int32_t id)
{
    if (id >= 0 && id < w->nwindows && w->windows[id])
        return w->windows[id]->name;
    return "?";
}

static const char *mode_name(int32_t kind, int32_t m)
{
    if (kind == PLD__K_BROADCAST)
        return pld__broadcast_mode_name(m);
    if (kind == PLD__K_ALLGATHER)
        return pld__allgather_mode_name(m);
    if (kind == PLD__K_ALL_TO_ALL)
        return pld__all_to_all_mode_name(m);
    return pld__allreduce_mode_name(m);
}

static const char *op_name(int32_t op)
{
    static const char *const ops[] = {"sum", "max", "min", "prod"};
    return op >= 0 && op <= PLD_PROD ? ops[op] : "?";
}

/* Names the first field in which mine and theirs differ ("data shape [4,9]
 * differs from rank 0's [4,8]"); 0 when they agree. */
static int fp_diff(pld_world *w, const struct pld_team *t, const pld__fp_wire *mine,
                   const pld__fp_wire *theirs, int other, char *out, size_t n)
{
    char a[128], b[128], who[96];
    int dev = w->device_ids[other];
    pld__team_who(t, other, who, sizeof who); /* "rank 5 (team 'tp' rank 1)" */
    if (theirs->launch != mine->launch || theirs->seq < mine->seq) {
        snprintf(out, n,
                 "%s (device %d) has not yet entered builtin call %llu, but a notify from "
                 "it arrived: the signal holds credits of an earlier call -- hand-written "
                 "notifies on its cells, calls of another team (or of the world) on the same "
                 "signal while this group's calls run (each team needs a signal of its own), or "
                 "an aborted launch (pld_window_buffer_reset clears the signal)",
                 who, dev, (unsigned long long)mine->seq);
        return 1;
    }
    if (mine->seq != theirs->seq) {
        snprintf(out, n,
                 "this is builtin call %llu here but %s (device %d) is at its call %llu "
                 "(%s): every rank must call the same builtins in the same order",
                 (unsigned long long)mine->seq, who, dev, (unsigned long long)theirs->seq,
                 pld__fp_kind_name(theirs->kind));
        return 1;
    }
    if (mine->kind != theirs->kind) {
        snprintf(out, n,
                 "call %llu is %s here but %s on %s (device %d): every rank must call the "
                 "same builtins in the same order",
                 (unsigned long long)mine->seq, pld__fp_kind_name(mine->kind),
                 pld__fp_kind_name(theirs->kind), who, dev);
        return 1;
    }
    if (mine->signal != theirs->signal) {
        snprintf(out, n, "signal window '%s' differs from %s's '%s'", win_name(w, mine->signal),
                 who, win_name(w, theirs->signal));
        return 1;
    }
    if (mine->ll_slot != theirs->ll_slot) {
        snprintf(out, n,
                 "the one-round threshold is %d bytes per peer%s here but %d%s on %s: every "
                 "process must run with the same PLD_LL_BYTES",
                 (int)(mine->ll_slot & ~1), mine->ll_slot & 1 ? " (set)" : "",
                 (int)(theirs->ll_slot & ~1), theirs->ll_slot & 1 ? " (set)" : "", who);
        return 1;
    }
    if (mine->core_num != theirs->core_num) {
        snprintf(out, n, "core_num %d differs from %s's %d", (int)mine->core_num, who,
                 (int)theirs->core_num);
        return 1;
    }
    if (mine->mode != theirs->mode) {
        snprintf(out, n, "mode %s differs from %s's %s", mode_name(mine->kind, mine->mode), who,
                 mode_name(theirs->kind, theirs->mode));
        return 1;
    }
    if (mine->lanes != theirs->lanes) {
        snprintf(out, n, "signal '%s' has %d cell%s per rank here but %d on %s",
                 win_name(w, mine->signal), (int)mine->lanes, mine->lanes == 1 ? "" : "s",
                 (int)theirs->lanes, who);
        return 1;
    }
    if (mine->op != theirs->op) {
        snprintf(out, n, "op %s differs from %s's %s", op_name(mine->op), who, op_name(theirs->op));
        return 1;
    }
    if (mine->root != theirs->root) {
        snprintf(out, n, "root %d differs from %s's %d", (int)mine->root, who, (int)theirs->root);
        return 1;
    }
    if (mine->m != theirs->m) {
        snprintf(out, n, "M = %lld rows per block differs from %s's %lld", (long long)mine->m, who,
                 (long long)theirs->m);
        return 1;
    }
    for (int i = 0; i < mine->nargs && i < PLD__FP_ARGS; i++) {
        const pld__fp_arg *x = &mine->arg[i], *y = &theirs->arg[i];
        const char *what = pld__fp_arg_name(mine->kind, i);
        if (x->win != y->win) {
            snprintf(out, n, "%s window '%s' differs from %s's '%s'", what, win_name(w, x->win),
                     who, win_name(w, y->win));
            return 1;
        }
        if (x->dtype != y->dtype) {
            snprintf(out, n, "%s dtype %s differs from %s's %s", what,
                     pld_dtype_name((pld_dtype)x->dtype), who, pld_dtype_name((pld_dtype)y->dtype));
            return 1;
        }
        int same = x->ndim == y->ndim;
        for (int d = 0; same && d < x->ndim && d < PLD_MAX_DIMS; d++)
            same = x->shape[d] == y->shape[d];
        if (!same) {
            fmt_arg_dims(a, sizeof a, x);
            fmt_arg_dims(b, sizeof b, y);
            snprintf(out, n, "%s shape %s differs from %s's %s", what, a, who, b);
            return 1;
        }
    }
    return 0;
}

void pld__agree_verify(pld_ctx *c)
{
    pld__agree_ctx *a = c->agree;
    c->agree_pending = 0;
    int left = a->left_rank;
    /* The left neighbour wrote this slot before the notify we just waited
     * for, and cannot rewrite it before we enter the next call -- except
     * its in-flight mark: having heard from every rank, it may already be
     * leaving the call and clearing the mark (pld__agree_leave) while we
     * read. Everything before the mark is compared; the mark is not read. */
    size_t off = slot_off(c->agree_calls);
    pld__agree_head h;
    if (a->left)
        memcpy(&h, a->left + off, sizeof h);
    else
        c->tp->get(c, &h, a->buf, left, off, sizeof h);
    if (h.tag == a->head.tag && h.hash == a->head.hash)
        return; /* the common case: one cache line from the neighbour */
    pld__fp_wire theirs;
    memset(&theirs, 0, sizeof theirs);
    if (a->left)
        memcpy(&theirs, a->left + off + BODY_OFF, COMPARED);
    else
        c->tp->get(c, &theirs, a->buf, left, off + BODY_OFF, COMPARED);
    theirs.inflight = 1;
    char msg[512];
    if (fp_diff(c->w, c->team, &a->wire, &theirs, left, msg, sizeof msg))
        pld__kraise(c, PLD_ERR_ARG, a->api, "%s", msg);
}

int pld__agree_differs(const pld_ctx *c)
{
    const pld__agree_ctx *a = c->agree;
    if (!a || !c->agree_pending || !a->left)
        return 0;
    const pld__agree_head *h =
        (const pld__agree_head *)(const void *)(a->left + slot_off(c->agree_calls));
    /* the tag is stored after the hash with release ordering, and the slot
     * is not rewritten before this rank leaves this call: once the tag says
     * "this call", the hash is the neighbour's description of it */
    if (atomic_load_explicit((_Atomic const uint64_t *)&h->tag, memory_order_acquire) !=
        a->head.tag)
        return 0;
    return h->hash != a->head.hash;
}

/* Rank r's latest published call in the fingerprint window b, when its
 * slice is mapped here. */
static int latest(pld_world *w, pld_window_buffer *b, int r, pld__fp_wire *out)
{
    const unsigned char *p = w->tp->window_peer_ptr(w, b, r);
    if (!p)
        return 0;
    pld__fp_wire s0, s1;
    memcpy(&s0, p + BODY_OFF, sizeof s0);
    memcpy(&s1, p + SLOT_BYTES + BODY_OFF, sizeof s1);
    /* Call numbers restart with every launch: the other slot may hold a
     * later-numbered call of an earlier launch, which must not hide this
     * launch's call (its interrupted signal would then stay uncleared). */
    uint32_t now = w->sh->launch_seq;
    int in0 = s0.seq != 0 && s0.launch == now, in1 = s1.seq != 0 && s1.launch == now;
    if (!in0 && !in1)
        return 0;
    *out = in0 && (!in1 || s0.seq > s1.seq) ? s0 : s1;
    return out->inflight;
}

/* Channel k of the check: -1 the world's window, else team k's (NULL when
 * it has none: freed, or made with the check off). */
static pld_window_buffer *channel(pld_world *w, int k, const struct pld_team **t)
{
    *t = k < 0 ? NULL : w->teams[k];
    return k < 0 ? agree_buf(w) : (*t)->live ? (*t)->agree : NULL;
}

/* The members of group g of channel t (the world: one group of all). */
static int group_members(pld_world *w, const struct pld_team *t, int g, const int **m)
{
    *m = t ? &t->members[t->start[g]] : NULL;
    return t ? t->start[g + 1] - t->start[g] : w->nranks;
}

/* Writes the disagreement of rank r's call x with rank `other`'s and
 * returns 1, or returns 0 when they agree. */
static int report(pld_world *w, const struct pld_team *t, int r, const pld__fp_wire *x,
                  const pld__fp_wire *ref, int other, char *out, size_t n)
{
    char msg[512], who[96];
    if (!fp_diff(w, t, x, ref, other, msg, sizeof msg))
        return 0;
    pld__team_who(t, r, who, sizeof who);
    snprintf(out, n, "%s (device %d): %s: %s (the ranks then waited for each other forever)", who,
             w->device_ids[r], pld__fp_kind_name(x->kind), msg);
    return 1;
}

/* The first disagreement among the in-flight calls of one group. When
 * every rank is known to be blocked (a deadlock), ranks in different
 * calls disagree: one of them made a call the others did not. After a
 * wait timed out nobody knows that: a rank may only be slow to reach the
 * call the others are in (thousands of ranks on a loaded machine), so
 * only ranks in the same call are compared then. */
static int explain_group(pld_world *w, pld_window_buffer *b, const struct pld_team *t, int g,
                         int all_blocked, char *out, size_t n)
{
    const int *m;
    int size = group_members(w, t, g, &m), nseen = 0, found = 0;
    /* the in-flight calls read so far, each compared with: the first of
     * them (all blocked), or the first in the same call (a timeout) */
    pld__fp_wire *seen = malloc(sizeof *seen * (size_t)size), x;
    int *seen_rank = malloc(sizeof *seen_rank * (size_t)size);
    for (int i = 0; seen && seen_rank && i < size && !found; i++) {
        int r = m ? m[i] : i;
        if (!latest(w, b, r, &x))
            continue;
        int j = 0;
        while (j < nseen && !all_blocked && (seen[j].launch != x.launch || seen[j].seq != x.seq))
            j++;
        if (j < nseen) {
            found = report(w, t, r, &x, &seen[j], seen_rank[j], out, n);
            continue;
        }
        seen[nseen] = x;
        seen_rank[nseen++] = r;
    }
    free(seen);
    free(seen_rank);
    return found;
}

int pld__agree_explain(pld_world *w, int all_blocked, char *out, size_t n)
{
    if (!agree_buf(w))
        return 0;
    /* calls are compared within a group of the world or of a team: groups
     * run different builtins at the same time by design */
    for (int k = -1; k < w->nteams; k++) {
        const struct pld_team *t;
        pld_window_buffer *b = channel(w, k, &t);
        for (int g = 0; b && g < (t ? t->ngroups : 1); g++)
            if (explain_group(w, b, t, g, all_blocked, out, n))
                return 1;
    }
    return 0;
}

int pld__agree_after_abort(pld_world *w, char *out, size_t n)
{
    if (!agree_buf(w))
        return 0;
    /* A builtin that was in flight when the launch aborted left credits in
     * its signal, which the next call would take for arrivals. Clear every
     * such signal on the ranks this host reaches (all of them on the thread
     * and process transports), once, whichever group or team used it.
     * Which signals were in flight is read from every rank whose slots are
     * mapped here, and under MPI the processes then pool what they found:
     * a rank that failed before it entered the call holds credits its peers
     * sent for it, and only their fingerprints say so. (No peer can send
     * new credits meanwhile: a launch starts with a barrier of every
     * process, and this runs in every process after the same launch.) */
    unsigned char *inflight = calloc((size_t)w->nwindows + 1, 1);
    if (!inflight)
        return 0;
    for (int k = -1; k < w->nteams; k++) {
        const struct pld_team *t;
        pld_window_buffer *b = channel(w, k, &t);
        for (int r = 0; b && r < w->nranks; r++) {
            pld__fp_wire x;
            if (latest(w, b, r, &x) && x.signal >= 0 && x.signal < w->nwindows)
                inflight[x.signal] = 1;
        }
    }
    if (w->tp->host_union(w, inflight, (size_t)w->nwindows) != 0)
        memset(inflight, 0, (size_t)w->nwindows); /* nothing cleared rather than half */
    int cleared = 0;
    size_t used = 0;
    out[0] = '\0';
    for (int id = 0; id < w->nwindows; id++) {
        pld_window_buffer *sig = w->windows[id];
        if (!inflight[id] || !sig || id == w->sh->agree_win)
            continue;
        pld__window_zero(w, sig);
        cleared++;
        if (used < n)
            used += (size_t)snprintf(out + used, n - used, "%s'%s'", cleared > 1 ? ", " : "",
                                     sig->name);
    }
    free(inflight);
    return cleared;
}
