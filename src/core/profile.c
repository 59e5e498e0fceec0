/* SPDX-License-Identifier: Apache-2.0 */
/* Platform profiles: the simulated hardware limits of each platform. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static const pld__profile profiles[] = {
    {.name = "a2a3sim", .ub_bytes = 192 * 1024, .aiv_cores = 48, .urma = false, .sq_depth = 0},
    {.name = "a5sim", .ub_bytes = 192 * 1024, .aiv_cores = 36, .urma = true, .sq_depth = 1024},
};

const pld__profile *pld__profile_stock(int i)
{
    return i >= 0 && (size_t)i < sizeof profiles / sizeof profiles[0] ? &profiles[i] : NULL;
}

/* Which profiles accept which operation: the one place that says so, so a
 * later version can lift a restriction here. */
pld_status pld__profile_allows(const pld__profile *p, pld__op op, char *msg, size_t msgsz)
{
    switch (op) {
    case PLD__OP_INDEXED_ALL_TO_ALL_V:
        if (p->urma)
            return PLD_OK;
        snprintf(msg, msgsz,
                 "needs the a5sim URMA model; this world runs the '%s' profile (create it with "
                 "-p a5sim)",
                 p->name);
        return PLD_ERR_UNSUPPORTED;
    }
    snprintf(msg, msgsz, "unknown operation %d", (int)op);
    return PLD_ERR_ARG;
}

pld_status pld__profile_resolve(const char *name, pld__profile *out, char *msg, size_t msgsz)
{
    if (!name)
        name = "a2a3sim";
    if (!strcmp(name, "sim"))
        name = "a2a3sim";
    if (!strcmp(name, "a2a3") || !strcmp(name, "a5")) {
        snprintf(msg, msgsz,
                 "platform '%s' is real hardware, and this build has no NPU backend; "
                 "use '%ssim'",
                 name, name);
        return PLD_ERR_UNSUPPORTED;
    }
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        if (strcmp(name, profiles[i].name))
            continue;
        *out = profiles[i];
        /* the profile's limits are the defaults; the table checks the rest */
        pld__setting_value v;
        if (pld__setting_read(PLD__S_UB_BYTES, &v, msg, msgsz) != PLD_OK)
            return PLD_ERR_ARG;
        if (v.from_env)
            out->ub_bytes = (size_t)v.num;
        if (pld__setting_read(PLD__S_URMA_SQ_DEPTH, &v, msg, msgsz) != PLD_OK)
            return PLD_ERR_ARG;
        if (out->urma && v.from_env)
            out->sq_depth = v.num;
        return PLD_OK;
    }
    snprintf(msg, msgsz, "unknown platform '%s' (expected a2a3sim, a5sim or sim)", name);
    return PLD_ERR_ARG;
}
