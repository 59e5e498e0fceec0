/* SPDX-License-Identifier: Apache-2.0 */
/* Hangs past the safety nets: a rank that never returns from its kernel
 * after its group failed, a launch that legitimately takes long, and a
 * worker stopped with SIGSTOP.
 *
 * The rule under test: once a launch has failed (a wait timed out, a kernel
 * error, a dead worker), ranks still inside the kernel get 500 ms to leave,
 * counted again from each rank that leaves meanwhile; then the process
 * transport kills and replaces them and the thread
 * transport gives up on them and marks the world unusable. A launch that
 * has not failed is never cut short.
 *
 * Times: the wait timeout is 500 ms and a stuck launch must return within
 * timeout + 1 s (1500 ms from the start of the launch); it returns after
 * ~1000 ms on an idle machine, which leaves ~500 ms for a loaded one. On a
 * machine so loaded that a woken thread waits seconds for a CPU (seen at a
 * load average of 20 on 2 cores), the waiter's own timeout fires late and
 * one run can exceed any bound: such a run is repeated once on a new world
 * (stuck_launch), and the second must meet the bound. A launch that never
 * returns fails both, and the test's own timeout catches it. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

#define TIMEOUT_MS 500
#define RETURN_BOUND_MS (TIMEOUT_MS + 1000.0)

typedef struct hang_args {
    pld_dtensor sig;
    _Atomic int release;  /* ends the stuck rank's loop */
    _Atomic int ready;    /* the victim reached the point where it is stopped */
    _Atomic int go;       /* rank 0 may notify */
    _Atomic int ran[4];   /* launches each rank ran */
    int busy_ms;          /* sleep_then_return: how long rank 1 sleeps */
    int pid_before;       /* rank 1's worker before the launch */
    struct stopper *stop; /* the host thread that stops rank 1, if any */
} hang_args;

static pld_world *world(const char *transport, const char *devices)
{
    pld_config cfg = {.devices = devices, .transport = transport, .wait_timeout_ms = TIMEOUT_MS};
    return tu_world_cfg(&cfg);
}

static hang_args *args_for(pld_world *w)
{
    hang_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    return a;
}

/* rank 0 waits for a notify rank 1 never sends; rank 1 loops in user code
 * (sleeping: it never reaches a pld call) until the test releases it */
static void k_stuck(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 1) {
        while (!atomic_load(&a->release))
            tu_sleep_ms(1);
        return;
    }
    if (pld_rank(c) == 0)
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
}

/* the same with a loop that burns the CPU and never ends */
static void k_spin(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 1) {
        volatile unsigned long x = 0;
        for (;;)
            x++;
    }
    if (pld_rank(c) == 0)
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
}

static void k_barrier(pld_ctx *c, void *p)
{
    hang_args *a = p;
    pld_barrier(c, a->sig);
    atomic_fetch_add(&a->ran[pld_rank(c)], 1);
}

/* rank 1 is busy for busy_ms, nobody waits for it */
static void k_sleep_then_return(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 1)
        tu_sleep_ms(a->busy_ms);
}

/* rank 0 times out; rank 1 is busy for busy_ms, then returns by itself */
static void k_timeout_and_busy(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 1)
        tu_sleep_ms(a->busy_ms);
    else
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
}

typedef struct stopper {
    pld_world *w;
    hang_args *a;
    int stop_ms;
    pthread_t tid;
} stopper;

/* Host thread: once the victim (rank 1) says it is ready, stop it, let rank
 * 0 go on, and resume it stop_ms later (if it still exists). */
static void *stop_victim(void *p)
{
    stopper *s = p;
    int pid = pld_rank_pid(s->w, 1);
    while (!atomic_load(&s->a->ready))
        tu_sleep_ms(1);
    tu_sleep_ms(20); /* the victim is in its user-code sleep, or in its wait */
    kill(pid, SIGSTOP);
    atomic_store(&s->a->go, 1);
    tu_sleep_ms(s->stop_ms);
    kill(pid, SIGCONT);
    return NULL;
}

static void start_stopper(stopper *s, pld_world *w, hang_args *a, int stop_ms)
{
    s->w = w;
    s->a = a;
    s->stop_ms = stop_ms;
    a->stop = s;
    cr_assert_eq(pthread_create(&s->tid, NULL, stop_victim, s), 0);
}

static void stopper_join(stopper *s)
{
    pthread_join(s->tid, NULL);
    s->a->stop = NULL;
}

/* A world on `transport` and `devices` whose launch of k hangs on rank 1;
 * returns the launch's status and duration (see the top for the retry). */
static pld_status stuck_launch(const char *transport, const char *devices, pld_kernel k,
                               void (*before)(pld_world *, hang_args *), pld_world **w_out,
                               hang_args **a_out, double *dt_out)
{
    for (int attempt = 0;; attempt++) {
        pld_world *w = world(transport, devices);
        hang_args *a = args_for(w);
        a->pid_before = pld_rank_pid(w, 1);
        if (before)
            before(w, a);
        double t0 = tu_now_ms();
        pld_status st = pld_launch(w, k, a);
        double dt = tu_now_ms() - t0;
        if (a->stop)
            stopper_join(a->stop);
        if (dt < RETURN_BOUND_MS || attempt == 1) {
            *w_out = w;
            *a_out = a;
            *dt_out = dt;
            return st;
        }
        cr_log_warn("%s: pld_launch returned after %.0f ms (bound %.0f): a loaded machine? "
                    "once more",
                    transport, dt, RETURN_BOUND_MS);
        atomic_store(&a->release, 1); /* a stuck thread returns before finalize */
        tu_sleep_ms(100);
        pld_world_finalize(w);
    }
}

/* ---- thread transport ------------------------------------------------------ */

Test(hang, thread_stuck_rank_makes_the_world_unusable, .timeout = 60)
{
    pld_world *w;
    hang_args *a;
    double dt;
    pld_status st = stuck_launch("thread", "4,5", k_stuck, NULL, &w, &a, &dt);
    const char *m = pld_world_error(w);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "%s: %s", pld_status_name(st), m);
    cr_expect_lt(dt, RETURN_BOUND_MS, "pld_launch returned after %.0f ms", dt);
    TU_EXPECT_STARTS(m, "rank 1 (device 5) did not return from its kernel within 500 ms after "
                        "the group failed");
    TU_EXPECT_CONTAINS(m, "a thread cannot be killed, so this world is now unusable");
    TU_EXPECT_CONTAINS(m, "The group failed first: rank 0 (device 4): pld_wait: 'sig'[0,0] Ge 1 "
                          "timed out after 500 ms");
    /* every later launch says why it cannot run */
    st = pld_launch(w, k_barrier, a);
    cr_expect_eq(st, PLD_ERR_ARG, "%s: %s", pld_status_name(st), pld_world_error(w));
    TU_EXPECT_STARTS(pld_world_error(w), "pld_launch: this world is unusable: rank 1 (device 5) "
                                         "did not return from the kernel of a failed launch");
    cr_expect_eq(atomic_load(&a->ran[0]), 0, "a launch ran on an unusable world");
    /* finalize with the thread still looping: no hang, no crash (the
     * thread and what it can reach are leaked; the process ends it) */
    double f0 = tu_now_ms();
    pld_world_finalize(w);
    cr_expect_lt(tu_now_ms() - f0, 1000.0, "finalize took %.0f ms", tu_now_ms() - f0);
    tu_sleep_ms(20); /* the leaked thread still runs, reading its leaked arguments */
}

Test(hang, thread_stuck_rank_that_returns_later_is_joined, .timeout = 60)
{
    pld_world *w = world("thread", "0-2");
    hang_args *a = args_for(w);
    pld_status st = pld_launch(w, k_stuck, a);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "%s: %s", pld_status_name(st), pld_world_error(w));
    TU_EXPECT_STARTS(pld_world_error(w), "rank 1 (device 1) did not return");
    /* the rank comes back: the world stays unusable (decided once), but
     * finalize can now join its thread and free everything */
    atomic_store(&a->release, 1);
    tu_sleep_ms(50);
    TU_ASSERT_STATUS(pld_launch(w, k_barrier, a), PLD_ERR_ARG);
    pld_world_finalize(w);
}

Test(hang, thread_busy_rank_after_a_failure_is_waited_for, .timeout = 60)
{
    /* rank 0 times out at 500 ms; rank 1 is in user code until 550 ms and
     * then returns: inside the grace period, so nothing is given up */
    pld_world *w = world("thread", "0,1");
    hang_args *a = args_for(w);
    a->busy_ms = TIMEOUT_MS + 50;
    pld_status st = pld_launch(w, k_timeout_and_busy, a);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "%s: %s", pld_status_name(st), pld_world_error(w));
    TU_EXPECT_STARTS(pld_world_error(w), "rank 0 (device 0): pld_wait: 'sig'[0,0] Ge 1 timed out");
    cr_expect(!tu_contains(pld_world_error(w), "did not return"), "%s", pld_world_error(w));
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->sig.buf), PLD_OK);
    TU_LAUNCH_OK(w, k_barrier, a);
    pld_world_finalize(w);
}

/* rank 0 fails at once (a wait on a cell outside the signal); rank r > 0
 * is in user code for r x busy_ms, then returns */
static void k_fail_then_unwind_slowly(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 0)
        pld_wait(c, a->sig, PLD_IDX(pld_nranks(c), 0), 1, PLD_WAIT_GE);
    else
        tu_sleep_ms(pld_rank(c) * a->busy_ms);
}

/* Ranks that leave one after the other, each within the grace period of
 * the one before but the last long after the failure (as thousands of
 * ranks on two CPUs do), are all waited for: the grace period counts again
 * from each rank that returns. */
static void slow_unwind_case(const char *transport)
{
    pld_world *w = world(transport, "0-3");
    hang_args *a = args_for(w);
    a->busy_ms = 300; /* the last returns 900 ms after the failure */
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_fail_then_unwind_slowly, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_BOUNDS, "%s: %s", pld_status_name(st), pld_world_error(w));
    TU_EXPECT_STARTS(pld_world_error(w), "rank 0 (device 0): pld_wait: signal cell region [4,0]");
    cr_expect(!tu_contains(pld_world_error(w), "did not return"), "%s", pld_world_error(w));
    cr_expect_geq(dt, 3.0 * a->busy_ms, "the launch returned after %.0f ms", dt);
    TU_LAUNCH_OK(w, k_barrier, a);
    pld_world_finalize(w);
}

Test(hang, thread_ranks_unwinding_one_by_one_are_waited_for, .timeout = 60)
{
    slow_unwind_case("thread");
}

Test(hang, process_ranks_unwinding_one_by_one_are_waited_for, .timeout = 60)
{
    slow_unwind_case("process");
}

/* ---- both: a long launch that has not failed is never cut short ------------ */

static void long_launch_case(const char *transport)
{
    pld_world *w = world(transport, "0,1");
    hang_args *a = args_for(w);
    a->busy_ms = 3 * TIMEOUT_MS;
    double t0 = tu_now_ms();
    TU_LAUNCH_OK(w, k_sleep_then_return, a);
    double dt = tu_now_ms() - t0;
    cr_expect_geq(dt, (double)a->busy_ms, "the launch returned after %.0f ms", dt);
    TU_LAUNCH_OK(w, k_barrier, a);
    pld_world_finalize(w);
}

Test(hang, thread_long_launch_without_failure_is_not_cut, .timeout = 60)
{
    long_launch_case("thread");
}

Test(hang, process_long_launch_without_failure_is_not_cut, .timeout = 60)
{
    long_launch_case("process");
}

/* ---- process transport ------------------------------------------------------- */

static int alive(int pid)
{
    return kill(pid, 0) == 0 || errno != ESRCH;
}

Test(hang, process_stuck_worker_is_killed_and_replaced, .timeout = 60)
{
    pld_world *w;
    hang_args *a;
    double dt;
    pld_status st = stuck_launch("process", "0-2", k_spin, NULL, &w, &a, &dt);
    int old = a->pid_before;
    const char *m = pld_world_error(w);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "%s: %s", pld_status_name(st), m);
    cr_expect_lt(dt, RETURN_BOUND_MS, "pld_launch returned after %.0f ms", dt);
    char want[160];
    snprintf(want, sizeof want,
             "rank 1 (device 1, pid %d) did not return from its kernel within 500 ms after the "
             "group failed",
             old);
    TU_EXPECT_STARTS(m, want);
    TU_EXPECT_CONTAINS(m, "the worker was killed and replaced for the next launch");
    TU_EXPECT_CONTAINS(m, "The group failed first: rank 0 (device 0): pld_wait: 'sig'[0,0] Ge 1 "
                          "timed out after 500 ms");
    cr_expect(!alive(old), "the stuck worker (pid %d) is still alive", old);
    int now = pld_rank_pid(w, 1);
    cr_expect(now != old && alive(now), "rank 1's worker: pid %d before, %d now", old, now);
    /* the world is usable: every rank (the new worker too) runs the next launches */
    for (int i = 0; i < 3; i++)
        TU_LAUNCH_OK(w, k_barrier, a);
    for (int r = 0; r < 3; r++)
        cr_expect_eq(atomic_load(&a->ran[r]), 3, "rank %d ran %d launches", r,
                     atomic_load(&a->ran[r]));
    pld_world_finalize(w);
    cr_expect(!alive(now), "the replacement worker (pid %d) survived finalize", now);
}

/* ---- SIGSTOP ------------------------------------------------------------------ *
 * A stopped worker is a rank that does not run. Whether that fails the
 * launch depends only on whether some peer waits for it longer than the
 * wait timeout -- each wait's own timeout, measured from when that wait
 * began -- not on how long it was stopped: */

/* rank 1 is stopped before it notifies rank 0: rank 0's wait times out */
static void k_stopped_before_notify(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 1) {
        atomic_store(&a->ready, 1);
        tu_sleep_ms(100); /* stopped in here */
        pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    } else {
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
    }
}

static stopper the_stopper;

static void stop_for_3s(pld_world *w, hang_args *a)
{
    start_stopper(&the_stopper, w, a, 3000);
}

Test(hang, process_stopped_worker_a_peer_waits_for_is_a_timeout, .timeout = 60)
{
    pld_world *w;
    hang_args *a;
    double dt;
    pld_status st =
        stuck_launch("process", "0,1", k_stopped_before_notify, stop_for_3s, &w, &a, &dt);
    int old = a->pid_before;
    const char *m = pld_world_error(w);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "%s: %s", pld_status_name(st), m);
    /* not the 3 s of the stop: the stopped worker was killed */
    cr_expect_lt(dt, RETURN_BOUND_MS, "pld_launch returned after %.0f ms", dt);
    char want[96];
    snprintf(want, sizeof want, "rank 1 (device 1, pid %d) did not return", old);
    TU_EXPECT_STARTS(m, want);
    TU_EXPECT_CONTAINS(m, "rank 0 (device 0): pld_wait: 'sig'[0,0] Ge 1 timed out");
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->sig.buf), PLD_OK);
    TU_LAUNCH_OK(w, k_barrier, a);
    pld_world_finalize(w);
}

/* rank 1 waits for rank 0 and is stopped inside that wait; rank 0 notifies
 * it while it is stopped and returns. When rank 1 resumes, its wait has
 * lasted longer than the timeout, but its condition holds: PLD_OK. */
static void k_stopped_in_satisfied_wait(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 1) {
        atomic_store(&a->ready, 1);
        pld_wait(c, a->sig, PLD_IDX(1, 0), 1, PLD_WAIT_GE); /* stopped in here */
    } else {
        while (!atomic_load(&a->go))
            tu_sleep_ms(1);
        pld_notify(c, a->sig, 1, PLD_IDX(1, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    }
}

/* rank 1 notifies rank 0, then is stopped in user code: nobody waits for
 * it, the launch simply takes as long as the stop */
static void k_stopped_after_notify(pld_ctx *c, void *p)
{
    hang_args *a = p;
    if (pld_rank(c) == 1) {
        pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        atomic_store(&a->ready, 1);
        tu_sleep_ms(100); /* stopped in here */
    } else {
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
    }
}

static void stopped_but_ok_case(pld_kernel k)
{
    pld_world *w = world("process", "0,1");
    hang_args *a = args_for(w);
    int pid = pld_rank_pid(w, 1);
    stopper s;
    start_stopper(&s, w, a, 3 * TIMEOUT_MS);
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k, a);
    double dt = tu_now_ms() - t0;
    stopper_join(&s);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_expect_geq(dt, 3.0 * TIMEOUT_MS, "the launch returned after %.0f ms, during the stop", dt);
    cr_expect_eq(pld_rank_pid(w, 1), pid, "the stopped worker was replaced");
    TU_LAUNCH_OK(w, k_barrier, a);
    pld_world_finalize(w);
}

Test(hang, process_stopped_in_a_wait_that_is_then_met_is_ok, .timeout = 60)
{
    stopped_but_ok_case(k_stopped_in_satisfied_wait);
}

Test(hang, process_stopped_after_its_last_notify_is_ok, .timeout = 60)
{
    stopped_but_ok_case(k_stopped_after_notify);
}
