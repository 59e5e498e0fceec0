/* SPDX-License-Identifier: Apache-2.0 */
/* Signals: notify Set/AtomicAdd, wait Eq/Ge (signed), signal_read, argument
 * errors, release/acquire ordering, deadlock detection, wait timeout, and
 * the builtin barrier (64 ranks). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

typedef struct sig_args {
    pld_dtensor sig, sig2, fsig, data;
    int which;
    int rounds;
    int after[64]; /* set when a kernel goes past the point under test */
    int32_t seen[64][4];
} sig_args;

/* ---- Set / AtomicAdd / Eq / Ge ----------------------------------------- */

static void k_set_and_add(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    if (me != 0) {
        pld_notify(c, a->sig, 0, PLD_IDX(me, 0), 5, PLD_NOTIFY_SET);
        pld_notify(c, a->sig, 0, PLD_IDX(me, 0), me + 10, PLD_NOTIFY_SET); /* overwrites */
        pld_notify(c, a->sig, 0, PLD_IDX(me, 1), 1, PLD_NOTIFY_ATOMIC_ADD);
    }
    for (int i = 0; i < 100; i++)
        pld_notify(c, a->sig, 0, PLD_IDX(0, 0), me + 1, PLD_NOTIFY_ATOMIC_ADD);
    if (me != 0)
        return;
    int total = 100 * P * (P + 1) / 2;
    pld_wait(c, a->sig, PLD_IDX(0, 0), total, PLD_WAIT_EQ);
    KCHECK_EQ_I(c, pld_signal_read(c, a->sig, PLD_IDX(0, 0)), total);
    for (int r = 1; r < P; r++) {
        pld_wait(c, a->sig, PLD_IDX(r, 1), 1, PLD_WAIT_GE);
        KCHECK_EQ_I(c, pld_signal_read(c, a->sig, PLD_IDX(r, 0)), r + 10);
        KCHECK_EQ_I(c, pld_signal_read(c, a->sig, PLD_IDX(r, 1)), 1);
    }
}

Test(signal, set_overwrites_add_accumulates, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 2);
    TU_LAUNCH_OK(w, k_set_and_add, a);
    /* host view agrees: rank 0 cell [0,0] = 1000, others untouched */
    pld_tensor v0 = tu_view(w, a->sig, 0);
    const int32_t *p = v0.data;
    cr_expect_eq(p[0], 1000, "rank 0 sig[0,0] = %d, expected 1000", p[0]);
    for (int r = 1; r < 4; r++) {
        cr_expect_eq(p[r * 2], r + 10, "rank 0 sig[%d,0] = %d, expected %d", r, p[r * 2], r + 10);
        pld_tensor v = tu_view(w, a->sig, r);
        const int32_t *q = v.data;
        for (int k = 0; k < 8; k++)
            cr_expect_eq(q[k], 0, "rank %d sig cell %d = %d, expected 0", r, k, q[k]);
    }
    pld_world_finalize(w);
}

/* Signed comparisons: -1 is not >= 0, 0 is >= -3, INT32_MIN works. */
static void k_signed(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c);
    if (me == 0) {
        pld_notify(c, a->sig, 1, PLD_IDX(0, 0), -1, PLD_NOTIFY_SET);
        pld_wait(c, a->sig, PLD_IDX(1, 1), 1, PLD_WAIT_GE); /* rank 1 saw -1 */
        tu_sleep_ms(50);
        pld_notify(c, a->sig, 1, PLD_IDX(0, 0), 3, PLD_NOTIFY_SET);
        pld_notify(c, a->sig, 1, PLD_IDX(0, 1), INT32_MIN, PLD_NOTIFY_SET);
        return;
    }
    pld_wait(c, a->sig, PLD_IDX(1, 0), -3, PLD_WAIT_GE); /* 0 >= -3 at once */
    pld_wait(c, a->sig, PLD_IDX(0, 0), -1, PLD_WAIT_EQ);
    a->seen[1][0] = pld_signal_read(c, a->sig, PLD_IDX(0, 0));
    pld_notify(c, a->sig, 0, PLD_IDX(1, 1), 1, PLD_NOTIFY_ATOMIC_ADD);
    pld_wait(c, a->sig, PLD_IDX(0, 0), 0, PLD_WAIT_GE); /* -1 must not satisfy >= 0 */
    a->seen[1][1] = pld_signal_read(c, a->sig, PLD_IDX(0, 0));
    pld_wait(c, a->sig, PLD_IDX(0, 1), INT32_MIN, PLD_WAIT_EQ);
    pld_wait(c, a->sig, PLD_IDX(0, 1), INT32_MIN, PLD_WAIT_GE);
    a->seen[1][2] = pld_signal_read(c, a->sig, PLD_IDX(0, 1));
}

Test(signal, wait_compares_signed, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 2);
    TU_LAUNCH_OK(w, k_signed, a);
    cr_expect_eq(a->seen[1][0], -1, "read %d after wait Eq -1", a->seen[1][0]);
    cr_expect_eq(a->seen[1][1], 3, "wait Ge 0 returned with the cell at %d (unsigned compare?)",
                 a->seen[1][1]);
    cr_expect_eq(a->seen[1][2], INT32_MIN, "read %d after wait Eq INT32_MIN", a->seen[1][2]);
    pld_world_finalize(w);
}

static void k_signal_read(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    for (int r = 0; r < P; r++)
        KCHECK_EQ_I(c, pld_signal_read(c, a->sig, PLD_IDX(r, 0)), 0);
    pld_notify(c, a->sig, me, PLD_IDX(me, 0), 42, PLD_NOTIFY_SET); /* peer == me */
    a->seen[me][0] = pld_signal_read(c, a->sig, PLD_IDX(me, 0));
    pld_notify(c, a->sig, me, PLD_IDX(me, 0), -50, PLD_NOTIFY_ATOMIC_ADD);
    a->seen[me][1] = pld_signal_read(c, a->sig, PLD_IDX(me, 0));
    pld_wait(c, a->sig, PLD_IDX(me, 0), -8, PLD_WAIT_EQ);
}

Test(signal, read_own_cell, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_signal_read, a);
    for (int r = 0; r < 3; r++) {
        cr_expect_eq(a->seen[r][0], 42, "rank %d read %d after Set 42", r, a->seen[r][0]);
        cr_expect_eq(a->seen[r][1], -8, "rank %d read %d after AtomicAdd -50", r, a->seen[r][1]);
    }
    pld_world_finalize(w);
}

/* 1-D signal [P] works like [P,1]. */
static void k_signal_1d(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    for (int p = 0; p < P; p++)
        if (p != me)
            pld_notify(c, a->sig, p, PLD_IDX(me), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int s = 0; s < P; s++)
        if (s != me)
            pld_wait(c, a->sig, PLD_IDX(s), 1, PLD_WAIT_GE);
}

Test(signal, one_dim_signal, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_window(w, "sig1d", PLD_INT32, 1, (const int64_t[]){3});
    TU_LAUNCH_OK(w, k_signal_1d, a);
    pld_world_finalize(w);
}

/* ---- argument errors ---------------------------------------------------- */

static void k_barrier_only(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    pld_barrier(c, a->sig2);
}

static void k_sig_errors(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    if (me != 0) {
        /* blocked on a cell nobody notifies: released by the abort */
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
        a->after[me] = 1;
        return;
    }
    switch (a->which) {
    case 0:
        pld_notify(c, a->sig, P, PLD_IDX(0, 0), 1, PLD_NOTIFY_SET);
        break;
    case 1:
        pld_notify(c, a->sig, -1, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        break;
    case 2:
        pld_notify(c, a->fsig, 1, PLD_IDX(0, 0), 1, PLD_NOTIFY_SET);
        break;
    case 3:
        pld_wait(c, a->fsig, PLD_IDX(0, 0), 0, PLD_WAIT_GE);
        break;
    case 4:
        (void)pld_signal_read(c, a->fsig, PLD_IDX(0, 0));
        break;
    case 5:
        pld_notify(c, a->sig, 1, PLD_IDX(P, 0), 1, PLD_NOTIFY_SET);
        break;
    case 6:
        pld_wait(c, a->sig, PLD_IDX(0, 1), 0, PLD_WAIT_GE);
        break;
    case 7:
        (void)pld_signal_read(c, a->sig, PLD_IDX(-1, 0));
        break;
    case 8:
        pld_notify(c, a->sig, 1, PLD_IDX(0, 0), 1, (pld_notify_op)7);
        break;
    case 9:
        pld_wait(c, a->sig, PLD_IDX(0, 0), 0, (pld_wait_cmp)9);
        break;
    case 10:
        pld_notify(c, a->sig, 1, PLD_IDX(0), 1, PLD_NOTIFY_SET);
        break;
    case 11:
        pld_wait(c, a->sig, PLD_IDX(0, 0, 0), 0, PLD_WAIT_GE);
        break;
    case 12:
        (void)pld_signal_read(c, a->sig, PLD_IDX(0));
        break;
    case 13:
        pld_notify(c, a->sig, 1, PLD_IDX(0, -1), 1, PLD_NOTIFY_SET);
        break;
    case 14:
        pld_notify(c, a->sig, 1, PLD_IDX(0, 0), 1, (pld_notify_op)-1);
        break;
    }
    a->after[0] = 1;
}

Test(signal, argument_errors, .timeout = 30)
{
    const struct {
        pld_status st;
        const char *api;
    } cases[] = {
        {PLD_ERR_ARG, "pld_notify"},         /* 0 peer == P */
        {PLD_ERR_ARG, "pld_notify"},         /* 1 peer < 0 */
        {PLD_ERR_ARG, "pld_notify"},         /* 2 fp32 signal */
        {PLD_ERR_ARG, "pld_wait"},           /* 3 fp32 signal */
        {PLD_ERR_ARG, "pld_signal_read"},    /* 4 fp32 signal */
        {PLD_ERR_BOUNDS, "pld_notify"},      /* 5 row P */
        {PLD_ERR_BOUNDS, "pld_wait"},        /* 6 col 1 of [P,1] */
        {PLD_ERR_BOUNDS, "pld_signal_read"}, /* 7 row -1 */
        {PLD_ERR_ARG, "pld_notify"},         /* 8 bad op */
        {PLD_ERR_ARG, "pld_wait"},           /* 9 bad cmp */
        {PLD_ERR_ARG, "pld_notify"},         /* 10 one offset for 2-D */
        {PLD_ERR_ARG, "pld_wait"},           /* 11 three offsets */
        {PLD_ERR_ARG, "pld_signal_read"},    /* 12 one offset */
        {PLD_ERR_BOUNDS, "pld_notify"},      /* 13 col -1 */
        {PLD_ERR_ARG, "pld_notify"},         /* 14 bad op (negative) */
    };
    pld_world *w = tu_world("4,5");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->sig2 = tu_signal(w, "sig2", 1);
    a->fsig = tu_window(w, "fsig", PLD_FP32, 2, (const int64_t[]){2, 1});
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        a->which = i;
        a->after[0] = a->after[1] = 0;
        pld_status st = pld_launch(w, k_sig_errors, a);
        cr_expect_eq(st, cases[i].st, "case %d: launch %s, expected %s (%s)", i,
                     pld_status_name(st), pld_status_name(cases[i].st), pld_world_error(w));
        char prefix[80];
        snprintf(prefix, sizeof prefix, "rank 0 (device 4): %s: ", cases[i].api);
        TU_EXPECT_STARTS(pld_world_error(w), prefix);
        cr_expect_eq(a->after[0], 0, "case %d: rank 0 continued after the failing call", i);
        cr_expect_eq(a->after[1], 0, "case %d: rank 1's wait returned normally", i);
        /* the world still works */
        TU_LAUNCH_OK(w, k_barrier_only, a);
    }
    pld_world_finalize(w);
}

/* ---- release / acquire -------------------------------------------------- */

#define RA_COLS 256

static void k_release_acquire(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int nxt = (me + 1) % P, prv = (me + P - 1) % P;
    int32_t src[RA_COLS];
    pld_tensor srct = pld_tensor_make(src, PLD_INT32, 2, (const int64_t[]){1, RA_COLS});
    pld_tile *t = pld_tile_create(c, PLD_INT32, 1, RA_COLS);
    int32_t *td = pld_tile_data(t);
    const int32_t *mine = pld_local(c, a->data).data;
    for (int k = 1; k <= a->rounds; k++) {
        for (int j = 0; j < RA_COLS; j++)
            src[j] = td[j] = k * 100000 + me * 1000 + j;
        if (k % 2) {
            pld_xfer x;
            memset(&x, 0, sizeof x);
            x.dst_offsets = PLD_IDX(me, 0);
            x.src_offsets = PLD_IDX(0, 0);
            x.shape = PLD_IDX(1, RA_COLS);
            pld_put(c, a->data, nxt, srct, &x);
        } else {
            pld_remote_store(c, t, a->data, nxt, PLD_IDX(me, 0), PLD_ATOMIC_NONE);
        }
        pld_notify(c, a->sig, nxt, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        pld_wait(c, a->sig, PLD_IDX(prv, 0), k, PLD_WAIT_GE);
        for (int j = 0; j < RA_COLS; j++) {
            int32_t want = k * 100000 + prv * 1000 + j;
            KCHECK(c, mine[prv * RA_COLS + j] == want,
                   "round %d: rank %d row %d [%d] = %d, expected %d", k, me, prv, j,
                   mine[prv * RA_COLS + j], want);
        }
        pld_notify(c, a->sig2, prv, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        pld_wait(c, a->sig2, PLD_IDX(nxt, 0), k, PLD_WAIT_GE);
    }
}

Test(signal, release_acquire_data_before_notify, .timeout = 60)
{
    pld_world *w = tu_world("0-3");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_INT32, 2, (const int64_t[]){4, RA_COLS});
    a->sig = tu_signal(w, "ready", 1);
    a->sig2 = tu_signal(w, "ack", 1);
    a->rounds = 400;
    TU_LAUNCH_OK(w, k_release_acquire, a);
    pld_world_finalize(w);
}

/* ---- deadlock ----------------------------------------------------------- */

/* Each rank Sets 1 into its peer's cell and waits for >= 2: nobody can ever
 * satisfy anybody. */
static void k_set_ge_mismatch(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c), peer = 1 - me;
    pld_notify(c, a->sig, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_SET);
    pld_wait(c, a->sig, PLD_IDX(peer, 0), 2, PLD_WAIT_GE);
    a->after[me] = 1;
}

static const char *first_line(const char *s, char *buf, size_t n)
{
    size_t len = strcspn(s, "\n");
    if (len >= n)
        len = n - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

static void expect_line(const char *msg, const char *want)
{
    char buf[512];
    char prefix[64];
    size_t plen = strcspn(want, ":");
    snprintf(prefix, sizeof prefix, "%.*s", (int)plen, want);
    const char *line = tu_line_starting(msg, prefix, buf, sizeof buf);
    cr_expect_not_null(line, "no line for \"%s\" in the report:\n%s", prefix, msg);
    if (line)
        cr_expect(tu_contains(line, want), "report line \"%s\"\n  expected to contain \"%s\"", line,
                  want);
}

Test(signal, deadlock_set_ge_mismatch, .timeout = 30)
{
    pld_world *w = tu_world("4,5");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->sig2 = tu_signal(w, "sig2", 1);
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_set_ge_mismatch, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "launch %s, expected PLD_ERR_DEADLOCK (%s)",
                 pld_status_name(st), pld_world_error(w));
    cr_expect_lt(dt, 1000.0, "deadlock reported after %.0f ms, expected < 1000 ms", dt);
    const char *msg = pld_world_error(w);
    char l1[512];
    cr_expect(tu_icontains(first_line(msg, l1, sizeof l1), "deadlock"),
              "first line \"%s\" does not say deadlock", l1);
    expect_line(msg, "rank 0 (device 4): pld_wait 'sig'[1,0] Ge 2 (current 1)");
    expect_line(msg, "rank 1 (device 5): pld_wait 'sig'[0,0] Ge 2 (current 1)");
    cr_expect_eq(a->after[0] + a->after[1], 0, "a deadlocked wait returned normally");
    TU_LAUNCH_OK(w, k_barrier_only, a);
    pld_world_finalize(w);
}

/* Eq mismatch with a third rank that finished: it is listed as finished. */
static void k_eq_mismatch(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c);
    if (me == 2)
        return;
    int peer = 1 - me;
    pld_notify(c, a->sig, peer, PLD_IDX(me, 0), 2, PLD_NOTIFY_SET);
    pld_wait(c, a->sig, PLD_IDX(peer, 0), 1, PLD_WAIT_EQ);
}

Test(signal, deadlock_eq_mismatch_lists_finished_rank, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "flag", 1);
    a->sig2 = tu_signal(w, "sig2", 1);
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_eq_mismatch, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "launch %s, expected PLD_ERR_DEADLOCK (%s)",
                 pld_status_name(st), pld_world_error(w));
    cr_expect_lt(dt, 1000.0, "deadlock reported after %.0f ms, expected < 1000 ms", dt);
    const char *msg = pld_world_error(w);
    expect_line(msg, "rank 0 (device 0): pld_wait 'flag'[1,0] Eq 1 (current 2)");
    expect_line(msg, "rank 1 (device 1): pld_wait 'flag'[0,0] Eq 1 (current 2)");
    char buf[256];
    const char *l2 = tu_line_starting(msg, "rank 2 (device 2)", buf, sizeof buf);
    cr_expect_not_null(l2, "finished rank 2 missing from the report:\n%s", msg);
    if (l2)
        cr_expect(tu_icontains(l2, "finished"), "rank 2 line \"%s\" does not say finished", l2);
    TU_LAUNCH_OK(w, k_barrier_only, a);
    pld_world_finalize(w);
}

/* A small broadcast that rank 1 skips: the others wait in the builtin's
 * one round, on the flags of pld's own inbox -- the report says whose. */
static void k_skip_small_broadcast(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    if (pld_rank(c) == 1)
        return;
    pld_broadcast(c, a->sig2, a->sig, 0);
}

Test(signal, deadlock_in_a_one_round_call_names_the_peer, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->sig2 = tu_signal(w, "data", 1);
    pld_status st = pld_launch(w, k_skip_small_broadcast, a);
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "launch %s, expected PLD_ERR_DEADLOCK (%s)",
                 pld_status_name(st), pld_world_error(w));
    const char *msg = pld_world_error(w);
    expect_line(msg, "rank 0 (device 0): pld_wait 'pld.inbox_flags'[4,0] Ge 1 (current 0): a "
                     "builtin's one round, waiting for the payload or flag of rank 1");
    expect_line(msg, "rank 2 (device 2): pld_wait 'pld.inbox_flags'[4,0] Ge 1 (current 0): a "
                     "builtin's one round, waiting for the payload or flag of rank 1");
    TU_LAUNCH_OK(w, k_barrier_only, a);
    pld_world_finalize(w);
}

static void k_lonely_wait(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
}

Test(signal, deadlock_single_rank, .timeout = 30)
{
    pld_world *w = tu_world("3");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->sig2 = tu_signal(w, "sig2", 1);
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_lonely_wait, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "launch %s, expected PLD_ERR_DEADLOCK (%s)",
                 pld_status_name(st), pld_world_error(w));
    cr_expect_lt(dt, 1000.0, "deadlock reported after %.0f ms", dt);
    expect_line(pld_world_error(w), "rank 0 (device 3): pld_wait 'sig'[0,0] Ge 1 (current 0)");
    TU_LAUNCH_OK(w, k_barrier_only, a);
    pld_world_finalize(w);
}

/* ---- wait timeout ------------------------------------------------------- */

static void k_timeout(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    if (pld_rank(c) == 0) {
        pld_wait(c, a->sig, PLD_IDX(1, 0), 1, PLD_WAIT_GE);
        a->after[0] = 1;
        return;
    }
    /* busy, not blocked: this is no deadlock. It looks at its signal now
     * and then, as a kernel that computes does call into pld: once rank 0's
     * wait has timed out that call ends this rank's kernel (a rank that
     * stayed in its own code 500 ms after the failure would be given up on,
     * tests/unit/test_hang.c) */
    int total = a->which; /* ms */
    for (int t = 0; t < total; t += 10) {
        tu_sleep_ms(10);
        (void)pld_signal_read(c, a->sig, PLD_IDX(0, 0));
    }
    if (a->rounds) /* notify at the end (the short case) */
        pld_notify(c, a->sig, 0, PLD_IDX(1, 0), 1, PLD_NOTIFY_SET);
}

Test(signal, wait_timeout_from_config, .timeout = 30)
{
    unsetenv("PLD_WAIT_TIMEOUT_MS");
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.wait_timeout_ms = 300;
    pld_world *w = tu_world_cfg(&cfg);
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->sig2 = tu_signal(w, "sig2", 1);

    /* the peer notifies after 100 ms: well inside the timeout */
    a->which = 100;
    a->rounds = 1;
    TU_LAUNCH_OK(w, k_timeout, a);
    cr_expect_eq(a->after[0], 1);
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->sig.buf), PLD_OK);

    /* the peer is busy for 1.5 s and never notifies */
    a->after[0] = 0;
    a->which = 1500;
    a->rounds = 0;
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_timeout, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "launch %s, expected PLD_ERR_TIMEOUT (%s)",
                 pld_status_name(st), pld_world_error(w));
    cr_expect_geq(dt, 300.0, "launch returned after %.0f ms, before the 300 ms timeout", dt);
    const char *msg = pld_world_error(w);
    TU_EXPECT_STARTS(msg, "rank 0 (device 0): pld_wait");
    TU_EXPECT_CONTAINS(msg, "'sig'[1,0]");
    TU_EXPECT_CONTAINS(msg, "Ge 1");
    TU_EXPECT_CONTAINS(msg, "current 0");
    cr_expect_eq(a->after[0], 0, "the timed-out wait returned normally");
    TU_LAUNCH_OK(w, k_barrier_only, a);
    pld_world_finalize(w);
}

Test(signal, wait_timeout_from_env, .timeout = 30)
{
    setenv("PLD_WAIT_TIMEOUT_MS", "300", 1);
    pld_world *w = tu_world(NULL);
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->sig2 = tu_signal(w, "sig2", 1);
    a->which = 1500;
    pld_status st = pld_launch(w, k_timeout, a);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "launch %s, expected PLD_ERR_TIMEOUT (%s)",
                 pld_status_name(st), pld_world_error(w));
    TU_LAUNCH_OK(w, k_barrier_only, a);
    pld_world_finalize(w);
}

/* ---- the builtin barrier ------------------------------------------------ */

static void k_barrier_loop(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    for (int i = 0; i < a->rounds; i++)
        pld_barrier(c, a->sig);
}

Test(signal, barrier_64_ranks_1000_rounds, .timeout = 600)
{
    pld_world *w = tu_world("0-63");
    cr_assert_eq(pld_world_size(w), 64);
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->rounds = 1000;
    TU_LAUNCH_OK(w, k_barrier_loop, a);
    /* self-clearing: the signal is all zero again */
    for (int r = 0; r < 64; r++) {
        pld_tensor v = tu_view(w, a->sig, r);
        const int32_t *p = v.data;
        for (int k = 0; k < 64; k++)
            cr_assert_eq(p[k], 0, "rank %d sig[%d,0] = %d after 1000 barriers", r, k, p[k]);
    }
    pld_world_finalize(w);
}

/* The barrier orders: what rank 0 wrote before it is visible after it, even
 * when rank 0 arrives late. Counters follow coll.h's expansion. */
static void k_barrier_orders(pld_ctx *c, void *arg)
{
    sig_args *a = arg;
    int me = pld_rank(c);
    if (me == 0) {
        tu_sleep_ms(100);
        int32_t *d = pld_local(c, a->data).data;
        for (int j = 0; j < 16; j++)
            d[j] = 500 + j;
    }
    pld_barrier(c, a->sig);
    pld_tile *t = pld_tile_create(c, PLD_INT32, 1, 16);
    pld_remote_load(c, t, a->data, 0, PLD_IDX(0, 0));
    const int32_t *q = pld_tile_data(t);
    for (int j = 0; j < 16; j++)
        KCHECK(c, q[j] == 500 + j, "rank %d saw rank 0 [%d] = %d after the barrier, expected %d",
               me, j, q[j], 500 + j);
    pld_barrier(c, a->sig);
}

Test(signal, barrier_orders_and_counts, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->data = tu_window(w, "data", PLD_INT32, 2, (const int64_t[]){1, 16});
    TU_LAUNCH_OK(w, k_barrier_orders, a);
    a->rounds = 1;
    TU_LAUNCH_OK(w, k_barrier_loop, a);
    for (int r = 0; r < 3; r++) {
        pld_counters k;
        TU_ASSERT_STATUS(pld_rank_counters(w, r, &k), PLD_OK);
        /* P-1 arrival notifies + P-1 epilogue notifies, P-1 waits */
        cr_expect_eq(k.notifies, 4, "rank %d: %llu notifies for one barrier at P=3, expected 4", r,
                     (unsigned long long)k.notifies);
        cr_expect_eq(k.waits, 2, "rank %d: %llu waits for one barrier at P=3, expected 2", r,
                     (unsigned long long)k.waits);
        cr_expect_eq(k.bytes_to_peers + k.bytes_from_peers + k.bytes_self, 0,
                     "rank %d: a barrier moved data bytes", r);
    }
    pld_world_finalize(w);
}

Test(signal, barrier_single_rank_and_1d_signal, .timeout = 30)
{
    pld_world *w = tu_world("2");
    sig_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    a->rounds = 10;
    TU_LAUNCH_OK(w, k_barrier_loop, a);
    pld_world_finalize(w);

    w = tu_world("0-4");
    a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_window(w, "sig1d", PLD_INT32, 1, (const int64_t[]){5});
    a->rounds = 50;
    TU_LAUNCH_OK(w, k_barrier_loop, a);
    pld_world_finalize(w);
}
