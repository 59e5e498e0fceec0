/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_CHECK=race: unordered accesses to a window are PLD_ERR_RACE naming
 * both; ordered ones (notify -> wait) and every builtin are clean. */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <string.h>

typedef struct rargs {
    pld_dtensor data, sig;
    int kind;
} rargs;

static void kernel(pld_ctx *c, void *p)
{
    rargs *a = p;
    int me = pld_rank(c);
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 16);
    switch (a->kind) {
    case 0: /* stage, no barrier, read the peer's row: the seeds' missing barrier */
        pld_store(c, t, pld_local(c, a->data), PLD_IDX(me, 0));
        pld_remote_load(c, t, a->data, 1 - me, PLD_IDX(1 - me, 0));
        break;
    case 1: /* the same with the barrier: ordered */
        pld_store(c, t, pld_local(c, a->data), PLD_IDX(me, 0));
        pld_barrier(c, a->sig);
        pld_remote_load(c, t, a->data, 1 - me, PLD_IDX(1 - me, 0));
        break;
    case 2: /* both ranks write the same row of rank 0: two unordered writes */
        pld_remote_store(c, t, a->data, 0, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
        break;
    case 3: /* the same rows, but rank 1 writes only after rank 0 said so */
        if (me == 0) {
            pld_remote_store(c, t, a->data, 0, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
            pld_notify(c, a->sig, 1, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        } else {
            pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
            pld_remote_store(c, t, a->data, 0, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
        }
        break;
    case 4: /* disjoint columns of the same row: no overlap, no race */
        pld_remote_store(c, pld_tile_create(c, PLD_FP32, 1, 8), a->data, 0, PLD_IDX(1, me * 8),
                         PLD_ATOMIC_NONE);
        break;
    }
}

static pld_status run(int kind, pld_world **w_out)
{
    pld_config cfg = {.devices = "0,1", .check = PLD_CHECK_RACE};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    rargs *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *db, *sb;
    cr_assert_eq(pld_alloc_window_buffer(w, 2 * 16 * 4, "data", &db), PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 2, PLD_IDX(2, 16), &a->data), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 2 * 4, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(2, 1), &a->sig), PLD_OK);
    a->kind = kind;
    *w_out = w;
    return pld_launch(w, kernel, a);
}

Test(race, missing_barrier_is_reported, .timeout = 30)
{
    pld_world *w;
    pld_status st = run(0, &w);
    cr_assert_eq(st, PLD_ERR_RACE, "%s: %s", pld_status_name(st), pld_world_error(w));
    const char *m = pld_world_error(w);
    cr_assert(strstr(m, "races with rank") && strstr(m, "'data'") &&
                  strstr(m, "no notify/wait orders them"),
              "%s", m);
    cr_assert(strstr(m, "pld_store") && strstr(m, "pld_remote_load"), "both accesses named: %s", m);
    pld_world_finalize(w);
}

Test(race, barrier_orders_them, .timeout = 30)
{
    pld_world *w;
    pld_status st = run(1, &w);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
    pld_world_finalize(w);
}

Test(race, two_unordered_writes, .timeout = 30)
{
    pld_world *w;
    pld_status st = run(2, &w);
    cr_assert_eq(st, PLD_ERR_RACE, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_assert(strstr(pld_world_error(w), "write of 'data'@rank0 region [0,0]+[1,16]"), "%s",
              pld_world_error(w));
    pld_world_finalize(w);
}

Test(race, notify_wait_orders_writes, .timeout = 30)
{
    pld_world *w;
    pld_status st = run(3, &w);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
    pld_world_finalize(w);
}

Test(race, disjoint_regions_do_not_race, .timeout = 30)
{
    pld_world *w;
    pld_status st = run(4, &w);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
    pld_world_finalize(w);
}

Test(race, process_transport_is_refused, .timeout = 30)
{
    pld_config cfg = {.devices = "0,1", .transport = "process", .check = PLD_CHECK_RACE};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_ERR_UNSUPPORTED);
    cr_assert(strstr(pld_last_error(), "thread transport"), "%s", pld_last_error());
}
