/* SPDX-License-Identifier: Apache-2.0 */
/* Deadlock detection: every live agent (a core of a rank) is blocked in a
 * wait whose condition is false, and no notify ran while we looked. Nothing
 * can release them, so the launch fails with PLD_ERR_DEADLOCK and a
 * wait-for report.
 *
 * A core 0 that waits for its rank's other cores (JOINING) is stuck exactly
 * when one of those cores is blocked and none runs; when they have all
 * finished it is about to resume.
 *
 * Needs every rank's window mapped here (thread and process transports). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/agree.h"
#include "check/check.h"

static uint64_t progress(pld__world_shared *sh)
{
    uint64_t s = 0;
    for (int r = 0; r < sh->nranks; r++)
        for (int b = 0; b < atomic_load(&sh->rank[r].cores_active); b++)
            s += atomic_load_explicit(&pld__agent_at(sh, r, b)->notify_seq, memory_order_seq_cst);
    return s;
}

/* Current value of the agent's blocked cell; *sat tells whether it is met. */
static int32_t blocked_cell(pld_world *w, pld__agent *ag, int r, int *sat)
{
    pld__wait_rec *rec = &ag->wait;
    int id = atomic_load(&rec->buf_id);
    *sat = 0;
    if (id < 0 || id >= w->nwindows || !w->windows[id])
        return 0;
    unsigned char *p = w->tp->window_peer_ptr(w, w->windows[id], r);
    if (!p)
        return 0;
    int32_t v = atomic_load((_Atomic int32_t *)(p + atomic_load(&rec->off)));
    *sat =
        pld__wait_satisfied(v, atomic_load(&rec->expected), (pld_wait_cmp)atomic_load(&rec->cmp));
    return v;
}

typedef struct snap {
    int32_t state, cur;
} snap;

/* Fills the snapshot of rank r's agents; returns -1 if the rank can still
 * make progress, else the number of its blocked agents. */
static int rank_stuck(pld_world *w, int r, snap *s)
{
    pld__world_shared *sh = w->sh;
    int blocked = 0, joining = 0, sat;
    /* cores beyond the active count are not in use; a stale count errs on
     * the side of "not stuck" */
    int active = atomic_load(&sh->rank[r].cores_active);
    for (int b = 0; b < sh->cores; b++)
        s[b].state = PLD__RS_DONE;
    for (int b = 0; b < active && b < sh->cores; b++) {
        pld__agent *ag = pld__agent_at(sh, r, b);
        snap *x = &s[b];
        x->state = atomic_load(&ag->state);
        if (x->state == PLD__RS_DONE)
            continue;
        if (x->state == PLD__RS_JOINING) {
            joining = 1;
            continue;
        }
        if (x->state != PLD__RS_BLOCKED)
            return -1;
        x->cur = blocked_cell(w, ag, r, &sat);
        if (sat)
            return -1;
        blocked++;
    }
    if (joining && blocked == 0)
        return -1; /* its cores finished: core 0 resumes */
    return blocked;
}

int pld__deadlock_check(pld_world *w)
{
    pld__world_shared *sh = w->sh;
    int n = sh->nranks, cores = sh->cores, live = 0; /* ranks with a blocked wait */
    /* The report is built from this snapshot: once the group aborts, agents
     * leave their waits and a second look would see them finished. */
    snap *s = malloc(sizeof *s * (size_t)n * (size_t)cores);
    if (!s)
        return 0;
    uint64_t before = progress(sh);
    for (int r = 0; r < n; r++) {
        int k = rank_stuck(w, r, &s[r * cores]);
        if (k < 0)
            goto not_dead;
        live += k > 0;
    }
    if (live == 0 || progress(sh) != before)
        goto not_dead;
    if (atomic_exchange(&sh->deadlock_claim, 1)) {
        free(s);
        return 1; /* another rank is writing the report */
    }

    char report[PLD__ERRMSG_MAX];
    size_t used = (size_t)snprintf(report, sizeof report,
                                   "deadlock: all %d live ranks are blocked in pld_wait and no "
                                   "pending notify can release them:",
                                   live);
    for (int r = 0; r < n && used < sizeof report; r++) {
        int listed = 0;
        for (int b = 0; b < cores && used < sizeof report; b++) {
            snap *x = &s[r * cores + b];
            if (x->state != PLD__RS_BLOCKED)
                continue;
            char line[256];
            pld__describe_wait(w, r, b, x->cur, line, sizeof line);
            used += (size_t)snprintf(report + used, sizeof report - used, "\n  %s", line);
            listed = 1;
        }
        if (!listed && used < sizeof report)
            used += (size_t)snprintf(report + used, sizeof report - used,
                                     "\n  rank %d (device %d): finished", r, w->device_ids[r]);
    }
    free(s);
    /* ranks stuck in different builtins (or the same one with different
     * signals) disagree: that is the root cause to name */
    char why[1024];
    if (pld__agree_explain(w, 1, why, sizeof why)) {
        pld__group_fail(w, PLD_ERR_ARG, why);
        return 1;
    }
    pld__group_fail(w, PLD_ERR_DEADLOCK, report);
    return 1;
not_dead:
    free(s);
    return 0;
}
