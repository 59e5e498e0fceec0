/* SPDX-License-Identifier: Apache-2.0 */
/* The measuring kernel and its host side: see run.h. */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "values.h"

#define SENTINEL (-3.0) /* never a valid value: values and results are >= 0 */
#define INPUT_ALIGN 4096u

/* What each rank reports at the end of the kernel, as 64-bit words: its
 * timed-loop time, wrong elements, warmup calls, its group's size and its
 * rank in it (the world's and its rank without a team) and byte counters.
 * Every rank stores its row into the results window of rank 0 and, where
 * each process hosts one rank (mpi), of every rank, so that each process
 * can read the whole table from its own rank; where this process hosts
 * every rank, rank 0's table is the one read (P stores, not P x P: 16.7
 * million remote stores at P = 4096). */
enum { RES_T_NS, RES_WRONG, RES_WARM, RES_GSIZE, RES_GRANK, RES_COUNTERS };
#define RES_WORDS (RES_COUNTERS + sizeof(pld_counters) / sizeof(uint64_t))

/* What the groups of one size T work on: the collective's windows as a
 * world of T sees them (views of buffers sized for the largest T). */
typedef struct bench_grp {
    int t;
    bench_shape sh;
    bench_vals vals;
    pld_dtensor data, sig, ring_sig, rcounts;
} bench_grp;

/* The kernel argument: in pld_host_alloc memory, like everything it points to. */
typedef struct bench_arg {
    bench_spec spec;
    int ngrp;    /* classes */
    int ngroups; /* groups in all (1: the world) */
    bench_grp grp[BENCH_MAX_CLASSES];
    pld_dtensor wsig;    /* INT32 [P,1]: the kernel's world-wide barriers (grp[0].sig without
                            a team) */
    pld_dtensor warm;    /* INT32 [1,2]: rank 0's "warmup is over" after barrier k, in cell
                            k % 2 (Set on every rank) */
    pld_dtensor results; /* INT32 [P, 2*RES_WORDS]: row q = rank q's report */
    int report_ranks;    /* the ranks whose results window every rank fills: 1, or P */
    int32_t *group_id;   /* world rank -> its group's index (0 without a team) */
    unsigned char *in;   /* world rank r's input at in + r * in_stride */
    size_t in_stride;
    int32_t *counts; /* all_to_all_v: row r = world rank r's send counts [T] */
    int64_t counts_stride;
} bench_arg;

struct bench_runner {
    pld_world *w;
    int p;
    int tmax; /* the largest group */
    bench_spec spec;
    pld_window_buffer *sig_buf, *tsig_buf, *ring_buf, *warm_buf, *res_buf;
    bench_arg *arg;
    pld_counters *counters;
    int *rank_class, *group_rank;
    bench_after_fn after;
    void *after_ctx;
};

/* What one rank works on; me and p are its group rank and size (the
 * world's without a team). */
typedef struct kbufs {
    const bench_grp *g;
    int me, p;
    size_t esz;
    pld_tensor in;        /* allgather [1,S], all_to_all [P,S], all_to_all_v [P*M,S] */
    pld_tensor counts;    /* all_to_all_v: INT32 [P] */
    unsigned char *local; /* this rank's slice of data */
    int32_t *rc;          /* this rank's recv_counts */
} kbufs;

/* all_to_all_v: rows rank s sends to rank d in checked iteration it, 0..M. */
static int32_t a2av_count(int64_t m, int s, int d, int64_t it)
{
    return (int32_t)(((int64_t)s * 3 + d + it) % (m + 1));
}

static void call(pld_ctx *c, const bench_arg *a, const kbufs *b)
{
    const bench_grp *g = b->g;
    switch (a->spec.coll) {
    case BENCH_BARRIER:
        pld_barrier(c, g->sig);
        break;
    case BENCH_BROADCAST:
        if (a->spec.mode == BENCH_MODE_BINOMIAL)
            pld_broadcast_with(c, g->data, g->sig, a->spec.root, PLD_BCAST_BINOMIAL);
        else
            pld_broadcast(c, g->data, g->sig, a->spec.root);
        break;
    case BENCH_ALLGATHER:
        if (a->spec.mode == BENCH_MODE_INPLACE)
            pld_allgather_inplace(c, g->data, g->sig);
        else if (a->spec.mode == BENCH_MODE_DOUBLING)
            pld_allgather_with(c, b->in, g->data, g->sig, PLD_AG_DOUBLING);
        else if (a->spec.mode == BENCH_MODE_PUSH)
            pld_allgather_with(c, b->in, g->data, g->sig, PLD_AG_PUSH);
        else
            pld_allgather(c, b->in, g->data, g->sig);
        break;
    case BENCH_REDUCE_SCATTER:
        pld_reduce_scatter(c, g->data, g->sig, a->spec.op);
        break;
    case BENCH_ALLREDUCE:
        if (a->spec.mode == BENCH_MODE_RING)
            pld_allreduce(c, g->data, g->ring_sig, a->spec.op, PLD_RING);
        else
            pld_allreduce(c, g->data, g->sig, a->spec.op,
                          a->spec.mode == BENCH_MODE_AUTO           ? PLD_AUTO
                          : a->spec.mode == BENCH_MODE_RS_AG        ? PLD_RS_AG
                          : a->spec.mode == BENCH_MODE_RABENSEIFNER ? PLD_RABENSEIFNER
                                                                    : PLD_MESH);
        break;
    case BENCH_ALL_TO_ALL:
        if (a->spec.mode == BENCH_MODE_PUSH)
            pld_all_to_all_with(c, b->in, g->data, g->sig, PLD_A2A_PUSH);
        else if (a->spec.mode == BENCH_MODE_BRUCK)
            pld_all_to_all_with(c, b->in, g->data, g->sig, PLD_A2A_BRUCK);
        else
            pld_all_to_all(c, b->in, g->data, g->sig);
        break;
    case BENCH_ALL_TO_ALL_V:
        pld_all_to_all_v(c, b->in, g->data, g->sig, b->counts, g->rcounts);
        break;
    default:
        break;
    }
}

/* Inputs of checked iteration `it` on this rank. */
static void fill(const bench_arg *a, const kbufs *b, int64_t it)
{
    const bench_vals *v = &b->g->vals;
    const bench_shape *sh = &b->g->sh;
    int64_t s = sh->cols, m = sh->m;
    size_t row = (size_t)s * b->esz;
    unsigned char *in = b->in.data;
    int32_t *counts = b->counts.data;
    switch (a->spec.coll) {
    case BENCH_BROADCAST:
        if (b->me == a->spec.root)
            bench_fill(v, b->local, sh->count, b->me, 0, it, 0);
        else
            bench_fill_const(v->dt, b->local, sh->count, SENTINEL);
        break;
    case BENCH_ALLGATHER:
        if (a->spec.mode == BENCH_MODE_INPLACE)
            bench_fill(v, b->local + (size_t)b->me * row, s, b->me, 0, it, 0);
        else
            bench_fill(v, in, s, b->me, 0, it, 0);
        break;
    case BENCH_REDUCE_SCATTER:
        for (int r = 0; r < b->p; r++)
            bench_fill(v, b->local + (size_t)r * row, s, b->me, r, it, 0);
        break;
    case BENCH_ALLREDUCE:
        bench_fill(v, b->local, sh->count, b->me, 0, it, 0);
        break;
    case BENCH_ALL_TO_ALL:
        for (int d = 0; d < b->p; d++)
            bench_fill(v, in + (size_t)d * row, s, b->me, d, it, 0);
        break;
    case BENCH_ALL_TO_ALL_V:
        for (int d = 0; d < b->p; d++) {
            counts[d] = a2av_count(m, b->me, d, it);
            bench_fill(v, in + (size_t)d * (size_t)m * row, m * s, b->me, d, it, 0);
        }
        break;
    default:
        break;
    }
}

/* Test hook: spoil one element of the result this rank is about to verify. */
static int64_t inject(const bench_arg *a, const kbufs *b)
{
    const bench_shape *sh = &b->g->sh;
    switch (a->spec.coll) {
    case BENCH_BARRIER:
        return 1; /* nothing to spoil: count it directly */
    case BENCH_ALL_TO_ALL_V:
        b->rc[0] = (int32_t)sh->m + 5;
        return 0;
    case BENCH_REDUCE_SCATTER:
        bench_fill_const(b->g->vals.dt, b->local + (size_t)b->me * (size_t)sh->cols * b->esz, 1,
                         SENTINEL);
        return 0;
    default:
        bench_fill_const(b->g->vals.dt, b->local, 1, SENTINEL);
        return 0;
    }
}

/* Wrong elements of checked iteration `it` on this rank. */
static int64_t verify(const bench_arg *a, const kbufs *b, int64_t it)
{
    const bench_vals *v = &b->g->vals;
    const bench_shape *sh = &b->g->sh;
    int64_t s = sh->cols, m = sh->m, wrong = 0;
    size_t row = (size_t)s * b->esz;
    switch (a->spec.coll) {
    case BENCH_BROADCAST:
        return bench_verify(v, b->local, sh->count, a->spec.root, 0, it, 0);
    case BENCH_ALLGATHER:
        for (int r = 0; r < b->p; r++)
            wrong += bench_verify(v, b->local + (size_t)r * row, s, r, 0, it, 0);
        return wrong;
    case BENCH_REDUCE_SCATTER:
        return bench_verify_reduced(v, b->local + (size_t)b->me * row, s, b->me, it, 0);
    case BENCH_ALLREDUCE:
        return bench_verify_reduced(v, b->local, sh->count, 0, it, 0);
    case BENCH_ALL_TO_ALL:
        for (int r = 0; r < b->p; r++)
            wrong += bench_verify(v, b->local + (size_t)r * row, s, r, b->me, it, 0);
        return wrong;
    case BENCH_ALL_TO_ALL_V:
        for (int r = 0; r < b->p; r++) {
            int32_t want = a2av_count(m, r, b->me, it);
            wrong += b->rc[r] != want;
            wrong +=
                bench_verify(v, b->local + (size_t)r * (size_t)m * row, want * s, r, b->me, it, 0);
        }
        return wrong;
    default:
        return 0;
    }
}

/* The class of groups of size t. */
static const bench_grp *grp_of(const bench_arg *a, int t)
{
    for (int i = 0; i < a->ngrp; i++)
        if (a->grp[i].t == t)
            return &a->grp[i];
    return NULL;
}

/* w is the world's context; c the one the collective runs in: the view of
 * this rank's group with a team, w itself without. */
static void k_bench(pld_ctx *w, void *arg)
{
    bench_arg *a = arg;
    pld_ctx *c = a->spec.team ? pld_team_ctx(w, a->spec.team) : w;
    if (!c)
        pld_fail(w, "pld bench: world rank %d is in no group of team '%s'", pld_rank(w),
                 pld_team_name(a->spec.team));
    const bench_grp *g = grp_of(a, pld_nranks(c));
    if (!g)
        pld_fail(w,
                 "pld bench: world rank %d: its group has %d ranks, a size the host did not "
                 "set up",
                 pld_rank(w), pld_nranks(c));
    int wme = pld_rank(w), wp = pld_nranks(w);
    kbufs b = {.g = g, .me = pld_rank(c), .p = pld_nranks(c), .esz = pld_dtype_size(a->spec.dtype)};
    int64_t s = g->sh.cols, p = b.p;
    unsigned char *in = a->in ? a->in + (size_t)wme * a->in_stride : NULL;
    /* Plain shape arrays, not PLD_IDX: pld_tensor_make never looks its shape
     * up, so a PLD_IDX mark would stay in the rank's ring and make every
     * later offsets check scan it (see docs/performance.md). */
    int64_t shape[2] = {1, s}, cshape[1] = {p};
    switch (a->spec.coll) {
    case BENCH_ALLGATHER:
        b.in = pld_tensor_make(in, a->spec.dtype, 2, shape);
        break;
    case BENCH_ALL_TO_ALL:
        shape[0] = p;
        b.in = pld_tensor_make(in, a->spec.dtype, 2, shape);
        break;
    case BENCH_ALL_TO_ALL_V: {
        int32_t *mine = a->counts + (size_t)wme * (size_t)a->counts_stride;
        shape[0] = p * g->sh.m;
        b.in = pld_tensor_make(in, a->spec.dtype, 2, shape);
        b.counts = pld_tensor_make(mine, PLD_INT32, 1, cshape);
        b.rc = pld_local(c, g->rcounts).data;
        for (int d = 0; d < b.p; d++) /* timed calls send full blocks, like MPI_Alltoallv */
            mine[d] = (int32_t)g->sh.m;
        break;
    }
    default:
        break;
    }
    if (a->spec.coll != BENCH_BARRIER) {
        /* Write every page of my slice and my input once: a fresh window is
         * lazily zeroed memory, and reading pages nobody wrote yet (the
         * broadcast root's data, say) would read the kernel's shared zero
         * page from cache instead of memory. Zeros: no denormals, no growth
         * under repeated in-place reductions. */
        pld_tensor mine = pld_local(c, g->data);
        b.local = mine.data;
        memset(b.local, 0, (size_t)pld_tensor_numel(mine) * b.esz);
        if (in)
            memset(in, 0, a->in_stride);
    }
    pld_barrier(w, a->wsig); /* before any peer pushes into my slice */

    /* warmup: at least `warmup` calls, then one call per barrier until rank
     * 0 has been warming up for warmup_ns. Rank 0 decides before barrier k
     * and sets its decision in cell k % 2 of every rank; the others read it
     * after the barrier. Rank 0 can be one decision ahead of a slow rank
     * (not every collective makes every rank wait for every other: in a
     * broadcast a non-root waits for the root only), never two: it would
     * have to pass barrier k+1, which the slow rank has not reached. With a
     * team these are world rank 0 and world barriers: every group warms up
     * as long as the others and starts its timed loop with them. */
    uint64_t w0 = bench_now_ns();
    int64_t warm = 0;
    for (; warm < a->spec.warmup; warm++)
        call(c, a, &b);
    for (int64_t k = 0;; k++) {
        int64_t cell[2] = {0, k % 2};
        int done = a->spec.warmup_ns == 0; /* a count only: nothing to tell */
        if (!done && wme == 0) {
            int32_t d = bench_now_ns() - w0 >= a->spec.warmup_ns;
            for (int q = 0; q < wp; q++)
                pld_notify(w, a->warm, q, cell, d, PLD_NOTIFY_SET);
        }
        pld_barrier(w, a->wsig);
        if (done || pld_signal_read(w, a->warm, cell))
            break;
        call(c, a, &b);
        warm++;
    }
    uint64_t t0 = bench_now_ns();
    for (int64_t i = 0; i < a->spec.iters; i++)
        call(c, a, &b);
    uint64_t t_ns = bench_now_ns() - t0;

    int64_t wrong = 0;
    if (a->spec.check) {
        /* only my group writes my windows: its barriers are enough */
        pld_barrier(c, g->sig);
        for (int64_t it = 0; it < a->spec.check; it++) {
            /* the values name the group too: another group's data is wrong here */
            int64_t tag = it * a->ngroups + a->group_id[wme];
            fill(a, &b, tag);
            call(c, a, &b);
            if (a->spec.inject && wme == 0 && it == 0)
                wrong += inject(a, &b);
            wrong += verify(a, &b, tag);
            pld_barrier(c, g->sig); /* nobody writes my results before I checked them */
        }
    }

    /* the report: counters first, so they cover the collective calls and
     * the kernel's barriers only */
    uint64_t row[RES_WORDS];
    pld_counters k = pld_ctx_counters(w);
    row[RES_T_NS] = t_ns;
    row[RES_WRONG] = (uint64_t)wrong;
    row[RES_WARM] = (uint64_t)warm;
    row[RES_GSIZE] = (uint64_t)b.p;
    row[RES_GRANK] = (uint64_t)b.me;
    memcpy(&row[RES_COUNTERS], &k, sizeof k);
    pld_tile *t = pld_tile_create(w, PLD_INT32, 1, 2 * (int64_t)RES_WORDS);
    memcpy(pld_tile_data(t), row, sizeof row);
    int64_t at[2] = {wme, 0};
    for (int q = 0; q < a->report_ranks; q++)
        pld_remote_store(w, t, a->results, q, at, PLD_ATOMIC_NONE);
    pld_tile_free(w, t);
    pld_barrier(w, a->wsig);
}

/* ---- host side ---------------------------------------------------------- */

static char runner_error[256];

const char *bench_runner_error(void)
{
    return runner_error;
}

/* The classes of spec->team (one of T = P without), their groups, and
 * every rank's class, group rank and group index. */
static pld_status classes(bench_runner *r)
{
    bench_arg *a = r->arg;
    const pld_team *t = r->spec.team;
    int p = r->p;
    a->ngrp = 0;
    a->ngroups = 0;
    r->tmax = 0;
    for (int q = 0; q < p; q++) {
        int sz = t ? pld_team_group_size(t, q) : p;
        if (sz < 1) {
            snprintf(runner_error, sizeof runner_error, "world rank %d is in no group of team '%s'",
                     q, pld_team_name(t));
            return PLD_ERR_ARG;
        }
        int i = 0;
        while (i < a->ngrp && a->grp[i].t != sz)
            i++;
        if (i == a->ngrp) {
            if (a->ngrp == BENCH_MAX_CLASSES) {
                snprintf(runner_error, sizeof runner_error,
                         "team '%s' has groups of more than %d sizes", pld_team_name(t),
                         BENCH_MAX_CLASSES);
                return PLD_ERR_ARG;
            }
            /* keep them largest first */
            while (i > 0 && a->grp[i - 1].t < sz) {
                a->grp[i] = a->grp[i - 1];
                i--;
            }
            a->grp[i] = (bench_grp){.t = sz};
            a->ngrp++;
        }
        r->tmax = sz > r->tmax ? sz : r->tmax;
        r->group_rank[q] = t ? pld_team_rank_of(t, q) : q;
    }
    /* groups are numbered in the order of their rank 0's world rank */
    for (int q = 0; q < p; q++)
        if (r->group_rank[q] == 0)
            a->group_id[q] = a->ngroups++;
    for (int q = 0; q < p; q++) {
        a->group_id[q] = t ? a->group_id[pld_team_world_rank(t, q, 0)] : 0;
        int sz = t ? pld_team_group_size(t, q) : p;
        for (int i = 0; i < a->ngrp; i++)
            if (a->grp[i].t == sz)
                r->rank_class[q] = i;
    }
    return PLD_OK;
}

static pld_status alloc(bench_runner *r, size_t bytes, const char *name, pld_window_buffer **out)
{
    return pld_alloc_window_buffer(r->w, bytes, name, out);
}

pld_status bench_runner_open(pld_world *w, const bench_spec *spec, bench_runner **out)
{
    pld_status st;
    int p = pld_world_size(w);
    runner_error[0] = '\0';
    bench_runner *r = calloc(1, sizeof *r);
    if (!r)
        return PLD_ERR_NOMEM;
    r->w = w;
    r->p = p;
    r->spec = *spec;
    r->counters = calloc((size_t)p, sizeof *r->counters);
    r->rank_class = calloc((size_t)p, sizeof *r->rank_class);
    r->group_rank = calloc((size_t)p, sizeof *r->group_rank);
    r->arg = pld_host_alloc(w, sizeof *r->arg);
    if (!r->counters || !r->rank_class || !r->group_rank || !r->arg) {
        st = PLD_ERR_NOMEM;
        goto err;
    }
    r->arg->group_id = pld_host_alloc(w, sizeof(int32_t) * (size_t)p);
    if (!r->arg->group_id) {
        st = PLD_ERR_NOMEM;
        goto err;
    }
    if ((st = classes(r)) != PLD_OK)
        goto err;
    bench_arg *a = r->arg;
    st = alloc(r, sizeof(int32_t) * (size_t)p, "bench_signal", &r->sig_buf);
    if (st != PLD_OK)
        goto err;
    st = pld_window(r->sig_buf, PLD_INT32, 2, PLD_IDX(p, 1), &a->wsig);
    if (st != PLD_OK)
        goto err;
    if (spec->team) { /* the groups' own signal: [T,1] in each rank's slice */
        st = alloc(r, sizeof(int32_t) * (size_t)r->tmax, "bench_team_signal", &r->tsig_buf);
        for (int i = 0; st == PLD_OK && i < a->ngrp; i++)
            st = pld_window(r->tsig_buf, PLD_INT32, 2, PLD_IDX(a->grp[i].t, 1), &a->grp[i].sig);
        if (st != PLD_OK)
            goto err;
    } else {
        a->grp[0].sig = a->wsig;
    }
    st = alloc(r, 2 * sizeof(int32_t), "bench_warm", &r->warm_buf);
    if (st != PLD_OK)
        goto err;
    st = pld_window(r->warm_buf, PLD_INT32, 2, PLD_IDX(1, 2), &a->warm);
    if (st != PLD_OK)
        goto err;
    st = alloc(r, sizeof(uint64_t) * RES_WORDS * (size_t)p, "bench_results", &r->res_buf);
    if (st != PLD_OK)
        goto err;
    st = pld_window(r->res_buf, PLD_INT32, 2, PLD_IDX(p, 2 * (int64_t)RES_WORDS), &a->results);
    if (st != PLD_OK)
        goto err;
    a->report_ranks = 1; /* reports() reads the first hosted rank's table */
    for (int q = 0; q < p; q++)
        if (!pld_world_hosts_rank(r->w, q))
            a->report_ranks = p;
    if (spec->coll == BENCH_ALLREDUCE && spec->mode == BENCH_MODE_RING) {
        int64_t tm = r->tmax, rows = tm > 1 ? 2 * (tm - 1) : 1;
        st = alloc(r, sizeof(int32_t) * (size_t)(rows * tm), "bench_ring_signal", &r->ring_buf);
        for (int i = 0; st == PLD_OK && i < a->ngrp; i++) {
            int64_t t = a->grp[i].t, trows = t > 1 ? 2 * (t - 1) : 1;
            st = pld_window(r->ring_buf, PLD_INT32, 2, PLD_IDX(trows, t), &a->grp[i].ring_sig);
        }
        if (st != PLD_OK)
            goto err;
    }
    *out = r;
    return PLD_OK;
err:
    bench_runner_close(r);
    return st;
}

void bench_runner_close(bench_runner *r)
{
    if (!r)
        return;
    if (r->ring_buf)
        pld_free_window_buffer(r->w, r->ring_buf);
    if (r->res_buf)
        pld_free_window_buffer(r->w, r->res_buf);
    if (r->warm_buf)
        pld_free_window_buffer(r->w, r->warm_buf);
    if (r->tsig_buf)
        pld_free_window_buffer(r->w, r->tsig_buf);
    if (r->sig_buf)
        pld_free_window_buffer(r->w, r->sig_buf);
    if (r->arg && r->arg->group_id)
        pld_host_free(r->w, r->arg->group_id);
    if (r->arg)
        pld_host_free(r->w, r->arg);
    free(r->counters);
    free(r->rank_class);
    free(r->group_rank);
    free(r);
}

void bench_runner_after(bench_runner *r, bench_after_fn fn, void *ctx)
{
    r->after = fn;
    r->after_ctx = ctx;
}

/* Each class's shape and its views of the data buffer (sized for the
 * largest), the inputs and the all_to_all_v counts, for `req` bytes. */
static pld_status buffers(bench_runner *r, int64_t req, pld_window_buffer **data_buf,
                          pld_window_buffer **rc_buf)
{
    bench_arg *a = r->arg;
    const bench_spec *sp = &r->spec;
    size_t esz = pld_dtype_size(sp->dtype);
    int64_t data_bytes = 0;
    size_t in_bytes = 0;
    pld_status st;
    for (int i = 0; i < a->ngrp; i++) {
        bench_grp *g = &a->grp[i];
        bench_shape_make(sp->coll, g->t, esz, req, &g->sh);
        bench_vals_init(&g->vals, sp->dtype, sp->op, bench_coll_reduces(sp->coll), g->t);
        memset(&g->data, 0, sizeof g->data);
        memset(&g->rcounts, 0, sizeof g->rcounts);
        data_bytes = g->sh.bytes > data_bytes ? g->sh.bytes : data_bytes;
        size_t ib = 0;
        if (sp->coll == BENCH_ALLGATHER && sp->mode != BENCH_MODE_INPLACE)
            ib = (size_t)g->sh.cols * esz;
        else if (sp->coll == BENCH_ALL_TO_ALL || sp->coll == BENCH_ALL_TO_ALL_V)
            ib = (size_t)g->sh.bytes;
        in_bytes = ib > in_bytes ? ib : in_bytes;
    }
    if (sp->coll != BENCH_BARRIER) {
        st = alloc(r, (size_t)data_bytes, "bench_data", data_buf);
        for (int i = 0; st == PLD_OK && i < a->ngrp; i++) {
            bench_grp *g = &a->grp[i];
            if (sp->coll == BENCH_BROADCAST || sp->coll == BENCH_ALLREDUCE)
                st = pld_window(*data_buf, sp->dtype, 1, PLD_IDX(g->sh.count), &g->data);
            else
                st = pld_window(*data_buf, sp->dtype, 2, PLD_IDX(g->sh.rows, g->sh.cols), &g->data);
        }
        if (st != PLD_OK)
            return st;
    }
    if (in_bytes) {
        a->in_stride = (in_bytes + INPUT_ALIGN - 1) / INPUT_ALIGN * INPUT_ALIGN;
        a->in = pld_host_alloc(r->w, a->in_stride * (size_t)r->p);
        if (!a->in)
            return PLD_ERR_NOMEM;
    }
    if (sp->coll == BENCH_ALL_TO_ALL_V) {
        a->counts_stride = r->tmax;
        a->counts = pld_host_alloc(r->w, sizeof(int32_t) * (size_t)r->p * (size_t)r->tmax);
        if (!a->counts)
            return PLD_ERR_NOMEM;
        st = alloc(r, sizeof(int32_t) * (size_t)r->tmax, "bench_recv_counts", rc_buf);
        for (int i = 0; st == PLD_OK && i < a->ngrp; i++)
            st = pld_window(*rc_buf, PLD_INT32, 2, PLD_IDX(a->grp[i].t, 1), &a->grp[i].rcounts);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

/* The reports, from the results window of a rank this process hosts (its
 * index in *host). */
static pld_status reports(bench_runner *r, bench_result *out, int *host)
{
    bench_arg *a = r->arg;
    const bench_spec *sp = &r->spec;
    int p = r->p;
    *host = 0;
    while (*host < p - 1 && !pld_world_hosts_rank(r->w, *host))
        (*host)++;
    pld_tensor res;
    pld_status st = pld_window_host_view(r->w, a->results, *host, &res);
    if (st != PLD_OK)
        return st;
    uint64_t tmax[BENCH_MAX_CLASSES] = {0}, tmin[BENCH_MAX_CLASSES], tsum[BENCH_MAX_CLASSES] = {0},
             tfirst[BENCH_MAX_CLASSES];
    int nranks[BENCH_MAX_CLASSES] = {0};
    out->nclass = a->ngrp;
    for (int i = 0; i < a->ngrp; i++) {
        tmin[i] = UINT64_MAX;
        out->cls[i] =
            (bench_class){.t = a->grp[i].t, .shape = a->grp[i].sh, .wrong = sp->check ? 0 : -1};
    }
    out->wrong = sp->check ? 0 : -1;
    for (int q = 0; q < p; q++) {
        uint64_t row[RES_WORDS];
        memcpy(row, (const unsigned char *)res.data + sizeof row * (size_t)q, sizeof row);
        int k = r->rank_class[q];
        bench_class *cl = &out->cls[k];
        if (row[RES_GSIZE] != (uint64_t)cl->t || row[RES_GRANK] != (uint64_t)r->group_rank[q]) {
            snprintf(runner_error, sizeof runner_error,
                     "world rank %d ran as rank %llu of a group of %llu; the team says rank %d "
                     "of %d",
                     q, (unsigned long long)row[RES_GRANK], (unsigned long long)row[RES_GSIZE],
                     r->group_rank[q], cl->t);
            return PLD_ERR_ARG;
        }
        tmax[k] = row[RES_T_NS] > tmax[k] ? row[RES_T_NS] : tmax[k];
        tmin[k] = row[RES_T_NS] < tmin[k] ? row[RES_T_NS] : tmin[k];
        tsum[k] += row[RES_T_NS];
        if (nranks[k]++ == 0)
            tfirst[k] = row[RES_T_NS]; /* world order: the lowest first */
        if (sp->check) {
            cl->wrong += (int64_t)row[RES_WRONG];
            out->wrong += (int64_t)row[RES_WRONG];
        }
        cl->ngroups += r->group_rank[q] == 0;
        memcpy(&r->counters[q], &row[RES_COUNTERS], sizeof r->counters[q]);
        out->warmup_calls = (int64_t)row[RES_WARM]; /* the same on every rank */
    }
    for (int i = 0; i < a->ngrp; i++) {
        out->cls[i].time_ns = sp->iters > 0 ? (double)tmax[i] / (double)sp->iters : 0;
        out->cls[i].time_ns_min = sp->iters > 0 ? (double)tmin[i] / (double)sp->iters : 0;
        out->cls[i].time_ns_avg =
            sp->iters > 0 && nranks[i] ? (double)tsum[i] / nranks[i] / (double)sp->iters : 0;
        out->cls[i].time_ns_first =
            sp->iters > 0 && nranks[i] ? (double)tfirst[i] / (double)sp->iters : 0;
    }
    out->shape = out->cls[0].shape;
    out->time_ns = out->cls[0].time_ns;
    out->time_ns_min = out->cls[0].time_ns_min;
    out->rank_class = r->rank_class;
    out->group_rank = r->group_rank;
    return PLD_OK;
}

pld_status bench_runner_size(bench_runner *r, int64_t req, bench_result *out)
{
    bench_arg *a = r->arg;
    const bench_spec *sp = &r->spec;
    pld_window_buffer *data_buf = NULL, *rc_buf = NULL;
    int host = 0;

    memset(out, 0, sizeof *out);
    runner_error[0] = '\0';
    a->spec = *sp;
    a->in = NULL;
    a->in_stride = 0;
    a->counts = NULL;
    /* windows and inputs: once per size */
    pld_status st = buffers(r, req, &data_buf, &rc_buf);
    if (st != PLD_OK)
        goto out;

    st = pld_launch(r->w, k_bench, a);
    if (st != PLD_OK)
        goto out;
    st = reports(r, out, &host);
    if (st != PLD_OK)
        goto out;

    /* the kernel's own pld_barriers: set-up, end of warmup, start of the
     * check and one after every checked call (with a team the last two
     * are the group's) */
    out->barriers = 2 + (sp->check ? 1 + sp->check : 0);
    out->ncalls = (uint64_t)(out->warmup_calls + sp->iters + sp->check);
    out->counters = r->counters;
    if (r->after) {
        const bench_grp *g = &a->grp[r->rank_class[host]];
        pld_tensor mine;
        st = g->data.buf ? pld_window_host_view(r->w, g->data, host, &mine) : PLD_OK;
        if (st != PLD_OK)
            goto out;
        bench_bufs bb = {.sh = &g->sh,
                         .rank = r->group_rank[host],
                         .p = g->t,
                         .in = a->in ? a->in + (size_t)host * a->in_stride : NULL,
                         .data = g->data.buf ? mine.data : NULL};
        r->after(r->after_ctx, &bb);
    }
out:
    if (a->counts)
        pld_host_free(r->w, a->counts);
    if (a->in)
        pld_host_free(r->w, a->in);
    a->counts = NULL;
    a->in = NULL;
    if (rc_buf)
        pld_free_window_buffer(r->w, rc_buf);
    if (data_buf)
        pld_free_window_buffer(r->w, data_buf);
    return st;
}
