/* SPDX-License-Identifier: Apache-2.0 */
/* The hardware-hazard lints (PLD_CHECK=hazards): patterns that run
 * correctly on a CPU, whose caches are coherent and whose atomics and
 * stores meet in one place, but break on the NPU. Each fails the launch
 * with PLD_ERR_CHECK naming the cells and the calls.
 *
 *   line   Signal cells of one 64-byte line of the receiver, written by
 *          different ranks, at least one of them with Set. A Set is a
 *          scalar store through the writer's cache: the line goes back to
 *          memory whole, with the writer's stale copy of the other cells,
 *          and can undo what another rank wrote there. AtomicAdd is done by
 *          the memory system, so several adders on one line are safe.
 *   mixed  Set and AtomicAdd on one cell within a launch: the add happens
 *          in memory, the Set in a cache, and which one lands last is not
 *          defined.
 *   eq     An Eq wait on a cell that more than one rank writes: with
 *          several writers the value can pass the expected one between two
 *          polls of the waiter (or be overwritten), and the wait never
 *          returns. Ge on a monotonic count has no such window.
 *   limits A tile or transfer, a URMA send or a multi-core call that this
 *          world's limits allow but the stock limits of a profile do not
 *          (the other profile, or this one without PLD_UB_BYTES /
 *          PLD_URMA_SQ_DEPTH raised): code tested here would fail there.
 *
 * Bookkeeping: a table per receiving rank in a world-internal window,
 * "pld.hazards", cleared at each launch's start. An entry is a signal cell
 * or a 64-byte line (the key: window, receiver, cell or line), with the
 * first two distinct ranks that wrote it, the first two that Set it (a
 * line) or the first Set and AtomicAdd (a cell), and an Eq waiter. A
 * writer records into the receiver's table where the receiver's slice is
 * mapped (thread, process, mpi on one node); elsewhere (mpi across nodes)
 * into its own, where it sees only its own notifies. Every rule is checked
 * by whoever records second: each side publishes itself, then reads the
 * other side (sequentially consistent atomics), so of two conflicting
 * operations at least one sees the other. Lock-free, race-free, no
 * transport call: the lints cost a hash probe and a few atomics per notify
 * and per Eq wait. */
#include <stdio.h>
#include <string.h>

#include "core/team.h"
#include "prim/prim.h"

#define HZ_ENTRIES 2048 /* cells and lines a rank receives on per launch (64 KiB) */
#define HZ_LINE 64
#define HZ_CELL ((size_t)sizeof(int32_t))

typedef struct hz_entry {
    _Atomic uint64_t key;  /* 0: free */
    _Atomic uint32_t w[2]; /* the first two distinct ranks that wrote it */
    _Atomic uint32_t s[2]; /* line: the first two distinct Set writers; cell: s[0] the first Set */
    _Atomic uint32_t add;  /* cell: the first AtomicAdd */
    _Atomic uint32_t eq;   /* cell: an Eq wait on it */
} hz_entry;
_Static_assert(sizeof(hz_entry) == 32, "an entry is half a cache line");
#define HZ_MAX_RANKS 2047 /* the rank fields of a key and a `who` are 11 bits */
_Static_assert(PLD__MAX_WINDOWS <= 8191, "the key's fields");

/* ---- who did it: rank, operation, cell within the line, enclosing builtin */

enum { SCOPE_USER = 0, SCOPE_OTHER = 255 };

static uint32_t who_make(int rank, pld_notify_op op, size_t off, unsigned scope)
{
    unsigned cell = (unsigned)(off % HZ_LINE / HZ_CELL);
    return (uint32_t)(rank + 1) | (uint32_t)(op == PLD_NOTIFY_SET) << 11 | (uint32_t)cell << 12 |
           (uint32_t)scope << 16;
}
static int who_rank(uint32_t x)
{
    return (int)(x & 0x7ffu) - 1;
}
static int who_set(uint32_t x)
{
    return (int)(x >> 11 & 1u);
}
static size_t who_cell(uint32_t x)
{
    return (size_t)(x >> 12 & 0xfu);
}

/* The builtin the call runs in, as a small number: the innermost scope's
 * index in the table of builtins, + 1. */
static unsigned scope_of(const pld_ctx *c)
{
    if (c->depth <= 0)
        return SCOPE_USER;
    const char *name = c->scope[(c->depth < 4 ? c->depth : 4) - 1];
    for (int k = 0; k < PLD__NKINDS; k++)
        if (!strcmp(name, pld__fp_kind_name(k)))
            return (unsigned)k + 1;
    return SCOPE_OTHER;
}

/* "Set", "AtomicAdd in pld_barrier" */
static const char *op_text(uint32_t x, char *buf, size_t n)
{
    unsigned scope = x >> 16 & 0xffu;
    const char *op = who_set(x) ? "Set" : "AtomicAdd";
    if (scope == SCOPE_USER)
        snprintf(buf, n, "pld_notify %s", op);
    else if (scope == SCOPE_OTHER)
        snprintf(buf, n, "%s in a builtin", op);
    else
        snprintf(buf, n, "%s in %s", op, pld__fp_kind_name((int32_t)scope - 1));
    return buf;
}

/* The coordinates of the cell at byte offset off in the view sig. */
static const char *cell_text(pld_dtensor sig, size_t off, char *buf, size_t n)
{
    int64_t coords[PLD_MAX_DIMS];
    int64_t idx = (int64_t)(off / HZ_CELL);
    for (int i = sig.ndim - 1; i >= 0; i--) {
        coords[i] = sig.shape[i] > 0 ? idx % sig.shape[i] : 0;
        idx = sig.shape[i] > 0 ? idx / sig.shape[i] : 0;
    }
    return pld__fmt_dims(buf, n, coords, sig.ndim);
}

/* ---- the table ------------------------------------------------------------- */

static pld_window_buffer *table_buf(pld_world *w)
{
    int32_t id = w->sh->hazard_win;
    return id >= 0 && id < w->nwindows ? w->windows[id] : NULL;
}

pld_status pld__hazard_init(pld_world *w)
{
    if (w->nranks > HZ_MAX_RANKS)
        return pld__world_fail(w, PLD_ERR_UNSUPPORTED,
                               "the hardware-hazard lints (PLD_CHECK=hazards) record at most %d "
                               "ranks; this world has %d",
                               HZ_MAX_RANKS, w->nranks);
    pld_window_buffer *buf;
    pld_status st = pld_alloc_window_buffer(w, HZ_ENTRIES * sizeof(hz_entry), "pld.hazards", &buf);
    if (st == PLD_OK)
        w->sh->hazard_win = buf->id; /* freed with the world's other windows */
    return st;
}

void pld__hazard_launch_begin(pld_world *w)
{
    pld_window_buffer *b = table_buf(w);
    if (b) /* no rank runs: the facts of the last launch go */
        pld__window_zero(w, b);
}

/* The table that records what is written to world rank r's slice. */
static hz_entry *table_of(pld_ctx *c, int r)
{
    pld_window_buffer *b = table_buf(c->w);
    if (!b)
        return NULL;
    hz_entry *t = c->tp->window_peer_ptr(c->w, b, r);
    return t ? t : c->tp->window_peer_ptr(c->w, b, c->wrank);
}

static uint64_t key_make(int buf_id, int receiver, int line, size_t index)
{
    return (uint64_t)(buf_id + 1) << 51 | (uint64_t)receiver << 40 | (uint64_t)line << 39 |
           ((uint64_t)index & ((1ull << 39) - 1));
}

/* The entry of key, made if it is new; NULL when the table is full (the
 * lints then see less, and say so once). */
static hz_entry *entry_of(pld_ctx *c, hz_entry *t, uint64_t key)
{
    static _Atomic int warned;
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 53) & (HZ_ENTRIES - 1);
    for (size_t n = 0; n < HZ_ENTRIES; n++, i = (i + 1) & (HZ_ENTRIES - 1)) {
        uint64_t k = atomic_load(&t[i].key);
        if (k == key)
            return &t[i];
        if (k == 0) {
            if (atomic_compare_exchange_strong(&t[i].key, &k, key) || k == key)
                return &t[i];
        }
    }
    if (!atomic_exchange(&warned, 1))
        PLD__LOGS(PLD__LOG_WARN, PLD__SUB_CHECK, c->wrank,
                  "PLD_CHECK=hazards: more than %d signal cells and lines written to one rank in "
                  "one launch; the lints do not see the rest",
                  HZ_ENTRIES / 2);
    return NULL;
}

/* Adds who's rank to a set of two distinct ranks (the first two). */
static void slots_add(_Atomic uint32_t *s, uint32_t who)
{
    for (int i = 0; i < 2; i++) {
        uint32_t cur = atomic_load(&s[i]);
        if (cur == 0 && atomic_compare_exchange_strong(&s[i], &cur, who))
            return;
        if (who_rank(cur) == who_rank(who))
            return;
    }
}

/* A member of the set that is not `rank`, 0 if none. */
static uint32_t slots_other(_Atomic uint32_t *s, int rank)
{
    for (int i = 0; i < 2; i++) {
        uint32_t cur = atomic_load(&s[i]);
        if (cur && who_rank(cur) != rank)
            return cur;
    }
    return 0;
}

/* ---- the reports ----------------------------------------------------------- */

static PLD__NORETURN void report_line(pld_ctx *c, pld_dtensor sig, int receiver, size_t line,
                                      uint32_t a, uint32_t b)
{
    char ca[96], cb[96], oa[96], ob[96];
    if (who_rank(b) < who_rank(a)) { /* ranks in order: the same text whoever finds it */
        uint32_t t = a;
        a = b;
        b = t;
    }
    pld__kraise(c, PLD_ERR_CHECK, "pld_notify",
                "PLD_CHECK=hazards: signal '%s' cells %s and %s of rank %d share one 64-byte "
                "line and are written by ranks %d (%s) and %d (%s): on the NPU a Set is a cached "
                "store that writes the whole line back over the other writer's cell; give each "
                "writer its own line (16 INT32 cells per writer) or use AtomicAdd",
                sig.buf->name,
                cell_text(sig, line * HZ_LINE + who_cell(a) * HZ_CELL, ca, sizeof ca),
                cell_text(sig, line * HZ_LINE + who_cell(b) * HZ_CELL, cb, sizeof cb), receiver,
                who_rank(a), op_text(a, oa, sizeof oa), who_rank(b), op_text(b, ob, sizeof ob));
}

static PLD__NORETURN void report_mixed(pld_ctx *c, pld_dtensor sig, int receiver, size_t off,
                                       uint32_t set, uint32_t add)
{
    char cell[96], os[96], oa[96];
    pld__kraise(c, PLD_ERR_CHECK, "pld_notify",
                "PLD_CHECK=hazards: signal '%s' cell %s of rank %d gets both Set (rank %d, %s) "
                "and AtomicAdd (rank %d, %s) in one launch: on the NPU the add happens in memory "
                "and the Set in a cache, and either can undo the other; keep one operation per "
                "cell (AtomicAdd for counts; a fresh cell or a higher threshold instead of a Set "
                "reset)",
                sig.buf->name, cell_text(sig, off, cell, sizeof cell), receiver, who_rank(set),
                op_text(set, os, sizeof os), who_rank(add), op_text(add, oa, sizeof oa));
}

static PLD__NORETURN void report_eq(pld_ctx *c, const char *api, pld_dtensor sig, int receiver,
                                    size_t off, const hz_entry *e)
{
    char cell[96], oa[96], ob[96];
    uint32_t a = atomic_load(&e->w[0]), b = atomic_load(&e->w[1]);
    if (who_rank(b) < who_rank(a)) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    pld__kraise(c, PLD_ERR_CHECK, api,
                "PLD_CHECK=hazards: rank %d waits with Eq on signal '%s' cell %s, which ranks %d "
                "(%s) and %d (%s) write: with several writers the value can pass the expected one "
                "between two polls and the wait never returns; count with AtomicAdd and wait "
                "with Ge",
                receiver, sig.buf->name, cell_text(sig, off, cell, sizeof cell), who_rank(a),
                op_text(a, oa, sizeof oa), who_rank(b), op_text(b, ob, sizeof ob));
}

/* ---- the hooks ------------------------------------------------------------- */

/* pld's own count lines, packed beyond 64 ranks (coll/ll.c): a layout of
 * groups larger than the hardware's, not a program's choice to report */
static int packed_lines(const pld_ctx *c, const pld_window_buffer *buf)
{
    const pld__ll_inbox *in = c->team ? &c->team->ll : &c->sh->ll;
    return buf->id == in->flag_win && in->line_cells * HZ_CELL < HZ_LINE;
}

void pld__hazard_notify(pld_ctx *c, pld_dtensor sig, int wpeer, size_t off, pld_notify_op op)
{
    hz_entry *t = table_of(c, wpeer);
    if (!t || packed_lines(c, sig.buf))
        return;
    int me = c->wrank, id = sig.buf->id;
    uint32_t who = who_make(me, op, off, scope_of(c));
    hz_entry *e = entry_of(c, t, key_make(id, wpeer, 0, off / HZ_CELL));
    if (e) {
        slots_add(e->w, who);
        uint32_t zero = 0;
        if (op == PLD_NOTIFY_SET) {
            atomic_compare_exchange_strong(&e->s[0], &zero, who);
            uint32_t add = atomic_load(&e->add);
            if (add)
                report_mixed(c, sig, wpeer, off, who, add);
        } else {
            atomic_compare_exchange_strong(&e->add, &zero, who);
            uint32_t set = atomic_load(&e->s[0]);
            if (set)
                report_mixed(c, sig, wpeer, off, set, who);
        }
        /* the waiter published its Eq first, or sees this writer */
        if (atomic_load(&e->eq) && atomic_load(&e->w[1]))
            report_eq(c, "pld_notify", sig, wpeer, off, e);
    }
    hz_entry *l = entry_of(c, t, key_make(id, wpeer, 1, off / HZ_LINE));
    if (l) {
        slots_add(l->w, who);
        uint32_t other;
        if (op == PLD_NOTIFY_SET) {
            slots_add(l->s, who);
            other = slots_other(l->w, me); /* anyone else on the line */
        } else {
            other = slots_other(l->s, me); /* someone else Set-writes the line */
        }
        if (other)
            report_line(c, sig, wpeer, off / HZ_LINE, who, other);
    }
}

void pld__hazard_wait_eq(pld_ctx *c, pld_dtensor sig, size_t off, int32_t expected)
{
    (void)expected;
    hz_entry *t = table_of(c, c->wrank);
    if (!t)
        return;
    hz_entry *e = entry_of(c, t, key_make(sig.buf->id, c->wrank, 0, off / HZ_CELL));
    if (!e)
        return;
    uint32_t zero = 0;
    atomic_compare_exchange_strong(&e->eq, &zero,
                                   who_make(c->wrank, PLD_NOTIFY_SET, off, scope_of(c)));
    if (atomic_load(&e->w[1])) /* a second writer came first */
        report_eq(c, "pld_wait", sig, c->wrank, off, e);
}

void pld__hazard_limit_check(pld_ctx *c, const char *api, pld__hazard_limit kind, uint64_t need,
                             const char *what)
{
    /* builtins size their own staging to the UB of the profile they run on */
    if (kind == PLD__HZ_UB && c->depth > 0)
        return;
    const pld__profile *p;
    for (int i = 0; (p = pld__profile_stock(i)) != NULL; i++) {
        uint64_t lim = 0, here = 0;
        const char *unit = "";
        switch (kind) {
        case PLD__HZ_UB:
            lim = p->ub_bytes, here = c->w->profile.ub_bytes, unit = "bytes of UB";
            break;
        case PLD__HZ_SQ:
            if (!p->urma)
                continue;
            lim = (uint64_t)p->sq_depth, here = (uint64_t)c->w->profile.sq_depth;
            unit = "WQEBBs of SQ";
            break;
        case PLD__HZ_CORES:
            lim = (uint64_t)p->aiv_cores, here = (uint64_t)c->w->profile.aiv_cores;
            unit = "AIV cores";
            break;
        }
        if (need <= lim || need > here) /* beyond this world's own limit: its own check says so */
            continue;
        pld__kraise(c, PLD_ERR_CHECK, api,
                    "PLD_CHECK=hazards: %s needs %llu %s; this world (%s) allows %llu, but the "
                    "stock %s profile has %llu, so the same code fails there",
                    what, (unsigned long long)need, unit, c->w->profile.name,
                    (unsigned long long)here, p->name, (unsigned long long)lim);
    }
}
