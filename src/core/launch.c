/* SPDX-License-Identifier: Apache-2.0 */
/* pld_launch and the per-rank kernel trampoline; group failure and abort. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/handles.h"
#include "core/hooks.h"
#include "core/internal.h"
#include "core/team.h"

uint64_t pld__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pld__group_fail(pld_world *w, pld_status st, const char *msg)
{
    pld__world_shared *sh = w->sh;
    int32_t zero = 0;
    if (!atomic_compare_exchange_strong(&sh->err_claimed, &zero, 1))
        return 0;
    snprintf(sh->errmsg, sizeof sh->errmsg, "%s", msg);
    atomic_store_explicit(&sh->abort_status, (int32_t)st, memory_order_seq_cst);
    w->tp->abort(w);
    return 1;
}

/* "rank 1 (device 1): pld_barrier: pld_notify: <message>" */
static void kformat(pld_ctx *c, const char *api, char *msg, size_t size, const char *fmt,
                    va_list ap)
{
    char who[96];
    pld__ctx_who(c, who, sizeof who); /* "rank 5 (team 'tp' rank 1)" in a view */
    int n = c->core > 0 ? snprintf(msg, size, "%s (device %d) core %d: ", who, c->device, c->core)
                        : snprintf(msg, size, "%s (device %d): ", who, c->device);
    /* enclosing builtins first, like a backtrace */
    for (int i = 0; i < c->depth && i < 4 && n < (int)size; i++)
        if (strcmp(c->scope[i], api))
            n += snprintf(msg + n, size - (size_t)n, "%s: ", c->scope[i]);
    if (n < (int)size)
        n += snprintf(msg + n, size - (size_t)n, "%s: ", api);
    if (n < (int)size)
        vsnprintf(msg + n, size - (size_t)n, fmt, ap);
}

static PLD__NORETURN void kraise_msg(pld_ctx *c, pld_status st, const char *msg)
{
    PLD__LOGS(PLD__LOG_WARN, PLD__SUB_COLL, c->wrank, "%s: %s", pld_status_name(st), msg);
    pld__group_fail(c->w, st, msg);
    c->lib_tensors = 0;
    c->agent->raised = st;
    longjmp(c->agent->jb, 1);
}

void pld__kraise(pld_ctx *c, pld_status st, const char *api, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    kformat(c, api, msg, sizeof msg, fmt, ap);
    va_end(ap);
    kraise_msg(c, st, msg);
}

void pld__kexit_aborted(pld_ctx *c)
{
    longjmp(c->agent->jb, 1);
}

void pld_fail(pld_ctx *c, const char *fmt, ...)
{
    PLD__CTX_CHECK(c, "pld_fail");
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    kformat(c, "pld_fail", msg, sizeof msg, fmt, ap);
    va_end(ap);
    kraise_msg(c, PLD_ERR_CHECK, msg);
}

void pld__scope_push(pld_ctx *c, const char *name)
{
    if (c->depth < (int)(sizeof c->scope / sizeof c->scope[0])) {
        c->scope[c->depth] = name;
        c->scope_t0[c->depth] = c->w->hooks->scope_begin(c);
    }
    c->depth++;
}

void pld__scope_pop(pld_ctx *c)
{
    c->depth--;
    if (c->depth < (int)(sizeof c->scope / sizeof c->scope[0]))
        c->w->hooks->scope_end(c, c->scope[c->depth], c->scope_t0[c->depth]);
}

static void free_tiles(pld_ctx *c)
{
    while (c->tiles)
        pld__tile_release(c, c->tiles);
}

void pld__rank_main(pld_world *w, int rank)
{
    /* Heap, not stack: fields change between setjmp and longjmp. */
    pld_ctx *c = calloc(1, sizeof *c);
    pld__agent *ag = pld__agent_at(w->sh, rank, 0);
    if (!c) {
        pld__group_fail(w, PLD_ERR_NOMEM, "out of memory creating a rank context");
    } else {
        c->w = w;
        c->rank = c->wrank = rank;
        c->nranks = w->nranks;
        c->agent = c;
        c->device = w->device_ids[rank];
        c->rs = &w->sh->rank[rank];
        c->ag = ag;
        c->ncores = 1;
        c->sh = w->sh;
        c->tp = w->tp;
        c->ub_cap = w->profile.ub_bytes;
        atomic_store(&ag->state, PLD__RS_RUNNING);
        pld__set_current_ctx(c);
        w->hooks->agent_begin(c);
        if (setjmp(c->agent->jb) == 0) {
            w->hooks->kernel_begin(c);
            w->kernel(c, w->kernel_arg);
        }
        pld__set_current_ctx(NULL);
        pld__views_retire(c);
        free_tiles(c);
        pld__tile_spares_free(c);
        w->hooks->agent_end(c);
        free(c);
    }
    atomic_store(&ag->state, PLD__RS_DONE);
    atomic_fetch_sub(&w->sh->live, 1);
}

/* One launch, once the world is claimed for it. */
static pld_status run_launch(pld_world *w, pld_kernel kernel, void *arg)
{
    pld__world_shared *sh = w->sh;
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    atomic_store(&sh->abort_status, 0);
    atomic_store(&sh->err_claimed, 0);
    atomic_store(&sh->deadlock_claim, 0);
    atomic_store(&sh->detect_next_ns, 0);
    atomic_store(&sh->live, count);
    sh->launch_seq++; /* published to the ranks by the transport's launch */
    sh->errmsg[0] = '\0';
    for (int r = first; r < first + count; r++) {
        for (int b = 0; b < sh->cores; b++) {
            pld__agent *ag = pld__agent_at(sh, r, b);
            memset(&ag->counters, 0, sizeof ag->counters);
            atomic_store(&ag->state, b ? PLD__RS_DONE : PLD__RS_IDLE);
        }
        atomic_store(&sh->rank[r].cores_active, 1);
    }
    w->errmsg[0] = '\0';
    w->kernel = kernel;
    w->kernel_arg = arg;
    w->hooks->launch_begin(w);

    pld_status st = w->tp->launch(w);
    if (st != PLD_OK)
        return st; /* the transport wrote w->errmsg */
    st = (pld_status)atomic_load(&sh->abort_status);
    if (st != PLD_OK)
        snprintf(w->errmsg, sizeof w->errmsg, "%s", sh->errmsg);
    return w->hooks->launch_end(w, st);
}

pld_status pld_launch(pld_world *w, pld_kernel kernel, void *arg)
{
    pld_status st = pld__world_check(w, "pld_launch");
    if (st != PLD_OK)
        return st;
    pld_ctx *in = pld__current_ctx();
    if (in)
        pld__kraise(in, PLD_ERR_ARG, "pld_launch",
                    "called inside a kernel: launches do not nest (a kernel runs on every rank; "
                    "call the other kernel's function directly, or launch after this one "
                    "returns)");
    if (!kernel)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_launch: kernel is NULL");
    /* a rank of an earlier launch may still run (thread transport): touch nothing */
    if ((st = pld__world_usable(w, "pld_launch")) != PLD_OK)
        return st;
    if (arg && !w->tp->host_visible(w, arg, 1))
        return pld__world_fail(w, PLD_ERR_ARG,
                               "pld_launch: the kernel argument %p is private host memory, which "
                               "ranks of the '%s' transport cannot see; allocate it with "
                               "pld_host_alloc",
                               arg, w->tp->name);
    if ((st = pld__launch_claim(w)) != PLD_OK)
        return st;
    st = run_launch(w, kernel, arg);
    pld__host_leave(w);
    return st;
}

/* ---- kernel-side accessors --------------------------------------------- */

int pld_rank(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_rank");
    return c->rank;
}

int pld_nranks(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_nranks");
    return c->nranks;
}

int pld_device(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_device");
    return c->device;
}

/* Every field is a uint64_t count: sum them all, whatever is added later. */
_Static_assert(sizeof(pld_counters) % sizeof(uint64_t) == 0, "counters are uint64_t fields");
static void counters_add(pld_counters *a, const pld_counters *b)
{
    uint64_t x[sizeof *a / sizeof(uint64_t)], y[sizeof *a / sizeof(uint64_t)];
    memcpy(x, a, sizeof x);
    memcpy(y, b, sizeof y);
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] += y[i];
    memcpy(a, x, sizeof x);
}

/* A rank's counters: the sum over its cores (valid when only core 0 runs). */
static pld_counters rank_counters(pld__world_shared *sh, int rank)
{
    pld_counters sum = {0};
    for (int b = 0; b < sh->cores; b++)
        counters_add(&sum, &pld__agent_at(sh, rank, b)->counters);
    return sum;
}

pld_counters pld_ctx_counters(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_ctx_counters");
    /* inside a multi-core call a core sees its own; otherwise the rank's */
    return c->ncores > 1 ? c->ag->counters : rank_counters(c->sh, c->wrank);
}

pld_status pld_rank_counters(const pld_world *w, int rank, pld_counters *out)
{
    pld_status st = pld__world_check(w, "pld_rank_counters");
    if (st != PLD_OK)
        return st;
    /* the message is the world's mutable state, even through a const handle */
    pld_world *mw = (pld_world *)w;
    if (!out)
        return pld__world_fail(mw, PLD_ERR_ARG, "pld_rank_counters: out is NULL");
    if (rank < 0 || rank >= w->nranks)
        return pld__world_fail(mw, PLD_ERR_ARG,
                               "pld_rank_counters: rank %d is not a rank of this world [0,%d)",
                               rank, w->nranks);
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    if (rank < first || rank >= first + count)
        return PLD_ERR_UNSUPPORTED; /* lives in another process */
    *out = rank_counters(w->sh, rank);
    return PLD_OK;
}
