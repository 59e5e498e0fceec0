/* SPDX-License-Identifier: Apache-2.0 */
/* Teams of every shape in kernels: 2-D grids whose rows and columns run at
 * the same time, strided teams with idle ranks, keyed splits with ranks in
 * no group, teams of teams and views of views, and every builtin in groups
 * of different sizes at once. */
#include <stdio.h>
#include <string.h>

#include "suite.h"

static void *args_of(pld_world *w, size_t bytes)
{
    /* the process transport's workers read kernel arguments from here */
    return pld_host_alloc(w, bytes);
}

/* ---- 2-D grids ------------------------------------------------------------ */

typedef struct grid_args {
    ts_team x, y;
    ts_bwin bx, by;
    ts_pwin px, py;
} grid_args;

/* Ranks of even rows call their row's builtin first, ranks of odd rows their
 * column's: each group still calls the same builtins in the same order on
 * its signal, and rows gather while columns reduce. Then the other way
 * round, then the hand-written exchange in both. */
static void grid_kernel(pld_ctx *c, void *p)
{
    grid_args *a = p;
    ts_k x, y;
    TS_K(c, ts_view(c, &a->x, &x), "world rank %d is in no row", pld_rank(c));
    TS_K(c, ts_view(c, &a->y, &y), "world rank %d is in no column", pld_rank(c));
    TS_K(c, pld_ctx_team(c) == NULL, "the world context speaks for a team");
    int row_first = y.me % 2 == 0;
    for (int round = 0; round < 2; round++) {
        ts_builtin row = round == 0 ? TS_GATHER : TS_AR_MESH;
        ts_builtin col = round == 0 ? TS_AR_MESH : TS_GATHER;
        int call = 1 + 2 * round;
        if (row_first)
            ts_builtin_run(&x, &a->bx, row, call, 0);
        ts_builtin_run(&y, &a->by, col, call + 1, 0);
        if (!row_first)
            ts_builtin_run(&x, &a->bx, row, call, 0);
    }
    ts_prims(&x, &a->px, 10);
    ts_prims(&y, &a->py, 20);
}

int ts_case_grid(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    int p = prm->p;
    pld_team *x = NULL, *y = NULL;
    pld_status st = pld_team_split_2d(w, NULL, prm->x, "tp", &x, "dp", &y);
    TS_HOST(st == PLD_OK, "pld_team_split_2d(xrange %d) of %d ranks: %s", prm->x, p,
            pld_world_error(w));
    grid_args *a = args_of(w, sizeof *a);
    TS_HOST(a, "pld_host_alloc");
    TS_TRY(ts_team_fill(&a->x, x, p, why, n));
    TS_TRY(ts_team_fill(&a->y, y, p, why, n));
    for (int r = 0; r < p; r++)
        TS_HOST(a->x.rank[r] == r % prm->x && a->y.rank[r] == r / prm->x,
                "grid %d ranks, xrange %d: rank %d is (%d,%d)", p, prm->x, r, a->x.rank[r],
                a->y.rank[r]);
    TS_TRY(ts_bwin_alloc(w, "x", p, 0, &a->bx, why, n));
    TS_TRY(ts_bwin_alloc(w, "y", p, 0, &a->by, why, n));
    TS_TRY(ts_pwin_alloc(w, "px", p, &a->px, why, n));
    TS_TRY(ts_pwin_alloc(w, "py", p, &a->py, why, n));
    /* twice: the first launch must leave signals and windows reusable */
    for (int i = 0; i < 2; i++)
        TS_TRY(ts_launch(w, grid_kernel, a, "grid rows and columns", why, n));
    return 0;
}

/* ---- strided: every other rank, the rest idle ------------------------------ */

typedef struct strided_args {
    ts_team even, odd;
    ts_bwin be, bo;
    ts_pwin pe, po;
    int both; /* 0: the odd ranks are idle; 1: they form their own team */
} strided_args;

static void strided_kernel(pld_ctx *c, void *p)
{
    strided_args *a = p;
    ts_k k;
    int even = ts_view(c, &a->even, &k), odd = 0;
    if (a->both)
        odd = ts_view(c, &a->odd, &k); /* checks that an even rank gets no view */
    if (!even && !odd)
        return; /* in no group: nothing to do, and nobody waits for it */
    TS_K(c, !(even && odd), "world rank %d is in both strided teams", pld_rank(c));
    const ts_bwin *b = even ? &a->be : &a->bo;
    static const ts_builtin seq[] = {TS_BARRIER, TS_AR_MESH, TS_GATHER,
                                     TS_AR_RING, TS_BCAST,   TS_RS};
    for (int i = 0; i < (int)(sizeof seq / sizeof seq[0]); i++)
        ts_builtin_run(&k, b, seq[i], 30 + i, 0);
    ts_prims(&k, even ? &a->pe : &a->po, 40);
}

int ts_case_strided(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    int p = prm->p;
    pld_team *even = NULL, *odd = NULL;
    TS_HOST(p >= 2, "the strided case needs 2 ranks or more");
    pld_status st = pld_team_split_strided(w, NULL, 0, 2, (p + 1) / 2, "even", &even);
    TS_HOST(st == PLD_OK, "strided split: %s", pld_world_error(w));
    st = pld_team_split_strided(w, NULL, 1, 2, p / 2, "odd", &odd);
    TS_HOST(st == PLD_OK, "strided split: %s", pld_world_error(w));
    strided_args *a = args_of(w, sizeof *a);
    TS_HOST(a, "pld_host_alloc");
    TS_TRY(ts_team_fill(&a->even, even, p, why, n));
    TS_TRY(ts_team_fill(&a->odd, odd, p, why, n));
    TS_TRY(ts_bwin_alloc(w, "even", p, 0, &a->be, why, n));
    TS_TRY(ts_bwin_alloc(w, "odd", p, 0, &a->bo, why, n));
    TS_TRY(ts_pwin_alloc(w, "peven", p, &a->pe, why, n));
    TS_TRY(ts_pwin_alloc(w, "podd", p, &a->po, why, n));
    a->both = 0;
    TS_TRY(ts_launch(w, strided_kernel, a, "even ranks, odd ranks idle", why, n));
    a->both = 1;
    for (int i = 0; i < 2; i++)
        TS_TRY(ts_launch(w, strided_kernel, a, "even and odd teams at once", why, n));
    return 0;
}

/* ---- keyed split: reversed order, ranks in no group -------------------------- */

typedef struct split_args {
    ts_team m;
    ts_bwin b;
    ts_pwin pw;
} split_args;

static void split_kernel(pld_ctx *c, void *p)
{
    split_args *a = p;
    ts_k k;
    if (!ts_view(c, &a->m, &k))
        return;
    ts_prims(&k, &a->pw, 60);
    /* the builtins whose rows show the order of the group */
    static const ts_builtin seq[] = {TS_GATHER, TS_A2A, TS_A2AV, TS_INPLACE, TS_RS, TS_BCAST};
    for (int i = 0; i < (int)(sizeof seq / sizeof seq[0]); i++)
        ts_builtin_run(&k, &a->b, seq[i], 70 + i, 0);
}

int ts_case_split(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    int p = prm->p, in_groups = 0;
    pld_team *t = NULL;
    TS_TRY(ts_split_sizes(w, p, prm->sizes, prm->ngroups, "keyed", &t, why, n));
    split_args *a = args_of(w, sizeof *a);
    TS_HOST(a, "pld_host_alloc");
    TS_TRY(ts_team_fill(&a->m, t, p, why, n));
    for (int r = 0; r < p; r++) {
        in_groups += a->m.rank[r] >= 0;
        for (int j = 0; j + 1 < a->m.size[r]; j++)
            TS_HOST(a->m.world[r][j] > a->m.world[r][j + 1],
                    "keys reverse the order, but group rank %d is world rank %d and %d is %d", j,
                    a->m.world[r][j], j + 1, a->m.world[r][j + 1]);
    }
    int want = 0;
    for (int g = 0; g < prm->ngroups; g++)
        want += prm->sizes[g];
    TS_HOST(in_groups == want, "%d ranks in groups, expected %d", in_groups, want);
    TS_TRY(ts_bwin_alloc(w, "k", p, 0, &a->b, why, n));
    TS_TRY(ts_pwin_alloc(w, "pk", p, &a->pw, why, n));
    for (int i = 0; i < 2; i++)
        TS_TRY(ts_launch(w, split_kernel, a, "keyed split", why, n));
    return 0;
}

/* ---- a team of a team, views of views ------------------------------------- */

typedef struct tot_args {
    ts_team par, x, y;
    ts_bwin bp, bx, by;
    ts_pwin px;
} tot_args;

static void tot_kernel(pld_ctx *c, void *p)
{
    tot_args *a = p;
    ts_k par, x, x2, y, par2;
    TS_K(c, ts_view(c, &a->par, &par), "no parity group");
    TS_K(c, ts_view(par.v, &a->x, &x), "no row from the parity view");
    TS_K(c, ts_view(c, &a->x, &x2), "no row from the world");
    TS_K(c, ts_view(x.v, &a->y, &y), "no column from the row view");
    TS_K(c, ts_view(y.v, &a->par, &par2), "no parity group from the column view");
    /* one view per team and kernel, whichever context asks */
    TS_K(c, x.v == x2.v && par.v == par2.v, "two views of one team in one kernel");
    ts_builtin_run(&par, &a->bp, TS_AR_MESH, 1, 0);
    ts_builtin_run(&x, &a->bx, TS_GATHER, 2, 0);
    /* the same team through another view, on the same signal */
    ts_builtin_run(&x2, &a->bx, TS_AR_MESH, 3, 0);
    ts_builtin_run(&y, &a->by, TS_A2A, 4, 0);
    ts_builtin_run(&par2, &a->bp, TS_GATHER, 5, 0);
    ts_prims(&x, &a->px, 80);
}

int ts_case_team_of_team(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    int p = prm->p, color[TS_MAXP];
    TS_HOST(p >= 2, "a team of a team needs 2 ranks or more");
    for (int r = 0; r < p; r++)
        color[r] = r % 2;
    pld_team *par = NULL, *x = NULL, *y = NULL;
    pld_status st = pld_team_split(w, NULL, color, NULL, "parity", &par);
    TS_HOST(st == PLD_OK, "parity split: %s", pld_world_error(w));
    st = pld_team_split_2d(w, par, 2, "px", &x, "py", &y);
    TS_HOST(st == PLD_OK, "2-D split of the parity team: %s", pld_world_error(w));
    tot_args *a = args_of(w, sizeof *a);
    TS_HOST(a, "pld_host_alloc");
    TS_TRY(ts_team_fill(&a->par, par, p, why, n));
    TS_TRY(ts_team_fill(&a->x, x, p, why, n));
    TS_TRY(ts_team_fill(&a->y, y, p, why, n));
    TS_TRY(ts_bwin_alloc(w, "par", p, 0, &a->bp, why, n));
    TS_TRY(ts_bwin_alloc(w, "x", p, 0, &a->bx, why, n));
    TS_TRY(ts_bwin_alloc(w, "y", p, 0, &a->by, why, n));
    TS_TRY(ts_pwin_alloc(w, "px", p, &a->px, why, n));
    for (int i = 0; i < 2; i++)
        TS_TRY(ts_launch(w, tot_kernel, a, "team of a team", why, n));
    return 0;
}

/* ---- every builtin in groups of different sizes at once ----------------------- */

typedef struct bi_args {
    ts_team m;
    ts_bwin b;
    int indexed;
    int round; /* launch number: every launch stages other values */
} bi_args;

/* Every builtin once, then again in reverse order on the other copies of
 * the push targets (consecutive calls on the signal never push into the
 * window the previous call wrote), then dispatch + combine twice. */
static void builtins_kernel(pld_ctx *c, void *p)
{
    bi_args *a = p;
    ts_k k;
    if (!ts_view(c, &a->m, &k))
        return;
    int call = 100 + 50 * a->round;
    for (int b = 0; b < TS_NBUILTIN; b++)
        ts_builtin_run(&k, &a->b, (ts_builtin)b, call++, 0);
    for (int b = TS_NBUILTIN - 1; b >= 0; b--)
        ts_builtin_run(&k, &a->b, (ts_builtin)b, call++, 1);
    if (a->indexed) {
        ts_builtin_run(&k, &a->b, TS_INDEXED, call++, 0);
        ts_builtin_run(&k, &a->b, TS_INDEXED, call++, 1);
    }
}

int ts_case_builtins(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    int p = prm->p;
    pld_team *t = NULL;
    TS_TRY(ts_split_sizes(w, p, prm->sizes, prm->ngroups, "sizes", &t, why, n));
    bi_args *a = args_of(w, sizeof *a);
    TS_HOST(a, "pld_host_alloc");
    TS_TRY(ts_team_fill(&a->m, t, p, why, n));
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    a->indexed = lim.urma;
    TS_TRY(ts_bwin_alloc(w, "b", p, a->indexed, &a->b, why, n));
    for (a->round = 0; a->round < 2; a->round++)
        TS_TRY(ts_launch(w, builtins_kernel, a, "every builtin in groups", why, n));
    return 0;
}
