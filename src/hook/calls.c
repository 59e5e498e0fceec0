/* SPDX-License-Identifier: Apache-2.0 */
/* The hook layer's side of a builtin call: its description for the
 * agreement check, and what every observer does when it starts, completes
 * its first round and returns (see hook.h). */
#include <stdio.h>
#include <string.h>

#include "check/agree.h"
#include "check/check.h"
#include "core/team.h"
#include "hook/hook.h"
#include "trace/ir_rec.h"
#include "trace/trace.h"

/* The builtins, by kind (the index travels, the names are printed), with
 * their window/tensor arguments in the order the builtin adds them. */
static const struct kind {
    const char *api;
    const char *args[PLD__FP_ARGS];
} kinds[] = {
    {"pld_barrier", {NULL}},
    {"pld_broadcast", {"data"}},
    {"pld_allgather", {"target", "local"}},
    {"pld_allgather_inplace", {"target"}},
    {"pld_reduce_scatter", {"data"}},
    {"pld_allreduce", {"data"}},
    {"pld_all_to_all", {"target", "input"}},
    {"pld_all_to_all_v", {"target", "recv_counts", "input"}},
    {"pld_indexed_all_to_all_v", {"target", "send_counts", "input"}},
    {"pld_indexed_combine", {"expert_out", "send_counts", "output"}},
    {"pld_moe_dispatch", {"target", "recv_counts", "input"}},
    {"pld_moe_combine", {"expert_out", "out", "recv_counts"}},
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))
_Static_assert(NKINDS == PLD__NKINDS, "one table row per pld__kind, in its order");

const char *pld__fp_kind_name(int32_t k)
{
    return k >= 0 && k < NKINDS ? kinds[k].api : "an unknown builtin";
}

const char *pld__fp_arg_name(int32_t k, int i)
{
    if (k >= 0 && k < NKINDS && i >= 0 && i < PLD__FP_ARGS && kinds[k].args[i])
        return kinds[k].args[i];
    return "argument";
}

void pld__fp_init(pld__coll_fp *fp, pld__kind kind, const char *api, pld_dtensor signal)
{
    memset(fp, 0, sizeof *fp);
    fp->api = api;
    fp->wire.kind = (int32_t)kind;
    fp->wire.lanes = signal.ndim == 1 ? 1 : (int32_t)signal.shape[1];
    fp->wire.signal = signal.buf->id;
    fp->wire.op = fp->wire.mode = fp->wire.root = fp->wire.core_num = -1;
    fp->wire.m = -1;
}

static pld__fp_arg *next_arg(pld__coll_fp *fp)
{
    if (fp->wire.nargs >= PLD__FP_ARGS)
        return NULL;
    return &fp->wire.arg[fp->wire.nargs++];
}

void pld__fp_window(pld__coll_fp *fp, pld_dtensor t)
{
    pld__fp_arg *a = next_arg(fp);
    if (!a)
        return;
    a->win = t.buf->id;
    a->dtype = (int32_t)t.dtype;
    a->ndim = t.ndim;
    for (int i = 0; i < t.ndim && i < PLD_MAX_DIMS; i++)
        a->shape[i] = t.shape[i];
}

void pld__fp_tensor(pld__coll_fp *fp, pld_tensor t, int rows_free)
{
    pld__fp_arg *a = next_arg(fp);
    if (!a)
        return;
    a->win = -1;
    a->rows_free = rows_free;
    a->dtype = (int32_t)t.dtype;
    a->ndim = t.ndim;
    for (int i = 0; i < t.ndim && i < PLD_MAX_DIMS; i++)
        a->shape[i] = t.shape[i];
    if (rows_free && t.ndim > 0)
        a->shape[0] = 0; /* each rank's own row count */
}

void pld__call_enter(pld_ctx *c, const char *api, pld_dtensor signal, const pld__coll_fp *fp,
                     const char *fmt, va_list ap)
{
    if (c->obs & PLD__OBS_LIST) {
        char args[256];
        vsnprintf(args, sizeof args, fmt, ap);
        if (c->team) { /* the peers below are group ranks: say whose */
            char who[96];
            pld__ctx_who(c, who, sizeof who);
            pld__ir_emit(c->ir, c->depth, "call %s(%s) as %s, %d ranks", api, args, who, c->nranks);
        } else {
            pld__ir_emit(c->ir, c->depth, "call %s(%s)", api, args);
        }
    }
    if (c->rec)
        pld__rec_call(c, api);
    /* before the first notify of the call, which releases it to the peers */
    if (c->obs & PLD__OBS_AGREE)
        pld__agree_publish(c, fp);
    pld__scope_push(c, api);
    if (c->obs & PLD__OBS_SIGNALS) {
        /* the checker's barriers around each call would order the ranks
         * far more than the builtins do and hide the very bugs the
         * schedule explorer looks for: under the explorer the signal is
         * only marked here, and checked when every rank has finished */
        if (c->obs & PLD__OBS_SCHED)
            atomic_store_explicit(&signal.buf->signal_use, 1, memory_order_relaxed);
        else
            pld__signal_check(c, signal, 0);
    }
}

void pld__call_round_slow(pld_ctx *c)
{
    pld__agree_verify(c); /* every peer has now published its description */
}

void pld__call_leave(pld_ctx *c, pld_dtensor signal)
{
    if ((c->obs & PLD__OBS_SIGNALS) && !(c->obs & PLD__OBS_SCHED))
        pld__signal_check(c, signal, 1);
    if (c->rec)
        pld__rec_return(c);
    pld__scope_pop(c);
    if (c->obs & PLD__OBS_AGREE)
        pld__agree_leave(c);
}

int pld__call_explain_stuck(pld_world *w, char *out, size_t n)
{
    return pld__agree_explain(w, 0, out, n); /* a timeout: ranks may only be slow */
}

void pld__note(pld_ctx *c, const char *fmt, ...)
{
    if (!(c->obs & PLD__OBS_LIST))
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pld__ir_emit(c->ir, c->depth, "%s", line);
}

uint64_t pld__slice_begin(const pld_ctx *c)
{
    return pld__trace_begin(c);
}

void pld__note_urma(pld_ctx *c, int peer, int64_t rows, int64_t ranges, int64_t sqes,
                    int64_t wqebbs, int64_t nops, int64_t doorbells, int64_t cqes, uint64_t t0)
{
    pld__note(c,
              "urma.send -> peer%d: %lld rows in %lld ranges, %lld SQEs (%lld WQEBBs, %lld NOP), "
              "%lld doorbells, wait %lld CQE",
              peer, (long long)rows, (long long)ranges, (long long)sqes, (long long)wqebbs,
              (long long)nops, (long long)doorbells, (long long)cqes);
    /* one trace slice per peer send: the SQEs, doorbells and the CQE wait */
    pld__trace_urma(c, peer, rows, sqes, wqebbs, nops, doorbells, t0);
}
