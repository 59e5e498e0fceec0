/* SPDX-License-Identifier: Apache-2.0 */
/* Waits on a count that grows: a gather's root, whose cell changes with
 * every arrival before it meets the wait. With ranks sharing CPUs the
 * wait polls while the count keeps changing instead of yielding (the
 * arrivals then come from the other CPUs, and a yield would queue it
 * behind every rank of its own): such a wait still sees the data each
 * arrival published before it, still ends at the deadline while the count
 * never stops changing, and still ends when a peer fails. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdlib.h>

#include "test_util.h"

/* More ranks than CPUs many times over, so that waits reach the yield
 * phase and a CPU's queue is long enough for the poll (16 ranks a CPU). */
#define NR 96
#define NR_DEVICES "0-95"

typedef struct count_args {
    pld_dtensor sig, data;
    int rounds;
    int fail_after_ms;
} count_args;

/* The yield phase from the first look (no spin), as oversubscribed. */
static pld_world *oversubscribed_world(int timeout_ms)
{
    setenv("PLD_SPIN", "0", 1);
    setenv("PLD_YIELDS", "64", 1);
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = NR_DEVICES;
    cfg.wait_timeout_ms = timeout_ms;
    return tu_world_cfg(&cfg);
}

/* Each round every rank but 0 puts the round number into its row of rank
 * 0's data and adds 1 to rank 0's count; rank 0 waits for the count to
 * reach the round's total, finds every row of this round, and releases
 * each rank with a Set of the round number. */
static void k_gather(pld_ctx *c, void *arg)
{
    count_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    const int32_t *rows = pld_local(c, a->data).data;
    for (int32_t k = 1; k <= a->rounds; k++) {
        if (me == 0) {
            pld_wait(c, a->sig, PLD_IDX(0, 0), k * (P - 1), PLD_WAIT_GE);
            for (int r = 1; r < P; r++)
                KCHECK(c, rows[r] == k, "round %d: row %d holds %d once the count is met", k, r,
                       rows[r]);
            for (int r = 1; r < P; r++)
                pld_notify(c, a->sig, r, PLD_IDX(1, 0), k, PLD_NOTIFY_SET);
            continue;
        }
        int32_t v = k;
        pld_tensor src = pld_tensor_make(&v, PLD_INT32, 1, (const int64_t[]){1});
        pld_xfer x;
        memset(&x, 0, sizeof x);
        x.dst_offsets = PLD_IDX(me);
        x.src_offsets = PLD_IDX(0);
        x.shape = PLD_IDX(1);
        pld_put(c, a->data, 0, src, &x);
        pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        pld_wait(c, a->sig, PLD_IDX(1, 0), k, PLD_WAIT_EQ);
    }
}

Test(wait_count, a_growing_count_sees_every_arrival, .timeout = 120)
{
    pld_world *w = oversubscribed_world(60000);
    count_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "count", 1);
    a->data = tu_window(w, "rows", PLD_INT32, 1, (const int64_t[]){NR});
    a->rounds = 200;
    TU_LAUNCH_OK(w, k_gather, a);
    pld_world_finalize(w);
}

/* Rank 0 waits for a count no one reaches while rank 1 adds to it without
 * end; the other ranks return at once. Rank 1 calls into pld at every
 * add, so the group's end (rank 0's timeout, or its own failure after
 * fail_after_ms) ends its kernel too. */
static void k_endless_count(pld_ctx *c, void *arg)
{
    count_args *a = arg;
    int me = pld_rank(c);
    if (me == 0) {
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1 << 30, PLD_WAIT_GE);
        pld_fail(c, "the wait for 2^30 arrivals returned");
        return;
    }
    if (me != 1)
        return;
    double t0 = tu_now_ms();
    for (;;) {
        pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        if (a->fail_after_ms && tu_now_ms() - t0 >= a->fail_after_ms)
            pld_fail(c, "rank 1 gives up after %d ms of adds", a->fail_after_ms);
        for (volatile int i = 0; i < 200; i++) /* a few hundred ns between adds */
            ;
    }
}

Test(wait_count, a_count_that_never_stops_changing_still_times_out, .timeout = 60)
{
    pld_world *w = oversubscribed_world(300);
    count_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "count", 1);
    pld_status st = pld_launch(w, k_endless_count, a);
    const char *msg = pld_world_error(w);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "launch %s, expected PLD_ERR_TIMEOUT (%s)",
                 pld_status_name(st), msg);
    TU_EXPECT_STARTS(msg, "rank 0 (device 0): pld_wait");
    TU_EXPECT_CONTAINS(msg, "'count'[0,0]");
    TU_EXPECT_CONTAINS(msg, "Ge 1073741824");
    pld_world_finalize(w);
}

Test(wait_count, a_peer_failure_ends_a_wait_on_a_changing_count, .timeout = 60)
{
    pld_world *w = oversubscribed_world(60000);
    count_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "count", 1);
    a->fail_after_ms = 200;
    pld_status st = pld_launch(w, k_endless_count, a);
    const char *msg = pld_world_error(w);
    cr_assert_eq(st, PLD_ERR_CHECK, "launch %s, expected rank 1's failure (%s)",
                 pld_status_name(st), msg);
    TU_EXPECT_CONTAINS(msg, "rank 1 gives up after 200 ms of adds");
    pld_world_finalize(w);
}
