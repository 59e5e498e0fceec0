/* SPDX-License-Identifier: Apache-2.0 */
/* The cost model inside the library (pld/tune.h is its public face). */
#ifndef PLD_TUNE_TUNE_H
#define PLD_TUNE_TUNE_H

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
/* pld's parameters when it has none measured (a 2-core x86 machine). */
void pld__tune_defaults(pld_tune *t);

#endif
