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

int moe_cli_open(const char *cmd, const cli_shared *sh, moe_shape *m, moe_session *s)
{
    pld_config cfg = sh->cfg;
    pld_status st = pld_world_init(&s->w, &cfg);
    if (st != PLD_OK)
        return cli_world_error(cmd, st);
    m->p = pld_world_size(s->w);
    m->dtype = sh->dtype;
    if (m->k > m->p * m->e) {
        fprintf(stderr, "pld %s: --topk %d is more than the P*E = %d experts\n", cmd, m->k,
                m->p * m->e);
        pld_world_finalize(s->w);
        return CLI_EXIT_USAGE;
    }
    if (moe_route(m, &s->r)) {
        fprintf(stderr, "pld %s: out of memory for the routing\n", cmd);
        pld_world_finalize(s->w);
        return 1;
    }
    s->out = pld_is_root_process(s->w) ? stdout : fopen("/dev/null", "w");
    if (!s->out) {
        moe_routing_free(&s->r);
        pld_world_finalize(s->w);
        return 1;
    }
    return 0;
}

void moe_cli_close(moe_session *s)
{
    if (s->out != stdout)
        fclose(s->out);
    moe_routing_free(&s->r);
    pld_world_finalize(s->w);
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
