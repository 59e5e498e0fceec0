/* SPDX-License-Identifier: Apache-2.0 */
/* World creation, accessors and host-side error messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/devices.h"
#include "core/handles.h"
#include "core/team.h"
#include "core/hooks.h"
#include "core/internal.h"
#include "tune/tune.h"

static _Thread_local char init_errmsg[1024];

const char *pld_last_error(void)
{
    return init_errmsg;
}

pld_status pld__init_fail(pld_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(init_errmsg, sizeof init_errmsg, fmt, ap);
    va_end(ap);
    PLD__LOGS(PLD__LOG_WARN, PLD__SUB_INIT, -1, "%s", init_errmsg);
    return st;
}

pld_status pld__world_fail(pld_world *w, pld_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
    va_end(ap);
    PLD__LOGS(PLD__LOG_WARN, PLD__SUB_COLL, -1, "%s", w->errmsg);
    return st;
}

size_t pld__world_shared_bytes(int nranks, int cores)
{
    return sizeof(pld__world_shared) + sizeof(pld__rank_shared) * (size_t)nranks +
           sizeof(pld__agent) * (size_t)nranks * (size_t)cores;
}

void pld__world_shared_init(pld__world_shared *sh, int nranks, int cores)
{
    sh->nranks = nranks;
    sh->cores = cores;
    sh->agree_win = -1;
    sh->hazard_win = -1;
    sh->ll.box_win = sh->ll.flag_win = -1;
    for (int r = 0; r < nranks; r++) {
        atomic_store(&sh->rank[r].cores_active, 1);
        for (int b = 0; b < cores; b++)
            atomic_store(&pld__agent_at(sh, r, b)->state, b ? PLD__RS_DONE : PLD__RS_IDLE);
    }
}

pld_status pld__world_create(pld_world **out, const pld_config *cfg, const pld__life_hooks *hooks)
{
    static const pld_config defaults = {0};
    char msg[512];
    pld_status st;
    init_errmsg[0] = '\0';
    if (!out)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: out is NULL");
    if (!cfg)
        cfg = &defaults;

    pld_world *w = calloc(1, sizeof *w);
    if (!w)
        return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
    w->hooks = hooks;

    st = pld__profile_resolve(cfg->platform, &w->profile, msg, sizeof msg);
    if (st != PLD_OK) {
        pld__init_fail(st, "pld_world_init: %s", msg);
        goto err_world;
    }

    const char *tname = cfg->transport ? cfg->transport : pld__transport_default();
    w->tp = pld__transport_find(tname);
    if (!w->tp) {
        if (!strcmp(tname, "process") || !strcmp(tname, "mpi"))
            st = pld__init_fail(PLD_ERR_UNSUPPORTED,
                                "pld_world_init: transport '%s' is not built into this library "
                                "(available: %s)",
                                tname, pld__transport_names());
        else
            st = pld__init_fail(PLD_ERR_ARG,
                                "pld_world_init: unknown transport '%s' (available: %s)", tname,
                                pld__transport_names());
        goto err_world;
    }

    /* Under an MPI launcher the number of processes is the world size:
     * without a device list, one device per process. */
    char launched[32];
    const char *devices = cfg->devices ? cfg->devices : "0,1";
    int nlaunched = w->tp->launcher_size();
    if (!cfg->devices && nlaunched > 0) {
        snprintf(launched, sizeof launched, "0-%d", nlaunched - 1);
        devices = launched;
    }
    st = pld__devices_parse(devices, &w->device_ids, &w->nranks, msg, sizeof msg);
    if (st != PLD_OK) {
        pld__init_fail(st, "pld_world_init: %s", msg);
        goto err_world;
    }

    /* timeout, checkers, waits, pinning, stack, trace: config, then the
     * environment (strictly: a bad PLD_* value fails here), then defaults */
    if ((st = pld__world_settings(w, cfg, nlaunched)) != PLD_OK)
        goto err_devices;
    /* the layers above: before the transport starts its ranks (forked
     * workers inherit what they set up) */
    if ((st = hooks->world_begin(w)) != PLD_OK) {
        hooks->world_end(w);
        goto err_trace;
    }
    /* one tile pool slot per agent, filled by the agent (prim/tile.c) */
    w->tile_pools = calloc((size_t)w->nranks * (size_t)w->profile.aiv_cores, sizeof *w->tile_pools);
    if (!w->tile_pools || pld__views_init(w) != PLD_OK) {
        free(w->tile_pools);
        pld__views_free(w);
        st = pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
        hooks->world_end(w);
        goto err_trace;
    }
    /* known before the transport starts: forked workers inherit the entry */
    if ((st = pld__world_register(w)) != PLD_OK) {
        free(w->tile_pools);
        pld__views_free(w);
        hooks->world_end(w);
        goto err_trace;
    }
    /* the cost model's parameters, measured before this world's ranks
     * exist when there are none yet (mpi: rank 0's process, at world_ready) */
    if (nlaunched <= 0 && (st = pld__tune_prepare()) != PLD_OK)
        goto err_hooks;
    st = w->tp->world_init(w);
    if (st != PLD_OK) {
        pld__init_fail(st, "pld_world_init: transport '%s': %s", w->tp->name, w->errmsg);
        goto err_hooks;
    }
    /* the id table, then the descriptors (core/window.c) */
    w->windows = w->tp->host_alloc(w, sizeof *w->windows * PLD__MAX_WINDOWS +
                                          sizeof(pld_window_buffer) * PLD__WINDOW_DESCS);
    if (!w->windows) {
        st = pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
        w->tp->world_fini(w);
        goto err_hooks;
    }
    /* and once windows can be allocated (the checkers' own) */
    if ((st = hooks->world_ready(w)) != PLD_OK) {
        pld_world_finalize(w);
        return st;
    }
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    if (count == 1 && w->nranks > 1) /* mpi: this process's host speaks as its rank */
        pld__log_host_rank(first);
    PLD__LOGS(PLD__LOG_INFO, PLD__SUB_INIT, -1, "world: %d ranks, platform %s, transport %s",
              w->nranks, w->profile.name, w->tp->name);
    PLD__LOGS(PLD__LOG_INFO, PLD__SUB_CHECK, -1, "checks: signals %s, race %s, arguments %s",
              w->check & PLD_CHECK_SIGNALS ? "on" : "off", w->check & PLD_CHECK_RACE ? "on" : "off",
              w->check & PLD_CHECK_NOARGS ? "off" : "on");
    PLD__LOGS(PLD__LOG_INFO, PLD__SUB_INIT, -1,
              "cost model: %s parameters (round %.3g us, hand-over %.3g us, %d CPUs)",
              w->sh->tune.measured ? "measured" : "built-in", w->sh->tune.round_us,
              w->sh->tune.handover_us, w->sh->tune.cpus);
    *out = w;
    return PLD_OK;

err_hooks:
    pld__world_unregister(w);
    free(w->tile_pools);
    pld__views_free(w);
    hooks->world_end(w);
err_trace:
    free(w->trace_path);
err_devices:
    free(w->device_ids);
err_world:
    free(w);
    return st;
}

void pld_world_finalize(pld_world *w)
{
    if (!w)
        return;
    /* a void call: a refusal is said on stderr now, and its message stays
     * for pld_last_error (a dead world) or pld_world_error (a busy one) */
    if (pld__world_check(w, "pld_world_finalize") != PLD_OK) {
        fprintf(stderr, "pld: %s\n", pld_last_error());
        return;
    }
    if (atomic_load(&w->unusable)) {
        /* a rank thread that never returned may still use anything the
         * world owns: the transport lets that thread go, and the rest is
         * leaked rather than freed under it */
        w->tp->world_fini(w);
        pld__world_abandon(w);
        return;
    }
    if (pld__host_enter(w, "pld_world_finalize", "its ranks are running") != PLD_OK) {
        fprintf(stderr, "pld: %s\n", w->errmsg);
        return;
    }
    for (int i = 0; i < w->nwindows; i++)
        if (w->windows[i])
            pld__window_release(w, w->windows[i]);
    pld__host_blocks_release(w);
    w->tp->host_free(w, w->windows);
    w->windows = NULL;
    pld__teams_free(w); /* in the transport's memory */
    w->hooks->world_closing(w);
    w->tp->world_fini(w);
    w->hooks->world_end(w);
    pld__tile_pools_free(w);
    pld__views_free(w);
    free(w->trace_text);
    free(w->trace_path);
    free(w->device_ids);
    w->trace_text = w->trace_path = NULL;
    w->device_ids = NULL;
    /* the struct itself waits in quarantine: stale handles read "finalized" */
    pld__world_retire(w);
}

/* Accessors of a dead world answer like those of a NULL one. */
static int live(const pld_world *w)
{
    return pld__world_is_live(w);
}

int pld_world_size(const pld_world *w)
{
    return live(w) ? w->nranks : 0;
}

size_t pld_world_ll_bytes(const pld_world *w)
{
    return live(w) ? (size_t)w->sh->ll.slot : 0;
}

int pld_device_id(const pld_world *w, int rank)
{
    if (!live(w) || rank < 0 || rank >= w->nranks)
        return -1;
    return w->device_ids[rank];
}

int pld_is_root_process(const pld_world *w)
{
    if (!live(w))
        return 0;
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    return first == 0 && count > 0;
}

int pld_world_hosts_rank(const pld_world *w, int rank)
{
    if (!live(w) || rank < 0 || rank >= w->nranks)
        return 0;
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    return rank >= first && rank < first + count;
}

int pld_rank_pid(const pld_world *w, int rank)
{
    if (!live(w) || rank < 0 || rank >= w->nranks)
        return -1;
    return w->tp->rank_pid(w, rank);
}

const char *pld_world_platform(const pld_world *w)
{
    return live(w) ? w->profile.name : "";
}

const char *pld_world_transport(const pld_world *w)
{
    return live(w) ? w->tp->name : "";
}

int pld_world_carriers(const pld_world *w)
{
    return live(w) ? w->fibers : 0;
}

int pld_transport_built(const char *name)
{
    return name && pld__transport_find(name) != NULL;
}

const char *pld_world_error(const pld_world *w)
{
    if (!w)
        return "";
    return live(w) ? w->errmsg
                   : "this world was finalized (pld_world_finalize), or the handle is not a "
                     "world";
}

void pld_world_limits(const pld_world *w, pld_info_limits *out)
{
    if (!live(w) || !out)
        return;
    out->ub_bytes = w->profile.ub_bytes;
    out->aiv_cores = w->profile.aiv_cores;
    out->urma = w->profile.urma;
    out->sq_depth = w->profile.sq_depth;
}
