/* SPDX-License-Identifier: Apache-2.0 */
/* `pld cost`: the cost card for one collective at given P and
 * size, per rank; with --measure it also runs the collective once (checked)
 * and prints the byte counters next to the card; with --predict --params
 * FILE it projects every algorithm onto the machine FILE describes, for
 * any P, without a world (params.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "cost.h"
#include "params.h"
#include "run.h"
#include "sweep.h"

typedef struct cost_opts {
    cli_shared sh; /* world, dtype, op, mode, root */
    bench_coll coll;
    int have_coll, have_size, measure, predict;
    int64_t size;
    const char *params; /* --params FILE: project without a world */
} cost_opts;

static int usage(FILE *out)
{
    fprintf(out,
            "usage: pld cost <collective> -s SIZE [options]\n"
            "  collectives: barrier broadcast allgather reduce_scatter allreduce all_to_all\n"
            "               all_to_all_v\n"
            "  -s, --size SIZE     bytes of the collective's buffer (as pld bench); K/M/G;\n"
            "                      a whole number of dtype elements\n"
            "  -d, --device LIST   devices = ranks (default 0,1): P is their number\n"
            "  -p, --platform P    a2a3sim (default) | a5sim (sets the UB size: mesh chunks)\n"
            "      --dtype T       fp32 (default) ...\n"
            "      --mode M        allgather auto|push|inplace|doubling, allreduce\n"
            "                      auto|mesh|ring|rs_ag|rabenseifner,\n"
            "                      broadcast pull|binomial, all_to_all auto|push|bruck\n"
            "  -o, --op OP         sum (default) | max | min | prod, for --measure\n"
            "  -r, --root R        broadcast root (default 0)\n"
            "      --measure       also run it once (checked) and compare the byte counters\n"
            "      --predict       the cost model's predicted time of each algorithm and path,\n"
            "                      with the parameters measured on this machine (pld tune)\n"
            "      --params FILE   with --predict: project every algorithm and synchronisation\n"
            "                      form onto the machine FILE describes (ranks per node, alpha\n"
            "                      and beta within and between nodes, per-message overhead;\n"
            "                      docs/params/example-cluster.txt), for any P (-d 0-9999),\n"
            "                      without creating a world; the fastest is marked\n"
            "      --transport T   thread (default) | process, for --measure\n"
            "Prints, per rank, the bytes written to peers, read from peers, copied to itself,\n"
            "and the barrier rounds. Exit status: 0, 1 if a measured counter differs, 2 usage\n"
            "or a bad parameter file.\n");
    return out == stderr ? CLI_EXIT_USAGE : 0;
}

static int parse(cost_opts *o, int argc, char **argv)
{
    cli k;
    const char *arg, *v;
    cli_init(&k, "cost", argc, argv);
    *o = (cost_opts){.sh = {.dtype = PLD_FP32, .op = PLD_SUM}};
    while ((arg = cli_next(&k))) {
#define VALUE(opt)                                                                                 \
    if (!(v = cli_value(&k, opt)))                                                                 \
        return CLI_EXIT_USAGE;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return -1;
        int shared = cli_shared_option(&k, arg, &o->sh);
        if (shared < 0)
            return CLI_EXIT_USAGE;
        if (shared)
            continue;
        if (cli_is(&k, arg, "-s", "--size")) {
            VALUE("--size");
            if (bench_size_parse(v, &o->size))
                return cli_usage_error(&k, "-s %s is not a size (8, 4K, 64M, 1G)", v);
            o->have_size = 1;
        } else if (cli_is(&k, arg, NULL, "--measure")) {
            o->measure = 1;
        } else if (cli_is(&k, arg, NULL, "--predict")) {
            o->predict = 1;
        } else if (cli_is(&k, arg, NULL, "--params")) {
            VALUE("--params");
            o->params = v;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_usage_error(&k, "unknown option '%s'", arg);
        } else if (o->have_coll) {
            return cli_usage_error(&k, "one collective per run; '%s' is extra", arg);
        } else if (bench_coll_parse(arg, &o->coll)) {
            return cli_usage_error(&k, "unknown collective '%s'", arg);
        } else {
            o->have_coll = 1;
        }
#undef VALUE
    }
    if (!o->have_coll)
        return cli_usage_error(&k, "which collective? (barrier broadcast allgather "
                                   "reduce_scatter allreduce all_to_all all_to_all_v)");
    if (!o->have_size && o->coll != BENCH_BARRIER)
        return cli_usage_error(&k, "-s SIZE is required");
    if (o->have_size && cli_size_check(&k, "-s", o->size, o->sh.dtype))
        return CLI_EXIT_USAGE;
    if (bench_mode_resolve(o->coll, o->sh.mode) == BENCH_NMODE)
        return cli_usage_error(&k, "%s has no mode '%s' (modes: %s)", bench_coll_name(o->coll),
                               bench_mode_name(o->sh.mode), bench_mode_choices(o->coll));
    if (bench_coll_reduces(o->coll) && o->sh.dtype != PLD_FP32 && o->sh.dtype != PLD_FP16 &&
        o->sh.dtype != PLD_BF16 && o->sh.dtype != PLD_INT32)
        return cli_usage_error(&k, "%s reduces fp32, fp16, bf16 and int32 only, not %s",
                               bench_coll_name(o->coll), pld_dtype_name(o->sh.dtype));
    if (o->coll == BENCH_REDUCE_SCATTER && o->sh.op != PLD_SUM)
        return cli_usage_error(&k, "reduce_scatter supports --op sum only");
    /* a projection prints predictions only: no card table, no run */
    if (o->params && !o->predict)
        return cli_usage_error(&k, "--params %s needs --predict (it projects predicted times only)",
                               o->params);
    if (o->params && o->measure)
        return cli_usage_error(&k, "--measure runs a world on this machine; --params projects "
                                   "without one (give one of them)");
    return 0;
}

static void describe_shape(bench_coll c, int p, const bench_shape *sh, pld_dtype dt)
{
    printf("# size %lld B = %lld %s elements: ", (long long)sh->bytes, (long long)sh->count,
           pld_dtype_name(dt));
    switch (c) {
    case BENCH_BARRIER:
        printf("no data\n");
        break;
    case BENCH_BROADCAST:
    case BENCH_ALLREDUCE:
        printf("data [%lld]\n", (long long)sh->count);
        break;
    case BENCH_ALLGATHER:
        printf("local [1,%lld] per rank, target [%d,%lld]\n", (long long)sh->cols, p,
               (long long)sh->cols);
        break;
    case BENCH_REDUCE_SCATTER:
        printf("data [%d,%lld]\n", p, (long long)sh->cols);
        break;
    case BENCH_ALL_TO_ALL:
        printf("input and target [%d,%lld]\n", p, (long long)sh->cols);
        break;
    case BENCH_ALL_TO_ALL_V:
        printf("input and target [P*M,S] = [%lld,%lld], M = %lld rows per destination\n",
               (long long)sh->rows, (long long)sh->cols, (long long)sh->m);
        break;
    default:
        break;
    }
}

static int card_eq(const bench_card *a, const bench_card *b)
{
    return a->to_peers == b->to_peers && a->from_peers == b->from_peers && a->self == b->self &&
           a->rounds == b->rounds && a->waits == b->waits && a->notifies == b->notifies;
}

/* One algorithm's (or path's) line of --predict: its busiest rank's card,
 * its chain of steps and the predicted time: the cards' (given_us < 0), or
 * given_us, the library's own prediction where it has one. */
static void predict_line(const char *name, int taken, bench_coll c, bench_mode mode, int p,
                         int root, const bench_shape *sh, size_t esz, size_t ub, int one_round,
                         const pld_tune *t, bench_card *cards, double given_us)
{
    uint64_t moved = 0, reduced = 0;
    int rounds = 0;
    for (int r = 0; r < p; r++) {
        bench_card_make_path(c, mode, p, r, root, sh, esz, ub, one_round, t, &cards[r]);
        uint64_t all = cards[r].to_peers + cards[r].from_peers + cards[r].self;
        moved = all > moved ? all : moved;
        reduced = cards[r].reduced > reduced ? cards[r].reduced : reduced;
        rounds = cards[r].rounds > rounds ? cards[r].rounds : rounds;
    }
    int chain = bench_chain(c, mode, p, one_round);
    double us = given_us >= 0 ? given_us : bench_card_predict_us(t, p, sh, cards, chain);
    printf(" %-22s %6d %6d %14llu %14llu %14.2f%s\n", name, rounds, chain,
           (unsigned long long)moved, (unsigned long long)reduced, us,
           taken ? "   <- this call" : "");
}

/* --predict for all_to_all: the one-round path, then the push and Bruck's
 * algorithm at the times pld_tune_all_to_all_auto predicts (its transfers
 * included, which the cards do not count); the pick marked is the one the
 * library makes (a PLD_RULES rule's, else the faster prediction). */
static void predict_all_to_all(bench_mode mode, int p, const bench_shape *sh, size_t esz, size_t ub,
                               int one, int has_ll, const pld_tune *t, bench_card *cards)
{
    double us[PLD_TUNE_ALL_TO_ALL_PREDICTIONS];
    size_t chunk = (size_t)sh->cols * esz;
    pld_tune_all_to_all_auto(t, p, chunk, us);
    int bruck = bench_all_to_all_pick(t, p, chunk) == BENCH_MODE_BRUCK; /* a rule's, or us[]'s */
    int autom = mode == BENCH_MODE_AUTO, picked = autom && !one;
    bench_coll c = BENCH_ALL_TO_ALL;
    if (has_ll)
        predict_line("one round (auto)", autom && one, c, BENCH_MODE_AUTO, p, 0, sh, esz, ub, 1, t,
                     cards, -1);
    predict_line(picked && !bruck ? "push (auto's pick)" : "push",
                 mode == BENCH_MODE_PUSH || (picked && !bruck), c, BENCH_MODE_PUSH, p, 0, sh, esz,
                 ub, 0, t, cards, us[0]);
    predict_line(picked && bruck ? "bruck (auto's pick)" : "bruck",
                 mode == BENCH_MODE_BRUCK || (picked && bruck), c, BENCH_MODE_BRUCK, p, 0, sh, esz,
                 ub, 0, t, cards, us[1]);
}

/* --predict for allgather: the one-round path, then the push and recursive
 * doubling at the times pld_tune_allgather_auto predicts (their transfers
 * included); the pick marked is the one the library makes (a rule's, else
 * the faster prediction).
 * The in-place form chooses as auto does; its rows show its own card (no
 * self copy) beside the same predictions. */
static void predict_allgather(bench_mode mode, int p, const bench_shape *sh, size_t esz, size_t ub,
                              int one, int has_ll, const pld_tune *t, bench_card *cards)
{
    double us[PLD_TUNE_ALLGATHER_PREDICTIONS];
    pld_tune_allgather_auto(t, p, (size_t)sh->cols * esz, us);
    int dbl = bench_allgather_pick(t, p, (size_t)sh->cols * esz) == BENCH_MODE_DOUBLING;
    int inplace = mode == BENCH_MODE_INPLACE;
    int autom = mode == BENCH_MODE_AUTO || inplace, picked = autom && !one;
    bench_coll c = BENCH_ALLGATHER;
    bench_mode push = inplace ? mode : BENCH_MODE_PUSH,
               doubling = inplace ? mode : BENCH_MODE_DOUBLING;
    if (has_ll)
        predict_line(inplace ? "one round (in place)" : "one round (auto)", autom && one, c,
                     inplace ? mode : BENCH_MODE_AUTO, p, 0, sh, esz, ub, 1, t, cards, -1);
    predict_line(picked && !dbl ? (inplace ? "push (pick)" : "push (auto's pick)") : "push",
                 mode == BENCH_MODE_PUSH || (picked && !dbl), c, push, p, 0, sh, esz, ub, 0, t,
                 cards, us[0]);
    predict_line(picked && dbl ? (inplace ? "doubling (pick)" : "doubling (auto's pick)")
                               : "doubling",
                 mode == BENCH_MODE_DOUBLING || (picked && dbl), c, doubling, p, 0, sh, esz, ub, 0,
                 t, cards, us[1]);
    /* the chain column counts steps; the time counts what a step costs here */
    int steps = bench_chain(c, BENCH_MODE_DOUBLING, p, 0);
    if (p > 1)
        printf("# doubling's time counts its chain of %d steps as %d links (%d a step: its "
               "partner sends only once woken for its own previous step)\n",
               steps, PLD_TUNE_DOUBLING_LINKS_PER_STEP * steps, PLD_TUNE_DOUBLING_LINKS_PER_STEP);
}

/* --predict: every algorithm of the collective, and its one-round path
 * where it has one, with the one the call takes marked. */
static void predict(bench_coll c, bench_mode mode, int p, int root, const bench_shape *sh,
                    size_t esz, size_t ub, int one, const pld_tune *t, bench_card *cards)
{
    uint64_t per_peer;
    int has_ll = bench_card_ll_need(c, BENCH_MODE_AUTO, sh, esz, &per_peer) && p > 1;
    printf("# predicted by the cost model (%s parameters, %d CPUs: round %.3g us, hand-over "
           "%.3g us per rank beyond the CPUs; `pld tune` measures again)\n",
           t->measured ? "measured" : "built-in", t->cpus, t->round_us, t->handover_us);
    printf("#%-22s %6s %6s %14s %14s %14s\n", "algorithm", "rounds", "chain", "bytes", "reduced",
           "predicted us");
    if (c == BENCH_ALL_TO_ALL) {
        predict_all_to_all(mode, p, sh, esz, ub, one, has_ll, t, cards);
        return;
    }
    if (c == BENCH_ALLGATHER) {
        predict_allgather(mode, p, sh, esz, ub, one, has_ll, t, cards);
        return;
    }
    if (c != BENCH_ALLREDUCE) {
        if (has_ll && c != BENCH_ALL_TO_ALL_V)
            predict_line("one round", one, c, mode, p, root, sh, esz, ub, 1, t, cards, -1);
        predict_line("credit rounds", !one, c, mode, p, root, sh, esz, ub, 0, t, cards, -1);
        return;
    }
    pld_allreduce_mode pick = bench_allreduce_pick(t, p, (size_t)sh->bytes, esz, ub);
    int autom = mode == BENCH_MODE_AUTO;
    if (has_ll)
        predict_line("one round (auto)", autom && one, c, BENCH_MODE_AUTO, p, root, sh, esz, ub, 1,
                     t, cards, -1);
    predict_line(autom && !one && pick == PLD_MESH ? "mesh (auto's pick)" : "mesh",
                 mode == BENCH_MODE_MESH || (autom && !one && pick == PLD_MESH), c, BENCH_MODE_MESH,
                 p, root, sh, esz, ub, 0, t, cards, -1);
    predict_line("ring", mode == BENCH_MODE_RING, c, BENCH_MODE_RING, p, root, sh, esz, ub, 0, t,
                 cards, -1);
    predict_line(autom && !one && pick == PLD_RS_AG ? "rs_ag (auto's pick)" : "rs_ag",
                 mode == BENCH_MODE_RS_AG || (autom && !one && pick == PLD_RS_AG), c,
                 BENCH_MODE_RS_AG, p, root, sh, esz, ub, 0, t, cards, -1);
    /* one round and the chain of its steps (bench_chain) */
    predict_line(autom && !one && pick == PLD_RABENSEIFNER ? "rabenseifner (auto's pick)"
                                                           : "rabenseifner",
                 mode == BENCH_MODE_RABENSEIFNER || (autom && !one && pick == PLD_RABENSEIFNER), c,
                 BENCH_MODE_RABENSEIFNER, p, root, sh, esz, ub, 0, t, cards, -1);
}

/* ---- --predict --params FILE: the projection, without a world ----------- */

#define PROJ_ALGS 5
#define PROJ_ROWS (PROJ_ALGS * 3)

/* The algorithms pld has for the collective, each on its credit rounds and
 * on its one-round path where the collective has one; returns how many. */
static int proj_algs(bench_coll c, proj_alg a[PROJ_ALGS])
{
    switch (c) {
    case BENCH_BARRIER:
        a[0] = (proj_alg){"barrier", BENCH_MODE_DEFAULT, 0};
        return 1;
    case BENCH_ALLGATHER:
        a[0] = (proj_alg){"push", BENCH_MODE_PUSH, 0};
        a[1] = (proj_alg){"inplace", BENCH_MODE_INPLACE, 0};
        a[2] = (proj_alg){"doubling", BENCH_MODE_DOUBLING, 0};
        a[3] = (proj_alg){"push/one_round", BENCH_MODE_AUTO, 1}; /* only auto takes it */
        a[4] = (proj_alg){"inplace/one_round", BENCH_MODE_INPLACE, 1};
        return 5;
    case BENCH_BROADCAST:
        a[0] = (proj_alg){"pull", BENCH_MODE_PULL, 0};
        a[1] = (proj_alg){"binomial", BENCH_MODE_BINOMIAL, 0};
        a[2] = (proj_alg){"one_round", BENCH_MODE_PULL, 1};
        return 3;
    case BENCH_REDUCE_SCATTER:
        a[0] = (proj_alg){"pull", BENCH_MODE_PULL, 0};
        a[1] = (proj_alg){"one_round", BENCH_MODE_PULL, 1};
        return 2;
    case BENCH_ALLREDUCE:
        a[0] = (proj_alg){"one_round", BENCH_MODE_AUTO, 1};
        a[1] = (proj_alg){"mesh", BENCH_MODE_MESH, 0};
        a[2] = (proj_alg){"ring", BENCH_MODE_RING, 0};
        a[3] = (proj_alg){"rs_ag", BENCH_MODE_RS_AG, 0};
        a[4] = (proj_alg){"rabenseifner", BENCH_MODE_RABENSEIFNER, 0};
        return 5;
    case BENCH_ALL_TO_ALL:
        a[0] = (proj_alg){"push", BENCH_MODE_PUSH, 0};
        a[1] = (proj_alg){"bruck", BENCH_MODE_BRUCK, 0};
        a[2] = (proj_alg){"one_round", BENCH_MODE_AUTO, 1};
        return 3;
    default: /* all_to_all_v: no one-round path */
        a[0] = (proj_alg){"push", BENCH_MODE_PUSH, 0};
        return 1;
    }
}

/* 1 when the call would take the one-round path at this P and size (the
 * library's rule, bench_card_one_round); otherwise a comment says why not. */
static int proj_one_round_taken(bench_coll c, const proj_alg *a, int p, const bench_shape *sh,
                                size_t esz, size_t ll)
{
    uint64_t per_peer = 0;
    bench_card_ll_need(c, a->mode, sh, esz, &per_peer);
    if (bench_card_one_round(c, a->mode, p, sh, esz, ll))
        return 1;
    printf("# %s: not taken at P=%d: ", a->name, p);
    if (p < 2 || p > 64)
        printf("the one-round path serves groups of 2 to 64 ranks\n");
    else if (per_peer > ll)
        printf("%llu B per peer > %zu B (PLD_LL_BYTES as sized for P=%d)\n",
               (unsigned long long)per_peer, ll, p);
    else if (c == BENCH_ALLGATHER || c == BENCH_ALL_TO_ALL)
        printf("the push is one round already; it takes the inboxes only with PLD_LL_BYTES "
               "set\n");
    else
        printf("the %d copies it reduces exceed 4 x %zu B\n", p - 1, ll);
    return 0;
}

typedef struct proj_row {
    const char *alg, *form;
    proj_result r;
} proj_row;

/* Every algorithm in every synchronisation form (once where it keeps its
 * own flags); returns the number of rows. */
static int proj_rows(const proj_params *pp, bench_coll c, int p, int root, const bench_shape *sh,
                     size_t esz, size_t ub, size_t ll, proj_row rows[PROJ_ROWS])
{
    static const pld_sync_form forms[] = {PLD_SYNC_FULL, PLD_SYNC_DISSEMINATION, PLD_SYNC_TREE};
    proj_alg algs[PROJ_ALGS];
    int na = proj_algs(c, algs), n = 0;
    for (int i = 0; i < na; i++) {
        const proj_alg *a = &algs[i];
        if (a->one_round && !proj_one_round_taken(c, a, p, sh, esz, ll))
            continue;
        int own = proj_alg_own_sync(c, a);
        for (int f = 0; f < (own ? 1 : 3); f++) {
            proj_row *row = &rows[n++];
            row->alg = a->name;
            row->form = !own ? pld_sync_form_name(forms[f]) : a->one_round ? "flags" : "neighbour";
            proj_predict(pp, c, a, forms[f], p, root, sh, esz, ub, &row->r);
        }
    }
    return n;
}

static void proj_header(const char *path, const proj_params *pp, bench_coll c, int p,
                        const char *platform, size_t ub)
{
    int nodes = (p + pp->ranks_per_node - 1) / pp->ranks_per_node, fanout = proj_fanout(pp, p);
    pld_sync_info tree;
    pld_sync_plan(PLD_SYNC_TREE, p, 0, fanout, &tree);
    double f = pp->ranks_per_node > pp->cpus_per_node
                   ? (double)pp->ranks_per_node / pp->cpus_per_node
                   : 1.0;
    printf("# pld cost: %s, P=%d, projected onto %s (no world: each rank's card and "
           "synchronisation plan computed here), platform %s (UB %zu bytes per core)\n",
           bench_coll_name(c), p, path, platform ? platform : "a2a3sim", ub);
    printf("# machine: %d node%s of %d ranks, %d CPUs per node; alpha %g us within a node, %g us "
           "between nodes; beta %g ns/B within, %g ns/B between; %g us per message\n",
           nodes, nodes == 1 ? "" : "s", pp->ranks_per_node, pp->cpus_per_node,
           pp->alpha_us[PROJ_INTRA], pp->alpha_us[PROJ_INTER], pp->beta_ns[PROJ_INTRA],
           pp->beta_ns[PROJ_INTER], pp->overhead_us);
    printf("# hops at alpha %s; tree fanout %d (depth %d); f = %g\n",
           nodes > 1 ? "between nodes (the group spans nodes)" : "within the node", fanout,
           tree.hops / 2, f);
    printf("# predicted_us = (rounds x hops + chain) x alpha + f x (messages x overhead + "
           "intra_B x beta_within + inter_B x beta_between), messages and bytes of the busiest "
           "rank (bytes it receives, or that peers read from it where more; chain: the binomial "
           "tree's depth, the doubling allgather's and the Rabenseifner allreduce's steps, Bruck's "
           "all-to-all's two flags per step); "
           "projections, not measurements\n");
}

static void proj_table(const proj_row *rows, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (rows[i].r.us < rows[best].r.us)
            best = i;
    printf("#%-19s %-13s %7s %5s %10s %14s %14s %14s\n", "algorithm", "form", "rounds", "hops",
           "messages", "intra_B", "inter_B", "predicted_us");
    for (int i = 0; i < n; i++) {
        const proj_result *r = &rows[i].r;
        printf(" %-19s %-13s %7d %5d %10llu %14llu %14llu %14.3f%s\n", rows[i].alg, rows[i].form,
               r->rounds, r->hops, (unsigned long long)r->messages,
               (unsigned long long)r->bytes[PROJ_INTRA], (unsigned long long)r->bytes[PROJ_INTER],
               r->us, i == best ? "   <- fastest" : "");
    }
}

/* The projection: every check before the first line of output, so that a
 * usage or parameter error prints on stderr only. */
static int project(const cost_opts *o)
{
    char msg[768];
    proj_params pp;
    int p;
    size_t ub = proj_ub_bytes(o->sh.cfg.platform), ll;
    if (!ub)
        snprintf(msg, sizeof msg, "-p %s: unknown platform (expected a2a3sim, a5sim or sim)",
                 o->sh.cfg.platform);
    if (!ub ||
        proj_devices_count(o->sh.cfg.devices ? o->sh.cfg.devices : "0,1", &p, msg, sizeof msg) ||
        proj_params_load(o->params, &pp, msg, sizeof msg) || proj_ll_bytes(p, &ll, msg, sizeof msg))
        goto usage;
    if (o->coll == BENCH_BROADCAST && o->sh.root >= p) {
        snprintf(msg, sizeof msg, "--root %lld is not a rank of P=%d", (long long)o->sh.root, p);
        goto usage;
    }
    size_t esz = pld_dtype_size(o->sh.dtype);
    bench_shape sh;
    bench_shape_make(o->coll, p, esz, o->size, &sh);
    proj_header(o->params, &pp, o->coll, p, o->sh.cfg.platform, ub);
    describe_shape(o->coll, p, &sh, o->sh.dtype);
    if (o->coll == BENCH_BROADCAST)
        printf("# root %lld\n", (long long)o->sh.root);
    proj_row rows[PROJ_ROWS];
    int n = proj_rows(&pp, o->coll, p, (int)o->sh.root, &sh, esz, ub, ll, rows);
    proj_table(rows, n);
    return 0;
usage:
    fprintf(stderr, "pld cost: %s\n", msg);
    return CLI_EXIT_USAGE;
}

/* The name of a rule's choice (pld_world_rule) for collective `rc`. */
static const char *rule_choice_name(pld_rule_coll rc, int choice)
{
    switch (rc) {
    case PLD_RULE_BROADCAST:
        return choice == PLD_BCAST_BINOMIAL ? "binomial" : "pull";
    case PLD_RULE_ALLGATHER:
        return choice == PLD_AG_DOUBLING ? "doubling" : "push";
    case PLD_RULE_ALL_TO_ALL:
        return choice == PLD_A2A_BRUCK ? "bruck" : "push";
    case PLD_RULE_ALLREDUCE:
        return choice == PLD_RABENSEIFNER ? "rabenseifner" : choice == PLD_RS_AG ? "rs_ag" : "mesh";
    default:
        return "?";
    }
}

/* Auto above the one-round size: the algorithm the library takes, whose
 * card the table shows -- a PLD_RULES rule's (pld_world_rule), else the
 * cost model's (pld_tune_*_auto with the world's parameters; the
 * broadcast's auto pulls). */
static void pick_line(const pld_world *w, bench_coll c, const pld_tune *t, int p,
                      const bench_shape *sh, size_t esz, size_t ub)
{
    _Static_assert(PLD_TUNE_ALL_TO_ALL_PREDICTIONS == 2 && PLD_TUNE_ALLGATHER_PREDICTIONS == 2,
                   "the push's prediction, then the other algorithm's");
    size_t row = (size_t)sh->cols * esz, n = (size_t)sh->bytes;
    pld_rule_coll rc = c == BENCH_BROADCAST    ? PLD_RULE_BROADCAST
                       : c == BENCH_ALLGATHER  ? PLD_RULE_ALLGATHER
                       : c == BENCH_ALL_TO_ALL ? PLD_RULE_ALL_TO_ALL
                                               : PLD_RULE_ALLREDUCE;
    size_t bytes = rc == PLD_RULE_ALLGATHER || rc == PLD_RULE_ALL_TO_ALL ? row : n;
    const char *unit = rc == PLD_RULE_ALLGATHER    ? " rows"
                       : rc == PLD_RULE_ALL_TO_ALL ? " chunks"
                                                   : "";
    int choice, line = pld_world_rule(w, rc, p, bytes, &choice);
    if (line) {
        const char *path = "?";
        pld_world_rules(w, &path);
        printf("# auto's pick: %s (rule %s:%d; %zu B%s, %d ranks): the card below is its\n",
               rule_choice_name(rc, choice), path, line, bytes, unit, p);
        return;
    }
    if (rc == PLD_RULE_BROADCAST) {
        printf("# auto's pick: pull (no PLD_RULES rule names the binomial tree for %zu B, %d "
               "ranks): the card below is its\n",
               bytes, p);
        return;
    }
    if (rc == PLD_RULE_ALLREDUCE) {
        double us[PLD_TUNE_ALLREDUCE_PREDICTIONS];
        pld_allreduce_mode m = pld_tune_allreduce_auto(t, p, n, esz, ub, us);
        int k = m == PLD_RABENSEIFNER ? 3 : m == PLD_RS_AG ? 2 : 0;
        printf("# auto's pick: %s (predicted %.2f us; mesh %.2f us, rs_ag %.2f us, rabenseifner "
               "%.2f us; %zu B): the card below is its\n",
               rule_choice_name(rc, m), us[k], us[0], us[2], us[3], n);
        return;
    }
    double us[2];
    int other = c == BENCH_ALL_TO_ALL ? pld_tune_all_to_all_auto(t, p, row, us) == PLD_A2A_BRUCK
                                      : pld_tune_allgather_auto(t, p, row, us) == PLD_AG_DOUBLING;
    const char *name = c == BENCH_ALL_TO_ALL ? "bruck" : "doubling";
    printf("# auto's pick: %s (predicted %.2f us; push %.2f us, %s %.2f us; %zu B%s): "
           "the card below is its\n",
           other ? name : "push", us[other], us[0], name, us[1], row, unit);
}

/* The synchronisation form of the call's credit rounds (pld_world_sync),
 * and the PLD_RULES rule that names this form for the group, if one does.
 * Otherwise PLD_SYNC or the cost model chose it; PLD_SYNC set to a form
 * outranks the rules, and should it name the rule's form, the rule is
 * still named. */
static void rounds_line(const pld_world *w, int p)
{
    pld_sync_info si;
    if (p < 2 || pld_world_sync(w, p, 0, &si) != PLD_OK)
        return;
    char why[160] = "";
    const char *path = "?";
    int choice, line = pld_world_rule(w, PLD_RULE_SYNC, p, 0, &choice);
    if (line && choice == (int)si.form && pld_world_rules(w, &path))
        snprintf(why, sizeof why, "; rule %s:%d", path, line);
    char kids[48] = "";
    if (si.form == PLD_SYNC_TREE)
        snprintf(kids, sizeof kids, " (%d children per rank)", si.fanout);
    printf("# rounds: %s%s, %d hop%s, %lld notifies a round over %d ranks%s\n",
           pld_sync_form_name(si.form), kids, si.hops, si.hops == 1 ? "" : "s", si.group_notifies,
           p, why);
}

int cost_main(int argc, char **argv)
{
    cost_opts o;
    int rc = parse(&o, argc, argv);
    if (rc < 0)
        return usage(stdout);
    if (rc)
        return rc;
    if (o.params)
        return project(&o);
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &o.sh.cfg);
    if (st != PLD_OK)
        return cli_world_error("cost", st);
    bench_card_rules(w);
    int p = pld_world_size(w);
    if (o.coll == BENCH_BROADCAST && o.sh.root >= p) {
        fprintf(stderr, "pld cost: --root %lld is not a rank of P=%d\n", (long long)o.sh.root, p);
        pld_world_finalize(w);
        return CLI_EXIT_USAGE;
    }
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    bench_mode mode = bench_mode_resolve(o.coll, o.sh.mode);
    size_t esz = pld_dtype_size(o.sh.dtype);
    bench_shape sh;
    bench_shape_make(o.coll, p, esz, o.size, &sh);

    printf("# pld cost: %s (%s), P=%d, platform %s (UB %zu bytes per core)\n",
           bench_coll_name(o.coll), bench_mode_name(mode), p, pld_world_platform(w), lim.ub_bytes);
    describe_shape(o.coll, p, &sh, o.sh.dtype);
    if (o.coll == BENCH_BROADCAST)
        printf("# root %lld\n", (long long)o.sh.root);
    size_t ll = pld_world_ll_bytes(w);
    int one = bench_card_one_round(o.coll, mode, p, &sh, esz, ll);
    uint64_t per_peer;
    if (bench_card_ll_need(o.coll, mode, &sh, esz, &per_peer))
        printf("# path: %s (%llu B per peer; one round up to %zu B per peer: PLD_LL_BYTES as "
               "sized for P=%d)\n",
               one ? "one round" : "credit rounds", (unsigned long long)per_peer, ll, p);
    printf("# card: %s\n", bench_card_formula(o.coll, mode, one));
    if (!one)
        rounds_line(w, p);
    pld_tune tune;
    pld_world_tune(w, &tune);
    if (!one &&
        (mode == BENCH_MODE_AUTO || (o.coll == BENCH_ALLGATHER && mode == BENCH_MODE_INPLACE) ||
         (o.coll == BENCH_BROADCAST && mode == BENCH_MODE_PULL)))
        pick_line(w, o.coll, &tune, p, &sh, esz, lim.ub_bytes);

    bench_card *cards = calloc((size_t)p, sizeof *cards);
    if (!cards) {
        pld_world_finalize(w);
        return 1;
    }
    pld_sync_info si;
    for (int r = 0; r < p; r++) {
        bench_card_make(o.coll, mode, p, r, (int)o.sh.root, &sh, esz, lim.ub_bytes, ll, &tune,
                        &cards[r]);
        pld_world_sync(w, p, r, &si);
        bench_card_sync(o.coll, mode, p, r, (int)o.sh.root, one, &si, &cards[r]);
    }

    bench_result res = {0};
    bench_runner *run = NULL;
    int status = 0;
    if (o.measure) {
        bench_spec spec = {.coll = o.coll,
                           .mode = mode,
                           .dtype = o.sh.dtype,
                           .op = o.sh.op,
                           .root = (int)o.sh.root,
                           .iters = 1,
                           .warmup = 0,
                           .check = 1};
        st = bench_runner_open(w, &spec, &run);
        if (st == PLD_OK)
            st = bench_runner_size(run, o.size, &res);
        if (st != PLD_OK) {
            fprintf(stderr, "pld cost: --measure: %s: %s\n", pld_status_name(st),
                    pld_world_error(w));
            status = 1;
            o.measure = 0;
        }
    }

    /* measured, per call: the launch ran the call twice (timed, then
     * checked) and res.barriers pld_barriers (2(P-1) notifies, P-1 waits) */
    typedef struct meas {
        uint64_t to, from, self, notifies, waits;
    } meas;
    meas *mv = calloc((size_t)p, sizeof *mv);
    for (int r = 0; o.measure && mv && r < p; r++) {
        const pld_counters *m = &res.counters[r];
        uint64_t n = res.ncalls, P = (uint64_t)p;
        /* the harness's pld_barriers, in the group's form */
        pld_sync_info hs;
        pld_world_sync(w, p, r, &hs);
        uint64_t bn = (uint64_t)res.barriers * (uint64_t)(hs.notifies + hs.epilogue),
                 bw = (uint64_t)res.barriers * (uint64_t)hs.waits;
        (void)P;
        mv[r] = (meas){m->bytes_to_peers / n, m->bytes_from_peers / n, m->bytes_self / n,
                       (m->notifies - bn) / n, (m->waits - bw) / n};
        if (m->bytes_to_peers % n || m->bytes_from_peers % n || m->bytes_self % n)
            mv[r].to = UINT64_MAX; /* the two calls differ: never equal to a card */
    }
    printf("#%-13s %14s %14s %14s %7s %9s %9s", "ranks", "to_peers", "from_peers", "self", "rounds",
           "notifies", "waits");
    if (o.measure)
        printf("   %-8s %14s %14s %14s %9s %9s", "measured", "to_peers", "from_peers", "self",
               "notifies", "waits");
    printf("\n");
    int mismatches = 0;
    for (int r0 = 0; r0 < p;) {
        /* a run of ranks with the same card (and, measured, the same counters) */
        int r1 = r0 + 1;
        while (r1 < p && card_eq(&cards[r1], &cards[r0]) &&
               (!o.measure || !memcmp(&mv[r1], &mv[r0], sizeof *mv)))
            r1++;
        char ranks[32];
        if (r1 - r0 == 1)
            snprintf(ranks, sizeof ranks, "%d", r0);
        else
            snprintf(ranks, sizeof ranks, "%d-%d", r0, r1 - 1);
        const bench_card *k = &cards[r0];
        char kn[24] = "-", kw[24] = "-";
        if (k->notifies != BENCH_CARD_UNCOUNTED) {
            snprintf(kn, sizeof kn, "%llu", (unsigned long long)k->notifies);
            snprintf(kw, sizeof kw, "%llu", (unsigned long long)k->waits);
        }
        printf(" %-13s %14llu %14llu %14llu %7d %9s %9s", ranks, (unsigned long long)k->to_peers,
               (unsigned long long)k->from_peers, (unsigned long long)k->self, k->rounds, kn, kw);
        if (o.measure) {
            const meas *m = &mv[r0];
            int bad = m->to != k->to_peers || m->from != k->from_peers || m->self != k->self ||
                      (k->notifies != BENCH_CARD_UNCOUNTED &&
                       (m->notifies != k->notifies || m->waits != k->waits));
            printf("   %-8s %14llu %14llu %14llu %9llu %9llu", bad ? "DIFFERS" : "agrees",
                   (unsigned long long)m->to, (unsigned long long)m->from,
                   (unsigned long long)m->self, (unsigned long long)m->notifies,
                   (unsigned long long)m->waits);
            mismatches += bad;
        }
        printf("\n");
        r0 = r1;
    }
    if (o.measure) {
        printf("# measured: byte counters per call (one timed and one checked call, %lld wrong "
               "elements); they %s the card on every rank (bytes, and notifies and waits where "
               "counted)\n",
               (long long)res.wrong, mismatches ? "DIFFER from" : "equal");
        if (mismatches || res.wrong)
            status = 1;
    }
    if (o.predict) {
        bench_card *scratch = calloc((size_t)p, sizeof *scratch);
        if (scratch)
            predict(o.coll, mode, p, (int)o.sh.root, &sh, esz, lim.ub_bytes, one, &tune, scratch);
        free(scratch);
    }
    free(mv);
    bench_runner_close(run);
    free(cards);
    pld_world_finalize(w);
    return status;
}
