/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line helpers: see cli.h. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_init(cli *k, const char *cmd, int argc, char **argv)
{
    k->argc = argc;
    k->argv = argv;
    k->i = 1;
    k->cmd = cmd;
    k->pending = NULL;
}

const char *cli_next(cli *k)
{
    k->pending = NULL;
    return k->i < k->argc ? k->argv[k->i++] : NULL;
}

int cli_is(cli *k, const char *arg, const char *s, const char *l)
{
    size_t n;
    if (l && !strncmp(arg, l, n = strlen(l)) && (arg[n] == '\0' || arg[n] == '=')) {
        k->pending = arg[n] == '=' ? arg + n + 1 : NULL;
        return 1;
    }
    /* short: "-b" alone or "-b8" (a value glued on; short options all take one) */
    if (s && !strncmp(arg, s, n = strlen(s)) && arg[1] != '-') {
        if (arg[n] == '\0') {
            k->pending = NULL;
            return 1;
        }
        k->pending = arg + n;
        return 1;
    }
    return 0;
}

int cli_usage_error(const cli *k, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "pld %s: ", k->cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ntry 'pld %s --help'\n", k->cmd);
    return CLI_EXIT_USAGE;
}

const char *cli_value(cli *k, const char *opt)
{
    if (k->pending) {
        const char *v = k->pending;
        k->pending = NULL;
        return v;
    }
    if (k->i < k->argc)
        return k->argv[k->i++];
    cli_usage_error(k, "option %s needs a value", opt);
    return NULL;
}

int cli_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int cli_dtype(const char *s, pld_dtype *out)
{
    static const struct {
        const char *alias;
        pld_dtype t;
    } aliases[] = {{"float", PLD_FP32},
                   {"half", PLD_FP16},
                   {"bfloat16", PLD_BF16},
                   {"double", PLD_FP64},
                   {"int", PLD_INT32}};
    for (int i = 0; i < PLD_DTYPE_COUNT; i++)
        if (!strcmp(s, pld_dtype_name((pld_dtype)i))) {
            *out = (pld_dtype)i;
            return 0;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(s, aliases[i].alias)) {
            *out = aliases[i].t;
            return 0;
        }
    return -1;
}

static const char *const op_names[] = {"sum", "max", "min", "prod"};

int cli_op(const char *s, pld_reduce_op *out)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, op_names[i])) {
            *out = (pld_reduce_op)i;
            return 0;
        }
    return -1;
}

const char *cli_op_name(pld_reduce_op op)
{
    return (unsigned)op < 4 ? op_names[op] : "?";
}

int cli_size_check(const cli *k, const char *opt, int64_t bytes, pld_dtype dtype)
{
    int64_t esz = (int64_t)pld_dtype_size(dtype);
    if (bytes <= 0)
        return cli_usage_error(k, "%s %lld: a size is at least one %s element (%lld bytes)", opt,
                               (long long)bytes, pld_dtype_name(dtype), (long long)esz);
    if (bytes % esz)
        return cli_usage_error(k,
                               "%s %lld: not a whole number of %s elements (%lld bytes each); "
                               "use a multiple of %lld, e.g. %lld",
                               opt, (long long)bytes, pld_dtype_name(dtype), (long long)esz,
                               (long long)esz, (long long)(bytes - bytes % esz + esz));
    return 0;
}

int cli_world_error(const char *cmd, pld_status st)
{
    fprintf(stderr, "pld %s: %s: %s\n", cmd, pld_status_name(st), pld_last_error());
    return st == PLD_ERR_ARG || st == PLD_ERR_UNSUPPORTED ? CLI_EXIT_USAGE : 1;
}

int cli_shared_option(cli *k, const char *arg, cli_shared *o)
{
    const char *v;
    if (cli_is(k, arg, "-p", "--platform")) {
        if (!(v = cli_value(k, "--platform")))
            return -1;
        o->cfg.platform = v;
    } else if (cli_is(k, arg, "-d", "--device")) {
        if (!(v = cli_value(k, "--device")))
            return -1;
        o->cfg.devices = v;
    } else if (cli_is(k, arg, NULL, "--transport")) {
        if (!(v = cli_value(k, "--transport")))
            return -1;
        o->cfg.transport = v;
    } else if (cli_is(k, arg, NULL, "--dtype")) {
        if (!(v = cli_value(k, "--dtype")))
            return -1;
        if (cli_dtype(v, &o->dtype))
            return cli_usage_error(k,
                                   "--dtype %s: not a dtype (fp32 fp16 bf16 int32 int16 int8 "
                                   "uint8 int64 fp64)",
                                   v),
                   -1;
        o->dtype_given = 1;
    } else if (cli_is(k, arg, "-o", "--op")) {
        if (!(v = cli_value(k, "--op")))
            return -1;
        if (cli_op(v, &o->op))
            return cli_usage_error(k, "--op %s: not an op (sum max min prod)", v), -1;
        o->op_given = 1;
    } else if (cli_is(k, arg, NULL, "--mode")) {
        if (!(v = cli_value(k, "--mode")))
            return -1;
        if (bench_mode_parse(v, &o->mode))
            return cli_usage_error(
                       k,
                       "--mode %s: not a mode (push inplace doubling pull binomial auto mesh ring "
                       "rs_ag rabenseifner bruck)",
                       v),
                   -1;
    } else if (cli_is(k, arg, "-r", "--root")) {
        if (!(v = cli_value(k, "--root")))
            return -1;
        if (cli_int(v, 0, 1 << 20, &o->root))
            return cli_usage_error(k, "--root %s: the root is a rank >= 0", v), -1;
    } else {
        return 0;
    }
    return 1;
}
