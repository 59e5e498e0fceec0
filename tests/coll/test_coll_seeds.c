/* SPDX-License-Identifier: Apache-2.0 */
/* The seeds' edge-case tables (step 13 AllGather, step 15 AllToAll) as they
 * apply to the builtins: each mistake is made on purpose next to its fix,
 * and the test shows both the symptom the table lists and pld's clear
 * error or detection.
 *
 *   row order wrong (slot p holds rank p+1)  -> golden check, PLD_ERR_CHECK
 *   every rank shows its own slice           -> golden check, PLD_ERR_CHECK
 *   source/target alias                      -> PLD_ERR_ALIAS naming the call
 *   stale data at P=4 (no barrier)           -> stale read, PLD_ERR_CHECK
 *   a rank hangs (Set/Ge mismatch)           -> PLD_ERR_DEADLOCK, every rank listed */
#include <stdio.h>

#include "coll_util.h"

#define S 16
#define PMAX 8

/* The seeds' goldens: allgather slice of rank r; all_to_all chunk r -> d. */
static int32_t ag_val(int base, int r, int j)
{
    return base * 1000 + r * 100 + j + 1;
}

static int32_t a2a_val(int base, int r, int d, int j)
{
    return base * 10000 + r * 1000 + d * 100 + j;
}

enum read_mode { READ_RIGHT, READ_NEXT_SLOT, READ_OWN_ROW };

typedef struct seed {
    pld_dtensor tgt, sig, late, hsig;
    int a2a;  /* 0: allgather, 1: all_to_all */
    int read; /* enum read_mode */
    int base;
    int alias;      /* pass a source inside the target window */
    int no_barrier; /* hand push without barrier (reader first) */
    int late_ms;    /* hand push with barrier, writers late */
    int set_rounds; /* hand Set barrier rounds (Set/Ge mismatch from round 2) */
    pld_notify_op hop;
    int32_t y[PMAX][PMAX * S]; /* what each rank read back, for the host */
} seed;

static int32_t want(const seed *a, int me, int s, int j)
{
    return a->a2a ? a2a_val(a->base, s, me, j) : ag_val(a->base, s, j);
}

/* Reads the rows back into y (as the caller of a builtin does), in the
 * requested (possibly wrong) order, publishes y and checks the golden. */
static void read_back(pld_ctx *c, seed *a, int sync)
{
    int me = pld_rank(c), p = pld_nranks(c);
    const int32_t *t = pld_local(c, a->tgt).data;
    int32_t *y = a->y[me];
    for (int peer = 0; peer < p; peer++) {
        int row = peer, slot = peer;
        if (a->read == READ_NEXT_SLOT) /* peer p's row stored at slot p+1 */
            slot = (peer + 1) % p;
        if (a->read == READ_OWN_ROW)
            row = me;
        memcpy(&y[slot * S], &t[row * S], sizeof(int32_t) * S);
    }
    if (sync)
        pld_barrier(c, a->sig); /* every rank has read: now anyone may fail */
    for (int s = 0; s < p; s++)
        for (int j = 0; j < S; j++)
            if (y[s * S + j] != want(a, me, s, j))
                pld_fail(c, "golden mismatch: rank %d slot %d [%d] = %d, expected %d", me, s, j,
                         y[s * S + j], want(a, me, s, j));
}

static void k_builtin(pld_ctx *c, void *arg)
{
    seed *a = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    int32_t x[PMAX * S];
    for (int d = 0; d < p; d++)
        for (int j = 0; j < S; j++)
            x[d * S + j] = a->a2a ? a2a_val(a->base, me, d, j) : ag_val(a->base, me, j);
    pld_tensor src = pld_tensor_make(x, PLD_INT32, 2, PLD_IDX(a->a2a ? p : 1, S));
    if (a->alias) {
        /* "源/目标混叠": the source is staged inside the target window */
        int32_t *t = pld_local(c, a->tgt).data;
        memcpy(t, x, sizeof(int32_t) * (size_t)(a->a2a ? p * S : S));
        src = pld_tensor_make(t, PLD_INT32, 2, PLD_IDX(a->a2a ? p : 1, S));
    }
    if (a->a2a)
        pld_all_to_all(c, src, a->tgt, a->sig);
    else
        pld_allgather(c, src, a->tgt, a->sig);
    read_back(c, a, 1);
}

/* Hand push (put my chunk into row `me` of every rank's target), then read.
 * no_barrier: rank 0 reads before the others push -- they wait for its
 * "late" signal, which it sends only after reading, so the stale read is
 * certain. The fix (late_ms): the same late writers with a barrier. */
static void k_hand_push(pld_ctx *c, void *arg)
{
    seed *a = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    int32_t x[PMAX * S];
    for (int d = 0; d < p; d++)
        for (int j = 0; j < S; j++)
            x[d * S + j] = a->a2a ? a2a_val(a->base, me, d, j) : ag_val(a->base, me, j);
    pld_tensor src = pld_tensor_make(x, PLD_INT32, 2, PLD_IDX(p, S));
    if (me != 0 && a->no_barrier)
        pld_wait(c, a->late, PLD_IDX(0, 0), 1, PLD_WAIT_GE); /* the reader has read */
    if (me != 0 && a->late_ms)
        tu_sleep_ms(a->late_ms);
    for (int d = 0; d < p; d++) {
        pld_xfer x1;
        memset(&x1, 0, sizeof x1);
        x1.dst_offsets = PLD_IDX(me, 0);
        x1.src_offsets = PLD_IDX(a->a2a ? d : 0, 0);
        x1.shape = PLD_IDX(1, S);
        pld_put(c, a->tgt, d, src, &x1);
    }
    if (!a->no_barrier) {
        pld_barrier(c, a->sig); /* every push has landed */
        read_back(c, a, 1);
        return;
    }
    if (me != 0) {
        pld_notify(c, a->late, 0, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD); /* pushed */
        return;
    }
    /* rank 0: read at once, then let the writers go and wait until they pushed */
    const int32_t *t = pld_local(c, a->tgt).data;
    memcpy(a->y[0], t, sizeof(int32_t) * (size_t)(p * S));
    for (int peer = 1; peer < p; peer++)
        pld_notify(c, a->late, peer, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int peer = 1; peer < p; peer++)
        pld_wait(c, a->late, PLD_IDX(peer, 0), 1, PLD_WAIT_GE);
    for (int s = 0; s < p; s++)
        for (int j = 0; j < S; j++)
            if (a->y[0][s * S + j] != want(a, 0, s, j))
                pld_fail(c,
                         "golden mismatch: rank 0 row %d [%d] = %d, expected %d (read before "
                         "rank %d pushed: no barrier)",
                         s, j, a->y[0][s * S + j], want(a, 0, s, j), s);
}

static seed *seed_setup(pld_world *w)
{
    int p = pld_world_size(w);
    seed *a = cu_alloc(w, sizeof *a);
    a->tgt = tu_window(w, "tgt", PLD_INT32, 2, PLD_IDX(p, S));
    a->sig = tu_signal(w, "sig", 1);
    a->late = tu_signal(w, "late", 1);
    a->hsig = tu_signal(w, "hsig", 1);
    a->base = 1;
    return a;
}

/* Host: slot `slot` of rank r's y holds what rank `src` produced for `dst`. */
static void expect_slot(seed *a, int r, int slot, int src, int dst, int base)
{
    for (int j = 0; j < S; j++) {
        int32_t w = src < 0 ? 0 : (a->a2a ? a2a_val(base, src, dst, j) : ag_val(base, src, j));
        cr_expect_eq(a->y[r][slot * S + j], w, "rank %d slot %d [%d] = %d, expected %d", r, slot, j,
                     a->y[r][slot * S + j], w);
    }
}

/* ---- read order: right, slot p+1, own row ------------------------------- */

static void read_order(int p, int a2a, int read)
{
    pld_world *w = cu_world(p);
    seed *a = seed_setup(w);
    a->a2a = a2a;
    a->read = read;
    if (read == READ_RIGHT) {
        TU_LAUNCH_OK(w, k_builtin, a);
    } else {
        TU_LAUNCH_FAILS(w, k_builtin, a, PLD_ERR_CHECK);
        TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    }
    /* the symptom, on every rank */
    for (int r = 0; r < p; r++)
        for (int q = 0; q < p; q++) {
            if (read == READ_RIGHT)
                expect_slot(a, r, q, q, r, 1);
            else if (read == READ_NEXT_SLOT) /* slot q+1 holds rank q's row */
                expect_slot(a, r, (q + 1) % p, q, r, 1);
            else /* every slot holds my own row */
                expect_slot(a, r, q, r, r, 1);
        }
    /* an aborted launch may leave credits behind (peers released mid-barrier) */
    if (read == READ_RIGHT)
        cu_assert_signal_zero(w, a->sig);
    cu_finalize(w);
}

Test(seeds_allgather, right_order_passes_p4, .timeout = 30)
{
    read_order(4, 0, READ_RIGHT);
}
Test(seeds_allgather, right_order_passes_p3, .timeout = 30)
{
    read_order(3, 0, READ_RIGHT);
}
/* "行顺序错误 -- 输出偏移 != 对端 rank" */
Test(seeds_allgather, wrong_slot_order_detected_p4, .timeout = 30)
{
    read_order(4, 0, READ_NEXT_SLOT);
}
Test(seeds_allgather, wrong_slot_order_detected_p3, .timeout = 30)
{
    read_order(3, 0, READ_NEXT_SLOT);
}
/* "每个 rank 显示自己的 slice -- 读取自己的 window 而非对端" */
Test(seeds_allgather, own_slice_read_detected_p4, .timeout = 30)
{
    read_order(4, 0, READ_OWN_ROW);
}
Test(seeds_all_to_all, right_order_passes_p4, .timeout = 30)
{
    read_order(4, 1, READ_RIGHT);
}
/* "输出是我自己的分块而非对端的 -- 读回自己的行" */
Test(seeds_all_to_all, own_row_read_detected_p4, .timeout = 30)
{
    read_order(4, 1, READ_OWN_ROW);
}
Test(seeds_all_to_all, wrong_slot_order_detected_p3, .timeout = 30)
{
    read_order(3, 1, READ_NEXT_SLOT);
}

/* ---- alias of source and target ------------------------------------------ */

static void alias(int a2a)
{
    pld_world *w = cu_world(4);
    seed *a = seed_setup(w);
    a->a2a = a2a;
    a->alias = 1;
    TU_LAUNCH_FAILS(w, k_builtin, a, PLD_ERR_ALIAS);
    const char *msg = pld_world_error(w);
    TU_EXPECT_STARTS(msg, "rank ");
    TU_EXPECT_CONTAINS(msg, a2a ? "pld_all_to_all: " : "pld_allgather: ");
    TU_EXPECT_CONTAINS(msg, "target window 'tgt'");
    /* the fix -- a separate source buffer -- works in the same world */
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->sig.buf), PLD_OK);
    a->alias = 0;
    TU_LAUNCH_OK(w, k_builtin, a);
    cu_finalize(w);
}

/* "源/目标混叠损坏 -- 输入与目标用同一缓冲" */
Test(seeds_all_to_all, input_inside_target_is_alias, .timeout = 30)
{
    alias(1);
}
Test(seeds_allgather, local_inside_target_is_alias, .timeout = 30)
{
    alias(0);
}

/* ---- missing barrier at P=4: stale data ---------------------------------- */

static void missing_barrier(int a2a)
{
    pld_world *w = cu_world(4);
    seed *a = seed_setup(w);
    a->a2a = a2a;
    /* on a fresh window the early read sees zeros where peers' rows belong */
    a->no_barrier = 1;
    TU_LAUNCH_FAILS(w, k_hand_push, a, PLD_ERR_CHECK);
    TU_EXPECT_STARTS(pld_world_error(w), "rank 0 (device 0): ");
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    expect_slot(a, 0, 0, 0, 0, 1); /* its own row is there */
    for (int s = 1; s < 4; s++)
        expect_slot(a, 0, s, -1, 0, 1); /* zeros */
    /* a correct round 1, then round 2 without the barrier reads round 1: stale */
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->late.buf), PLD_OK);
    a->no_barrier = 0;
    TU_LAUNCH_OK(w, k_hand_push, a);
    a->no_barrier = 1;
    a->base = 2;
    TU_LAUNCH_FAILS(w, k_hand_push, a, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), "golden mismatch");
    expect_slot(a, 0, 0, 0, 0, 2);
    for (int s = 1; s < 4; s++)
        expect_slot(a, 0, s, s, 0, 1); /* round 1's values */
    /* the fix: late writers (50 ms), but a barrier before the read */
    a->no_barrier = 0;
    a->late_ms = 50;
    a->base = 3;
    TU_LAUNCH_OK(w, k_hand_push, a);
    for (int r = 0; r < 4; r++)
        for (int s = 0; s < 4; s++)
            expect_slot(a, r, s, s, r, 3);
    cu_finalize(w);
}

/* "P=4 时数据陈旧 -- stage 与 gather 之间缺少 barrier" */
Test(seeds_allgather, missing_barrier_reads_stale_p4, .timeout = 30)
{
    missing_barrier(0);
}
/* "仅 P=4 时值错误 -- 读回前缺少 barrier" */
Test(seeds_all_to_all, missing_barrier_reads_stale_p4, .timeout = 30)
{
    missing_barrier(1);
}

/* ---- a rank hangs: Set/Ge mismatch in a hand barrier ----------------------- */

/* Round g of a hand barrier: notify every peer, wait Ge g on every source.
 * With Set the cell never exceeds 1, so round 2 waits forever. */
static void k_hand_barrier(pld_ctx *c, void *arg)
{
    seed *a = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    for (int g = 1; g <= a->set_rounds; g++) {
        for (int peer = 0; peer < p; peer++)
            if (peer != me)
                pld_notify(c, a->hsig, peer, PLD_IDX(me, 0), 1, a->hop);
        for (int src = 0; src < p; src++)
            if (src != me)
                pld_wait(c, a->hsig, PLD_IDX(src, 0), g, PLD_WAIT_GE);
    }
}

Test(seeds_all_to_all, set_ge_mismatch_is_deadlock_listing_every_rank, .timeout = 30)
{
    pld_world *w = cu_world(4);
    seed *a = seed_setup(w);
    a->set_rounds = 2;
    a->hop = PLD_NOTIFY_SET;
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_hand_barrier, a);
    double dt = tu_now_ms() - t0;
    const char *msg = pld_world_error(w);
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "launch = %s, expected PLD_ERR_DEADLOCK: %s",
                 pld_status_name(st), msg);
    cr_expect_lt(dt, 1000.0, "the deadlock was reported after %.0f ms", dt);
    for (int r = 0; r < 4; r++) {
        char prefix[64], line[512], cellv[64];
        snprintf(prefix, sizeof prefix, "rank %d (device %d): pld_wait 'hsig'", r, r);
        const char *l = tu_line_starting(msg, prefix, line, sizeof line);
        cr_expect_not_null(l, "no line for rank %d (\"%s\") in the report:\n%s", r, prefix, msg);
        if (!l)
            continue;
        snprintf(cellv, sizeof cellv, "[%d,0] Ge 2 (current 1)", r == 0 ? 1 : 0);
        cr_expect(tu_contains(l, cellv), "rank %d's line \"%s\" lacks \"%s\"", r, l, cellv);
    }
    /* the fix: AtomicAdd credits reach 2, on a fresh signal, same world */
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, a->hsig.buf), PLD_OK);
    a->hop = PLD_NOTIFY_ATOMIC_ADD;
    TU_LAUNCH_OK(w, k_hand_barrier, a);
    /* builtins still work in the world afterwards */
    TU_ASSERT_STATUS(pld_host_barrier(w, &a->sig), PLD_OK);
    cu_finalize(w);
}
