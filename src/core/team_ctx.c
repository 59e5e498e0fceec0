/* SPDX-License-Identifier: Apache-2.0 */
/* Teams, kernel side: a rank's view of its group of a team.
 *
 * A view is a context of its own whose rank and size are the group's and
 * whose `members` table turns a group rank into a world rank at the
 * transport's edge (pld__wpeer). Everything that belongs to the agent --
 * its error exit, tiles, UB budget, schedule stream -- stays in the context
 * the view was made from (pld_ctx.agent), so a kernel can mix world and
 * team calls freely. Builtins run unchanged over the view's group; the
 * agreement check numbers and compares a team's calls apart from every
 * other team's (check/agree.c).
 *
 * Views are made on first use in a launch and retired when the kernel
 * returns. A retired view is kept (up to KEEP_RETIRED per agent, then the
 * oldest is freed), so a view kept past its kernel is refused by name
 * rather than read after free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/agree.h"
#include "core/handles.h"
#include "core/team.h"

#define KEEP_RETIRED 256

struct pld__views {
    pld_ctx **v; /* in the order they were made */
    int n, cap;
    int nretired;
};

static struct pld__views *views_of(pld_ctx *a)
{
    if (!a->views) {
        pld_world *w = a->w;
        if (!w->agent_views) /* made at world init (pld__views_init) */
            pld__kraise(a, PLD_ERR_SYSTEM, "pld_team_ctx", "no view table for this world");
        a->views = &w->agent_views[a->wrank * w->sh->cores + a->core];
    }
    return a->views;
}

static void drop_oldest_retired(struct pld__views *vs)
{
    for (int i = 0; i < vs->n; i++) {
        if (!vs->v[i]->retired)
            continue;
        free(vs->v[i]);
        memmove(&vs->v[i], &vs->v[i + 1], sizeof *vs->v * (size_t)(vs->n - i - 1));
        vs->n--;
        vs->nretired--;
        return;
    }
}

static pld_ctx *make_view(pld_ctx *a, const pld_team *t, int g)
{
    static const char api[] = "pld_team_ctx";
    struct pld__views *vs = views_of(a);
    if (vs->nretired >= KEEP_RETIRED)
        drop_oldest_retired(vs);
    if (vs->n == vs->cap) {
        int cap = vs->cap ? 2 * vs->cap : 8;
        pld_ctx **grown = realloc(vs->v, sizeof *grown * (size_t)cap);
        if (!grown)
            pld__kraise(a, PLD_ERR_NOMEM, api, "out of memory for a team view");
        vs->v = grown;
        vs->cap = cap;
    }
    pld_ctx *v = malloc(sizeof *v);
    if (!v)
        pld__kraise(a, PLD_ERR_NOMEM, api, "out of memory for a team view");
    *v = *a; /* the agent's pointers; its state is reached through v->agent */
    v->rank = t->rank_in[a->wrank];
    v->nranks = t->start[g + 1] - t->start[g];
    v->members = &t->members[t->start[g]];
    v->team = t;
    v->agent = a;
    v->views = NULL;
    v->retired = 0;
    v->tiles = v->spares = NULL;
    v->nspares = 0;
    v->depth = 0;
    v->ll_epoch = 0;
    v->sync = 0; /* chosen for the group size on first use */
    v->agree = NULL;
    v->agree_calls = 0;
    v->agree_pending = 0;
    vs->v[vs->n++] = v;
    pld__agree_view_begin(v);
    return v;
}

pld_ctx *pld_team_ctx(pld_ctx *c, const pld_team *t)
{
    PLD__CTX_CHECK(c, "pld_team_ctx");
    static const char api[] = "pld_team_ctx";
    if (PLD__UNLIKELY(pld__aborted(c)))
        pld__kexit_aborted(c);
    pld_ctx *a = c->agent;
    if (!t)
        pld__kraise(c, PLD_ERR_ARG, api, "the team is NULL");
    /* by address first: nothing is read through a handle that is not ours */
    if (!pld__team_of_world(c->w, t))
        pld__kraise(c, PLD_ERR_ARG, api,
                    "team %p is not a team of this world (a team of another world, or not a "
                    "team)",
                    (const void *)t);
    if (!t->live)
        pld__kraise(c, PLD_ERR_ARG, api, "team '%s' was freed (pld_team_free)", t->name);
    int g = t->group_of[a->wrank];
    if (g < 0)
        return NULL;
    struct pld__views *vs = views_of(a);
    for (int i = vs->n - 1; i >= 0; i--)
        if (vs->v[i]->team == t && !vs->v[i]->retired)
            return vs->v[i];
    return make_view(a, t, g);
}

const pld_team *pld_ctx_team(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_ctx_team");
    return c->team;
}

int pld_world_rank(const pld_ctx *c)
{
    PLD__CTX_CHECK(c, "pld_world_rank");
    return c->wrank;
}

void pld__views_retire(pld_ctx *a)
{
    struct pld__views *vs = a->views;
    if (!vs)
        return;
    for (int i = 0; i < vs->n; i++) {
        pld_ctx *v = vs->v[i];
        if (v->retired)
            continue;
        pld__agree_view_end(v);
        v->retired = 1;
        vs->nretired++;
    }
}

void pld__views_free(pld_world *w)
{
    if (!w->agent_views)
        return;
    for (int i = 0; i < w->nranks * w->profile.aiv_cores; i++) {
        struct pld__views *vs = &w->agent_views[i];
        for (int k = 0; k < vs->n; k++)
            free(vs->v[k]);
        free(vs->v);
    }
    free(w->agent_views);
    w->agent_views = NULL;
}

pld_status pld__views_init(pld_world *w)
{
    w->agent_views =
        calloc((size_t)w->nranks * (size_t)w->profile.aiv_cores, sizeof *w->agent_views);
    return w->agent_views ? PLD_OK : PLD_ERR_NOMEM;
}

/* ---- names ---------------------------------------------------------------- */

void pld__team_who(const pld_team *t, int r, char *out, size_t n)
{
    if (t && r >= 0 && r < t->nranks && t->rank_in[r] >= 0)
        snprintf(out, n, "rank %d (team '%s' rank %d)", r, t->name, t->rank_in[r]);
    else
        snprintf(out, n, "rank %d", r);
}

const char *pld__ctx_scope(const pld_ctx *c, char *buf, size_t n)
{
    if (!c->team)
        return "this world";
    snprintf(buf, n, "the group of team '%s'", c->team->name);
    return buf;
}

void pld__ctx_who(const pld_ctx *c, char *out, size_t n)
{
    pld__team_who(c->team, c->wrank, out, n);
}

void pld__retired_ctx(const pld_ctx *c, const char *api)
{
    char who[96];
    pld__ctx_who(c, who, sizeof who);
    pld_ctx *now = pld__current_ctx();
    if (now)
        pld__kraise(now, PLD_ERR_ARG, api,
                    "the context of %s is a team view of a kernel that has returned; views "
                    "live until their kernel returns (call pld_team_ctx in each kernel)",
                    who);
    fprintf(stderr,
            "pld: %s: the context of %s is a team view of a kernel that has returned, and no "
            "kernel is running here; kernel-side calls run only inside pld_launch\n",
            api, who);
    abort();
}
