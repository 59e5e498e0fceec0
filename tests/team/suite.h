/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel side of teams as one suite, shared by the Criterion unit test
 * (thread and process transports, tests/unit/test_team_kernel.c) and the
 * MPI program (tests/mpi/test_mpi_team.c).
 *
 * Every case makes its own world through the driver's factory, checks each
 * result inside the kernels against plain C (so a wrong value is a failed
 * launch, which every MPI process agrees on) and finalizes the world. The
 * suite does not use Criterion: a case returns 0, or 1 with the reason in
 * `why`, and the driver reports it.
 *
 * Values are small integers (exact in fp32, also when summed over a group)
 * made from the world rank that produced them and a call number, so a row
 * that came from the wrong member, or is left from an earlier call, shows. */
#ifndef PLD_TEAM_SUITE_H
#define PLD_TEAM_SUITE_H

#include <stddef.h>

#include <pld/pld.h>

#define TS_MAXP 8 /* the largest world a case runs on */
#define TS_S 21   /* elements per row: odd, so ring segments are uneven */

/* ---- the driver's side ---------------------------------------------------- */

/* Makes a world of p ranks on `platform` ("a2a3sim", "a5sim"), or returns
 * NULL with the reason in why. */
typedef pld_world *(*ts_world_fn)(const char *platform, int p, char *why, size_t n);
void ts_set_world_fn(ts_world_fn fn);

typedef struct ts_param {
    int p;              /* world size */
    int x;              /* xrange of a grid */
    int calls;          /* builtin calls of the mixed case */
    int sizes[TS_MAXP]; /* group sizes of a split; the ranks left over are in none */
    int ngroups;
} ts_param;

/* Runs the case called `name` (the table in suite.c) on a new world. */
int ts_run(const char *name, const ts_param *prm, char *why, size_t n);

/* ---- inside the suite ----------------------------------------------------- */

/* One team as the host sees it, in host memory the kernels read. */
typedef struct ts_team {
    const pld_team *t;
    char name[32];
    int rank[TS_MAXP];           /* world rank -> group rank, -1 in none */
    int size[TS_MAXP];           /* world rank -> group size, 0 in none */
    int world[TS_MAXP][TS_MAXP]; /* world rank -> its group's world ranks */
} ts_team;

/* Fills m from the host queries; 1 (why filled) if they disagree with
 * themselves (a member list that does not contain the rank, say). */
int ts_team_fill(ts_team *m, const pld_team *t, int p, char *why, size_t n);

/* A split of the world into groups of the given sizes, filled round robin
 * (rank 0 to group 0, rank 1 to group 1, ...) and ordered by keys that
 * reverse the world order; the ranks left over are PLD_TEAM_NONE. */
int ts_split_sizes(pld_world *w, int p, const int *sizes, int ng, const char *name, pld_team **out,
                   char *why, size_t n);

/* A kernel-side view with what the checks need. */
typedef struct ts_k {
    pld_ctx *c;    /* the world context: failures are reported through it */
    pld_ctx *v;    /* the team's view */
    int t, me, wr; /* group size, group rank, world rank */
    const int *w;  /* group rank -> world rank */
} ts_k;

/* c's view of m's team, checked against the host's table: group rank and
 * size, world rank, device, pld_ctx_team. Returns 0 (k unset) for a rank in
 * none of its groups, after checking that pld_team_ctx said NULL. */
int ts_view(pld_ctx *c, const ts_team *m, ts_k *k);

static inline float ts_val(int wr, int call, int row, int col)
{
    return (float)((wr * 131 + call * 17 + row * 7 + col) % 1000);
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5), noreturn))
#endif
void ts_kfail(pld_ctx *c, const char *file, int line, const char *fmt, ...);

/* A kernel-side check: fails the launch (PLD_ERR_CHECK) naming the line. */
#define TS_K(c, cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ts_kfail((c), __FILE__, __LINE__, __VA_ARGS__);                                        \
    } while (0)

/* Compares n floats with what the caller computed into `want`; names the
 * first difference. */
void ts_kcmp(pld_ctx *c, const char *file, int line, const char *what, const float *got,
             const float *want, int64_t n);
#define TS_KCMP(c, what, got, want, n) ts_kcmp((c), __FILE__, __LINE__, (what), (got), (want), (n))

/* ---- host helpers (return 1 with why filled on failure) ------------------- */

pld_world *ts_world(const char *platform, int p, char *why, size_t n);
void ts_why(char *why, size_t n, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* A window of `rows` x `cols` of dtype per rank, and its view. */
int ts_window(pld_world *w, const char *name, pld_dtype dt, int64_t rows, int64_t cols,
              pld_dtensor *out, char *why, size_t n);
/* Views [t*rows, cols] of one buffer sized for t = p, for every t in 1..p
 * (out[t]; out[0] unused): groups of every size share one window. */
int ts_windows(pld_world *w, const char *name, pld_dtype dt, int p, int64_t rows, int64_t cols,
               pld_dtensor *out, char *why, size_t n);

int ts_launch(pld_world *w, pld_kernel k, void *a, const char *what, char *why, size_t n);
/* Expects `want`; then the world's message must contain every needle
 * (a NULL-terminated list). */
int ts_launch_fails(pld_world *w, pld_kernel k, void *a, pld_status want, const char *what,
                    const char *const *needles, char *why, size_t n);

#define TS_HOST(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ts_why(why, n, __FILE__, __LINE__, __VA_ARGS__);                                       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define TS_TRY(expr)                                                                               \
    do {                                                                                           \
        if (expr)                                                                                  \
            return 1;                                                                              \
    } while (0)

/* ---- kernel-side pieces shared by the cases ------------------------------- */

/* The windows of every builtin for groups of any size up to p. Push
 * targets come in two copies (alt 0 and 1): a push into the window the
 * previous call on the same signal wrote needs a barrier in between, a push
 * into the other copy does not. */
typedef struct ts_bwin {
    pld_dtensor sig[TS_MAXP + 1], ring[TS_MAXP + 1], lanes[TS_MAXP + 1];
    pld_dtensor sig1[TS_MAXP + 1];   /* [T]: the same buffer as sig, the 1-D form */
    pld_dtensor bcast, ar, arr, arc; /* [1,S] .. [1,TS_MC] */
    pld_dtensor rs[TS_MAXP + 1];     /* [T,S] */
    pld_dtensor gather[2][TS_MAXP + 1], inplace[2][TS_MAXP + 1], a2a[2][TS_MAXP + 1];
    pld_dtensor a2av[2][TS_MAXP + 1], recv[2][TS_MAXP + 1]; /* [T*M,S], [T,1] */
    /* the MoE dispatch and combine (a5sim) */
    pld_dtensor itarget[2][TS_MAXP + 1], icounts[TS_MAXP + 1];
} ts_bwin;

#define TS_MC 600 /* elements of the multi-core allreduce: three 256-element tiles */
#define TS_M 3    /* rows per peer of all_to_all_v */
#define TS_N 6    /* tokens per rank of the MoE dispatch (and its capacity C) */
#define TS_H 8    /* hidden size of the MoE dispatch */

int ts_bwin_alloc(pld_world *w, const char *prefix, int p, int indexed, ts_bwin *b, char *why,
                  size_t n);

typedef enum ts_builtin {
    TS_BARRIER,
    TS_BCAST,
    TS_GATHER,
    TS_INPLACE,
    TS_RS,
    TS_AR_MESH,
    TS_AR_RING,
    TS_AR_CORES,
    TS_A2A,
    TS_A2AV,
    TS_NBUILTIN,
    TS_INDEXED = TS_NBUILTIN /* dispatch, expert, combine: a5sim only */
} ts_builtin;

/* Stages this rank's input of builtin `b` for call number `call`, runs it
 * in k's group and checks the result against plain C. `alt` picks the copy
 * of a push target. */
void ts_builtin_run(const ts_k *k, const ts_bwin *b, ts_builtin which, int call, int alt);

/* Windows of the hand-written exchange (ts_prims). */
typedef struct ts_pwin {
    pld_dtensor mine; /* [1,S]: this rank's row, read by the group */
    pld_dtensor box;  /* [P,S]: row j written by group rank j (remote_store) */
    pld_dtensor box2; /* [P,S]: the same with pld_put */
    pld_dtensor acc;  /* [1,S]: atomic adds from every member */
    pld_dtensor flag; /* [P,3] INT32: the exchange's own signal */
} ts_pwin;

int ts_pwin_alloc(pld_world *w, const char *prefix, int p, ts_pwin *pw, char *why, size_t n);
/* Every primitive with group-rank peers: each member reads every member's
 * row (remote_load, get, remote_reduce), writes a row into every member's
 * windows (remote_store, put, atomic add) and synchronises with notify/wait
 * (AtomicAdd + Ge, Set + Eq); every value is checked against the world rank
 * the host says is behind the group rank. Leaves pw's windows as it found
 * them (zero), so the exchange runs again in the next launch. */
void ts_prims(const ts_k *k, const ts_pwin *pw, int call);

/* ---- the cases (suite_*.c), run through ts_run ----------------------------- */

typedef int (*ts_case_fn)(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_grid(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_strided(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_split(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_team_of_team(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_builtins(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_mixed(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_err_other_world(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_err_freed(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_err_stale(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_err_peer(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_err_signal(pld_world *w, const ts_param *prm, char *why, size_t n);
int ts_case_err_names(pld_world *w, const ts_param *prm, char *why, size_t n);

#endif /* PLD_TEAM_SUITE_H */
