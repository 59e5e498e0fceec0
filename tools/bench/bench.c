/* SPDX-License-Identifier: Apache-2.0 */
/* `pld bench`: nccl-tests style measurement of the builtin collectives,
 * with nccl-tests' options and table so that scripts written for
 * all_reduce_perf and friends run it unchanged -- except -d, which is the
 * device list here as everywhere in pld (nccl-tests' -d is --datatype).
 *
 * One world for the whole run; per collective one signal; per size one
 * launch per column group (run.h, place.h). Each row: nccl-tests' columns
 * (out-of-place, then in-place), then %peak against a memcpy peak measured
 * at start-up (peak.h), and the byte counters next to the cost card
 * (cost.h). With --team the world is split (groups.h) and every group runs
 * the collective at once; the rows are per group. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cost.h"
#include "groups.h"
#include "peak.h"
#include "peak_launch.h"
#include "place.h"
#include "row.h"
#include "run.h"
#include "sweep.h"
#ifdef PLD_HAVE_MPI
#include "vs_mpi.h"
#endif

#define MAX_SIZES 256
#define BENCH_WARMUP_MS 50
#define PROGRESS_AFTER_NS 2000000000u

typedef struct bench_opts {
    cli_shared sh; /* world, dtype, op, mode, root */
    int ncoll;
    bench_coll coll[BENCH_NCOLL];
    int all;
    /* --datatype all, -o all, -r all (nccl-tests): every one in turn */
    int dtype_all, op_all, root_all;
    int64_t b, e, inc;
    int64_t f, iters, warmup, warmup_ms, check, average;
    const char *csv;
    int vs_mpi, inject;
    bench_team_opt team; /* axis 0: the whole world */
} bench_opts;

typedef struct bench_state {
    const bench_opts *o;
    pld_world *w;
    int p;
    pld_team *team; /* --team: the groups every collective runs in; NULL: the world */
    int tmax;       /* the largest group (P without a team) */
    pld_info_limits lim;
    int nsizes;
    int64_t sizes[MAX_SIZES];
    double *peak;     /* memcpy GB/s per (threads, requested size); 0 = not measured yet */
    int peak_threads; /* min(P, online cores): measured at start-up */
    FILE *csv;
    uint64_t start_ns, last_progress_ns;
    int progress_tty, progress_shown;
    /* totals */
    double busbw_sum;
    int busbw_n;
    int64_t wrong;
    int bad_cells; /* measurements with a wrong element: nccl-tests' out of bounds values */
    int failures, card_mismatches;
    int tmin; /* the smallest group (P without a team): -r all runs roots 0..tmin-1 */
} bench_state;

/* What one collective's table adds up. */
typedef struct coll_sums {
    double busbw_sum;
    int rows;
    int64_t wrong;
} coll_sums;

static int usage(FILE *out)
{
    fprintf(out,
            "usage: pld bench <collective|all> [options]\n"
            "  collectives: barrier broadcast allgather reduce_scatter allreduce all_to_all\n"
            "               all_to_all_v, or all (every one, in that order)\n"
            "The options and the table are nccl-tests' (all_reduce_perf ...), with one\n"
            "difference: -d is the device list, as everywhere in pld; nccl-tests' -d is\n"
            "--datatype here.\n"
            "  -p, --platform P     a2a3sim (default) | a5sim\n"
            "  -d, --device LIST    devices = ranks, e.g. 0,1 (default) or 0-7\n"
            "      --transport T    thread (default) | process | mpi (under mpirun)\n"
            "  -b, --minbytes SIZE  smallest size (default 8); K/M/G suffixes; a whole\n"
            "                       number of dtype elements (-i too)\n"
            "  -e, --maxbytes SIZE  largest size (default 64M)\n"
            "  -f, --stepfactor F   multiply the size by F (default 2)\n"
            "  -i, --stepbytes N    or add N bytes per step\n"
            "  -n, --iters N        timed calls per size (default 20)\n"
            "  -w, --warmup_iters N untimed calls first (default 5)\n"
            "      --warmup-ms MS   and warm up for at least MS ms (default %d; 0: count only)\n"
            "  -c, --check N        after the timed calls, N more calls with every element\n"
            "                       verified (default 1; 0: no check, #wrong N/A)\n"
            "  -a, --average A      time over ranks: 0 rank 0, 1 mean (default), 2 min, 3 max\n"
            "      --datatype T     fp32 (default) fp16 bf16 int32 int16 int8 uint8 int64\n"
            "                       fp64 (also float half bfloat16 double int), or all\n"
            "                       (--dtype is the same option)\n"
            "  -o, --op OP          sum (default) | prod | max | min | all (reductions)\n"
            "  -r, --root R         broadcast root (default 0), or all (every rank)\n"
            "      --mode M         allgather auto (default: one round when small, else push\n"
            "                       or doubling; with inplace beside it) | push | inplace\n"
            "                       | doubling (recursive doubling): one column group each,\n"
            "                       allreduce auto (default: one round when small, else\n"
            "                       mesh, rs_ag or rabenseifner) | mesh | ring | rs_ag\n"
            "                       | rabenseifner (recursive halving, then doubling),\n"
            "                       broadcast pull (default)\n"
            "                       | binomial (down a binomial tree), all_to_all auto\n"
            "                       (default: one round when small, else push or bruck)\n"
            "                       | push | bruck (Bruck's algorithm: ceil(log2 P) puts)\n"
            "      --team x=K|y=K   run in groups, every group at once in one launch: split\n"
            "                       the ranks 2-D with K per row (pld_team_split_2d); x=K:\n"
            "                       every row of K consecutive ranks is a group, y=K: every\n"
            "                       column (ranks equal mod K). A group of T ranks is\n"
            "                       measured as a world of T: size, busbw (n = T), check\n"
            "                       and cost card per group; --root is a group rank\n"
            "      --csv FILE       also write the rows as CSV (a line per column group)\n"
            "      --vs-mpi         after each row, MPI's own collective on the same buffers\n"
            "                       in the same job, and the time ratio (--transport mpi\n"
            "                       under mpirun; fp32/int dtypes; see bench/compare.sh)\n"
            "size = total bytes of the collective's buffer on one rank (nccl-tests): the\n"
            "gathered output of allgather, the [P,S] input of reduce_scatter and all_to_all,\n"
            "rounded down to a whole number of elements per rank.\n"
            "Column groups: out-of-place and in-place as nccl-tests; a collective pld has\n"
            "in one form only shows N/A in the other (allgather has both; broadcast,\n"
            "reduce_scatter, allreduce work in their window: in-place; all_to_all(_v):\n"
            "out-of-place; barrier: out-of-place).\n"
            "time = one back-to-back loop / iters per rank (us), over ranks as -a says.\n"
            "busbw factors: allreduce 2(P-1)/P, allgather/reduce_scatter/all_to_all\n"
            "(P-1)/P, broadcast 1.\n"
            "%%peak = bytes all ranks copy per call (byte counters, self copies included)\n"
            "/ the slowest rank's time / memcpy bandwidth of min(P, cores) threads on a\n"
            "buffer of that size (page-aligned, separate buffers, best of %d trials;\n"
            "measured again when a row beats it).\n"
            "--team: time = over the ranks of the groups of that size; a short last\n"
            "row (or column) is reported on a '#' line under each row, ending in (T=...).\n"
            "Exit status: 0, 1 if a launch failed or an element was wrong, 2 usage.\n",
            BENCH_WARMUP_MS, BENCH_PEAK_TRIALS);
    return out == stderr ? CLI_EXIT_USAGE : 0;
}

/* --datatype, -o and -r: nccl-tests' "all" on top of the shared parsers.
 * 1 if arg was one of them, 0 if not, -1 after a usage message. */
static int all_option(cli *k, const char *arg, bench_opts *o)
{
    const char *v;
    if (cli_is(k, arg, NULL, "--datatype") || cli_is(k, arg, NULL, "--dtype")) {
        if (!(v = cli_value(k, "--datatype")))
            return -1;
        if (!strcmp(v, "all")) {
            o->dtype_all = 1;
            return 1;
        }
        if (cli_dtype(v, &o->sh.dtype))
            return cli_usage_error(k,
                                   "--datatype %s: not a dtype (fp32 fp16 bf16 int32 int16 int8 "
                                   "uint8 int64 fp64, or all)",
                                   v),
                   -1;
        o->dtype_all = 0;
        o->sh.dtype_given = 1;
    } else if (cli_is(k, arg, "-o", "--op")) {
        if (!(v = cli_value(k, "--op")))
            return -1;
        if (!strcmp(v, "all")) {
            o->op_all = 1;
        } else if (cli_op(v, &o->sh.op)) {
            return cli_usage_error(k, "--op %s: not an op (sum prod max min, or all)", v), -1;
        }
        o->sh.op_given = 1;
    } else if (cli_is(k, arg, "-r", "--root")) {
        if (!(v = cli_value(k, "--root")))
            return -1;
        if (!strcmp(v, "all")) {
            o->root_all = 1;
        } else if (cli_int(v, 0, 1 << 20, &o->sh.root)) {
            return cli_usage_error(k, "--root %s: the root is a rank >= 0, or all", v), -1;
        }
    } else {
        return 0;
    }
    return 1;
}

static int parse(bench_opts *o, int argc, char **argv)
{
    cli k;
    const char *arg, *v;
    cli_init(&k, "bench", argc, argv);
    *o = (bench_opts){.b = 8,
                      .e = (int64_t)64 << 20,
                      .f = 2,
                      .iters = 20,
                      .warmup = 5,
                      .warmup_ms = BENCH_WARMUP_MS,
                      .check = 1,
                      .average = 1,
                      .sh = {.dtype = PLD_FP32, .op = PLD_SUM}};
    while ((arg = cli_next(&k))) {
#define VALUE(opt)                                                                                 \
    if (!(v = cli_value(&k, opt)))                                                                 \
        return CLI_EXIT_USAGE;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return -1;
        int shared = all_option(&k, arg, o);
        if (!shared)
            shared = cli_shared_option(&k, arg, &o->sh);
        if (shared < 0)
            return CLI_EXIT_USAGE;
        if (shared)
            continue;
        if (cli_is(&k, arg, "-b", "--minbytes")) {
            VALUE("-b");
            if (bench_size_parse(v, &o->b))
                return cli_usage_error(&k, "-b %s is not a size (8, 4K, 64M, 1G)", v);
        } else if (cli_is(&k, arg, "-e", "--maxbytes")) {
            VALUE("-e");
            if (bench_size_parse(v, &o->e))
                return cli_usage_error(&k, "-e %s is not a size (8, 4K, 64M, 1G)", v);
        } else if (cli_is(&k, arg, "-f", "--stepfactor")) {
            VALUE("-f");
            if (cli_int(v, 2, 1 << 20, &o->f))
                return cli_usage_error(&k, "-f %s: the step factor is an integer >= 2", v);
        } else if (cli_is(&k, arg, "-i", "--stepbytes")) {
            VALUE("-i");
            if (bench_size_parse(v, &o->inc) || o->inc < 1)
                return cli_usage_error(&k, "-i %s: the step is a size > 0", v);
        } else if (cli_is(&k, arg, "-n", "--iters")) {
            VALUE("-n");
            if (cli_int(v, 1, 1000000000, &o->iters))
                return cli_usage_error(&k, "-n %s: iterations are an integer >= 1", v);
        } else if (cli_is(&k, arg, "-w", "--warmup_iters")) {
            VALUE("-w");
            if (cli_int(v, 0, 1000000000, &o->warmup))
                return cli_usage_error(&k, "-w %s: warmup iterations are an integer >= 0", v);
        } else if (cli_is(&k, arg, NULL, "--warmup-ms")) {
            VALUE("--warmup-ms");
            if (cli_int(v, 0, 3600000, &o->warmup_ms))
                return cli_usage_error(&k, "--warmup-ms %s: milliseconds, an integer >= 0", v);
        } else if (cli_is(&k, arg, "-c", "--check")) {
            VALUE("-c");
            if (cli_int(v, 0, 1000000000, &o->check))
                return cli_usage_error(&k, "-c %s: checked calls, an integer >= 0", v);
        } else if (cli_is(&k, arg, "-a", "--average")) {
            VALUE("-a");
            if (cli_int(v, 0, 3, &o->average))
                return cli_usage_error(&k,
                                       "-a %s: 0 (rank 0), 1 (mean over ranks), 2 (min) or 3 "
                                       "(max)",
                                       v);
        } else if (cli_is(&k, arg, NULL, "--csv")) {
            VALUE("--csv");
            o->csv = v;
        } else if (cli_is(&k, arg, NULL, "--team")) {
            char why[256];
            VALUE("--team");
            if (bench_team_parse(v, &o->team, why, sizeof why))
                return cli_usage_error(&k, "%s", why);
        } else if (cli_is(&k, arg, NULL, "--vs-mpi")) {
            o->vs_mpi = 1;
        } else if (cli_is(&k, arg, NULL, "--inject-error")) {
            o->inject = 1; /* test hook (tests/tools): proves -c 1 counts wrong elements */
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_usage_error(&k, "unknown option '%s'", arg);
        } else if (o->ncoll || o->all) {
            return cli_usage_error(&k, "one collective (or 'all') per run; '%s' is extra", arg);
        } else if (!strcmp(arg, "all")) {
            o->all = 1;
            for (int i = 0; i < BENCH_NCOLL; i++)
                o->coll[o->ncoll++] = (bench_coll)i;
        } else {
            bench_coll c;
            if (bench_coll_parse(arg, &c))
                return cli_usage_error(&k, "unknown collective '%s'", arg);
            o->coll[o->ncoll++] = c;
        }
#undef VALUE
    }
    if (!o->ncoll)
        return cli_usage_error(&k, "which collective? (barrier broadcast allgather "
                                   "reduce_scatter allreduce all_to_all all_to_all_v all)");
    /* with --datatype all a size is rounded down per dtype, as nccl-tests does */
    if (!o->dtype_all && cli_size_check(&k, "-b", o->b, o->sh.dtype))
        return CLI_EXIT_USAGE;
    if (!o->dtype_all && o->inc && cli_size_check(&k, "-i", o->inc, o->sh.dtype))
        return CLI_EXIT_USAGE;
    if (o->b > o->e)
        return cli_usage_error(&k, "-b %lld is larger than -e %lld", (long long)o->b,
                               (long long)o->e);
    if (!o->all) {
        bench_coll c = o->coll[0];
        if (o->sh.mode != BENCH_MODE_DEFAULT && bench_mode_resolve(c, o->sh.mode) == BENCH_NMODE)
            return cli_usage_error(&k, "%s has no mode '%s' (modes: %s)", bench_coll_name(c),
                                   bench_mode_name(o->sh.mode), bench_mode_choices(c));
        if (o->sh.op_given && !bench_coll_reduces(c))
            return cli_usage_error(&k, "--op applies to allreduce and reduce_scatter, not %s",
                                   bench_coll_name(c));
        if (c == BENCH_REDUCE_SCATTER && o->sh.op != PLD_SUM && !o->op_all)
            return cli_usage_error(&k, "reduce_scatter supports --op sum only");
    }
    if (o->sh.mode != BENCH_MODE_DEFAULT) {
        int any = 0;
        for (int i = 0; i < o->ncoll; i++)
            any |= bench_mode_resolve(o->coll[i], o->sh.mode) != BENCH_NMODE;
        if (!any)
            return cli_usage_error(&k, "--mode %s fits none of the collectives",
                                   bench_mode_name(o->sh.mode));
    }
    if (o->team.axis && o->vs_mpi)
        return cli_usage_error(&k,
                               "--vs-mpi runs MPI's collective over the whole world; it does "
                               "not run in groups (--team %s)",
                               o->team.text);
    int red_dtype = o->sh.dtype == PLD_FP32 || o->sh.dtype == PLD_FP16 || o->sh.dtype == PLD_BF16 ||
                    o->sh.dtype == PLD_INT32;
    if (o->vs_mpi && o->dtype_all)
        return cli_usage_error(&k, "--vs-mpi takes one --datatype, not all");
    if (!o->all && !o->dtype_all && bench_coll_reduces(o->coll[0]) && !red_dtype)
        return cli_usage_error(&k, "%s reduces fp32, fp16, bf16 and int32 only, not %s",
                               bench_coll_name(o->coll[0]), pld_dtype_name(o->sh.dtype));
    return 0;
}

/* ---- progress line ------------------------------------------------------ */

static void progress(bench_state *s, const char *coll, int idx, int n, int64_t bytes)
{
    uint64_t now = bench_now_ns();
    if (now - s->start_ns < PROGRESS_AFTER_NS)
        return;
    if (s->progress_tty && now - s->last_progress_ns < 250000000u)
        return;
    s->last_progress_ns = now;
    char sz[32];
    fprintf(stderr, "%s# [%6.1f s] %s: %s (%d/%d)%s", s->progress_tty ? "\r\033[K" : "",
            (double)(now - s->start_ns) / 1e9, coll, bench_size_fmt(sz, sizeof sz, bytes), idx + 1,
            n, s->progress_tty ? "" : "\n");
    fflush(stderr);
    s->progress_shown = 1;
}

static void progress_clear(bench_state *s)
{
    if (s->progress_tty && s->progress_shown)
        fprintf(stderr, "\r\033[K");
    s->progress_shown = 0;
}

/* ---- one collective ----------------------------------------------------- */

/* The dtypes, ops and roots a table runs through: one each, or every one
 * (nccl-tests' "all"; types outermost, then ops, then roots). */
static int dtype_list(const bench_opts *o, pld_dtype *out)
{
    if (!o->dtype_all) {
        out[0] = o->sh.dtype;
        return 1;
    }
    for (int i = 0; i < PLD_DTYPE_COUNT; i++)
        out[i] = (pld_dtype)i;
    return PLD_DTYPE_COUNT;
}

static int op_list(const bench_opts *o, bench_coll c, pld_reduce_op *out)
{
    static const pld_reduce_op every[] = {PLD_SUM, PLD_PROD, PLD_MAX,
                                          PLD_MIN}; /* nccl-tests' order */
    if (!bench_coll_reduces(c) || !o->op_all) {
        out[0] = o->sh.op;
        return 1;
    }
    for (int i = 0; i < 4; i++)
        out[i] = every[i];
    return 4;
}

static int reduces_dtype(pld_dtype t)
{
    return t == PLD_FP32 || t == PLD_FP16 || t == PLD_BF16 || t == PLD_INT32;
}

static void header(bench_state *s, bench_coll c, const bench_mode modes[2])
{
    const bench_opts *o = s->o;
    bench_mode first = modes[0] != BENCH_NMODE ? modes[0] : modes[1];
    char carriers[64] = "";
    if (pld_world_carriers(s->w) > 0)
        snprintf(carriers, sizeof carriers, " (ranks on %d carrier threads, PLD_FIBERS)",
                 pld_world_carriers(s->w));
    printf("#\n# pld bench %s: %s (%s%s%s), transport %s%s, platform %s, P=%d (devices",
           pld_version(), bench_coll_name(c), bench_mode_name(first),
           modes[0] != BENCH_NMODE && modes[1] != BENCH_NMODE ? "/" : "",
           modes[0] != BENCH_NMODE && modes[1] != BENCH_NMODE ? bench_mode_name(modes[1]) : "",
           pld_world_transport(s->w), carriers, pld_world_platform(s->w), s->p);
    for (int r = 0; r < s->p && r < 16; r++)
        printf("%s%d", r ? "," : " ", pld_device_id(s->w, r));
    printf("%s)\n", s->p > 16 ? ",..." : "");
    if (s->team)
        bench_team_describe(stdout, s->w, &o->team, s->team);
    printf("# dtype %s%s%s, iters %lld, warmup %lld calls and %lld ms, check %lld, average %lld "
           "(%s)",
           o->dtype_all ? "all" : pld_dtype_name(o->sh.dtype), bench_coll_reduces(c) ? ", op " : "",
           bench_coll_reduces(c) ? (o->op_all ? "all" : cli_op_name(o->sh.op)) : "",
           (long long)o->iters, (long long)o->warmup, (long long)o->warmup_ms, (long long)o->check,
           (long long)o->average,
           o->average == 0   ? "rank 0"
           : o->average == 2 ? "min"
           : o->average == 3 ? "max"
                             : "mean");
    if (c == BENCH_BROADCAST) {
        if (o->root_all)
            printf(", root all");
        else
            printf(", root %lld", (long long)o->sh.root);
    }
    printf("\n# %s\n", bench_place_note(c));
    const char *rules = NULL;
    int nrules = pld_world_rules(s->w, &rules);
    if (nrules)
        printf("# PLD_RULES %s: %d rule%s decide auto's choices before the cost model (the "
               "listing, --ir, names the rule of each call)\n",
               rules, nrules, nrules == 1 ? "" : "s");
    size_t ll = s->team ? pld_team_ll_bytes(s->team) : pld_world_ll_bytes(s->w);
    bench_shape any = {0};
    uint64_t per_peer;
    int push = c == BENCH_ALLGATHER || c == BENCH_ALL_TO_ALL;
    for (int g = 0; g < 2; g++) {
        if (modes[g] == BENCH_NMODE)
            continue;
        const char *place = g ? "in-place" : "out-of-place";
        if (ll && (!push || bench_ll_explicit()) &&
            bench_card_ll_need(c, modes[g], &any, 1, &per_peer))
            printf("# cost card (%s), up to %zu B per peer: %s\n# cost card (%s), above: %s\n",
                   place, ll, bench_card_formula(c, modes[g], 1), place,
                   bench_card_formula(c, modes[g], 0));
        else
            printf("# cost card (%s): %s\n", place, bench_card_formula(c, modes[g], 0));
    }
    printf("#\n");
    bench_pair_header(stdout);
}

/* The row of a smaller group size, under the row of the largest: the same
 * columns, as a comment line (so a row per size stays the table), and the
 * group size it is for. */
static void other_size_row(const bench_pair *row, const bench_class *cl)
{
    char line[640];
    FILE *f = fmemopen(line, sizeof line, "w");
    if (!f)
        return;
    bench_pair_print(f, row);
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    printf("%s%s  (T=%d: %d group%s)\n", line[0] == ' ' ? "#" : "#  ",
           line[0] == ' ' ? line + 1 : line, cl->t, cl->ngroups, cl->ngroups == 1 ? "" : "s");
}

/* Memcpy peak of `threads` threads on requested size i (measured at
 * start-up for every thread count up to peak_threads). */
static double peak_for(bench_state *s, int threads, int i)
{
    double *v = &s->peak[(size_t)threads * (size_t)s->nsizes + (size_t)i];
    if (*v == 0)
        *v = bench_memcpy_gbs(threads, s->sizes[i] > 0 ? s->sizes[i] : 1);
    return *v;
}

/* The peak again when a row copied faster than it (`gbs`), up to
 * PEAK_REMEASURE more times, the best kept: the peak is a best, and a
 * collective beating it usually means another process held the core while
 * it was measured at start-up. What stays above it is the collective's own
 * (cache reuse, see docs/performance.md). */
#define PEAK_REMEASURE 3
static double peak_at_least(bench_state *s, int threads, int i, double gbs)
{
    double *v = &s->peak[(size_t)threads * (size_t)s->nsizes + (size_t)i];
    peak_for(s, threads, i);
    for (int k = 0; k < PEAK_REMEASURE && *v < gbs; k++) {
        double again = bench_memcpy_gbs(threads, s->sizes[i] > 0 ? s->sizes[i] : 1);
        if (again > *v)
            *v = again;
    }
    return *v;
}

#ifdef PLD_HAVE_MPI
/* The MPI line under a pld row: MPI's time on the same buffers, the ratio,
 * and the same row in the CSV as implementation "mpi". */
static void vs_mpi_row(bench_state *s, bench_coll c, const bench_row *pld_row,
                       const bench_vs_mpi *vs)
{
    if (vs->ns < 0) {
        printf("#   %s: failed (or counts beyond MPI's int)\n", bench_vs_mpi_name(c));
        return;
    }
    bench_row m = *pld_row;
    m.time_us = vs->ns / 1e3;
    m.wrong = -1;
    m.algbw = m.busbw = 0;
    if (vs->ns > 0 && m.bytes > 0) {
        m.algbw = (double)m.bytes / vs->ns;
        m.busbw = m.algbw * bench_busbw_factor(c, s->p);
    }
    printf("#   %-26s %10.2f us   pld/MPI time %.2f%s\n", bench_vs_mpi_name(c), m.time_us,
           vs->ns > 0 ? pld_row->time_us / m.time_us : 0,
           pld_row->time_us <= m.time_us ? "" : "  (MPI faster)");
    if (s->csv)
        bench_csv_row(s->csv, "mpi", bench_coll_name(c), "mpi", "mpi", s->p, &m, 0);
}
#endif

/* The group of one row: row.* of run g (out-of-place or in-place) into
 * the pair, its CSV line, its busbw and wrong elements into the sums. */
static void add_cell(bench_state *s, int g, int k, const bench_row *row, bench_pair *pr,
                     coll_sums *sum)
{
    bench_cell *cell = &pr->cell[g];
    *cell = (bench_cell){.present = 1,
                         .time_us = row->time_us,
                         .algbw = row->algbw,
                         .busbw = row->busbw,
                         .wrong = row->wrong,
                         .peak_pct = row->peak_pct};
    if (!pr->type) { /* the row's first group names the row and gives the counters */
        pr->bytes = row->bytes;
        pr->count = row->count;
        pr->type = row->type;
        pr->redop = row->redop;
        pr->root = row->root;
        pr->memcpy_gbs = row->memcpy_gbs;
        pr->peer_bytes = row->peer_bytes;
        pr->card_bytes = row->card_bytes;
        pr->self_bytes = row->self_bytes;
        pr->card_ok = 1;
    }
    pr->card_ok &= row->card_ok;
    if (!row->card_ok)
        s->card_mismatches++;
    if (row->wrong > 0)
        s->bad_cells++;
    if (k == 0 && row->bytes > 0) { /* nccl-tests averages busbw over both groups */
        sum->busbw_sum += row->busbw;
        sum->rows++;
    }
}

/* One table block: every size of collective c for one dtype, op and root,
 * each size measured once per column group the collective has. */
static void run_combo(bench_state *s, bench_coll c, const bench_mode modes[2], pld_dtype dtype,
                      pld_reduce_op op, int root, coll_sums *sum)
{
    const bench_opts *o = s->o;
    bench_runner *r[2] = {NULL, NULL};
    int first = modes[0] != BENCH_NMODE ? 0 : 1;
    pld_status st = PLD_OK;
    for (int g = 0; g < 2 && st == PLD_OK; g++) {
        if (modes[g] == BENCH_NMODE)
            continue;
        bench_spec spec = {.coll = c,
                           .mode = modes[g],
                           .dtype = dtype,
                           .op = op,
                           .root = root,
                           .iters = o->iters,
                           .warmup = o->warmup,
                           .warmup_ns = (uint64_t)o->warmup_ms * 1000000u,
                           .check = o->check,
                           .inject = o->inject,
                           .team = s->team};
        st = bench_runner_open(s->w, &spec, &r[g]);
    }
    if (st != PLD_OK) {
        fprintf(stderr, "pld bench: %s: %s: %s\n", bench_coll_name(c), pld_status_name(st),
                *bench_runner_error() ? bench_runner_error() : pld_world_error(s->w));
        s->failures++;
        bench_runner_close(r[0]);
        bench_runner_close(r[1]);
        return;
    }
#ifdef PLD_HAVE_MPI
    bench_vs_mpi vs = {.coll = c,
                       .dtype = dtype,
                       .op = op,
                       .root = root,
                       .inplace = modes[first] == BENCH_MODE_INPLACE,
                       .iters = o->iters,
                       .warmup = o->warmup,
                       .warmup_ns = (uint64_t)o->warmup_ms * 1000000u};
    if (o->vs_mpi)
        bench_runner_after(r[first], bench_vs_mpi_after, &vs);
#endif
    size_t esz = pld_dtype_size(dtype);
    int64_t last = -1;
    int nsizes = c == BENCH_BARRIER ? 1 : s->nsizes;
    for (int i = 0; i < nsizes; i++) {
        bench_shape sh; /* of the largest groups (the world without --team) */
        bench_shape_make(c, s->tmax, esz, s->sizes[i], &sh);
        if (sh.bytes == last)
            continue; /* rounding mapped two requested sizes to one shape */
        last = sh.bytes;
        progress(s, bench_coll_name(c), i, nsizes, sh.bytes);
        bench_result res[2];
        for (int g = 0; g < 2 && st == PLD_OK; g++)
            if (r[g])
                st = bench_runner_size(r[g], s->sizes[i], &res[g]);
        if (st != PLD_OK) {
            progress_clear(s);
            fflush(stdout);
            fprintf(stderr, "pld bench: %s, %lld bytes: %s: %s\n", bench_coll_name(c),
                    (long long)sh.bytes, pld_status_name(st),
                    *bench_runner_error() ? bench_runner_error() : pld_world_error(s->w));
            s->failures++;
            break;
        }
        progress_clear(s);
        bench_row first_row = {0};
        for (int k = 0; k < res[first].nclass; k++) { /* the world, or each size of group */
            const bench_class *cl = &res[first].cls[k];
            bench_pair pr = {.type = NULL};
            for (int g = 0; g < 2; g++) {
                if (!r[g])
                    continue;
                bench_row_spec rs = {.coll = c,
                                     .mode = modes[g],
                                     .dtype = dtype,
                                     .op = op,
                                     .root = root,
                                     .p = s->p,
                                     .ub_bytes = s->lim.ub_bytes,
                                     .ll_bytes = s->team ? pld_team_ll_bytes(s->team)
                                                         : pld_world_ll_bytes(s->w),
                                     .average = (int)o->average};
                pld_world_tune(s->w, &rs.tune);
                const bench_class *gc = &res[g].cls[k];
                bench_row row;
                uint64_t moved;
                int copiers; /* ranks that copy at all: the threads the peak compares with */
                bench_row_make(&rs, &res[g], k, &row, &moved, &copiers);
                /* %peak from the slowest rank: the bytes of every rank have moved
                 * only when the last rank is done, whatever -a shows */
                if (row.bytes > 0 && gc->time_ns > 0) {
                    int threads = copiers < s->peak_threads ? copiers : s->peak_threads;
                    double gbs = (double)moved / (double)res[g].ncalls / gc->time_ns;
                    row.memcpy_gbs = peak_at_least(s, threads > 0 ? threads : 1, i, gbs);
                    row.peak_pct = row.memcpy_gbs > 0 ? 100.0 * gbs / row.memcpy_gbs : 0;
                }
                if (s->team) {
                    row.team = o->team.text;
                    row.groups = gc->ngroups;
                }
                row.place = g == BENCH_IN_PLACE ? "in" : "out";
                if (s->csv)
                    bench_csv_row(s->csv, "pld", bench_coll_name(c), bench_mode_name(modes[g]),
                                  pld_world_transport(s->w), s->team ? gc->t : s->p, &row, 1);
                add_cell(s, g, k, &row, &pr, sum);
                if (k == 0 && g == first)
                    first_row = row;
            }
            if (k == 0)
                bench_pair_print(stdout, &pr);
            else
                other_size_row(&pr, cl);
        }
#ifdef PLD_HAVE_MPI
        if (o->vs_mpi)
            vs_mpi_row(s, c, &first_row, &vs);
#else
        (void)first_row;
#endif
        fflush(stdout);
        for (int g = 0; g < 2; g++)
            if (r[g] && res[g].wrong > 0)
                sum->wrong += res[g].wrong;
    }
    progress_clear(s);
    bench_runner_close(r[0]);
    bench_runner_close(r[1]);
}

static void run_coll(bench_state *s, bench_coll c)
{
    const bench_opts *o = s->o;
    bench_mode modes[2];
    bench_places(c, o->sh.mode, modes);
    pld_dtype dtypes[PLD_DTYPE_COUNT];
    pld_reduce_op ops[4];
    int ntypes = dtype_list(o, dtypes), nops = op_list(o, c, ops);
    int nroots = c == BENCH_BROADCAST && o->root_all ? s->tmin : 1;
    if (bench_coll_reduces(c) && !o->dtype_all && !reduces_dtype(o->sh.dtype)) {
        printf("#\n# %s: skipped (reductions are fp32, fp16, bf16 and int32 only)\n",
               bench_coll_name(c));
        return;
    }
    if (c == BENCH_REDUCE_SCATTER && !o->op_all && o->sh.op != PLD_SUM) {
        printf("#\n# reduce_scatter: skipped (Sum only)\n");
        return;
    }
    header(s, c, modes);
    coll_sums sum = {0};
    for (int t = 0; t < ntypes; t++) {
        if (bench_coll_reduces(c) && !reduces_dtype(dtypes[t])) {
            printf("# %s: %s skipped (reductions are fp32, fp16, bf16 and int32 only)\n",
                   bench_coll_name(c), pld_dtype_name(dtypes[t]));
            continue;
        }
        for (int q = 0; q < nops; q++) {
            if (c == BENCH_REDUCE_SCATTER && ops[q] != PLD_SUM) {
                if (t == 0 || !o->dtype_all)
                    printf("# reduce_scatter: op %s skipped (sum only)\n", cli_op_name(ops[q]));
                continue;
            }
            for (int root = 0; root < nroots; root++)
                run_combo(s, c, modes, dtypes[t], ops[q], o->root_all ? root : (int)o->sh.root,
                          &sum);
        }
    }
    if (o->check)
        printf("# %s: #wrong %lld%s\n", bench_coll_name(c), (long long)sum.wrong,
               sum.wrong ? "  FAILED" : "");
    if (c != BENCH_BARRIER)
        printf("# avg busbw (%s): %.3f GB/s\n", bench_coll_name(c),
               sum.rows ? sum.busbw_sum / sum.rows : 0);
    s->wrong += sum.wrong;
    s->busbw_sum += sum.busbw_sum;
    s->busbw_n += sum.rows;
}

static int vs_mpi_unavailable(const bench_opts *o)
{
    (void)o;
    fprintf(stderr,
            "pld bench: --vs-mpi times MPI's own collectives (MPI_Allgather, MPI_Alltoall, ...)\n"
            "  on the same buffers in the same job, so it needs --transport mpi under mpirun,\n"
            "  e.g. mpirun -n 4 pld bench allgather --transport mpi --vs-mpi\n"
            "  %s"
            "  To compare the thread and process transports with MPI, run bench/compare.sh.\n",
#ifdef PLD_HAVE_MPI
            ""
#else
            "This build of pld has no mpi transport (MPI was not found at build time).\n"
#endif
    );
    return CLI_EXIT_USAGE;
}

int bench_main(int argc, char **argv)
{
    /* the MoE forms: a sweep of their own (tools/moe/moe_bench.c) */
    if (argc > 1 && !strcmp(argv[1], "moe"))
        return moe_bench_main(argc, argv);
    bench_opts o;
    int rc = parse(&o, argc, argv);
    if (rc < 0)
        return usage(stdout);
    if (rc)
        return rc;
#ifdef PLD_HAVE_MPI
    if (o.vs_mpi) {
        char why[160];
        if (!o.sh.cfg.transport || strcmp(o.sh.cfg.transport, "mpi"))
            return vs_mpi_unavailable(&o);
        if (bench_vs_mpi_check(o.sh.dtype, why, sizeof why)) {
            fprintf(stderr, "pld bench: --vs-mpi: %s\n", why);
            return CLI_EXIT_USAGE;
        }
    }
#else
    if (o.vs_mpi)
        return vs_mpi_unavailable(&o);
#endif

    static bench_state s;
    memset(&s, 0, sizeof s);
    s.o = &o;
    s.start_ns = bench_now_ns();
    s.progress_tty = isatty(2);
    pld_status st = pld_world_init(&s.w, &o.sh.cfg);
    if (st != PLD_OK)
        return cli_world_error("bench", st);
    s.p = pld_world_size(s.w);
    pld_world_limits(s.w, &s.lim);
    bench_card_rules(s.w);
    /* under mpi every process runs this; the root process prints (the
     * others run the same launches, and agree on every status) */
    if (!pld_is_root_process(s.w)) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) {
            pld_world_finalize(s.w);
            return 1;
        }
        s.progress_tty = 0;
        o.csv = NULL;
    }
    int tmin = s.p;
    s.tmax = s.p;
    if (o.team.axis) {
        char why[320];
        st = bench_team_make(s.w, &o.team, &s.team, why, sizeof why);
        if (st != PLD_OK) {
            fprintf(stderr, "pld bench: %s\n%s", why,
                    st == PLD_ERR_ARG ? "try 'pld bench --help'\n" : "");
            pld_world_finalize(s.w);
            return st == PLD_ERR_ARG ? CLI_EXIT_USAGE : 1;
        }
        bench_team_extent(s.w, s.team, &tmin, &s.tmax);
    }
    s.tmin = tmin;
    if (o.sh.root >= tmin && !o.root_all) {
        for (int i = 0; i < o.ncoll; i++)
            if (o.coll[i] == BENCH_BROADCAST) {
                if (s.team)
                    fprintf(stderr,
                            "pld bench: --root %lld is not a rank of every group of --team %s "
                            "(the smallest has T=%d; the root is a group rank)\n",
                            (long long)o.sh.root, o.team.text, tmin);
                else
                    fprintf(stderr, "pld bench: --root %lld is not a rank of P=%d\n",
                            (long long)o.sh.root, s.p);
                fprintf(stderr, "try 'pld bench --help'\n");
                pld_world_finalize(s.w);
                return CLI_EXIT_USAGE;
            }
    }
    s.nsizes = bench_sweep(o.b, o.e, (int)o.f, o.inc, s.sizes, MAX_SIZES);
    if (o.csv) {
        s.csv = fopen(o.csv, "w");
        if (!s.csv) {
            perror(o.csv);
            pld_world_finalize(s.w);
            return 1;
        }
        bench_csv_header(s.csv);
    }

    /* memcpy peak per requested size, before any collective runs */
    int cores = bench_online_cores();
    s.peak_threads = s.p < cores ? s.p : cores;
    s.peak = calloc((size_t)(s.peak_threads + 1) * (size_t)s.nsizes, sizeof *s.peak);
    if (!s.peak) {
        pld_world_finalize(s.w);
        return 1;
    }
    int need_peak = 0;
    for (int i = 0; i < o.ncoll; i++)
        need_peak |= o.coll[i] != BENCH_BARRIER;
    if (need_peak) {
        progress(&s, "memcpy peak", 0, 1, s.sizes[s.nsizes - 1]);
        st = bench_peak_measure(s.w, s.peak_threads, s.sizes, s.nsizes, s.peak);
        if (st != PLD_OK) {
            fprintf(stderr, "pld bench: memcpy peak: %s: %s\n", pld_status_name(st),
                    pld_world_error(s.w));
            free(s.peak);
            pld_world_finalize(s.w);
            return 1;
        }
    }
    progress_clear(&s);
    printf("# pld bench: %d ranks on %d online cores; memcpy peak: min(P, cores) = %d "
           "concurrent thread%s (fewer when fewer ranks copy), one buffer of the row's size "
           "each, best of %d\n",
           s.p, cores, s.peak_threads, s.peak_threads > 1 ? "s" : "", BENCH_PEAK_TRIALS);
    if (need_peak) {
        printf("# memcpy peak (GB/s):");
        for (int i = 0; i < s.nsizes; i++) {
            char sz[32];
            printf("%s %s %.1f", i ? "," : "", bench_size_fmt(sz, sizeof sz, s.sizes[i]),
                   peak_for(&s, s.peak_threads, i));
        }
        printf("\n");
    }

    for (int i = 0; i < o.ncoll; i++)
        run_coll(&s, o.coll[i]);

    printf("#\n# total #wrong: %s%lld, cost card = byte counters: %s\n",
           o.check ? "" : "(not checked) ", (long long)s.wrong,
           s.card_mismatches ? "NO (rows marked !)" : "yes, every rank and size");
    /* nccl-tests' footer, to the character: how many measurements had a
     * wrong element, and busbw averaged over every measurement */
    printf("# %-20s : %d %s\n", "Out of bounds values", s.bad_cells, s.bad_cells ? "FAILED" : "OK");
    printf("# %-20s : %g %s\n", "Avg bus bandwidth", s.busbw_n ? s.busbw_sum / s.busbw_n : 0.0, "");
    printf("#\n");
    if (s.card_mismatches)
        fprintf(stderr,
                "pld bench: %d row(s) where the byte counters differ from the cost card "
                "(marked !)\n",
                s.card_mismatches);
    if (s.csv)
        fclose(s.csv);
    free(s.peak);
    pld_world_finalize(s.w);
    return s.failures || s.wrong ? 1 : 0;
}
