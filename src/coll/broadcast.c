/* Broadcast, pull form.
 *
 * The root has staged `data`; afterwards every rank's data equals the root's.
 *
 * Algorithm: barrier round 1 says the root's data is staged; every non-root
 * pulls the whole window from the root; barrier round 2 says every pull is
 * done, so the root may change its data again. Epilogue takes 2 credits.
 * Cost card: bytes_from_peers = N on every non-root, 0 on the root; 2 rounds. */
#include "coll/coll_util.h"

void pld_broadcast(pld_ctx *c, pld_dtensor data, pld_dtensor signal, int root)
{
    static const char api[] = "pld_broadcast";
    pld__check_live(c);
    pld__check_dtensor(c, api, "data", data);
    pld__coll_check_signal(c, api, signal, 1);
    if (root < 0 || root >= c->nranks)
        pld__kraise(c, PLD_ERR_ARG, api, "root %d is not a rank of this world [0,%d)", root,
                    c->nranks);
    if (data.buf == signal.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "data and signal are the same window '%s'",
                    data.buf->name);
    pld__coll_enter(c, api, signal, "%s, %s, root=%d", data.buf->name, signal.buf->name, root);
    int64_t n = pld__dtensor_numel(data);
    /* step 1: the root's data is staged */
    pld__credit_barrier(c, signal, 0, 1);
    /* step 2: non-roots pull it */
    if (c->rank != root) {
        pld_dtensor flat = pld__dtensor_flat(data);
        pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
        pld__coll_get_rows(c, api, mine, 0, flat, root, 0, 1);
    }
    /* step 3: every pull is done; then take the 2 credits back */
    pld__credit_barrier(c, signal, 0, 2);
    pld__credit_epilogue(c, signal, 0, 2);
    pld__coll_leave(c, signal);
}
