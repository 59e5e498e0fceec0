/* SPDX-License-Identifier: Apache-2.0 */
/* The one-round path of the builtins: see ll.h. */
#include <stdio.h>

#include "coll/ll.h"
#include "core/settings.h"
#include "core/team.h"

#define LL_MAX_RANKS 64
#define LL_INBOX_BYTES ((size_t)256 * 1024) /* slots of one rank, both parities */
#define FLAG_CELLS 16                       /* one 64-byte line per writer */

/* Bytes per slot for a group of t ranks when PLD_LL_BYTES is `setting`;
 * 0: no one-round path. */
static size_t slot_bytes(size_t setting, int t)
{
    if (setting == 0 || t < 2 || t > LL_MAX_RANKS)
        return 0;
    size_t want = (setting + 63) & ~(size_t)63;
    size_t room = (LL_INBOX_BYTES / (2 * (size_t)t)) & ~(size_t)63;
    return want < room ? want : room;
}

static pld_window_buffer *win(pld_world *w, int32_t id)
{
    return id >= 0 && id < w->nwindows ? w->windows[id] : NULL;
}

/* Allocates the two windows of an inbox for groups of up to cap ranks. */
static pld_status alloc_inbox(pld_world *w, const char *name, int cap, pld__ll_inbox *ll)
{
    ll->box_win = ll->flag_win = -1;
    ll->slot = ll->cap = ll->push = 0;
    ll->line_cells = FLAG_CELLS;
    if (cap < 2)
        return PLD_OK;
    /* the lines exist for every group: all_to_all_v's counts travel in
     * them whatever the one-round path does (pld__ll_count_line) */
    char bname[PLD__NAME_MAX + 16], fname[PLD__NAME_MAX + 16];
    snprintf(bname, sizeof bname, "pld.inbox%s%s", *name ? "." : "", name);
    snprintf(fname, sizeof fname, "pld.inbox_flags%s%s", *name ? "." : "", name);
    pld_window_buffer *box, *flag;
    /* a line of its own per writer keeps Set writers apart (the NPU's line
     * hazard); beyond the one-round path's 64 ranks only the counts use
     * them, and 64 bytes per writer would make every rank's lines grow with
     * P (2 GiB over 4096 ranks): there they are packed, 8 bytes each */
    ll->line_cells = cap > LL_MAX_RANKS ? 2 : FLAG_CELLS;
    pld_status st = pld_alloc_window_buffer(
        w, 2 * (size_t)cap * (size_t)ll->line_cells * sizeof(int32_t), fname, &flag);
    if (st != PLD_OK)
        return st;
    ll->flag_win = flag->id;
    ll->cap = cap;
    size_t slot = slot_bytes((size_t)pld__setting_num(PLD__S_LL_BYTES), cap);
    if (!slot)
        return PLD_OK;
    st = pld_alloc_window_buffer(w, 2 * (size_t)cap * slot, bname, &box);
    if (st != PLD_OK) {
        pld__window_release(w, flag);
        ll->flag_win = -1;
        ll->cap = 0;
        return st;
    }
    ll->box_win = box->id;
    ll->slot = (int32_t)slot;
    ll->cap = cap;
    /* read once: the path of a call must not cost a look at the environment */
    char msg[256];
    pld__setting_value v;
    ll->push = pld__setting_read(PLD__S_LL_BYTES, &v, msg, sizeof msg) == PLD_OK && v.from_env;
    return PLD_OK;
}

pld_status pld__ll_world_init(pld_world *w)
{
    /* the inboxes are windows, made by every process together (mpi): a
     * process that would make none would leave the others waiting */
    char msg[256];
    pld__setting_value v;
    if (pld__setting_read(PLD__S_LL_BYTES, &v, msg, sizeof msg) != PLD_OK)
        return pld__world_fail(w, PLD_ERR_ARG, "%s", msg);
    if (!w->tp->host_agree(w, (uint64_t)v.num << 1 | (uint64_t)(v.from_env != 0)))
        return pld__world_fail(w, PLD_ERR_ARG,
                               "PLD_LL_BYTES differs between the processes of this job (here "
                               "%s): every process must run with the same value",
                               v.from_env ? v.str : "unset");
    return alloc_inbox(w, "", w->nranks, &w->sh->ll);
}

pld_status pld__ll_team_init(pld_world *w, struct pld_team *t)
{
    int cap = 0;
    for (int g = 0; g < t->ngroups; g++)
        if (t->start[g + 1] - t->start[g] > cap)
            cap = t->start[g + 1] - t->start[g];
    return alloc_inbox(w, t->name, cap, &t->ll);
}

void pld__ll_team_free(pld_world *w, struct pld_team *t)
{
    pld_window_buffer *b = win(w, t->ll.box_win), *f = win(w, t->ll.flag_win);
    if (b)
        pld__window_release(w, b);
    if (f)
        pld__window_release(w, f);
    t->ll.box_win = t->ll.flag_win = -1;
}

void pld__ll_launch_begin(pld_world *w)
{
    if (!atomic_exchange(&w->sh->ll_used, 0))
        return;
    pld_window_buffer *f = win(w, w->sh->ll.flag_win);
    if (f)
        pld__window_zero(w, f);
    for (int i = 0; i < w->nteams; i++)
        if (w->teams[i]->live && (f = win(w, w->teams[i]->ll.flag_win)) != NULL)
            pld__window_zero(w, f);
}

void pld__ll_launch_end(pld_world *w, pld_status st)
{
    if (st != PLD_OK)
        atomic_store(&w->sh->ll_used, 1);
}

/* Why a call takes the credit rounds; LL_TAKE: it takes the one round. */
typedef enum ll_why {
    LL_TAKE,
    LL_ONE_RANK,
    LL_OFF,      /* PLD_LL_BYTES=0 */
    LL_TOO_MANY, /* a group of more than LL_MAX_RANKS: no inbox */
    LL_CORES,    /* a multi-core call */
    LL_MUTANT,   /* a planted bug of the credit rounds runs */
    LL_NESTED,   /* inside another builtin */
    LL_TOO_BIG,  /* per_peer > the slot */
    LL_PUSH,     /* allgather, all_to_all without PLD_LL_BYTES set */
    LL_TOO_MUCH, /* a reduction of P-1 copies beyond 4 slots */
} ll_why;

/* Only what every rank of the group agrees on: the call's arguments and
 * the group's inbox, never the environment or a rank's own state. */
static ll_why decide(const pld_ctx *c, const pld__ll_inbox *in, size_t per_peer, pld__ll_form form)
{
    if (c->nranks < 2)
        return LL_ONE_RANK;
    if (in->box_win < 0) /* no inbox: the setting is 0, or the group too large */
        return c->nranks > LL_MAX_RANKS ? LL_TOO_MANY : LL_OFF;
    if (c->core > 0 || c->ncores > 1)
        return LL_CORES;
    if (PLD__MUTANT_CREDIT())
        return LL_MUTANT;
    if (c->depth > 1)
        return LL_NESTED;
    size_t slot = (size_t)in->slot;
    if (per_peer > slot)
        return LL_TOO_BIG;
    if (form == PLD__LL_PUSH && !in->push)
        return LL_PUSH;
    if (form == PLD__LL_REDUCE && (size_t)(c->nranks - 1) * per_peer > 4 * slot)
        return LL_TOO_MUCH;
    return LL_TAKE;
}

/* The listing's line for a call on the credit rounds (formatted only when
 * a listing records). */
static void note_credit(pld_ctx *c, ll_why why, const pld__ll_inbox *in, size_t per_peer)
{
    static const char *const fixed[] = {
        [LL_ONE_RANK] = "one rank",
        [LL_OFF] = "PLD_LL_BYTES=0",
        [LL_CORES] = "a multi-core call",
        [LL_MUTANT] = "a planted bug of the credit rounds runs",
        [LL_NESTED] = "called inside another builtin",
        [LL_PUSH] = "the push is one round already; PLD_LL_BYTES set sends it through the inbox",
    };
    switch (why) {
    case LL_TOO_MANY:
        pld__note(c, "path: credit rounds (no inbox for a group of %d ranks (more than %d))",
                  c->nranks, LL_MAX_RANKS);
        break;
    case LL_TOO_BIG:
        pld__note(c, "path: credit rounds (%zu B per peer > %d (PLD_LL_BYTES))", per_peer,
                  (int)in->slot);
        break;
    case LL_TOO_MUCH:
        pld__note(c, "path: credit rounds (reducing %d copies of %zu B > 4 x %d)", c->nranks - 1,
                  per_peer, (int)in->slot);
        break;
    default:
        pld__note(c, "path: credit rounds (%s)", fixed[why]);
        break;
    }
}

int pld__ll_count_line(pld_ctx *c, pld_dtensor *lines, int64_t *row)
{
    const pld__ll_inbox *in = c->team ? &c->team->ll : &c->sh->ll;
    if (c->nranks < 2 || in->flag_win < 0)
        return 0;
    *lines = (pld_dtensor){.buf = win(c->w, in->flag_win),
                           .dtype = PLD_INT32,
                           .ndim = 2,
                           .shape = {2 * (int64_t)in->cap, in->line_cells}};
    /* the same epochs as the one-round calls: parity alternates over both */
    int32_t epoch = ++c->ll_epoch;
    if (!atomic_load_explicit(&c->sh->ll_used, memory_order_relaxed))
        atomic_store_explicit(&c->sh->ll_used, 1, memory_order_relaxed);
    *row = (int64_t)(epoch & 1) * in->cap;
    return 1;
}

int pld__ll_begin(pld_ctx *c, size_t per_peer, pld__ll_form form, pld__ll *ll)
{
    const pld__ll_inbox *in = c->team ? &c->team->ll : &c->sh->ll;
    ll_why why = decide(c, in, per_peer, form);
    if (why != LL_TAKE) {
        note_credit(c, why, in, per_peer);
        return 0;
    }
    ll->box = win(c->w, in->box_win);
    ll->flags = (pld_dtensor){.buf = win(c->w, in->flag_win),
                              .dtype = PLD_INT32,
                              .ndim = 2,
                              .shape = {2 * (int64_t)in->cap, in->line_cells}};
    ll->slot = (size_t)in->slot;
    ll->cap = in->cap;
    ll->epoch = ++c->ll_epoch;
    ll->q = PLD__MUTANT(ll_one_slot) ? 0 : ll->epoch & 1;
    if (!atomic_load_explicit(&c->sh->ll_used, memory_order_relaxed))
        atomic_store_explicit(&c->sh->ll_used, 1, memory_order_relaxed);
    pld__note(c, "path: one round (%zu B per peer <= %d, PLD_LL_BYTES), epoch %d", per_peer,
              (int)in->slot, (int)ll->epoch);
    return 1;
}

/* Byte offset of slot (q, src) in a rank's box. */
static size_t slot_off(const pld__ll *ll, int src)
{
    return ((size_t)ll->q * (size_t)ll->cap + (size_t)src) * ll->slot;
}

/* The box seen as one row of `dtype` elements. */
static pld_dtensor box_row(const pld__ll *ll, pld_dtype dtype)
{
    int64_t cols = (int64_t)(2 * (size_t)ll->cap * ll->slot / pld_dtype_size(dtype));
    return (pld_dtensor){.buf = ll->box, .dtype = dtype, .ndim = 2, .shape = {1, cols}};
}

void pld__ll_send(pld_ctx *c, const pld__ll *ll, int peer, const void *src, size_t n,
                  pld_dtype dtype)
{
    int64_t cell = (int64_t)ll->q * ll->cap + c->rank;
    if (PLD__MUTANT(ll_flag_before_data))
        pld__notify_checked(c, ll->flags, peer, cell, 0, ll->epoch, PLD_NOTIFY_SET);
    if (n) {
        size_t esz = pld_dtype_size(dtype), off = slot_off(ll, c->rank);
        if (pld__observed(c)) { /* the listing, picture and race checker see a pld_put */
            int64_t doff[2] = {0, (int64_t)(off / esz)}, soff[2] = {0, 0};
            int64_t shape[2] = {1, (int64_t)(n / esz)};
            pld_xfer x = {.dst_offsets = doff, .src_offsets = soff, .shape = shape};
            pld_tensor s = {.data = (void *)src, .dtype = dtype, .ndim = 2, .shape = {1, shape[1]}};
            pld_put(c, box_row(ll, dtype), peer, s, &x);
        } else {
            pld__put_run(c, "pld_put", ll->box, peer, off, src, n);
        }
    }
    if (!PLD__MUTANT(ll_flag_before_data))
        pld__notify_checked(c, ll->flags, peer, cell, 0, ll->epoch, PLD_NOTIFY_SET);
}

void pld__ll_wait_from(pld_ctx *c, const pld__ll *ll, int src)
{
    pld__wait_checked(c, ll->flags, (int64_t)ll->q * ll->cap + src, 0, ll->epoch, PLD_WAIT_GE);
}

void pld__ll_wait_all(pld_ctx *c, const pld__ll *ll)
{
    for (int i = 1; i < c->nranks; i++) /* left neighbour first */
        pld__ll_wait_from(c, ll, (c->rank + c->nranks - i) % c->nranks);
    /* every peer has now published its fingerprint of this call */
    pld__call_round(c);
}

/* This rank's own box as one local row of `dtype` elements. */
static pld_tensor own_box(pld_ctx *c, const pld__ll *ll, pld_dtype dtype)
{
    pld_dtensor b = box_row(ll, dtype);
    return (pld_tensor){.data = c->tp->window_peer_ptr(c->w, ll->box, c->wrank),
                        .dtype = dtype,
                        .ndim = 2,
                        .shape = {1, b.shape[1]}};
}

/* Slot (q, src) of this rank's own box as a local [1, cols] tensor. */
static pld_tensor slot_tensor(pld_ctx *c, const pld__ll *ll, int src, pld_dtype dtype, int64_t cols)
{
    pld_tensor t = own_box(c, ll, dtype);
    t.data = (unsigned char *)t.data + slot_off(ll, src);
    t.shape[1] = cols;
    return t;
}

void pld__ll_copy_out(pld_ctx *c, const char *api, const pld__ll *ll, int src, pld_dtensor dst,
                      int64_t row, int64_t cols)
{
    pld_tensor s = slot_tensor(c, ll, src, dst.dtype, cols);
    size_t bytes = (size_t)cols * pld_dtype_size(dst.dtype);
    if (pld__observed(c)) {
        int64_t doff[2] = {row, 0}, soff[2] = {0, 0}, shape[2] = {1, cols};
        pld_xfer x = {.dst_offsets = doff, .src_offsets = soff, .shape = shape};
        pld__put_rows_checked(c, dst, c->rank, row, s, 0, 1, &x);
    } else {
        pld__put_run(c, api, dst.buf, c->rank, (size_t)row * bytes, s.data, bytes);
    }
}

void pld__ll_reduce(pld_ctx *c, const char *api, const pld__ll *ll, pld_tensor mine,
                    pld_dtensor mine_win, int64_t col, int64_t n, pld_reduce_op op)
{
    pld_dtype dt = mine.dtype;
    size_t esz = pld_dtype_size(dt);
    pld_dtensor box = box_row(ll, dt);
    pld_tensor own = own_box(c, ll, dt);
    /* chunked through the free UB, like the credit forms, so the path never
     * depends on what a rank holds */
    pld__stage st;
    pld__stage_begin(c, api, &st, dt, n, 1);
    for (int64_t c0 = 0; c0 < n; c0 += st.width) {
        pld__stage_fit(c, &st, n - c0);
        pld_tile *acc = st.t[0];
        /* rank 0's contribution first, then 1, 2, ...: one order everywhere */
        if (c->rank == 0)
            pld__load_checked(c, acc, mine, 0, col + c0);
        else
            pld__load_checked(c, acc, own, 0, (int64_t)(slot_off(ll, 0) / esz) + c0);
        for (int r = 1; r < c->nranks; r++) {
            if (r == c->rank)
                pld__remote_reduce_checked(c, acc, mine_win, c->rank, 0, col + c0, op);
            else
                pld__remote_reduce_checked(c, acc, box, c->rank, 0,
                                           (int64_t)(slot_off(ll, r) / esz) + c0, op);
        }
        pld__store_checked(c, acc, mine, 0, col + c0);
    }
    pld__stage_end(c, &st);
}
