/* SPDX-License-Identifier: Apache-2.0 */
/* The synchronisation forms of the builtins' credit rounds (credit.c; the
 * forms are described at pld_sync_form in pld/coll.h) and how a group's
 * form is chosen (sync.c): PLD_SYNC=auto takes whichever the cost model
 * predicts fastest for the group's size. Every rank of a group decides
 * alike: the same size, the world's one set of parameters. */
#ifndef PLD_COLL_SYNC_H
#define PLD_COLL_SYNC_H

#include "core/internal.h"

/* Reads PLD_SYNC and PLD_TREE_FANOUT into the world (checked alike in
 * every process of an mpi job). */
pld_status pld__sync_world_init(pld_world *w);
/* The form this context's builtins synchronise with (cached in c->sync). */
pld_sync_form pld__sync_form_of(pld_ctx *c);
/* The form PLD_SYNC=auto takes for a group of p ranks. */
pld_sync_form pld__sync_pick(const pld_tune *t, int p, int fanout);
/* The predicted time of one round of a form, in microseconds. */
double pld__sync_predict_us(const pld_tune *t, pld_sync_form form, int p, int fanout);
/* One round of a form on rank `rank` of p (what pld_world_sync returns). */
void pld__sync_info(pld_sync_form form, int p, int rank, int fanout, pld_sync_info *out);
/* The tree form's children per rank for a group of p (PLD_TREE_FANOUT). */
int pld__sync_fanout(const pld__world_shared *sh, int p);
/* Children of rank me in the tree form (ranks me*k+1 .. me*k+k below p). */
int pld__tree_children(int me, int p, int k);

#endif
