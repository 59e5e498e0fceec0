/* SPDX-License-Identifier: Apache-2.0 */
/* The cost model's predictions (pld/tune.h) and the allreduce, allgather
 * and all-to-all choices of PLD_AUTO above the one-round size. */
#include <math.h>

#include "core/internal.h"
#include "tune/tune.h"

void pld__tune_defaults(pld_tune *t)
{
    /* measured once on a 2-core x86 machine (docs/performance.md) */
    *t = (pld_tune){.cpus = 2,
                    .round_us = 0.3,
                    .peer_us = 0,
                    .handover_us = 1.7,
                    .transfer_us = 0.1,
                    .ws_bytes = {256.0 * 1024, 8.0 * 1024 * 1024, 64.0 * 1024 * 1024},
                    .copy_ns = {0.05, 0.1, 0.2},
                    .pull_ns = {0.05, 0.1, 0.2},
                    .reduce_ns = {0.1, 0.15, 0.3},
                    .measured = 0};
}

/* ns per byte at working set ws: the measured points, log-linear between
 * them, flat beyond. */
static double rate(const double *pts, const double *ns, double ws)
{
    if (ws <= pts[0])
        return ns[0];
    for (int i = 1; i < PLD_TUNE_POINTS; i++)
        if (ws <= pts[i]) {
            double x = log(ws / pts[i - 1]) / log(pts[i] / pts[i - 1]);
            return ns[i - 1] + x * (ns[i] - ns[i - 1]);
        }
    return ns[PLD_TUNE_POINTS - 1];
}

/* f(P): ranks that share a CPU take turns at it */
static double share(const pld_tune *t, int nranks)
{
    return nranks > t->cpus ? (double)nranks / t->cpus : 1;
}

double pld_tune_predict_us(const pld_tune *t, int nranks, int rounds, double copied, double pulled,
                           double reduced, double working_set)
{
    if (!t || nranks < 1 || t->cpus < 1)
        return 0;
    double p = nranks, cpus = t->cpus;
    double with_cpu = (p < cpus ? p : cpus) - 2; /* ranks beyond 2 that have a CPU */
    double round = t->round_us + t->peer_us * (with_cpu > 0 ? with_cpu : 0) +
                   t->handover_us * (p > cpus ? p - cpus : 0);
    double ns = copied * rate(t->ws_bytes, t->copy_ns, working_set) +
                pulled * rate(t->ws_bytes, t->pull_ns, working_set) +
                reduced * rate(t->ws_bytes, t->reduce_ns, working_set);
    return rounds * round + share(t, nranks) * ns / 1000.0;
}

double pld_tune_transfers_us(const pld_tune *t, int nranks, double transfers)
{
    if (!t || nranks < 1 || t->cpus < 1)
        return 0;
    return share(t, nranks) * transfers * t->transfer_us;
}

double pld_tune_chain_us(const pld_tune *t, int nranks, int steps)
{
    if (!t || nranks < 1 || t->cpus < 1 || steps < 1)
        return 0;
    double beyond = nranks > t->cpus ? nranks - t->cpus : 0;
    return steps * (t->round_us + t->handover_us * beyond);
}

int pld_tune_rs_ag_owners(int nranks, size_t bytes)
{
    size_t m = bytes / PLD_RS_AG_MIN_SEGMENT;
    if (nranks < 1)
        return 0;
    if (m < 1)
        m = 1;
    return m < (size_t)nranks ? (int)m : nranks;
}

int pld_tune_rs_ag_owner_rounds(int nranks, size_t bytes)
{
    int m = pld_tune_rs_ag_owners(nranks, bytes);
    return m < nranks && m <= PLD_RS_AG_OWNER_ROUNDS_MAX ? m : 0;
}

/* rs_ag (pld_tune_rs_ag_owners): each of the m owners reduces its segment
 * from every peer and copies the other segments; a rank that owns none
 * copies every segment. The bytes take the longer of the busiest rank's
 * own work and all ranks' work shared by the CPUs. When every rank owns a
 * segment, that is share(P) times one rank's work, as for every algorithm
 * where all ranks do alike; with one owner in a large group it is the
 * owner's reduction, which no other rank can take over. The owner rounds
 * wake a rank that owns nothing once: about two rounds of hand-overs, not
 * three. */
static double rs_ag_us(const pld_tune *t, int nranks, size_t bytes, double ws)
{
    if (!t || nranks < 1 || t->cpus < 1)
        return 0;
    int m = pld_tune_rs_ag_owners(nranks, bytes);
    double n = (double)bytes, p = nranks, seg = n / m;
    double owner = seg * rate(t->ws_bytes, t->copy_ns, ws) +
                   (n - seg) * rate(t->ws_bytes, t->pull_ns, ws) +
                   (p - 1) * seg * rate(t->ws_bytes, t->reduce_ns, ws);
    double other = m < nranks ? n * rate(t->ws_bytes, t->pull_ns, ws) : 0;
    double all = (m * owner + (p - m) * other) / t->cpus;
    double ns = owner > other ? owner : other;
    ns = all > ns ? all : ns;
    int rounds = pld_tune_rs_ag_owner_rounds(nranks, bytes) ? 2 : 3;
    return pld_tune_predict_us(t, nranks, rounds, 0, 0, 0, ws) + ns / 1000.0;
}

/* Rabenseifner (src/coll/allreduce_rabenseifner.c): Q the largest power of
 * two <= P, X = P - Q. Each of the Q stepping ranks reduces (Q-1)/Q of the
 * data in its halving steps (and stores it) and reads as much in its
 * doubling steps; the X that take an extra rank's data first reduce all
 * of it; the X extra ranks only read the result back. A chain of 2 log2 Q
 * steps (2 more for the fold and the unfold), then one round. */
static double rabenseifner_us(const pld_tune *t, int nranks, size_t bytes, double ws)
{
    if (!t || nranks < 2 || t->cpus < 1)
        return 0;
    int q = pld__floor_pow2(nranks), x = nranks - q, depth = pld__ceil_log2(q);
    double n = (double)bytes, part = (double)(q - 1) / q * n;
    double copy = rate(t->ws_bytes, t->copy_ns, ws), pull = rate(t->ws_bytes, t->pull_ns, ws),
           reduce = rate(t->ws_bytes, t->reduce_ns, ws);
    double stepping = part * (copy + pull + reduce);
    double folding = stepping + n * (copy + reduce), extra = n * pull;
    double ns = x ? (folding > extra ? folding : extra) : stepping;
    double all = ((q - x) * stepping + x * folding + x * extra) / t->cpus;
    ns = all > ns ? all : ns;
    return pld_tune_predict_us(t, nranks, 1, 0, 0, 0, ws) +
           pld_tune_chain_us(t, nranks, 2 * depth + (x ? 2 : 0)) + ns / 1000.0;
}

pld_allreduce_mode pld_tune_allreduce_auto(const pld_tune *t, int nranks, size_t bytes,
                                           size_t elt_size, size_t ub_bytes,
                                           double predicted_us[PLD_TUNE_ALLREDUCE_PREDICTIONS])
{
    double n = (double)bytes, p = nranks, ws = p * n, part = p > 0 ? (p - 1) / p * n : 0;
    /* the mesh's chunks: one accumulator tile of the UB, whole cache lines
     * (pld__coll_chunk_elems with the profile's UB, so every rank agrees) */
    int64_t count = elt_size ? (int64_t)(bytes / elt_size) : 0;
    int64_t chunk = elt_size ? (int64_t)(ub_bytes / elt_size) : 1;
    if (chunk >= 64)
        chunk -= chunk % 64;
    if (chunk < 1)
        chunk = 1;
    int chunks = (int)((count + chunk - 1) / chunk);
    /* reduced: the peers' bytes combined; copied: the results stored from
     * the UB; pulled: the segments read whole */
    double mesh = pld_tune_predict_us(t, nranks, 1 + chunks, n, 0, (p - 1) * n, ws);
    double ring = pld_tune_predict_us(t, nranks, 2 * (nranks - 1), part, part, part, ws);
    double rs_ag = rs_ag_us(t, nranks, bytes, ws);
    double rab = rabenseifner_us(t, nranks, bytes, ws);
    if (predicted_us) {
        predicted_us[0] = mesh;
        predicted_us[1] = ring;
        predicted_us[2] = rs_ag;
        predicted_us[3] = rab;
    }
    if (nranks < 2)
        return PLD_MESH;
    pld_allreduce_mode pick = rs_ag < mesh ? PLD_RS_AG : PLD_MESH;
    double best = pick == PLD_RS_AG ? rs_ag : mesh;
    /* at P = 2 Rabenseifner is rs_ag by another road (the same bytes, two
     * steps of two ranks for two of the rounds): a tie, up to rounding */
    return rab < best * (1 - 1e-9) ? PLD_RABENSEIFNER : pick;
}

pld_allgather_mode pld_tune_allgather_auto(const pld_tune *t, int nranks, size_t row_bytes,
                                           double predicted_us[PLD_TUNE_ALLGATHER_PREDICTIONS])
{
    double p = nranks, row = (double)row_bytes, ws = p * p * row;
    int steps = pld__ceil_log2(nranks);
    /* the same rows either way: P-1 into peers' targets, one staged */
    double bytes = pld_tune_predict_us(t, nranks, 1, p * row, 0, 0, ws);
    /* push: a put per rank, its own row included */
    double push = bytes + pld_tune_transfers_us(t, nranks, p);
    /* doubling: a put per step, two where the rows wrap past the last rank
     * (rank P-1 wraps in every step after the first), the own row staged,
     * and a chain of PLD_TUNE_DOUBLING_LINKS_PER_STEP links per step (see
     * there; the rank sleeps until its partner's flag) */
    double doubling = bytes +
                      pld_tune_chain_us(t, nranks, PLD_TUNE_DOUBLING_LINKS_PER_STEP * steps) +
                      pld_tune_transfers_us(t, nranks, 2 * steps + 1);
    if (predicted_us) {
        predicted_us[0] = push;
        predicted_us[1] = doubling;
    }
    return nranks > 1 && doubling < push * (1 - 1e-9) ? PLD_AG_DOUBLING : PLD_AG_PUSH;
}

int64_t pld_tune_bruck_chunks(int nranks)
{
    int64_t sum = 0;
    for (int k = 0, steps = pld__ceil_log2(nranks); k < steps; k++)
        sum += pld__bit_count(nranks, k);
    return sum;
}

/* The bytes Bruck's local copies cost a rank: every run of rows packed
 * and unpacked in each step (runs of 2^k rows, one copy each), and the P
 * rows gathered one by one into target order. A copy touches at least a
 * line to read and a line to write, so a run costs at least two cache
 * lines whatever its bytes: with chunks of a few bytes that, not the
 * bytes, is the work (measured: 4-byte chunks at P = 1024-4096). */
static double bruck_local_bytes(int nranks, double row)
{
    const double lines = 128;
    double sum = 0;
    for (int64_t h = 1; h < nranks; h *= 2)
        for (int64_t i = h; i < nranks; i += 2 * h) {
            double run = (double)(i + h <= nranks ? h : nranks - i) * row;
            sum += 2 * (run > lines ? run : lines); /* packed, then unpacked */
        }
    return sum + nranks * (row > lines ? row : lines);
}

pld_all_to_all_mode pld_tune_all_to_all_auto(const pld_tune *t, int nranks, size_t chunk_bytes,
                                             double predicted_us[PLD_TUNE_ALL_TO_ALL_PREDICTIONS])
{
    double p = nranks, row = (double)chunk_bytes, b = (double)pld_tune_bruck_chunks(nranks);
    int steps = pld__ceil_log2(nranks);
    /* push: P rows into the targets (one of them its own), P transfers */
    double push = pld_tune_predict_us(t, nranks, 1, p * row, 0, 0, 2 * p * p * row) +
                  pld_tune_transfers_us(t, nranks, p);
    /* Bruck: per step a ready and a data flag, each a link of the chain,
     * then the done round; the rows: staged in (P), put and got back (b
     * each), stored (P), and the local copies of its runs */
    double moved = 2 * p * row + 2 * b * row;
    double bruck = pld_tune_predict_us(t, nranks, 1, moved + bruck_local_bytes(nranks, row), 0, 0,
                                       4 * p * p * row) +
                   pld_tune_chain_us(t, nranks, 2 * steps) +
                   pld_tune_transfers_us(t, nranks, 2 * steps + 1);
    if (predicted_us) {
        predicted_us[0] = push;
        predicted_us[1] = bruck;
    }
    return nranks > 1 && bruck < push * (1 - 1e-9) ? PLD_A2A_BRUCK : PLD_A2A_PUSH;
}
