/* SPDX-License-Identifier: Apache-2.0 */
/* The hook layer's side of a world's and a launch's life (core/hooks.h):
 * where the checkers, the trace, the listing and the schedule explorer are
 * set up, started per agent and finished per launch. The ground floor calls
 * only this table; which observers a kernel has is decided here, once per
 * launch (pld_ctx.obs). */
#include <stdio.h>
#include <string.h>

#include "check/agree.h"
#include "check/check.h"
#include "check/explore.h"
#include "coll/ll.h"
#include "coll/sync.h"
#include "core/hooks.h"
#include "hook/hook.h"
#include "trace/ir_rec.h"
#include "trace/trace.h"
#include "tune/tune.h"

static pld_status world_begin(pld_world *w)
{
    if (!(w->ir = pld__ir_new()))
        return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
    return pld__sched_init(w);
}

static pld_status world_ready(pld_world *w)
{
    pld_status st;
    /* the checkers' windows are made by every process together (mpi): a
     * process that would make other ones would leave the rest waiting */
    if (!w->tp->host_agree(w, w->check)) {
        const unsigned c = w->check;
        return pld__init_fail(
            PLD_ERR_ARG,
            "pld_world_init: the checks (PLD_CHECK, pld_config.check) differ "
            "between the processes of this job (here: signals %s, race %s, "
            "hazards %s, arguments %s): every process must run with the "
            "same ones",
            c & PLD_CHECK_SIGNALS ? "on" : "off", c & PLD_CHECK_RACE ? "on" : "off",
            c & PLD_CHECK_HAZARDS ? "on" : "off", c & PLD_CHECK_NOARGS ? "off" : "on");
    }
    if ((st = pld__trace_world_ready(w)) != PLD_OK)
        return st;
    if ((st = pld__svg_world_ready(w)) != PLD_OK)
        return st;
    if (w->check & PLD_CHECK_RACE) {
        if (strcmp(w->tp->name, "thread"))
            return pld__init_fail(PLD_ERR_UNSUPPORTED,
                                  "pld_world_init: the race checker (PLD_CHECK=race) runs on the "
                                  "thread transport, not '%s'",
                                  w->tp->name);
        if (!(w->race = pld__race_new(w->nranks)))
            return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
    }
    if (w->check & PLD_CHECK_SIGNALS) {
        pld_window_buffer *cb;
        int64_t shape[2] = {w->nranks, 1};
        st = pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)w->nranks, "pld.check", &cb);
        if (st == PLD_OK)
            st = pld_window(cb, PLD_INT32, 2, shape, &w->check_signal);
        if (st != PLD_OK)
            return pld__init_fail(st, "pld_world_init: checker signal: %s", w->errmsg);
    }
    if ((w->check & PLD_CHECK_HAZARDS) && (st = pld__hazard_init(w)) != PLD_OK)
        return pld__init_fail(st, "pld_world_init: hazard lints: %s", w->errmsg);
    if (!(w->check & PLD_CHECK_NOARGS) && (st = pld__agree_init(w)) != PLD_OK)
        return pld__init_fail(st, "pld_world_init: agreement check: %s", w->errmsg);
    if ((st = pld__ll_world_init(w)) != PLD_OK)
        return pld__init_fail(st, "pld_world_init: one-round inboxes: %s", w->errmsg);
    if ((st = pld__tune_world_init(w)) != PLD_OK)
        return pld__init_fail(st, "pld_world_init: %s", w->errmsg);
    if ((st = pld__rules_world_init(w)) != PLD_OK)
        return pld__init_fail(st, "pld_world_init: %s", w->errmsg);
    if ((st = pld__sync_world_init(w)) != PLD_OK)
        return pld__init_fail(st, "pld_world_init: %s", w->errmsg);
    return PLD_OK;
}

static void world_end(pld_world *w)
{
    pld__sched_fini(w);
    pld__race_free(w->race);
    w->race = NULL;
    pld__ir_free(w->ir);
    w->ir = NULL;
    pld__svg_free(w);
}

static void launch_begin(pld_world *w)
{
    /* the checker's own signal may hold credits of an aborted launch; no
     * rank runs now, so it can simply be cleared */
    pld__signal_check_clear(w);
    pld__ll_launch_begin(w);  /* flags a past launch's one-round calls set */
    pld__race_reset(w->race); /* launches are ordered by the host: start clean */
    pld__hazard_launch_begin(w);
    pld__ir_reset(w->ir);
    pld__sched_launch_begin(w);
}

static pld_status launch_end(pld_world *w, pld_status st)
{
    char cleared[256];
    pld__ll_launch_end(w, st);
    if (st != PLD_OK && pld__agree_after_abort(w, cleared, sizeof cleared)) {
        size_t k = strlen(w->errmsg);
        snprintf(w->errmsg + k, sizeof w->errmsg - k,
                 " [signal %s of the interrupted builtin call cleared for the next launch]",
                 cleared);
    }
    if (st == PLD_OK && (w->check & PLD_CHECK_SIGNALS) && w->sched_mode)
        st = pld__signal_check_launch(w);
    pld__sched_launch_end(w, st);
    if (w->ir_print && pld_world_hosts_rank(w, 0))
        pld_ir_dump(w, stdout);
    return pld__trace_flush(w, pld__svg_flush(w, st));
}

/* The observers of an agent: decided once, when it starts. */
static unsigned observers(const pld_ctx *c)
{
    unsigned o = 0;
    if (c->ir)
        o |= PLD__OBS_LIST;
    if (c->rec)
        o |= PLD__OBS_SVG;
    if (c->w->race)
        o |= PLD__OBS_RACE;
    if (c->trace)
        o |= PLD__OBS_TRACE;
    if (c->w->sched_mode)
        o |= PLD__OBS_SCHED;
    if (c->w->sh->agree_win >= 0)
        o |= PLD__OBS_AGREE;
    if (c->w->check & PLD_CHECK_SIGNALS)
        o |= PLD__OBS_SIGNALS;
    if (c->w->sh->hazard_win >= 0)
        o |= PLD__OBS_HAZARDS;
    return o;
}

static void agent_begin(pld_ctx *c)
{
    pld_world *w = c->w;
    if (c->core == 0) { /* a rank (a core thread got its trace from core_prepare) */
        c->ir = (c->wrank == 0 && atomic_load(&w->ir_on)) ? w->ir : NULL;
        c->trace = w->trace_path ? pld__trace_open() : NULL;
        c->rec = w->ir_svg_path ? pld__rec_open() : NULL; /* every rank: the picture */
        if (c->ir)
            pld__ir_reset(c->ir); /* here: rank 0 may live in another process */
    }
    c->obs = observers(c);
    c->log_calls = pld__log_on(PLD__LOG_TRACE, PLD__SUB_COLL);
    pld__sched_agent_begin(c);
}

static void kernel_begin(pld_ctx *c)
{
    c->ll_epoch = 0; /* the flags were cleared before the launch */
    pld__agree_rank_begin(c);
}

static void agent_end(pld_ctx *c)
{
    pld__agree_rank_end(c);
    pld__sched_agent_end(c);
    pld__trace_close(c);
    pld__rec_close(c);
}

static void core_prepare(pld_ctx *c, pld_ctx *k, int core)
{
    k->trace = c->trace ? pld__trace_open_core(c->trace, core) : NULL;
    pld__sched_core_ready(c, core);
}

static void join_begin(pld_ctx *c)
{
    pld__sched_join_begin(c);
}

static uint64_t scope_begin(const pld_ctx *c)
{
    return pld__trace_begin(c);
}

static void scope_end(pld_ctx *c, const char *name, uint64_t t0)
{
    pld__trace_end(c, name, t0, -1);
}

static void world_closing(pld_world *w)
{
    pld__trace_world_end(w); /* the merge of per-rank traces needs the transport */
}

const pld__life_hooks pld__hook_life = {
    .size = sizeof(pld__life_hooks),
    .world_begin = world_begin,
    .world_ready = world_ready,
    .world_end = world_end,
    .launch_begin = launch_begin,
    .launch_end = launch_end,
    .agent_begin = agent_begin,
    .kernel_begin = kernel_begin,
    .agent_end = agent_end,
    .core_prepare = core_prepare,
    .join_begin = join_begin,
    .scope_begin = scope_begin,
    .scope_end = scope_end,
    .world_closing = world_closing,
};

pld_status pld_world_init(pld_world **out, const pld_config *cfg)
{
    return pld__world_create(out, cfg, &pld__hook_life);
}
