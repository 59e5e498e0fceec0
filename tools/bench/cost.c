/* SPDX-License-Identifier: Apache-2.0 */
/* Cost cards of the builtins: see cost.h. */
#include "cost.h"

#include <stdlib.h>
#include <string.h>

static const char *const mode_names[BENCH_NMODE] = {
    [BENCH_MODE_DEFAULT] = "default",
    [BENCH_MODE_PUSH] = "push",
    [BENCH_MODE_INPLACE] = "inplace",
    [BENCH_MODE_PULL] = "pull",
    [BENCH_MODE_MESH] = "mesh",
    [BENCH_MODE_RING] = "ring",
    [BENCH_MODE_AUTO] = "auto",
    [BENCH_MODE_RS_AG] = "rs_ag",
    [BENCH_MODE_BINOMIAL] = "binomial",
    [BENCH_MODE_DOUBLING] = "doubling",
    [BENCH_MODE_RABENSEIFNER] = "rabenseifner",
    [BENCH_MODE_BRUCK] = "bruck",
};

const char *bench_mode_name(bench_mode m)
{
    return (unsigned)m < BENCH_NMODE ? mode_names[m] : "?";
}

int bench_mode_parse(const char *s, bench_mode *out)
{
    for (int i = 0; i < BENCH_NMODE; i++)
        if (!strcmp(s, mode_names[i])) {
            *out = (bench_mode)i;
            return 0;
        }
    return -1;
}

bench_mode bench_mode_resolve(bench_coll c, bench_mode m)
{
    switch (c) {
    case BENCH_ALLGATHER:
    case BENCH_ALL_TO_ALL: /* the default is pld_allgather's, pld_all_to_all's: auto */
        return m == BENCH_MODE_DEFAULT || m == BENCH_MODE_AUTO    ? BENCH_MODE_AUTO
               : m == BENCH_MODE_PUSH                             ? BENCH_MODE_PUSH
               : c == BENCH_ALLGATHER && m == BENCH_MODE_INPLACE  ? BENCH_MODE_INPLACE
               : c == BENCH_ALLGATHER && m == BENCH_MODE_DOUBLING ? BENCH_MODE_DOUBLING
               : c == BENCH_ALL_TO_ALL && m == BENCH_MODE_BRUCK   ? BENCH_MODE_BRUCK
                                                                  : BENCH_NMODE;
    case BENCH_ALL_TO_ALL_V:
        return m == BENCH_MODE_DEFAULT || m == BENCH_MODE_PUSH ? BENCH_MODE_PUSH : BENCH_NMODE;
    case BENCH_BROADCAST:
        return m == BENCH_MODE_DEFAULT || m == BENCH_MODE_PULL ? BENCH_MODE_PULL
               : m == BENCH_MODE_BINOMIAL                      ? BENCH_MODE_BINOMIAL
                                                               : BENCH_NMODE;
    case BENCH_REDUCE_SCATTER:
        return m == BENCH_MODE_DEFAULT || m == BENCH_MODE_PULL ? BENCH_MODE_PULL : BENCH_NMODE;
    case BENCH_ALLREDUCE:
        return m == BENCH_MODE_DEFAULT || m == BENCH_MODE_AUTO ? BENCH_MODE_AUTO
               : m == BENCH_MODE_MESH                          ? BENCH_MODE_MESH
               : m == BENCH_MODE_RING                          ? BENCH_MODE_RING
               : m == BENCH_MODE_RS_AG                         ? BENCH_MODE_RS_AG
               : m == BENCH_MODE_RABENSEIFNER                  ? BENCH_MODE_RABENSEIFNER
                                                               : BENCH_NMODE;
    case BENCH_BARRIER:
        return BENCH_MODE_DEFAULT;
    default:
        return BENCH_NMODE;
    }
}

const char *bench_mode_choices(bench_coll c)
{
    switch (c) {
    case BENCH_ALLGATHER:
        return "auto|push|inplace|doubling";
    case BENCH_ALL_TO_ALL:
        return "auto|push|bruck";
    case BENCH_ALL_TO_ALL_V:
        return "push";
    case BENCH_BROADCAST:
        return "pull|binomial";
    case BENCH_REDUCE_SCATTER:
        return "pull";
    case BENCH_ALLREDUCE:
        return "auto|mesh|ring|rs_ag|rabenseifner";
    default:
        return "(none)";
    }
}

/* Elements per chunk of the mesh allreduce: one accumulator tile in the free
 * UB (all of it: the bench kernel holds no tiles; peers are reduced into it
 * with pld_remote_reduce), whole cache lines
 * (multiples of 64 elements) when the budget allows; see
 * pld__coll_chunk_elems in src/coll/coll_util.c. */
static int64_t mesh_chunk(size_t ub_bytes, size_t elt)
{
    int64_t n = (int64_t)(ub_bytes / elt);
    if (n >= 64)
        n -= n % 64;
    return n > 0 ? n : 1;
}

/* The largest power of two <= p (p >= 1). */
static int floor_pow2(int p)
{
    int b = 1;
    while (b <= p / 2)
        b <<= 1;
    return b;
}

int bench_rab_depth(int p)
{
    int d = 0;
    for (int b = floor_pow2(p); b > 1; b >>= 1)
        d++;
    return 2 * d;
}

int bench_bruck_steps(int p)
{
    return bench_binomial_depth(p);
}

int64_t bench_bruck_step_chunks(int p, int k)
{
    int64_t h = (int64_t)1 << k, period = 2 * h;
    int64_t full = (p / period) * h, rest = p % period - h;
    return full + (rest > 0 ? rest : 0);
}

/* The world whose PLD_RULES the cards follow (bench_card_rules). */
static const pld_world *rules_world;

void bench_card_rules(const pld_world *w)
{
    rules_world = w;
}

/* The choice of the world's rule for an auto call, or -1: no world, or no
 * rule matches (the cost model decides). */
static int rule_choice(pld_rule_coll coll, int p, uint64_t bytes)
{
    int choice;
    return rules_world && pld_world_rule(rules_world, coll, p, bytes, &choice) ? choice : -1;
}

bench_mode bench_all_to_all_pick(const pld_tune *tune, int p, size_t chunk_bytes)
{
    int rule = rule_choice(PLD_RULE_ALL_TO_ALL, p, chunk_bytes);
    pld_all_to_all_mode m = rule >= 0 ? (pld_all_to_all_mode)rule
                                      : pld_tune_all_to_all_auto(tune, p, chunk_bytes, NULL);
    return m == PLD_A2A_BRUCK ? BENCH_MODE_BRUCK : BENCH_MODE_PUSH;
}

bench_mode bench_allgather_pick(const pld_tune *tune, int p, size_t row_bytes)
{
    int rule = rule_choice(PLD_RULE_ALLGATHER, p, row_bytes);
    pld_allgather_mode m =
        rule >= 0 ? (pld_allgather_mode)rule : pld_tune_allgather_auto(tune, p, row_bytes, NULL);
    return m == PLD_AG_DOUBLING ? BENCH_MODE_DOUBLING : BENCH_MODE_PUSH;
}

pld_allreduce_mode bench_allreduce_pick(const pld_tune *tune, int p, size_t bytes, size_t elt,
                                        size_t ub_bytes)
{
    int rule = rule_choice(PLD_RULE_ALLREDUCE, p, bytes);
    return rule >= 0 ? (pld_allreduce_mode)rule
                     : pld_tune_allreduce_auto(tune, p, bytes, elt, ub_bytes, NULL);
}

int bench_chain(bench_coll c, bench_mode mode, int p, int one_round)
{
    if ((c == BENCH_BROADCAST && mode == BENCH_MODE_BINOMIAL && !one_round) ||
        (c == BENCH_ALLGATHER && mode == BENCH_MODE_DOUBLING))
        return bench_binomial_depth(p);
    if (c == BENCH_ALL_TO_ALL && mode == BENCH_MODE_BRUCK) /* a ready and a data flag per step */
        return 2 * bench_bruck_steps(p);
    if (c == BENCH_ALLREDUCE && mode == BENCH_MODE_RABENSEIFNER && p > 1)
        return bench_rab_depth(p) + ((p & (p - 1)) ? 2 : 0);
    return 0;
}

int bench_rab_steps(int p, int rank, int64_t count, bench_rab_step *steps)
{
    int q = floor_pow2(p), x = p - q, n = 0;
    if (p < 2)
        return 0;
    if (rank < 2 * x && rank % 2 == 0) { /* extra: the result from rank + 1 */
        steps[n++] = (bench_rab_step){rank + 1, count, 0};
        return n;
    }
    if (rank < 2 * x) /* fold rank - 1's data into mine */
        steps[n++] = (bench_rab_step){rank - 1, count, 1};
    int v = rank < 2 * x ? rank / 2 : rank - x, lo = 0;
#define RAB_RANK(u) ((u) < x ? 2 * (u) + 1 : (u) + x)
#define RAB_EDGE(s) (count * (s) / q)
    for (int half = q / 2; half >= 1; half /= 2) { /* the half of my block that holds me */
        int keep = (v & half) ? lo + half : lo;
        steps[n++] =
            (bench_rab_step){RAB_RANK(v ^ half), RAB_EDGE(keep + half) - RAB_EDGE(keep), 1};
        lo = keep;
    }
    for (int half = 1; half < q; half *= 2) { /* the partner's block of `half` segments */
        int u = v ^ half, theirs = u & ~(half - 1);
        steps[n++] = (bench_rab_step){RAB_RANK(u), RAB_EDGE(theirs + half) - RAB_EDGE(theirs), 0};
    }
#undef RAB_RANK
#undef RAB_EDGE
    return n;
}

/* Elements of ring segment k of n elements over p ranks (allreduce_ring.c). */
static int64_t ring_seg(int64_t n, int p, int k)
{
    k = ((k % p) + p) % p;
    return n * (k + 1) / p - n * k / p;
}

int bench_card_ll_need(bench_coll c, bench_mode mode, const bench_shape *sh, size_t elt,
                       uint64_t *per_peer)
{
    uint64_t row = (uint64_t)sh->cols * elt, n = (uint64_t)sh->bytes;
    switch (c) {
    case BENCH_ALLGATHER: /* the forced push and doubling never take the one-round path */
        *per_peer = row;
        return mode == BENCH_MODE_AUTO || mode == BENCH_MODE_INPLACE;
    case BENCH_ALL_TO_ALL: /* the forced algorithms never take the one-round path */
        *per_peer = row;
        return mode == BENCH_MODE_AUTO;
    case BENCH_REDUCE_SCATTER:
        *per_peer = row;
        return 1;
    case BENCH_BROADCAST: /* the binomial tree never takes the one-round path */
        *per_peer = n;
        return mode != BENCH_MODE_BINOMIAL;
    case BENCH_ALLREDUCE:
        *per_peer = n;
        return mode == BENCH_MODE_AUTO;
    default:
        return 0;
    }
}

int bench_ll_explicit(void)
{
    const char *v = getenv("PLD_LL_BYTES");
    return v && *v;
}

int bench_card_one_round(bench_coll c, bench_mode mode, int p, const bench_shape *sh, size_t elt,
                         size_t ll_bytes)
{
    uint64_t per_peer;
    if (!bench_card_ll_need(c, mode, sh, elt, &per_peer) || p < 2 || per_peer > ll_bytes)
        return 0;
    if (c == BENCH_ALLGATHER || c == BENCH_ALL_TO_ALL)
        return bench_ll_explicit();
    if (c == BENCH_REDUCE_SCATTER || c == BENCH_ALLREDUCE)
        return (uint64_t)(p - 1) * per_peer <= 4 * (uint64_t)ll_bytes;
    return 1;
}

/* The one-round path (src/coll/ll_coll.c): the payload for each peer goes
 * into its inbox, the copy-out (or the reduction of the inbox in rank
 * order) is a self transfer; one round. */
static void card_one_round(bench_coll c, bench_mode mode, int p, int rank, int root, uint64_t row,
                           uint64_t n, bench_card *k)
{
    uint64_t P = (uint64_t)p;
    switch (c) {
    case BENCH_ALLGATHER:
        k->to_peers = (P - 1) * row;
        k->self = (P - 1) * row + (mode == BENCH_MODE_INPLACE ? 0 : row);
        break;
    case BENCH_ALL_TO_ALL:
        k->to_peers = (P - 1) * row;
        k->self = P * row;
        break;
    case BENCH_BROADCAST:
        k->to_peers = rank == root ? (P - 1) * n : 0;
        k->self = rank == root ? 0 : n;
        break;
    case BENCH_REDUCE_SCATTER:
        k->to_peers = k->self = k->reduced = (P - 1) * row;
        k->staged = row;
        break;
    default: /* allreduce */
        k->to_peers = k->self = k->reduced = (P - 1) * n;
        k->staged = n;
        break;
    }
    k->rounds = 1;
}

/* Bruck's all-to-all (src/coll/all_to_all_bruck.c): B =
 * pld_tune_bruck_chunks(P) chunks put to the step partners, the same B got
 * back from its own landing rows to unpack them, and the P rows put in
 * order into its own target; the steps' flags (bench_card_sync), then one
 * round (done). */
static void card_bruck(int p, uint64_t row, bench_card *k)
{
    uint64_t b = (uint64_t)pld_tune_bruck_chunks(p);
    k->to_peers = b * row;
    k->self = (b + (uint64_t)p) * row;
    k->rounds = 1;
    k->bruck = 1;
}

/* The credit rounds (the builtins' C files). */
static void card_credit(bench_coll c, bench_mode mode, int p, int rank, int root,
                        const bench_shape *sh, size_t elt, size_t ub_bytes, const pld_tune *tune,
                        bench_card *kp)
{
    bench_card k = {0};
    uint64_t P = (uint64_t)p, row = (uint64_t)sh->cols * elt, n = (uint64_t)sh->bytes;
    switch (c) {
    case BENCH_BARRIER:
        k.rounds = 1;
        break;
    case BENCH_BROADCAST: /* every non-root reads N: from the root, or its tree parent */
        k.from_peers = rank == root ? 0 : n;
        k.rounds = 2;
        /* the pull is pld_broadcast's auto, which a rule may send down the
         * tree (bench_mode_resolve: the broadcast has no mode "auto") */
        k.binomial = mode == BENCH_MODE_BINOMIAL ||
                     rule_choice(PLD_RULE_BROADCAST, p, n) == PLD_BCAST_BINOMIAL;
        break;
    case BENCH_ALLGATHER: /* push my row to the P-1 others (+ self unless in place) */
        k.to_peers = (P - 1) * row;
        k.self = mode == BENCH_MODE_INPLACE ? 0 : row;
        k.rounds = 1;
        /* recursive doubling moves the same rows, with a flag per step;
         * auto and the in-place form above the one-round size: a rule's
         * pick, else the cost model's */
        k.doubling = mode == BENCH_MODE_DOUBLING ||
                     ((mode == BENCH_MODE_AUTO || mode == BENCH_MODE_INPLACE) &&
                      bench_allgather_pick(tune, p, (size_t)row) == BENCH_MODE_DOUBLING);
        break;
    case BENCH_ALL_TO_ALL: /* auto above the one-round size: a rule's pick, else the model's */
        if (mode == BENCH_MODE_BRUCK ||
            (mode == BENCH_MODE_AUTO &&
             bench_all_to_all_pick(tune, p, (size_t)row) == BENCH_MODE_BRUCK)) {
            card_bruck(p, row, &k);
            break;
        }
        k.to_peers = (P - 1) * row;
        k.self = row;
        k.rounds = 1;
        break;
    case BENCH_ALL_TO_ALL_V: /* the full M-row block per destination */
        k.to_peers = (P - 1) * (uint64_t)sh->m * row;
        k.self = (uint64_t)sh->m * row;
        k.rounds = 1;
        break;
    case BENCH_REDUCE_SCATTER: /* pull row `me` from every peer */
        k.from_peers = k.reduced = (P - 1) * row;
        k.staged = row;
        k.rounds = 2;
        break;
    case BENCH_ALLREDUCE: {
        /* auto above the one-round size: a rule's pick, else the model's */
        pld_allreduce_mode pick =
            mode == BENCH_MODE_AUTO ? bench_allreduce_pick(tune, p, n, elt, ub_bytes) : PLD_MESH;
        if (mode == BENCH_MODE_RING) {
            /* reduce-scatter pulls every segment but mine, allgather every
             * segment but my right neighbour's */
            if (p > 1) {
                k.from_peers = (uint64_t)(2 * sh->count - ring_seg(sh->count, p, rank) -
                                          ring_seg(sh->count, p, rank + 1)) *
                               elt;
                k.reduced = k.staged = (uint64_t)(sh->count - ring_seg(sh->count, p, rank)) * elt;
            }
            k.rounds = 2 * (p - 1);
        } else if (mode == BENCH_MODE_RS_AG || (mode == BENCH_MODE_AUTO && pick == PLD_RS_AG)) {
            /* an owner: its segment from every peer, then every other
             * segment once; a non-owner: every segment once */
            int m = pld_tune_rs_ag_owners(p, n);
            int64_t mine = rank < m ? ring_seg(sh->count, m, rank) : 0;
            if (p > 1) {
                k.from_peers = (uint64_t)((int64_t)(p - 1) * mine + (sh->count - mine)) * elt;
                k.reduced = (uint64_t)((int64_t)(p - 1) * mine) * elt;
                k.staged = (uint64_t)mine * elt;
            }
            k.rounds = 3;
            k.owners = pld_tune_rs_ag_owner_rounds(p, n); /* 0: the group's rounds */
        } else if (mode == BENCH_MODE_RABENSEIFNER ||
                   (mode == BENCH_MODE_AUTO && pick == PLD_RABENSEIFNER)) {
            /* the steps' reads (a fold or an unfold reads the whole data),
             * then the done round */
            bench_rab_step st[BENCH_RAB_MAX_STEPS];
            int ns = bench_rab_steps(p, rank, sh->count, st);
            for (int i = 0; i < ns; i++) {
                k.from_peers += (uint64_t)st[i].elems * elt;
                if (st[i].reduce)
                    k.reduced += (uint64_t)st[i].elems * elt;
            }
            k.staged = k.reduced; /* each reduced range is stored back */
            k.rounds = 1;
            k.rab = 1;
        } else {
            int64_t ch = mesh_chunk(ub_bytes, elt);
            k.from_peers = k.reduced = (P - 1) * n;
            k.staged = n;
            k.rounds = 1 + (int)((sh->count + ch - 1) / ch);
        }
        break;
    }
    default:
        break;
    }
    *kp = k;
}

void bench_card_make(bench_coll c, bench_mode mode, int p, int rank, int root,
                     const bench_shape *sh, size_t elt, size_t ub_bytes, size_t ll_bytes,
                     const pld_tune *tune, bench_card *out)
{
    bench_card_make_path(c, mode, p, rank, root, sh, elt, ub_bytes,
                         bench_card_one_round(c, mode, p, sh, elt, ll_bytes), tune, out);
}

void bench_card_make_path(bench_coll c, bench_mode mode, int p, int rank, int root,
                          const bench_shape *sh, size_t elt, size_t ub_bytes, int one_round,
                          const pld_tune *tune, bench_card *out)
{
    bench_card k = {0};
    uint64_t P = (uint64_t)p;
    if (one_round)
        card_one_round(c, mode, p, rank, root, (uint64_t)sh->cols * elt, (uint64_t)sh->bytes, &k);
    else
        card_credit(c, mode, p, rank, root, sh, elt, ub_bytes, tune, &k);
    k.waits = (uint64_t)k.rounds * (P - 1);
    if (k.owners) /* an owner hears every rank twice and every owner once */
        k.waits = rank < k.owners ? 2 * (P - 1) + (uint64_t)(k.owners - 1) : (uint64_t)k.owners;
    if (k.bruck) /* and a ready and a data flag per step */
        k.waits += 2 * (uint64_t)bench_bruck_steps(p);
    if (p == 1)
        k.rounds = 0, k.waits = 0;
    *out = k;
}

int bench_binomial_children(int p, int rank, int root)
{
    int v = ((rank - root) % p + p) % p, n = 0;
    for (long b = 1; b < p; b <<= 1)
        n += b > v && v + b < p;
    return n;
}

int bench_binomial_parent(int p, int rank, int root)
{
    int v = ((rank - root) % p + p) % p, top = 1;
    if (v == 0)
        return -1;
    while (top <= v / 2)
        top <<= 1;
    return (v - top + root) % p;
}

int bench_binomial_depth(int p)
{
    int d = 0;
    for (long b = 1; b < p; b <<= 1)
        d++;
    return d;
}

void bench_card_sync(bench_coll c, bench_mode mode, int p, int rank, int root, int one_round,
                     const pld_sync_info *si, bench_card *k)
{
    uint64_t P = (uint64_t)p;
    if (p < 2) {
        k->waits = k->notifies = 0;
    } else if (one_round) { /* a flag to every peer, a wait for every peer */
        k->waits = k->notifies = P - 1;
    } else if (c == BENCH_ALLREDUCE && mode == BENCH_MODE_RING) {
        k->waits = k->notifies = BENCH_CARD_UNCOUNTED;
    } else if (k->owners) { /* rs_ag's owner rounds: the form does not take part */
        uint64_t m = (uint64_t)k->owners;
        k->notifies = rank < k->owners ? 2 * (m - 1) + 2 * (P - 1) : 3 * m;
    } else {
        k->waits = (uint64_t)k->rounds * (uint64_t)si->waits;
        k->notifies = (uint64_t)k->rounds * (uint64_t)si->notifies + (uint64_t)si->epilogue;
        if (c == BENCH_ALL_TO_ALL_V) /* each destination's count, in its own line */
            k->notifies += P - 1;
        if (c == BENCH_BROADCAST && k->binomial) { /* a flag per child */
            k->notifies += (uint64_t)bench_binomial_children(p, rank, root);
            k->waits += rank != root; /* and the parent's */
        }
        if (k->bruck) { /* a ready and a data flag per step */
            k->notifies += 2 * (uint64_t)bench_bruck_steps(p);
            k->waits += 2 * (uint64_t)bench_bruck_steps(p);
        }
        if (k->doubling) { /* a flag per step */
            k->notifies += (uint64_t)bench_binomial_depth(p);
            k->waits += (uint64_t)bench_binomial_depth(p);
        }
        if (c == BENCH_ALLREDUCE && k->rab) {
            /* a flag per halving and doubling step, sent and waited for; a
             * folding rank also waits for its extra rank's fold and flags
             * the unfold, an extra rank flags the fold and waits for the
             * unfold: as many of each as the rank has steps */
            int q = floor_pow2(p), x = p - q;
            uint64_t n = rank < 2 * x && rank % 2 == 0 ? 1
                         : rank < 2 * x                ? (uint64_t)bench_rab_depth(p) + 1
                                                       : (uint64_t)bench_rab_depth(p);
            k->notifies += n;
            k->waits += n;
        }
    }
}

double bench_card_predict_us(const pld_tune *tune, int p, const bench_shape *sh,
                             const bench_card *cards, int chain)
{
    /* The bytes take the longer of the busiest rank's own work and all
     * ranks' work shared by the CPUs (ranks that share a CPU take turns):
     * share(P) times one rank's when all do alike, the root's or an
     * owner's own work when it alone does most. The rounds are those of the
     * rank with the most; rs_ag's owner rounds wake a rank that owns
     * nothing once, about two rounds of hand-overs (as the library's
     * prediction, src/tune/predict.c). A chain of steps adds a step's wait
     * for each. */
    double ws = (double)p * (double)sh->bytes, busiest = 0, all = 0;
    int rounds = 0;
    for (int r = 0; r < p; r++) {
        const bench_card *k = &cards[r];
        /* reduced bytes come from peers (credit rounds) or from the own
         * inbox, a self transfer (one round); the rest of each is copied */
        uint64_t from_peers = k->reduced < k->from_peers ? k->reduced : k->from_peers;
        uint64_t from_self = k->reduced - from_peers;
        double us =
            pld_tune_predict_us(tune, 1, 0, (double)(k->to_peers + k->self - from_self + k->staged),
                                (double)(k->from_peers - from_peers), (double)k->reduced, ws);
        busiest = us > busiest ? us : busiest;
        all += us;
        int kr = k->owners ? 2 : k->rounds;
        rounds = kr > rounds ? kr : rounds;
    }
    if (tune && tune->cpus > 0 && all / tune->cpus > busiest)
        busiest = all / tune->cpus;
    return pld_tune_predict_us(tune, p, rounds, 0, 0, 0, ws) + pld_tune_chain_us(tune, p, chain) +
           busiest;
}

const char *bench_card_formula(bench_coll c, bench_mode mode, int one_round)
{
    if (one_round) {
        switch (c) {
        case BENCH_ALLGATHER:
            return mode == BENCH_MODE_INPLACE
                       ? "one round: (P-1)/P*N to peers' inboxes, (P-1)/P*N self (copy-out)"
                       : "one round: (P-1)/P*N to peers' inboxes, N self (own row + copy-out)";
        case BENCH_ALL_TO_ALL:
            return "one round: (P-1)/P*N to peers' inboxes, N self (own row + copy-out)";
        case BENCH_BROADCAST:
            return "one round: (P-1)*N from the root to the inboxes, N self on every non-root "
                   "(copy-out); the others send empty flags";
        case BENCH_REDUCE_SCATTER:
            return "one round: (P-1)/P*N to peers' inboxes, (P-1)/P*N self (reduced in rank "
                   "order)";
        default:
            return "one round: (P-1)*N to peers' inboxes, (P-1)*N self (reduced in rank order)";
        }
    }
    switch (c) {
    case BENCH_BARRIER:
        return "no data; 1 barrier round";
    case BENCH_BROADCAST:
        return mode == BENCH_MODE_BINOMIAL
                   ? "binomial: N from its tree parent on every non-root, 0 on the root; 2 "
                     "rounds and a chain of ceil(log2 P) flags"
                   : "pull: N from the root on every non-root, 0 on the root; 2 full rounds";
    case BENCH_ALLGATHER:
        return mode == BENCH_MODE_INPLACE
                   ? "inplace: (P-1)/P*N to peers, no self copy, 1 round, in P-1 puts (push) or in "
                     "ceil(log2 P) puts with a chain of as many flags (doubling), whichever a "
                     "PLD_RULES rule names, else the cost model predicts faster"
               : mode == BENCH_MODE_DOUBLING
                   ? "doubling: (P-1)/P*N to peers in ceil(log2 P) puts, N/P self; a chain of "
                     "ceil(log2 P) flags, then 1 round"
               : mode == BENCH_MODE_AUTO
                   ? "auto: (P-1)/P*N to peers, N/P self, 1 round, in P-1 puts (push) or in "
                     "ceil(log2 P) puts with a chain of as many flags (doubling), whichever a "
                     "PLD_RULES rule names, else the cost model predicts faster"
                   : "(P-1)/P*N to peers, N/P self; 1 round";
    case BENCH_ALL_TO_ALL:
        return mode == BENCH_MODE_BRUCK
                   ? "bruck: B chunks of N/P to peers in ceil(log2 P) puts (B = the indices "
                     "below P with bit k set, summed over the steps k: (P/2) log2 P for a "
                     "power of two), B + P chunks self (unpacking, then the rows in order); "
                     "a chain of 2 ceil(log2 P) flags, then 1 round"
               : mode == BENCH_MODE_AUTO
                   ? "auto: whichever of the push ((P-1)/P*N to peers, N/P self; 1 round) and "
                     "bruck (B chunks of N/P to peers, B + P self, B about (P/2) log2 P; a "
                     "chain of 2 ceil(log2 P) flags, then 1 round) a PLD_RULES rule names, else "
                     "the cost model predicts fastest"
                   : "(P-1)/P*N to peers, N/P self; 1 round";
    case BENCH_ALL_TO_ALL_V:
        return "(P-1)*M*S*elt to peers (full M-row blocks whatever the counts), M*S*elt self; "
               "1 round";
    case BENCH_REDUCE_SCATTER:
        return "(P-1)/P*N from peers; 2 rounds";
    case BENCH_ALLREDUCE:
        return mode == BENCH_MODE_RING ? "2(P-1)/P*N from peers; 2(P-1) rounds"
               : mode == BENCH_MODE_RS_AG
                   ? "about 2(P-1)/P*N from peers (my 1/P segment from every peer, then every "
                     "other segment once; segments of at least 4 KiB, so below 4096*P B only "
                     "the first N/4096 ranks own one); 3 rounds (with 16 owners or fewer, "
                     "and not every rank one: through the owners only)"
               : mode == BENCH_MODE_RABENSEIFNER
                   ? "rabenseifner: Q = the largest power of two <= P; about 2(Q-1)/Q*N from "
                     "peers in 2 log2 Q steps (recursive halving, then doubling; segment edges "
                     "N*s/Q), + N on the P-Q ranks that fold an extra rank in, N on each extra "
                     "rank; a chain of 2 log2 Q flags (+1 fold or unfold), then 1 round"
               : mode == BENCH_MODE_AUTO
                   ? "auto: whichever of the mesh ((P-1)*N from peers, 1 + chunks rounds), rs_ag "
                     "(about 2(P-1)/P*N from peers, 3 rounds) and rabenseifner (about "
                     "2(Q-1)/Q*N in a chain of 2 log2 Q steps, 1 round) a PLD_RULES rule names, "
                     "else the cost model predicts fastest"
                   : "(P-1)*N from peers; 1 + chunks rounds (UB-sized chunks)";
    default:
        return "?";
    }
}
