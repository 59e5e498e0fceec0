/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 200809L
/* Teams as the tools see them: the listing, the trace, the race checker
 * and the deadlock report name a rank in a view by world rank and by team
 * rank ("rank 3 (team 'tp' rank 1)"), and say which team a call ran in. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* 4 ranks: tp rows {0,1} {2,3}, dp columns {0,2} {1,3}. */
typedef struct oargs {
    pld_team *tp, *dp;
    pld_window_buffer *data, *sig;
    int mode;
} oargs;

static oargs *setup(pld_world *w)
{
    oargs *a = tu_host_alloc(w, sizeof *a);
    cr_assert_eq(pld_team_split_2d(w, NULL, 2, "tp", &a->tp, "dp", &a->dp), PLD_OK, "%s",
                 pld_world_error(w));
    cr_assert_eq(pld_alloc_window_buffer(w, 4 * 64, "data", &a->data), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 4 * 8, "sig", &a->sig), PLD_OK);
    return a;
}

static void views(oargs *a, pld_ctx *t, pld_dtensor *data, pld_dtensor *sig)
{
    cr_assert_eq(pld_window(a->data, PLD_FP32, 2, PLD_IDX(pld_nranks(t), 4), data), PLD_OK);
    cr_assert_eq(pld_window(a->sig, PLD_INT32, 2, PLD_IDX(pld_nranks(t), 1), sig), PLD_OK);
}

static void k_gather(pld_ctx *c, void *p)
{
    oargs *a = p;
    pld_ctx *t = pld_team_ctx(c, a->tp);
    pld_dtensor data, sig;
    views(a, t, &data, &sig);
    pld_allgather_inplace(t, data, sig);
}

Test(team_observe, listing_names_the_team)
{
    pld_config cfg = {.devices = "0-3", .ir = 0};
    pld_world *w = tu_world_cfg(&cfg);
    oargs *a = setup(w);
    pld_ir_enable(w, 1);
    cr_assert_eq(pld_launch(w, k_gather, a), PLD_OK, "%s", pld_world_error(w));
    const char *ir = pld_ir_text(w);
    TU_EXPECT_CONTAINS(ir, "call pld_allgather_inplace(data, sig) as rank 0 (team 'tp' rank 0), "
                           "2 ranks");
    /* rank 0's only peer in its row is team rank 1 */
    TU_EXPECT_CONTAINS(ir, "notify sig@peer1[0,0] += 1");
    cr_expect(!tu_contains(ir, "@peer2"), "a peer outside the group in:\n%s", ir);
    pld_world_finalize(w);
}

Test(team_observe, trace_labels_slices_with_the_team)
{
    char path[] = "/tmp/pld-team-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    pld_config cfg = {.devices = "0-3", .trace_path = path};
    pld_world *w = tu_world_cfg(&cfg);
    oargs *a = setup(w);
    cr_assert_eq(pld_launch(w, k_gather, a), PLD_OK, "%s", pld_world_error(w));
    pld_world_finalize(w);
    char *s = tu_slurp(path, "trace");
    /* one track per world rank; the builtin's slice carries the team */
    for (int r = 0; r < 4; r++) {
        char want[160];
        snprintf(want, sizeof want,
                 "\"name\":\"pld_allgather_inplace [tp]\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,",
                 r * 1000);
        cr_expect(tu_contains(s, want), "no team slice on rank %d's track", r);
    }
    cr_expect(tu_contains(s, "\"args\":{\"team\":\"tp\",\"team_rank\":1"), "team args");
    free(s);
    unlink(path);
}

/* Rank 1 (tp rank 1) writes its tp peer's row without any ordering against
 * that peer's own write: the race report names both by team rank. */
static void k_race(pld_ctx *c, void *p)
{
    oargs *a = p;
    pld_ctx *t = pld_team_ctx(c, a->tp);
    pld_dtensor data, sig;
    views(a, t, &data, &sig);
    float v[4] = {1, 2, 3, 4};
    pld_tensor src = pld_tensor_make(v, PLD_FP32, 2, PLD_IDX(1, 4));
    pld_xfer x = {
        .dst_offsets = PLD_IDX(0, 0), .src_offsets = PLD_IDX(0, 0), .shape = PLD_IDX(1, 4)};
    if (pld_world_rank(c) < 2)
        pld_put(t, data, 0, src, &x); /* both members write team rank 0's row 0 */
}

Test(team_observe, race_report_names_team_ranks)
{
    pld_config cfg = {.devices = "0-3", .transport = "thread", .check = PLD_CHECK_RACE};
    pld_world *w = tu_world_cfg(&cfg);
    oargs *a = setup(w);
    pld_status st = pld_launch(w, k_race, a);
    cr_assert_eq(st, PLD_ERR_RACE, "%s: %s", pld_status_name(st), pld_world_error(w));
    const char *msg = pld_world_error(w);
    /* whichever came second names the first by world and team rank */
    cr_expect(tu_contains(msg, "rank 0 (team 'tp' rank 0)") &&
                  tu_contains(msg, "rank 1 (team 'tp' rank 1)"),
              "%s", msg);
    pld_world_finalize(w);
}

/* Column {1,3} deadlocks (rank 3 never enters the barrier) while column
 * {0,2} finishes: the report names the stuck rank in team terms. */
static void k_stuck(pld_ctx *c, void *p)
{
    oargs *a = p;
    pld_ctx *t = pld_team_ctx(c, a->dp);
    pld_dtensor data, sig;
    views(a, t, &data, &sig);
    if (pld_world_rank(c) != 3)
        pld_barrier(t, sig);
}

Test(team_observe, deadlock_in_one_group_names_team_ranks)
{
    const char *tr = getenv("PLD_TEST_TRANSPORT");
    pld_config cfg = {.devices = "0-3", .wait_timeout_ms = 20000};
    pld_world *w = tu_world_cfg(&cfg);
    oargs *a = setup(w);
    cr_assert_eq(pld_launch(w, k_stuck, a), PLD_ERR_DEADLOCK, "%s (%s)", pld_world_error(w),
                 tr ? tr : "thread");
    const char *msg = pld_world_error(w);
    TU_EXPECT_CONTAINS(msg, "rank 1 (team 'dp' rank 0) (device 1): pld_wait 'sig'[1,0] Ge 1");
    TU_EXPECT_CONTAINS(msg, "rank 3 (device 3): finished");
    /* the other column finished its barrier */
    TU_EXPECT_CONTAINS(msg, "rank 2 (device 2): finished");
    pld_world_finalize(w);
}
