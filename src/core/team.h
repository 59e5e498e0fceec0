/* SPDX-License-Identifier: Apache-2.0 */
/* Teams, inside the library: the layout of a team (built on the host by
 * core/team.c) and the kernel-side views of it (core/team_ctx.c).
 *
 * A team lives in memory every rank of its world reads (pld_host_alloc's
 * memory: the arena of the process transport, which workers forked before
 * the team existed see at the same address), in one block: the header,
 * then its tables. */
#ifndef PLD_CORE_TEAM_H
#define PLD_CORE_TEAM_H

#include "core/internal.h"

struct pld_team {
    pld_world *w;
    char name[PLD__NAME_MAX];
    uint32_t serial; /* teams of this world made before it */
    int live;        /* 0 once freed: kept until finalize so stale handles say so */
    int nranks;      /* world size */
    int ngroups;
    pld_window_buffer *agree; /* the agreement check's fingerprints for this team's
                                 builtins (two slots per world rank), NULL when off */
    pld_dtensor check_signal; /* PLD_CHECK_SIGNALS' own barriers in its groups ([P,1]);
                                 .buf NULL when that check is off */
    pld__ll_inbox ll;         /* its groups' one-round inboxes (coll/ll.c) */
    int *group_of;            /* world rank -> group, -1 if none */
    int *rank_in;             /* world rank -> rank within its group, -1 if none */
    int *start;               /* group g's members are members[start[g] .. start[g+1]) */
    int *members;             /* world ranks, in group-rank order */
};

/* "rank 5 (team 'tp' rank 1)" for c (just "rank 5" in a world context). */
void pld__ctx_who(const pld_ctx *c, char *out, size_t n);
/* The same for world rank r in team t (NULL: the world). */
void pld__team_who(const struct pld_team *t, int r, char *out, size_t n);

/* Kernel end: the agent's views are retired (kept, so a view used later
 * is refused by name), their agreement state released. */
void pld__views_retire(pld_ctx *agent);
/* World init / finalize: the per-agent view tables (each process fills
 * and frees its own). */
pld_status pld__views_init(pld_world *w);
void pld__views_free(pld_world *w);

/* The world's teams, made by the host; a worker process reads the
 * current table from the launch's control block (w->teams is set there). */
static inline const struct pld_team *pld__team_by_serial(const pld_world *w, int serial)
{
    return serial >= 0 && serial < w->nteams ? w->teams[serial] : NULL;
}

#endif
