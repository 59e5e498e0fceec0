/* Broadcast, pull form, rooted rounds.
 *
 * The root has staged `data`; afterwards every rank's data equals the root's.
 *
 * Algorithm: round 1, the root tells every non-root "staged" (cell [root]
 * of the non-root's signal); each non-root pulls the whole window from the
 * root and answers "pulled" (cell [me] of the root's signal); round 2, the
 * root waits for every "pulled", after which it may change its data again.
 * Each rank takes back the credits of its own cells. Only the root waits for
 * everyone (P-1 waits); a non-root waits once -- two full barriers would
 * make every rank wait for every other twice, which oversubscribed costs a
 * wake-up per wait.
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
    int me = c->rank;
    if (me == root) {
        /* round 1: my data is staged */
        for (int q = 0; q < c->nranks; q++)
            if (q != me)
                pld__notify_checked(c, signal, q, me, 0, 1, PLD_NOTIFY_ATOMIC_ADD);
        /* round 2: every non-root has pulled; take the credits back */
        for (int q = 0; q < c->nranks; q++)
            if (q != me)
                pld__wait_checked(c, signal, q, 0, 1, PLD_WAIT_GE);
        for (int q = 0; q < c->nranks; q++)
            if (q != me)
                pld__notify_checked(c, signal, me, q, 0, -1, PLD_NOTIFY_ATOMIC_ADD);
    } else {
        pld__wait_checked(c, signal, root, 0, 1, PLD_WAIT_GE);
        pld_dtensor flat = pld__dtensor_flat(data);
        pld_tensor mine = pld__tensor_2d(pld_local(c, data), 1, n);
        pld__coll_get_rows(c, api, mine, 0, flat, root, 0, 1);
        pld__notify_checked(c, signal, root, me, 0, 1, PLD_NOTIFY_ATOMIC_ADD);
        pld__notify_checked(c, signal, me, root, 0, -1, PLD_NOTIFY_ATOMIC_ADD);
    }
    pld__coll_leave(c, signal);
}
