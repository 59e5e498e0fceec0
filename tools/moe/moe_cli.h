/* SPDX-License-Identifier: Apache-2.0 */
/* The options `pld moe` and `pld bench moe` share: the layer (-E, -k, -t,
 * --zipf, --seed) and the timing (-n, -w, --repeats). */
#ifndef PLD_TOOLS_MOE_CLI_H
#define PLD_TOOLS_MOE_CLI_H

#include "cli.h"
#include "moe_model.h"

typedef struct moe_timing {
    int iters, warmup, repeats;
} moe_timing;

/* 1 if arg was one of them (*rc = 0, or CLI_EXIT_USAGE after a message),
 * 0 if it is not. */
int moe_cli_option(cli *k, const char *arg, moe_shape *m, moe_timing *t, int *rc);
/* A whole-number option's value in [lo, hi]: 0, or CLI_EXIT_USAGE after a
 * message. */
int moe_cli_int(cli *k, const char *opt, int64_t lo, int64_t hi, int64_t *out);
/* The usage lines of those options. */
extern const char moe_cli_usage[];

#endif
