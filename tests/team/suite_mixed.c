/* SPDX-License-Identifier: Apache-2.0 */
/* Back-to-back builtins alternating between the rows and the columns of a
 * grid, with nothing between them but what the contract asks of a user:
 * every result is read before the next call on its signal, and a push never
 * goes into the window the previous call on the same signal wrote (each
 * push target has two copies, taken in turn per builtin). No barrier is
 * added: the calls are as aggressive as a program may legally be. */
#include <stdint.h>

#include "suite.h"

typedef struct mixed_args {
    ts_team m[2]; /* rows, columns */
    ts_bwin b[2];
    int calls;
} mixed_args;

/* The builtin of call i: a fixed scramble, the same on every rank. */
static ts_builtin pick(int i)
{
    uint32_t h = (uint32_t)i * 2654435761u;
    return (ts_builtin)((h >> 13) % TS_NBUILTIN);
}

static void mixed_kernel(pld_ctx *c, void *p)
{
    mixed_args *a = p;
    ts_k k[2];
    int taken[2][TS_NBUILTIN] = {{0}};
    TS_K(c, ts_view(c, &a->m[0], &k[0]), "world rank %d is in no row", pld_rank(c));
    TS_K(c, ts_view(c, &a->m[1], &k[1]), "world rank %d is in no column", pld_rank(c));
    for (int i = 0; i < a->calls; i++) {
        int t = i % 2;
        ts_builtin b = pick(i);
        ts_builtin_run(&k[t], &a->b[t], b, 1000 + i, taken[t][b]++ % 2);
    }
}

int ts_case_mixed(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    int p = prm->p;
    pld_team *x = NULL, *y = NULL;
    pld_status st = pld_team_split_2d(w, NULL, prm->x, "rows", &x, "cols", &y);
    TS_HOST(st == PLD_OK, "pld_team_split_2d(xrange %d): %s", prm->x, pld_world_error(w));
    mixed_args *a = pld_host_alloc(w, sizeof *a);
    TS_HOST(a, "pld_host_alloc");
    a->calls = prm->calls;
    TS_TRY(ts_team_fill(&a->m[0], x, p, why, n));
    TS_TRY(ts_team_fill(&a->m[1], y, p, why, n));
    TS_TRY(ts_bwin_alloc(w, "r", p, 0, &a->b[0], why, n));
    TS_TRY(ts_bwin_alloc(w, "c", p, 0, &a->b[1], why, n));
    TS_TRY(ts_launch(w, mixed_kernel, a, "mixed builtins on two teams", why, n));
    return 0;
}
