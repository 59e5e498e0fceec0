/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_CHECK_SIGNALS: builtins verify their signal is all-zero on entry and
 * exit; leaked credits are reported by cell. A launch that fails inside a
 * builtin clears that builtin's signal for the next launch (and says so). */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <string.h>

typedef struct env {
    pld_world *w;
    pld_window_buffer *sb, *db;
    pld_dtensor sig, data;
    int mode;
} env;

static void make(env *e, unsigned check)
{
    pld_config cfg = {.devices = "0-3", .check = check};
    cr_assert_eq(pld_world_init(&e->w, &cfg), PLD_OK, "%s", pld_last_error());
    cr_assert_eq(pld_alloc_window_buffer(e->w, 4 * 4, "sig", &e->sb), PLD_OK);
    cr_assert_eq(pld_window(e->sb, PLD_INT32, 2, PLD_IDX(4, 1), &e->sig), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(e->w, 4 * 4 * 64, "data", &e->db), PLD_OK);
    cr_assert_eq(pld_window(e->db, PLD_FP32, 2, PLD_IDX(4, 64), &e->data), PLD_OK);
}

static void kernel(pld_ctx *c, void *arg)
{
    env *e = arg;
    switch (e->mode) {
    case 0: /* clean: builtins back to back */
        for (int i = 0; i < 20; i++) {
            pld_barrier(c, e->sig);
            pld_allreduce(c, e->data, e->sig, PLD_SUM, PLD_MESH);
            pld_broadcast(c, e->data, e->sig, i % 4);
        }
        break;
    case 1: /* a hand notify leaves a credit on rank 2's cell [1,0] */
        if (pld_rank(c) == 1)
            pld_notify(c, e->sig, 2, PLD_IDX(1, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        pld_barrier(c, e->sig);
        break;
    case 2: /* a call aborted midway: rank 3 fails after the others added credits */
        if (pld_rank(c) == 3)
            pld_fail(c, "rank 3 gives up");
        pld_barrier(c, e->sig);
        break;
    }
}

Test(signal_check, clean_builtins_pass, .timeout = 60)
{
    env e = {0};
    make(&e, PLD_CHECK_SIGNALS);
    pld_status st = pld_launch(e.w, kernel, &e);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(e.w));
    pld_world_finalize(e.w);
}

Test(signal_check, leaked_credit_is_reported_by_cell, .timeout = 60)
{
    env e = {.mode = 1};
    make(&e, PLD_CHECK_SIGNALS);
    pld_status st = pld_launch(e.w, kernel, &e);
    cr_assert_eq(st, PLD_ERR_CHECK, "%s: %s", pld_status_name(st), pld_world_error(e.w));
    const char *m = pld_world_error(e.w);
    cr_assert(strstr(m, "rank 2 (device 2)") && strstr(m, "'sig'") && strstr(m, "[1,0]=1"),
              "message: %s", m);
    /* the barrier failed in flight: its signal was cleared for the next launch */
    cr_assert(strstr(m, "signal 'sig' of the interrupted builtin call cleared"), "message: %s", m);
    e.mode = 0;
    st = pld_launch(e.w, kernel, &e);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(e.w));
    pld_world_finalize(e.w);
}

Test(signal_check, aborted_call_leaks_then_reset_recovers, .timeout = 60)
{
    env e = {.mode = 2};
    make(&e, PLD_CHECK_SIGNALS);
    cr_assert_eq(pld_launch(e.w, kernel, &e), PLD_ERR_CHECK);
    cr_assert(strstr(pld_world_error(e.w), "rank 3 gives up"), "%s", pld_world_error(e.w));
    e.mode = 0;
    /* ranks 0-2 may have added credits before the abort: the launch cleared
     * the signal of the barrier they were in, so the next launch is clean */
    pld_status st = pld_launch(e.w, kernel, &e);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(e.w));
    cr_assert_eq(pld_window_buffer_reset(e.w, e.sb), PLD_OK);
    st = pld_launch(e.w, kernel, &e);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(e.w));
    pld_world_finalize(e.w);
}

Test(signal_check, unchecked_world_does_not_look, .timeout = 60)
{
    env e = {.mode = 1};
    make(&e, 0);
    /* without the check the leaked credit goes unnoticed: the barrier passes */
    cr_assert_eq(pld_launch(e.w, kernel, &e), PLD_OK, "%s", pld_world_error(e.w));
    pld_world_finalize(e.w);
}
