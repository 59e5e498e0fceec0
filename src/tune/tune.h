/* SPDX-License-Identifier: Apache-2.0 */
/* The cost model inside the library (pld/tune.h is its public face). */
#ifndef PLD_TUNE_TUNE_H
#define PLD_TUNE_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "pld/tune.h"

struct pld_world;

/* The parameters of a new world, into its shared block: the file's, or
 * measured (and written) when there is none; under mpi, rank 0's for every
 * process. Collective under mpi. PLD_ERR_ARG for a file pld cannot read. */
pld_status pld__tune_world_init(struct pld_world *w);
/* Before a world that hosts rank 0 in this process starts its ranks: the
 * parameters read, or measured while no rank of it runs yet (its threads
 * would share the CPUs with the measurement). */
pld_status pld__tune_prepare(void);
/* A new world's PLD_RULES, into its shared block: read by the process of
 * rank 0, shared with the others (collective under mpi). PLD_ERR_ARG
 * naming the file, the line and the value for a file that is not one. */
pld_status pld__rules_world_init(struct pld_world *w);
/* Reads a rules file into *out: 0, or -1 and a message naming the file,
 * the line and the value. */
int pld__rules_read(const char *path, pld__rules *out, char *msg, size_t msgsz);
/* The first rule of rs for this call: its line (>= 1) and *choice_out, or 0. */
int pld__rules_pick(const pld__rules *rs, pld_rule_coll coll, int nranks, uint64_t bytes,
                    int *choice_out);
/* Measuring (tune_measure.c): a call cannot take less than the credit
 * rounds it holds, the allgather one, the broadcast and the reduce_scatter
 * two. Where one measured faster at a working set, a busy moment inflated
 * the barriers measured before it; the rates derived from them would come
 * out negative (clamped to nothing), and the file keeps them for good (a
 * machine's file said round 3.7 us, pull and reduce 0.001 ns/B in the
 * caches; measured quietly: 0.3 us, 0.02 and 0.05). Given t's rounds and
 * the calls' times in us at p ranks for each of the PLD_TUNE_POINTS
 * working sets: the first point that does not fit, or -1; the round at p
 * ranks in *round_out. */
int pld__tune_rounds_misfit(const pld_tune *t, int p, const double ag[], const double bc[],
                            const double rs[], double *round_out);
/* What measuring runs: the slowest rank's time per call in us, the best
 * of reps launches of `kind` on p ranks with rows of cols fp32 (0 for the
 * barrier; the transfers: 100 puts of a row per call). */
typedef enum {
    PLD__TM_BARRIER,
    PLD__TM_ALLGATHER,
    PLD__TM_BROADCAST,
    PLD__TM_REDUCE_SCATTER,
    PLD__TM_TRANSFERS
} pld__tune_kind;
typedef pld_status (*pld__tune_runner)(pld__tune_kind kind, int p, int64_t cols, int reps,
                                       double *us);
/* pld_tune_measure with its calls run by `run` (pld_tune_measure: pld's
 * builtins on the thread transport; a test: times it makes up). While a
 * call measures faster than its rounds the barriers are measured again;
 * if that persists, PLD_ERR_SYSTEM saying so, and *out untouched. */
pld_status pld__tune_measure_by(pld_tune *out, int thorough, pld__tune_runner run);
/* pld's parameters when it has none measured (a 2-core x86 machine). */
void pld__tune_defaults(pld_tune *t);

#endif
