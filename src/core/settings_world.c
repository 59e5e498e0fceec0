/* SPDX-License-Identifier: Apache-2.0 */
/* The settings a world runs with: pld_config first, then the environment
 * (src/core/settings.c), then the defaults. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

/* The environment's value, or `dflt` when unset; only after
 * pld__settings_check passed, so no error is left to report. */
static int64_t env_or(pld__setting_id id, int64_t dflt)
{
    char msg[512];
    pld__setting_value v;
    if (pld__setting_read(id, &v, msg, sizeof msg) != PLD_OK || !v.from_env)
        return dflt;
    return v.num;
}

pld_status pld__world_settings(pld_world *w, const pld_config *cfg, int nlaunched)
{
    char msg[512];
    /* every variable, whether this world uses it or not: a typo in one the
     * program does not reach yet is still a typo */
    if (pld__settings_check(msg, sizeof msg) != PLD_OK)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: %s", msg);
    /* a log file that cannot be opened is found now, not as lines lost */
    pld__log_reload();
    if (pld__log_check_file(msg, sizeof msg) != 0)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: %s", msg);
    if (cfg->wait_timeout_ms < 0)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: wait_timeout_ms %d is negative",
                              cfg->wait_timeout_ms);
    w->wait_timeout_ms = cfg->wait_timeout_ms > 0 ? cfg->wait_timeout_ms
                                                  : (int)pld__setting_num(PLD__S_WAIT_TIMEOUT_MS);
    const unsigned known =
        PLD_CHECK_SIGNALS | PLD_CHECK_RACE | PLD_CHECK_NOARGS | PLD_CHECK_HAZARDS;
    if (cfg->check & ~known)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: unknown check bits 0x%x",
                              cfg->check & ~known);
    /* Spin before sleeping only when every rank has a core: oversubscribed,
     * the rank we wait for needs our core, so hand it over at once (no spin:
     * P=4 on 2 cores, 4 KiB allgather 10.3 -> 6.2 us, barrier 6.2 -> 3.1 us;
     * P=8 barrier 18.5 -> 12.6 us), then sleep. When this process runs
     * every rank, the CPUs counted are the ones it may use (taskset,
     * cgroups), not the machine's. Under a launcher each process is one rank
     * that the launcher may have bound to a single CPU: there the node's
     * CPUs are the measure. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int ncpu = nlaunched > 0 ? (online > 0 ? (int)online : 1) : pld__cpus_allowed();
    int oversubscribed = w->nranks > ncpu;
    w->spin = (int)env_or(PLD__S_SPIN, oversubscribed ? 0 : 2000);
    w->yields = (int)env_or(PLD__S_YIELDS, oversubscribed ? 64 : 0);
    w->pin = env_or(PLD__S_PIN, oversubscribed) != 0;
    w->check = cfg->check | (unsigned)pld__setting_num(PLD__S_CHECK);
    w->ir_print = cfg->ir || pld__setting_num(PLD__S_IR) != 0;
    w->fork_each_launch = cfg->fork_each_launch != 0;
    atomic_init(&w->ir_on, w->ir_print);
    /* the table's minimum is portable; some systems need more (arm64
     * glibc: 128 KiB), and below it pthread_attr_setstacksize would refuse */
    w->stack_bytes = (size_t)pld__setting_num(PLD__S_STACK_BYTES);
    w->fibers = (int)pld__setting_num(PLD__S_FIBERS);
    if (w->fibers > w->nranks)
        w->fibers = w->nranks;
    if (strcmp(w->tp->name, "thread"))
        w->fibers = 0; /* as PLD_MPI_SHM for the others: a process is its own thread */
    long sys_min = sysconf(_SC_THREAD_STACK_MIN);
    if (sys_min > 0 && w->stack_bytes < (size_t)sys_min)
        w->stack_bytes = (size_t)sys_min;
    const char *trace = cfg->trace_path ? cfg->trace_path : pld__setting_str(PLD__S_TRACE);
    const char *svg = cfg->ir_svg ? cfg->ir_svg : pld__setting_str(PLD__S_IR_SVG);
    /* last: nothing after them can fail, so the caller frees nothing of
     * ours (the picture's path is freed with the hook layer's state) */
    if (svg && !(w->ir_svg_path = strdup(svg)))
        return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
    if (trace && !(w->trace_path = strdup(trace))) {
        free(w->ir_svg_path);
        w->ir_svg_path = NULL;
        return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
    }
    return PLD_OK;
}

int pld__world_wait_timeout_ms(const pld_world *w)
{
    return w ? w->wait_timeout_ms : 0;
}

size_t pld__world_stack_bytes(const pld_world *w)
{
    return w ? w->stack_bytes : 0;
}

unsigned pld__world_check_bits(const pld_world *w)
{
    return w ? w->check : 0;
}
