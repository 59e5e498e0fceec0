/* SPDX-License-Identifier: Apache-2.0 */
/* Measuring the cost model's parameters (pld/tune.h) with pld's own
 * builtins on the thread transport: a barrier gives a round, an allgather
 * the rate of copies, a reduce_scatter the rate of reductions, each at
 * three working sets, a run of small puts the cost of one transfer. The worlds it builds read no
 * PLD_* variable (a trace, the explorer or the race checker would measure themselves), and their
 * byte counts and rounds are the builtins' cost cards. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_util.h"
#include "core/internal.h"
#include "tune/tune.h"

typedef enum { M_BARRIER, M_ALLGATHER, M_BROADCAST, M_REDUCE_SCATTER, M_TRANSFERS } m_kind;

#define TRANSFERS_PER_CALL 100

typedef struct m_job {
    m_kind kind;
    int warm, iters;
    pld_dtensor sig, src, dst; /* allgather src [1,cols] -> dst [P,cols]; rs data in dst */
    double ns[64];             /* per rank: ns per call */
} m_job;

static void m_kernel(pld_ctx *c, void *arg)
{
    m_job *j = arg;
    uint64_t t0 = 0;
    /* write every page of my slices first: a fresh window is lazily zeroed
     * memory, and copying from pages nobody wrote reads the kernel's one
     * shared zero page out of the cache, at no cost a program ever sees */
    if (j->kind != M_BARRIER && j->kind != M_TRANSFERS) {
        pld_tensor s = pld_local(c, j->src), d = pld_local(c, j->dst);
        memset(s.data, 0, (size_t)pld_tensor_numel(s) * sizeof(float));
        memset(d.data, 0, (size_t)pld_tensor_numel(d) * sizeof(float));
        pld_barrier(c, j->sig);
    }
    for (int i = 0; i < j->warm + j->iters; i++) {
        if (i == j->warm)
            t0 = pld__now_ns();
        switch (j->kind) {
        case M_BARRIER:
            pld_barrier(c, j->sig);
            break;
        case M_ALLGATHER:
            pld_allgather(c, pld_local(c, j->src), j->dst, j->sig);
            break;
        case M_BROADCAST:
            pld_broadcast(c, j->dst, j->sig, 0);
            break;
        case M_REDUCE_SCATTER:
            pld_reduce_scatter(c, j->dst, j->sig, PLD_SUM);
            break;
        case M_TRANSFERS: /* my row into the next rank's window, the builtins' path */
            for (int k = 0; k < TRANSFERS_PER_CALL; k++)
                pld__coll_put_rows(c, "pld_put", j->dst, (pld_rank(c) + 1) % pld_nranks(c),
                                   pld_rank(c), pld_local(c, j->src), 0, 1);
            break;
        }
    }
    j->ns[pld_rank(c)] = (double)(pld__now_ns() - t0) / j->iters;
}

/* The slowest rank's time per call, in us, the best of reps launches of
 * `kind` on p ranks with rows of `cols` fp32 (0 for the barrier). */
static pld_status run(m_kind kind, int p, int64_t cols, int reps, double *us)
{
    char devices[32];
    snprintf(devices, sizeof devices, "0-%d", p - 1);
    pld_config cfg = {.devices = devices, .transport = "thread"};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    if (st != PLD_OK)
        return st;
    m_job *j = calloc(1, sizeof *j);
    pld_window_buffer *bs = NULL, *bsrc = NULL, *bdst = NULL;
    int64_t sshape[2] = {p, 1}, one[2] = {1, cols > 0 ? cols : 1}, all[2] = {p, one[1]};
    size_t row = (size_t)one[1] * sizeof(float);
    if (!j)
        st = PLD_ERR_NOMEM;
    if (st == PLD_OK)
        st = pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)p, "tune.sig", &bs);
    if (st == PLD_OK)
        st = pld_alloc_window_buffer(w, row, "tune.src", &bsrc);
    if (st == PLD_OK)
        st = pld_alloc_window_buffer(w, row * (size_t)p, "tune.dst", &bdst);
    if (st == PLD_OK)
        st = pld_window(bs, PLD_INT32, 2, sshape, &j->sig);
    if (st == PLD_OK)
        st = pld_window(bsrc, PLD_FP32, 2, one, &j->src);
    if (st == PLD_OK)
        st = pld_window(bdst, PLD_FP32, 2, all, &j->dst);
    double *rep = calloc((size_t)reps, sizeof *rep);
    if (st == PLD_OK && !rep)
        st = PLD_ERR_NOMEM;
    if (st == PLD_OK) {
        /* about 2 ms of calls per launch, at least 3 */
        double bytes = kind == M_BARRIER ? 0 : (double)row * p;
        j->kind = kind;
        j->warm = 2;
        j->iters = bytes > 0 ? (int)(2e6 / (1.0 + bytes / 2.0)) : 2000;
        j->iters = j->iters < 3 ? 3 : j->iters > 2000 ? 2000 : j->iters;
        if (kind == M_TRANSFERS) /* 20,000 puts */
            j->iters = 200;
    }
    /* one launch untimed first: new rank threads start on their creator's
     * CPU and take a while to spread over the others */
    for (int r = -1; st == PLD_OK && r < reps; r++) {
        if ((st = pld_launch(w, m_kernel, j)) != PLD_OK)
            pld__init_fail(st, "%s", pld_world_error(w));
        for (int k = 0; r >= 0 && k < p; k++)
            rep[r] = k == 0 || j->ns[k] > rep[r] ? j->ns[k] : rep[r];
    }
    /* the best, not the median: what the machine does when nothing else
     * runs, which a busy moment at first use would otherwise write into
     * the file for good */
    for (int r = 1; st == PLD_OK && r < reps; r++)
        rep[0] = rep[r] < rep[0] ? rep[r] : rep[0];
    if (st == PLD_OK)
        *us = rep[0] / 1000.0;
    free(rep);
    free(j);
    pld_world_finalize(w);
    return st;
}

pld_status pld_tune_measure(pld_tune *out, int thorough)
{
    if (!out)
        return pld__init_fail(PLD_ERR_ARG, "pld_tune_measure: out is NULL");
    pld_tune t = {0};
    int cpus = pld__cpus_allowed(), reps = thorough ? 9 : 3;
    int p = cpus < 2 ? 2 : cpus > 8 ? 8 : cpus; /* every rank on its own CPU, when it can */
    int p_over = cpus + 6;                      /* oversubscribed: the hand-over */
    if (p_over > 64)
        p_over = 64;
    double b2 = 0, bp = 0, bover = 0, puts = 0;
    pld_status st;
    pld__settings_defaults_only(1);
    st = run(M_BARRIER, 2, 0, reps, &b2);
    if (st == PLD_OK)
        st = run(M_BARRIER, p, 0, reps, &bp);
    if (st == PLD_OK)
        st = run(M_BARRIER, p_over, 0, reps, &bover);
    /* 100 puts of one 64 B row per call, 2 ranks on their own CPUs: what a
     * transfer costs beyond its bytes (a builtin's run of a few rows) */
    if (st == PLD_OK)
        st = run(M_TRANSFERS, 2, 16, reps, &puts);
    t.transfer_us = puts / TRANSFERS_PER_CALL;
    t.cpus = cpus;
    if (cpus >= 2) {
        t.round_us = b2;
        t.peer_us = p > 2 ? (bp - b2) / (p - 2) : 0;
        t.handover_us = (bover - b2 - t.peer_us * (cpus - 2)) / (p_over - cpus);
    } else { /* 2 and 7 ranks on one CPU: round + h, round + 6h */
        t.handover_us = (bover - b2) / (p_over - 2);
        t.round_us = b2 - t.handover_us;
    }
    /* working sets over all ranks: in the caches, in the last level, in memory */
    static const double ws[PLD_TUNE_POINTS] = {256.0 * 1024, 8.0 * 1024 * 1024, 64.0 * 1024 * 1024};
    for (int i = 0; st == PLD_OK && i < PLD_TUNE_POINTS; i++) {
        /* ws = P x N, N = P x cols x 4 bytes per rank */
        int64_t cols = (int64_t)(ws[i] / ((double)p * p * sizeof(float)));
        double n = (double)cols * p * sizeof(float), ag, bc, rs;
        t.ws_bytes[i] = ws[i];
        st = run(M_ALLGATHER, p, cols, reps, &ag);
        if (st == PLD_OK)
            st = run(M_BROADCAST, p, cols, reps, &bc);
        if (st == PLD_OK)
            st = run(M_REDUCE_SCATTER, p, cols, reps, &rs);
        if (st != PLD_OK)
            break;
        /* allgather: N per rank (its row to P-1 peers and itself), 1 round;
         * broadcast: N pulled by every non-root, 2 rounds; reduce_scatter:
         * (P-1)/P N reduced into the UB, the row N/P stored, 2 rounds */
        double round = pld_tune_predict_us(&t, p, 1, 0, 0, 0, 0);
        t.copy_ns[i] = (ag - round) * 1000.0 / n;
        if (t.copy_ns[i] < 0.001)
            t.copy_ns[i] = 0.001;
        t.pull_ns[i] = (bc - 2 * round) * 1000.0 / n;
        if (t.pull_ns[i] < 0.001)
            t.pull_ns[i] = 0.001;
        t.reduce_ns[i] = ((rs - 2 * round) * 1000.0 - t.copy_ns[i] * n / p) / (n * (p - 1) / p);
        if (t.reduce_ns[i] < 0.001)
            t.reduce_ns[i] = 0.001;
    }
    pld__settings_defaults_only(0);
    if (st != PLD_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", pld_last_error());
        return pld__init_fail(st, "pld_tune_measure: %s", why);
    }
    if (t.round_us < 0.01)
        t.round_us = 0.01;
    if (t.peer_us < 0)
        t.peer_us = 0;
    if (t.handover_us < 0)
        t.handover_us = 0;
    t.measured = 1;
    *out = t;
    return PLD_OK;
}
