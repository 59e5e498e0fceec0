/* SPDX-License-Identifier: Apache-2.0 */
/* The synchronisation forms of the builtins' rounds (PLD_SYNC,
 * PLD_TREE_FANOUT): the plans pld_sync_plan and pld_world_sync report, the
 * counters of real barriers in each form against them, the choice of
 * PLD_SYNC=auto for small groups, and the errors: bad settings, bad
 * arguments, a device list beyond PLD_MAX_RANKS. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

static void clean_env(void)
{
    unsetenv("PLD_SYNC");
    unsetenv("PLD_TREE_FANOUT");
    unsetenv("PLD_MAX_RANKS");
    unsetenv("PLD_CHECK");
}

/* ---- plans -------------------------------------------------------------- */

/* Over the ranks of a group, the notifies of a round add up to the group's
 * count, and each form's shape holds. */
Test(sync, plans_add_up, .timeout = 30)
{
    for (int form = PLD_SYNC_FULL; form <= PLD_SYNC_TREE; form++)
        for (int p = 1; p <= 17; p++)
            for (int k = 1; k <= 4; k++) {
                long long notifies = 0, waits = 0, epilogue = 0;
                pld_sync_info in = {0};
                for (int r = 0; r < p; r++) {
                    cr_assert_eq(pld_sync_plan((pld_sync_form)form, p, r, k, &in), PLD_OK);
                    cr_assert_eq(in.form, (pld_sync_form)form);
                    notifies += in.notifies;
                    waits += in.waits;
                    epilogue += in.epilogue;
                }
                cr_expect_eq(notifies, in.group_notifies, "%s P=%d k=%d: %lld notifies, %lld",
                             pld_sync_form_name(in.form), p, k, notifies, in.group_notifies);
                /* every credit sent in a round is taken back once by its receiver,
                 * and every wait is on a cell some notify raises */
                if (form != PLD_SYNC_TREE)
                    cr_expect_eq(epilogue, notifies, "%s P=%d", pld_sync_form_name(in.form), p);
                int lg = 0;
                while ((1 << lg) < p)
                    lg++;
                if (p < 2)
                    cr_expect_eq(in.group_notifies, 0);
                else if (form == PLD_SYNC_FULL)
                    cr_expect_eq(in.group_notifies, (long long)p * (p - 1));
                else if (form == PLD_SYNC_DISSEMINATION)
                    cr_expect(in.hops == lg && in.group_notifies == (long long)p * lg,
                              "dissemination P=%d: %d hops, %lld notifies", p, in.hops,
                              in.group_notifies);
                else
                    cr_expect(in.group_notifies == 2LL * (p - 1) &&
                                  waits == p - 1 + (p - 1 + k - 1) / k,
                              "tree P=%d k=%d: %lld notifies, %lld waits", p, k, in.group_notifies,
                              waits);
            }
}

Test(sync, plan_errors, .timeout = 30)
{
    pld_sync_info in;
    cr_expect_eq(pld_sync_plan(PLD_SYNC_AUTO, 4, 0, 2, &in), PLD_ERR_ARG);
    cr_expect_eq(pld_sync_plan(PLD_SYNC_TREE, 0, 0, 2, &in), PLD_ERR_ARG);
    cr_expect_eq(pld_sync_plan(PLD_SYNC_TREE, 4, 4, 2, &in), PLD_ERR_ARG);
    cr_expect_eq(pld_sync_plan(PLD_SYNC_TREE, 4, -1, 2, &in), PLD_ERR_ARG);
    cr_expect_eq(pld_sync_plan(PLD_SYNC_TREE, 4, 0, 0, &in), PLD_ERR_ARG);
    cr_expect_eq(pld_sync_plan((pld_sync_form)9, 4, 0, 2, &in), PLD_ERR_ARG);
    cr_expect_eq(pld_sync_plan(PLD_SYNC_FULL, 4, 0, 2, NULL), PLD_ERR_ARG);
    cr_expect_str_eq(pld_sync_form_name(PLD_SYNC_DISSEMINATION), "dissemination");
    clean_env();
    pld_world *w = tu_world("0-3");
    cr_expect_eq(pld_world_sync(w, 5, 0, &in), PLD_ERR_ARG, "a group larger than the world");
    cr_expect_eq(pld_world_sync(w, 4, 4, &in), PLD_ERR_ARG, "a rank outside the group");
    cr_expect_eq(pld_world_sync(NULL, 4, 0, &in), PLD_ERR_ARG);
    cr_expect_eq(pld_world_sync(w, 4, 0, NULL), PLD_ERR_ARG);
    /* auto keeps small groups on the full form */
    cr_assert_eq(pld_world_sync(w, 4, 0, &in), PLD_OK);
    cr_expect_eq(in.form, PLD_SYNC_FULL, "auto at P = 4: %s", pld_sync_form_name(in.form));
    pld_world_finalize(w);
}

/* ---- real rounds against the plan ---------------------------------------- */

typedef struct bar_arg {
    pld_dtensor sig;
    int calls;
} bar_arg;

static void k_barriers(pld_ctx *c, void *arg)
{
    bar_arg *a = arg;
    for (int i = 0; i < a->calls; i++)
        pld_barrier(c, a->sig);
}

/* Back-to-back barriers in each form leave the signal all-zero and count
 * exactly the plan's notifies and waits on every rank. */
static void barriers_in(const char *form, const char *fanout, pld_sync_form want)
{
    clean_env();
    setenv("PLD_SYNC", form, 1);
    if (fanout)
        setenv("PLD_TREE_FANOUT", fanout, 1);
    setenv("PLD_CHECK", "signals", 1);
    pld_world *w = tu_world("0-6");
    int p = pld_world_size(w);
    bar_arg a = {.sig = tu_signal(w, "sig", 1), .calls = 5};
    TU_LAUNCH_OK(w, k_barriers, &a);
    for (int r = 0; r < p; r++) {
        pld_sync_info in;
        cr_assert_eq(pld_world_sync(w, p, r, &in), PLD_OK);
        cr_expect_eq(in.form, want, "PLD_SYNC=%s: form %s", form, pld_sync_form_name(in.form));
        pld_counters k;
        cr_assert_eq(pld_rank_counters(w, r, &k), PLD_OK);
        cr_expect_eq(k.notifies, (uint64_t)a.calls * (uint64_t)(in.notifies + in.epilogue),
                     "PLD_SYNC=%s rank %d: %llu notifies, plan %d + %d per call", form, r,
                     (unsigned long long)k.notifies, in.notifies, in.epilogue);
        cr_expect_eq(k.waits, (uint64_t)a.calls * (uint64_t)in.waits,
                     "PLD_SYNC=%s rank %d: %llu waits, plan %d per call", form, r,
                     (unsigned long long)k.waits, in.waits);
    }
    pld_world_finalize(w);
    clean_env();
}

Test(sync, full_counts, .timeout = 60)
{
    barriers_in("full", NULL, PLD_SYNC_FULL);
}

Test(sync, dissemination_counts, .timeout = 60)
{
    barriers_in("dissemination", NULL, PLD_SYNC_DISSEMINATION);
}

Test(sync, tree_counts, .timeout = 60)
{
    barriers_in("tree", "2", PLD_SYNC_TREE);
    barriers_in("tree", NULL, PLD_SYNC_TREE);
}

/* ---- errors --------------------------------------------------------------- */

static void expect_init_error(const char *devices, const char *needle)
{
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = devices;
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_expect_eq(st, PLD_ERR_ARG, "devices %s: %s", devices, pld_status_name(st));
    cr_expect(strstr(pld_last_error(), needle) != NULL, "devices %s: message '%s' lacks '%s'",
              devices, pld_last_error(), needle);
    if (st == PLD_OK)
        pld_world_finalize(w);
}

Test(sync, bad_settings, .timeout = 30)
{
    clean_env();
    setenv("PLD_SYNC", "ring", 1);
    expect_init_error("0-3", "PLD_SYNC");
    clean_env();
    setenv("PLD_TREE_FANOUT", "-2", 1);
    expect_init_error("0-3", "PLD_TREE_FANOUT");
    clean_env();
}

Test(sync, device_limit, .timeout = 30)
{
    clean_env();
    expect_init_error("0-4096", "more than 4096 devices");
    expect_init_error("0-4096", "PLD_MAX_RANKS");
    setenv("PLD_MAX_RANKS", "8", 1);
    expect_init_error("0-8", "more than 8 devices");
    pld_world *w = tu_world("0-7");
    cr_expect_eq(pld_world_size(w), 8);
    pld_world_finalize(w);
    clean_env();
}
