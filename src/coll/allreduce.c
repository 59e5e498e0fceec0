/* SPDX-License-Identifier: Apache-2.0 */
/* pld_allreduce: argument checks and the choice of algorithm. */
#include <string.h>

#include "coll/ll.h"
#include "trace/trace.h"

void pld_allreduce_cores(pld_ctx *c, pld_dtensor data, pld_dtensor signal, pld_reduce_op op,
                         pld_allreduce_mode mode, int core_num)
{
    PLD__CTX_CHECK(c, "pld_allreduce_cores");
    static const char api[] = "pld_allreduce";
    static const char *const ops[] = {"sum", "max", "min", "prod"};
    const char *mode_name = pld__allreduce_mode_name(mode);
    pld__check_live(c);
    pld__check_dtensor(c, api, "data", data);
    pld__coll_check_reduce(c, api, data.dtype, op);
    if (!strcmp(mode_name, "?"))
        pld__kraise(c, PLD_ERR_ARG, api,
                    "mode %d is not a pld_allreduce_mode (Mesh=0, Ring=1, Auto=16, RsAg=17, "
                    "Rabenseifner=18)",
                    (int)mode);
    if (core_num < 1 || core_num > c->w->profile.aiv_cores)
        pld__kraise(c, PLD_ERR_ARG, api, "core_num %d not in [1, %d] (AIV cores of %s)", core_num,
                    c->w->profile.aiv_cores, c->w->profile.name);
    if ((mode == PLD_RING || mode == PLD_RS_AG || mode == PLD_RABENSEIFNER) && core_num > 1)
        pld__kraise(c, PLD_ERR_UNSUPPORTED, api,
                    "the %s runs on one core per rank; use PLD_MESH for core_num %d",
                    mode == PLD_RING    ? "ring"
                    : mode == PLD_RS_AG ? "reduce-scatter + allgather"
                                        : "Rabenseifner allreduce",
                    core_num);
    if (data.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "data and signal are the same window '%s'",
                    data.buf->name);
    if (mode != PLD_RING)
        pld__coll_check_signal(c, api, signal, core_num);
    else
        pld__allreduce_ring_check_signal(c, api, signal);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_ALLREDUCE, api, signal);
    pld__fp_window(&fp, data);
    fp.wire.op = (int32_t)op;
    fp.wire.mode = (int32_t)mode;
    fp.wire.core_num = core_num;
    pld__coll_enter(c, api, signal, &fp, "%s, %s, %s, %s", data.buf->name, signal.buf->name,
                    ops[op], mode_name);
    /* auto: one round (ll.h) when it is small, else the mesh, the two-phase
     * form or recursive halving and doubling, whichever the cost model
     * predicts fastest (pld__allreduce_auto_pick) */
    if (mode == PLD_AUTO && core_num == 1 && !pld__ll_allreduce(c, api, data, op))
        mode = pld__allreduce_auto_pick(c, data);
    if (mode == PLD_AUTO && core_num == 1)
        ; /* done on the one-round path */
    else if (mode == PLD_RING)
        pld__allreduce_ring(c, api, data, signal, op);
    else if (mode == PLD_RS_AG)
        pld__allreduce_rs_ag(c, api, data, signal, op);
    else if (mode == PLD_RABENSEIFNER)
        pld__allreduce_rabenseifner(c, api, data, signal, op);
    else if (core_num > 1)
        pld__allreduce_mesh_cores(c, api, data, signal, op, core_num);
    else
        pld__allreduce_mesh(c, api, data, signal, op);
    pld__coll_leave(c, signal);
}

/* Above the one-round size PLD_AUTO asks the cost model (src/tune/) with
 * the world's measured parameters: the mesh reads (P-1) times all of the
 * data in 1 + chunks rounds, the two-phase form 2(P-1)/P of it in 3 rounds
 * (2 through its owners), recursive halving and doubling as much in one
 * round and a chain of 2 log2 Q steps with one partner each. The ring is
 * no candidate: it needs a signal of its own shape, [2(P-1), P]. Every
 * input is the same on every rank (the profile's UB, not the free UB), so
 * every rank chooses alike. */
pld_allreduce_mode pld__allreduce_auto_pick(pld_ctx *c, pld_dtensor data)
{
    size_t esz = pld_dtype_size(data.dtype);
    size_t bytes = (size_t)pld__dtensor_numel(data) * esz;
    double pred[PLD_TUNE_ALLREDUCE_PREDICTIONS];
    pld_allreduce_mode m = pld_tune_allreduce_auto(&c->w->sh->tune, c->nranks, bytes, esz,
                                                   c->w->profile.ub_bytes, pred);
    int rule, line = pld__coll_rule(c, PLD_RULE_ALLREDUCE, bytes, pld__allreduce_mode_name, &rule);
    if (line)
        m = (pld_allreduce_mode)rule;
    int k = m == PLD_RS_AG ? 2 : m == PLD_RABENSEIFNER ? 3 : 0;
    const char *name = pld__allreduce_mode_name(m);
    if (!line)
        pld__note(c,
                  "auto: %s (predicted %.1f us; mesh %.1f us, rs_ag %.1f us, rabenseifner %.1f "
                  "us, ring %.1f us; %zu B, %d ranks)",
                  name, pred[k], pred[0], pred[2], pred[3], pred[1], bytes, c->nranks);
    /* the trace keeps the name, not a copy: a literal */
    pld__trace_choice(c,
                      k == 2   ? "auto: rs_ag"
                      : k == 3 ? "auto: rabenseifner"
                               : "auto: mesh",
                      pred[k]);
    return m;
}

const char *pld__allreduce_mode_name(int32_t mode)
{
    return mode == PLD_MESH           ? "mesh"
           : mode == PLD_RING         ? "ring"
           : mode == PLD_AUTO         ? "auto"
           : mode == PLD_RS_AG        ? "rs_ag"
           : mode == PLD_RABENSEIFNER ? "rabenseifner"
                                      : "?";
}

void pld_allreduce(pld_ctx *c, pld_dtensor data, pld_dtensor signal, pld_reduce_op op,
                   pld_allreduce_mode mode)
{
    PLD__CTX_CHECK(c, "pld_allreduce");
    pld_allreduce_cores(c, data, signal, op, mode, 1);
}
