/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-core calls: core b of B runs on its own thread with its own
 * context (own UB budget, own error exit, own agent state and counters);
 * the calling rank thread is core 0. Cores of a rank share the rank's
 * wake-up word, so a notify to the rank wakes whichever core waits.
 *
 * Errors: a core that fails raises as usual (the group aborts, every core
 * blocked anywhere is released); core 0 always joins every core before it
 * leaves, so no core outlives the call. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/hooks.h"
#include "core/internal.h"
#include "core/team.h"
#include "transport/thread/fiber.h"

typedef struct core_group {
    pld_core_fn fn;
    void *arg;
    pld_ctx *ctx; /* B contexts; [0] unused (core 0 is the caller) */
    pthread_t *tid;
    int started;
} core_group;

typedef struct core_start {
    core_group *g;
    int b;
} core_start;

static void *core_main(void *p)
{
    core_start *s = p;
    pld_ctx *c = &s->g->ctx[s->b];
    pld__set_current_ctx(c);
    c->w->hooks->agent_begin(c);
    if (setjmp(c->agent->jb) == 0)
        s->g->fn(c, s->b, s->g->arg);
    pld__set_current_ctx(NULL);
    pld__views_retire(c);
    while (c->agent->tiles)
        pld__tile_release(c, c->agent->tiles);
    pld__tile_spares_free(c);
    c->w->hooks->agent_end(c);
    atomic_store(&c->ag->state, PLD__RS_DONE);
    free(s);
    return NULL;
}

static void join_all(pld_ctx *c, core_group *g)
{
    atomic_store(&c->ag->state, PLD__RS_JOINING);
    c->w->hooks->join_begin(c);
    for (int b = 1; b <= g->started; b++) {
        /* a rank run as a user-level context lets the other ranks of its
         * thread run meanwhile: the cores may wait for them */
        while (pld__fiber_running() && atomic_load(&g->ctx[b].ag->state) != PLD__RS_DONE)
            pld__fiber_yield(1);
        pthread_join(g->tid[b], NULL);
    }
    atomic_store(&c->ag->state, PLD__RS_RUNNING);
    atomic_store(&c->rs->cores_active, 1);
    c->ncores = 1;
    c->core = 0;
}

void pld__run_cores(pld_ctx *c, const char *api, int ncores, pld_core_fn fn, void *arg)
{
    if (ncores < 1 || ncores > c->w->profile.aiv_cores)
        pld__kraise(c, PLD_ERR_ARG, api, "core_num %d not in [1, %d] (AIV cores of %s)", ncores,
                    c->w->profile.aiv_cores, c->w->profile.name);
    if (c->ncores > 1)
        pld__kraise(c, PLD_ERR_ARG, api, "multi-core calls do not nest");
    if (ncores > 1 && !c->tp->threads_ok(c->w))
        pld__kraise(c, PLD_ERR_UNSUPPORTED, api,
                    "core_num %d needs a thread per core, and the '%s' transport was set up "
                    "without thread support (MPI_THREAD_MULTIPLE not provided)",
                    ncores, c->tp->name);
    if (ncores == 1) {
        fn(c, 0, arg);
        return;
    }
    /* heap, not locals: they must survive a longjmp out of core 0's part */
    core_group *g = calloc(1, sizeof *g);
    pld_ctx *ctx = g ? calloc((size_t)ncores, sizeof *ctx) : NULL;
    pthread_t *tid = ctx ? calloc((size_t)ncores, sizeof *tid) : NULL;
    if (!tid) {
        free(ctx);
        free(g);
        pld__kraise(c, PLD_ERR_NOMEM, api, "out of memory for %d cores", ncores);
    }
    g->fn = fn;
    g->arg = arg;
    g->ctx = ctx;
    g->tid = tid;
    atomic_store(&c->rs->cores_active, ncores);
    c->ncores = ncores;
    /* a core runs kernel code too: the same stack as a rank thread */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, c->w->stack_bytes);
    for (int b = 1; b < ncores; b++) {
        pld_ctx *k = &ctx[b];
        k->w = c->w;
        k->rank = c->rank; /* a view's cores speak for its group too */
        k->nranks = c->nranks;
        k->wrank = c->wrank;
        k->members = c->members;
        k->team = c->team;
        k->agent = k; /* its own exit, tiles and UB */
        k->device = c->device;
        k->rs = c->rs;
        k->sh = c->sh;
        k->tp = c->tp;
        k->ag = pld__agent_at(c->sh, c->wrank, b);
        k->core = b;
        k->ncores = ncores;
        k->ub_cap = c->w->profile.ub_bytes; /* every core has its own UB */
        k->depth = c->depth;
        memcpy(k->scope, c->scope, sizeof k->scope);
        memset(&k->ag->counters, 0, sizeof k->ag->counters);
        atomic_store(&k->ag->state, PLD__RS_RUNNING);
        c->w->hooks->core_prepare(c, k, b);
        core_start *s = malloc(sizeof *s);
        if (s) {
            s->g = g;
            s->b = b;
        }
        if (!s || pthread_create(&tid[b], &attr, core_main, s) != 0) {
            free(s);
            atomic_store(&k->ag->state, PLD__RS_DONE);
            pld__group_fail(c->w, PLD_ERR_SYSTEM, "could not start a core thread");
            break;
        }
        g->started = b;
    }
    pthread_attr_destroy(&attr);

    /* core 0's share runs here, under its own exit so a failure still joins */
    jmp_buf outer;
    memcpy(&outer, &c->agent->jb, sizeof outer);
    int failed = setjmp(c->agent->jb);
    if (!failed && g->started == ncores - 1)
        fn(c, 0, arg);
    memcpy(&c->agent->jb, &outer, sizeof outer);
    join_all(c, g);
    /* counters of the finished cores stay in their agents: the rank's
     * counters are the sum (pld_rank_counters, pld_ctx_counters) */
    free(tid);
    free(ctx);
    free(g);
    if (failed || pld__aborted(c))
        pld__kexit_aborted(c);
}

int pld_core(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_core");
    return c->core;
}

int pld_ncores(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_ncores");
    return c->ncores;
}
