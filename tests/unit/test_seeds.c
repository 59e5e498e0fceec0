/* SPDX-License-Identifier: Apache-2.0 */
/* The seeds' edge-case symptom tables (step 13 AllGather, step 15 AllToAll)
 * reproduced with primitives: each bug is written out by hand, and pld must
 * turn it into the symptom the table lists -- a golden mismatch reported
 * through pld_fail (PLD_ERR_CHECK), stale data, an alias error, or a hang
 * reported as PLD_ERR_DEADLOCK. Each buggy variant sits next to the fixed
 * one, which must pass. */
#include <stdio.h>

#include "test_util.h"

#define S 16
#define PMAX 8

/* ======================================================================= */
/* Step 13: hand allgather (stage -> barrier -> remote_load every peer)    */
/* ======================================================================= */

enum ag_mode {
    AG_CORRECT,
    AG_WRONG_SLOT,   /* peer p's row stored at slot p+1 */
    AG_OWN_WINDOW,   /* reads its own window instead of the peer's */
    AG_NO_BARRIER,   /* writers stage only after the reader has read */
    AG_LATE_WRITERS, /* fixed version of the above: writers late, barrier present */
};

typedef struct ag_args {
    pld_dtensor data, sig, bsig, late;
    int mode;
    int base;                /* values base*1000 + rank*100 + j + 1 */
    float y[PMAX][PMAX * S]; /* each rank's gathered output, for the host */
} ag_args;

static float xval(int base, int r, int j)
{
    return (float)(base * 1000 + r * 100 + j + 1);
}

static void golden_check(pld_ctx *c, const float *y, int base)
{
    int me = pld_rank(c), P = pld_nranks(c);
    for (int p = 0; p < P; p++)
        for (int j = 0; j < S; j++)
            if (y[p * S + j] != xval(base, p, j))
                pld_fail(c, "golden mismatch: rank %d y[%d] (slot %d) = %g, expected %g", me,
                         p * S + j, p, (double)y[p * S + j], (double)xval(base, p, j));
}

static void k_allgather_hand(pld_ctx *c, void *arg)
{
    ag_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    float x[S], y[PMAX * S];
    for (int j = 0; j < S; j++)
        x[j] = xval(a->base, me, j);
    memset(y, 0, sizeof y);
    pld_tensor xt = pld_tensor_make(x, PLD_FP32, 2, (const int64_t[]){1, S});
    pld_tensor yt = pld_tensor_make(y, PLD_FP32, 2, (const int64_t[]){1, P * S});

    if (a->mode == AG_NO_BARRIER && me != 0) {
        /* writers: stage only once the reader says it is done reading */
        pld_wait(c, a->late, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
    }
    if (a->mode == AG_LATE_WRITERS && me != 0)
        tu_sleep_ms(50);

    /* Phase 1: stage this rank's slice into its own row. */
    pld_tile *local = pld_tile_create(c, PLD_FP32, 1, S);
    pld_load(c, local, xt, PLD_IDX(0, 0));
    pld_store(c, local, pld_local(c, a->data), PLD_IDX(me, 0));
    if (a->mode == AG_NO_BARRIER && me != 0) {
        /* the writers are done: tell the reader */
        pld_notify(c, a->late, 0, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        return;
    }

    /* Phase 2: barrier -- notify every peer, wait on every peer slot. */
    if (a->mode != AG_NO_BARRIER) {
        for (int peer = 0; peer < P; peer++)
            if (peer != me)
                pld_notify(c, a->sig, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        for (int src = 0; src < P; src++)
            if (src != me)
                pld_wait(c, a->sig, PLD_IDX(src, 0), a->base, PLD_WAIT_GE);
    }

    /* Phase 3: gather -- pull every peer's row into the output. */
    pld_tile *recv = pld_tile_create(c, PLD_FP32, 1, S);
    for (int peer = 0; peer < P; peer++) {
        int from = a->mode == AG_OWN_WINDOW ? me : peer;
        int slot = a->mode == AG_WRONG_SLOT ? (peer + 1) % P : peer;
        pld_remote_load(c, recv, a->data, from, PLD_IDX(from, 0));
        pld_store(c, recv, yt, PLD_IDX(0, slot * S));
    }
    memcpy(a->y[me], y, sizeof(float) * (size_t)(P * S));

    if (a->mode == AG_NO_BARRIER) {
        /* reader done: release the writers, then check */
        for (int peer = 1; peer < P; peer++)
            pld_notify(c, a->late, peer, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        for (int peer = 1; peer < P; peer++) /* they staged (too late) */
            pld_wait(c, a->late, PLD_IDX(peer, 0), 1, PLD_WAIT_GE);
    } else {
        pld_barrier(c, a->bsig); /* every rank has published y */
    }
    golden_check(c, y, a->base);
    if (a->mode != AG_NO_BARRIER)
        pld_barrier(c, a->bsig); /* peers may still read my row */
}

static ag_args *ag_setup(pld_world *w)
{
    ag_args *a = tu_host_alloc(w, sizeof *a);
    int P = pld_world_size(w);
    a->data = tu_window(w, "data", PLD_FP32, 2, (const int64_t[]){P, S});
    a->sig = tu_signal(w, "signal", 1);
    a->bsig = tu_signal(w, "bsig", 1);
    a->late = tu_signal(w, "late", 1);
    a->base = 1;
    return a;
}

static void expect_y(const ag_args *a, int rank, int slot, int base, int src_rank)
{
    for (int j = 0; j < S; j++) {
        float want = src_rank < 0 ? 0.0f : xval(base, src_rank, j);
        cr_expect_eq(a->y[rank][slot * S + j], want, "rank %d y slot %d [%d] = %g, expected %g",
                     rank, slot, j, (double)a->y[rank][slot * S + j], (double)want);
    }
}

Test(seeds, allgather_hand_correct_p4, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ag_args *a = ag_setup(w);
    a->mode = AG_CORRECT;
    TU_LAUNCH_OK(w, k_allgather_hand, a);
    for (int r = 0; r < 4; r++)
        for (int p = 0; p < 4; p++)
            expect_y(a, r, p, 1, p);
    pld_world_finalize(w);
}

/* "行顺序错误 -- 输出偏移 != 对端 rank": every rank internally consistent,
 * the golden still fails. */
Test(seeds, allgather_wrong_slot_fails_golden, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ag_args *a = ag_setup(w);
    a->mode = AG_WRONG_SLOT;
    TU_LAUNCH_FAILS(w, k_allgather_hand, a, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    /* the symptom: slot p+1 holds rank p's slice, on every rank */
    for (int r = 0; r < 4; r++)
        for (int p = 0; p < 4; p++)
            expect_y(a, r, (p + 1) % 4, 1, p);
    pld_world_finalize(w);
}

/* "每个 rank 显示自己的 slice -- 读取自己的 window 而非对端" */
Test(seeds, allgather_own_window_fails_golden, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ag_args *a = ag_setup(w);
    a->mode = AG_OWN_WINDOW;
    TU_LAUNCH_FAILS(w, k_allgather_hand, a, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    for (int r = 0; r < 4; r++)
        for (int p = 0; p < 4; p++)
            expect_y(a, r, p, 1, r);
    pld_world_finalize(w);
}

/* "P=4 时数据陈旧 -- stage 与 gather 之间缺少 barrier": the reader reads
 * before the writers stage. On a fresh window it sees zeros; after an
 * earlier round it sees that round's (stale) values. */
Test(seeds, allgather_missing_barrier_reads_zeros, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ag_args *a = ag_setup(w);
    a->mode = AG_NO_BARRIER;
    TU_LAUNCH_FAILS(w, k_allgather_hand, a, PLD_ERR_CHECK);
    TU_EXPECT_STARTS(pld_world_error(w), "rank 0 (device 0): ");
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    expect_y(a, 0, 0, 1, 0); /* its own row is fine */
    for (int p = 1; p < 4; p++)
        expect_y(a, 0, p, 0, -1); /* zeros */
    pld_world_finalize(w);
}

Test(seeds, allgather_missing_barrier_reads_stale_round, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ag_args *a = ag_setup(w);
    a->mode = AG_CORRECT;
    a->base = 1;
    TU_LAUNCH_OK(w, k_allgather_hand, a);
    a->mode = AG_NO_BARRIER;
    a->base = 2;
    TU_LAUNCH_FAILS(w, k_allgather_hand, a, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    expect_y(a, 0, 0, 2, 0);
    for (int p = 1; p < 4; p++)
        expect_y(a, 0, p, 1, p); /* round 1's values: stale */
    /* the writers did stage round 2 afterwards */
    for (int r = 1; r < 4; r++) {
        const float *d = tu_view(w, a->data, r).data;
        for (int j = 0; j < S; j++)
            cr_expect_eq(d[r * S + j], xval(2, r, j), "rank %d staged [%d] = %g", r, j,
                         (double)d[r * S + j]);
    }
    pld_world_finalize(w);
}

/* The fix: with the barrier, late writers are waited for. */
Test(seeds, allgather_barrier_waits_for_late_writers, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    ag_args *a = ag_setup(w);
    a->mode = AG_LATE_WRITERS;
    TU_LAUNCH_OK(w, k_allgather_hand, a);
    for (int r = 0; r < 4; r++)
        for (int p = 0; p < 4; p++)
            expect_y(a, r, p, 1, p);
    pld_world_finalize(w);
}

/* ======================================================================= */
/* Step 15: hand all_to_all (put per destination -> Set/Ge barrier -> read) */
/* ======================================================================= */

enum a2a_mode {
    A2A_CORRECT,
    A2A_WRONG_PEER, /* chunk for d lands on peer d+1 */
    A2A_OWN_ROW,    /* reads back its own row */
    A2A_ALIAS,      /* input staged in the target window itself */
    A2A_WRONG_CELL, /* notify writes the peer's row instead of my_rank: hang */
    A2A_REUSED_SET, /* second round reuses the Set signal, waits Ge 2: hang */
    A2A_SET_EQ,     /* Set 1 but wait Eq 2: hang */
};

typedef struct a2a_args {
    pld_dtensor data, sig, bsig;
    int mode;
    int32_t y[PMAX][PMAX * S];
} a2a_args;

static int32_t a2a_val(int r, int d, int j)
{
    return r * 1000 + d * 100 + j;
}

static void a2a_set_barrier(pld_ctx *c, a2a_args *a, int32_t expected, pld_wait_cmp cmp)
{
    int me = pld_rank(c), P = pld_nranks(c);
    for (int peer = 0; peer < P; peer++)
        if (peer != me) {
            int cell = a->mode == A2A_WRONG_CELL ? peer : me;
            pld_notify(c, a->sig, peer, PLD_IDX(cell, 0), 1, PLD_NOTIFY_SET);
        }
    for (int src = 0; src < P; src++)
        if (src != me)
            pld_wait(c, a->sig, PLD_IDX(src, 0), expected, cmp);
}

static void k_all_to_all_hand(pld_ctx *c, void *arg)
{
    a2a_args *a = arg;
    int me = pld_rank(c), P = pld_nranks(c);
    int32_t x[PMAX * S];
    for (int d = 0; d < P; d++)
        for (int j = 0; j < S; j++)
            x[d * S + j] = a2a_val(me, d, j);
    pld_tensor xt = pld_tensor_make(x, PLD_INT32, 2, (const int64_t[]){P, S});
    if (a->mode == A2A_ALIAS) {
        /* "源/目标混叠": the input lives in the target window */
        memcpy(pld_local(c, a->data).data, x, sizeof(int32_t) * (size_t)(P * S));
        xt = pld_local(c, a->data);
    }

    /* Phase 1: push chunk-for-dest into dest's window at our row. */
    for (int dest = 0; dest < P; dest++) {
        int peer = a->mode == A2A_WRONG_PEER ? (dest + 1) % P : dest;
        pld_xfer x1;
        memset(&x1, 0, sizeof x1);
        x1.dst_offsets = PLD_IDX(me, 0);
        x1.src_offsets = PLD_IDX(dest, 0);
        x1.shape = PLD_IDX(1, S);
        pld_put(c, a->data, peer, xt, &x1);
    }

    /* Phase 2: single-writer Set/Ge(1) barrier. */
    a2a_set_barrier(c, a, a->mode == A2A_SET_EQ ? 2 : 1,
                    a->mode == A2A_SET_EQ ? PLD_WAIT_EQ : PLD_WAIT_GE);
    if (a->mode == A2A_REUSED_SET) /* a second round on the same signal */
        a2a_set_barrier(c, a, 2, PLD_WAIT_GE);

    /* Phase 3: read back -- row src of our window holds src's chunk. */
    const int32_t *mine = pld_local(c, a->data).data;
    int32_t y[PMAX * S];
    for (int src = 0; src < P; src++) {
        int row = a->mode == A2A_OWN_ROW ? me : src;
        memcpy(&y[src * S], &mine[row * S], sizeof(int32_t) * S);
    }
    memcpy(a->y[me], y, sizeof(int32_t) * (size_t)(P * S));
    pld_barrier(c, a->bsig);
    for (int src = 0; src < P; src++)
        for (int j = 0; j < S; j++)
            if (y[src * S + j] != a2a_val(src, me, j))
                pld_fail(c, "golden mismatch: rank %d row %d [%d] = %d, expected %d", me, src, j,
                         y[src * S + j], a2a_val(src, me, j));
}

static a2a_args *a2a_setup(pld_world *w)
{
    a2a_args *a = tu_host_alloc(w, sizeof *a);
    int P = pld_world_size(w);
    a->data = tu_window(w, "data", PLD_INT32, 2, (const int64_t[]){P, S});
    a->sig = tu_signal(w, "signal", 1);
    a->bsig = tu_signal(w, "bsig", 1);
    return a;
}

static void a2a_golden(const char *devices)
{
    pld_world *w = tu_world(devices);
    int P = pld_world_size(w);
    a2a_args *a = a2a_setup(w);
    a->mode = A2A_CORRECT;
    TU_LAUNCH_OK(w, k_all_to_all_hand, a);
    for (int r = 0; r < P; r++)
        for (int s = 0; s < P; s++)
            for (int j = 0; j < S; j++)
                cr_assert_eq(a->y[r][s * S + j], a2a_val(s, r, j), "rank %d row %d [%d] = %d", r, s,
                             j, a->y[r][s * S + j]);
    pld_world_finalize(w);
}

Test(seeds, all_to_all_hand_correct_p2, .timeout = 30)
{
    a2a_golden("0,1");
}
Test(seeds, all_to_all_hand_correct_p4, .timeout = 30)
{
    a2a_golden("0-3");
}

/* "给目标 d 的分块落入错误的对端 -- put 的对端 != 目标行" */
Test(seeds, all_to_all_wrong_peer_fails_golden, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    a2a_args *a = a2a_setup(w);
    a->mode = A2A_WRONG_PEER;
    TU_LAUNCH_FAILS(w, k_all_to_all_hand, a, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    /* rank r row s holds what s made for r-1 */
    for (int r = 0; r < 4; r++)
        for (int s = 0; s < 4; s++)
            cr_expect_eq(a->y[r][s * S], a2a_val(s, (r + 3) % 4, 0), "rank %d row %d = %d", r, s,
                         a->y[r][s * S]);
    pld_world_finalize(w);
}

/* "输出是我自己的分块而非对端的 -- 读回自己的行" */
Test(seeds, all_to_all_own_row_fails_golden, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    a2a_args *a = a2a_setup(w);
    a->mode = A2A_OWN_ROW;
    TU_LAUNCH_FAILS(w, k_all_to_all_hand, a, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    for (int r = 0; r < 4; r++)
        for (int s = 0; s < 4; s++)
            cr_expect_eq(a->y[r][s * S], a2a_val(r, r, 0), "rank %d row %d = %d", r, s,
                         a->y[r][s * S]);
    pld_world_finalize(w);
}

/* "源/目标混叠损坏 -- 输入与目标用同一缓冲": the self iteration moves a
 * row onto itself, which pld rejects as an alias. */
Test(seeds, all_to_all_same_window_is_alias, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    a2a_args *a = a2a_setup(w);
    a->mode = A2A_ALIAS;
    TU_LAUNCH_FAILS(w, k_all_to_all_hand, a, PLD_ERR_ALIAS);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_put: ");
    pld_world_finalize(w);
}

/* "某个 rank 挂起 -- Set notify/wait 不匹配": reported, not hung. */
static void expect_deadlock(pld_world *w, a2a_args *a, const char *const *lines, int n)
{
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_all_to_all_hand, a);
    double dt = tu_now_ms() - t0;
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "launch %s, expected PLD_ERR_DEADLOCK (%s)",
                 pld_status_name(st), pld_world_error(w));
    cr_expect_lt(dt, 1000.0, "deadlock reported after %.0f ms", dt);
    const char *msg = pld_world_error(w);
    cr_expect(tu_icontains(msg, "deadlock"), "report does not say deadlock: \"%s\"", msg);
    for (int i = 0; i < n; i++) {
        char buf[512], prefix[64];
        snprintf(prefix, sizeof prefix, "%.*s", (int)strcspn(lines[i], ":"), lines[i]);
        const char *l = tu_line_starting(msg, prefix, buf, sizeof buf);
        cr_expect_not_null(l, "no line for %s in:\n%s", prefix, msg);
        if (l)
            cr_expect(tu_contains(l, lines[i]), "line \"%s\"\n  expected to contain \"%s\"", l,
                      lines[i]);
    }
}

Test(seeds, set_wrong_cell_hang_is_deadlock, .timeout = 30)
{
    pld_world *w = tu_world("0,1");
    a2a_args *a = a2a_setup(w);
    a->mode = A2A_WRONG_CELL;
    const char *lines[] = {
        "rank 0 (device 0): pld_wait 'signal'[1,0] Ge 1 (current 0)",
        "rank 1 (device 1): pld_wait 'signal'[0,0] Ge 1 (current 0)",
    };
    expect_deadlock(w, a, lines, 2);
    /* the fixed protocol on fresh signals works in the same world */
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->sig.buf), PLD_OK);
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->bsig.buf), PLD_OK);
    a->mode = A2A_CORRECT;
    TU_LAUNCH_OK(w, k_all_to_all_hand, a);
    pld_world_finalize(w);
}

/* Hand-rolled Set barriers do not self-clear: reusing one needs a higher
 * threshold that Set can never reach. */
Test(seeds, reused_set_signal_hang_is_deadlock, .timeout = 30)
{
    pld_world *w = tu_world("4,5");
    a2a_args *a = a2a_setup(w);
    a->mode = A2A_REUSED_SET;
    const char *lines[] = {
        "rank 0 (device 4): pld_wait 'signal'[1,0] Ge 2 (current 1)",
        "rank 1 (device 5): pld_wait 'signal'[0,0] Ge 2 (current 1)",
    };
    expect_deadlock(w, a, lines, 2);
    pld_world_finalize(w);
}

Test(seeds, set_eq_mismatch_hang_is_deadlock, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    a2a_args *a = a2a_setup(w);
    a->mode = A2A_SET_EQ;
    const char *lines[] = {
        "rank 0 (device 0): pld_wait 'signal'[1,0] Eq 2 (current 1)",
        "rank 1 (device 1): pld_wait 'signal'[0,0] Eq 2 (current 1)",
        "rank 2 (device 2): pld_wait 'signal'[0,0] Eq 2 (current 1)",
    };
    expect_deadlock(w, a, lines, 3);
    pld_world_finalize(w);
}
