/* SPDX-License-Identifier: Apache-2.0 */
/* `pld moe --run`: each dispatch form on the routed layout, in a world:
 * one call for the byte and URMA counters, then timed launches. */
#ifndef PLD_TOOLS_MOE_RUN_H
#define PLD_TOOLS_MOE_RUN_H

#include "moe_model.h"

typedef struct moe_measured {
    pld_status st;          /* PLD_OK, or why the form did not run */
    char why[256];          /* its message */
    double us;              /* median over the repeats of the slowest rank's time per call */
    double us_min, us_max;  /* the fastest and the slowest repeat */
    pld_counters *counters; /* [P]: the counters of one call */
    int wrong;              /* ranks whose received counts differ from the routing */
} moe_measured;

/* Runs `form` iters times per launch, `repeats` launches (after `warmup`
 * untimed calls each). out->counters is allocated; free it. */
void moe_run(pld_world *w, const moe_routing *r, int form, int iters, int warmup, int repeats,
             moe_measured *out);

/* 1 when one rank's counters equal its card: the bytes, and where the
 * world models URMA sends (urma: a5sim) the SQEs of the forms that count
 * them (indexed, packed). */
int moe_card_matches(const moe_card *k, const pld_counters *c, int form, int urma);
/* 1 when the run failed -- but for the indexed form refusing this world
 * (profile or dtype), which is not a failure of the tool. */
int moe_run_failed(int form, const moe_measured *ms);

#endif
