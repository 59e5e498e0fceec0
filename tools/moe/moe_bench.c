/* SPDX-License-Identifier: Apache-2.0 */
/* `pld bench moe`: the MoE dispatch forms swept over row sizes on one
 * routing, in the style of the other `pld bench` tables. The size of a row
 * of the table is the bytes of routed rows per rank, T x k x H x elt; the
 * hidden size H follows from it. Each form is timed as `pld moe --run`
 * times it (median launch, slowest rank) and its counters are checked
 * against its card. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "moe_cli.h"
#include "moe_model.h"
#include "moe_run.h"
#include "sweep.h"

typedef struct mb_opts {
    cli_shared sh;
    moe_shape m;
    moe_timing tm;
    int64_t min, max, factor;
    int forms; /* bit per form */
} mb_opts;

static int usage(FILE *out)
{
    fprintf(out,
            "usage: pld bench moe [options]\n"
            "  -d, --device LIST   devices = ranks = expert-parallel degree P (default 0,1)\n"
            "  -p, --platform P    a2a3sim (default) | a5sim (the indexed form runs there only)\n"
            "  -b, --minbytes N    smallest size: routed bytes per rank, T*k*H*elt (default 64K)\n"
            "  -e, --maxbytes N    largest size (default 1M)\n"
            "  -f, --stepfactor F  size factor between rows (default 4)\n"
            "      --dtype T       payload dtype (default fp32)\n"
            "      --mode M        blocks | indexed | packed | all (default all)\n"
            "%s"
            "      --transport T   thread (default) | process | mpi (under mpirun)\n"
            "Per size and form: H, the time per call, algbw (size / time), the bytes to\n"
            "peers and the padding over all ranks, and whether every rank's counters equal\n"
            "the form's card. Exit status: 0, 1 when a form failed or a card differs, 2 usage.\n",
            moe_cli_usage);
    return out == stderr ? CLI_EXIT_USAGE : 0;
}

static int parse_mode(const char *v, int *forms)
{
    if (!strcmp(v, "all")) {
        *forms = (1 << MOE_NFORMS) - 1;
        return 0;
    }
    for (int f = 0; f < MOE_NFORMS; f++)
        if (!strcmp(v, moe_form_name(f))) {
            *forms = 1 << f;
            return 0;
        }
    return -1;
}

static int parse(mb_opts *o, int argc, char **argv)
{
    cli k;
    const char *arg, *v;
    cli_init(&k, "bench", argc, argv);
    *o = (mb_opts){.sh = {.dtype = PLD_FP32, .op = PLD_SUM},
                   .m = {.e = 2, .k = 2, .t = 64, .h = 1, .seed = 1},
                   .tm = {.iters = 20, .warmup = 5, .repeats = 5},
                   .min = 64 * 1024,
                   .max = 1024 * 1024,
                   .factor = 4,
                   .forms = (1 << MOE_NFORMS) - 1};
    while ((arg = cli_next(&k))) {
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return -1;
        int rc = 0;
        if (cli_is(&k, arg, NULL, "--mode")) {
            if (!(v = cli_value(&k, "--mode")))
                return CLI_EXIT_USAGE;
            if (parse_mode(v, &o->forms))
                return cli_usage_error(&k,
                                       "--mode %s: the MoE forms are blocks, indexed, "
                                       "packed or all",
                                       v);
            continue;
        }
        int shared = cli_shared_option(&k, arg, &o->sh);
        if (shared < 0)
            return CLI_EXIT_USAGE;
        if (shared)
            continue;
        if (moe_cli_option(&k, arg, &o->m, &o->tm, &rc)) {
            /* a layer or timing option */
        } else if (cli_is(&k, arg, "-b", "--minbytes") || cli_is(&k, arg, "-e", "--maxbytes")) {
            int64_t *dst = arg[1] == 'b' || !strncmp(arg, "--min", 5) ? &o->min : &o->max;
            if (!(v = cli_value(&k, "a size")))
                return CLI_EXIT_USAGE;
            if (bench_size_parse(v, dst) || *dst < 1)
                return cli_usage_error(&k, "%s %s is not a size (64K, 1M)", arg, v);
        } else if (cli_is(&k, arg, "-f", "--stepfactor")) {
            rc = moe_cli_int(&k, "--stepfactor", 2, 1024, &o->factor);
        } else if (!strcmp(arg, "moe") && k.i == 2) {
            /* the collective's own name */
        } else {
            return cli_usage_error(&k, "unexpected argument '%s'", arg);
        }
        if (rc)
            return rc;
    }
    if (o->min > o->max)
        return cli_usage_error(&k, "-b %lld is larger than -e %lld", (long long)o->min,
                               (long long)o->max);
    return 0;
}

int moe_bench_main(int argc, char **argv)
{
    mb_opts o;
    int rc = parse(&o, argc, argv);
    if (rc < 0)
        return usage(stdout);
    if (rc)
        return rc;
    moe_session ses;
    if ((rc = moe_cli_open("bench", &o.sh, &o.m, &ses)))
        return rc;
    pld_world *w = ses.w;
    moe_routing *r = &ses.r;
    FILE *out = ses.out;
    int urma = !strcmp(pld_world_platform(w), "a5sim");
    int status = 0;
    size_t elt = pld_dtype_size(o.m.dtype);
    fprintf(out,
            "# pld bench moe: P=%d x E=%d experts, top-%d, T=%lld tokens per rank, %s "
            "routing (seed %llu), %s, platform %s, transport %s\n",
            o.m.p, o.m.e, o.m.k, (long long)o.m.t, o.m.zipf > 0 ? "zipf" : "uniform",
            (unsigned long long)o.m.seed, pld_dtype_name(o.m.dtype), pld_world_platform(w),
            pld_world_transport(w));
    if (o.m.zipf > 0)
        fprintf(out, "# zipf exponent %.3g\n", o.m.zipf);
    fprintf(out,
            "# size: routed bytes per rank (T x k x H x elt); time: median of %d launches "
            "of %d calls, slowest rank\n",
            o.tm.repeats, o.tm.iters);
    fprintf(out, "#%11s %7s %-8s %12s %11s %14s %14s %5s %6s\n", "size", "H", "form", "time_us",
            "algbw_GB/s", "to_peers_all", "padding_all", "card", "#wrong");
    for (int64_t size = o.min; size <= o.max; size *= o.factor) {
        int64_t h = size / (o.m.t * o.m.k * (int64_t)elt);
        if (h < 1)
            h = 1;
        r->sh.h = h;
        int64_t bytes = o.m.t * o.m.k * h * (int64_t)elt;
        for (int f = 0; f < MOE_NFORMS; f++) {
            if (!(o.forms & (1 << f)))
                continue;
            moe_measured ms;
            moe_run(w, r, f, o.tm.iters, o.tm.warmup, o.tm.repeats, &ms);
            uint64_t to = 0, pad = 0;
            int card = 1;
            for (int q = 0; q < o.m.p; q++) {
                moe_card c;
                moe_card_make(r, f, q, &c);
                pad += c.padding;
                to += ms.st == PLD_OK ? ms.counters[q].bytes_to_peers : 0;
                if (ms.st == PLD_OK && !moe_card_matches(&c, &ms.counters[q], f, urma))
                    card = 0;
            }
            if (ms.st != PLD_OK) {
                fprintf(out, " %11lld %7lld %-8s   not run: %s: %s\n", (long long)bytes,
                        (long long)h, moe_form_name(f), pld_status_name(ms.st), ms.why);
                status |= moe_run_failed(f, &ms);
            } else {
                fprintf(out, " %11lld %7lld %-8s %12.2f %11.3f %14llu %14llu %5s %6d\n",
                        (long long)bytes, (long long)h, moe_form_name(f), ms.us,
                        ms.us > 0 ? (double)bytes / ms.us / 1e3 : 0, (unsigned long long)to,
                        (unsigned long long)pad, card ? "yes" : "NO", ms.wrong);
                status |= !card || ms.wrong;
            }
            free(ms.counters);
        }
        if (size > o.max / o.factor)
            break;
    }
    moe_cli_close(&ses);
    return status;
}
