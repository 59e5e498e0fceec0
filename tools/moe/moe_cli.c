/* SPDX-License-Identifier: Apache-2.0 */
/* The shared options of `pld moe` and `pld bench moe` (see moe_cli.h). */
#include "moe_cli.h"

#include <stdio.h>
#include <stdlib.h>

const char moe_cli_usage[] =
    "  -E, --experts N     local experts per rank (default 2)\n"
    "  -k, --topk K        experts per token, distinct (default 2; at most P*E)\n"
    "  -t, --tokens T      tokens per rank (default 64)\n"
    "      --zipf S        expert popularity ~ 1/rank^S over a seeded order of the\n"
    "                      experts (default 0: uniform routing)\n"
    "      --seed N        routing seed (default 1)\n"
    "  -n, --iters N       timed calls per launch (default 20)\n"
    "  -w, --warmup N      untimed calls first (default 5)\n"
    "      --repeats R     timed launches; the median is printed (default 5)\n";

int moe_cli_int(cli *k, const char *opt, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = cli_value(k, opt);
    if (!v)
        return CLI_EXIT_USAGE;
    if (cli_int(v, lo, hi, out))
        return cli_usage_error(k, "%s %s: want a whole number in [%lld, %lld]", opt, v,
                               (long long)lo, (long long)hi);
    return 0;
}

int moe_cli_world(const char *cmd, const cli_shared *sh, moe_shape *m, pld_world **w,
                  moe_routing *r)
{
    pld_config cfg = sh->cfg;
    pld_status st = pld_world_init(w, &cfg);
    if (st != PLD_OK)
        return cli_world_error(cmd, st);
    m->p = pld_world_size(*w);
    m->dtype = sh->dtype;
    int rc = 0;
    if (m->k > m->p * m->e) {
        fprintf(stderr, "pld %s: --topk %d is more than the P*E = %d experts\n", cmd, m->k,
                m->p * m->e);
        rc = CLI_EXIT_USAGE;
    } else if (moe_route(m, r)) {
        fprintf(stderr, "pld %s: out of memory for the routing\n", cmd);
        rc = 1;
    }
    if (rc)
        pld_world_finalize(*w);
    return rc;
}

int moe_cli_option(cli *k, const char *arg, moe_shape *m, moe_timing *t, int *rc)
{
    int64_t x = 0;
    *rc = 0;
    if (cli_is(k, arg, "-E", "--experts")) {
        if (!(*rc = moe_cli_int(k, "--experts", 1, 4096, &x)))
            m->e = (int)x;
    } else if (cli_is(k, arg, "-k", "--topk")) {
        if (!(*rc = moe_cli_int(k, "--topk", 1, 4096, &x)))
            m->k = (int)x;
    } else if (cli_is(k, arg, "-t", "--tokens")) {
        if (!(*rc = moe_cli_int(k, "--tokens", 1, 1 << 24, &x)))
            m->t = x;
    } else if (cli_is(k, arg, NULL, "--seed")) {
        if (!(*rc = moe_cli_int(k, "--seed", 0, INT64_MAX, &x)))
            m->seed = (uint64_t)x;
    } else if (cli_is(k, arg, NULL, "--zipf")) {
        const char *v = cli_value(k, "--zipf");
        char *end = NULL;
        if (!v) {
            *rc = CLI_EXIT_USAGE;
            return 1;
        }
        m->zipf = strtod(v, &end);
        if (end == v || *end || m->zipf < 0 || m->zipf > 16)
            *rc = cli_usage_error(k, "--zipf %s: want an exponent in [0, 16]", v);
    } else if (cli_is(k, arg, "-n", "--iters")) {
        if (!(*rc = moe_cli_int(k, "--iters", 1, 1000000, &x)))
            t->iters = (int)x;
    } else if (cli_is(k, arg, "-w", "--warmup")) {
        if (!(*rc = moe_cli_int(k, "--warmup", 0, 1000000, &x)))
            t->warmup = (int)x;
    } else if (cli_is(k, arg, NULL, "--repeats")) {
        if (!(*rc = moe_cli_int(k, "--repeats", 1, 1000, &x)))
            t->repeats = (int)x;
    } else {
        return 0;
    }
    return 1;
}
