/* SPDX-License-Identifier: Apache-2.0 */
/* `pld moe --run` (see moe_run.h). The inputs are laid out for each form
 * before any timing: the packed and blocks forms want the token rows
 * copied into their (destination, expert) blocks, the indexed form reads
 * the tokens where they are. Only the dispatch call itself is timed.
 * Every rank puts its report row into every rank's results window, so the
 * host reads them all from a rank it hosts -- under mpi too. */
#define _POSIX_C_SOURCE 200809L
#include "moe_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct job {
    const moe_routing *r; /* host side only: on the process transport the ranks run in
                             processes forked before the routing was drawn */
    moe_routing rk;       /* what the kernels read: the shape and the counts, copied into
                             memory every rank sees */
    int form, iters, warmup, timed;
    int64_t b;  /* blocks: rows per destination; indexed: slots per source */
    size_t row; /* bytes per row */
    pld_dtensor target, signal, recv, counts_t; /* counts_t: blocks' [P,E] counts target */
    /* per world rank, host memory */
    unsigned char **input; /* the form's input */
    int32_t **send;        /* packed [P,E]; blocks [P] rows; */
    int32_t **send_e;      /* blocks: [P,E] counts for the all_to_all */
    int32_t **index;       /* indexed [P,C] */
    int32_t **offsets;     /* packed [E+1] */
    int32_t **recv_plain;  /* indexed [P,1] */
    pld_dtensor send_win;  /* indexed: send_counts window [P,1] */
    pld_dtensor results;   /* [P, R_N] fp64: every rank's report row */
    double **report;       /* per world rank: its report row, R_N values */
} job;

/* A rank's report: time per call (timed launches), then, after the one
 * counted call, its counters and whether it received what it should. */
enum { R_US, R_TO, R_FROM, R_SELF, R_SQES, R_WQEBBS, R_TRANSFERS, R_WRONG, R_N };

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int32_t cnt(const moe_routing *r, int s, int d, int e)
{
    int p = r->sh.p, ne = r->sh.e;
    return r->cnt[((size_t)s * (size_t)p + (size_t)d) * (size_t)ne + (size_t)e];
}

static void dispatch_once(pld_ctx *c, job *j)
{
    const moe_shape *sh = &j->rk.sh;
    int me = pld_rank(c), p = sh->p, ne = sh->e;
    switch (j->form) {
    case MOE_BLOCKS:
        pld_all_to_all(c, pld_tensor_make(j->send_e[me], PLD_INT32, 2, PLD_IDX(p, ne)), j->counts_t,
                       j->signal);
        pld_all_to_all_v(c, pld_tensor_make(j->input[me], sh->dtype, 2, PLD_IDX(p * j->b, sh->h)),
                         j->target, j->signal,
                         pld_tensor_make(j->send[me], PLD_INT32, 1, PLD_IDX(p)), j->recv);
        break;
    case MOE_INDEXED:
        pld_indexed_all_to_all_v(
            c, pld_tensor_make(j->input[me], sh->dtype, 2, PLD_IDX(sh->t, sh->h)), j->target,
            j->signal, j->send_win, pld_tensor_make(j->recv_plain[me], PLD_INT32, 2, PLD_IDX(p, 1)),
            pld_tensor_make(j->index[me], PLD_INT32, 2, PLD_IDX(p, j->b)), 1);
        break;
    default: {
        pld_moe_layout l = {.experts_per_rank = ne, .max_rows = sh->t};
        pld_moe_dispatch(
            c, &l,
            pld_tensor_make(j->input[me], sh->dtype, 2, PLD_IDX((int64_t)p * ne * sh->t, sh->h)),
            j->target, j->signal, pld_tensor_make(j->send[me], PLD_INT32, 2, PLD_IDX(p, ne)),
            j->recv, pld_tensor_make(j->offsets[me], PLD_INT32, 1, PLD_IDX(ne + 1)));
        break;
    }
    }
}

/* Did this rank receive what the routing says? */
static int received_wrong(pld_ctx *c, job *j)
{
    const moe_routing *r = &j->rk;
    int me = pld_rank(c), p = r->sh.p, ne = r->sh.e, bad = 0;
    for (int s = 0; s < p; s++) {
        int64_t want = 0;
        for (int e = 0; e < ne; e++)
            want += cnt(r, s, me, e);
        int64_t got = 0;
        if (j->form == MOE_INDEXED)
            got = j->recv_plain[me][s];
        else if (j->form == MOE_BLOCKS)
            got = ((const int32_t *)pld_local(c, j->recv).data)[s];
        else
            for (int e = 0; e < ne; e++)
                got += ((const int32_t *)pld_local(c, j->recv).data)[s * ne + e];
        bad |= got != want;
    }
    return bad;
}

static void kernel(pld_ctx *c, void *arg)
{
    job *j = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    double *row = j->report[me];
    if (!j->timed) {
        dispatch_once(c, j);
        pld_counters k = pld_ctx_counters(c); /* of this launch: that one call */
        row[R_TO] = (double)k.bytes_to_peers;
        row[R_FROM] = (double)k.bytes_from_peers;
        row[R_SELF] = (double)k.bytes_self;
        row[R_SQES] = (double)k.urma_sqes;
        row[R_WQEBBS] = (double)k.urma_wqebbs;
        row[R_TRANSFERS] = (double)k.transfers;
        row[R_WRONG] = received_wrong(c, j);
    } else {
        for (int i = 0; i < j->warmup; i++)
            dispatch_once(c, j);
        pld_barrier(c, j->signal);
        double t0 = now_us();
        for (int i = 0; i < j->iters; i++)
            dispatch_once(c, j);
        row[R_US] = (now_us() - t0) / j->iters;
    }
    /* my row into every rank's results, then everyone's are there */
    int64_t dst[2] = {me, 0}, src[2] = {0, 0}, shape[2] = {1, R_N};
    pld_xfer x = {.dst_offsets = dst, .src_offsets = src, .shape = shape};
    for (int q = 0; q < p; q++)
        pld_put(c, j->results, q, pld_tensor_make(row, PLD_FP64, 2, shape), &x);
    pld_barrier(c, j->signal);
}

/* The report rows, from the results window of a rank this process hosts. */
static pld_status reports(pld_world *w, const job *j, int p, double *rows)
{
    int host = 0;
    while (host < p - 1 && !pld_world_hosts_rank(w, host))
        host++;
    pld_tensor v;
    pld_status st = pld_window_host_view(w, j->results, host, &v);
    if (st == PLD_OK)
        memcpy(rows, v.data, sizeof(double) * (size_t)p * R_N);
    return st;
}

/* A byte of token t of rank s: the rows are distinguishable. */
static unsigned char token_byte(int s, int64_t t, size_t b)
{
    return (unsigned char)(s * 131 + t * 17 + (int64_t)b * 7);
}

static void lay_out(job *j, int s)
{
    const moe_routing *r = j->r;
    const moe_shape *sh = &r->sh;
    int p = sh->p, ne = sh->e, k = sh->k;
    size_t row = j->row;
    int32_t *fill = calloc((size_t)p * (size_t)ne, sizeof *fill);
    if (!fill)
        return;
    for (int64_t t = 0; t < sh->t; t++)
        for (int q = 0; q < k; q++) {
            int g = r->choice[((size_t)s * (size_t)sh->t + (size_t)t) * (size_t)k + (size_t)q];
            int d = g / ne, e = g % ne;
            unsigned char *dst = NULL;
            if (j->form == MOE_PACKED) {
                dst = j->input[s] + (((size_t)d * ne + e) * (size_t)sh->t + fill[g]) * row;
            } else {
                /* blocks and indexed: a destination's rows sorted by expert */
                int64_t before = 0;
                for (int e2 = 0; e2 < e; e2++)
                    before += cnt(r, s, d, e2);
                int64_t slot = before + fill[g];
                if (j->form == MOE_BLOCKS)
                    dst = j->input[s] + ((size_t)d * (size_t)j->b + (size_t)slot) * row;
                else
                    j->index[s][(size_t)d * (size_t)j->b + (size_t)slot] = (int32_t)t;
            }
            fill[g]++;
            for (size_t b = 0; dst && b < row; b++)
                dst[b] = token_byte(s, t, b);
        }
    if (j->form == MOE_INDEXED)
        for (int64_t t = 0; t < sh->t; t++)
            for (size_t b = 0; b < row; b++)
                j->input[s][(size_t)t * row + b] = token_byte(s, t, b);
    for (int d = 0; d < p; d++) {
        int64_t rows = 0;
        for (int e = 0; e < ne; e++) {
            rows += cnt(r, s, d, e);
            if (j->form == MOE_PACKED)
                j->send[s][d * ne + e] = cnt(r, s, d, e);
            if (j->form == MOE_BLOCKS)
                j->send_e[s][d * ne + e] = cnt(r, s, d, e);
        }
        if (j->form == MOE_BLOCKS)
            j->send[s][d] = (int32_t)rows;
    }
    free(fill);
}

static pld_status window(pld_world *w, const char *name, pld_dtype t, int64_t rows, int64_t cols,
                         pld_dtensor *out)
{
    pld_window_buffer *b;
    pld_status st = pld_alloc_window_buffer(w, (size_t)(rows * cols) * pld_dtype_size(t), name, &b);
    return st == PLD_OK ? pld_window(b, t, 2, PLD_IDX(rows, cols), out) : st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *host(pld_world *w, size_t bytes, pld_status *st)
{
    void *p = *st == PLD_OK ? pld_host_alloc(w, bytes ? bytes : 1) : NULL;
    if (!p && *st == PLD_OK)
        *st = PLD_ERR_NOMEM;
    if (p)
        memset(p, 0, bytes);
    return p;
}

int moe_card_matches(const moe_card *k, const pld_counters *c, int form, int urma)
{
    if (c->bytes_to_peers != k->to_peers || c->bytes_from_peers != k->from_peers ||
        c->bytes_self != k->self || c->transfers != k->transfers)
        return 0;
    return !urma || form == MOE_BLOCKS || c->urma_sqes == k->urma.sqes;
}

int moe_run_failed(int form, const moe_measured *ms)
{
    return ms->st != PLD_OK && !(form == MOE_INDEXED && ms->st == PLD_ERR_UNSUPPORTED);
}

void moe_run(pld_world *w, const moe_routing *r, int form, int iters, int warmup, int repeats,
             moe_measured *out)
{
    const moe_shape *sh = &r->sh;
    int p = sh->p, ne = sh->e;
    memset(out, 0, sizeof *out);
    out->counters = calloc((size_t)p, sizeof *out->counters);
    job *j = pld_host_alloc(w, sizeof *j);
    if (!out->counters || !j) {
        out->st = PLD_ERR_NOMEM;
        snprintf(out->why, sizeof out->why, "out of host memory");
        return;
    }
    pld_status st = PLD_OK;
    memset(j, 0, sizeof *j);
    j->r = r, j->form = form, j->iters = iters, j->warmup = warmup;
    j->b = form == MOE_PACKED ? (int64_t)ne * sh->t : moe_block_rows(sh);
    j->row = (size_t)sh->h * pld_dtype_size(sh->dtype);
    size_t ncnt = (size_t)p * (size_t)p * (size_t)ne;
    j->rk.sh = *sh;
    j->rk.cnt = host(w, sizeof(int32_t) * ncnt, &st);
    if (st == PLD_OK)
        memcpy(j->rk.cnt, r->cnt, sizeof(int32_t) * ncnt);
    int64_t in_rows = form == MOE_INDEXED ? sh->t : (int64_t)p * j->b;
    j->input = host(w, sizeof *j->input * (size_t)p, &st);
    j->send = host(w, sizeof *j->send * (size_t)p, &st);
    j->send_e = host(w, sizeof *j->send_e * (size_t)p, &st);
    j->index = host(w, sizeof *j->index * (size_t)p, &st);
    j->offsets = host(w, sizeof *j->offsets * (size_t)p, &st);
    j->recv_plain = host(w, sizeof *j->recv_plain * (size_t)p, &st);
    j->report = host(w, sizeof *j->report * (size_t)p, &st);
    double *reps = calloc((size_t)p * R_N, sizeof *reps);
    if (!reps && st == PLD_OK)
        st = PLD_ERR_NOMEM;
    for (int s = 0; s < p && st == PLD_OK; s++) {
        j->input[s] = host(w, (size_t)in_rows * j->row, &st);
        j->send[s] = host(w, sizeof(int32_t) * (size_t)p * (size_t)ne, &st);
        j->send_e[s] = host(w, sizeof(int32_t) * (size_t)p * (size_t)ne, &st);
        j->index[s] = host(w, sizeof(int32_t) * (size_t)p * (size_t)j->b, &st);
        j->offsets[s] = host(w, sizeof(int32_t) * (size_t)(ne + 1), &st);
        j->recv_plain[s] = host(w, sizeof(int32_t) * (size_t)p, &st);
        j->report[s] = host(w, sizeof(double) * R_N, &st);
        if (st == PLD_OK)
            lay_out(j, s);
    }
    if (st == PLD_OK)
        st = window(w, "target", sh->dtype, (int64_t)p * j->b, sh->h, &j->target);
    if (st == PLD_OK)
        st = window(w, "signal", PLD_INT32, p, 1, &j->signal);
    if (st == PLD_OK)
        st = window(w, "recv_counts", PLD_INT32, p, form == MOE_PACKED ? ne : 1, &j->recv);
    if (st == PLD_OK)
        st = window(w, "results", PLD_FP64, p, R_N, &j->results);
    if (st == PLD_OK && form == MOE_BLOCKS)
        st = window(w, "counts", PLD_INT32, p, ne, &j->counts_t);
    if (st == PLD_OK && form == MOE_INDEXED) {
        st = window(w, "send_counts", PLD_INT32, p, 1, &j->send_win);
        for (int s = 0; s < p && st == PLD_OK; s++) {
            pld_tensor v;
            if (!pld_world_hosts_rank(w, s)) /* under mpi: its own process fills it */
                continue;
            st = pld_window_host_view(w, j->send_win, s, &v);
            for (int d = 0; st == PLD_OK && d < p; d++) {
                int64_t rows = 0;
                for (int e = 0; e < ne; e++)
                    rows += cnt(r, s, d, e);
                ((int32_t *)v.data)[d] = (int32_t)rows;
            }
        }
    }
    if (st == PLD_OK)
        st = pld_launch(w, kernel, j);
    if (st == PLD_OK)
        st = reports(w, j, p, reps);
    for (int q = 0; q < p && st == PLD_OK; q++) {
        const double *row = reps + (size_t)q * R_N;
        out->counters[q].bytes_to_peers = (uint64_t)row[R_TO];
        out->counters[q].bytes_from_peers = (uint64_t)row[R_FROM];
        out->counters[q].bytes_self = (uint64_t)row[R_SELF];
        out->counters[q].urma_sqes = (uint64_t)row[R_SQES];
        out->counters[q].urma_wqebbs = (uint64_t)row[R_WQEBBS];
        out->counters[q].transfers = (uint64_t)row[R_TRANSFERS];
        out->wrong += row[R_WRONG] != 0;
    }
    double *runs = calloc((size_t)(repeats > 0 ? repeats : 1), sizeof *runs);
    j->timed = 1;
    for (int i = 0; st == PLD_OK && runs && i < repeats; i++) {
        st = pld_launch(w, kernel, j);
        if (st == PLD_OK)
            st = reports(w, j, p, reps);
        for (int q = 0; st == PLD_OK && q < p; q++)
            runs[i] =
                reps[(size_t)q * R_N + R_US] > runs[i] ? reps[(size_t)q * R_N + R_US] : runs[i];
    }
    if (st == PLD_OK && runs && repeats > 0) {
        qsort(runs, (size_t)repeats, sizeof *runs, cmp_double);
        out->us = runs[repeats / 2];
        out->us_min = runs[0];
        out->us_max = runs[repeats - 1];
    }
    free(runs);
    free(reps);
    out->st = st;
    if (st != PLD_OK)
        snprintf(out->why, sizeof out->why, "%s", pld_world_error(w));
    pld_dtensor wins[] = {j->target, j->signal, j->recv, j->counts_t, j->send_win, j->results};
    for (size_t i = 0; i < sizeof wins / sizeof wins[0]; i++)
        if (wins[i].buf)
            pld_free_window_buffer(w, wins[i].buf);
}
