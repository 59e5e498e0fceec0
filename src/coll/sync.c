/* SPDX-License-Identifier: Apache-2.0 */
/* Which synchronisation form the builtins of a group use (PLD_SYNC), read
 * once per world and chosen once per context; the forms themselves are in
 * credit.c. */
#include "coll/sync.h"
#include "tune/tune.h"
#include "core/handles.h"
#include "core/settings.h"

/* PLD_TREE_FANOUT=auto where every rank has a CPU of its own */
#define AUTO_FANOUT 16

pld_status pld__sync_world_init(pld_world *w)
{
    char msg[256];
    pld__setting_value form, fan;
    if (pld__setting_read(PLD__S_SYNC, &form, msg, sizeof msg) != PLD_OK ||
        pld__setting_read(PLD__S_TREE_FANOUT, &fan, msg, sizeof msg) != PLD_OK)
        return pld__world_fail(w, PLD_ERR_ARG, "%s", msg);
    /* every process must synchronise alike, or the first builtin hangs */
    if (!w->tp->host_agree(w, (uint64_t)form.num << 32 | (uint64_t)fan.num))
        return pld__world_fail(w, PLD_ERR_ARG,
                               "PLD_SYNC or PLD_TREE_FANOUT differs between the processes of "
                               "this job (here %s and %s): every process must run with the "
                               "same values",
                               form.from_env ? form.str : "unset",
                               fan.from_env ? fan.str : "unset");
    w->sh->sync_form = (int32_t)form.num;
    w->sh->tree_fanout = (int32_t)fan.num;
    return PLD_OK;
}

int pld__tree_children(int me, int p, int k)
{
    int64_t first = (int64_t)me * k + 1;
    if (first >= p)
        return 0;
    return (int)((first + k <= p ? first + k : p) - first);
}

void pld__sync_info(pld_sync_form form, int p, int rank, int fanout, pld_sync_info *out)
{
    *out = (pld_sync_info){.form = form, .fanout = fanout};
    if (p < 2)
        return;
    switch (form) {
    case PLD_SYNC_DISSEMINATION:
        out->hops = out->notifies = out->waits = out->epilogue = pld__ceil_log2(p);
        out->group_notifies = (long long)p * out->hops;
        break;
    case PLD_SYNC_TREE: {
        int depth = 0; /* levels below the root of the complete tree */
        for (int64_t last = 0; last < p - 1; last = last * fanout + fanout)
            depth++;
        int nch = pld__tree_children(rank, p, fanout);
        out->hops = 2 * depth;
        out->notifies = nch + (rank > 0);
        out->waits = (nch > 0) + (rank > 0);
        out->epilogue = out->waits;
        out->group_notifies = 2 * ((long long)p - 1);
        break;
    }
    default:
        out->form = PLD_SYNC_FULL;
        out->hops = 1;
        out->notifies = out->waits = out->epilogue = p - 1;
        out->group_notifies = (long long)p * (p - 1);
        break;
    }
}

/* hops x round_us: the latency of the chain of notifies;
 * blocks x (P - cpus) x handover_us: ranks beyond the CPUs take turns on
 * them, once for every wait a rank blocks in (a rank of the full form
 * blocks once: its first wait; the others are met by then; dissemination
 * blocks in every round; the tree in each of its waits);
 * notifies x transfer_us / cpus: every notify costs a transfer, spread
 * over the CPUs (what makes the full form quadratic);
 * a chain of hops passes the CPUs on once per hop when ranks share them;
 * and for the full form while every rank has a CPU, peer_us per rank
 * beyond two (the measured contention of P-1 notifies on one signal). */
double pld__sync_predict_us(const pld_tune *t, pld_sync_form form, int p, int fanout)
{
    if (p < 2)
        return 0;
    pld_sync_info in;
    pld__sync_info(form, p, 0, fanout, &in);
    int cpus = t->cpus > 0 ? t->cpus : 1;
    double blocks = 1, over = p > cpus ? (double)(p - cpus) : 0;
    double us = in.hops * t->round_us;
    if (in.form == PLD_SYNC_FULL) {
        int with_cpu = p < cpus ? p : cpus;
        us += t->peer_us * (with_cpu > 2 ? with_cpu - 2 : 0);
    } else if (in.form == PLD_SYNC_DISSEMINATION) {
        blocks = in.hops;
    } else {
        /* every rank but the root waits for its release, every parent for
         * its children's arrivals */
        double parents = (double)((p - 1 + fanout - 1) / fanout);
        blocks = (p - 1 + parents) / p;
    }
    double notify_us = t->transfer_us > 0 ? t->transfer_us : 0.05;
    /* a chain of hops hands the CPUs over once per hop when ranks share them */
    double chain = in.form != PLD_SYNC_FULL && over > 0 ? in.hops * t->handover_us : 0;
    return us + chain + blocks * over * t->handover_us +
           (double)in.group_notifies * notify_us / cpus;
}

pld_sync_form pld__sync_pick(const pld_tune *t, int p, int fanout)
{
    pld_sync_form pick = PLD_SYNC_FULL;
    if (p <= 2)
        return pick;
    double best = pld__sync_predict_us(t, PLD_SYNC_FULL, p, fanout);
    for (int f = PLD_SYNC_DISSEMINATION; f <= PLD_SYNC_TREE; f++) {
        double us = pld__sync_predict_us(t, (pld_sync_form)f, p, fanout);
        if (us < best) {
            best = us;
            pick = (pld_sync_form)f;
        }
    }
    return pick;
}

int pld__sync_fanout(const pld__world_shared *sh, int p)
{
    if (sh->tree_fanout > 0)
        return sh->tree_fanout;
    /* ranks sharing CPUs take turns: a level of the tree costs a turn of
     * every rank, so one level (rank 0 gathers and releases) is fastest */
    int cpus = sh->tune.cpus > 0 ? sh->tune.cpus : 1;
    return p > cpus ? (p > 1 ? p - 1 : 1) : AUTO_FANOUT;
}

static pld_sync_form form_for(const pld__world_shared *sh, int p)
{
    pld_sync_form f = (pld_sync_form)sh->sync_form;
    int rule;
    if (f != PLD_SYNC_AUTO)
        return f;
    if (sh->rules.n && pld__rules_pick(&sh->rules, PLD_RULE_SYNC, p, 0, &rule))
        return (pld_sync_form)rule; /* PLD_RULES (src/tune/rules.c) */
    return pld__sync_pick(&sh->tune, p, pld__sync_fanout(sh, p));
}

pld_sync_form pld__sync_form_of(pld_ctx *c)
{
    if (PLD__UNLIKELY(!c->sync)) {
        c->sync_fanout = pld__sync_fanout(c->sh, c->nranks);
        c->sync = (int)form_for(c->sh, c->nranks);
    }
    return (pld_sync_form)c->sync;
}

pld_status pld_world_sync(const pld_world *w, int nranks, int rank, pld_sync_info *out)
{
    if (!out)
        return PLD_ERR_ARG;
    if (!pld__world_is_live(w) || nranks < 1 || nranks > w->nranks || rank < 0 || rank >= nranks)
        return PLD_ERR_ARG;
    pld__sync_info(form_for(w->sh, nranks), nranks, rank, pld__sync_fanout(w->sh, nranks), out);
    return PLD_OK;
}

pld_status pld_sync_plan(pld_sync_form form, int nranks, int rank, int fanout, pld_sync_info *out)
{
    if (!out || form < PLD_SYNC_FULL || form > PLD_SYNC_TREE || nranks < 1 || rank < 0 ||
        rank >= nranks || fanout < 1)
        return PLD_ERR_ARG;
    pld__sync_info(form, nranks, rank, fanout, out);
    return PLD_OK;
}

const char *pld_sync_form_name(pld_sync_form form)
{
    switch (form) {
    case PLD_SYNC_FULL:
        return "full";
    case PLD_SYNC_DISSEMINATION:
        return "dissemination";
    case PLD_SYNC_TREE:
        return "tree";
    case PLD_SYNC_AUTO:
        return "auto";
    }
    return "?";
}
