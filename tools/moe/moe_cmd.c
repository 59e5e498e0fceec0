/* SPDX-License-Identifier: Apache-2.0 */
/* `pld moe`: what a routed MoE layer's dispatch costs in each of three
 * forms (whole blocks through all_to_all_v, the indexed URMA dispatch,
 * packed counted rows), predicted from the cost model; --run executes
 * each on the same routing and prints what it measured beside the
 * prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "moe_cli.h"
#include "moe_model.h"
#include "moe_run.h"

typedef struct moe_opts {
    cli_shared sh;
    moe_shape m;
    moe_timing tm;
    int run;
} moe_opts;

static int usage(FILE *out)
{
    fprintf(out,
            "usage: pld moe [options]\n"
            "  -d, --device LIST   devices = ranks = expert-parallel degree P (default 0,1)\n"
            "  -p, --platform P    a2a3sim (default) | a5sim (the indexed form runs there only)\n"
            "  -H, --hidden H      hidden size, elements per row (default 1024)\n"
            "      --dtype T       payload dtype (default bf16)\n"
            "      --run           run each form on this routing (any transport; mpi under "
            "mpirun)\n"
            "%s"
            "      --transport T   thread (default) | process | mpi, for --run\n"
            "Per form: rounds, bytes to peers (busiest rank and all ranks), padding (bytes\n"
            "moved beyond the counted rows), the a5sim URMA queue use of the remote sends,\n"
            "and the cost model's predicted time (pld tune); --run adds the measured time\n"
            "and bytes. Exit status: 0, 1 when a run failed or its counters differ from\n"
            "the card, 2 usage.\n",
            moe_cli_usage);
    return out == stderr ? CLI_EXIT_USAGE : 0;
}

static int parse(moe_opts *o, int argc, char **argv)
{
    cli k;
    const char *arg;
    int64_t x;
    cli_init(&k, "moe", argc, argv);
    *o = (moe_opts){.sh = {.dtype = PLD_BF16, .op = PLD_SUM},
                    .m = {.e = 2, .k = 2, .t = 64, .h = 1024, .seed = 1},
                    .tm = {.iters = 20, .warmup = 5, .repeats = 5}};
    while ((arg = cli_next(&k))) {
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return -1;
        int shared = cli_shared_option(&k, arg, &o->sh);
        if (shared < 0)
            return CLI_EXIT_USAGE;
        if (shared)
            continue;
        int rc = 0;
        if (moe_cli_option(&k, arg, &o->m, &o->tm, &rc)) {
            /* a layer or timing option */
        } else if (cli_is(&k, arg, "-H", "--hidden")) {
            if (!(rc = moe_cli_int(&k, "--hidden", 1, 1 << 24, &x)))
                o->m.h = x;
        } else if (cli_is(&k, arg, NULL, "--run")) {
            o->run = 1;
        } else {
            return cli_usage_error(&k, "unexpected argument '%s'", arg);
        }
        if (rc)
            return rc;
    }
    if (o->sh.mode != BENCH_MODE_DEFAULT)
        return cli_usage_error(&k, "--mode: pld moe compares every form; it takes none");
    return 0;
}

/* Where the report goes (moe_session.out). */
static FILE *out;

/* Largest and sum over ranks of one card field. */
typedef struct span {
    uint64_t max, sum;
} span;

static void add(span *s, uint64_t v)
{
    s->max = v > s->max ? v : s->max;
    s->sum += v;
}

static void describe(const moe_routing *r)
{
    const moe_shape *m = &r->sh;
    int p = m->p, g = p * m->e;
    int64_t hot = 0, cold = INT64_MAX;
    for (int x = 0; x < g; x++) {
        int64_t n = 0;
        for (int s = 0; s < p; s++)
            n += r->cnt[(size_t)s * (size_t)g + (size_t)x];
        hot = n > hot ? n : hot;
        cold = n < cold ? n : cold;
    }
    fprintf(out, "# routing: %s (seed %llu): rows per expert %lld .. %lld (uniform: %.1f)\n",
            m->zipf > 0 ? "zipf" : "uniform", (unsigned long long)m->seed, (long long)cold,
            (long long)hot, (double)p * (double)m->t * m->k / g);
    if (m->zipf > 0)
        fprintf(out, "# zipf exponent %.3g\n", m->zipf);
    fprintf(out,
            "# capacities: blocks %lld rows per destination, indexed %lld slots per source "
            "(min(k,E)*T); packed M = T = %lld rows per (destination, expert)\n",
            (long long)moe_block_rows(m), (long long)moe_block_rows(m), (long long)m->t);
}

static int print_form(const moe_routing *r, int form, const pld_tune *tune, int urma,
                      const moe_measured *ms)
{
    int p = r->sh.p, bad = 0;
    span to = {0}, pad = {0};
    moe_urma u = {0};
    uint64_t xfers = 0;
    int rounds = 0;
    for (int q = 0; q < p; q++) {
        moe_card k;
        moe_card_make(r, form, q, &k);
        add(&to, k.to_peers);
        add(&pad, k.padding);
        u.sqes += k.urma.sqes, u.wqebbs += k.urma.wqebbs, u.nops += k.urma.nops;
        u.doorbells += k.urma.doorbells;
        rounds = k.rounds;
        xfers = k.transfers > xfers ? k.transfers : xfers;
        if (ms && ms->st == PLD_OK && !moe_card_matches(&k, &ms->counters[q], form, urma))
            bad = 1;
    }
    double pred = moe_predict_us(r, form, tune);
    fprintf(out, " %-8s %6d %14llu %14llu %14llu %14llu %7llu %7llu %7llu %5llu %10llu %11.1f",
            moe_form_name(form), rounds, (unsigned long long)to.max, (unsigned long long)to.sum,
            (unsigned long long)pad.max, (unsigned long long)pad.sum, (unsigned long long)u.sqes,
            (unsigned long long)u.wqebbs, (unsigned long long)u.nops,
            (unsigned long long)u.doorbells, (unsigned long long)xfers, pred);
    if (ms) {
        if (ms->st != PLD_OK) {
            fprintf(out, "   not run: %s: %s", pld_status_name(ms->st), ms->why);
        } else {
            span mto = {0};
            for (int q = 0; q < p; q++)
                add(&mto, ms->counters[q].bytes_to_peers);
            fprintf(out, " %11.1f %9.1f-%-9.1f %6.2f %14llu %5s %5d", ms->us, ms->us_min,
                    ms->us_max, pred > 0 ? ms->us / pred : 0, (unsigned long long)mto.sum,
                    bad ? "NO" : "yes", ms->wrong);
        }
    }
    fprintf(out, "\n");
    return bad || (ms && ms->st == PLD_OK && ms->wrong);
}

int moe_main(int argc, char **argv)
{
    moe_opts o;
    int rc = parse(&o, argc, argv);
    if (rc < 0)
        return usage(stdout);
    if (rc)
        return rc;
    moe_session s;
    if ((rc = moe_cli_open("moe", &o.sh, &o.m, &s)))
        return rc;
    pld_world *w = s.w;
    const moe_routing *r = &s.r;
    out = s.out;
    int urma = !strcmp(pld_world_platform(w), "a5sim");
    pld_tune tune;
    pld_world_tune(w, &tune);
    size_t row = (size_t)o.m.h * pld_dtype_size(o.m.dtype);
    fprintf(out,
            "# pld moe: P=%d x E=%d experts, top-%d, T=%lld tokens per rank, H=%lld %s (%zu B "
            "rows), platform %s\n",
            o.m.p, o.m.e, o.m.k, (long long)o.m.t, (long long)o.m.h, pld_dtype_name(o.m.dtype), row,
            pld_world_platform(w));
    describe(r);
    fprintf(out, "# bytes: to peers, busiest rank and all ranks; padding = bytes moved beyond the "
                 "counted rows; URMA: the remote sends as a5sim queues them (all ranks; blocks: as "
                 "if each block were one send); xfers: puts and gets of the busiest rank\n");
    fprintf(out, "#%-8s %6s %14s %14s %14s %14s %7s %7s %7s %5s %10s %11s", "form", "rounds",
            "to_peers_max", "to_peers_all", "padding_max", "padding_all", "SQEs", "WQEBBs", "NOPs",
            "bells", "xfers_max", "predict_us");
    if (o.run)
        fprintf(out, " %11s %19s %6s %14s %5s %5s", "measured_us", "min-max", "ratio",
                "to_peers_all", "card", "wrong");
    fprintf(out, "\n");
    int status = 0;
    for (int f = 0; f < MOE_NFORMS; f++) {
        moe_measured ms;
        if (o.run)
            moe_run(w, r, f, o.tm.iters, o.tm.warmup, o.tm.repeats, &ms);
        status |= print_form(r, f, &tune, urma, o.run ? &ms : NULL);
        if (o.run) {
            status |= moe_run_failed(f, &ms);
            free(ms.counters);
        }
    }
    moe_cli_close(&s);
    return status;
}
