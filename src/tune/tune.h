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
/* pld's parameters when it has none measured (a 2-core x86 machine). */
void pld__tune_defaults(pld_tune *t);

#endif
