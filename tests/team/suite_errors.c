/* SPDX-License-Identifier: Apache-2.0 */
/* Misused team views: a team of another world, a freed team, a view kept
 * past its kernel, a peer outside the group, a world-sized signal where the
 * group's is needed. Each is PLD_ERR_ARG with a message that names the
 * call, the value and the rank in both numberings ("rank 5 (team 'tp'
 * rank 1)"); after it the world runs the next launch normally. */
#include <stdio.h>
#include <string.h>

#include "suite.h"

typedef struct err_args {
    ts_team x, y;                  /* a grid of rows of 2: 'tp' and 'dp' */
    pld_dtensor sig[TS_MAXP + 1];  /* [T,1] of the rows */
    pld_dtensor ysig[TS_MAXP + 1]; /* [T,1] of the columns: teams never share a signal */
    pld_dtensor wsig;              /* [P,1]: the world's shape */
    pld_dtensor rows, gp;          /* [P,S] */
    const pld_team *bad;
    int what, culprit;
} err_args;

/* The grid every error case runs on; the culprit is the last rank, group
 * rank 1 of its row of 2 (P is even, and at least 4 so that a group's
 * signal [2,1] is not the world's). */
static err_args *setup(pld_world *w, int p, char *why, size_t n)
{
    pld_team *x = NULL, *y = NULL;
    if (p < 4 || p % 2) {
        ts_why(why, n, __FILE__, __LINE__, "the error cases need an even P >= 4, not %d", p);
        return NULL;
    }
    pld_status st = pld_team_split_2d(w, NULL, 2, "tp", &x, "dp", &y);
    if (st != PLD_OK) {
        ts_why(why, n, __FILE__, __LINE__, "pld_team_split_2d: %s", pld_world_error(w));
        return NULL;
    }
    err_args *a = pld_host_alloc(w, sizeof *a);
    if (!a || ts_team_fill(&a->x, x, p, why, n) || ts_team_fill(&a->y, y, p, why, n) ||
        ts_windows(w, "sig", PLD_INT32, p, 1, 1, a->sig, why, n) ||
        ts_windows(w, "ysig", PLD_INT32, p, 1, 1, a->ysig, why, n) ||
        ts_window(w, "wsig", PLD_INT32, p, 1, &a->wsig, why, n) ||
        ts_window(w, "rows", PLD_FP32, p, TS_S, &a->rows, why, n) ||
        ts_window(w, "gp", PLD_FP32, p, TS_S, &a->gp, why, n)) {
        if (!a)
            ts_why(why, n, __FILE__, __LINE__, "pld_host_alloc");
        return NULL;
    }
    a->culprit = p - 1;
    return a;
}

/* A barrier in every row and every column: the world works. */
static void ok_kernel(pld_ctx *c, void *p)
{
    err_args *a = p;
    ts_k x, y;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    TS_K(c, ts_view(c, &a->y, &y), "no column");
    pld_barrier(x.v, a->sig[x.t]);
    pld_barrier(y.v, a->ysig[y.t]);
    pld_barrier(x.v, a->sig[x.t]);
}

static int still_works(pld_world *w, err_args *a, const char *after, char *why, size_t n)
{
    char what[128];
    snprintf(what, sizeof what, "a clean launch after %s", after);
    return ts_launch(w, ok_kernel, a, what, why, n);
}

/* "rank 3 (team 'tp' rank 1)" for the culprit */
static const char *who(char *buf, size_t n, const err_args *a, const ts_team *m)
{
    snprintf(buf, n, "rank %d (team '%s' rank %d)", a->culprit, m->name, m->rank[a->culprit]);
    return buf;
}

/* ---- a team of another world, a freed team ----------------------------------- */

static void ctx_of_bad_team(pld_ctx *c, void *p)
{
    err_args *a = p;
    ts_k x;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    pld_barrier(x.v, a->sig[x.t]);
    pld_ctx *v = pld_team_ctx(c, a->bad);
    pld_fail(c, "pld_team_ctx of a bad team returned %s", v ? "a view" : "NULL");
}

int ts_case_err_other_world(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    err_args *a = setup(w, prm->p, why, n);
    if (!a)
        return 1;
    pld_world *w2 = ts_world("a2a3sim", prm->p, why, n);
    if (!w2)
        return 1;
    pld_team *far = NULL;
    pld_status st = pld_team_split_strided(w2, NULL, 0, 1, prm->p, "far", &far);
    int rc = 1;
    if (st != PLD_OK) {
        ts_why(why, n, __FILE__, __LINE__, "split of the second world: %s", pld_world_error(w2));
    } else {
        a->bad = far;
        static const char *const needles[] = {"pld_team_ctx", "is not a team of this world", NULL};
        rc = ts_launch_fails(w, ctx_of_bad_team, a, PLD_ERR_ARG, "a team of another world", needles,
                             why, n);
    }
    pld_world_finalize(w2);
    TS_TRY(rc);
    return still_works(w, a, "a team of another world", why, n);
}

int ts_case_err_freed(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    err_args *a = setup(w, prm->p, why, n);
    if (!a)
        return 1;
    pld_team *gone = NULL;
    pld_status st = pld_team_split_strided(w, NULL, 0, 1, prm->p, "gone", &gone);
    TS_HOST(st == PLD_OK, "split: %s", pld_world_error(w));
    pld_team_free(w, gone);
    a->bad = gone;
    static const char *const needles[] = {"pld_team_ctx", "'gone'", "freed", NULL};
    TS_TRY(ts_launch_fails(w, ctx_of_bad_team, a, PLD_ERR_ARG, "a freed team", needles, why, n));
    return still_works(w, a, "a freed team", why, n);
}

/* ---- a view kept past its kernel --------------------------------------------- */

/* Per world rank: each process (worker, MPI rank) keeps its own; on the
 * thread transport the ranks share the array and use their own cell. */
static pld_ctx *kept[TS_MAXP];

static void keep_view(pld_ctx *c, void *p)
{
    err_args *a = p;
    ts_k x;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    pld_barrier(x.v, a->sig[x.t]);
    kept[pld_rank(c)] = x.v;
}

static void use_kept_view(pld_ctx *c, void *p)
{
    err_args *a = p;
    int t = a->x.size[pld_rank(c)];
    pld_barrier(kept[pld_rank(c)], a->sig[t]);
    pld_fail(c, "a barrier on a view of the previous launch returned");
}

int ts_case_err_stale(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    err_args *a = setup(w, prm->p, why, n);
    if (!a)
        return 1;
    TS_TRY(ts_launch(w, keep_view, a, "a launch that keeps its view", why, n));
    static const char *const needles[] = {"pld_barrier", "returned", NULL};
    TS_TRY(ts_launch_fails(w, use_kept_view, a, PLD_ERR_ARG, "a view of the previous launch",
                           needles, why, n));
    return still_works(w, a, "a view kept past its kernel", why, n);
}

/* ---- a peer outside the group ------------------------------------------------- */

enum { BAD_NOTIFY, BAD_NOTIFY_NEG, BAD_LOAD, BAD_STORE, BAD_PUT, BAD_GET, BAD_REDUCE, BAD_N };
static const char *const bad_api[BAD_N] = {"pld_notify",       "pld_notify", "pld_remote_load",
                                           "pld_remote_store", "pld_put",    "pld_get",
                                           "pld_remote_reduce"};

/* The culprit names group rank T (a world rank that exists: a view that
 * passed it through unmapped would reach it) or -1; its row mate waits in
 * a barrier, the other rows finish theirs. */
static void bad_peer(pld_ctx *c, void *p)
{
    err_args *a = p;
    ts_k x;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    if (x.wr != a->culprit) {
        pld_barrier(x.v, a->sig[x.t]);
        return;
    }
    int peer = a->what == BAD_NOTIFY_NEG ? -1 : x.t;
    float buf[TS_S] = {0};
    pld_tensor plain = pld_tensor_make(buf, PLD_FP32, 2, PLD_IDX(1, TS_S));
    pld_xfer xf = {
        .dst_offsets = PLD_IDX(0, 0), .src_offsets = PLD_IDX(0, 0), .shape = PLD_IDX(1, TS_S)};
    pld_tile *t = pld_tile_create(x.v, PLD_FP32, 1, TS_S);
    switch (a->what) {
    case BAD_NOTIFY:
    case BAD_NOTIFY_NEG:
        pld_notify(x.v, a->wsig, peer, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        break;
    case BAD_LOAD:
        pld_remote_load(x.v, t, a->rows, peer, PLD_IDX(0, 0));
        break;
    case BAD_STORE:
        pld_remote_store(x.v, t, a->rows, peer, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
        break;
    case BAD_PUT:
        pld_put(x.v, a->rows, peer, plain, &xf);
        break;
    case BAD_GET:
        pld_get(x.v, plain, peer, a->rows, &xf);
        break;
    default:
        pld_remote_reduce(x.v, t, a->rows, peer, PLD_IDX(0, 0), PLD_SUM);
        break;
    }
    pld_fail(c, "%s to group rank %d of a group of %d returned", bad_api[a->what], peer, x.t);
}

int ts_case_err_peer(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    err_args *a = setup(w, prm->p, why, n);
    if (!a)
        return 1;
    char rank[64], peer[32], what[96];
    who(rank, sizeof rank, a, &a->x);
    for (a->what = 0; a->what < BAD_N; a->what++) {
        snprintf(peer, sizeof peer, "peer %d", a->what == BAD_NOTIFY_NEG ? -1 : 2);
        const char *needles[] = {rank, bad_api[a->what], peer, "[0,2)", NULL};
        snprintf(what, sizeof what, "%s to %s of a group of 2", bad_api[a->what], peer);
        TS_TRY(ts_launch_fails(w, bad_peer, a, PLD_ERR_ARG, what, needles, why, n));
        /* the interrupted barrier's signal was cleared by pld */
        TS_TRY(still_works(w, a, what, why, n));
    }
    return 0;
}

/* ---- a signal of the world's shape where the group's is needed ------------------ */

enum { SIG_BARRIER, SIG_ALLREDUCE, SIG_GATHER_TARGET, SIG_N };

static void world_shapes(pld_ctx *c, void *p)
{
    err_args *a = p;
    ts_k x;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    float local[TS_S] = {0};
    switch (a->what) {
    case SIG_BARRIER:
        pld_barrier(x.v, a->wsig);
        break;
    case SIG_ALLREDUCE:
        pld_allreduce(x.v, a->rows, a->wsig, PLD_SUM, PLD_MESH);
        break;
    default: /* the signal is right, the target [P,S] is not [T,S] */
        pld_allgather(x.v, pld_tensor_make(local, PLD_FP32, 2, PLD_IDX(1, TS_S)), a->gp,
                      a->sig[x.t]);
    }
    pld_fail(c, "a builtin with world-sized arguments in a group of %d returned", x.t);
}

int ts_case_err_signal(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    err_args *a = setup(w, prm->p, why, n);
    if (!a)
        return 1;
    char shape[32], world[32];
    snprintf(shape, sizeof shape, "[%d,%d]", prm->p, TS_S);
    snprintf(world, sizeof world, "[%d,1]", prm->p);
    /* both shapes: the one given and the group's */
    const char *const cases[SIG_N][5] = {
        {"pld_barrier", "'wsig'", world, "[2,1]", "(team 'tp' rank "},
        {"pld_allreduce", "'wsig'", world, "[2,1]", "(team 'tp' rank "},
        {"pld_allgather", "'gp'", shape, "(team 'tp' rank ", NULL},
    };
    for (a->what = 0; a->what < SIG_N; a->what++) {
        const char *needles[] = {cases[a->what][0], cases[a->what][1], cases[a->what][2],
                                 cases[a->what][3], cases[a->what][4], NULL};
        TS_TRY(
            ts_launch_fails(w, world_shapes, a, PLD_ERR_ARG, cases[a->what][0], needles, why, n));
        TS_TRY(still_works(w, a, cases[a->what][0], why, n));
    }
    return 0;
}

/* ---- both ranks named ------------------------------------------------------- */

static void fail_in_view(pld_ctx *c, void *p)
{
    err_args *a = p;
    ts_k x, y;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    TS_K(c, ts_view(c, &a->y, &y), "no column");
    const ts_k *k = a->what == 0 ? &x : &y;
    if (k->wr == a->culprit)
        pld_fail(k->v, "boom %d", 7);
    pld_barrier(k->v, a->what == 0 ? a->sig[k->t] : a->ysig[k->t]);
}

int ts_case_err_names(pld_world *w, const ts_param *prm, char *why, size_t n)
{
    err_args *a = setup(w, prm->p, why, n);
    if (!a)
        return 1;
    char rank[64];
    for (a->what = 0; a->what < 2; a->what++) {
        who(rank, sizeof rank, a, a->what == 0 ? &a->x : &a->y);
        const char *needles[] = {rank, "pld_fail: boom 7", NULL};
        TS_TRY(ts_launch_fails(w, fail_in_view, a, PLD_ERR_CHECK, "pld_fail in a view", needles,
                               why, n));
        TS_TRY(still_works(w, a, "pld_fail in a view", why, n));
    }
    return 0;
}
