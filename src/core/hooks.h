/* SPDX-License-Identifier: Apache-2.0 */
/* The points of a world's and a launch's life where the layers above the
 * ground floor act: checkers, the trace, the listing, the schedule
 * explorer. The ground floor (src/core) calls nothing above it; it calls
 * these slots, which the hook layer (src/hook/life.c) fills and hands to
 * pld__world_create. Every slot is set (the hook layer has no empty ones). */
#ifndef PLD_CORE_HOOKS_H
#define PLD_CORE_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "pld/pld.h"

typedef struct pld__life_hooks {
    size_t size; /* sizeof(struct pld__life_hooks): lets the table grow */
    /* World init, before the transport starts its ranks (forked workers
     * inherit what it sets up), and after (windows can be allocated). A
     * failure's message goes through pld__init_fail. */
    pld_status (*world_begin)(pld_world *w);
    pld_status (*world_ready)(pld_world *w);
    /* pld_world_finalize, after the transport stopped. */
    void (*world_end)(pld_world *w);
    /* Host: before the transport runs a launch; after it, with the launch's
     * status (returns the status to report: a host-side check may fail it). */
    void (*launch_begin)(pld_world *w);
    pld_status (*launch_end)(pld_world *w, pld_status st);
    /* An agent (a rank, or a core of a multi-core call) starts and ends, on
     * its own thread. kernel_begin runs where a kernel error can be raised. */
    void (*agent_begin)(pld_ctx *c);
    void (*kernel_begin)(pld_ctx *c);
    void (*agent_end)(pld_ctx *c);
    /* Core 0 of a multi-core call prepares core b's context k before its
     * thread starts, and waits for its cores (join_begin) before joining. */
    void (*core_prepare)(pld_ctx *c, pld_ctx *k, int core);
    void (*join_begin)(pld_ctx *c);
    /* A builtin (or any named scope) begins and ends: its trace slice. */
    uint64_t (*scope_begin)(const pld_ctx *c);
    void (*scope_end)(pld_ctx *c, const char *name, uint64_t t0);
    /* pld_world_finalize, while the transport still runs (under mpi its
     * host collectives too: every process finalizes). */
    void (*world_closing)(pld_world *w);
} pld__life_hooks;

/* World creation with its hooks (the public pld_world_init passes the hook
 * layer's table). */
pld_status pld__world_create(pld_world **out, const pld_config *cfg, const pld__life_hooks *hooks);

#endif
