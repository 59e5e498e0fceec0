/* SPDX-License-Identifier: Apache-2.0 */
/* Teams on the host: splits by color and key, strided and 2-D splits,
 * teams of teams, the queries, and every bad argument with its message. */
#include "test_util.h"

/* The members of world_rank's group, as world ranks, into out; returns
 * the group size. */
static int members(const pld_team *t, int world_rank, int *out)
{
    int n = pld_team_group_size(t, world_rank);
    for (int i = 0; i < n; i++)
        out[i] = pld_team_world_rank(t, world_rank, i);
    return n;
}

static void expect_group(const pld_team *t, int world_rank, int n, const int *want)
{
    int got[64];
    int k = members(t, world_rank, got);
    cr_expect_eq(k, n, "team '%s', rank %d: group of %d, expected %d", pld_team_name(t), world_rank,
                 k, n);
    for (int i = 0; i < n && i < k; i++)
        cr_expect_eq(got[i], want[i], "team '%s', rank %d: member %d is %d, expected %d",
                     pld_team_name(t), world_rank, i, got[i], want[i]);
}

Test(team, split_by_color_orders_by_key_then_rank, .timeout = 30)
{
    pld_world *w = tu_world("0-5");
    /* colors 0 1 0 1 NONE 0, keys reverse the order of color 0 */
    int color[6] = {0, 1, 0, 1, PLD_TEAM_NONE, 0};
    int key[6] = {9, 0, 5, 0, 0, 1};
    pld_team *t = NULL;
    TU_ASSERT_STATUS(pld_team_split(w, NULL, color, key, "c", &t), PLD_OK);
    cr_expect_eq(pld_team_ngroups(t), 2);
    expect_group(t, 0, 3, (const int[]){5, 2, 0});
    expect_group(t, 3, 2, (const int[]){1, 3});
    cr_expect_eq(pld_team_rank_of(t, 0), 2);
    cr_expect_eq(pld_team_rank_of(t, 5), 0);
    cr_expect_eq(pld_team_rank_of(t, 4), -1);
    cr_expect_eq(pld_team_group_size(t, 4), 0);
    cr_expect_eq(pld_team_world_rank(t, 4, 0), -1);
    cr_expect_eq(pld_team_world_rank(t, 0, 3), -1);
    cr_expect_str_eq(pld_team_name(t), "c");
    pld_team_free(w, t);
    pld_world_finalize(w);
}

Test(team, grids_of_every_shape_with_a_short_last_row, .timeout = 30)
{
    static const struct {
        const char *devices;
        int p, xrange;
    } grids[] = {{"0-3", 4, 2}, {"0-5", 6, 2}, {"0-5", 6, 3},
                 {"0-7", 8, 2}, {"0-7", 8, 4}, {"0-4", 5, 2}};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        pld_world *w = tu_world(grids[g].devices);
        int p = grids[g].p, xr = grids[g].xrange;
        pld_team *x = NULL, *y = NULL;
        TU_ASSERT_STATUS(pld_team_split_2d(w, NULL, xr, "tp", &x, "dp", &y), PLD_OK);
        cr_expect_eq(pld_team_ngroups(x), (p + xr - 1) / xr);
        cr_expect_eq(pld_team_ngroups(y), xr);
        for (int r = 0; r < p; r++) {
            int row = r / xr, col = r % xr;
            int rowlen = (row + 1) * xr <= p ? xr : p - row * xr;
            cr_expect_eq(pld_team_rank_of(x, r), col, "grid %d: x rank of %d", (int)g, r);
            cr_expect_eq(pld_team_group_size(x, r), rowlen);
            cr_expect_eq(pld_team_world_rank(x, r, 0), row * xr);
            cr_expect_eq(pld_team_rank_of(y, r), row, "grid %d: y rank of %d", (int)g, r);
            cr_expect_eq(pld_team_world_rank(y, r, 0), col);
        }
        cr_expect_str_eq(pld_team_name(x), "tp");
        cr_expect_str_eq(pld_team_name(y), "dp");
        pld_world_finalize(w); /* frees the teams too */
    }
}

Test(team, strided_and_a_team_of_a_team, .timeout = 30)
{
    pld_world *w = tu_world("0-5");
    pld_team *odd_even = NULL, *ends = NULL, *every_other = NULL;
    /* groups {0,2,4} and {1,3,5} */
    int color[6] = {0, 1, 0, 1, 0, 1};
    TU_ASSERT_STATUS(pld_team_split(w, NULL, color, NULL, "parity", &odd_even), PLD_OK);
    /* inside each: parent ranks 0 and 2 -> {0,4} and {1,5} */
    TU_ASSERT_STATUS(pld_team_split_strided(w, odd_even, 0, 2, 2, "ends", &ends), PLD_OK);
    expect_group(ends, 0, 2, (const int[]){0, 4});
    expect_group(ends, 5, 2, (const int[]){1, 5});
    cr_expect_eq(pld_team_rank_of(ends, 2), -1);
    /* on the world: every other rank, the rest in no group */
    TU_ASSERT_STATUS(pld_team_split_strided(w, NULL, 1, 2, 3, NULL, &every_other), PLD_OK);
    expect_group(every_other, 3, 3, (const int[]){1, 3, 5});
    cr_expect_eq(pld_team_rank_of(every_other, 0), -1);
    TU_EXPECT_STARTS(pld_team_name(every_other), "team");
    /* a 2-D split of a team: each parity group of 3 is a row of 2 and a
     * short row of 1 */
    pld_team *x = NULL, *y = NULL;
    TU_ASSERT_STATUS(pld_team_split_2d(w, odd_even, 2, "x", &x, "y", &y), PLD_OK);
    expect_group(x, 4, 1, (const int[]){4});
    expect_group(x, 3, 2, (const int[]){1, 3});
    expect_group(y, 4, 2, (const int[]){0, 4});
    pld_world_finalize(w);
}

Test(team, bad_arguments_name_the_values, .timeout = 30)
{
    pld_world *w = tu_world("0-3");
    pld_team *t = NULL;
    int bad_color[4] = {0, -2, 0, 0};
    TU_ASSERT_STATUS(pld_team_split(w, NULL, bad_color, NULL, "t", &t), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_team_split: color[1] = -2 is neither a color");
    TU_ASSERT_STATUS(pld_team_split(w, NULL, NULL, NULL, "t", &t), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_team_split: color is NULL");
    TU_ASSERT_STATUS(pld_team_split_strided(w, NULL, 1, 2, 3, "t", &t), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "start 1 + (size 3 - 1) x stride 2 = 5 is outside "
                                           "the world group 0 of 4 ranks");
    TU_ASSERT_STATUS(pld_team_split_strided(w, NULL, 0, 0, 2, "t", &t), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "stride 0");
    TU_ASSERT_STATUS(pld_team_split_strided(w, NULL, 0, 1, 2, "t", NULL), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "out is NULL");
    pld_team *x, *y;
    TU_ASSERT_STATUS(pld_team_split_2d(w, NULL, 0, "x", &x, "y", &y), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_team_split_2d: xrange 0 not in 1..4");
    TU_ASSERT_STATUS(pld_team_split_2d(w, NULL, 5, "x", &x, "y", &y), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "xrange 5 not in 1..4");
    pld_world_finalize(w);
}

Test(team, freed_teams_and_teams_of_another_world_are_refused, .timeout = 30)
{
    pld_world *a = tu_world("0-3"), *b = tu_world("0-3");
    pld_team *t = NULL, *u = NULL;
    TU_ASSERT_STATUS(pld_team_split_strided(a, NULL, 0, 1, 2, "pair", &t), PLD_OK);
    /* a parent of another world */
    TU_ASSERT_STATUS(pld_team_split_strided(b, t, 0, 1, 1, "sub", &u), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(b), "the parent team");
    TU_EXPECT_CONTAINS(pld_world_error(b), "is not a team of this world");
    pld_team_free(b, t);
    TU_EXPECT_CONTAINS(pld_world_error(b), "pld_team_free: team");
    TU_EXPECT_CONTAINS(pld_world_error(b), "is not a team of this world");
    pld_team_free(a, t);
    pld_team_free(a, t);
    TU_EXPECT_CONTAINS(pld_world_error(a), "was already freed");
    TU_ASSERT_STATUS(pld_team_split_strided(a, t, 0, 1, 1, "sub", &u), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(a), "is freed (pld_team_free)");
    cr_expect_eq(pld_team_rank_of(t, 0), -1);
    cr_expect_eq(pld_team_group_size(t, 0), 0);
    cr_expect_str_empty(pld_team_name(t));
    pld_world_finalize(b);
    pld_world_finalize(a);
    /* the world is gone: the team with it */
    cr_expect_eq(pld_team_rank_of(t, 0), -1);
}

/* Teams are made on the host: inside a kernel the call fails the launch. */
typedef struct kargs {
    pld_world *w;
} kargs;

static void split_inside(pld_ctx *c, void *arg)
{
    kargs *k = arg;
    pld_team *t;
    if (pld_rank(c) == 1)
        pld_team_split_strided(k->w, NULL, 0, 1, 2, "in", &t);
}

Test(team, split_inside_a_kernel_fails_the_launch, .timeout = 30)
{
    pld_world *w = tu_world("0,1");
    kargs *k = tu_host_alloc(w, sizeof *k);
    k->w = w;
    TU_LAUNCH_FAILS(w, split_inside, k, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 1 (device 1): pld_team_split_strided: called "
                                           "inside a kernel");
    pld_world_finalize(w);
}
