/* SPDX-License-Identifier: Apache-2.0 */
/** @file
 * Teams (communication domains): a team splits the world, or each group
 * of a parent team, into disjoint groups of ranks, as MPI_Comm_split does
 * for a communicator and OpenSHMEM/NVSHMEM teams do. Teams are made on the
 * host, before a launch, by every process alike under MPI (the calls are
 * collective there, and processes that pass different arguments get
 * PLD_ERR_ARG). Host queries take and return world ranks. */
#ifndef PLD_TEAM_H
#define PLD_TEAM_H

#include "pld/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pld_team pld_team; /**< opaque */

/** A color that puts a rank in no group. */
#define PLD_TEAM_NONE (-1)

/** color[r] and key[r] for every world rank r (only the parent's members
 * count; parent NULL = the whole world): within each parent group, ranks
 * with the same color form one group, ordered by (key, parent rank); a
 * color of PLD_TEAM_NONE puts the rank in none. key may be NULL (keys 0).
 * name (NULL: "team<N>") appears in messages. */
PLD_API pld_status pld_team_split(pld_world *w, const pld_team *parent, const int *color,
                                  const int *key, const char *name, pld_team **out);
/** In each parent group: one group of the parent ranks start, start+stride,
 * ... (size of them); the other ranks are in none. */
PLD_API pld_status pld_team_split_strided(pld_world *w, const pld_team *parent, int start,
                                          int stride, int size, const char *name, pld_team **out);
/** A 2-D grid of each parent group, x fastest: the x team's groups are rows
 * of xrange consecutive ranks (the last row may be short), the y team's
 * groups are the columns (ranks equal mod xrange). */
PLD_API pld_status pld_team_split_2d(pld_world *w, const pld_team *parent, int xrange,
                                     const char *xname, pld_team **xteam, const char *yname,
                                     pld_team **yteam);
/** Frees a team (a freed team is then refused by every call). */
PLD_API void pld_team_free(pld_world *w, pld_team *t);

/** world_rank's rank in its group of t; -1 if it is in none (or t is not a
 * live team). */
PLD_API int pld_team_rank_of(const pld_team *t, int world_rank);
/** The size of world_rank's group; 0 if it is in none. */
PLD_API int pld_team_group_size(const pld_team *t, int world_rank);
/** As pld_world_ll_bytes, for builtins called in a view of t: sized for
 * its largest group (0 if t is not a live team). */
PLD_API size_t pld_team_ll_bytes(const pld_team *t);
/** The world rank of team_rank in world_rank's group; -1 if none. */
PLD_API int pld_team_world_rank(const pld_team *t, int world_rank, int team_rank);
/** The number of groups of t, and its name ("" if t is not a live team). */
PLD_API int pld_team_ngroups(const pld_team *t);
/** The name of t ("" if t is not a live team). */
PLD_API const char *pld_team_name(const pld_team *t);

/** Kernel side: this rank's view of its group of t, or NULL if the rank is
 * in none. In the view every kernel-side call works unchanged and speaks in
 * group terms: pld_rank / pld_nranks are the group rank and size, every
 * `peer` is a group rank, a builtin's signal is [T,1] (T = the group size)
 * and its shapes follow T, and builtins run over the group's members only.
 * Windows stay the world's: each member's slice is its own. Views of
 * different groups, and of different teams on different signals, run at
 * the same time. A view lives until its kernel returns; c may itself be a
 * view (of any team). */
PLD_API pld_ctx *pld_team_ctx(pld_ctx *c, const pld_team *t);
/** The team a context speaks for (NULL: the world). */
PLD_API const pld_team *pld_ctx_team(const pld_ctx *c);
/** The world rank behind a context (pld_rank is the group rank in a view). */
PLD_API int pld_world_rank(const pld_ctx *c);

#ifdef __cplusplus
}
#endif

#endif /* PLD_TEAM_H */
