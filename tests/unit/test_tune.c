/* SPDX-License-Identifier: Apache-2.0 */
/* The cost model PLD_AUTO chooses with (pld/tune.h): its parameter file
 * read strictly and written whole, measured by the first world that finds
 * none, its predictions and the allreduce choice, which the listing and the
 * trace report. No timing is asserted: measured values are only checked to
 * be numbers a file can hold. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* A fresh directory's file name (not created). */
static const char *temp_path(const char *name)
{
    static char path[256];
    char dir[] = "/tmp/pld_tune_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static const pld_tune sample = {.cpus = 4,
                                .round_us = 0.25,
                                .peer_us = 0.05,
                                .handover_us = 1.5,
                                .transfer_us = 0.04,
                                .ws_bytes = {1024, 1048576, 67108864},
                                .copy_ns = {0.01, 0.02, 0.05},
                                .pull_ns = {0.02, 0.03, 0.06},
                                .reduce_ns = {0.03, 0.04, 0.1},
                                .measured = 1};

Test(tune, save_then_load_gives_the_same_parameters)
{
    const char *path = temp_path("sub/dir/tune.txt"); /* directories are made */
    cr_assert_eq(pld_tune_save(path, &sample), PLD_OK, "%s", pld_last_error());
    pld_tune t;
    cr_assert_eq(pld_tune_load(path, &t), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(t.cpus, 4);
    cr_expect_float_eq(t.round_us, 0.25, 1e-9);
    cr_expect_float_eq(t.peer_us, 0.05, 1e-9);
    cr_expect_float_eq(t.handover_us, 1.5, 1e-9);
    cr_expect_float_eq(t.transfer_us, 0.04, 1e-9);
    for (int i = 0; i < PLD_TUNE_POINTS; i++) {
        cr_expect_float_eq(t.ws_bytes[i], sample.ws_bytes[i], 1e-3);
        cr_expect_float_eq(t.copy_ns[i], sample.copy_ns[i], 1e-9);
        cr_expect_float_eq(t.pull_ns[i], sample.pull_ns[i], 1e-9);
        cr_expect_float_eq(t.reduce_ns[i], sample.reduce_ns[i], 1e-9);
    }
    cr_expect_eq(t.measured, 1);
}

/* A file pld did not write is PLD_ERR_ARG naming the file, the line and
 * what is wrong with it. */
static void expect_bad_file(const char *text, const char *words)
{
    const char *path = temp_path("tune.txt");
    write_text(path, text);
    pld_tune t;
    cr_expect_eq(pld_tune_load(path, &t), PLD_ERR_ARG, "%s", text);
    TU_EXPECT_CONTAINS(pld_last_error(), path);
    TU_EXPECT_CONTAINS(pld_last_error(), words);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld tune");
}

#define GOOD_BODY                                                                                  \
    "cpus 2\nround_us 0.2\npeer_us 0\nhandover_us 1\ntransfer_us 0.1\nws_bytes 1 2 3\ncopy_ns 1 "  \
    "1 1\n"                                                                                        \
    "pull_ns 1 1 1\nreduce_ns 1 1 1\n"

Test(tune, a_file_pld_did_not_write_is_refused_by_line)
{
    expect_bad_file("hello\n", "line 1: not a pld_tune file");
    expect_bad_file("pld_tune 4\n" GOOD_BODY, "a key is missing ('measured')");
    expect_bad_file("pld_tune 4\n" GOOD_BODY "measured 1\ncolour blue\n",
                    "line 12: unknown key ('colour')");
    expect_bad_file("pld_tune 4\n" GOOD_BODY "measured 1\ncpus 3\n", "line 12: key given twice");
    expect_bad_file("pld_tune 4\ncpus two\n", "line 2: not a finite non-negative number ('two')");
    expect_bad_file("pld_tune 4\nround_us -1\n", "line 2: not a finite non-negative number");
    expect_bad_file("pld_tune 4\nround_us nan\n", "not a finite non-negative number ('nan')");
    expect_bad_file("pld_tune 4\nws_bytes 1 2\n", "line 2: too few values ('ws_bytes')");
    expect_bad_file("pld_tune 4\ncopy_ns 1 2 3 4\n", "line 2: too many values ('copy_ns')");
    expect_bad_file("pld_tune 4\nws_bytes 4 2 8\n", "line 2: working sets must be positive");
    expect_bad_file("pld_tune 4\ncpus 1.5\n", "line 2: cpus is not a whole number");
    expect_bad_file("pld_tune 4\nmeasured 2\n", "line 2: measured is 0 or 1");
}

/* Another pld's format: PLD_ERR_UNSUPPORTED for the reader, and a world
 * measures again and rewrites the file instead of failing. */
Test(tune, another_format_is_measured_again, .timeout = 60)
{
    const char *path = temp_path("tune.txt");
    write_text(path, "pld_tune 1\ncpus 2\n");
    pld_tune t;
    cr_expect_eq(pld_tune_load(path, &t), PLD_ERR_UNSUPPORTED);
    TU_EXPECT_CONTAINS(pld_last_error(), "is of format 1; this pld reads format 4");
    setenv("PLD_TUNE_FILE", path, 1);
    pld_world *w = tu_world("0,1");
    pld_world_finalize(w);
    cr_expect_eq(pld_tune_load(path, &t), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(t.measured, 1);
}

Test(tune, a_missing_file_is_a_system_error)
{
    pld_tune t;
    const char *path = temp_path("none.txt");
    cr_expect_eq(pld_tune_load(path, &t), PLD_ERR_SYSTEM);
    TU_EXPECT_CONTAINS(pld_last_error(), "cannot read");
    TU_EXPECT_CONTAINS(pld_last_error(), path);
}

Test(tune, the_path_follows_the_setting_then_the_cache_directories)
{
    setenv("PLD_TUNE_FILE", "/x/y.txt", 1);
    cr_expect_str_eq(pld_tune_path(), "/x/y.txt");
    unsetenv("PLD_TUNE_FILE");
    setenv("XDG_CACHE_HOME", "/cache", 1);
    cr_expect_str_eq(pld_tune_path(), "/cache/pld/tune.txt");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    cr_expect_str_eq(pld_tune_path(), "/home/u/.cache/pld/tune.txt");
}

/* The first world that finds no file measures and writes it; the next
 * reads it; both decide with the same parameters. */
Test(tune, the_first_world_measures_and_writes_the_file, .timeout = 60)
{
    const char *path = temp_path("tune.txt");
    setenv("PLD_TUNE_FILE", path, 1);
    pld_world *w = tu_world("0,1");
    cr_assert_eq(access(path, R_OK), 0, "no parameter file at %s", path);
    pld_tune in_world, in_file;
    cr_assert_eq(pld_world_tune(w, &in_world), PLD_OK);
    cr_assert_eq(pld_tune_load(path, &in_file), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(in_world.measured, 1);
    cr_expect_geq(in_world.cpus, 1);
    cr_expect(in_world.round_us > 0 && isfinite(in_world.round_us));
    for (int i = 0; i < PLD_TUNE_POINTS; i++)
        cr_expect(in_world.copy_ns[i] > 0 && in_world.pull_ns[i] > 0 && in_world.reduce_ns[i] > 0);
    /* the world uses what the file says, to the last digit */
    cr_expect_float_eq(in_file.round_us, in_world.round_us, 0);
    pld_world_finalize(w);
    w = tu_world("0-2");
    pld_tune again;
    cr_assert_eq(pld_world_tune(w, &again), PLD_OK);
    cr_expect_float_eq(again.round_us, in_world.round_us, 0);
    pld_world_finalize(w);
}

/* A world never starts on parameters it cannot read: the message says
 * which file and line, and how to get a good one. */
Test(tune, a_world_refuses_a_bad_parameter_file)
{
    const char *path = temp_path("tune.txt");
    write_text(path, "pld_tune 4\ncpus 0\n");
    setenv("PLD_TUNE_FILE", path, 1);
    pld_config cfg = {.transport = getenv("PLD_TEST_TRANSPORT")};
    pld_world *w = NULL;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_ERR_ARG);
    TU_EXPECT_STARTS(pld_last_error(), "pld_world_init: cost model: pld_tune_load: ");
    TU_EXPECT_CONTAINS(pld_last_error(), "line 2: cpus is not a whole number >= 1");
}

Test(tune, predictions_grow_with_rounds_bytes_and_ranks_beyond_the_cpus)
{
    const pld_tune *t = &sample;
    cr_expect_float_eq(pld_tune_predict_us(t, 2, 1, 0, 0, 0, 0), 0.25, 1e-9);
    cr_expect_float_eq(pld_tune_predict_us(t, 2, 3, 0, 0, 0, 0), 0.75, 1e-9);
    /* 4 ranks on 4 CPUs: 2 beyond two, 0.05 each */
    cr_expect_float_eq(pld_tune_predict_us(t, 4, 1, 0, 0, 0, 0), 0.35, 1e-9);
    /* 6 ranks on 4 CPUs: and 2 hand-overs of 1.5 */
    cr_expect_float_eq(pld_tune_predict_us(t, 6, 1, 0, 0, 0, 0), 3.35, 1e-9);
    /* bytes at the rate of their working set: 1000 B copied in the caches
     * (0.01 ns/B) = 0.01 us; reduced in memory (0.1 ns/B) = 0.1 us */
    cr_expect_float_eq(pld_tune_predict_us(t, 2, 0, 1000, 0, 0, 512), 0.01, 1e-9);
    cr_expect_float_eq(pld_tune_predict_us(t, 2, 0, 0, 0, 1000, 1e9), 0.1, 1e-9);
    /* pulled, in the last-level cache (0.03 ns/B) */
    cr_expect_float_eq(pld_tune_predict_us(t, 2, 0, 0, 1000, 0, 1048576), 0.03, 1e-9);
    /* halfway (log scale) between 1 KiB and 1 MiB: halfway between rates */
    cr_expect_float_eq(pld_tune_predict_us(t, 2, 0, 1000, 0, 0, 32768), 0.015, 1e-9);
    /* 8 ranks on 4 CPUs take turns: twice the bytes' time */
    cr_expect_float_eq(pld_tune_predict_us(t, 8, 0, 1000, 0, 0, 512), 0.02, 1e-9);
    cr_expect_float_eq(pld_tune_predict_us(NULL, 2, 1, 0, 0, 0, 0), 0, 1e-12);
}

/* A transfer costs transfer_us of its rank's CPU, whatever its size; ranks
 * that share a CPU take turns. */
Test(tune, transfers_cost_their_count_times_the_share_of_a_cpu)
{
    const pld_tune *t = &sample;
    cr_expect_float_eq(pld_tune_transfers_us(t, 2, 10), 0.4, 1e-9);
    cr_expect_float_eq(pld_tune_transfers_us(t, 4, 10), 0.4, 1e-9);
    cr_expect_float_eq(pld_tune_transfers_us(t, 8, 10), 0.8, 1e-9); /* 8 on 4 CPUs */
    cr_expect_float_eq(pld_tune_transfers_us(t, 2, 0), 0, 1e-12);
    cr_expect_float_eq(pld_tune_transfers_us(NULL, 2, 10), 0, 1e-12);
}

/* A chain of one-partner steps: a round of two ranks per step, and a turn
 * of every rank beyond the CPUs. */
Test(tune, a_chain_costs_a_round_of_two_per_step)
{
    const pld_tune *t = &sample; /* 4 CPUs, round 0.25 us, hand-over 1.5 us */
    cr_expect_float_eq(pld_tune_chain_us(t, 4, 6), 6 * 0.25, 1e-9);
    cr_expect_float_eq(pld_tune_chain_us(t, 8, 6), 6 * (0.25 + 1.5 * 4), 1e-9);
    cr_expect_float_eq(pld_tune_chain_us(t, 8, 0), 0, 1e-12);
    cr_expect_float_eq(pld_tune_chain_us(NULL, 8, 6), 0, 1e-12);
}

/* Expensive rounds favour the mesh's 2 rounds; cheap rounds and expensive
 * bytes favour the two-phase form's fewer bytes. */
Test(tune, the_allreduce_choice_follows_the_predictions)
{
    pld_tune slow_rounds = sample, fast_rounds = sample;
    slow_rounds.round_us = 1000;
    fast_rounds.round_us = 0.001;
    double pred[PLD_TUNE_ALLREDUCE_PREDICTIONS];
    /* 64 KiB fp32 fits one 192 KiB UB chunk: the mesh takes 2 rounds */
    cr_expect_eq(pld_tune_allreduce_auto(&slow_rounds, 2, 65536, 4, 196608, pred), PLD_MESH);
    cr_expect_lt(pred[0], pred[2]);
    cr_expect_eq(pld_tune_allreduce_auto(&fast_rounds, 2, 65536, 4, 196608, pred), PLD_RS_AG);
    cr_expect_lt(pred[2], pred[0]);
    /* at P = 8 the ring's 14 rounds cost more than the two-phase form's 3 */
    pld_tune_allreduce_auto(&sample, 8, 65536, 4, 196608, pred);
    cr_expect_gt(pred[1], pred[2]);
    cr_expect_eq(pld_tune_allreduce_auto(&fast_rounds, 1, 65536, 4, 196608, NULL), PLD_MESH);
}

/* Segments of at least 4 KiB: a small allreduce in a large group has few
 * owners; large data, every rank; never none in a group. */
Test(tune, the_two_phase_owners)
{
    cr_expect_eq(PLD_RS_AG_MIN_SEGMENT, 4096);
    cr_expect_eq(pld_tune_rs_ag_owners(1024, 4096), 1);
    cr_expect_eq(pld_tune_rs_ag_owners(1024, 65536), 16);
    cr_expect_eq(pld_tune_rs_ag_owners(1024, 65535), 15);
    cr_expect_eq(pld_tune_rs_ag_owners(8, 1 << 20), 8);
    cr_expect_eq(pld_tune_rs_ag_owners(8, 8 * PLD_RS_AG_MIN_SEGMENT), 8);
    cr_expect_eq(pld_tune_rs_ag_owners(8, 8 * PLD_RS_AG_MIN_SEGMENT - 1), 7);
    cr_expect_eq(pld_tune_rs_ag_owners(3, 1), 1);
    cr_expect_eq(pld_tune_rs_ag_owners(3, 0), 1);
    cr_expect_eq(pld_tune_rs_ag_owners(1, 1 << 20), 1);
    cr_expect_eq(pld_tune_rs_ag_owners(0, 4096), 0);
    /* the prediction follows: at P = 1024, 4 KiB the one owner's bytes,
     * not 1023 x 4 bytes each, and still below the mesh's */
    double pred[PLD_TUNE_ALLREDUCE_PREDICTIONS];
    cr_expect_eq(pld_tune_allreduce_auto(&sample, 1024, 4096, 4, 196608, pred), PLD_RS_AG);
    cr_expect_lt(pred[2], pred[0]);
}

/* rs_ag's bytes: the busiest rank's own work or all ranks' work shared by
 * the CPUs, whichever is longer; the owner rounds count two rounds. */
Test(tune, the_two_phase_prediction)
{
    const pld_tune *t = &sample; /* 4 CPUs */
    double pred[PLD_TUNE_ALLREDUCE_PREDICTIONS], ws = 1024.0 * 4096;
    /* P = 1024, 4 KiB: one owner reduces 1023 copies while the others wait:
     * its own work, which no CPU shares (the other ranks' copies, shared
     * by 4 CPUs, take less); two rounds through the owner */
    pld_tune_allreduce_auto(t, 1024, 4096, 4, 196608, pred);
    double owner = pld_tune_predict_us(t, 1, 0, 4096, 0, 1023.0 * 4096, ws);
    cr_expect_float_eq(pred[2], pld_tune_predict_us(t, 1024, 2, 0, 0, 0, ws) + owner, 1e-6);
    /* every rank an owner (P = 8, 64 KiB: 8 KiB each): three full rounds,
     * and 8 ranks' alike work on 4 CPUs, twice one rank's */
    ws = 8.0 * 65536;
    pld_tune_allreduce_auto(t, 8, 65536, 4, 196608, pred);
    double one = pld_tune_predict_us(t, 1, 0, 8192, 65536 - 8192, 7.0 * 8192, ws);
    cr_expect_float_eq(pred[2], pld_tune_predict_us(t, 8, 3, 0, 0, 0, ws) + 2 * one, 1e-6);
    /* the same as the general prediction for ranks that all do alike */
    cr_expect_float_eq(pred[2], pld_tune_predict_us(t, 8, 3, 8192, 65536 - 8192, 7.0 * 8192, ws),
                       1e-6);
}

/* The two files the mpi test gives its two processes choose differently
 * at P = 2, 64 KiB: that test passes only because both use rank 0's. */
Test(tune, the_mpi_test_files_disagree)
{
    pld_tune a, b;
    const char *dir = getenv("PLD_TUNE_TEST_DIR");
    cr_assert_not_null(dir, "PLD_TUNE_TEST_DIR (tests/tune) is not set");
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/slow_rounds.txt", dir);
    snprintf(pb, sizeof pb, "%s/fast_rounds.txt", dir);
    cr_assert_eq(pld_tune_load(pa, &a), PLD_OK, "%s", pld_last_error());
    cr_assert_eq(pld_tune_load(pb, &b), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(pld_tune_allreduce_auto(&a, 2, 65536, 4, 196608, NULL), PLD_MESH);
    cr_expect_eq(pld_tune_allreduce_auto(&b, 2, 65536, 4, 196608, NULL), PLD_RS_AG);
}

/* Where a step with one partner costs much less than a round of the whole
 * group, auto takes recursive halving and doubling; at P = 2 it is rs_ag
 * by another road (a tie: rs_ag stays), and on a machine whose ranks share
 * CPUs its chain of steps loses. */
Test(tune, the_allreduce_choice_takes_rabenseifner_where_steps_are_cheap)
{
    pld_tune cheap;
    char path[512];
    snprintf(path, sizeof path, "%s/cheap_steps.txt", getenv("PLD_TUNE_TEST_DIR"));
    cr_assert_eq(pld_tune_load(path, &cheap), PLD_OK, "%s", pld_last_error());
    double pred[PLD_TUNE_ALLREDUCE_PREDICTIONS];
    cr_expect_eq(pld_tune_allreduce_auto(&cheap, 8, 65536, 4, 196608, pred), PLD_RABENSEIFNER);
    cr_expect_lt(pred[3], pred[0]);
    cr_expect_lt(pred[3], pred[2]);
    /* P = 8, 64 KiB on 64 CPUs: one round of 8 (1 + 5 x 6 us), 6 steps of
     * 1 us, and each rank's 7/8 of the data copied, read and reduced */
    double ws = 8.0 * 65536, part = 7.0 / 8 * 65536;
    cr_expect_float_eq(pred[3], 31 + 6 + pld_tune_predict_us(&cheap, 1, 0, part, part, part, ws),
                       1e-6);
    cr_expect_eq(pld_tune_allreduce_auto(&cheap, 5, 65536, 4, 196608, NULL), PLD_RABENSEIFNER);
    cr_expect_neq(pld_tune_allreduce_auto(&cheap, 2, 65536, 4, 196608, NULL), PLD_RABENSEIFNER);
    cr_expect_neq(pld_tune_allreduce_auto(&sample, 8, 65536, 4, 196608, NULL), PLD_RABENSEIFNER);
    cr_expect_neq(pld_tune_allreduce_auto(&sample, 1024, 4096, 4, 196608, NULL), PLD_RABENSEIFNER);
}

typedef struct ar_args {
    pld_dtensor data, sig;
} ar_args;

static void allreduce_auto(pld_ctx *c, void *p)
{
    ar_args *a = p;
    pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_AUTO);
}

/* A world on `devices` deciding with the test parameter file `file`
 * (tests/tune/), its listing on; trace: a trace file, or NULL. */
static pld_world *world_with(const char *file, const char *devices, const char *trace)
{
    /* unset (the binary run by hand, not by ctest), the path would name a
     * file that does not exist, which the world would measure and write:
     * into the working directory, and with this machine's parameters */
    const char *dir = getenv("PLD_TUNE_TEST_DIR");
    cr_assert_not_null(dir, "PLD_TUNE_TEST_DIR (tests/tune) is not set");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    setenv("PLD_TUNE_FILE", path, 1);
    pld_config cfg = {.devices = devices,
                      .transport = getenv("PLD_TEST_TRANSPORT"),
                      .ir = 0,
                      .trace_path = trace};
    pld_world *w = tu_world_cfg(&cfg);
    pld_ir_enable(w, 1);
    return w;
}

/* The listing and the trace say what PLD_AUTO chose and what it predicted:
 * slow rounds, 2 ranks, 64 KiB -> the mesh. */
Test(tune, the_listing_and_the_trace_say_the_choice_and_its_prediction)
{
    const char *trace = temp_path("trace.json");
    pld_world *w = world_with("slow_rounds.txt", "0,1", trace);
    int64_t shape[1] = {16384};
    ar_args a = {.data = tu_window(w, "data", PLD_FP32, 1, shape), .sig = tu_signal(w, "sig", 1)};
    TU_LAUNCH_OK(w, allreduce_auto, &a);
    const char *ir = pld_ir_text(w);
    TU_EXPECT_CONTAINS(ir, "auto: mesh (predicted ");
    TU_EXPECT_CONTAINS(ir, " us; mesh ");
    TU_EXPECT_CONTAINS(ir, "65536 B, 2 ranks)");
    pld_world_finalize(w);
    char *json = tu_slurp(trace, "trace");
    TU_EXPECT_CONTAINS(json, "\"name\":\"auto: mesh\"");
    TU_EXPECT_CONTAINS(json, "\"predicted_us\":");
    free(json);
}

/* Stages rank-keyed data, runs the auto allreduce, checks every element. */
static void allreduce_auto_checked(pld_ctx *c, void *p)
{
    ar_args *a = p;
    float *d = pld_local(c, a->data).data;
    int64_t n = a->data.shape[0], np = pld_nranks(c);
    for (int64_t i = 0; i < n; i++)
        d[i] = (float)(pld_rank(c) * 100000 + i % 1000);
    pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_AUTO);
    for (int64_t i = 0; i < n; i++)
        KCHECK(c, d[i] == (float)(100000 * np * (np - 1) / 2 + np * (i % 1000)),
               "rank %d element %lld: %g", pld_rank(c), (long long)i, (double)d[i]);
}

/* PLD_AUTO runs what the model picks: with cheap steps, Rabenseifner's
 * allreduce at P = 5 (a fold), right to the last element, and the listing
 * says so. */
Test(tune, auto_runs_rabenseifner_where_it_is_predicted_fastest)
{
    pld_world *w = world_with("cheap_steps.txt", "0-4", NULL);
    int64_t shape[1] = {16384};
    ar_args a = {.data = tu_window(w, "data", PLD_FP32, 1, shape), .sig = tu_signal(w, "sig", 1)};
    TU_LAUNCH_OK(w, allreduce_auto_checked, &a);
    TU_EXPECT_CONTAINS(pld_ir_text(w), "auto: rabenseifner (predicted ");
    pld_world_finalize(w);
}

/* Bruck's all_to_all sends, in step k, the chunks whose index below P has
 * bit k set: (P/2) log2 P for a power of two, fewer in a partial last step. */
Test(tune, the_chunks_bruck_sends)
{
    cr_expect_eq(pld_tune_bruck_chunks(0), 0);
    cr_expect_eq(pld_tune_bruck_chunks(1), 0);
    cr_expect_eq(pld_tune_bruck_chunks(2), 1);
    cr_expect_eq(pld_tune_bruck_chunks(3), 2); /* {1}, {2} */
    cr_expect_eq(pld_tune_bruck_chunks(5), 5); /* {1,3}, {2,3}, {4} */
    cr_expect_eq(pld_tune_bruck_chunks(6), 7); /* {1,3,5}, {2,3}, {4,5} */
    cr_expect_eq(pld_tune_bruck_chunks(8), 12);
    cr_expect_eq(pld_tune_bruck_chunks(1024), 512 * 10);
    cr_expect_eq(pld_tune_bruck_chunks(4096), (int64_t)2048 * 12);
}

/* The push costs one round and P transfers; Bruck a chain of two links per
 * step, one round, 2 steps + 1 transfers and its chunks copied four times.
 * Where transfers are dear (costly_transfers.txt: 20 us, a message between
 * machines) Bruck wins; where a step is cheap but a transfer too
 * (cheap_steps.txt) its chain and round cost more than the push's round;
 * on a machine whose ranks share CPUs only at thousands of ranks. */
Test(tune, the_all_to_all_choice_follows_the_predictions)
{
    pld_tune dear, cheap;
    char path[512];
    snprintf(path, sizeof path, "%s/costly_transfers.txt", getenv("PLD_TUNE_TEST_DIR"));
    cr_assert_eq(pld_tune_load(path, &dear), PLD_OK, "%s", pld_last_error());
    snprintf(path, sizeof path, "%s/cheap_steps.txt", getenv("PLD_TUNE_TEST_DIR"));
    cr_assert_eq(pld_tune_load(path, &cheap), PLD_OK, "%s", pld_last_error());
    double pred[PLD_TUNE_ALL_TO_ALL_PREDICTIONS], row = 1024, ws = 144 * row;
    cr_expect_eq(pld_tune_all_to_all_auto(&dear, 12, 1024, pred), PLD_A2A_BRUCK);
    /* P = 12: a round of 12 (1 + 0.1 x 10 us), 12 rows, 12 transfers */
    cr_expect_float_eq(
        pred[0], 2 + pld_tune_predict_us(&dear, 1, 0, 12 * row, 0, 0, 2 * ws) + 12 * 20.0, 1e-6);
    /* 4 steps (8 links of 1 us), the round, 20 chunks sent (6 + 6 + 4 + 4):
     * 4 x 20 + 3 x 12 rows copied, 9 transfers */
    cr_expect_float_eq(pred[1],
                       8 + 2 + pld_tune_predict_us(&dear, 1, 0, 116 * row, 0, 0, 4 * ws) + 9 * 20.0,
                       1e-6);
    cr_expect_lt(pred[1], pred[0]);
    cr_expect_eq(pld_tune_all_to_all_auto(&dear, 8, 1024, NULL), PLD_A2A_BRUCK);
    cr_expect_eq(pld_tune_all_to_all_auto(&dear, 5, 1024, NULL), PLD_A2A_PUSH);
    cr_expect_eq(pld_tune_all_to_all_auto(&dear, 1, 1024, NULL), PLD_A2A_PUSH);
    for (int p = 2; p <= 64; p++)
        cr_expect_eq(pld_tune_all_to_all_auto(&cheap, p, 1024, NULL), PLD_A2A_PUSH, "P = %d", p);
    /* this machine's kind (4 CPUs, a hand-over of 1.5 us per rank beyond):
     * the push, whose one round costs as much as Bruck's; up to P = 4096
     * Bruck's chain of steps outweighs the push's transfers */
    for (int p = 2; p <= 4096; p *= 2)
        for (size_t chunk = 4; chunk <= 65536; chunk *= 16)
            cr_expect_eq(pld_tune_all_to_all_auto(&sample, p, chunk, NULL), PLD_A2A_PUSH,
                         "P = %d, %zu B chunks", p, chunk);
}

/* A target window and a signal: the all_to_all and allgather runs. */
typedef struct tgt_args {
    pld_dtensor tgt, sig;
} tgt_args;

/* Rank-keyed chunks through the auto all_to_all, every element checked. */
static void all_to_all_auto_checked(pld_ctx *c, void *p)
{
    tgt_args *a = p;
    int me = pld_rank(c), np = pld_nranks(c);
    int64_t s = a->tgt.shape[1];
    float in[12 * 256]; /* a kernel's stack: a tensor on every transport */
    KCHECK(c, np * s <= 12 * 256, "%d x %lld chunks do not fit", np, (long long)s);
    for (int d = 0; d < np; d++)
        for (int64_t j = 0; j < s; j++)
            in[d * s + j] = (float)(me * 1000 + d * 100 + j % 100);
    pld_all_to_all(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(np, s)), a->tgt, a->sig);
    const float *t = pld_local(c, a->tgt).data;
    for (int src = 0; src < np; src++)
        for (int64_t j = 0; j < s; j++)
            KCHECK(c, t[src * s + j] == (float)(src * 1000 + me * 100 + j % 100),
                   "rank %d row %d element %lld: %g", me, src, (long long)j,
                   (double)t[src * s + j]);
}

/* PLD_A2A_AUTO runs what the model picks: with dear transfers, Bruck's
 * algorithm at P = 12 (a partial last step), right to the last element,
 * and the listing says so. */
Test(tune, auto_runs_bruck_where_it_is_predicted_faster)
{
    pld_world *w = world_with("costly_transfers.txt", "0-11", NULL);
    tgt_args a = {.tgt = tu_window(w, "tgt", PLD_FP32, 2, PLD_IDX(12, 256)),
                  .sig = tu_signal(w, "sig", 1)};
    TU_LAUNCH_OK(w, all_to_all_auto_checked, &a);
    TU_EXPECT_CONTAINS(pld_ir_text(w), "auto: bruck (predicted ");
    TU_EXPECT_CONTAINS(pld_ir_text(w), "1024 B chunks, 12 ranks)");
    pld_world_finalize(w);
}

/* The push and recursive doubling move the same rows and end in the same
 * round; the push makes P transfers, doubling a put per step (two where
 * its rows wrap), its own row staged and a chain of three links per step.
 * Where transfers are dear (costly_transfers.txt) doubling wins from
 * P = 8 (7 transfers and 9 links against 8 transfers), not at 9 (9 and 12
 * against 9); where they are cheap beside a step, the push; on this
 * machine's kind (4 CPUs) the push up to a few thousand ranks. */
Test(tune, the_allgather_choice_follows_the_predictions)
{
    pld_tune dear, cheap;
    char path[512];
    snprintf(path, sizeof path, "%s/costly_transfers.txt", getenv("PLD_TUNE_TEST_DIR"));
    cr_assert_eq(pld_tune_load(path, &dear), PLD_OK, "%s", pld_last_error());
    snprintf(path, sizeof path, "%s/cheap_steps.txt", getenv("PLD_TUNE_TEST_DIR"));
    cr_assert_eq(pld_tune_load(path, &cheap), PLD_OK, "%s", pld_last_error());
    double pred[PLD_TUNE_ALLGATHER_PREDICTIONS], row = 1024, ws = 144 * row;
    cr_expect_eq(pld_tune_allgather_auto(&dear, 12, 1024, pred), PLD_AG_DOUBLING);
    /* P = 12: a round of 12 (1 + 0.1 x 10 us), 12 rows, 12 transfers */
    double bytes = pld_tune_predict_us(&dear, 1, 0, 12 * row, 0, 0, ws);
    cr_expect_float_eq(pred[0], 2 + bytes + 12 * 20.0, 1e-6);
    /* the same, 4 steps (12 links of 1 us) and 9 transfers */
    cr_expect_float_eq(pred[1], 2 + bytes + 12 + 9 * 20.0, 1e-6);
    cr_expect_eq(pld_tune_allgather_auto(&dear, 8, 1024, NULL), PLD_AG_DOUBLING);
    cr_expect_eq(pld_tune_allgather_auto(&dear, 9, 1024, NULL), PLD_AG_PUSH);
    cr_expect_eq(pld_tune_allgather_auto(&dear, 7, 1024, NULL), PLD_AG_PUSH);
    cr_expect_eq(pld_tune_allgather_auto(&dear, 1, 1024, NULL), PLD_AG_PUSH);
    for (int p = 10; p <= 4096; p = p * 3 / 2)
        cr_expect_eq(pld_tune_allgather_auto(&dear, p, 1024, NULL), PLD_AG_DOUBLING, "P = %d", p);
    for (int p = 2; p <= 64; p++)
        cr_expect_eq(pld_tune_allgather_auto(&cheap, p, 1024, NULL), PLD_AG_PUSH, "P = %d", p);
    for (int p = 2; p <= 2048; p *= 2)
        for (size_t r = 4; r <= 65536; r *= 16)
            cr_expect_eq(pld_tune_allgather_auto(&sample, p, r, NULL), PLD_AG_PUSH,
                         "P = %d, %zu B rows", p, r);
}

/* Rank-keyed rows through the auto allgather, every element checked. */
static void allgather_auto_checked(pld_ctx *c, void *p)
{
    tgt_args *a = p;
    int me = pld_rank(c), np = pld_nranks(c);
    int64_t s = a->tgt.shape[1];
    float mine[256]; /* a kernel's stack: a tensor on every transport */
    KCHECK(c, s <= 256, "rows of %lld do not fit", (long long)s);
    for (int64_t j = 0; j < s; j++)
        mine[j] = (float)(me * 1000 + j % 1000);
    pld_allgather(c, pld_tensor_make(mine, PLD_FP32, 2, PLD_IDX(1, s)), a->tgt, a->sig);
    const float *t = pld_local(c, a->tgt).data;
    for (int src = 0; src < np; src++)
        for (int64_t j = 0; j < s; j++)
            KCHECK(c, t[src * s + j] == (float)(src * 1000 + j % 1000),
                   "rank %d row %d element %lld: %g", me, src, (long long)j,
                   (double)t[src * s + j]);
}

/* PLD_AG_AUTO runs what the model picks: with dear transfers, recursive
 * doubling at P = 12 (a partial last step), right to the last element,
 * and the listing and the trace say so. */
Test(tune, auto_runs_doubling_where_it_is_predicted_faster)
{
    const char *trace = temp_path("trace.json");
    pld_world *w = world_with("costly_transfers.txt", "0-11", trace);
    tgt_args a = {.tgt = tu_window(w, "tgt", PLD_FP32, 2, PLD_IDX(12, 256)),
                  .sig = tu_signal(w, "sig", 1)};
    TU_LAUNCH_OK(w, allgather_auto_checked, &a);
    TU_EXPECT_CONTAINS(pld_ir_text(w), "auto: doubling (predicted ");
    TU_EXPECT_CONTAINS(pld_ir_text(w), "1024 B rows, 12 ranks)");
    pld_world_finalize(w);
    char *json = tu_slurp(trace, "trace");
    TU_EXPECT_CONTAINS(json, "\"name\":\"auto: doubling\"");
    free(json);
}

/* The in-place allgather: rank-keyed rows staged in place, every element
 * checked. */
static void allgather_inplace_checked(pld_ctx *c, void *p)
{
    tgt_args *a = p;
    int me = pld_rank(c), np = pld_nranks(c);
    int64_t s = a->tgt.shape[1];
    float *t = pld_local(c, a->tgt).data;
    for (int64_t j = 0; j < s; j++)
        t[me * s + j] = (float)(me * 1000 + j % 1000);
    pld_allgather_inplace(c, a->tgt, a->sig);
    for (int src = 0; src < np; src++)
        for (int64_t j = 0; j < s; j++)
            KCHECK(c, t[src * s + j] == (float)(src * 1000 + j % 1000),
                   "rank %d row %d element %lld: %g", me, src, (long long)j,
                   (double)t[src * s + j]);
}

/* pld_allgather_inplace chooses as PLD_AG_AUTO does: with dear transfers,
 * recursive doubling at P = 12, its own row forwarded from where it lies. */
Test(tune, the_inplace_allgather_runs_doubling_where_it_is_predicted_faster)
{
    pld_world *w = world_with("costly_transfers.txt", "0-11", NULL);
    tgt_args a = {.tgt = tu_window(w, "tgt", PLD_FP32, 2, PLD_IDX(12, 256)),
                  .sig = tu_signal(w, "sig", 1)};
    TU_LAUNCH_OK(w, allgather_inplace_checked, &a);
    TU_EXPECT_CONTAINS(pld_ir_text(w), "call pld_allgather_inplace(tgt, sig)");
    TU_EXPECT_CONTAINS(pld_ir_text(w), "auto: doubling (predicted ");
    pld_world_finalize(w);
}
