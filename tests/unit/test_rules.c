/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_RULES (pld/tune.h): a file whose rules decide PLD_AUTO's choices
 * before the cost model. Each rule takes the algorithm or form it names,
 * and the call still computes its result; a rule that matches nothing
 * leaves the cost model's choice; a mode a call names and PLD_SYNC are
 * never overridden; a file that is not one is refused at world init,
 * naming the file, the line and the value. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define NR 8

/* A fresh directory's file holding text; its path. */
static const char *rules_file(const char *text)
{
    static char path[256];
    char dir[] = "/tmp/pld_rules_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rules.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Every PLD_* setting the choices depend on, as the test wants them. */
static void settings(const char *rules, const char *sync)
{
    setenv("PLD_RULES", rules, 1);
    if (sync)
        setenv("PLD_SYNC", sync, 1);
    else
        unsetenv("PLD_SYNC");
    unsetenv("PLD_LL_BYTES");
}

static pld_world *listing_world(void)
{
    pld_config cfg = {.devices = "0-7", .transport = getenv("PLD_TEST_TRANSPORT")};
    pld_world *w = tu_world_cfg(&cfg);
    pld_ir_enable(w, 1);
    return w;
}

typedef struct rule_args {
    pld_dtensor bcast, rows, ar, a2a, sig;
    int named; /* 1: the calls name their modes (pull, push, mesh, push); 2: the
                  log-depth ones (binomial, doubling, rabenseifner, bruck) */
} rule_args;

#define BC_N 16384 /* 64 KiB of FP32: above the one-round size */
#define ROW_N 512  /* 2 KiB rows */
#define AR_N 8192  /* 32 KiB */
#define CHUNK_N 8  /* 32-byte chunks */

/* One call of each collective with a rule, rank-keyed data, every element
 * checked. */
static void k_each(pld_ctx *c, void *p)
{
    rule_args *a = p;
    int me = pld_rank(c), np = pld_nranks(c);
    /* broadcast from rank 3 */
    float *b = pld_local(c, a->bcast).data;
    for (int64_t i = 0; i < BC_N; i++)
        b[i] = me == 3 ? (float)(i % 977) : -1.0f;
    pld_broadcast_with(c, a->bcast, a->sig, 3,
                       a->named == 2 ? PLD_BCAST_BINOMIAL
                       : a->named    ? PLD_BCAST_PULL
                                     : PLD_BCAST_AUTO);
    for (int64_t i = 0; i < BC_N; i++)
        KCHECK(c, b[i] == (float)(i % 977), "broadcast: rank %d [%lld] = %g", me, (long long)i,
               (double)b[i]);
    /* allgather */
    float row[ROW_N];
    for (int64_t j = 0; j < ROW_N; j++)
        row[j] = (float)(me * 1000 + j % 1000);
    pld_allgather_with(c, pld_tensor_make(row, PLD_FP32, 2, PLD_IDX(1, ROW_N)), a->rows, a->sig,
                       a->named == 2 ? PLD_AG_DOUBLING
                       : a->named    ? PLD_AG_PUSH
                                     : PLD_AG_AUTO);
    const float *t = pld_local(c, a->rows).data;
    for (int src = 0; src < np; src++)
        for (int64_t j = 0; j < ROW_N; j++)
            KCHECK(c, t[src * ROW_N + j] == (float)(src * 1000 + j % 1000),
                   "allgather: rank %d row %d [%lld] = %g", me, src, (long long)j,
                   (double)t[src * ROW_N + j]);
    /* allreduce */
    float *d = pld_local(c, a->ar).data;
    for (int64_t i = 0; i < AR_N; i++)
        d[i] = (float)(me * 1000 + i % 100);
    pld_allreduce(c, a->ar, a->sig, PLD_SUM,
                  a->named == 2 ? PLD_RABENSEIFNER
                  : a->named    ? PLD_MESH
                                : PLD_AUTO);
    for (int64_t i = 0; i < AR_N; i++)
        KCHECK(c, d[i] == (float)(1000 * np * (np - 1) / 2 + np * (i % 100)),
               "allreduce: rank %d [%lld] = %g", me, (long long)i, (double)d[i]);
    /* all_to_all */
    float in[NR * CHUNK_N];
    for (int dst = 0; dst < np; dst++)
        for (int64_t j = 0; j < CHUNK_N; j++)
            in[dst * CHUNK_N + j] = (float)(me * 100 + dst * 10 + j);
    pld_all_to_all_with(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(np, CHUNK_N)), a->a2a, a->sig,
                        a->named == 2 ? PLD_A2A_BRUCK
                        : a->named    ? PLD_A2A_PUSH
                                      : PLD_A2A_AUTO);
    const float *g = pld_local(c, a->a2a).data;
    for (int src = 0; src < np; src++)
        for (int64_t j = 0; j < CHUNK_N; j++)
            KCHECK(c, g[src * CHUNK_N + j] == (float)(src * 100 + me * 10 + j),
                   "all_to_all: rank %d from %d [%lld] = %g", me, src, (long long)j,
                   (double)g[src * CHUNK_N + j]);
}

static void windows(pld_world *w, rule_args *a)
{
    a->bcast = tu_window(w, "bcast", PLD_FP32, 1, PLD_IDX(BC_N));
    a->rows = tu_window(w, "rows", PLD_FP32, 2, PLD_IDX(NR, ROW_N));
    a->ar = tu_window(w, "ar", PLD_FP32, 1, PLD_IDX(AR_N));
    a->a2a = tu_window(w, "a2a", PLD_FP32, 2, PLD_IDX(NR, CHUNK_N));
    a->sig = tu_signal(w, "sig", 1);
}

/* A world of NR ranks with these settings, its listing on, after one
 * launch of k_each (named: as rule_args says). */
static pld_world *run_each(const char *rules, const char *sync, int named)
{
    settings(rules, sync);
    pld_world *w = listing_world();
    rule_args *a = tu_host_alloc(w, sizeof *a); /* every transport's ranks see it */
    a->named = named;
    windows(w, a);
    TU_LAUNCH_OK(w, k_each, a);
    return w;
}

static const char every_rule[] = "pld_rules 1\n"
                                 "# what a cluster's links would favour\n"
                                 "broadcast  4-*  *       binomial\n"
                                 "allgather  4-*  1K-*    doubling   # rows of 1 KiB and more\n"
                                 "allreduce  4-*  8K-1M   rabenseifner\n"
                                 "all_to_all 4-*  0-64    bruck\n"
                                 "sync       4-*  *       dissemination\n";

Test(rules, each_rule_decides_its_auto_choice_and_the_results_hold, .timeout = 60)
{
    const char *path = rules_file(every_rule);
    pld_world *w = run_each(path, NULL, 0);
    const char *ir = pld_ir_text(w);
    char want[512];
    snprintf(want, sizeof want, "auto: binomial (rule %s:3; 65536 B, 8 ranks)", path);
    TU_EXPECT_CONTAINS(ir, want);
    snprintf(want, sizeof want, "auto: doubling (rule %s:4; 2048 B, 8 ranks)", path);
    TU_EXPECT_CONTAINS(ir, want);
    snprintf(want, sizeof want, "auto: rabenseifner (rule %s:5; 32768 B, 8 ranks)", path);
    TU_EXPECT_CONTAINS(ir, want);
    snprintf(want, sizeof want, "auto: bruck (rule %s:6; 32 B, 8 ranks)", path);
    TU_EXPECT_CONTAINS(ir, want);
    pld_sync_info si;
    TU_ASSERT_STATUS(pld_world_sync(w, NR, 0, &si), PLD_OK);
    cr_expect_eq(si.form, PLD_SYNC_DISSEMINATION, "the sync rule: form %d", (int)si.form);
    /* what the tools ask: the line and the choice */
    int choice = -1;
    cr_expect_eq(pld_world_rule(w, PLD_RULE_ALLREDUCE, NR, 32768, &choice), 5);
    cr_expect_eq(choice, PLD_RABENSEIFNER);
    cr_expect_eq(pld_world_rule(w, PLD_RULE_ALLREDUCE, NR, 4096, &choice), 0, "below 8K");
    cr_expect_eq(pld_world_rule(w, PLD_RULE_ALLREDUCE, NR, (2u << 20), &choice), 0, "above 1M");
    cr_expect_eq(pld_world_rule(w, PLD_RULE_SYNC, 3, 0, &choice), 0, "3 ranks");
    cr_expect_eq(pld_world_rule(w, PLD_RULE_SYNC, 4, 0, &choice), 7);
    cr_expect_eq(pld_world_rule(NULL, PLD_RULE_SYNC, 4, 0, &choice), 0);
    const char *named = NULL;
    cr_expect_eq(pld_world_rules(w, &named), 5);
    cr_expect(named && !strcmp(named, path), "the rules' path: %s", named ? named : "NULL");
    cr_expect_eq(pld_world_rules(NULL, &named), 0);
    pld_world_finalize(w);
}

/* The first matching line decides; none matching leaves the cost model. */
Test(rules, the_first_match_decides_and_no_match_leaves_the_cost_model, .timeout = 60)
{
    const char *path = rules_file("pld_rules 1\n"
                                  "allreduce 2-* 0-16K mesh\n"
                                  "allreduce 2-* * rabenseifner\n"
                                  "broadcast 9-* * binomial\n"
                                  "allgather 100-* * doubling\n");
    pld_world *w = run_each(path, NULL, 0);
    const char *ir = pld_ir_text(w);
    char want[512];
    snprintf(want, sizeof want, "auto: rabenseifner (rule %s:3; 32768 B, 8 ranks)", path);
    TU_EXPECT_CONTAINS(ir, want);
    cr_expect(!tu_contains(ir, "auto: binomial"), "no broadcast rule holds for 8 ranks");
    cr_expect_eq(pld_world_rules(w, NULL), 4);
    TU_EXPECT_CONTAINS(ir, "(predicted "); /* the allgather's and all_to_all's notes */
    pld_world_finalize(w);
}

/* A call that names its mode, and PLD_SYNC set to a form, are the
 * caller's decision: no rule changes them. */
Test(rules, named_modes_and_the_sync_setting_are_not_overridden, .timeout = 60)
{
    pld_world *w = run_each(rules_file(every_rule), "full", 1);
    cr_expect(!tu_contains(pld_ir_text(w), "(rule "), "a rule decided a named mode:\n%s",
              pld_ir_text(w));
    pld_sync_info si;
    TU_ASSERT_STATUS(pld_world_sync(w, NR, 0, &si), PLD_OK);
    cr_expect_eq(si.form, PLD_SYNC_FULL, "PLD_SYNC=full: form %d", (int)si.form);
    pld_world_finalize(w);
    unsetenv("PLD_SYNC");
}

/* The log-depth forms stage data in memory of their own, private to the
 * rank; with the listing on, their puts and gets are recorded through the
 * public calls, whose check for memory the host cannot see must not
 * refuse it (it did on the process transport: "src tensor data ... is
 * private memory"). */
Test(rules, the_log_depth_forms_run_under_the_listing_on_every_transport, .timeout = 60)
{
    pld_world *w = run_each("", NULL, 2);
    const char *ir = pld_ir_text(w);
    TU_EXPECT_CONTAINS(ir, "pld_broadcast");
    TU_EXPECT_CONTAINS(ir, "pld_all_to_all");
    pld_world_finalize(w);
}

static void expect_refused(const char *text, const char *words)
{
    const char *path = text ? rules_file(text) : "/nonexistent/pld/rules.txt";
    settings(path, NULL);
    pld_config cfg = {.devices = "0-3", .transport = getenv("PLD_TEST_TRANSPORT")};
    pld_world *w = NULL;
    cr_expect_eq(pld_world_init(&w, &cfg), PLD_ERR_ARG, "%s", text ? text : path);
    char where[300];
    snprintf(where, sizeof where, "PLD_RULES %s:", path);
    TU_EXPECT_CONTAINS(pld_last_error(), where);
    TU_EXPECT_CONTAINS(pld_last_error(), words);
    if (w)
        pld_world_finalize(w);
}

Test(rules, a_file_that_is_not_one_is_refused_naming_the_line_and_value, .timeout = 60)
{
    expect_refused(NULL, ": cannot be read: No such file or directory");
    expect_refused("", ": empty; a rules file starts with 'pld_rules 1'");
    expect_refused("pld_rules 2\n", ":1: the first line is 'pld_rules'");
    expect_refused("pld_rules 1\nreduce 2-* * mesh\n",
                   ":2: unknown collective 'reduce'; the collectives are broadcast, allgather, "
                   "allreduce, all_to_all, sync");
    expect_refused("pld_rules 1\n\nallreduce 2-* * ring\n",
                   ":3: 'ring' is no allreduce choice; the choices are mesh, rs_ag, rabenseifner");
    expect_refused("pld_rules 1\nbroadcast 5-3 * binomial\n",
                   ":2: ranks '5-3': the first is more than the last");
    expect_refused("pld_rules 1\nbroadcast 0-3 * binomial\n",
                   ":2: ranks '0-3': a group has 1 rank or more");
    expect_refused("pld_rules 1\nallgather 2-* 1X doubling\n",
                   ":2: bytes '1X' is not *, N, N-M or N-* (bytes; K, M, G: KiB, MiB, GiB)");
    expect_refused("pld_rules 1\nallgather two * doubling\n",
                   ":2: ranks 'two' is not *, N, N-M or N-* (ranks)");
    expect_refused("pld_rules 1\nsync 2-* 0-8 tree\n",
                   ":2: bytes '0-8': a sync rule holds for every call, its bytes are *");
    expect_refused("pld_rules 1\nsync 2-* *\n", ":2: 3 words; a rule is 'collective ranks bytes "
                                                "choice'");
    expect_refused("pld_rules 1\nsync 2-* * tree full\n", ":2: 5 words");
    expect_refused("pld_rules 1\nallreduce 2-* 99999999999999999999 mesh\n",
                   ":2: bytes '99999999999999999999' is not");
    expect_refused("pld_rules 1\nallreduce 2-* 4611686018427387905 mesh\n",
                   ":2: bytes '4611686018427387905' is not"); /* 2^62 + 1 */
    expect_refused("pld_rules 1\nallreduce 2-* 8589934592G mesh\n",
                   ":2: bytes '8589934592G' is not");
    expect_refused("pld_rules 1\nsync 3000000000 * tree\n",
                   ":2: ranks '3000000000': more than 2147483647");
    char many[8192] = "pld_rules 1\n";
    for (int i = 0; i < 65; i++)
        strcat(many, "sync 2-* * tree\n");
    expect_refused(many, ":66: more than 64 rules");
    unsetenv("PLD_RULES");
}

/* The example the docs ship is a rules file, and says what its comments
 * say (the crossovers of the example cluster's projection). */
Test(rules, the_example_cluster_rules_read_as_documented, .timeout = 60)
{
    const char *path = getenv("PLD_RULES_EXAMPLE");
    cr_assert_not_null(path, "PLD_RULES_EXAMPLE is not set");
    settings(path, NULL);
    pld_config cfg = {.devices = "0,1", .transport = getenv("PLD_TEST_TRANSPORT")};
    pld_world *w = tu_world_cfg(&cfg);
    int choice = -1;
    cr_expect_gt(pld_world_rule(w, PLD_RULE_SYNC, 25, 0, &choice), 0);
    cr_expect_eq(choice, PLD_SYNC_TREE);
    cr_expect_eq(pld_world_rule(w, PLD_RULE_SYNC, 24, 0, &choice), 0);
    cr_expect_gt(pld_world_rule(w, PLD_RULE_BROADCAST, 10, 1 << 20, &choice), 0);
    cr_expect_eq(choice, PLD_BCAST_BINOMIAL);
    cr_expect_gt(pld_world_rule(w, PLD_RULE_ALLGATHER, 97, 64, &choice), 0);
    cr_expect_eq(choice, PLD_AG_DOUBLING);
    cr_expect_gt(pld_world_rule(w, PLD_RULE_ALLREDUCE, 13, 4096, &choice), 0);
    cr_expect_eq(choice, PLD_RABENSEIFNER);
    cr_expect_eq(pld_world_rule(w, PLD_RULE_ALLREDUCE, 12, 4096, &choice), 0);
    cr_expect_gt(pld_world_rule(w, PLD_RULE_ALL_TO_ALL, 256, 16, &choice), 0);
    cr_expect_eq(choice, PLD_A2A_BRUCK);
    cr_expect_eq(pld_world_rule(w, PLD_RULE_ALL_TO_ALL, 256, 64, &choice), 0);
    pld_world_finalize(w);
}
