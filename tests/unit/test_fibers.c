/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_FIBERS: the thread transport's ranks as user-level contexts on a few
 * carrier threads. What must hold as with a thread per rank: the order a
 * barrier gives, the errors (a failing rank, a deadlock, a timeout, a rank
 * looping in its own code) and the settings' strictness; and what is new:
 * more carriers than ranks, the transports that ignore it, the explorer
 * that refuses it. The builtins under it are in tests/reuse (mixed calls
 * with no barrier between them). Each Criterion test runs in its own
 * process, so setenv is private to it. */
#define _POSIX_C_SOURCE 200809L /* setenv, nanosleep */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "test_util.h"

#define ITERS 200

typedef struct bar_args {
    pld_dtensor sig, cells;
    _Atomic int *progress; /* [P]: the last iteration each rank began */
    int fail_rank;         /* the rank that fails (-1: none) */
} bar_args;

static bar_args *bar_setup(pld_world *w)
{
    int n = pld_world_size(w);
    bar_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->cells = tu_signal(w, "cells", 1);
    a->progress = tu_host_alloc(w, sizeof *a->progress * (size_t)n);
    a->fail_rank = -1;
    return a;
}

static pld_world *fiber_world(const char *devices, const char *fibers)
{
    setenv("PLD_FIBERS", fibers, 1);
    return tu_world(devices);
}

/* After barrier i no rank is behind i, and none is past i + 1: it cannot
 * leave barrier i + 1 before this rank arrives. */
static void k_barrier_order(pld_ctx *c, void *p)
{
    bar_args *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    for (int i = 1; i <= ITERS; i++) {
        atomic_store(&a->progress[me], i);
        pld_barrier(c, a->sig);
        for (int q = 0; q < n; q++) {
            int v = atomic_load(&a->progress[q]);
            KCHECK(c, v == i || v == i + 1, "after barrier %d rank %d is at %d", i, q, v);
        }
    }
}

Test(fibers, barrier_orders_every_rank, .timeout = 60)
{
    /* 3 carriers of 22, 21 and 21 ranks */
    pld_world *w = fiber_world("0-63", "3");
    cr_assert_eq(pld_world_carriers(w), 3);
    bar_args *a = bar_setup(w);
    TU_LAUNCH_OK(w, k_barrier_order, a);
    TU_LAUNCH_OK(w, k_barrier_order, a); /* the carriers run a second launch */
    pld_world_finalize(w);
}

Test(fibers, more_carriers_than_ranks, .timeout = 30)
{
    pld_world *w = fiber_world("0-3", "16");
    cr_assert_eq(pld_world_carriers(w), 4); /* one per rank */
    bar_args *a = bar_setup(w);
    TU_LAUNCH_OK(w, k_barrier_order, a);
    pld_world_finalize(w);
}

static void k_fail_then_barrier(pld_ctx *c, void *p)
{
    bar_args *a = p;
    pld_barrier(c, a->sig);
    if (pld_rank(c) == a->fail_rank)
        pld_fail(c, "rank %d found a bad value", a->fail_rank);
    pld_barrier(c, a->sig);
}

Test(fibers, a_failing_rank_is_named_and_the_world_goes_on, .timeout = 30)
{
    pld_world *w = fiber_world("0-7", "2");
    bar_args *a = bar_setup(w);
    a->fail_rank = 5;
    TU_LAUNCH_FAILS(w, k_fail_then_barrier, a, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 5");
    TU_EXPECT_CONTAINS(pld_world_error(w), "found a bad value");
    /* the other seven left their barrier; fresh signals, and it runs again */
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->sig.buf), PLD_OK);
    a->fail_rank = -1;
    TU_LAUNCH_OK(w, k_barrier_order, a);
    pld_world_finalize(w);
}

/* Every rank waits for a notify nobody sends. */
static void k_all_wait(pld_ctx *c, void *p)
{
    bar_args *a = p;
    pld_wait(c, a->cells, PLD_IDX(pld_rank(c), 0), 1, PLD_WAIT_GE);
}

Test(fibers, a_deadlock_is_reported, .timeout = 30)
{
    pld_world *w = fiber_world("0-5", "2");
    bar_args *a = bar_setup(w);
    TU_LAUNCH_FAILS(w, k_all_wait, a, PLD_ERR_DEADLOCK);
    const char *msg = pld_world_error(w);
    cr_expect(tu_icontains(msg, "deadlock"), "report does not say deadlock: \"%s\"", msg);
    TU_EXPECT_CONTAINS(msg, "rank 0 (device 0): pld_wait 'cells'[0,0] Ge 1 (current 0)");
    TU_EXPECT_CONTAINS(msg, "rank 5 (device 5): pld_wait 'cells'[5,0] Ge 1 (current 0)");
    pld_world_finalize(w);
}

/* Rank 1 (the second carrier) is in its own code longer than rank 0 may
 * wait for it: not a deadlock (rank 1 runs), a timeout. */
static void k_late_notify(pld_ctx *c, void *p)
{
    bar_args *a = p;
    if (pld_rank(c) == 1) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        pld_notify(c, a->cells, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_SET);
        return;
    }
    if (pld_rank(c) == 0)
        pld_wait(c, a->cells, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
}

Test(fibers, a_wait_times_out, .timeout = 30)
{
    setenv("PLD_FIBERS", "2", 1);
    pld_config cfg = {.devices = "0-3", .wait_timeout_ms = 300};
    pld_world *w = tu_world_cfg(&cfg);
    bar_args *a = bar_setup(w);
    TU_LAUNCH_FAILS(w, k_late_notify, a, PLD_ERR_TIMEOUT);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 0");
    TU_EXPECT_CONTAINS(pld_world_error(w), "timed out");
    pld_world_finalize(w);
}

/* Rank 2 loops in its own code after rank 1 failed: it never yields, so
 * rank 0, which shares its carrier, cannot return either. */
static _Atomic int loop_on = 1;
static void k_stuck(pld_ctx *c, void *p)
{
    bar_args *a = p;
    if (pld_rank(c) == 1)
        pld_fail(c, "rank 1 gives up");
    if (pld_rank(c) == 2)
        while (atomic_load(&loop_on))
            ;
    pld_barrier(c, a->sig);
}

Test(fibers, a_rank_looping_in_its_code_holds_its_carrier, .timeout = 30)
{
    pld_world *w = fiber_world("0-3", "2");
    bar_args *a = bar_setup(w);
    TU_LAUNCH_FAILS(w, k_stuck, a, PLD_ERR_TIMEOUT);
    const char *msg = pld_world_error(w);
    TU_EXPECT_CONTAINS(msg, "rank 2 (device 2)");
    TU_EXPECT_CONTAINS(msg, "rank 1 gives up");
    TU_EXPECT_CONTAINS(msg, "PLD_FIBERS=2");
    TU_EXPECT_CONTAINS(msg, "share a thread each");
    /* the looping rank still runs: the world is unusable, and says why */
    TU_LAUNCH_FAILS(w, k_barrier_order, a, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "did not return");
    pld_world_finalize(w); /* leaks what the stuck carrier can reach */
}

Test(fibers, the_process_transport_ignores_the_setting, .timeout = 30)
{
    setenv("PLD_FIBERS", "2", 1);
    pld_config cfg = {.devices = "0-3", .transport = "process"};
    pld_world *w = tu_world_cfg(&cfg);
    cr_assert_eq(pld_world_carriers(w), 0);
    bar_args *a = bar_setup(w);
    TU_LAUNCH_OK(w, k_barrier_order, a);
    pld_world_finalize(w);
}

Test(fibers, the_explorer_refuses_them, .timeout = 30)
{
    setenv("PLD_FIBERS", "2", 1);
    setenv("PLD_SCHED", "7", 1);
    pld_world *w = NULL;
    pld_config cfg = {.devices = "0-3", .transport = "thread"};
    TU_ASSERT_STATUS(pld_world_init(&w, &cfg), PLD_ERR_UNSUPPORTED);
    TU_EXPECT_CONTAINS(pld_last_error(), "PLD_SCHED");
    TU_EXPECT_CONTAINS(pld_last_error(), "unset PLD_FIBERS (2)");
}

Test(fibers, a_bad_value_is_named, .timeout = 30)
{
    const char *bad[] = {"two", "-1", "65537", "2x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("PLD_FIBERS", bad[i], 1);
        pld_world *w = NULL;
        pld_config cfg = {.devices = "0-3"};
        TU_ASSERT_STATUS(pld_world_init(&w, &cfg), PLD_ERR_ARG);
        TU_EXPECT_CONTAINS(pld_last_error(), "PLD_FIBERS");
        TU_EXPECT_CONTAINS(pld_last_error(), bad[i]);
    }
}

typedef struct race_args {
    pld_dtensor data, sig;
    int barrier;
} race_args;

/* Each rank stages its row, then reads its peer's: unordered without the
 * barrier (the seeds' missing barrier). */
static void k_stage_and_read(pld_ctx *c, void *p)
{
    race_args *a = p;
    int me = pld_rank(c);
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 16);
    pld_store(c, t, pld_local(c, a->data), PLD_IDX(me, 0));
    if (a->barrier)
        pld_barrier(c, a->sig);
    pld_remote_load(c, t, a->data, 1 - me, PLD_IDX(1 - me, 0));
}

static race_args *race_setup(pld_world *w, int barrier)
{
    race_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, PLD_IDX(2, 16));
    a->sig = tu_signal(w, "sig", 1);
    a->barrier = barrier;
    return a;
}

/* Two ranks on one carrier run one after the other, never at once: the
 * race checker still finds what a thread per rank could run at once. */
Test(fibers, the_race_checker_sees_ranks_of_one_carrier, .timeout = 30)
{
    setenv("PLD_FIBERS", "1", 1);
    pld_config cfg = {.devices = "0,1", .check = PLD_CHECK_RACE};
    pld_world *w = tu_world_cfg(&cfg);
    cr_assert_eq(pld_world_carriers(w), 1);
    TU_LAUNCH_FAILS(w, k_stage_and_read, race_setup(w, 0), PLD_ERR_RACE);
    TU_EXPECT_CONTAINS(pld_world_error(w), "no notify/wait orders them");
    pld_world_finalize(w);

    w = tu_world_cfg(&cfg); /* ordered by the barrier: clean */
    TU_LAUNCH_OK(w, k_stage_and_read, race_setup(w, 1));
    pld_world_finalize(w);
}
