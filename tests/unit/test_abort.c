/* SPDX-License-Identifier: Apache-2.0 */
/* Group abort: a kernel error on one rank releases the others, the launch
 * returns the root cause, the message names rank/device/call, and the world
 * stays usable. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

typedef struct ab_args {
    pld_dtensor data, sig, bsig;
    int which;
    int after[8];
    int reached[8];
} ab_args;

static void k_ok_barrier(pld_ctx *c, void *arg)
{
    ab_args *a = arg;
    pld_barrier(c, a->bsig);
}

/* rank 0 blocks in a wait nobody satisfies; rank 1 makes a bad put */
static void k_bad_put(pld_ctx *c, void *arg)
{
    ab_args *a = arg;
    int me = pld_rank(c);
    if (me == 0) {
        pld_wait(c, a->sig, PLD_IDX(1, 0), 1, PLD_WAIT_GE);
        a->after[0] = 1;
        return;
    }
    tu_sleep_ms(50); /* let rank 0 block first */
    float src[64] = {0};
    pld_xfer x;
    memset(&x, 0, sizeof x);
    x.dst_offsets = PLD_IDX(3, 0);
    x.src_offsets = PLD_IDX(0, 0);
    x.shape = PLD_IDX(1, 64);
    pld_put(c, a->data, 0, pld_tensor_make(src, PLD_FP32, 2, (const int64_t[]){1, 64}), &x);
    a->after[1] = 1;
}

Test(abort, error_releases_waiters_with_root_cause, .timeout = 30)
{
    pld_world *w = tu_world("4,5");
    ab_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){2, 64});
    a->sig = tu_signal(w, "sig", 1);
    a->bsig = tu_signal(w, "bsig", 1);
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_bad_put, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_BOUNDS, "launch %s, expected the root cause PLD_ERR_BOUNDS (%s)",
                 pld_status_name(st), pld_world_error(w));
    cr_expect_lt(dt, 5000.0, "the blocked rank was released only after %.0f ms", dt);
    const char *msg = pld_world_error(w);
    TU_EXPECT_STARTS(msg, "rank 1 (device 5): pld_put: ");
    TU_EXPECT_CONTAINS(msg, "[3,0]");
    TU_EXPECT_CONTAINS(msg, "'data'");
    TU_EXPECT_CONTAINS(msg, "[2,64]");
    cr_expect(!tu_contains(msg, "rank 0 (device 4)"),
              "the released rank should not be the reported failure: \"%s\"", msg);
    cr_expect_eq(a->after[0], 0, "rank 0's wait returned normally");
    cr_expect_eq(a->after[1], 0, "rank 1 went on after the failing put");
    /* the next launch runs normally */
    TU_LAUNCH_OK(w, k_ok_barrier, a);
    pld_world_finalize(w);
}

/* P=4: one rank fails while another is blocked in a wait, a third is in a
 * barrier and a fourth enters a wait only after the abort. */
static void k_mixed_states(pld_ctx *c, void *arg)
{
    ab_args *a = arg;
    int me = pld_rank(c);
    switch (me) {
    case 0:
        pld_wait(c, a->sig, PLD_IDX(3, 0), 1, PLD_WAIT_GE);
        break;
    case 1:
        pld_barrier(c, a->bsig);
        break;
    case 2:
        tu_sleep_ms(100);
        pld_fail(c, "rank %d gives up", me);
        break; /* not reached */
    case 3:
        tu_sleep_ms(300);
        a->reached[3] = 1;
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
        break;
    }
    a->after[me] = 1;
}

Test(abort, releases_blocked_and_late_waiters, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ab_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->bsig = tu_signal(w, "bsig", 1);
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_mixed_states, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_CHECK, "launch %s, expected PLD_ERR_CHECK (%s)", pld_status_name(st),
                 pld_world_error(w));
    cr_expect_lt(dt, 5000.0, "launch took %.0f ms", dt);
    TU_EXPECT_STARTS(pld_world_error(w), "rank 2 (device 2): ");
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 2 gives up");
    cr_expect_eq(a->reached[3], 1, "rank 3 should have run until its late wait");
    for (int r = 0; r < 4; r++)
        cr_expect_eq(a->after[r], 0, "rank %d went past its aborted call", r);
    /* a barrier interrupted mid-way may leave credits: reset, then reuse */
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->bsig.buf), PLD_OK);
    TU_LAUNCH_OK(w, k_ok_barrier, a);
    pld_world_finalize(w);
}

/* ---- pld_fail ----------------------------------------------------------- */

static void k_fail_fmt(pld_ctx *c, void *arg)
{
    ab_args *a = arg;
    int me = pld_rank(c);
    if (me == 1) {
        a->reached[1] = 1;
        pld_fail(c, "value %d != %d at %s", 42, 43, "row 7");
    }
    if (me == 0)
        pld_wait(c, a->sig, PLD_IDX(1, 0), 1, PLD_WAIT_GE);
    a->after[me] = 1;
}

Test(abort, fail_reports_check_with_text, .timeout = 30)
{
    pld_world *w = tu_world("4,5");
    ab_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->bsig = tu_signal(w, "bsig", 1);
    TU_LAUNCH_FAILS(w, k_fail_fmt, a, PLD_ERR_CHECK);
    const char *msg = pld_world_error(w);
    TU_EXPECT_STARTS(msg, "rank 1 (device 5): ");
    TU_EXPECT_CONTAINS(msg, "value 42 != 43 at row 7");
    TU_EXPECT_STARTS(msg, "rank 1 (device 5): pld_fail: value 42 != 43 at row 7");
    cr_expect_eq(a->reached[1], 1);
    cr_expect_eq(a->after[1], 0, "pld_fail returned");
    cr_expect_eq(a->after[0], 0, "rank 0's wait returned normally");
    TU_LAUNCH_OK(w, k_ok_barrier, a);
    cr_expect_eq(a->after[0] + a->after[1], 0);
    pld_world_finalize(w);
}

static void k_fail_long(pld_ctx *c, void *arg)
{
    (void)arg;
    char big[5001];
    memset(big, 'x', 5000);
    big[5000] = '\0';
    if (pld_rank(c) == 0)
        pld_fail(c, "long: %s", big);
}

Test(abort, long_fail_message_is_safe, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    ab_args *a = tu_host_alloc(w, sizeof *a);
    a->bsig = tu_signal(w, "bsig", 1);
    TU_LAUNCH_FAILS(w, k_fail_long, a, PLD_ERR_CHECK);
    TU_EXPECT_STARTS(pld_world_error(w), "rank 0 (device 0): ");
    TU_EXPECT_CONTAINS(pld_world_error(w), "long: xxxxxxxx");
    TU_LAUNCH_OK(w, k_ok_barrier, a);
    pld_world_finalize(w);
}

/* Both ranks fail at once: one root cause, never PLD_ERR_PEER. */
static void k_both_fail(pld_ctx *c, void *arg)
{
    (void)arg;
    pld_fail(c, "both %d", pld_rank(c));
}

Test(abort, simultaneous_failures_one_root_cause, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ab_args *a = tu_host_alloc(w, sizeof *a);
    a->bsig = tu_signal(w, "bsig", 1);
    for (int i = 0; i < 20; i++) {
        pld_status st = pld_launch(w, k_both_fail, a);
        cr_assert_eq(st, PLD_ERR_CHECK, "iteration %d: %s, expected PLD_ERR_CHECK (%s)", i,
                     pld_status_name(st), pld_world_error(w));
        const char *msg = pld_world_error(w);
        cr_expect(tu_starts_with(msg, "rank ") && tu_contains(msg, ": both "),
                  "iteration %d: message \"%s\"", i, msg);
    }
    TU_LAUNCH_OK(w, k_ok_barrier, a);
    pld_world_finalize(w);
}

/* ---- the world after failures -------------------------------------------- */

static void k_fill(pld_ctx *c, void *arg)
{
    ab_args *a = arg;
    float *d = pld_local(c, a->data).data;
    for (int k = 0; k < 128; k++)
        d[k] = (float)(pld_rank(c) * 1000 + k);
}

static void k_check_fill(pld_ctx *c, void *arg)
{
    ab_args *a = arg;
    const float *d = pld_local(c, a->data).data;
    for (int k = 0; k < 128; k++)
        KCHECK(c, d[k] == (float)(pld_rank(c) * 1000 + k), "rank %d data[%d] = %g", pld_rank(c), k,
               (double)d[k]);
}

Test(abort, windows_survive_and_world_reusable, .timeout = 60)
{
    pld_world *w = tu_world("4,5");
    ab_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){2, 64});
    a->sig = tu_signal(w, "sig", 1);
    a->bsig = tu_signal(w, "bsig", 1);
    TU_LAUNCH_OK(w, k_fill, a);
    for (int i = 0; i < 30; i++) {
        a->after[0] = a->after[1] = 0;
        TU_LAUNCH_FAILS(w, i % 2 ? k_bad_put : k_fail_fmt, a,
                        i % 2 ? PLD_ERR_BOUNDS : PLD_ERR_CHECK);
        TU_LAUNCH_OK(w, k_ok_barrier, a);
    }
    TU_LAUNCH_OK(w, k_check_fill, a);
    pld_world_finalize(w);

    /* a new world after finalizing a failed one */
    w = tu_world("4,5");
    a = tu_host_alloc(w, sizeof *a);
    a->bsig = tu_signal(w, "bsig", 1);
    TU_LAUNCH_OK(w, k_ok_barrier, a);
    cr_expect_str_eq(pld_world_error(w), "", "fresh world reports \"%s\"", pld_world_error(w));
    pld_world_finalize(w);
}

/* A kernel error straight after world init, then finalize without another
 * launch: no hang, no crash. */
Test(abort, finalize_right_after_failure, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    ab_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_FAILS(w, k_both_fail, a, PLD_ERR_CHECK);
    pld_world_finalize(w);
}
