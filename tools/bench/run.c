/* The measuring kernel and its host side: see run.h. */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "values.h"

#define SENTINEL (-3.0) /* never a valid value: values and results are >= 0 */
#define INPUT_ALIGN 4096u

/* What each rank reports at the end of the kernel, as 64-bit words: its
 * timed-loop time, wrong elements, warmup calls and byte counters. Every
 * rank stores its row into every rank's results window, so each process
 * (one per rank under mpi) can read the whole table from its own rank. */
enum { RES_T_NS, RES_WRONG, RES_WARM, RES_COUNTERS };
#define RES_WORDS (RES_COUNTERS + sizeof(pld_counters) / sizeof(uint64_t))

/* The kernel argument: in pld_host_alloc memory, like everything it points to. */
typedef struct bench_arg {
    bench_spec spec;
    bench_shape sh;
    bench_vals vals;
    pld_dtensor data, sig, ring_sig, rcounts;
    pld_dtensor warm;    /* INT32 [1,2]: rank 0's "warmup is over" after barrier k, in cell
                            k % 2 (Set on every rank) */
    pld_dtensor results; /* INT32 [P, 2*RES_WORDS]: row q = rank q's report */
    unsigned char *in; /* rank r's input at in + r * in_stride */
    size_t in_stride;
    int32_t *counts;    /* all_to_all_v: row r = rank r's send counts [P] */
} bench_arg;

struct bench_runner {
    pld_world *w;
    int p;
    bench_spec spec;
    pld_window_buffer *sig_buf, *ring_buf, *warm_buf, *res_buf;
    bench_arg *arg;
    pld_counters *counters;
    bench_after_fn after;
    void *after_ctx;
};

/* What one rank works on. */
typedef struct kbufs {
    int me, p;
    size_t esz;
    pld_tensor in;        /* allgather [1,S], all_to_all [P,S], all_to_all_v [P*M,S] */
    pld_tensor counts;    /* all_to_all_v: INT32 [P] */
    unsigned char *local; /* this rank's slice of data */
    int32_t *rc;          /* this rank's recv_counts */
} kbufs;

/* all_to_all_v: rows rank s sends to rank d in checked iteration it, 0..M. */
static int32_t a2av_count(const bench_arg *a, int s, int d, int64_t it) {
    return (int32_t)(((int64_t)s * 3 + d + it) % (a->sh.m + 1));
}

static void call(pld_ctx *c, const bench_arg *a, const kbufs *b) {
    switch (a->spec.coll) {
    case BENCH_BARRIER:
        pld_barrier(c, a->sig);
        break;
    case BENCH_BROADCAST:
        pld_broadcast(c, a->data, a->sig, a->spec.root);
        break;
    case BENCH_ALLGATHER:
        if (a->spec.mode == BENCH_MODE_INPLACE)
            pld_allgather_inplace(c, a->data, a->sig);
        else
            pld_allgather(c, b->in, a->data, a->sig);
        break;
    case BENCH_REDUCE_SCATTER:
        pld_reduce_scatter(c, a->data, a->sig, a->spec.op);
        break;
    case BENCH_ALLREDUCE:
        if (a->spec.mode == BENCH_MODE_RING)
            pld_allreduce(c, a->data, a->ring_sig, a->spec.op, PLD_RING);
        else
            pld_allreduce(c, a->data, a->sig, a->spec.op, PLD_MESH);
        break;
    case BENCH_ALL_TO_ALL:
        pld_all_to_all(c, b->in, a->data, a->sig);
        break;
    case BENCH_ALL_TO_ALL_V:
        pld_all_to_all_v(c, b->in, a->data, a->sig, b->counts, a->rcounts);
        break;
    default:
        break;
    }
}

/* Inputs of checked iteration `it` on this rank. */
static void fill(const bench_arg *a, const kbufs *b, int64_t it) {
    const bench_vals *v = &a->vals;
    int64_t s = a->sh.cols, m = a->sh.m;
    size_t row = (size_t)s * b->esz;
    unsigned char *in = b->in.data;
    switch (a->spec.coll) {
    case BENCH_BROADCAST:
        if (b->me == a->spec.root)
            bench_fill(v, b->local, a->sh.count, b->me, 0, it, 0);
        else
            bench_fill_const(v->dt, b->local, a->sh.count, SENTINEL);
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
        bench_fill(v, b->local, a->sh.count, b->me, 0, it, 0);
        break;
    case BENCH_ALL_TO_ALL:
        for (int d = 0; d < b->p; d++)
            bench_fill(v, in + (size_t)d * row, s, b->me, d, it, 0);
        break;
    case BENCH_ALL_TO_ALL_V:
        for (int d = 0; d < b->p; d++) {
            a->counts[b->me * b->p + d] = a2av_count(a, b->me, d, it);
            bench_fill(v, in + (size_t)d * (size_t)m * row, m * s, b->me, d, it, 0);
        }
        break;
    default:
        break;
    }
}

/* Test hook: spoil one element of the result rank 0 is about to verify. */
static int64_t inject(const bench_arg *a, const kbufs *b) {
    switch (a->spec.coll) {
    case BENCH_BARRIER:
        return 1; /* nothing to spoil: count it directly */
    case BENCH_ALL_TO_ALL_V:
        b->rc[0] = (int32_t)a->sh.m + 5;
        return 0;
    case BENCH_REDUCE_SCATTER:
        bench_fill_const(a->vals.dt, b->local + (size_t)b->me * (size_t)a->sh.cols * b->esz, 1,
                         SENTINEL);
        return 0;
    default:
        bench_fill_const(a->vals.dt, b->local, 1, SENTINEL);
        return 0;
    }
}

/* Wrong elements of checked iteration `it` on this rank. */
static int64_t verify(const bench_arg *a, const kbufs *b, int64_t it) {
    const bench_vals *v = &a->vals;
    int64_t s = a->sh.cols, m = a->sh.m, wrong = 0;
    size_t row = (size_t)s * b->esz;
    switch (a->spec.coll) {
    case BENCH_BROADCAST:
        return bench_verify(v, b->local, a->sh.count, a->spec.root, 0, it, 0);
    case BENCH_ALLGATHER:
        for (int r = 0; r < b->p; r++)
            wrong += bench_verify(v, b->local + (size_t)r * row, s, r, 0, it, 0);
        return wrong;
    case BENCH_REDUCE_SCATTER:
        return bench_verify_reduced(v, b->local + (size_t)b->me * row, s, b->me, it, 0);
    case BENCH_ALLREDUCE:
        return bench_verify_reduced(v, b->local, a->sh.count, 0, it, 0);
    case BENCH_ALL_TO_ALL:
        for (int r = 0; r < b->p; r++)
            wrong += bench_verify(v, b->local + (size_t)r * row, s, r, b->me, it, 0);
        return wrong;
    case BENCH_ALL_TO_ALL_V:
        for (int r = 0; r < b->p; r++) {
            int32_t want = a2av_count(a, r, b->me, it);
            wrong += b->rc[r] != want;
            wrong +=
                bench_verify(v, b->local + (size_t)r * (size_t)m * row, want * s, r, b->me, it, 0);
        }
        return wrong;
    default:
        return 0;
    }
}

static void k_bench(pld_ctx *c, void *arg) {
    bench_arg *a = arg;
    kbufs b = {.me = pld_rank(c), .p = pld_nranks(c), .esz = pld_dtype_size(a->spec.dtype)};
    int64_t s = a->sh.cols, p = b.p;
    unsigned char *in = a->in ? a->in + (size_t)b.me * a->in_stride : NULL;
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
    case BENCH_ALL_TO_ALL_V:
        shape[0] = p * a->sh.m;
        b.in = pld_tensor_make(in, a->spec.dtype, 2, shape);
        b.counts = pld_tensor_make(a->counts + b.me * b.p, PLD_INT32, 1, cshape);
        b.rc = pld_local(c, a->rcounts).data;
        for (int d = 0; d < b.p; d++) /* timed calls send full blocks, like MPI_Alltoallv */
            a->counts[b.me * b.p + d] = (int32_t)a->sh.m;
        break;
    default:
        break;
    }
    if (a->spec.coll != BENCH_BARRIER) {
        /* Write every page of my slice and my input once: a fresh window is
         * lazily zeroed memory, and reading pages nobody wrote yet (the
         * broadcast root's data, say) would read the kernel's shared zero
         * page from cache instead of memory. Zeros: no denormals, no growth
         * under repeated in-place reductions. */
        pld_tensor mine = pld_local(c, a->data);
        b.local = mine.data;
        memset(b.local, 0, (size_t)pld_tensor_numel(mine) * b.esz);
        if (in) memset(in, 0, a->in_stride);
    }
    pld_barrier(c, a->sig); /* before any peer pushes into my slice */

    /* warmup: at least `warmup` calls, then one call per barrier until rank
     * 0 has been warming up for warmup_ns. Rank 0 decides before barrier k
     * and sets its decision in cell k % 2 of every rank; the others read it
     * after the barrier. Rank 0 can be one decision ahead of a slow rank
     * (not every collective makes every rank wait for every other: in a
     * broadcast a non-root waits for the root only), never two: it would
     * have to pass barrier k+1, which the slow rank has not reached. */
    uint64_t w0 = bench_now_ns();
    int64_t warm = 0;
    for (; warm < a->spec.warmup; warm++)
        call(c, a, &b);
    for (int64_t k = 0;; k++) {
        int64_t cell[2] = {0, k % 2};
        int done = a->spec.warmup_ns == 0; /* a count only: nothing to tell */
        if (!done && b.me == 0) {
            int32_t d = bench_now_ns() - w0 >= a->spec.warmup_ns;
            for (int q = 0; q < b.p; q++)
                pld_notify(c, a->warm, q, cell, d, PLD_NOTIFY_SET);
        }
        pld_barrier(c, a->sig);
        if (done || pld_signal_read(c, a->warm, cell)) break;
        call(c, a, &b);
        warm++;
    }
    uint64_t t0 = bench_now_ns();
    for (int64_t i = 0; i < a->spec.iters; i++)
        call(c, a, &b);
    uint64_t t_ns = bench_now_ns() - t0;

    int64_t wrong = 0;
    if (a->spec.check) {
        pld_barrier(c, a->sig);
        for (int64_t it = 0; it < a->spec.iters; it++) {
            fill(a, &b, it);
            call(c, a, &b);
            if (a->spec.inject && b.me == 0 && it == 0) wrong += inject(a, &b);
            wrong += verify(a, &b, it);
            pld_barrier(c, a->sig); /* nobody writes my results before I checked them */
        }
    }

    /* the report: counters first, so they cover the collective calls and
     * the kernel's barriers only */
    uint64_t row[RES_WORDS];
    pld_counters k = pld_ctx_counters(c);
    row[RES_T_NS] = t_ns;
    row[RES_WRONG] = (uint64_t)wrong;
    row[RES_WARM] = (uint64_t)warm;
    memcpy(&row[RES_COUNTERS], &k, sizeof k);
    pld_tile *t = pld_tile_create(c, PLD_INT32, 1, 2 * (int64_t)RES_WORDS);
    memcpy(pld_tile_data(t), row, sizeof row);
    int64_t at[2] = {b.me, 0};
    for (int q = 0; q < b.p; q++)
        pld_remote_store(c, t, a->results, q, at, PLD_ATOMIC_NONE);
    pld_tile_free(c, t);
    pld_barrier(c, a->sig);
}

pld_status bench_runner_open(pld_world *w, const bench_spec *spec, bench_runner **out) {
    pld_status st;
    int p = pld_world_size(w);
    bench_runner *r = calloc(1, sizeof *r);
    if (!r) return PLD_ERR_NOMEM;
    r->w = w;
    r->p = p;
    r->spec = *spec;
    r->counters = calloc((size_t)p, sizeof *r->counters);
    r->arg = pld_host_alloc(w, sizeof *r->arg);
    if (!r->counters || !r->arg) {
        st = PLD_ERR_NOMEM;
        goto err;
    }
    st = pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)p, "bench_signal", &r->sig_buf);
    if (st != PLD_OK) goto err;
    st = pld_window(r->sig_buf, PLD_INT32, 2, PLD_IDX(p, 1), &r->arg->sig);
    if (st != PLD_OK) goto err;
    st = pld_alloc_window_buffer(w, 2 * sizeof(int32_t), "bench_warm", &r->warm_buf);
    if (st != PLD_OK) goto err;
    st = pld_window(r->warm_buf, PLD_INT32, 2, PLD_IDX(1, 2), &r->arg->warm);
    if (st != PLD_OK) goto err;
    st = pld_alloc_window_buffer(w, sizeof(uint64_t) * RES_WORDS * (size_t)p, "bench_results",
                                 &r->res_buf);
    if (st != PLD_OK) goto err;
    st = pld_window(r->res_buf, PLD_INT32, 2, PLD_IDX(p, 2 * (int64_t)RES_WORDS),
                    &r->arg->results);
    if (st != PLD_OK) goto err;
    if (spec->coll == BENCH_ALLREDUCE && spec->mode == BENCH_MODE_RING) {
        int64_t rows = p > 1 ? 2 * (p - 1) : 1;
        st = pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)(rows * p), "bench_ring_signal",
                                     &r->ring_buf);
        if (st != PLD_OK) goto err;
        st = pld_window(r->ring_buf, PLD_INT32, 2, PLD_IDX(rows, p), &r->arg->ring_sig);
        if (st != PLD_OK) goto err;
    }
    *out = r;
    return PLD_OK;
err:
    bench_runner_close(r);
    return st;
}

void bench_runner_close(bench_runner *r) {
    if (!r) return;
    if (r->ring_buf) pld_free_window_buffer(r->w, r->ring_buf);
    if (r->res_buf) pld_free_window_buffer(r->w, r->res_buf);
    if (r->warm_buf) pld_free_window_buffer(r->w, r->warm_buf);
    if (r->sig_buf) pld_free_window_buffer(r->w, r->sig_buf);
    if (r->arg) pld_host_free(r->w, r->arg);
    free(r->counters);
    free(r);
}

void bench_runner_after(bench_runner *r, bench_after_fn fn, void *ctx) {
    r->after = fn;
    r->after_ctx = ctx;
}

pld_status bench_runner_size(bench_runner *r, int64_t req, bench_result *out) {
    bench_arg *a = r->arg;
    const bench_spec *sp = &r->spec;
    int p = r->p;
    size_t esz = pld_dtype_size(sp->dtype);
    pld_window_buffer *data_buf = NULL, *rc_buf = NULL;
    pld_status st = PLD_OK;

    memset(out, 0, sizeof *out);
    bench_shape_make(sp->coll, p, esz, req, &out->shape);
    const bench_shape *sh = &out->shape;
    a->spec = *sp;
    a->sh = *sh;
    bench_vals_init(&a->vals, sp->dtype, sp->op, bench_coll_reduces(sp->coll), p);
    a->in = NULL;
    a->in_stride = 0;
    a->counts = NULL;
    memset(&a->data, 0, sizeof a->data);
    memset(&a->rcounts, 0, sizeof a->rcounts);

    /* windows and inputs: once per size */
    if (sp->coll != BENCH_BARRIER) {
        st = pld_alloc_window_buffer(r->w, (size_t)sh->bytes, "bench_data", &data_buf);
        if (st != PLD_OK) goto out;
        if (sp->coll == BENCH_BROADCAST || sp->coll == BENCH_ALLREDUCE)
            st = pld_window(data_buf, sp->dtype, 1, PLD_IDX(sh->count), &a->data);
        else
            st = pld_window(data_buf, sp->dtype, 2, PLD_IDX(sh->rows, sh->cols), &a->data);
        if (st != PLD_OK) goto out;
    }
    size_t in_bytes = 0;
    if (sp->coll == BENCH_ALLGATHER && sp->mode != BENCH_MODE_INPLACE)
        in_bytes = (size_t)sh->cols * esz;
    else if (sp->coll == BENCH_ALL_TO_ALL || sp->coll == BENCH_ALL_TO_ALL_V)
        in_bytes = (size_t)sh->bytes;
    if (in_bytes) {
        a->in_stride = (in_bytes + INPUT_ALIGN - 1) / INPUT_ALIGN * INPUT_ALIGN;
        a->in = pld_host_alloc(r->w, a->in_stride * (size_t)p);
        if (!a->in) {
            st = PLD_ERR_NOMEM;
            goto out;
        }
    }
    if (sp->coll == BENCH_ALL_TO_ALL_V) {
        a->counts = pld_host_alloc(r->w, sizeof(int32_t) * (size_t)p * (size_t)p);
        if (!a->counts) {
            st = PLD_ERR_NOMEM;
            goto out;
        }
        st = pld_alloc_window_buffer(r->w, sizeof(int32_t) * (size_t)p, "bench_recv_counts",
                                     &rc_buf);
        if (st == PLD_OK) st = pld_window(rc_buf, PLD_INT32, 2, PLD_IDX(p, 1), &a->rcounts);
        if (st != PLD_OK) goto out;
    }

    st = pld_launch(r->w, k_bench, a);
    if (st != PLD_OK) goto out;

    /* the reports, from the results window of a rank this process hosts */
    int host = 0;
    while (host < p - 1 && !pld_world_hosts_rank(r->w, host))
        host++;
    pld_tensor res;
    st = pld_window_host_view(r->w, a->results, host, &res);
    if (st != PLD_OK) goto out;
    uint64_t tmax = 0, tmin = UINT64_MAX;
    out->wrong = sp->check ? 0 : -1;
    for (int q = 0; q < p; q++) {
        uint64_t row[RES_WORDS];
        memcpy(row, (const unsigned char *)res.data + sizeof row * (size_t)q, sizeof row);
        tmax = row[RES_T_NS] > tmax ? row[RES_T_NS] : tmax;
        tmin = row[RES_T_NS] < tmin ? row[RES_T_NS] : tmin;
        if (sp->check) out->wrong += (int64_t)row[RES_WRONG];
        memcpy(&r->counters[q], &row[RES_COUNTERS], sizeof r->counters[q]);
        out->warmup_calls = (int64_t)row[RES_WARM]; /* the same on every rank */
    }
    out->time_ns = sp->iters > 0 ? (double)tmax / (double)sp->iters : 0;
    out->time_ns_min = sp->iters > 0 ? (double)tmin / (double)sp->iters : 0;
    /* the kernel's own pld_barriers: set-up, end of warmup, start of the
     * check and one after every checked call */
    out->barriers = 2 + (sp->check ? 1 + sp->iters : 0);
    out->ncalls = (uint64_t)(out->warmup_calls + sp->iters + (sp->check ? sp->iters : 0));
    out->counters = r->counters;
    if (r->after) {
        pld_tensor mine;
        st = a->data.buf ? pld_window_host_view(r->w, a->data, host, &mine) : PLD_OK;
        if (st != PLD_OK) goto out;
        bench_bufs bb = {.sh = sh,
                         .rank = host,
                         .p = p,
                         .in = a->in ? a->in + (size_t)host * a->in_stride : NULL,
                         .data = a->data.buf ? mine.data : NULL};
        r->after(r->after_ctx, &bb);
    }
out:
    if (a->counts) pld_host_free(r->w, a->counts);
    if (a->in) pld_host_free(r->w, a->in);
    a->counts = NULL;
    a->in = NULL;
    if (rc_buf) pld_free_window_buffer(r->w, rc_buf);
    if (data_buf) pld_free_window_buffer(r->w, data_buf);
    return st;
}
