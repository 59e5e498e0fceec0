/* SPDX-License-Identifier: Apache-2.0 */
/* The --team option of pld bench: see groups.h. */
#include "groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOW                                                                                        \
    "write --team x=K (rows of K consecutive ranks) or --team y=K (columns: ranks equal mod K)"
#define LISTED_GROUPS 16

int bench_team_parse(const char *s, bench_team_opt *out, char *why, size_t n)
{
    const char *eq = strchr(s, '=');
    if (!eq) {
        snprintf(why, n, "--team %s: no '=K'; %s", s, HOW);
        return -1;
    }
    if (eq - s != 1 || (s[0] != 'x' && s[0] != 'y')) {
        snprintf(why, n, "--team %s: the team is x (rows) or y (columns), not '%.*s'; %s", s,
                 (int)(eq - s), s, HOW);
        return -1;
    }
    char *end;
    errno = 0;
    long long k = strtoll(eq + 1, &end, 10);
    if (end == eq + 1 || *end || errno || k < 1 || k > (1 << 20)) {
        snprintf(why, n, "--team %s: K is a number of ranks from 1 to P, not '%s'; %s", s, eq + 1,
                 HOW);
        return -1;
    }
    *out = (bench_team_opt){.axis = s[0], .k = k, .text = s};
    return 0;
}

pld_status bench_team_make(pld_world *w, const bench_team_opt *o, pld_team **team, char *why,
                           size_t n)
{
    int p = pld_world_size(w);
    if (o->k > p) {
        snprintf(why, n, "--team %s: K = %lld is more ranks than the world has (P=%d); K is 1..%d",
                 o->text, (long long)o->k, p, p);
        return PLD_ERR_ARG;
    }
    pld_team *xt = NULL, *yt = NULL;
    pld_status st = pld_team_split_2d(w, NULL, (int)o->k, "x", &xt, "y", &yt);
    if (st != PLD_OK) {
        snprintf(why, n, "--team %s: pld_team_split_2d: %s", o->text, pld_world_error(w));
        return st;
    }
    *team = o->axis == 'x' ? xt : yt;
    pld_team_free(w, o->axis == 'x' ? yt : xt);
    return PLD_OK;
}

void bench_team_extent(const pld_world *w, const pld_team *t, int *min, int *max)
{
    int p = pld_world_size(w);
    *min = p;
    *max = 0;
    for (int q = 0; q < p; q++) {
        int sz = pld_team_group_size(t, q);
        *min = sz < *min ? sz : *min;
        *max = sz > *max ? sz : *max;
    }
}

/* The distinct group sizes of t, largest first (at most cap). */
static int sizes(const pld_world *w, const pld_team *t, int *out, int cap)
{
    int n = 0;
    for (int q = 0; q < pld_world_size(w); q++) {
        int sz = pld_team_group_size(t, q), i = 0;
        while (i < n && out[i] != sz)
            i++;
        if (i < n || n == cap)
            continue;
        while (i > 0 && out[i - 1] < sz) /* insert, keeping the order */
            out[i] = out[i - 1], i--;
        out[i] = sz;
        n++;
    }
    return n;
}

void bench_team_describe(FILE *out, const pld_world *w, const bench_team_opt *o, const pld_team *t)
{
    int p = pld_world_size(w), sz[8];
    int nsz = sizes(w, t, sz, 8);
    fprintf(out,
            "# team %s: pld_team_split_2d(xrange %lld), the %s team: %d group%s, all at once in "
            "one launch:",
            o->text, (long long)o->k, o->axis == 'x' ? "x (rows)" : "y (columns)",
            pld_team_ngroups(t), pld_team_ngroups(t) == 1 ? "" : "s");
    for (int i = 0; i < nsz; i++) {
        int groups = 0;
        for (int q = 0; q < p; q++)
            groups += pld_team_group_size(t, q) == sz[i] && pld_team_rank_of(t, q) == 0;
        fprintf(out, "%s %d of T=%d", i ? "," : "", groups, sz[i]);
    }
    fprintf(out, "\n# groups (world ranks):");
    int listed = 0;
    for (int q = 0; q < p; q++) {
        if (pld_team_rank_of(t, q) != 0)
            continue; /* a group is listed at its rank 0 */
        if (listed++ == LISTED_GROUPS) {
            fprintf(out, " ...");
            break;
        }
        int gs = pld_team_group_size(t, q);
        fprintf(out, " {");
        for (int i = 0; i < gs && i < LISTED_GROUPS; i++)
            fprintf(out, "%s%d", i ? "," : "", pld_team_world_rank(t, q, i));
        fprintf(out, "%s}", gs > LISTED_GROUPS ? ",..." : "");
    }
    fprintf(out, "\n# per group of T ranks, as a world of T: size, count, algbw, busbw (n = T), "
                 "#wrong, card;\n# time = over the ranks of those groups, as -a says\n");
    if (nsz > 1)
        fprintf(out,
                "# rows are the groups of T=%d; a '#' line ending in (T=%d: ...) under a "
                "row is the same size in the smaller groups\n",
                sz[0], sz[nsz - 1]);
}
