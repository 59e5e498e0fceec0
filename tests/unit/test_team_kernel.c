/* SPDX-License-Identifier: Apache-2.0 */
/* Teams in kernels, on the thread and the process transport: the suite of
 * tests/team (grids, strided and keyed splits, teams of teams, every
 * builtin in groups of 1 to 4 ranks, the primitives with group-rank peers,
 * 200 mixed builtins on two teams, every misuse) and what only these
 * transports do: a deadlock inside one group while another group finishes
 * is reported at once, naming the world and the team rank, and a group
 * that waits while another group still runs is no deadlock. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"
#include "test_util.h"

/* ---- the suite, on the transport the test names ------------------------------ */

static const char *transport;

static pld_world *unit_world(const char *platform, int p, char *why, size_t n)
{
    char devices[16];
    snprintf(devices, sizeof devices, "0-%d", p - 1);
    /* a protocol bug fails in seconds instead of the default minute */
    pld_config cfg = {
        .platform = platform, .transport = transport, .devices = devices, .wait_timeout_ms = 20000};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    if (st != PLD_OK) {
        snprintf(why, n, "pld_world_init(%s, %s, %d ranks) = %s: %s", platform, transport, p,
                 pld_status_name(st), pld_last_error());
        return NULL;
    }
    return w;
}

static void run(const char *tp, const char *name, ts_param prm)
{
    char why[4096];
    transport = tp;
    ts_set_world_fn(unit_world);
    int rc = ts_run(name, &prm, why, sizeof why);
    cr_assert_eq(rc, 0, "case %s, P=%d, %s transport:\n  %s", name, prm.p, tp, why);
}

/* Each case as two tests, one per transport. */
#define ON_BOTH(test, secs)                                                                        \
    Test(team_kernel, test##_thread, .timeout = secs)                                              \
    {                                                                                              \
        test("thread");                                                                            \
    }                                                                                              \
    Test(team_kernel, test##_process, .timeout = secs)                                             \
    {                                                                                              \
        test("process");                                                                           \
    }

static void grid_2x2(const char *tp)
{
    run(tp, "grid", (ts_param){.p = 4, .x = 2});
}
static void grid_2x3(const char *tp)
{
    run(tp, "grid", (ts_param){.p = 6, .x = 2});
}
static void grid_3x2(const char *tp)
{
    run(tp, "grid", (ts_param){.p = 6, .x = 3});
}
static void grid_2x4(const char *tp)
{
    run(tp, "grid", (ts_param){.p = 8, .x = 2});
}
static void grid_4x2(const char *tp)
{
    run(tp, "grid", (ts_param){.p = 8, .x = 4});
}
ON_BOTH(grid_2x2, 30)
ON_BOTH(grid_2x3, 30)
ON_BOTH(grid_3x2, 30)
ON_BOTH(grid_2x4, 30)
ON_BOTH(grid_4x2, 30)

/* every other rank of 5 (the rest idle), then both halves at once */
static void strided(const char *tp)
{
    run(tp, "strided", (ts_param){.p = 5});
}
ON_BOTH(strided, 30)

/* groups of 3, 2 and 2 in reverse world order; one rank in none */
static void split_keys_reversed(const char *tp)
{
    run(tp, "split", (ts_param){.p = 8, .sizes = {3, 2, 2}, .ngroups = 3});
    run(tp, "split", (ts_param){.p = 6, .sizes = {1, 4}, .ngroups = 2});
}
ON_BOTH(split_keys_reversed, 30)

/* rows and columns of each parity group, views taken from views */
static void team_of_team(const char *tp)
{
    run(tp, "team_of_team", (ts_param){.p = 8});
    run(tp, "team_of_team", (ts_param){.p = 6}); /* groups of 3: a short row */
}
ON_BOTH(team_of_team, 30)

/* groups of 4, 3 and 1 at once; then of 2, 2 and 3 with a rank in none */
static void every_builtin_in_groups(const char *tp)
{
    run(tp, "builtins", (ts_param){.p = 8, .sizes = {4, 3, 1}, .ngroups = 3});
    run(tp, "builtins", (ts_param){.p = 8, .sizes = {2, 2, 3}, .ngroups = 3});
}
ON_BOTH(every_builtin_in_groups, 60)

/* rows of 3 and columns of 2; rows of 2 and columns of 4; a 2x2 grid */
static void mixed_200(const char *tp)
{
    run(tp, "mixed", (ts_param){.p = 6, .x = 3, .calls = 200});
    run(tp, "mixed", (ts_param){.p = 8, .x = 2, .calls = 200});
    run(tp, "mixed", (ts_param){.p = 4, .x = 2, .calls = 200});
}
ON_BOTH(mixed_200, 60)

/* The same cases under the schedule explorer, which on the thread transport
 * runs one rank at a time and lets the seed pick who runs next at every
 * primitive (a rank may get whole calls ahead of a slow group mate), and
 * on the process transport perturbs the workers with yields and sleeps;
 * with the race checker (thread transport) and the signal checker. A
 * failing launch names its seed (PLD_SCHED=<seed> replays it). Criterion
 * runs each test in a process of its own: the settings end with it. */
static void explored(const char *tp)
{
    setenv("PLD_CHECK", strcmp(tp, "thread") == 0 ? "race,signals" : "signals", 1);
    for (int seed = 1; seed <= 4; seed++) {
        char s[16];
        snprintf(s, sizeof s, "%d", seed);
        setenv("PLD_SCHED", s, 1);
        run(tp, "mixed", (ts_param){.p = 6, .x = 3, .calls = 100});
        run(tp, "grid", (ts_param){.p = 6, .x = 2});
        run(tp, "builtins", (ts_param){.p = 8, .sizes = {4, 3, 1}, .ngroups = 3});
        run(tp, "strided", (ts_param){.p = 5});
    }
}
ON_BOTH(explored, 60)

static void misuse(const char *tp)
{
    static const char *const names[] = {"err_other_world", "err_freed",  "err_stale",
                                        "err_peer",        "err_signal", "err_names"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        run(tp, names[i], (ts_param){.p = 4});
}
ON_BOTH(misuse, 60)

/* ---- deadlocks ------------------------------------------------------------------ */

typedef struct dl_args {
    ts_team x;                    /* rows of 2 at P=4, team 'tp' */
    pld_dtensor sig[TS_MAXP + 1]; /* [T,1] */
    pld_dtensor wsig;             /* [P,1]: a hand-written world protocol */
} dl_args;

static dl_args *dl_setup(pld_world *w)
{
    char why[1024];
    pld_team *x = NULL, *y = NULL;
    TU_ASSERT_STATUS(pld_team_split_2d(w, NULL, 2, "tp", &x, "dp", &y), PLD_OK);
    dl_args *a = tu_host_alloc(w, sizeof *a);
    cr_assert_eq(ts_team_fill(&a->x, x, 4, why, sizeof why), 0, "%s", why);
    cr_assert_eq(ts_windows(w, "sig", PLD_INT32, 4, 1, 1, a->sig, why, sizeof why), 0, "%s", why);
    cr_assert_eq(ts_window(w, "wsig", PLD_INT32, 4, 1, &a->wsig, why, sizeof why), 0, "%s", why);
    return a;
}

/* World rank 3 skips the barriers its row mate 2 waits in; row {0,1} runs
 * its barriers and returns. */
static void k_skip_barrier(pld_ctx *c, void *p)
{
    dl_args *a = p;
    ts_k x;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    if (x.wr == 3)
        return;
    for (int i = 0; i < 3; i++)
        pld_barrier(x.v, a->sig[x.t]);
}

static void k_rows_barrier(pld_ctx *c, void *p)
{
    dl_args *a = p;
    ts_k x;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    pld_barrier(x.v, a->sig[x.t]);
}

static void deadlock_in_one_group(const char *tp)
{
    pld_config cfg = {.transport = tp, .devices = "0-3", .wait_timeout_ms = 20000};
    pld_world *w = tu_world_cfg(&cfg);
    dl_args *a = dl_setup(w);
    double t0 = tu_now_ms();
    pld_status st = pld_launch(w, k_skip_barrier, a);
    double dt = tu_now_ms() - t0;
    const char *msg = pld_world_error(w);
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "launch %s, expected PLD_ERR_DEADLOCK: %s",
                 pld_status_name(st), msg);
    cr_expect_lt(dt, 3000.0, "the deadlock was reported after %.0f ms", dt);
    TU_EXPECT_CONTAINS(msg, "rank 2 (team 'tp' rank 0)");
    /* its wait: the credit of team rank 1 in its own row's signal */
    TU_EXPECT_CONTAINS(msg, "'sig'[1,0]");
    char line[512];
    const char *l3 = tu_line_starting(msg, "rank 3", line, sizeof line);
    cr_expect(l3 && tu_icontains(l3, "finished"), "rank 3 is not reported as finished:\n%s", msg);
    TU_LAUNCH_OK(w, k_rows_barrier, a);
    pld_world_finalize(w);
}
ON_BOTH(deadlock_in_one_group, 30)

/* Row {2,3} waits while row {0,1} still runs: rank 2 in its row's barrier,
 * rank 3 for a world-level notify that rank 0 sends only after its row ran
 * 50 barriers and it computed for 300 ms. Every member of row {2,3} is
 * blocked for a while, and the launch is fine. */
static void k_other_group_still_runs(pld_ctx *c, void *p)
{
    dl_args *a = p;
    ts_k x;
    TS_K(c, ts_view(c, &a->x, &x), "no row");
    if (x.wr == 3)
        pld_wait(c, a->wsig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
    if (x.wr <= 1) {
        for (int i = 0; i < 50; i++)
            pld_barrier(x.v, a->sig[x.t]);
        if (x.wr == 0) {
            tu_sleep_ms(300);
            pld_notify(c, a->wsig, 3, PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        }
    }
    pld_barrier(x.v, a->sig[x.t]);
    if (x.wr == 3) /* take the credit back for the next launch */
        pld_notify(c, a->wsig, 3, PLD_IDX(0, 0), -1, PLD_NOTIFY_ATOMIC_ADD);
}

static void waiting_while_another_group_runs(const char *tp)
{
    pld_config cfg = {.transport = tp, .devices = "0-3", .wait_timeout_ms = 20000};
    pld_world *w = tu_world_cfg(&cfg);
    dl_args *a = dl_setup(w);
    for (int i = 0; i < 3; i++)
        TU_LAUNCH_OK(w, k_other_group_still_runs, a);
    pld_world_finalize(w);
}
ON_BOTH(waiting_while_another_group_runs, 30)
