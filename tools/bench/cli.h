/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line helpers of the pld tool: option walking, value parsers and
 * the usage-error convention (message on stderr, exit status 2). */
#ifndef PLD_TOOLS_CLI_H
#define PLD_TOOLS_CLI_H

#include <stdint.h>

#include "cost.h"
#include "pld/pld.h"
#include "sweep.h"

#define CLI_EXIT_USAGE 2

/* Walks argv[1..argc): options and positional words. */
typedef struct cli {
    int argc;
    char **argv;
    int i;
    const char *cmd;     /* "bench", "cost": prefix of messages */
    const char *pending; /* value given inline as --opt=value */
} cli;

void cli_init(cli *k, const char *cmd, int argc, char **argv);
/* Next argument, or NULL at the end. */
const char *cli_next(cli *k);
/* 1 if arg is the option `s` (short, may be NULL) or `l` (long): accepts
 * "-b 8", "-b8", "--begin 8", "--begin=8". */
int cli_is(cli *k, const char *arg, const char *s, const char *l);
/* The option's value; NULL (after a usage message) if it is missing. */
const char *cli_value(cli *k, const char *opt);

/* Prints "pld <cmd>: <message>" and "try 'pld --help'" to stderr; returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const cli *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Parsers: 0 and *out on success, -1 otherwise. */
int cli_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
int cli_dtype(const char *s, pld_dtype *out);
int cli_op(const char *s, pld_reduce_op *out);
const char *cli_op_name(pld_reduce_op op);

/* The options `pld bench` and `pld cost` share: the world (-p, -d,
 * --transport), the dtype, the reduction op, the algorithm (--mode) and the
 * broadcast root. The *_given flags say which were on the command line. */
typedef struct cli_shared {
    pld_config cfg;
    pld_dtype dtype;
    pld_reduce_op op;
    bench_mode mode;
    int64_t root;
    int dtype_given, op_given;
} cli_shared;
/* 1 if arg was one of them (its value stored), 0 if it is not one of them,
 * -1 after a usage message (bad or missing value). */
int cli_shared_option(cli *k, const char *arg, cli_shared *o);

/* A size option's value (-b, -i, -s) against the dtype: 0 and a size that
 * is not a whole number of elements are usage errors naming the value and
 * the element size (nccl-tests would round them; a silent 4 bytes for
 * `-b 0` reads like a measurement of nothing). 0 if it fits, else
 * CLI_EXIT_USAGE after the message. */
int cli_size_check(const cli *k, const char *opt, int64_t bytes, pld_dtype dtype);

/* Exit status for a failed pld_world_init: 2 when the arguments were at
 * fault (bad devices, platform, transport name; transport not built), else 1. */
int cli_world_error(const char *cmd, pld_status st);

#endif
