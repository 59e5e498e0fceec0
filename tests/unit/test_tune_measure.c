/* SPDX-License-Identifier: Apache-2.0 */
/* Measuring the cost model's parameters: a call measured faster than the
 * credit rounds it holds means the rounds were measured in a busy moment,
 * and the measurement must not derive rates from them
 * (pld__tune_rounds_misfit). No timing is asserted. */
#include <math.h>

#include "test_util.h"
#include "tune/tune.h"

/* The parameters of the file a busy moment wrote on a 2-CPU machine
 * (round 3.68 us), and what quiet calls at 2 ranks then took. */
static const pld_tune busy = {.cpus = 2, .round_us = 3.683, .handover_us = 1.4, .measured = 1};
static const double quiet_ag[PLD_TUNE_POINTS] = {4.1, 110.0, 900.0};
static const double quiet_bc[PLD_TUNE_POINTS] = {5.0, 150.0, 1200.0};
static const double quiet_rs[PLD_TUNE_POINTS] = {6.0, 160.0, 1400.0};

Test(tune_measure, a_call_faster_than_its_rounds_is_a_misfit)
{
    double round;
    /* the broadcast of the caches' point: 5.0 us < 2 x 3.683 */
    cr_expect_eq(pld__tune_rounds_misfit(&busy, 2, quiet_ag, quiet_bc, quiet_rs, &round), 0);
    cr_expect_float_eq(round, 3.683, 1e-9);
    /* the same calls against a quiet round fit */
    pld_tune quiet = busy;
    quiet.round_us = 0.3;
    cr_expect_eq(pld__tune_rounds_misfit(&quiet, 2, quiet_ag, quiet_bc, quiet_rs, &round), -1);
}

Test(tune_measure, every_call_and_every_point_is_checked)
{
    pld_tune t = busy;
    t.round_us = 1.0;
    double ag[PLD_TUNE_POINTS] = {2, 2, 2}, bc[PLD_TUNE_POINTS] = {3, 3, 3},
           rs[PLD_TUNE_POINTS] = {3, 3, 3}, round;
    cr_expect_eq(pld__tune_rounds_misfit(&t, 2, ag, bc, rs, &round), -1);
    ag[2] = 0.9; /* the allgather holds one round */
    cr_expect_eq(pld__tune_rounds_misfit(&t, 2, ag, bc, rs, &round), 2);
    ag[2] = 2;
    rs[1] = 1.9; /* the reduce_scatter two */
    cr_expect_eq(pld__tune_rounds_misfit(&t, 2, ag, bc, rs, &round), 1);
    rs[1] = 3;
    bc[0] = 1.5; /* the broadcast two */
    cr_expect_eq(pld__tune_rounds_misfit(&t, 2, ag, bc, rs, &round), 0);
}

Test(tune_measure, the_round_of_more_ranks_counts_the_peers)
{
    /* 4 ranks on 8 CPUs: round + 2 x peer = 1.4 us, more than the
     * allgather's 1.2 */
    pld_tune t = {.cpus = 8, .round_us = 1.0, .peer_us = 0.2, .measured = 1};
    double ag[PLD_TUNE_POINTS] = {1.2, 5, 5}, bc[PLD_TUNE_POINTS] = {5, 5, 5},
           rs[PLD_TUNE_POINTS] = {5, 5, 5}, round;
    cr_expect_eq(pld__tune_rounds_misfit(&t, 4, ag, bc, rs, &round), 0);
    cr_expect_float_eq(round, 1.4, 1e-9);
    cr_expect_eq(pld__tune_rounds_misfit(&t, 2, ag, bc, rs, &round), -1);
}

/* Made-up machines for pld__tune_measure_by: calls take their rounds
 * (fake_round each, 4 us more when the barriers are measured in a busy
 * moment) plus 0.01 ns per byte of the working set (P x N): in the caches'
 * point a 2-round call then takes less than two busy rounds. */
static double fake_round;
static int busy_barriers; /* barrier measurements still to inflate */
static int barrier_runs;

static pld_status fake_run(pld__tune_kind kind, int p, int64_t cols, int reps, double *us)
{
    (void)reps;
    double bytes = (double)cols * p * p * sizeof(float);
    switch (kind) {
    case PLD__TM_BARRIER:
        barrier_runs++;
        /* 2 ranks: a round; more on their own CPUs: the same; beyond the
         * CPUs: a hand-over of 1 us each */
        *us = fake_round + (busy_barriers > 0 ? 4.0 : 0) + (p > pld__cpus_allowed() ? p - 2 : 0);
        if (busy_barriers > 0 && p > pld__cpus_allowed())
            busy_barriers--; /* a whole set of three barriers was busy */
        return PLD_OK;
    case PLD__TM_TRANSFERS:
        *us = 10;
        return PLD_OK;
    case PLD__TM_ALLGATHER:
        *us = fake_round + bytes / 1e5;
        return PLD_OK;
    default: /* the broadcast and the reduce_scatter: two rounds */
        *us = 2 * fake_round + bytes / 1e5;
        return PLD_OK;
    }
}

Test(tune_measure, busy_rounds_are_measured_again)
{
    fake_round = 0.3;
    busy_barriers = 1; /* the first set of barriers ran in a busy moment */
    barrier_runs = 0;
    pld_tune t;
    cr_assert_eq(pld__tune_measure_by(&t, 0, fake_run), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(barrier_runs, 6, "the barriers were measured %d times, not twice", barrier_runs);
    cr_expect_float_eq(t.round_us, 0.3, 1e-9);
    /* 0.01 ns per byte of P x N is 0.01 P per byte of a rank's N */
    double want = 0.01 * pld__cpus_allowed();
    if (pld__cpus_allowed() < 2 || pld__cpus_allowed() > 8)
        return; /* the ranks are not the CPUs: the arithmetic differs */
    for (int i = 0; i < PLD_TUNE_POINTS; i++)
        cr_expect_float_eq(t.pull_ns[i], want, want / 10,
                           "point %d: pull %g ns/B, not %g (derived from the busy rounds?)", i,
                           t.pull_ns[i], want);
}

Test(tune_measure, rounds_busy_every_time_give_no_parameters)
{
    fake_round = 0.3;
    busy_barriers = 1000;
    pld_tune t = {.round_us = -1};
    cr_assert_eq(pld__tune_measure_by(&t, 0, fake_run), PLD_ERR_SYSTEM);
    cr_expect_float_eq(t.round_us, -1.0, 0, "*out was written");
    TU_EXPECT_CONTAINS(pld_last_error(), "the machine was too busy to measure");
    TU_EXPECT_CONTAINS(pld_last_error(), "less than the 1, 2 and 2 rounds they hold (4.30 us a "
                                         "round, the best of 4 measurements)");
}

Test(tune_measure, quiet_rounds_are_measured_once)
{
    fake_round = 0.3;
    busy_barriers = 0;
    barrier_runs = 0;
    pld_tune t;
    cr_assert_eq(pld__tune_measure_by(&t, 0, fake_run), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(barrier_runs, 3);
}
