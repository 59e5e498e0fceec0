/* SPDX-License-Identifier: Apache-2.0 */
/* The cost cards `pld cost` prints (tools/bench/cost.c) against the byte
 * counters of a real run: every builtin and mode of `pld bench`, P = 1, 2,
 * 3, 4 and 8, several dtypes, a tiny, a ragged and a UB-chunked size, every
 * root of broadcast. The run is the bench's own kernel (tools/bench/run.c):
 * one timed and one checked call, results verified element by element.
 *
 * Per rank and call: bytes_to_peers, bytes_from_peers and bytes_self equal
 * the card exactly; the card's barrier rounds equal waits / (P-1) for every
 * algorithm built from credit barriers (all but the ring, whose waits are
 * per neighbour, not per round); Bruck's all-to-all waits twice per step
 * besides its round. all_to_all's Bruck cards (and auto's, whatever it
 * picks) also at P = 5, 13 and 64, and auto's pick of Bruck with the
 * parameters of tests/tune/costly_transfers.txt; auto's cards under a
 * PLD_RULES file whose rules pick what the model would not. The transport comes from
 * PLD_TEST_TRANSPORT (thread by default; ctest also runs it on process). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "cost.h"
#include "run.h"
#include "sweep.h"

static pld_world *world(int p)
{
    char devs[32];
    snprintf(devs, sizeof devs, "0-%d", p - 1);
    pld_config cfg = {.devices = devs, .transport = getenv("PLD_TEST_TRANSPORT")};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_assert_eq(st, PLD_OK, "pld_world_init(%s): %s: %s", devs, pld_status_name(st),
                 pld_last_error());
    return w;
}

/* One checked run of (coll, mode, dtype, size, root) against the card. */
static void one(pld_world *w, bench_coll c, bench_mode mode, pld_dtype dt, int64_t req, int root)
{
    int p = pld_world_size(w);
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    bench_spec spec = {.coll = c,
                       .mode = mode,
                       .dtype = dt,
                       .op = PLD_SUM,
                       .root = root,
                       .iters = 1,
                       .warmup = 0,
                       .check = 1};
    bench_runner *r = NULL;
    bench_result res;
    cr_assert_eq(bench_runner_open(w, &spec, &r), PLD_OK, "%s", pld_world_error(w));
    pld_status st = bench_runner_size(r, req, &res);
    cr_assert_eq(st, PLD_OK, "%s (%s) %s %lld B P=%d: %s: %s", bench_coll_name(c),
                 bench_mode_name(mode), pld_dtype_name(dt), (long long)req, p, pld_status_name(st),
                 pld_world_error(w));
    cr_expect_eq(res.wrong, 0, "%s (%s) %s %lld B P=%d: %lld wrong elements", bench_coll_name(c),
                 bench_mode_name(mode), pld_dtype_name(dt), (long long)res.shape.bytes, p,
                 (long long)res.wrong);
    cr_assert_eq(res.ncalls, 2);
    size_t esz = pld_dtype_size(dt);
    pld_tune tune;
    pld_world_tune(w, &tune);
    for (int q = 0; q < p; q++) {
        bench_card k;
        bench_card_make(c, mode, p, q, root, &res.shape, esz, lim.ub_bytes, pld_world_ll_bytes(w),
                        &tune, &k);
        const pld_counters *m = &res.counters[q];
        const char *what = bench_coll_name(c);
#define CARD_EQ(field, want)                                                                       \
    cr_expect_eq(m->field, 2 * (want),                                                             \
                 "%s (%s) %s size %lld P=%d rank %d root %d: " #field " %llu over 2 calls, card "  \
                 "%llu per call",                                                                  \
                 what, bench_mode_name(mode), pld_dtype_name(dt), (long long)res.shape.bytes, p,   \
                 q, root, (unsigned long long)m->field, (unsigned long long)(want))
        CARD_EQ(bytes_to_peers, k.to_peers);
        CARD_EQ(bytes_from_peers, k.from_peers);
        CARD_EQ(bytes_self, k.self);
#undef CARD_EQ
        /* the waits of the credit rounds in the group's form (full: P-1
         * each), and Bruck's flags; the ring's protocol and the log-depth
         * forms' step flags are in bench_card_sync too, which
         * tools.cost_check compares with the counters (pld cost --measure) */
        int steps = mode == BENCH_MODE_RING || mode == BENCH_MODE_BINOMIAL ||
                    mode == BENCH_MODE_DOUBLING || mode == BENCH_MODE_RABENSEIFNER;
        if (p > 1 && !steps) {
            pld_sync_info si;
            pld_world_sync(w, p, q, &si);
            bench_card_sync(
                c, mode, p, q, root,
                bench_card_one_round(c, mode, p, &res.shape, esz, pld_world_ll_bytes(w)), &si, &k);
            /* minus the bench kernel's own pld_barriers, in the same form */
            uint64_t waits = (m->waits - (uint64_t)res.barriers * (uint64_t)si.waits) / 2;
            cr_expect_eq(waits, k.waits,
                         "%s (%s) %s size %lld P=%d rank %d root %d: %llu waits per call, card "
                         "%llu (%d rounds)",
                         what, bench_mode_name(mode), pld_dtype_name(dt),
                         (long long)res.shape.bytes, p, q, root, (unsigned long long)waits,
                         (unsigned long long)k.waits, k.rounds);
        }
    }
    bench_runner_close(r);
}

static void cards(int p)
{
    static const pld_dtype movers[] = {PLD_FP32, PLD_BF16, PLD_INT8, PLD_INT64};
    static const pld_dtype reducers[] = {PLD_FP32, PLD_BF16, PLD_INT32};
    /* tiny, ragged (not a multiple of P or 64), one UB chunk and more */
    static const int64_t sizes[] = {8, 4004, 600000};
    static const struct {
        bench_coll c;
        bench_mode mode;
    } algos[] = {
        {BENCH_BARRIER, BENCH_MODE_DEFAULT},     {BENCH_BROADCAST, BENCH_MODE_PULL},
        {BENCH_ALLGATHER, BENCH_MODE_PUSH},      {BENCH_ALLGATHER, BENCH_MODE_INPLACE},
        {BENCH_REDUCE_SCATTER, BENCH_MODE_PULL}, {BENCH_ALLREDUCE, BENCH_MODE_MESH},
        {BENCH_ALLREDUCE, BENCH_MODE_RING},      {BENCH_ALL_TO_ALL, BENCH_MODE_PUSH},
        {BENCH_ALL_TO_ALL_V, BENCH_MODE_PUSH},   {BENCH_ALLREDUCE, BENCH_MODE_AUTO},
        {BENCH_ALLREDUCE, BENCH_MODE_RS_AG},     {BENCH_ALLREDUCE, BENCH_MODE_RABENSEIFNER},
        {BENCH_ALLGATHER, BENCH_MODE_DOUBLING},  {BENCH_BROADCAST, BENCH_MODE_BINOMIAL},
        {BENCH_ALL_TO_ALL, BENCH_MODE_AUTO},     {BENCH_ALL_TO_ALL, BENCH_MODE_BRUCK}};
    pld_world *w = world(p);
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
        bench_coll c = algos[a].c;
        int reduces = bench_coll_reduces(c);
        size_t ndt = c == BENCH_BARRIER ? 1 : reduces ? 3 : 4;
        size_t nsz = c == BENCH_BARRIER ? 1 : sizeof sizes / sizeof sizes[0];
        for (size_t d = 0; d < ndt; d++)
            for (size_t s = 0; s < nsz; s++)
                for (int root = 0; root < (c == BENCH_BROADCAST ? p : 1); root++)
                    one(w, c, algos[a].mode, reduces ? reducers[d] : movers[d], sizes[s], root);
    }
    pld_world_finalize(w);
}

Test(tool_cost, cards_equal_counters_p1, .timeout = 120)
{
    cards(1);
}
Test(tool_cost, cards_equal_counters_p2, .timeout = 120)
{
    cards(2);
}
Test(tool_cost, cards_equal_counters_p3, .timeout = 120)
{
    cards(3);
}
Test(tool_cost, cards_equal_counters_p4, .timeout = 180)
{
    cards(4);
}
Test(tool_cost, cards_equal_counters_p8, .timeout = 300)
{
    cards(8);
}

/* Bruck's all-to-all where its steps are uneven (P = 5, 13: the last
 * step sends fewer chunks than the others) and at 64 ranks (6 steps): the
 * card of B = pld_tune_bruck_chunks(P) chunks to peers and B + P self, and
 * 2 ceil(log2 P) waits; the push and auto beside it. */
static void bruck_cards(int p, int64_t bytes)
{
    pld_world *w = world(p);
    one(w, BENCH_ALL_TO_ALL, BENCH_MODE_BRUCK, PLD_FP32, bytes, 0);
    one(w, BENCH_ALL_TO_ALL, BENCH_MODE_BRUCK, PLD_INT8, bytes + 3 * p, 0); /* odd rows */
    one(w, BENCH_ALL_TO_ALL, BENCH_MODE_PUSH, PLD_FP32, bytes, 0);
    one(w, BENCH_ALL_TO_ALL, BENCH_MODE_AUTO, PLD_FP32, bytes, 0);
    pld_world_finalize(w);
}

Test(tool_cost, bruck_cards_p5, .timeout = 120)
{
    bruck_cards(5, 4000);
}
Test(tool_cost, bruck_cards_p13, .timeout = 120)
{
    bruck_cards(13, 13 * 1000);
}
Test(tool_cost, bruck_cards_p64, .timeout = 300)
{
    bruck_cards(64, 64 * 256);
}

/* The card's numbers themselves, worked out by hand: P = 5 sends the
 * indices with bit 0 set (1, 3), bit 1 (2, 3) and bit 2 (4): B = 5 chunks
 * in 3 steps; P = 8: 4 + 4 + 4 = 12 in 3; P = 13: 6 + 6 + 5 + 5 = 22 in 4. */
Test(tool_cost, bruck_card_by_hand)
{
    static const struct {
        int p;
        uint64_t b, steps;
    } want[] = {{1, 0, 0}, {2, 1, 1}, {3, 2, 2}, {5, 5, 3}, {8, 12, 3}, {13, 22, 4}, {64, 192, 6}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int p = want[i].p;
        bench_shape sh;
        bench_shape_make(BENCH_ALL_TO_ALL, p, 4, (int64_t)p * 64, &sh); /* 16 floats a chunk */
        pld_sync_info si = {.notifies = 1, .waits = 1, .epilogue = 1};  /* the round's */
        uint64_t round = p > 1; /* the done round: 1 wait, 1 notify, 1 epilogue credit */
        for (int r = 0; r < p; r++) {
            bench_card k;
            bench_card_make(BENCH_ALL_TO_ALL, BENCH_MODE_BRUCK, p, r, 0, &sh, 4, 0, 0, NULL, &k);
            bench_card_sync(BENCH_ALL_TO_ALL, BENCH_MODE_BRUCK, p, r, 0, 0, &si, &k);
            cr_expect(k.to_peers == want[i].b * 64 && k.from_peers == 0 &&
                          k.self == (want[i].b + (uint64_t)p) * 64 && k.rounds == (int)round &&
                          k.notifies == 2 * want[i].steps + 2 * round &&
                          k.waits == 2 * want[i].steps + round,
                      "bruck P=%d rank %d: to %llu from %llu self %llu rounds %d notifies %llu "
                      "waits %llu; want B = %llu chunks of 64 B, %llu steps",
                      p, r, (unsigned long long)k.to_peers, (unsigned long long)k.from_peers,
                      (unsigned long long)k.self, k.rounds, (unsigned long long)k.notifies,
                      (unsigned long long)k.waits, (unsigned long long)want[i].b,
                      (unsigned long long)want[i].steps);
        }
        cr_expect_eq(bench_chain(BENCH_ALL_TO_ALL, BENCH_MODE_BRUCK, p, 0), 2 * (int)want[i].steps);
    }
    /* the projection's chunks per step add up to the card's (the library's) */
    for (int p = 1; p <= 300; p++) {
        int64_t sum = 0;
        for (int k = 0; k < bench_bruck_steps(p); k++)
            sum += bench_bruck_step_chunks(p, k);
        cr_expect_eq(sum, pld_tune_bruck_chunks(p), "P=%d: steps send %lld chunks, B = %lld", p,
                     (long long)sum, (long long)pld_tune_bruck_chunks(p));
    }
}

/* auto follows the library's choice: with the parameters of
 * costly_transfers.txt (20 us a transfer, steps with one partner cheap) it
 * takes Bruck's algorithm at P = 8 and 12 for 64-byte chunks, and the push
 * at P = 5 (Bruck's 7 transfers cost more than the push's 5); the counters
 * equal the card of the algorithm it took. */
Test(tool_cost, all_to_all_auto_picks_bruck, .timeout = 120)
{
    setenv("PLD_TUNE_FILE", PLD_COSTLY_TRANSFERS, 1);
    unsetenv("PLD_LL_BYTES"); /* no one-round path: the pick decides */
    static const struct {
        int p;
        bench_mode pick;
    } cases[] = {{8, BENCH_MODE_BRUCK}, {12, BENCH_MODE_BRUCK}, {5, BENCH_MODE_PUSH}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int p = cases[i].p;
        pld_world *w = world(p);
        pld_tune tune;
        pld_world_tune(w, &tune);
        cr_assert_eq(tune.cpus, 64, "PLD_TUNE_FILE=%s not read (%d CPUs)", PLD_COSTLY_TRANSFERS,
                     tune.cpus);
        cr_expect_eq(bench_all_to_all_pick(&tune, p, 64), cases[i].pick, "P=%d: auto took %s", p,
                     bench_mode_name(bench_all_to_all_pick(&tune, p, 64)));
        bench_shape sh;
        bench_shape_make(BENCH_ALL_TO_ALL, p, 4, (int64_t)p * 64, &sh);
        bench_card k;
        bench_card_make(BENCH_ALL_TO_ALL, BENCH_MODE_AUTO, p, 0, 0, &sh, 4, 0, 0, &tune, &k);
        cr_expect_eq(k.bruck, cases[i].pick == BENCH_MODE_BRUCK, "P=%d: auto's card is not %s's", p,
                     bench_mode_name(cases[i].pick));
        one(w, BENCH_ALL_TO_ALL, BENCH_MODE_AUTO, PLD_FP32, (int64_t)p * 64, 0);
        pld_world_finalize(w);
    }
    unsetenv("PLD_TUNE_FILE");
}

/* auto follows the world's PLD_RULES as the library does: each rule picks
 * what the cost model would not take on this machine (the binomial tree,
 * recursive doubling, Rabenseifner, Bruck, dissemination rounds), and the
 * counters (bytes and waits) equal the card of the algorithm the rule
 * picked. */
Test(tool_cost, auto_cards_follow_the_rules, .timeout = 120)
{
    char dir[] = "/tmp/pld_tool_rules_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/rules.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("pld_rules 1\n"
          "broadcast  2-* 8K-* binomial\n"
          "allgather  2-* 1K-* doubling\n"
          "allreduce  2-* 8K-* rabenseifner\n"
          "all_to_all 2-* 0-64 bruck\n"
          "sync       2-* *    dissemination\n",
          f);
    fclose(f);
    setenv("PLD_RULES", path, 1);
    unsetenv("PLD_LL_BYTES");
    pld_world *w = world(8);
    bench_card_rules(w);
    pld_tune tune;
    pld_world_tune(w, &tune);
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    static const struct {
        bench_coll c;
        bench_mode mode;
        int64_t bytes;
    } runs[] = {{BENCH_BROADCAST, BENCH_MODE_PULL, 65536},
                {BENCH_ALLGATHER, BENCH_MODE_AUTO, 8 * 2048},
                {BENCH_ALLGATHER, BENCH_MODE_INPLACE, 8 * 2048},
                {BENCH_ALLREDUCE, BENCH_MODE_AUTO, 32768},
                {BENCH_ALL_TO_ALL, BENCH_MODE_AUTO, 8 * 32},
                {BENCH_BARRIER, BENCH_MODE_DEFAULT, 0}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        bench_shape sh;
        bench_shape_make(runs[i].c, 8, 4, runs[i].bytes, &sh);
        bench_card k;
        bench_card_make(runs[i].c, runs[i].mode, 8, 1, 0, &sh, 4, lim.ub_bytes,
                        pld_world_ll_bytes(w), &tune, &k);
        int took = runs[i].c == BENCH_BROADCAST    ? k.binomial
                   : runs[i].c == BENCH_ALLGATHER  ? k.doubling
                   : runs[i].c == BENCH_ALLREDUCE  ? k.rab
                   : runs[i].c == BENCH_ALL_TO_ALL ? k.bruck
                                                   : 1;
        cr_expect(took, "%s (%s): the card is not the rule's pick", bench_coll_name(runs[i].c),
                  bench_mode_name(runs[i].mode));
        one(w, runs[i].c, runs[i].mode, PLD_FP32, runs[i].bytes, 0);
    }
    pld_sync_info si;
    pld_world_sync(w, 8, 0, &si);
    cr_expect_eq(si.form, PLD_SYNC_DISSEMINATION);
    bench_card_rules(NULL);
    pld_world_finalize(w);
    unsetenv("PLD_RULES");
}

/* The mesh allreduce's rounds follow the UB size (PLD_UB_BYTES): a smaller
 * UB means more chunks, and the card must follow. */
Test(tool_cost, mesh_rounds_follow_the_ub, .timeout = 60)
{
    setenv("PLD_UB_BYTES", "16384", 1);
    pld_world *w = world(3);
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    cr_assert_eq(lim.ub_bytes, 16384);
    one(w, BENCH_ALLREDUCE, BENCH_MODE_MESH, PLD_FP32, 100000, 0);
    one(w, BENCH_REDUCE_SCATTER, BENCH_MODE_PULL, PLD_FP32, 100000, 0);
    pld_world_finalize(w);
}

/* The shapes behind the size column (nccl-tests semantics). */
Test(tool_cost, shapes_follow_nccl_tests)
{
    bench_shape s;
    bench_shape_make(BENCH_ALLGATHER, 4, 4, 1 << 20, &s);
    cr_expect(s.bytes == 1 << 20 && s.rows == 4 && s.cols == 65536, "allgather 1 MiB P=4");
    bench_shape_make(BENCH_ALLGATHER, 8, 4, 8, &s); /* at least one element per rank */
    cr_expect(s.bytes == 32 && s.cols == 1, "allgather 8 B P=8 -> %lld B", (long long)s.bytes);
    bench_shape_make(BENCH_ALLREDUCE, 3, 2, 1001, &s);
    cr_expect(s.bytes == 1000 && s.count == 500, "allreduce 1001 B bf16 -> %lld B",
              (long long)s.bytes);
    bench_shape_make(BENCH_ALL_TO_ALL_V, 2, 4, 4096, &s);
    cr_expect(s.m == 4 && s.rows == 8 && s.cols == 128 && s.bytes == 4096, "all_to_all_v 4 KiB");
    bench_shape_make(BENCH_ALL_TO_ALL_V, 3, 4, 36, &s);
    cr_expect(s.m == 1 && s.rows == 3 && s.cols == 3 && s.bytes == 36, "all_to_all_v 36 B P=3");
    cr_expect_float_eq(bench_busbw_factor(BENCH_ALLREDUCE, 4), 1.5, 1e-12);
    cr_expect_float_eq(bench_busbw_factor(BENCH_ALLGATHER, 4), 0.75, 1e-12);
    cr_expect_float_eq(bench_busbw_factor(BENCH_BROADCAST, 4), 1.0, 1e-12);
    int64_t v;
    cr_expect(bench_size_parse("64M", &v) == 0 && v == 64 << 20);
    cr_expect(bench_size_parse("4K", &v) == 0 && v == 4096);
    cr_expect(bench_size_parse("1.5K", &v) == 0 && v == 1536);
    cr_expect(bench_size_parse("1G", &v) == 0 && v == 1 << 30);
    cr_expect(bench_size_parse("12X", &v) == -1);
    cr_expect(bench_size_parse("", &v) == -1);
    cr_expect(bench_size_parse("-4", &v) == -1);
}
