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

#endif
