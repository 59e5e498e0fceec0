/* SPDX-License-Identifier: Apache-2.0 */
/* A launch aborted inside a builtin leaves credits in that builtin's
 * signal; pld clears them, so the next launch of a correct kernel on the
 * same signal runs. The call numbers of the agreement check restart with
 * every launch: an earlier launch's later-numbered call must not hide the
 * interrupted one (it did, and the next launch then failed with a false
 * "the signal holds credits of an earlier call"). */
#include <stdatomic.h>

#include "test_util.h"

typedef struct args {
    pld_dtensor sig, data;
    _Atomic int slow_rank; /* -1: nobody is late */
} args;

static void three_builtins(pld_ctx *c, void *arg)
{
    args *a = arg;
    if (pld_rank(c) == atomic_load(&a->slow_rank))
        tu_sleep_ms(500);
    pld_barrier(c, a->sig);
    pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_MESH);
    pld_barrier(c, a->sig);
}

/* A correct launch; a timeout on a starved machine is retried, a wrong
 * status is not. */
static void correct_launch_runs(pld_world *w, args *a, int round)
{
    atomic_store(&a->slow_rank, -1);
    pld_status st = PLD_ERR_TIMEOUT;
    for (int tries = 0; tries < 3 && st == PLD_ERR_TIMEOUT; tries++)
        st = pld_launch(w, three_builtins, a);
    cr_assert_eq(st, PLD_OK, "round %d: %s: %s", round, pld_status_name(st), pld_world_error(w));
}

Test(abort_reuse, a_signal_interrupted_by_a_timeout_is_cleared_for_the_next_launch, .timeout = 120)
{
    pld_config cfg = {.devices = "0-3", .wait_timeout_ms = 200};
    pld_world *w = tu_world_cfg(&cfg);
    args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->data = tu_window(w, "data", PLD_INT32, 2, PLD_IDX(1, 4));
    for (int round = 0; round < 8; round++) {
        correct_launch_runs(w, a, round); /* leaves call 3 in one slot, 2 in the other */
        atomic_store(&a->slow_rank, round % 4);
        pld_status st = pld_launch(w, three_builtins, a);
        cr_assert_eq(st, PLD_ERR_TIMEOUT, "round %d: %s: %s", round, pld_status_name(st),
                     pld_world_error(w));
        TU_EXPECT_CONTAINS(pld_world_error(w), "[signal 'sig' of the interrupted builtin call "
                                               "cleared for the next launch]");
    }
    correct_launch_runs(w, a, 8);
    pld_world_finalize(w);
}
