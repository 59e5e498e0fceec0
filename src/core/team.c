/* SPDX-License-Identifier: Apache-2.0 */
/* Teams: the host side. A team maps every world rank to a group and a
 * rank within it; groups are stored as member lists in group order.
 *
 * A split works inside each group of its parent (the world is a parent of
 * one group) and speaks in the parent's group ranks. Every process
 * computes the same team from the same arguments; under MPI a hash of the
 * arguments is compared across processes first (the transport's
 * host_agree), so processes that disagree all get PLD_ERR_ARG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/agree.h"
#include "check/check.h"
#include "coll/ll.h"
#include "core/handles.h"
#include "core/team.h"

/* ---- the world's list of teams ---------------------------------------- */

/* The table lives where ranks read it too (a worker process gets the
 * current table with every launch): it grows by copying. */
static pld_status remember(pld_world *w, pld_team *t)
{
    if (w->nteams == w->teams_cap) {
        int cap = w->teams_cap ? w->teams_cap * 2 : 8;
        pld_team **grown = w->tp->host_alloc(w, sizeof *grown * (size_t)cap);
        if (!grown)
            return PLD_ERR_NOMEM;
        if (w->nteams)
            memcpy(grown, w->teams, sizeof *grown * (size_t)w->nteams);
        if (w->teams)
            w->tp->host_free(w, w->teams);
        w->teams = grown;
        w->teams_cap = cap;
    }
    t->serial = (uint32_t)w->nteams;
    w->teams[w->nteams++] = t;
    return PLD_OK;
}

/* Before the transport stops: the teams are in its memory. Their windows
 * went with the world's other windows. */
void pld__teams_free(pld_world *w)
{
    for (int i = 0; i < w->nteams; i++)
        w->tp->host_free(w, w->teams[i]);
    if (w->teams)
        w->tp->host_free(w, w->teams);
    w->teams = NULL;
    w->nteams = w->teams_cap = 0;
}

/* The world that made t, if t is one of a live world's teams (found by
 * address: nothing is read through a stale handle). */
static pld_world *team_world(const pld_team *t, int *live)
{
    pld_world *w = pld__team_world(t);
    if (live)
        *live = w && t->live;
    return w;
}

int pld__team_of_world(const pld_world *w, const pld_team *t)
{
    for (int i = 0; i < w->nteams; i++)
        if (w->teams[i] == t)
            return 1;
    return 0;
}

/* ---- building a team ---------------------------------------------------- */

/* Rank r's group and rank in the parent (the world: group 0, rank r). */
static int parent_group(const pld_team *parent, int r)
{
    return parent ? parent->group_of[r] : 0;
}

static int parent_rank(const pld_team *parent, int r)
{
    return parent ? parent->rank_in[r] : r;
}

static int parent_groups(const pld_world *w, const pld_team *parent)
{
    return parent ? parent->ngroups : (w->nranks > 0);
}

typedef struct slot {
    int pgroup, color, key, prank, world;
} slot;

static int slot_order(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->pgroup != y->pgroup)
        return x->pgroup < y->pgroup ? -1 : 1;
    if (x->color != y->color)
        return x->color < y->color ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->prank > y->prank) - (x->prank < y->prank);
}

/* The checkers' windows and the inboxes of a team (freed with it, or
 * with the world). */
static void release_windows(pld_world *w, pld_team *t)
{
    if (t->agree)
        pld__window_release(w, t->agree);
    if (t->check_signal.buf)
        pld__window_release(w, t->check_signal.buf);
    t->agree = NULL;
    t->check_signal.buf = NULL;
    pld__ll_team_free(w, t);
}

/* A team from each member's (parent group, color, key): slots of ranks in
 * no group have color < 0. Takes ownership of nothing. */
static pld_status build(pld_world *w, const char *api, slot *s, int n, const char *name,
                        pld_team **out)
{
    int p = w->nranks;
    /* one block: the header, then its four tables */
    size_t ints = 2 * (size_t)p + (size_t)(n + 1) + (size_t)(n ? n : 1);
    pld_team *t = w->tp->host_alloc(w, sizeof *t + sizeof(int) * ints);
    if (!t)
        return pld__world_fail(w, PLD_ERR_NOMEM, "%s: out of memory", api);
    t->group_of = (int *)(void *)(t + 1);
    t->rank_in = t->group_of + p;
    t->start = t->rank_in + p;
    t->members = t->start + n + 1;
    t->w = w;
    t->live = 1;
    t->ll.box_win = t->ll.flag_win = -1;
    t->nranks = p;
    for (int r = 0; r < p; r++)
        t->group_of[r] = t->rank_in[r] = -1;
    qsort(s, (size_t)n, sizeof *s, slot_order);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].color < 0)
            continue;
        if (m == 0 || s[i].pgroup != s[i - 1].pgroup || s[i].color != s[i - 1].color ||
            s[i - 1].color < 0)
            t->start[t->ngroups++] = m;
        t->group_of[s[i].world] = t->ngroups - 1;
        t->rank_in[s[i].world] = m - t->start[t->ngroups - 1];
        t->members[m++] = s[i].world;
    }
    t->start[t->ngroups] = m;
    if (remember(w, t) != PLD_OK) {
        w->tp->host_free(w, t);
        return pld__world_fail(w, PLD_ERR_NOMEM, "%s: out of memory", api);
    }
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    if (!name)
        snprintf(t->name, sizeof t->name, "team%u", t->serial);
    /* its builtins' fingerprints: the group's calls are numbered and
     * compared apart from every other team's */
    pld_status st = pld__agree_team_init(w, t);
    if (st == PLD_OK)
        st = pld__signal_check_team_init(w, t);
    if (st == PLD_OK) /* its groups' one-round inboxes */
        st = pld__ll_team_init(w, t);
    if (st != PLD_OK) {
        char why[512]; /* the window's own message, before it is overwritten */
        snprintf(why, sizeof why, "%.500s", w->errmsg);
        release_windows(w, t);
        t->live = 0;
        return pld__world_fail(w, st, "%s: the checkers' windows for team '%s': %s", api, t->name,
                               why);
    }
    *out = t;
    return PLD_OK;
}

/* FNV-1a over the arguments, for the agreement of processes. */
static uint64_t hash_ints(uint64_t h, const int *v, int n)
{
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 4; b++) {
            h ^= (uint64_t)(((unsigned)v[i] >> (8 * b)) & 0xffu);
            h *= 1099511628211ull;
        }
    return h;
}

/* The checks every split starts with; on PLD_OK, slots for every world
 * rank (pgroup, prank filled; color -1) are in *slots. */
static pld_status begin(pld_world *w, const pld_team *parent, const char *api, void *out,
                        slot **slots)
{
    pld_status st = pld__world_check(w, api);
    if (st != PLD_OK)
        return st;
    if (!out)
        return pld__world_fail(w, PLD_ERR_ARG, "%s: out is NULL", api);
    int live = 0;
    if (parent && (team_world(parent, &live) != w || !live))
        return pld__world_fail(
            w, PLD_ERR_ARG, "%s: the parent team %p is %s", api, (const void *)parent,
            team_world(parent, NULL) == w ? "freed (pld_team_free)" : "not a team of this world");
    if ((st = pld__host_enter(w, api, "teams are made on the host")) != PLD_OK)
        return st;
    pld__host_leave(w);
    *slots = malloc(sizeof **slots * (size_t)w->nranks);
    if (!*slots)
        return pld__world_fail(w, PLD_ERR_NOMEM, "%s: out of memory", api);
    for (int r = 0; r < w->nranks; r++)
        (*slots)[r] = (slot){.pgroup = parent_group(parent, r),
                             .color = -1,
                             .prank = parent_rank(parent, r),
                             .world = r};
    return PLD_OK;
}

/* Under MPI every process must have passed the same arguments. */
static pld_status agree(pld_world *w, const char *api, uint64_t h)
{
    if (w->tp->host_agree(w, h))
        return PLD_OK;
    return pld__world_fail(w, PLD_ERR_ARG,
                           "%s: the processes passed different arguments (a team is made by "
                           "every process alike)",
                           api);
}

static pld_status finish(pld_world *w, const char *api, slot *s, uint64_t h, const char *name,
                         pld_team **out)
{
    pld_status st = agree(w, api, h);
    if (st == PLD_OK)
        st = build(w, api, s, w->nranks, name, out);
    free(s);
    return st;
}

pld_status pld_team_split(pld_world *w, const pld_team *parent, const int *color, const int *key,
                          const char *name, pld_team **out)
{
    static const char api[] = "pld_team_split";
    slot *s;
    pld_status st = begin(w, parent, api, out, &s);
    if (st != PLD_OK)
        return st;
    if (!color) {
        free(s);
        return pld__world_fail(w, PLD_ERR_ARG, "%s: color is NULL", api);
    }
    uint64_t h = 14695981039346656037ull;
    for (int r = 0; r < w->nranks; r++) {
        if (s[r].pgroup < 0)
            continue; /* not a member of the parent: its entries do not count */
        if (color[r] < PLD_TEAM_NONE) {
            free(s);
            return pld__world_fail(w, PLD_ERR_ARG,
                                   "%s: color[%d] = %d is neither a color (>= 0) nor "
                                   "PLD_TEAM_NONE (-1)",
                                   api, r, color[r]);
        }
        s[r].color = color[r];
        s[r].key = key ? key[r] : 0;
        int e[3] = {r, color[r], s[r].key};
        h = hash_ints(h, e, 3);
    }
    return finish(w, api, s, h, name, out);
}

pld_status pld_team_split_strided(pld_world *w, const pld_team *parent, int start, int stride,
                                  int size, const char *name, pld_team **out)
{
    static const char api[] = "pld_team_split_strided";
    slot *s;
    pld_status st = begin(w, parent, api, out, &s);
    if (st != PLD_OK)
        return st;
    if (start < 0 || stride < 1 || size < 1) {
        free(s);
        return pld__world_fail(w, PLD_ERR_ARG,
                               "%s: start %d, stride %d, size %d: start must be >= 0, stride "
                               "and size >= 1",
                               api, start, stride, size);
    }
    /* the last member, in 64 bits: start + (size-1) x stride may pass an int */
    int64_t last = (int64_t)start + (int64_t)(size - 1) * stride;
    for (int g = 0; g < parent_groups(w, parent); g++) {
        int gsize = parent ? parent->start[g + 1] - parent->start[g] : w->nranks;
        if (last >= gsize) {
            free(s);
            return pld__world_fail(w, PLD_ERR_ARG,
                                   "%s: start %d + (size %d - 1) x stride %d = %lld is outside "
                                   "%s%s group %d of %d ranks",
                                   api, start, size, stride, (long long)last,
                                   parent ? "parent team '" : "the world",
                                   parent ? parent->name : "", g, gsize);
        }
    }
    for (int r = 0; r < w->nranks; r++) {
        int pr = s[r].prank;
        if (s[r].pgroup >= 0 && pr >= start && (pr - start) % stride == 0 &&
            (pr - start) / stride < size) {
            s[r].color = 0;
            s[r].key = pr;
        }
    }
    int e[3] = {start, stride, size};
    return finish(w, api, s, hash_ints(14695981039346656037ull, e, 3), name, out);
}

pld_status pld_team_split_2d(pld_world *w, const pld_team *parent, int xrange, const char *xname,
                             pld_team **xteam, const char *yname, pld_team **yteam)
{
    static const char api[] = "pld_team_split_2d";
    slot *sx, *sy;
    pld_status st = begin(w, parent, api, xteam, &sx);
    if (st != PLD_OK)
        return st;
    if (!yteam) {
        free(sx);
        return pld__world_fail(w, PLD_ERR_ARG, "%s: yteam is NULL", api);
    }
    int largest = 0;
    for (int g = 0; g < parent_groups(w, parent); g++) {
        int gsize = parent ? parent->start[g + 1] - parent->start[g] : w->nranks;
        largest = gsize > largest ? gsize : largest;
    }
    if (xrange < 1 || xrange > largest) {
        free(sx);
        return pld__world_fail(w, PLD_ERR_ARG, "%s: xrange %d not in 1..%d (the %s%s%s)", api,
                               xrange, largest, parent ? "largest group of parent team '" : "",
                               parent ? parent->name : "world's size", parent ? "'" : "");
    }
    sy = malloc(sizeof *sy * (size_t)w->nranks);
    if (!sy) {
        free(sx);
        return pld__world_fail(w, PLD_ERR_NOMEM, "%s: out of memory", api);
    }
    memcpy(sy, sx, sizeof *sy * (size_t)w->nranks);
    for (int r = 0; r < w->nranks; r++) {
        if (sx[r].pgroup < 0)
            continue;
        int pr = sx[r].prank;
        sx[r].color = pr / xrange, sx[r].key = pr; /* rows */
        sy[r].color = pr % xrange, sy[r].key = pr; /* columns */
    }
    uint64_t h = hash_ints(14695981039346656037ull, &xrange, 1);
    if ((st = agree(w, api, h)) != PLD_OK ||
        (st = build(w, api, sx, w->nranks, xname, xteam)) != PLD_OK) {
        free(sx);
        free(sy);
        return st;
    }
    st = build(w, api, sy, w->nranks, yname, yteam);
    free(sx);
    free(sy);
    if (st != PLD_OK)
        (*xteam)->live = 0;
    return st;
}

void pld_team_free(pld_world *w, pld_team *t)
{
    if (pld__world_check(w, "pld_team_free") != PLD_OK) {
        fprintf(stderr, "pld: %s\n", pld_last_error());
        return;
    }
    if (!t)
        return;
    const char *bad = !pld__team_of_world(w, t) ? "is not a team of this world"
                      : !t->live                ? "was already freed"
                                                : NULL;
    pld_status st =
        bad ? pld__world_fail(w, PLD_ERR_ARG, "pld_team_free: team %p %s", (const void *)t, bad)
            : pld__host_enter(w, "pld_team_free", "kernels may still use the team");
    if (st != PLD_OK) {
        fprintf(stderr, "pld: %s\n", w->errmsg);
        return;
    }
    /* the handle stays until finalize, freed: later calls say so */
    t->live = 0;
    release_windows(w, t);
    pld__host_leave(w);
}

/* ---- queries ------------------------------------------------------------- */

static const pld_team *live_team(const pld_team *t, int world_rank)
{
    int live = 0;
    if (!team_world(t, &live) || !live || world_rank < 0 || world_rank >= t->nranks)
        return NULL;
    return t;
}

int pld_team_rank_of(const pld_team *t, int world_rank)
{
    return live_team(t, world_rank) ? t->rank_in[world_rank] : -1;
}

int pld_team_group_size(const pld_team *t, int world_rank)
{
    if (!live_team(t, world_rank) || t->group_of[world_rank] < 0)
        return 0;
    int g = t->group_of[world_rank];
    return t->start[g + 1] - t->start[g];
}

size_t pld_team_ll_bytes(const pld_team *t)
{
    int live = 0;
    team_world(t, &live);
    return live ? (size_t)t->ll.slot : 0;
}

int pld_team_world_rank(const pld_team *t, int world_rank, int team_rank)
{
    int n = pld_team_group_size(t, world_rank);
    if (team_rank < 0 || team_rank >= n)
        return -1;
    return t->members[t->start[t->group_of[world_rank]] + team_rank];
}

int pld_team_ngroups(const pld_team *t)
{
    return live_team(t, 0) ? t->ngroups : 0;
}

const char *pld_team_name(const pld_team *t)
{
    return live_team(t, 0) ? t->name : "";
}
