/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the indexed (MoE) collectives: argument and data checks, and
 * the URMA queue model of a remote send (a5sim). */
#ifndef PLD_INDEXED_H
#define PLD_INDEXED_H

#include "coll/coll_util.h"

/* The validated layout of one indexed call on this rank. */
typedef struct pld__indexed {
    int64_t nmax, h, cap;  /* input rows, hidden size, C (slots per source) */
    const int32_t *counts; /* this rank's send_counts (its window slice) [P] */
    const int32_t *index;  /* [P, C] */
    size_t row_bytes;
} pld__indexed;

/* Checks send_counts [P,1] (window), index INT32 [P,C], the signal
 * [P, S >= core_num], core_num, then the data: every own count in [0, C] and
 * every index read (j < count) in [0, nmax). Fills *out. */
void pld__indexed_check(pld_ctx *c, const char *api, pld_dtensor signal, pld_dtensor send_counts,
                        pld_tensor index, int64_t nmax, int64_t h, size_t elt, int core_num,
                        pld__indexed *out);

/* Calls fn for each run of contiguous source rows among the first n
 * entries of idx: fn(first_slot, first_row, rows, arg). Returns the runs. */
int64_t pld__indexed_ranges(const int32_t *idx, int64_t n,
                            void (*fn)(int64_t slot, int64_t row, int64_t rows, void *arg),
                            void *arg);

/* URMA model of one remote send of `rows` rows (a5sim). */
#define PLD__URMA_ROWS_PER_SQE 12
#define PLD__URMA_WQEBB_PER_SQE 4
#define PLD__URMA_ROWS_PER_WQEBB 3
#define PLD__URMA_SQES_PER_DOORBELL 64
#define PLD__SELF_STAGES 8
#define PLD__SELF_STAGE_BYTES 8192

typedef struct pld__urma_send {
    int64_t sqes, wqebbs, nops, doorbells, cqes;
} pld__urma_send;

/* WQEBBs the whole send needs in the peer's SQ: ceil(rows/12) * 4. */
int64_t pld__urma_wqebbs_needed(int64_t rows);
void pld__urma_plan(int64_t rows, pld__urma_send *out);
/* One modelled remote send of `rows` rows in `ranges` copies to peer:
 * its queue use into the counters (urma_*, merged_ranges), its trace
 * slice (started at t0) and listing line. */
void pld__urma_count(pld_ctx *c, int peer, int64_t rows, int64_t ranges, uint64_t t0);

#endif
