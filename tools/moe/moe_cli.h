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
/* The world of the command line (cmd names it in messages: "moe",
 * "bench"), P and the dtype into the layer, the top-k checked against
 * P*E, and the routing drawn. 0, or the exit status after a message (and
 * nothing left to free). */
int moe_cli_world(const char *cmd, const cli_shared *sh, moe_shape *m, pld_world **w,
                  moe_routing *r);
/* The usage lines of those options. */
extern const char moe_cli_usage[];

#endif
