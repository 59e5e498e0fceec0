/* SPDX-License-Identifier: Apache-2.0 */
/* Measuring the cost model's parameters (pld/tune.h) with pld's own
 * builtins on the thread transport: a barrier gives a round, an allgather
 * the rate of copies, a reduce_scatter the rate of reductions, each at
 * three working sets, a run of small puts the cost of one transfer. The worlds it builds read no
 * PLD_* variable (a trace, the explorer or the race checker would measure themselves), and their
 * byte counts and rounds are the builtins' cost cards. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_util.h"
#include "core/internal.h"
#include "tune/tune.h"

#define TRANSFERS_PER_CALL 100

typedef struct m_job {
    pld__tune_kind kind;
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
    if (j->kind != PLD__TM_BARRIER && j->kind != PLD__TM_TRANSFERS) {
        pld_tensor s = pld_local(c, j->src), d = pld_local(c, j->dst);
        memset(s.data, 0, (size_t)pld_tensor_numel(s) * sizeof(float));
        memset(d.data, 0, (size_t)pld_tensor_numel(d) * sizeof(float));
        pld_barrier(c, j->sig);
    }
    for (int i = 0; i < j->warm + j->iters; i++) {
        if (i == j->warm)
            t0 = pld__now_ns();
        switch (j->kind) {
        case PLD__TM_BARRIER:
            pld_barrier(c, j->sig);
            break;
        case PLD__TM_ALLGATHER:
            pld_allgather(c, pld_local(c, j->src), j->dst, j->sig);
            break;
        case PLD__TM_BROADCAST:
            pld_broadcast(c, j->dst, j->sig, 0);
            break;
        case PLD__TM_REDUCE_SCATTER:
            pld_reduce_scatter(c, j->dst, j->sig, PLD_SUM);
            break;
        case PLD__TM_TRANSFERS: /* my row into the next rank's window, the builtins' path */
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
static pld_status run_builtin(pld__tune_kind kind, int p, int64_t cols, int reps, double *us)
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
        double bytes = kind == PLD__TM_BARRIER ? 0 : (double)row * p;
        j->kind = kind;
        j->warm = 2;
        j->iters = bytes > 0 ? (int)(2e6 / (1.0 + bytes / 2.0)) : 2000;
        j->iters = j->iters < 3 ? 3 : j->iters > 2000 ? 2000 : j->iters;
        if (kind == PLD__TM_TRANSFERS) /* 20,000 puts */
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

/* The barriers that give the round, the peer cost and the hand-over:
 * 2 ranks, p ranks on their own CPUs, p_over ranks sharing them. Each is
 * the best of what earlier calls measured and this one (b[] starts at
 * +inf). */
static pld_status measure_rounds(pld__tune_runner run, pld_tune *t, int cpus, int p, int p_over,
                                 int reps, double b[3])
{
    const int ranks[3] = {2, p, p_over};
    for (int k = 0; k < 3; k++) {
        double us;
        pld_status st = run(PLD__TM_BARRIER, ranks[k], 0, reps, &us);
        if (st != PLD_OK)
            return st;
        b[k] = us < b[k] ? us : b[k];
    }
    if (cpus >= 2) {
        t->round_us = b[0];
        t->peer_us = p > 2 ? (b[1] - b[0]) / (p - 2) : 0;
        t->handover_us = (b[2] - b[0] - t->peer_us * (cpus - 2)) / (p_over - cpus);
    } else { /* 2 and 7 ranks on one CPU: round + h, round + 6h */
        t->handover_us = (b[2] - b[0]) / (p_over - 2);
        t->round_us = b[0] - t->handover_us;
    }
    return PLD_OK;
}

int pld__tune_rounds_misfit(const pld_tune *t, int p, const double ag[], const double bc[],
                            const double rs[], double *round_out)
{
    double round = pld_tune_predict_us(t, p, 1, 0, 0, 0, 0);
    *round_out = round;
    for (int i = 0; i < PLD_TUNE_POINTS; i++)
        if (ag[i] < round || bc[i] < 2 * round || rs[i] < 2 * round)
            return i;
    return -1;
}

/* How often the barriers are measured again while a call ran faster than
 * its rounds (pld__tune_rounds_misfit) before the measurement is given up. */
#define ROUNDS_ATTEMPTS 4

pld_status pld_tune_measure(pld_tune *out, int thorough)
{
    return pld__tune_measure_by(out, thorough, run_builtin);
}

pld_status pld__tune_measure_by(pld_tune *out, int thorough, pld__tune_runner run)
{
    if (!out)
        return pld__init_fail(PLD_ERR_ARG, "pld_tune_measure: out is NULL");
    pld_tune t = {0};
    int cpus = pld__cpus_allowed(), reps = thorough ? 9 : 3;
    int p = cpus < 2 ? 2 : cpus > 8 ? 8 : cpus; /* every rank on its own CPU, when it can */
    int p_over = cpus + 6;                      /* oversubscribed: the hand-over */
    if (p_over > 64)
        p_over = 64;
    double b[3] = {INFINITY, INFINITY, INFINITY}, puts = 0;
    double ag[PLD_TUNE_POINTS], bc[PLD_TUNE_POINTS], rs[PLD_TUNE_POINTS];
    pld_status st;
    pld__settings_defaults_only(1);
    t.cpus = cpus;
    st = measure_rounds(run, &t, cpus, p, p_over, reps, b);
    /* 100 puts of one 64 B row per call, 2 ranks on their own CPUs: what a
     * transfer costs beyond its bytes (a builtin's run of a few rows) */
    if (st == PLD_OK)
        st = run(PLD__TM_TRANSFERS, 2, 16, reps, &puts);
    t.transfer_us = puts / TRANSFERS_PER_CALL;
    /* working sets over all ranks: in the caches, in the last level, in memory */
    static const double ws[PLD_TUNE_POINTS] = {256.0 * 1024, 8.0 * 1024 * 1024, 64.0 * 1024 * 1024};
    double n[PLD_TUNE_POINTS];
    for (int i = 0; st == PLD_OK && i < PLD_TUNE_POINTS; i++) {
        /* ws = P x N, N = P x cols x 4 bytes per rank */
        int64_t cols = (int64_t)(ws[i] / ((double)p * p * sizeof(float)));
        n[i] = (double)cols * p * sizeof(float);
        t.ws_bytes[i] = ws[i];
        st = run(PLD__TM_ALLGATHER, p, cols, reps, &ag[i]);
        if (st == PLD_OK)
            st = run(PLD__TM_BROADCAST, p, cols, reps, &bc[i]);
        if (st == PLD_OK)
            st = run(PLD__TM_REDUCE_SCATTER, p, cols, reps, &rs[i]);
    }
    double round = 0;
    for (int attempt = 1; st == PLD_OK; attempt++) {
        int bad = pld__tune_rounds_misfit(&t, p, ag, bc, rs, &round);
        if (bad < 0)
            break;
        if (attempt == ROUNDS_ATTEMPTS) {
            pld__settings_defaults_only(0);
            return pld__init_fail(
                PLD_ERR_SYSTEM,
                "pld_tune_measure: the machine was too busy to measure: at %.0f B per rank an "
                "allgather took %.2f us, a broadcast %.2f and a reduce_scatter %.2f, less than "
                "the 1, 2 and 2 rounds they hold (%.2f us a round, the best of %d measurements); "
                "run again when it is quieter",
                n[bad], ag[bad], bc[bad], rs[bad], round, attempt);
        }
        st = measure_rounds(run, &t, cpus, p, p_over, reps, b);
    }
    for (int i = 0; st == PLD_OK && i < PLD_TUNE_POINTS; i++) {
        /* allgather: N per rank (its row to P-1 peers and itself), 1 round;
         * broadcast: N pulled by every non-root, 2 rounds; reduce_scatter:
         * (P-1)/P N reduced into the UB, the row N/P stored, 2 rounds */
        t.copy_ns[i] = (ag[i] - round) * 1000.0 / n[i];
        if (t.copy_ns[i] < 0.001)
            t.copy_ns[i] = 0.001;
        t.pull_ns[i] = (bc[i] - 2 * round) * 1000.0 / n[i];
        if (t.pull_ns[i] < 0.001)
            t.pull_ns[i] = 0.001;
        t.reduce_ns[i] =
            ((rs[i] - 2 * round) * 1000.0 - t.copy_ns[i] * n[i] / p) / (n[i] * (p - 1) / p);
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
