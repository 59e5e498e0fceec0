/* Deadlock detection: every live rank is blocked in a wait whose condition
 * is false, and no notify ran while we looked. Nothing can release them, so
 * the launch fails with PLD_ERR_DEADLOCK and a wait-for report.
 *
 * Needs every rank's window mapped here (thread and process transports). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static uint64_t progress(pld__world_shared *sh, int n)
{
    uint64_t s = 0;
    for (int r = 0; r < n; r++)
        s += atomic_load_explicit(&sh->rank[r].notify_seq, memory_order_seq_cst);
    return s;
}

/* Current value of rank r's blocked cell, or 0 if it cannot be read. */
static int32_t blocked_cell(pld_world *w, int r, int *sat)
{
    pld__wait_rec *rec = &w->sh->rank[r].wait;
    int id = atomic_load(&rec->buf_id);
    *sat = 0;
    if (id < 0 || id >= w->nwindows || !w->windows[id])
        return 0;
    unsigned char *p = w->tp->window_peer_ptr(w, w->windows[id], r);
    if (!p)
        return 0;
    int32_t v = atomic_load((_Atomic int32_t *)(p + atomic_load(&rec->off)));
    *sat = pld__wait_satisfied(v, atomic_load(&rec->expected),
                               (pld_wait_cmp)atomic_load(&rec->cmp));
    return v;
}

int pld__deadlock_check(pld_world *w)
{
    pld__world_shared *sh = w->sh;
    int n = w->nranks, live = 0, sat;
    /* The report is built from this snapshot: once the group aborts, ranks
     * leave their waits and a second look would see them finished. */
    int32_t *cur = malloc(sizeof *cur * (size_t)n);
    int *done = malloc(sizeof *done * (size_t)n);
    if (!cur || !done) {
        free(cur);
        free(done);
        return 0;
    }
    uint64_t before = progress(sh, n);
    for (int r = 0; r < n; r++) {
        int st = atomic_load(&sh->rank[r].state);
        done[r] = st == PLD__RS_DONE;
        if (done[r])
            continue;
        cur[r] = blocked_cell(w, r, &sat);
        if (st != PLD__RS_BLOCKED || sat)
            goto not_dead;
        live++;
    }
    if (live == 0 || progress(sh, n) != before)
        goto not_dead;
    if (atomic_exchange(&sh->deadlock_claim, 1)) {
        free(cur);
        free(done);
        return 1; /* another rank is writing the report */
    }

    char report[PLD__ERRMSG_MAX];
    size_t used = (size_t)snprintf(report, sizeof report,
                                   "deadlock: all %d live ranks are blocked in pld_wait and no "
                                   "pending notify can release them:",
                                   live);
    for (int r = 0; r < n && used < sizeof report; r++) {
        char line[256];
        if (done[r])
            snprintf(line, sizeof line, "rank %d (device %d): finished", r, w->device_ids[r]);
        else
            pld__describe_wait(w, r, cur[r], line, sizeof line);
        used += (size_t)snprintf(report + used, sizeof report - used, "\n  %s", line);
    }
    free(cur);
    free(done);
    pld__group_fail(w, PLD_ERR_DEADLOCK, report);
    return 1;
not_dead:
    free(cur);
    free(done);
    return 0;
}
