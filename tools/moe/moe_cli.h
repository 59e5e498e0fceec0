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
/* What a command runs with: the world of the command line, the routing,
 * and where the report goes (stdout in the root process, nowhere in the
 * others: under mpi every process runs the tool, one prints). */
typedef struct moe_session {
    pld_world *w;
    moe_routing r;
    FILE *out;
} moe_session;

/* Opens the session (cmd names it in messages: "moe", "bench"): P and the
 * dtype into the layer, the top-k checked against P*E, the routing drawn.
 * 0, or the exit status after a message (and nothing left to close). */
int moe_cli_open(const char *cmd, const cli_shared *sh, moe_shape *m, moe_session *s);
void moe_cli_close(moe_session *s);
/* The usage lines of those options. */
extern const char moe_cli_usage[];

#endif
