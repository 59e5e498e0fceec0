/* SPDX-License-Identifier: Apache-2.0 */
/* The team suite's frame: the case table, the driver's world factory, the
 * host helpers and the kernel-side checks every case uses. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "suite.h"

static ts_world_fn world_fn;

void ts_set_world_fn(ts_world_fn fn)
{
    world_fn = fn;
}

pld_world *ts_world(const char *platform, int p, char *why, size_t n)
{
    if (!world_fn) {
        snprintf(why, n, "no world factory (ts_set_world_fn)");
        return NULL;
    }
    return world_fn(platform, p, why, n);
}

void ts_why(char *why, size_t n, const char *file, int line, const char *fmt, ...)
{
    int k = snprintf(why, n, "%s:%d: ", file, line);
    if (k < 0 || (size_t)k >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + k, n - (size_t)k, fmt, ap);
    va_end(ap);
}

/* ---- the cases ------------------------------------------------------------ */

typedef struct ts_case {
    const char *name;
    const char *platform; /* the MoE dispatch needs the URMA model of a5sim */
    ts_case_fn fn;
} ts_case;

static const ts_case cases[] = {
    {"grid", "a2a3sim", ts_case_grid},
    {"strided", "a2a3sim", ts_case_strided},
    {"split", "a2a3sim", ts_case_split},
    {"team_of_team", "a2a3sim", ts_case_team_of_team},
    {"builtins", "a5sim", ts_case_builtins},
    {"mixed", "a2a3sim", ts_case_mixed},
    {"err_other_world", "a2a3sim", ts_case_err_other_world},
    {"err_freed", "a2a3sim", ts_case_err_freed},
    {"err_stale", "a2a3sim", ts_case_err_stale},
    {"err_peer", "a2a3sim", ts_case_err_peer},
    {"err_signal", "a2a3sim", ts_case_err_signal},
    {"err_names", "a2a3sim", ts_case_err_names},
};

int ts_run(const char *name, const ts_param *prm, char *why, size_t n)
{
    why[0] = '\0';
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, name) != 0)
            continue;
        TS_HOST(prm->p >= 1 && prm->p <= TS_MAXP, "case %s: P=%d is not in 1..%d", name, prm->p,
                TS_MAXP);
        pld_world *w = ts_world(cases[i].platform, prm->p, why, n);
        if (!w)
            return 1;
        int rc = cases[i].fn(w, prm, why, n);
        pld_world_finalize(w); /* frees the case's teams and windows too */
        return rc;
    }
    TS_HOST(0, "no case called '%s'", name);
    return 1;
}

/* ---- teams as the host sees them ----------------------------------------- */

int ts_team_fill(ts_team *m, const pld_team *t, int p, char *why, size_t n)
{
    memset(m, 0, sizeof *m);
    m->t = t;
    snprintf(m->name, sizeof m->name, "%s", pld_team_name(t));
    for (int r = 0; r < p; r++) {
        m->rank[r] = pld_team_rank_of(t, r);
        m->size[r] = pld_team_group_size(t, r);
        for (int j = 0; j < m->size[r]; j++)
            m->world[r][j] = pld_team_world_rank(t, r, j);
        TS_HOST(m->rank[r] < 0 || m->world[r][m->rank[r]] == r,
                "team '%s': world rank %d is group rank %d, whose world rank is %d", m->name, r,
                m->rank[r], m->world[r][m->rank[r]]);
    }
    return 0;
}

int ts_split_sizes(pld_world *w, int p, const int *sizes, int ng, const char *name, pld_team **out,
                   char *why, size_t n)
{
    int color[TS_MAXP], key[TS_MAXP], room[TS_MAXP], g = 0;
    TS_HOST(ng >= 1 && ng <= TS_MAXP, "%d group sizes", ng);
    for (int i = 0; i < ng; i++)
        room[i] = sizes[i];
    for (int r = 0; r < p; r++) {
        color[r] = PLD_TEAM_NONE;
        key[r] = p - r;
        for (int tries = 0; tries < ng && color[r] == PLD_TEAM_NONE; tries++, g = (g + 1) % ng)
            if (room[g] > 0) {
                color[r] = g;
                room[g]--;
            }
    }
    pld_status st = pld_team_split(w, NULL, color, key, name, out);
    TS_HOST(st == PLD_OK, "pld_team_split '%s': %s: %s", name, pld_status_name(st),
            pld_world_error(w));
    return 0;
}

/* ---- kernel side ------------------------------------------------------------ */

void ts_kfail(pld_ctx *c, const char *file, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pld_fail(c, "%s:%d: %s", file, line, msg);
}

void ts_kcmp(pld_ctx *c, const char *file, int line, const char *what, const float *got,
             const float *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i])
            ts_kfail(c, file, line, "%s: element %lld is %g, expected %g (world rank %d)", what,
                     (long long)i, got[i], want[i], pld_world_rank(c));
}

int ts_view(pld_ctx *c, const ts_team *m, ts_k *k)
{
    int wr = pld_world_rank(c);
    if (!pld_ctx_team(c))
        TS_K(c, wr == pld_rank(c), "world context: pld_world_rank %d, pld_rank %d", wr,
             pld_rank(c));
    pld_ctx *v = pld_team_ctx(c, m->t);
    if (m->rank[wr] < 0) {
        TS_K(c, v == NULL, "world rank %d is in no group of team '%s' but got a view", wr, m->name);
        return 0;
    }
    TS_K(c, v != NULL, "world rank %d is group rank %d of team '%s' but got no view", wr,
         m->rank[wr], m->name);
    TS_K(c, pld_rank(v) == m->rank[wr], "team '%s', world rank %d: pld_rank %d, expected %d",
         m->name, wr, pld_rank(v), m->rank[wr]);
    TS_K(c, pld_nranks(v) == m->size[wr], "team '%s', world rank %d: pld_nranks %d, expected %d",
         m->name, wr, pld_nranks(v), m->size[wr]);
    TS_K(c, pld_world_rank(v) == wr, "team '%s': pld_world_rank %d, expected %d", m->name,
         pld_world_rank(v), wr);
    TS_K(c, pld_ctx_team(v) == m->t, "team '%s', world rank %d: pld_ctx_team is another team",
         m->name, wr);
    TS_K(c, pld_device(v) == pld_device(c), "team '%s': device %d in the view, %d outside", m->name,
         pld_device(v), pld_device(c));
    k->c = c;
    k->v = v;
    k->t = m->size[wr];
    k->me = m->rank[wr];
    k->wr = wr;
    k->w = m->world[wr];
    return 1;
}

/* ---- host helpers ------------------------------------------------------------- */

int ts_window(pld_world *w, const char *name, pld_dtype dt, int64_t rows, int64_t cols,
              pld_dtensor *out, char *why, size_t n)
{
    pld_window_buffer *b = NULL;
    pld_status st =
        pld_alloc_window_buffer(w, (size_t)(rows * cols) * pld_dtype_size(dt), name, &b);
    TS_HOST(st == PLD_OK, "window '%s': %s: %s", name, pld_status_name(st), pld_world_error(w));
    st = pld_window(b, dt, 2, PLD_IDX(rows, cols), out);
    TS_HOST(st == PLD_OK, "view of '%s': %s: %s", name, pld_status_name(st), pld_world_error(w));
    return 0;
}

int ts_windows(pld_world *w, const char *name, pld_dtype dt, int p, int64_t rows, int64_t cols,
               pld_dtensor *out, char *why, size_t n)
{
    TS_TRY(ts_window(w, name, dt, p * rows, cols, &out[p], why, n));
    for (int t = 1; t < p; t++) {
        pld_status st = pld_window(out[p].buf, dt, 2, PLD_IDX(t * rows, cols), &out[t]);
        TS_HOST(st == PLD_OK, "view [%lld,%lld] of '%s': %s", (long long)(t * rows),
                (long long)cols, name, pld_world_error(w));
    }
    return 0;
}

int ts_launch(pld_world *w, pld_kernel k, void *a, const char *what, char *why, size_t n)
{
    pld_status st = pld_launch(w, k, a);
    TS_HOST(st == PLD_OK, "%s: pld_launch = %s, expected PLD_OK: %s", what, pld_status_name(st),
            pld_world_error(w));
    return 0;
}

int ts_launch_fails(pld_world *w, pld_kernel k, void *a, pld_status want, const char *what,
                    const char *const *needles, char *why, size_t n)
{
    pld_status st = pld_launch(w, k, a);
    TS_HOST(st == want, "%s: pld_launch = %s, expected %s: %s", what, pld_status_name(st),
            pld_status_name(want), pld_world_error(w));
    for (; needles && *needles; needles++)
        TS_HOST(strstr(pld_world_error(w), *needles) != NULL,
                "%s: expected \"%s\" in the message\n  got: \"%s\"", what, *needles,
                pld_world_error(w));
    return 0;
}
