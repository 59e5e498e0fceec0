/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_CHECK=hazards: each lint tripped by a small kernel (PLD_ERR_CHECK and
 * a message naming the cells and calls) next to its correct twin, which
 * runs clean; on the thread and the process transports. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <stdlib.h>
#include <string.h>

enum {
    LINE_SET,    /* every rank Sets its cell [me,0] of a [P,1] signal on every peer */
    LINE_PADDED, /* the same on [P,16]: one line per writer */
    LINE_ADD,    /* several AtomicAdd writers on one line: safe */
    MIXED,       /* rank 1 Sets, then AtomicAdds, cell [0,0] of rank 0 */
    MIXED_TWO,   /* rank 1 Sets [1,0] of rank 0, rank 2 AtomicAdds it */
    NOT_MIXED,   /* two AtomicAdds */
    EQ_MULTI,    /* ranks 1 and 2 add to [0,0] of rank 0, which waits Eq 2 */
    GE_MULTI,    /* the same with Ge 2 */
    EQ_SINGLE,   /* one writer, Eq: fine */
    TILE_BIG,    /* a 256 KiB tile (with PLD_UB_BYTES raised) */
    TILE_SMALL,  /* a 128 KiB tile */
    PUT_WHOLE,   /* a 256 KiB pld_put staged whole */
    PUT_CHUNKED, /* the same in 64 KiB chunks */
    CORES_MANY,  /* allreduce on 40 cores: a2a3sim has 48, a5sim 36 */
    CORES_FEW,   /* on 8 */
};

typedef struct hargs {
    pld_dtensor sig, wide, data, big;
    int kind;
} hargs;

static void kernel(pld_ctx *c, void *p)
{
    hargs *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    switch (a->kind) {
    case LINE_SET:
    case LINE_PADDED:
    case LINE_ADD: {
        pld_dtensor s = a->kind == LINE_PADDED ? a->wide : a->sig;
        pld_notify_op op = a->kind == LINE_ADD ? PLD_NOTIFY_ATOMIC_ADD : PLD_NOTIFY_SET;
        for (int peer = 0; peer < n; peer++)
            if (peer != me)
                pld_notify(c, s, peer, PLD_IDX(me, 0), 1, op);
        for (int src = 0; src < n; src++)
            if (src != me)
                pld_wait(c, s, PLD_IDX(src, 0), 1, PLD_WAIT_GE);
        break;
    }
    case MIXED:
    case NOT_MIXED:
        if (me == 1) {
            pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1,
                       a->kind == MIXED ? PLD_NOTIFY_SET : PLD_NOTIFY_ATOMIC_ADD);
            pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        } else {
            pld_wait(c, a->sig, PLD_IDX(0, 0), 2, PLD_WAIT_GE);
        }
        break;
    case MIXED_TWO:
        if (me == 1)
            pld_notify(c, a->wide, 0, PLD_IDX(1, 0), 1, PLD_NOTIFY_SET);
        if (me == 2)
            pld_notify(c, a->wide, 0, PLD_IDX(1, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        if (me == 0)
            pld_wait(c, a->wide, PLD_IDX(1, 0), 2, PLD_WAIT_GE);
        break;
    case EQ_MULTI:
    case GE_MULTI:
        if (me > 0)
            pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        else
            pld_wait(c, a->sig, PLD_IDX(0, 0), 2, a->kind == EQ_MULTI ? PLD_WAIT_EQ : PLD_WAIT_GE);
        break;
    case EQ_SINGLE:
        if (me == 1)
            pld_notify(c, a->sig, 0, PLD_IDX(0, 0), 1, PLD_NOTIFY_SET);
        if (me == 0)
            pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_EQ);
        break;
    case TILE_BIG:
    case TILE_SMALL:
        pld_tile_create(c, PLD_FP32, a->kind == TILE_BIG ? 256 : 128, 256);
        break;
    case PUT_WHOLE:
    case PUT_CHUNKED: {
        pld_xfer x = {.chunk_rows = a->kind == PUT_CHUNKED ? 64 : 0,
                      .chunk_cols = a->kind == PUT_CHUNKED ? 256 : 0};
        pld_put(c, a->big, (me + 1) % n, pld_local(c, a->big), &x);
        break;
    }
    case CORES_MANY:
    case CORES_FEW:
        break; /* host-side */
    }
}

/* Runs `kind` at P ranks on `transport`; returns the status, *msg the error. */
static pld_status run(int kind, int p, const char *transport, const char **msg)
{
    static char devices[16], err[4096];
    snprintf(devices, sizeof devices, "0-%d", p - 1);
    pld_config cfg = {.devices = devices, .transport = transport, .check = PLD_CHECK_HAZARDS};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    hargs *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *sb, *wb, *db, *bb;
    cr_assert_eq(pld_alloc_window_buffer(w, (size_t)p * 4, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(p, 1), &a->sig), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, (size_t)p * 64, "lines", &wb), PLD_OK);
    cr_assert_eq(pld_window(wb, PLD_INT32, 2, PLD_IDX(p, 16), &a->wide), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 1024 * 4, "data", &db), PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 1, PLD_IDX(1024), &a->data), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 256 * 256 * 4, "big", &bb), PLD_OK);
    cr_assert_eq(pld_window(bb, PLD_FP32, 2, PLD_IDX(256, 256), &a->big), PLD_OK);
    a->kind = kind;
    pld_status st;
    if (kind == CORES_MANY || kind == CORES_FEW)
        st = pld_host_allreduce(w, a->data, NULL, PLD_SUM, PLD_MESH, kind == CORES_MANY ? 40 : 8);
    else
        st = pld_launch(w, kernel, a);
    snprintf(err, sizeof err, "%s", pld_world_error(w));
    *msg = err;
    /* the world stays usable: the same launch again gives the same verdict */
    pld_world_finalize(w);
    return st;
}

static void expect_report(int kind, int p, const char *transport, const char *const *parts)
{
    const char *msg;
    pld_status st = run(kind, p, transport, &msg);
    cr_assert_eq(st, PLD_ERR_CHECK, "status %s, message: %s", pld_status_name(st), msg);
    cr_expect(strstr(msg, "PLD_CHECK=hazards") != NULL, "message: %s", msg);
    for (int i = 0; parts[i]; i++)
        cr_expect(strstr(msg, parts[i]) != NULL, "'%s' not in: %s", parts[i], msg);
}

static void expect_clean(int kind, int p, const char *transport)
{
    const char *msg;
    pld_status st = run(kind, p, transport, &msg);
    cr_assert_eq(st, PLD_OK, "status %s, message: %s", pld_status_name(st), msg);
}

/* ---- several ranks Set-writing one line ---------------------------------- */

static const char *const line_parts[] = {"signal 'sig' cells [", "share one 64-byte line",
                                         "(pld_notify Set)", "give each writer its own line", NULL};

Test(hazards, line_set_thread, .timeout = 30)
{
    expect_report(LINE_SET, 3, "thread", line_parts);
}
Test(hazards, line_set_process, .timeout = 60)
{
    expect_report(LINE_SET, 4, "process", line_parts);
}
Test(hazards, line_set_p2_has_one_writer_per_receiver, .timeout = 30)
{
    expect_clean(LINE_SET, 2, "thread"); /* each receiver hears from one rank only */
}
Test(hazards, line_padded_is_clean, .timeout = 30)
{
    expect_clean(LINE_PADDED, 4, "thread");
    expect_clean(LINE_PADDED, 3, "process");
}
Test(hazards, line_atomic_adds_are_clean, .timeout = 30)
{
    expect_clean(LINE_ADD, 4, "thread");
    expect_clean(LINE_ADD, 3, "process");
}

/* ---- Set and AtomicAdd on one cell --------------------------------------- */

Test(hazards, mixed_by_one_rank, .timeout = 30)
{
    static const char *const parts[] = {"signal 'sig' cell [0,0] of rank 0 gets both Set (rank 1",
                                        "AtomicAdd (rank 1", NULL};
    expect_report(MIXED, 2, "thread", parts);
    expect_report(MIXED, 2, "process", parts);
}
Test(hazards, mixed_by_two_ranks, .timeout = 30)
{
    static const char *const parts[] = {"cell [1,0] of rank 0 gets both Set (rank 1",
                                        "AtomicAdd (rank 2", NULL};
    expect_report(MIXED_TWO, 3, "thread", parts);
    expect_report(MIXED_TWO, 3, "process", parts);
}
Test(hazards, adds_only_are_clean, .timeout = 30)
{
    expect_clean(NOT_MIXED, 2, "thread");
}

/* ---- Eq on a cell of several writers ------------------------------------- */

Test(hazards, eq_on_two_writers, .timeout = 30)
{
    static const char *const parts[] = {"rank 0 waits with Eq on signal 'sig' cell [0,0]",
                                        "ranks 1 (pld_notify AtomicAdd) and 2", "wait with Ge",
                                        NULL};
    expect_report(EQ_MULTI, 3, "thread", parts);
    expect_report(EQ_MULTI, 3, "process", parts);
}
Test(hazards, ge_on_two_writers_is_clean, .timeout = 30)
{
    expect_clean(GE_MULTI, 3, "thread");
    expect_clean(GE_MULTI, 3, "process");
}
Test(hazards, eq_on_one_writer_is_clean, .timeout = 30)
{
    expect_clean(EQ_SINGLE, 2, "thread");
}

/* ---- limits of the other profile ----------------------------------------- */

Test(hazards, tile_beyond_stock_ub, .timeout = 30)
{
    setenv("PLD_UB_BYTES", "1M", 1);
    static const char *const parts[] = {
        "pld_tile_create: PLD_CHECK=hazards: tile t0 fp32 [256,256]", "262144 bytes of UB",
        "allows 1048576", "has 196608", NULL};
    expect_report(TILE_BIG, 2, "thread", parts);
    expect_clean(TILE_SMALL, 2, "thread");
}
Test(hazards, transfer_beyond_stock_ub, .timeout = 30)
{
    setenv("PLD_UB_BYTES", "1M", 1);
    static const char *const parts[] = {"pld_put: PLD_CHECK=hazards: transfer of [256,256]",
                                        "262144 bytes of UB", NULL};
    expect_report(PUT_WHOLE, 2, "process", parts);
    expect_clean(PUT_CHUNKED, 2, "process");
}
Test(hazards, core_num_beyond_other_profile, .timeout = 60)
{
    static const char *const parts[] = {"core_num needs 40 AIV cores",
                                        "this world (a2a3sim) allows 48",
                                        "stock a5sim profile has 36", NULL};
    expect_report(CORES_MANY, 2, "thread", parts);
    expect_clean(CORES_FEW, 2, "thread");
}

/* ---- the setting --------------------------------------------------------- */

Test(hazards, setting_word, .timeout = 30)
{
    setenv("PLD_CHECK", "hazards", 1);
    pld_world *w;
    pld_config cfg = {.devices = "0,1"};
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    pld_world_finalize(w);
    setenv("PLD_CHECK", "hazard", 1);
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_ERR_ARG);
    cr_expect(strstr(pld_last_error(), "hazards") != NULL, "%s", pld_last_error());
}
