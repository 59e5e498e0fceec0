/* pld_allreduce: argument checks and the choice of algorithm. */
#include "coll/coll_util.h"

void pld_allreduce(pld_ctx *c, pld_dtensor data, pld_dtensor signal, pld_reduce_op op,
                   pld_allreduce_mode mode)
{
    static const char api[] = "pld_allreduce";
    static const char *const ops[] = {"sum", "max", "min", "prod"};
    pld__check_live(c);
    pld__check_dtensor(c, api, "data", data);
    pld__coll_check_reduce(c, api, data.dtype, op);
    if (mode != PLD_MESH && mode != PLD_RING)
        pld__kraise(c, PLD_ERR_ARG, api, "mode %d is not a pld_allreduce_mode (Mesh=0, Ring=1)",
                    (int)mode);
    if (data.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "data and signal are the same window '%s'",
                    data.buf->name);
    if (mode == PLD_MESH) {
        pld__coll_check_signal(c, api, signal, 1);
        pld__coll_enter(c, api, signal, "%s, %s, %s, mesh", data.buf->name, signal.buf->name, ops[op]);
        pld__allreduce_mesh(c, api, data, signal, op);
    } else {
        pld__coll_enter(c, api, signal, "%s, %s, %s, ring", data.buf->name, signal.buf->name, ops[op]);
        pld__allreduce_ring(c, api, data, signal, op);
    }
    pld__coll_leave(c, signal);
}
